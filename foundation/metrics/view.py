"""GET /metrics: Prometheus's scrape of this web server (outside /api: not part of the partner contract).

Off (the 404 of any unknown path) without METRICS_TOKEN; with it, `Authorization: Bearer
<METRICS_TOKEN>` or a 401. The answer adds up this gunicorn server's processes
(foundation/metrics/exposition.py) and the collectors config/urls.py hands it, read at scrape
time (integrations' delivery queue: the only query, and only on a scrape). Celery workers
serve their own (foundation/metrics/worker.py).
"""

from django.conf import settings
from django.http import Http404, HttpResponse, HttpResponseNotAllowed
from django.views.decorators.csrf import csrf_exempt

from foundation.metrics.exposition import render, token_accepted


@csrf_exempt  # no session here; a POST must get the 404 or the 405, not Django's CSRF page
def metrics_view(request, collectors=()):
    if not settings.METRICS_TOKEN:
        raise Http404
    if request.method != "GET":
        return HttpResponseNotAllowed(["GET"])
    if not token_accepted(request.headers.get("Authorization"), settings.METRICS_TOKEN):
        response = HttpResponse("401 Unauthorized\n", status=401, content_type="text/plain; charset=utf-8")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    body, content_type = render(request.headers.get("Accept", ""), *(collector() for collector in collectors))
    response = HttpResponse(body, content_type=content_type)
    response["Cache-Control"] = "no-store"
    return response


metrics_view.metrics_exempt = True  # scrapes are not counted as requests (foundation/metrics/middleware.py)
