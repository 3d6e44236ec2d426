from django.apps import AppConfig
from django.db.models.signals import post_migrate


class HelpdeskConfig(AppConfig):
    name = "helpdesk"
    verbose_name = "Central de atendimento"

    def ready(self) -> None:
        from celery.signals import task_postrun, task_prerun

        from helpdesk.audit import task_finished, task_started
        from helpdesk.permissions import support_group_ensure

        # Every app's post_migrate: the group needs permissions of apps migrated after this one.
        post_migrate.connect(support_group_ensure, dispatch_uid="helpdesk.support_group")
        task_prerun.connect(task_started, dispatch_uid="helpdesk.audit.task_started")
        task_postrun.connect(task_finished, dispatch_uid="helpdesk.audit.task_finished")
