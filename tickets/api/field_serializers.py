"""Custom fields through the APIs: definitions (the panel's `/api/campos`) and a ticket's values (`campos`)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api_framework.fields import StrictBooleanField, TextField
from tickets.fields.values import KEY_RE, TEXT_MAX_LENGTH
from tickets.models import CustomFieldType

VALUE_SCHEMA = {
    "nullable": True,
    "oneOf": [
        {"type": "string", "maxLength": TEXT_MAX_LENGTH},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "array", "items": {"type": "string"}},
    ],
}
VALUES_DESCRIPTION = (
    "Campos personalizados, `chave -> valor` (null apaga o valor). Cada tipo aceita: `texto`, um texto de até "
    f'{TEXT_MAX_LENGTH} caracteres; `numero`, um número ou um texto decimal (`"12.50"`; até 18 dígitos antes do '
    "ponto e 6 depois); `data`, AAAA-MM-DD; `booleano`, true ou false; `lista`, uma das `opcoes`; `multilista`, uma "
    "lista de `opcoes`. Um valor de outro tipo, uma opção desconhecida, uma chave desconhecida ou de campo inativo, "
    "ou um campo que o parceiro não pode editar é um 422 em `campos.<chave>`."
)
VALUES_SCHEMA = {
    "type": "object",
    "additionalProperties": VALUE_SCHEMA,
    "description": VALUES_DESCRIPTION,
}


@extend_schema_field(VALUES_SCHEMA)
class CustomFieldValuesField(serializers.Field):
    """`campos` of a request: an object; its keys and values are checked by the service against the fields."""

    default_error_messages = {"invalid": "Informe um objeto de chave para valor."}

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            self.fail("invalid")
        return data

    def to_representation(self, value):
        return value


class CustomFieldValuesOut(serializers.Serializer):
    campos = serializers.DictField(
        child=serializers.JSONField(),
        help_text="Os valores dos campos visíveis ao parceiro que o ticket tem, como no bloco `campos`.",
    )


OPTIONS_HELP = "As opções de um campo `lista` ou `multilista` (ao menos uma, no máximo 100, sem repetição)."


class CustomFieldOut(serializers.Serializer):
    id = serializers.UUIDField()
    chave = serializers.CharField(source="key")
    nome = serializers.CharField(source="name")
    tipo = serializers.ChoiceField(source="type", choices=CustomFieldType.choices)
    opcoes = serializers.ListField(source="options", child=serializers.CharField(), help_text=OPTIONS_HELP)
    visivel_parceiro = serializers.BooleanField(source="visible_to_partner")
    editavel_parceiro = serializers.BooleanField(source="editable_by_partner")
    ativo = serializers.BooleanField(source="is_active")
    criado_em = serializers.DateTimeField(source="created_at")
    atualizado_em = serializers.DateTimeField(source="updated_at")


@extend_schema_field({"type": "string", "pattern": f"^{KEY_RE.pattern}$"})
class KeyField(TextField):
    pass


class CustomFieldCreateIn(serializers.Serializer):
    # Fields map to custom_field_create's arguments (source=); the service checks the rules.
    chave = KeyField(source="key", help_text="Como a API nomeia o campo: a-z, 0-9 e _, até 40; não muda depois.")
    nome = TextField(source="name", max_length=100)
    tipo = serializers.ChoiceField(source="field_type", choices=CustomFieldType.choices)
    opcoes = serializers.ListField(
        source="options", child=TextField(max_length=100), required=False, max_length=100, help_text=OPTIONS_HELP
    )
    visivel_parceiro = StrictBooleanField(source="visible_to_partner", required=False, default=True)
    editavel_parceiro = StrictBooleanField(source="editable_by_partner", required=False, default=True)
    ativo = StrictBooleanField(source="is_active", required=False, default=True)


class CustomFieldUpdateIn(serializers.Serializer):
    # Every field optional; `chave` and `tipo` never change (a different value is a 422 on it).
    chave = TextField(source="key", required=False, max_length=40, help_text="Não muda: outro valor é um 422.")
    nome = TextField(source="name", required=False, max_length=100)
    tipo = serializers.ChoiceField(
        source="field_type",
        choices=CustomFieldType.choices,
        required=False,
        help_text="Não muda: outro valor é um 422.",
    )
    opcoes = serializers.ListField(
        source="options",
        child=TextField(max_length=100),
        required=False,
        max_length=100,
        help_text=OPTIONS_HELP + " Remover uma opção que algum ticket usa é um 409.",
    )
    visivel_parceiro = StrictBooleanField(source="visible_to_partner", required=False)
    editavel_parceiro = StrictBooleanField(source="editable_by_partner", required=False)
    ativo = StrictBooleanField(source="is_active", required=False)
