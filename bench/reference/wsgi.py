import os

from django.core.wsgi import get_wsgi_application

# Never the product's settings, whatever the environment says.
os.environ["DJANGO_SETTINGS_MODULE"] = "bench.reference.settings"

application = get_wsgi_application()
