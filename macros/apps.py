from django.apps import AppConfig


class MacrosConfig(AppConfig):
    name = "macros"
    verbose_name = "Macros"
