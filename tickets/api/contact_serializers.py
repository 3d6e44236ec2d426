"""Partner API shapes of contacts: Contato out, the list's query and the PATCH body in."""

from rest_framework import serializers

from api_framework.fields import EmailTextField, TextField
from api_framework.pagination import PageQuery
from tickets.api.serializers import BlankAsNullField

# Output serializers are the OpenAPI schema of the payloads built in tickets.payloads (and their oracle,
# tests/tickets/test_payloads.py). A docstring here would show in the schema.


class PartnerContactOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField(source="name")
    email = BlankAsNullField()
    telefone = BlankAsNullField(source="phone")
    external_id = BlankAsNullField()
    criado_em = serializers.DateTimeField(source="created_at")
    atualizado_em = serializers.DateTimeField(source="updated_at")


class ContactListQuery(PageQuery):
    # Fields map to contact_page's filters (source=), plus the page.
    por_pagina = serializers.IntegerField(required=False, default=15, min_value=1, max_value=100)
    external_id = TextField(
        required=False, allow_blank=True, max_length=255, help_text="O contato com este `external_id` (exato)."
    )
    email = EmailTextField(
        required=False, allow_blank=True, help_text="Os contatos com este e-mail, sem diferenciar maiúsculas."
    )
    telefone = TextField(
        source="phone",
        required=False,
        allow_blank=True,
        max_length=32,
        help_text=(
            "Os contatos com este telefone, comparado sem espaços, hífens, pontos e parênteses "
            "(`(11) 5555-0000` encontra `11 5555 0000`)."
        ),
    )
    busca = TextField(
        source="search",
        required=False,
        allow_blank=True,
        max_length=255,
        help_text="Trecho do nome ou do e-mail, sem diferenciar maiúsculas.",
    )


class ContactUpdateIn(serializers.Serializer):
    # Fields map to contact_update's arguments (source=), with the limits of `solicitante` in a ticket's
    # creation; a field left out is kept, null clears an optional one.
    nome = TextField(source="name", required=False, max_length=255)
    email = EmailTextField(required=False, allow_blank=True, allow_null=True)
    telefone = TextField(source="phone", required=False, allow_blank=True, allow_null=True, max_length=32)
    external_id = TextField(required=False, allow_null=True, max_length=255)
