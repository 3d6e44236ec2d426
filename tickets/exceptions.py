from foundation.exceptions import (
    AccessDenied,
    Conflict,
    Gone,
    NotFound,
    PayloadTooLarge,
    ServiceUnavailable,
    UnsupportedMediaType,
)


class TicketNotFound(NotFound):
    message = "Ticket não encontrado."
    field = "id"
    detail = "Ticket inexistente nesta organização."


class ReplyNotFound(NotFound):
    message = "Resposta não encontrada."
    field = "resposta"
    detail = "Resposta inexistente neste ticket."


class ReplyNotEditable(AccessDenied):
    field = "resposta"
    detail = "Esta resposta não foi enviada por você e não pode ser editada."


class TicketClosed(Conflict):
    message = "Ticket fechado."
    field = "status"
    detail = "Tickets fechados não recebem novas respostas."


class TicketNotResolved(Conflict):
    """A rating of a ticket never resolved: there is nothing to rate yet."""

    message = "Ticket ainda não resolvido."
    field = "status"
    detail = "A avaliação é aceita depois que o ticket é resolvido pela primeira vez."


class RatingClosed(Conflict):
    """A rating changed more than RATING_CHANGE_DAYS after the first one of its resolution cycle."""

    message = "Avaliação encerrada."
    field = "nota"
    detail = "A avaliação deste ciclo pode ser alterada só nos 7 dias seguintes à primeira."


class StatusUnavailable(Conflict):
    """A move the organization has no status for (its statuses of that category were all removed or
    recategorised in the admin)."""

    message = "Status indisponível."
    field = "status"

    def __init__(self, *, category: str):
        super().__init__(detail=f"A organização não tem um status da categoria {category}.")


class ChangesCursorExpired(Gone):
    message = "Cursor fora da retenção."
    field = "desde"
    detail = (
        "Exclusões anteriores a este cursor já podem ter sido removidas; ressincronize a cópia pedindo a lista "
        "desde o início (sem `desde`) e continue pelo novo proximo_cursor."
    )


class ContactNotFound(NotFound):
    message = "Contato não encontrado."
    field = "id"
    detail = "Contato inexistente nesta organização."


class ContactExternalIdTaken(Conflict):
    message = "Já existe um contato com este external_id."
    field = "external_id"
    detail = "Outro contato desta organização já tem este external_id."


class ContactAnonymized(Conflict):
    message = "Contato anonimizado."
    field = "id"
    detail = (
        "Os dados desta pessoa foram apagados a pedido dela e não voltam a este contato; "
        "um novo ticket da pessoa cria um contato novo."
    )


class StatusNotFound(NotFound):
    message = "Status não encontrado."
    field = "status_id"
    detail = "Status inexistente nesta organização."


class AttachmentTooLarge(PayloadTooLarge):
    message = "Arquivo muito grande."
    field = "arquivo"

    def __init__(self, *, max_bytes: int):
        super().__init__(detail=f"Cada arquivo pode ter no máximo {format_bytes(max_bytes)}.")


class AttachmentQuotaExceeded(PayloadTooLarge):
    """413, as a file too large: the request cannot succeed as sent, and retrying does not help until
    files are deleted (507 would say the server is out of space, which it is not)."""

    message = "Cota de anexos da organização excedida."
    field = "arquivo"

    def __init__(self, *, quota: int):
        super().__init__(
            detail=f"A organização pode guardar no máximo {format_bytes(quota)} em anexos; exclua tickets antigos."
        )


class StorageLow(ServiceUnavailable):
    message = "Serviço indisponível."
    field = "arquivo"
    detail = "O armazenamento de anexos está quase cheio; tente novamente mais tarde."
    retry_after_seconds = 60


class AttachmentTypeRefused(UnsupportedMediaType):
    message = "Tipo de arquivo não aceito."
    field = "arquivo"


class AttachmentLimitReached(Conflict):
    message = "Limite de anexos atingido."
    field = "arquivo"

    def __init__(self, *, limit: int):
        super().__init__(detail=f"Um ticket guarda no máximo {limit} anexos.")


class AttachmentNotFound(NotFound):
    message = "Anexo não encontrado."
    field = "anexo"
    detail = "O anexo não existe ou não está mais disponível."


def format_bytes(size: int) -> str:
    """10485760 -> "10 MiB"; sizes that are not whole MiB or KiB in bytes."""
    for unit, factor in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"


class CustomFieldNotFound(NotFound):
    message = "Campo não encontrado."
    field = "id"
    detail = "Campo inexistente nesta organização."


class CustomFieldOptionInUse(Conflict):
    """Options of a list field that tickets hold cannot be removed: their values would lose their meaning."""

    message = "Opção em uso."
    field = "opcoes"

    def __init__(self, *, options: list[str], tickets: int):
        names = ", ".join(options)
        noun = "ticket usa" if tickets == 1 else "tickets usam"
        super().__init__(
            detail=f"{tickets} {noun} a opção {names}: troque o valor desses tickets antes de removê-la."
            if len(options) == 1
            else f"{tickets} {noun} as opções {names}: troque o valor desses tickets antes de removê-las."
        )


class TicketMerged(Conflict):
    """A ticket merged into another (tickets.merging): its thread lives in the target now."""

    message = "Ticket mesclado."
    field = "id"

    def __init__(self, *, target_id, target_number: int, field: str | None = None, detail: str | None = None):
        super().__init__(
            field=field,
            detail=detail or f"Este ticket foi mesclado no ticket #{target_number} (id {target_id}); responda nele.",
        )
