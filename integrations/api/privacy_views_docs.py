"""OpenAPI documentation of integrations.api.privacy_views: a contact's data export and anonymization."""

from drf_spectacular.utils import extend_schema, extend_schema_view

from api_framework.schema import envelope, errors
from integrations.api.privacy_serializers import ContactExportOut, ContactOut

CONTACT_TAGS = ["Painel: contatos (LGPD)"]
CONTACT_NOT_FOUND = "Contato não encontrado nesta organização (campo `id`)."

contact_docs = extend_schema_view(
    export=extend_schema(
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
    ),
    anonymize=extend_schema(
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
    ),
)
