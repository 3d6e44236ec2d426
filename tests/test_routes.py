"""The API answers exactly the contract's paths and methods: a refactor of views or routers cannot move one."""

from tests.routes import api_routes

ROUTES = {
    "/api/health": ("GET",),
    "/api/schema/": ("GET",),
    "/api/docs/": ("GET",),
    "/api/auth/login": ("POST",),
    "/api/auth/refresh": ("POST",),
    "/api/auth/logout": ("POST",),
    "/api/v1/tickets": ("GET", "POST"),
    "/api/v1/tickets/alteracoes": ("GET",),
    "/api/v1/tickets/{id}": ("GET",),
    "/api/v1/tickets/{id}/respostas": ("POST",),
    "/api/v1/tickets/{id}/resolver": ("POST",),
    "/api/v1/tickets/{id}/reabrir": ("POST",),
    "/api/v1/tickets/{id}/avaliacao": ("POST",),  # issue 23: satisfaction ratings
    "/api/v1/tickets/{id}/respostas/{resposta}": ("PATCH",),
    "/api/v1/tickets/{id}/tags": ("PATCH",),  # issue 22: tags
    "/api/v1/tickets/{id}/anexos": ("GET", "POST"),
    "/api/v1/anexos/{token}": ("GET",),
    "/api/v1/atendentes": ("GET",),
    "/api/v1/atendentes/avatar/{token}": ("GET",),
    "/api/v1/eventos": ("GET",),
    "/api/v1/contatos": ("GET",),  # issue 21: contacts
    "/api/v1/contatos/{id}": ("GET", "PATCH"),
    "/api/v1/contatos/{id}/tickets": ("GET",),
    "/api/api-keys": ("GET", "POST"),
    "/api/api-keys/{id}": ("DELETE",),
    "/api/webhooks": ("GET", "POST"),
    "/api/webhooks/{id}": ("DELETE", "GET", "PATCH"),
    "/api/webhooks/{id}/testar": ("POST",),
    "/api/webhooks/{id}/entregas": ("GET",),
    "/api/webhooks/{id}/entregas/{entrega}/reenviar": ("POST",),
    "/api/tickets": ("GET", "POST"),
    "/api/tickets/lote": ("POST",),
    "/api/tickets/{id}": ("DELETE", "GET", "PATCH"),
    "/api/tickets/{id}/respostas": ("POST",),
    "/api/tickets/{id}/respostas/{resposta}": ("PATCH",),
    "/api/tickets/{id}/anexos": ("GET",),
    "/api/tickets/{id}/mesclar": ("POST",),  # issue 24: merging duplicates
    "/api/ticket-status": ("GET",),
    "/api/tags": ("GET",),  # issue 22: the organization's tags
    "/api/auditoria": ("GET",),  # issue 19: the audit trail
    "/api/contatos/{id}/exportar": ("GET",),  # issue 19: data-subject requests
    "/api/contatos/{id}/anonimizar": ("POST",),
    "/api/v1/tickets/{id}/campos": ("PATCH",),  # issue 22: custom fields
    "/api/campos": ("GET", "POST"),
    "/api/campos/{id}": ("DELETE", "PATCH"),
    "/api/horario-atendimento": ("GET", "PUT"),  # issue 23: business hours
    "/api/sla": ("GET", "PUT"),  # issue 23: SLA policies
    "/api/macros": ("GET",),  # issue 24: macros (respostas prontas)
    "/api/tickets/{id}/macros/{macro}": ("POST",),
}


def test_the_api_answers_exactly_the_contract_paths_and_methods():
    assert api_routes() == ROUTES


def test_paths_have_no_trailing_slash_twin(client):
    response = client.get("/api/v1/tickets/")

    assert response.status_code == 404
    assert response.json()["errors"]["field"] == "path"
