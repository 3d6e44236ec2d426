from helpdesk.exceptions import NotFound


class CredentialNotFound(NotFound):
    message = "Credencial não encontrada."
    field = "id"
    detail = "Credencial inexistente nesta organização."


class WebhookNotFound(NotFound):
    message = "Webhook não encontrado."
    field = "id"
    detail = "Webhook inexistente nesta organização."
