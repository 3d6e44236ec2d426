"""Panel API shapes of macros: MacroOut describes macros.payloads.macro_panel for the schema."""

from rest_framework import serializers

from api_framework.fields import TextField
from tickets.models import Priority


class MacroTagsOut(serializers.Serializer):
    adicionar = serializers.ListField(child=serializers.CharField(), help_text="Normalizadas, em ordem alfabética.")
    remover = serializers.ListField(child=serializers.CharField(), help_text="Normalizadas, em ordem alfabética.")


class MacroActionsOut(serializers.Serializer):
    status_id = serializers.UUIDField(allow_null=True, help_text="O status que a macro aplica; null: mantém.")
    prioridade = serializers.ChoiceField(choices=Priority.choices, allow_null=True, help_text="null: mantém.")
    atendente = serializers.CharField(
        allow_null=True,
        help_text="`eu` (quem aplica), `nenhum` (tira o atendente), o id de um atendente, ou null (mantém).",
    )
    tags = MacroTagsOut()


class MacroOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField()
    mensagem = serializers.CharField(
        allow_blank=True,
        help_text=(
            "O texto com as variáveis como escritas ({{solicitante.nome}}, {{ticket.numero}}, {{ticket.assunto}}, "
            "{{atendente.nome}}); vazio: a macro não responde, só aplica as ações."
        ),
    )
    interna = serializers.BooleanField(help_text="true: nota interna; false: resposta pública.")
    acoes = MacroActionsOut()


class MacroApplyIn(serializers.Serializer):
    mensagem = TextField(
        source="body",
        max_length=65535,
        required=False,
        allow_blank=True,
        help_text=(
            "O texto editado pelo atendente, enviado como está (variáveis não são preenchidas); ausente: a mensagem "
            "da macro com as variáveis preenchidas. Vazio: nenhuma resposta, só as ações."
        ),
    )
