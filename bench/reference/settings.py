"""Minimal settings of the reference app: the product's database, nothing else.

Connections persist across requests (what DESIGN.md asks of production), so
the reference is the yardstick of a lean Django deployment; the product is
measured with whatever connection handling its own settings ship.
"""

import os

import environ

env = environ.Env()

SECRET_KEY = env.str("SECRET_KEY")
DEBUG = False
ALLOWED_HOSTS = ["*"]
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "bench.reference.apps.HelpdeskModels",
    "bench.reference.apps.TicketsModels",
    "bench.reference.apps.SlaModels",
]
AUTH_USER_MODEL = "helpdesk.User"
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "bench.reference.urls"
WSGI_APPLICATION = "bench.reference.wsgi.application"
DATABASES = {"default": {**env.db_url("DATABASE_URL"), "CONN_MAX_AGE": 600}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
TIME_ZONE = "UTC"
USE_I18N = False
LOGGING_CONFIG = None

# The one organization the reference serves (it has no authentication to find it).
BENCH_ORGANIZATION_ID = os.environ["BENCH_ORGANIZATION_ID"]
