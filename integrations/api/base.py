"""Base view of the partner API: application key, per-credential rate limit, headers."""

from rest_framework.permissions import IsAuthenticated

from helpdesk.api.views import EnvelopeAPIView
from integrations.authentication import ApiKeyAuthentication
from integrations.ratelimit import partner_rate_limit


class PartnerAPIView(EnvelopeAPIView):
    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [IsAuthenticated]
    auth_error_field = "api_key"

    @property
    def organization(self):
        return self.request.user.organization

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        partner_rate_limit(request)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        state = getattr(request, "rate_limit_state", None)
        if state is not None:
            for name, value in state.headers().items():
                response[name] = value
        return response
