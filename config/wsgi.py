import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Web requests: no SQL statement may run longer than this (settings.DATABASES); 0 turns it off.
os.environ.setdefault("DB_STATEMENT_TIMEOUT_MS", "5000")

application = get_wsgi_application()

from foundation.startup import refuse_misconfiguration  # noqa: E402  (needs the apps loaded above)

refuse_misconfiguration()
