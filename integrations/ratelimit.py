"""Per-credential rate limit of the partner API."""

from django.conf import settings

from helpdesk.ratelimit import RateLimitState, count_request, window_seconds

__all__ = ["RateLimitState", "partner_rate_limit", "window_seconds"]


def _credential_key(group, request) -> str:
    return str(request.auth.pk)


def partner_rate_limit(request) -> RateLimitState | None:
    """Counts the request against its credential; the state feeds the response headers.

    Past the limit count_request raises RateLimited, which carries the same headers."""
    state = count_request(
        request, group="partner-api", rate=settings.PARTNER_RATE_LIMIT, key=_credential_key, policy="parceiro"
    )
    request.rate_limit_state = state
    return state
