"""Health, and the envelope for routes and errors no view answers."""

import logging
import sys
import threading

from django.conf import settings
from django.db import connection
from django.http import HttpResponse
from django.utils import translation
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView
from rest_framework.permissions import AllowAny

from api_framework.base import EnvelopeAPIView
from api_framework.envelope import error_response
from api_framework.exception_handler import database_unavailable, internal_error, is_database_outage
from api_framework.renderers import EnvelopeRenderer
from api_framework.responses import EnvelopeResponse
from api_framework.views_docs import health_docs
from foundation import exceptions as domain
from foundation.ratelimit import client_address, count_request

logger = logging.getLogger(__name__)

# The admin's answer while the database is down: no template, which could need what is down.
UNAVAILABLE_PAGE = (
    '<!doctype html><html lang="pt-br"><head><meta charset="utf-8"><title>Serviço indisponível</title></head>'
    "<body><h1>Serviço indisponível</h1><p>O banco de dados não está respondendo. "
    "Tente novamente em alguns segundos.</p></body></html>"
)


@health_docs
class HealthView(EnvelopeAPIView):
    """Liveness and readiness: the database and the broker must both answer."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    def rate_limit(self, request) -> None:
        # Each probe costs a query and a broker round trip. HEALTH_RATE_LIMIT per address is far above a
        # load balancer's polling (one a second is 60 a minute); a cache outage never fails a probe.
        count_request(
            request,
            group="health",
            rate=settings.HEALTH_RATE_LIMIT,
            key=client_address,
            policy="saude",
            fail_open=True,
        )

    def get(self, request):
        from config.celery import app

        checks = {"database": _check(_ping_database), "broker": _check(lambda: _ping_broker(app))}
        failing = [name for name, state in checks.items() if state != "ok"]
        if failing:
            raise domain.ServiceUnavailable(field=failing[0], detail=f"{failing[0]} indisponível.")
        return EnvelopeResponse(checks, message="Serviço operacional.")


class SchemaView(SpectacularAPIView):
    """The OpenAPI document (/api/schema/). It changes only with the code, and generating and rendering it
    cost 70-180 ms: each process does both once per language, version and format, and answers from memory.
    Still some 200 KB an answer, so SCHEMA_RATE_LIMIT per client address; errors are the envelope's JSON."""

    # At most a few: a `lang`, `version` or Accept of the client's choosing must not grow it without end.
    _bodies: dict = {}
    _MAX_BODIES = 16
    _lock = threading.Lock()

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        count_request(request, group="schema", rate=settings.SCHEMA_RATE_LIMIT, key=client_address, policy="esquema")

    # Private drf-spectacular API: test_the_schema_is_generated_once_per_process_and_format
    def _get_schema_response(self, request):
        version = self.api_version or request.version or self._get_version_parameter(request)
        media_type = request.accepted_media_type
        key = (version, translation.get_language(), media_type)
        body = self._bodies.get(key)
        if body is None:
            generator = self.generator_class(urlconf=self.urlconf, api_version=version, patterns=self.patterns)
            document = generator.get_schema(request=request, public=self.serve_public)
            body = request.accepted_renderer.render(document, media_type, self.get_renderer_context())
            with self._lock:
                if len(self._bodies) < self._MAX_BODIES:
                    self._bodies[key] = body
        charset = request.accepted_renderer.charset
        response = HttpResponse(body, content_type=f"{media_type}; charset={charset}" if charset else media_type)
        response["Content-Disposition"] = f'inline; filename="{self._get_filename(request, version)}"'
        return response

    def finalize_response(self, request, response, *args, **kwargs):
        if response.status_code >= 400:  # a 429 or 405 in the envelope's JSON, not in YAML
            request.accepted_renderer, request.accepted_media_type = EnvelopeRenderer(), "application/json"
        return super().finalize_response(request, response, *args, **kwargs)


def _check(probe) -> str:
    try:
        probe()
    except Exception:
        logger.warning("health check failed", exc_info=True)
        return "erro"
    return "ok"


def _ping_database():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _ping_broker(app):
    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)


@csrf_exempt  # no cookie session under /api: a POST to an unknown route is a 404, not Django's CSRF page
def api_route_not_found(request, *args, **kwargs):
    """Catch-all under /api/: a JSON envelope even when DEBUG is on."""
    return error_response(
        domain.NotFound("Rota não encontrada.", field="path", detail="Não existe recurso neste endereço.")
    )


def _is_api_path(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


def handler404(request, exception=None):
    if _is_api_path(request.path):
        return api_route_not_found(request)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def handler400(request, exception=None):
    """A request Django refuses before any view (a Host not in ALLOWED_HOSTS, among others)."""
    if _is_api_path(request.path):
        error = domain.BadRequest(
            "Requisição inválida.", field="Host", detail="O endereço pedido não é servido por este servidor."
        )
        return error_response(error)
    from django.views.defaults import bad_request

    return bad_request(request, exception)


def handler500(request):
    """An error outside any API view's handler: a write's transaction, a middleware.

    Django calls this while handling the exception, so sys.exception() is the error.
    """
    outage = is_database_outage(sys.exception())
    if _is_api_path(request.path):
        return error_response(database_unavailable() if outage else internal_error())
    if outage:
        error = database_unavailable()
        return HttpResponse(UNAVAILABLE_PAGE, status=503, headers=error.headers)
    from django.views.defaults import server_error

    return server_error(request)
