"""The one place a success payload is wrapped in the envelope."""

from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import JSONRenderer


def success_envelope(data, message: str) -> dict:
    return {"success": True, "message": message, "data": data, "errors": []}


def enveloped(response) -> object:
    """What goes on the wire for this response: success payloads wrapped, error payloads as built."""
    if response.status_code < 400 and not getattr(response, "is_envelope", False):
        return success_envelope(response.data, getattr(response, "message", ""))
    return response.data


class EnvelopeRenderer(JSONRenderer):
    """Wraps successful payloads; error payloads come pre-built from the exception handler."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        response = (renderer_context or {}).get("response")
        if response is not None and response.status_code == 204:
            return b""
        if response is not None:
            data = enveloped(response)
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
