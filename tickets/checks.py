"""Start-up checks of tickets: what attachments need from the machine."""

from django.core.checks import Error, register


@register(deploy=False)
def libmagic_is_installed(app_configs, **kwargs):
    from tickets.attachments.content import libmagic

    try:
        libmagic()
    except ImportError as error:
        return [
            Error(
                f"libmagic is not installed: attachments cannot be checked ({error}).",
                hint="apt-get install libmagic1 (README, docs/operations.md 'Attachment storage').",
                id="tickets.E001",
            )
        ]
    return []
