"""The panel's merge of duplicate tickets (POST /api/tickets/{id}/mesclar)."""

from rest_framework import serializers

from api_framework.fields import StrictUUIDField
from tickets.merging import MERGE_MAX_TICKETS


class PanelMergeIn(serializers.Serializer):
    origens = serializers.ListField(
        child=StrictUUIDField(),
        min_length=1,
        max_length=MERGE_MAX_TICKETS - 1,
        help_text=(
            "Os tickets a mesclar neste (de 1 a 19, sem repetir e sem o próprio destino): as respostas, notas e "
            "anexos de cada um vêm para este, marcados com o número de origem, e cada um é fechado."
        ),
    )
