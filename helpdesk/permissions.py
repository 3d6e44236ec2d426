"""The panel permission, by the name API clients see and by Django's name."""

MANAGE_PUBLIC_API = "api_publica:gerenciar"
MANAGE_PUBLIC_API_CODENAME = "gerenciar_api_publica"
MANAGE_PUBLIC_API_PERM = f"helpdesk.{MANAGE_PUBLIC_API_CODENAME}"

# Deleting tickets (the admin's delete and DELETE /api/tickets/{id}): the Suporte group's, not every agent's.
DELETE_TICKETS_PERM = "tickets.delete_ticket"

SUPPORT_GROUP = "Suporte"
# What support staff do in the admin (credentials and webhooks need MANAGE_PUBLIC_API instead).
SUPPORT_PERMISSIONS = [
    ("tickets", "view_ticket"),
    ("tickets", "add_ticket"),
    ("tickets", "change_ticket"),
    ("tickets", "delete_ticket"),
    ("tickets", "view_reply"),
    ("tickets", "change_reply"),
    ("tickets", "view_contact"),
    ("tickets", "change_contact"),
    ("tickets", "view_ticketstatus"),
    ("tickets", "add_ticketstatus"),
    ("tickets", "change_ticketstatus"),
    ("tickets", "delete_ticketstatus"),
    ("helpdesk", "view_agent"),
    ("helpdesk", "add_agent"),
    ("helpdesk", "change_agent"),
    # Macros (issue 24): managed by the group; any agent applies them on the ticket page without these.
    ("macros", "view_macro"),
    ("macros", "add_macro"),
    ("macros", "change_macro"),
    ("macros", "delete_macro"),
]


def support_group_ensure(**kwargs):
    """post_migrate: the group exists with its permissions (idempotent)."""
    from django.contrib.auth.models import Group, Permission

    group, _ = Group.objects.get_or_create(name=SUPPORT_GROUP)
    permissions = [
        Permission.objects.filter(content_type__app_label=app, codename=codename).first()
        for app, codename in SUPPORT_PERMISSIONS
    ]
    group.permissions.add(*[permission for permission in permissions if permission is not None])
    return group
