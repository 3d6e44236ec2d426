"""Validation messages read as Portuguese speakers expect: "não pode", never "pode não" ("might not")."""

import pytest
from django.utils import translation
from rest_framework import serializers

from tests.assertions import assert_validation_error


class Everything(serializers.Serializer):
    text = serializers.CharField()
    items = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    mapping = serializers.DictField(allow_empty=False)
    choice = serializers.MultipleChoiceField(choices=["a"], allow_empty=False)
    number = serializers.IntegerField(min_value=1, max_value=5)


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"text": ""}, "text", "Este campo não pode estar em branco."),
        ({"text": None}, "text", "Este campo não pode ser nulo."),
        ({"items": []}, "items", "Esta lista não pode estar vazia."),
        ({"mapping": {}}, "mapping", "Este dicionário não pode estar vazio."),
        ({"choice": []}, "choice", "Esta seleção não pode estar vazia."),
        ({"number": 0}, "number", "Certifique-se de que este valor seja maior ou igual a 1."),
        ({"number": 9}, "number", "Certifique-se de que este valor seja menor ou igual a 5."),
    ],
)
def test_drf_messages_are_corrected(data, field, message):
    serializer = Everything(data=data, partial=True)

    with translation.override("pt-br"):
        assert not serializer.is_valid()
        assert [str(error) for error in serializer.errors[field]] == [message]


def test_an_empty_event_list_is_refused_in_correct_portuguese(manager, example_dns):
    response = manager.post(
        "/api/webhooks", {"nome": "ERP", "url": "https://hooks.example.com/erp", "eventos": []}, format="json"
    )

    assert_validation_error(response, "eventos")
    assert "pode não" not in response.content.decode()
