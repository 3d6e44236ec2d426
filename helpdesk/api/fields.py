"""Strict input fields: a partner's wrong type is a 422, never silently coerced."""

from django.core.validators import EmailValidator
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
