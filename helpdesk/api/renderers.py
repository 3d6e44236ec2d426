"""The one place a success payload is wrapped in the envelope, and rendered with orjson."""

import orjson
from django.utils.functional import Promise
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import JSONRenderer

# orjson writes U+2028 and U+2029 raw; DRF's JSONRenderer escapes them, and so do we, byte for byte.
_LINE_SEPARATORS = (("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def success_envelope(data, message: str) -> dict:
    return {"success": True, "message": message, "data": data, "errors": []}


def enveloped(response) -> object:
    """What goes on the wire for this response: success payloads wrapped, error payloads as built."""
    if response.status_code < 400 and not getattr(response, "is_envelope", False):
        return success_envelope(response.data, getattr(response, "message", ""))
    return response.data


def _default(value):
    if isinstance(value, Promise):  # lazy translations in error messages
        return str(value)
    raise TypeError


def json_bytes(data) -> bytes:
    """Compact UTF-8 JSON, as DRF's JSONRenderer writes it, at orjson's speed."""
    body = orjson.dumps(data, default=_default, option=orjson.OPT_UTC_Z)
    for raw, escaped in _LINE_SEPARATORS:
        if raw in body:
            body = body.replace(raw, escaped)
    return body


class EnvelopeRenderer(JSONRenderer):
    """Wraps successful payloads; error payloads come pre-built from the exception handler."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        response = (renderer_context or {}).get("response")
        if response is not None and response.status_code == 204:
            return b""
        if response is not None:
            data = enveloped(response)
        try:
            return json_bytes(data)
        except (orjson.JSONEncodeError, TypeError):
            # What orjson refuses (a lone surrogate, an exotic type): DRF's encoder, \u-escaped if need be.
            try:
                return super().render(data, accepted_media_type, renderer_context)
            except UnicodeEncodeError:
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
