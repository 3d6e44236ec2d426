"""OpenAPI documentation of sla.api.views: the organization's business hours and SLA policies (panel)."""

from drf_spectacular.utils import extend_schema, extend_schema_view

from api_framework.schema import envelope
from sla.api.serializers import BusinessHoursIn, BusinessHoursOut, PoliciesIn, PoliciesOut

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

POLICY_TAGS = ["Painel: políticas de SLA"]

sla_policies_docs = extend_schema_view(
    retrieve=extend_schema(
        operation_id="sla_policies_read",
        tags=POLICY_TAGS,
        description=(
            "As políticas de SLA da organização: para cada prioridade (e `null`, a dos tickets sem prioridade), os "
            "prazos em minutos de horário de atendimento (`GET /api/horario-atendimento`), na ordem baixa, media, "
            "alta, urgente, null. Prioridade sem política não aparece; sem políticas, a lista é vazia."
        ),
        responses={200: envelope("PoliticasSla", PoliciesOut)},
    ),
    update=extend_schema(
        operation_id="sla_policies_update",
        tags=POLICY_TAGS,
        description=(
            "Substitui o conjunto inteiro de políticas (`politicas` é obrigatório; a lista vazia remove todas). Em "
            "cada política `prioridade` é obrigatória (pode ser null); um prazo ausente é null, sem esse prazo. "
            "Erros 422: `politicas.<i>.prioridade` desconhecida ou repetida (a mensagem nomeia a outra); "
            "`politicas.<i>.primeira_resposta`, `.proxima_resposta` ou `.resolucao` que não seja um número inteiro "
            "de 1 a 525600 ou null; `politicas.<i>` sem nenhum prazo; mais de 5 políticas. Enviar as políticas que "
            "já valem não grava nada."
        ),
        request=PoliciesIn,
        responses={200: envelope("PoliticasSlaAtualizadas", PoliciesOut)},
    ),
)
