"""Domain errors: services raise them, one exception handler renders them.

Each carries its HTTP status, the envelope's message, the offending field and
a sentence for errors.message.
"""


class ApplicationError(Exception):
    status_code = 400
    message = "Requisição inválida."
    field = "body"
    detail = "A requisição não pôde ser processada."

    def __init__(self, message=None, *, field=None, detail=None, headers=None):
        self.message = message or self.message
        self.field = field or self.field
        self.detail = detail or self.detail
        self.headers = headers or {}
        super().__init__(self.message)


class BadRequest(ApplicationError):
    status_code = 400


class NotAuthenticated(ApplicationError):
    status_code = 401
    message = "Não autenticado."
    field = "api_key"
    detail = "Credencial ausente, inválida ou revogada."


class AccessDenied(ApplicationError):
    status_code = 403
    message = "Acesso negado."
    field = "permissao"
    detail = "Você não tem permissão para esta ação."


class NotFound(ApplicationError):
    status_code = 404
    message = "Recurso não encontrado."
    field = "id"
    detail = "O recurso não existe nesta organização."


class MethodNotAllowed(ApplicationError):
    status_code = 405
    message = "Método não permitido."
    field = "method"
    detail = "O método HTTP não é aceito neste endereço."


class Conflict(ApplicationError):
    status_code = 409
    message = "Conflito."
    field = "status"


class Gone(ApplicationError):
    status_code = 410
    message = "Recurso removido."
    field = "id"
    detail = "O recurso não está mais disponível."


class PayloadTooLarge(ApplicationError):
    status_code = 413
    message = "Corpo da requisição muito grande."
    field = "body"
    detail = "O corpo da requisição excede 1 MiB."


class UnsupportedMediaType(ApplicationError):
    status_code = 415
    message = "Tipo de mídia não suportado."
    field = "Content-Type"
    detail = "Envie o corpo como application/json."


class RateLimited(ApplicationError):
    status_code = 429
    message = "Limite de requisições excedido."
    field = "rate_limit"
    detail = "Limite excedido, tente novamente mais tarde."

    def __init__(self, *args, limit: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.limit = limit  # the refusing limit's RateLimit-Policy name, for the metrics


class ServiceUnavailable(ApplicationError):
    status_code = 503
    message = "Serviço indisponível."
    field = "server"
    detail = "Uma dependência do serviço está fora do ar."
    # Long enough for a restarted or failed-over database to take connections again.
    retry_after_seconds = 5

    def __init__(self, message=None, *, field=None, detail=None, headers=None):
        super().__init__(message, field=field, detail=detail, headers=headers)
        self.headers.setdefault("Retry-After", str(self.retry_after_seconds))


class ValidationFailed(Exception):
    """A 422 raised by a service: maps field names to lists of messages."""

    def __init__(self, errors: dict[str, list[str]]):
        self.errors = errors
        super().__init__(errors)
