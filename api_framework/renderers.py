"""DRF's side of the envelope (api_framework.envelope): the renderer, and JSON whatever the client asks."""

from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import JSONRenderer

from api_framework.envelope import json_bytes, success_body


class EnvelopeRenderer(JSONRenderer):
    """Wraps a success payload in the envelope with its EnvelopeResponse's message; an error's body
    comes whole from the exception handler."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        response = (renderer_context or {}).get("response")
        if response is not None and response.status_code == 204:
            return b""
        if response is not None and response.status_code < 400:
            data = success_body(data, getattr(response, "message", ""))
        return json_bytes(data)


class JSONOnlyNegotiation(BaseContentNegotiation):
    """The API speaks JSON whatever the Accept header says: never a 406, never HTML."""

    def select_parser(self, request, parsers):
        for parser in parsers:
            if request.content_type.split(";")[0].strip().lower() == parser.media_type:
                return parser
        return None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type
