from foundation.exceptions import AccessDenied, Conflict, Gone, NotFound


class CredentialNotFound(NotFound):
    message = "Credencial não encontrada."
    field = "id"
    detail = "Credencial inexistente nesta organização."


class WebhookNotFound(NotFound):
    message = "Webhook não encontrado."
    field = "id"
    detail = "Webhook inexistente nesta organização."


class DeliveryNotFound(NotFound):
    message = "Entrega não encontrada."
    field = "entrega"
    detail = "Entrega inexistente neste webhook."


class EventNotFound(NotFound):
    message = "Evento não encontrado."
    field = "depois_de"
    detail = "Evento inexistente no feed desta organização."


class EventPurged(Gone):
    message = "Evento fora da retenção."
    field = "depois_de"
    detail = "Eventos anteriores a este já foram removidos; ressincronize pela lista de alterações e recomece o feed."


class WebhookInactive(Conflict):
    message = "Webhook inativo."
    field = "ativo"
    detail = "Ative o webhook antes de enviar eventos para ele."


class ScopeMissing(AccessDenied):
    field = "escopo"

    def __init__(self, scope: str):
        super().__init__(detail=f"Esta credencial não tem o escopo `{scope}`, que esta operação exige.")


class OriginNotAllowed(AccessDenied):
    field = "origem"
    detail = "Esta credencial não aceita requisições do endereço de origem (redes_permitidas)."


class OrganizationSuspended(Conflict):
    message = "Organização suspensa."
    field = "organizacao"
    detail = "Nada é enviado aos webhooks de uma organização suspensa."
