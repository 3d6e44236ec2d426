from django.apps import AppConfig
from django.core.signals import request_finished
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


class HelpdeskConfig(AppConfig):
    name = "helpdesk"
    verbose_name = "Central de atendimento"

    def ready(self) -> None:
        from celery.signals import task_postrun, task_prerun

        from helpdesk import checks  # noqa: F401  (registers the deployment checks)
        from helpdesk.api import schema  # noqa: F401  (registers the OpenAPI auth extension)
        from helpdesk.audit import task_finished, task_started
        from helpdesk.middleware import forget_request
        from helpdesk.permissions import support_group_ensure
        from helpdesk.sqlite import install_unicode_like

        connection_created.connect(install_unicode_like, dispatch_uid="helpdesk.sqlite.unicode_like")
        request_finished.connect(forget_request, dispatch_uid="helpdesk.middleware.forget_request")
        # Every app's post_migrate: the group needs permissions of apps migrated after this one.
        post_migrate.connect(support_group_ensure, dispatch_uid="helpdesk.support_group")
        task_prerun.connect(task_started, dispatch_uid="helpdesk.audit.task_started")
        task_postrun.connect(task_finished, dispatch_uid="helpdesk.audit.task_finished")
