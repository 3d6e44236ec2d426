"""Management API: data-subject requests on a contact of the user's organization (LGPD/GDPR):
GET /api/contatos/{id}/exportar and POST /api/contatos/{id}/anonimizar."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action

from helpdesk.actors import Actor
from helpdesk.api.panel import ManagementViewSet
from helpdesk.api.responses import EnvelopeResponse
from helpdesk.api.schema import envelope, errors
from helpdesk.selectors import active_agent_of
from integrations.api.serializers import DeliveryOut
from integrations.privacy import contact_export
from tickets.api.attachment_serializers import AttachmentEventOut
from tickets.api.serializers import TicketPublicOut
from tickets.payloads import contact_public
from tickets.selectors import contact_get
from tickets.services import contact_anonymize

CONTACT_TAGS = ["Painel: contatos (LGPD)"]
CONTACT_NOT_FOUND = "Contato não encontrado nesta organização (campo `id`)."


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


class ContactViewSet(ManagementViewSet):
    @extend_schema(
        operation_id="contacts_export",
        tags=CONTACT_TAGS,
        description=(
            "Tudo o que o serviço guarda sobre a pessoa (pedido de acesso do titular): o contato, os tickets que "
            "pediu com as respostas públicas (nunca uma nota interna), os anexos públicos com links, as avaliações "
            "e os eventos e entregas que a nomeiam. Fica registrado na auditoria (`contato.exportado`)."
        ),
        responses={
            200: envelope("ContatoExportado", ContactExportOut),
            **errors(404, descriptions={404: CONTACT_NOT_FOUND}),
        },
    )
    @action(detail=True, methods=["get"], url_path="exportar")
    def export(self, request, id):
        document = contact_export(contact=contact_get(organization=self.organization, contact_id=id), request=request)
        document["entregas"] = ExportedDeliveryOut(document["entregas"], many=True).data
        return EnvelopeResponse(document, message="Dados do contato exportados.")

    @extend_schema(
        operation_id="contacts_anonymize",
        tags=CONTACT_TAGS,
        description=(
            "Irreversível: nome, e-mail, telefone e external_id da pessoa viram valores neutros, também nos corpos "
            "dos eventos e nas entregas guardadas; os arquivos que ela enviou são apagados. Tickets, números, datas "
            "e contagens ficam. Anuncia `contato.anonimizado`; repetir responde 200 sem mudar nada. Não leva corpo."
        ),
        request=None,
        responses={
            200: envelope("ContatoAnonimizado", ContactOut),
            **errors(404, descriptions={404: CONTACT_NOT_FOUND}),
        },
    )
    @action(detail=True, methods=["post"], url_path="anonimizar", takes_body=False)
    def anonymize(self, request, id):
        contact = contact_anonymize(
            contact=contact_get(organization=self.organization, contact_id=id),
            actor=Actor.of_agent(active_agent_of(request.user)),
        )
        return EnvelopeResponse(contact_public(contact), message="Contato anonimizado.")
