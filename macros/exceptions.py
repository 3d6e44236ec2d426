from foundation.exceptions import NotFound


class MacroNotFound(NotFound):
    message = "Macro não encontrada."
    field = "macro"
    detail = "Macro inexistente nesta organização."
