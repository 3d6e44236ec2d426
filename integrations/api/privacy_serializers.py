"""What a data-subject request answers: the contact, and everything the service keeps about the person
(integrations.api.privacy_views)."""

from rest_framework import serializers

from integrations.api.serializers import DeliveryOut
from tickets.api.attachment_serializers import AttachmentEventOut
from tickets.api.serializers import TicketPublicOut


class ContactOut(serializers.Serializer):
    id = serializers.UUIDField()
    nome = serializers.CharField()
    email = serializers.CharField(allow_null=True)
    telefone = serializers.CharField(allow_null=True)
    external_id = serializers.CharField(allow_null=True)
    criado_em = serializers.DateTimeField()
    anonimizado_em = serializers.DateTimeField(
        allow_null=True, help_text="Quando os dados da pessoa foram anonimizados; null enquanto não foram."
    )


class ExportedAttachmentOut(AttachmentEventOut):
    ticket_id = serializers.UUIDField()
    url = serializers.URLField(help_text="Link de download assinado, válido por 30 minutos.")


class ExportedDeliveryOut(DeliveryOut):
    webhook_id = serializers.UUIDField()


class ContactExportOut(serializers.Serializer):
    contato = ContactOut()
    tickets = TicketPublicOut(many=True, help_text="Os tickets que a pessoa pediu, com as respostas públicas.")
    anexos = ExportedAttachmentOut(many=True, help_text="Os arquivos públicos desses tickets (sem o conteúdo).")
    avaliacoes = serializers.ListField(
        child=serializers.DictField(), help_text="Avaliações de atendimento: o serviço ainda não as guarda (vazia)."
    )
    eventos = serializers.ListField(
        child=serializers.DictField(),
        help_text="Os eventos que nomeiam a pessoa, cada um o corpo que o feed e os webhooks levam, em ordem.",
    )
    entregas = ExportedDeliveryOut(many=True, help_text="As entregas desses eventos, com as tentativas.")
    exportado_em = serializers.DateTimeField()
