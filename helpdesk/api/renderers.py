"""The one place a success payload is wrapped in the envelope."""

from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import JSONRenderer


class EnvelopeRenderer(JSONRenderer):
    """Wraps successful payloads; error payloads come pre-built from the exception handler."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        response = (renderer_context or {}).get("response")
        if response is not None and response.status_code == 204:
            return b""
        if response is not None and response.status_code < 400 and not getattr(response, "is_envelope", False):
            data = {"success": True, "message": getattr(response, "message", ""), "data": data, "errors": []}
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            # A lone surrogate somewhere in the payload: \u-escaped JSON is still valid JSON.
            self.ensure_ascii = True
            return super().render(data, accepted_media_type, renderer_context)


class JSONOnlyNegotiation(BaseContentNegotiation):
    """The API speaks JSON whatever the Accept header says: never a 406, never HTML."""

    def select_parser(self, request, parsers):
        for parser in parsers:
            if request.content_type.split(";")[0].strip().lower() == parser.media_type:
                return parser
        return None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type
