"""JSON body parsing with the limits DESIGN.md sets: an object, at most 1 MiB."""

import json

from django.conf import settings
from rest_framework.parsers import BaseParser

from foundation.exceptions import BadRequest, PayloadTooLarge


class JSONObjectParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_MAX_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge()
        try:
            data = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise BadRequest(
                "JSON inválido.", field="body", detail="O corpo da requisição não é um JSON válido em UTF-8."
            )
        if not isinstance(data, dict):
            raise BadRequest("JSON inválido.", field="body", detail="O corpo da requisição deve ser um objeto JSON.")
        return data


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")
