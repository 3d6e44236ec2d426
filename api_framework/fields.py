"""Strict input fields: a partner's wrong type is a 422, never silently coerced."""

from datetime import UTC

from django.core.validators import EmailValidator
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


class TextField(serializers.CharField):
    """A string and only a string (DRF's CharField turns 123 into "123")."""

    default_error_messages = {
        "invalid": "Informe um texto.",
        "surrogate": "O texto contém caracteres que não são UTF-8 válido.",
    }

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates from "\ud800" escapes: no database can store them.
            self.fail("surrogate")
        return super().to_internal_value(data)


class EmailTextField(TextField):
    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 254)
        super().__init__(**kwargs)
        self.validators.append(EmailValidator(message="Informe um endereço de e-mail válido."))


class StrictBooleanField(serializers.BooleanField):
    """true or false only; DRF's BooleanField also takes "yes", 1, "on"..."""

    default_error_messages = {"invalid": "Informe true ou false."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictUUIDField(serializers.UUIDField):
    """A UUID string; DRF's UUIDField also turns the integer 7 into ...0007."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


@extend_schema_field({"type": "string", "format": "date-time"})
class InstantField(TextField):
    """An ISO 8601 date and time with its offset (2026-12-31T23:59:00Z); without one the instant is ambiguous."""

    default_error_messages = {
        **TextField.default_error_messages,
        "instant": "Informe data e hora ISO 8601 com fuso (por exemplo, 2026-12-31T23:59:00Z).",
    }

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        self.run_validators(value)  # on the text: Python's parser takes "2026-12-31T23:59:00Z\x00" as an instant
        try:
            moment = parse_datetime(value)
        except ValueError:  # well formed, but not a date (month 13)
            moment = None
        if moment is None or moment.tzinfo is None:
            self.fail("instant")
        try:
            # In UTC: 9999-12-31T23:00:00-05:00 is past what a database stores, and PostgreSQL refuses an
            # offset past 15:59 that ISO 8601 (and Python) allow (-19:41).
            return moment.astimezone(UTC)
        except OverflowError:
            self.fail("instant")


class BoundedListField(serializers.ListField):
    """A list refused for its length before its items are looked at: DRF's ListField checks `max_length` after
    validating every item, so a body of a few hundred thousand `{}` was validated item by item and answered an
    error for each."""

    def to_internal_value(self, data):
        if self.max_length is not None and isinstance(data, list) and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)
