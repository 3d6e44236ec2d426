from django.apps import AppConfig


class SlaConfig(AppConfig):
    name = "sla"
    verbose_name = "Horário de atendimento"
