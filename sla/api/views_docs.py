"""OpenAPI documentation of sla.api.views: the organization's business hours (panel)."""

from drf_spectacular.utils import extend_schema, extend_schema_view

from api_framework.schema import envelope
from sla.api.serializers import BusinessHoursIn, BusinessHoursOut

TAGS = ["Painel: horário de atendimento"]

business_hours_docs = extend_schema_view(
    retrieve=extend_schema(
        operation_id="business_hours_read",
        tags=TAGS,
        description=(
            "O calendário da organização: fuso horário, intervalos semanais e feriados. Sem calendário salvo, "
            "o padrão: 24x7 em America/Sao_Paulo, sem feriados."
        ),
        responses={200: envelope("HorarioAtendimento", BusinessHoursOut)},
    ),
    update=extend_schema(
        operation_id="business_hours_update",
        tags=TAGS,
        description=(
            "Substitui o calendário inteiro (todos os campos são obrigatórios; as listas podem ser vazias). "
            "Intervalos em minutos exatos, do início (incluído) ao fim (excluído), na hora local do fuso; `fim` "
            "24:00 é o fim do dia. Erros 422: `fuso_horario` desconhecido; `intervalos.<i>` invertido, vazio ou "
            "que se sobrepõe a outro do mesmo dia (a mensagem nomeia o outro); `intervalos.<i>.inicio`, `.fim` ou "
            "`.dia_semana` mal formados; `feriados.<i>.data` inválida ou repetida; mais de 50 intervalos ou 366 "
            "feriados. Enviar o calendário que já vale não grava nada."
        ),
        request=BusinessHoursIn,
        responses={200: envelope("HorarioAtendimentoAtualizado", BusinessHoursOut)},
    ),
)
