"""django.contrib.admin on the project's admin site (helpdesk.admin_site): see INSTALLED_APPS."""

from django.contrib.admin.apps import AdminConfig


class HelpdeskAdminConfig(AdminConfig):
    default_site = "helpdesk.admin_site.HelpdeskAdminSite"
