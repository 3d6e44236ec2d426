"""Seed the bench organization with the product's own commands and services.

Run by bench/run.py with the product's settings and environment:
    python -m bench.seed --out seed.json --workdir DIR

The organization, its API key and its 30 agents come from the operator
commands (create_organization, create_api_key, create_agent, with --json); the
1,000 tickets, their replies and internal notes from the ticket services, so
every row is exactly what the product itself writes.
"""

import argparse
import io
import json
import os
import secrets
import sys
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from django.core.management import call_command  # noqa: E402

AGENTS = 30
TICKETS = 1000
CUSTOMERS = 300
REPEATED_EXTERNAL_ID = "bench-repeat"
STORES = 100  # the `loja` field's options, loja-0..loja-99 (bench/bulk.py puts each on 1% of the bulk tickets)
# Issue 22: the organization's custom fields, one of each scalar type and a list; the create row sends all five.
CUSTOM_FIELDS = [
    {"key": "pedido", "name": "Pedido", "field_type": "texto"},
    {"key": "loja", "name": "Loja", "field_type": "lista", "options": [f"loja-{n}" for n in range(STORES)]},
    {"key": "valor", "name": "Valor", "field_type": "numero"},
    {"key": "entrega", "name": "Entrega", "field_type": "data"},
    {"key": "vip", "name": "Cliente VIP", "field_type": "booleano"},
]
# One subject in 20 holds the word the busca rows look for.
SEARCH_TERM = "reembolso"
SUBJECTS = [
    "Pedido não chegou",
    "Cobrança em duplicidade no cartão",
    "Não consigo acessar minha conta",
    "Produto chegou com defeito",
    "Dúvida sobre a nota fiscal",
    "Troca de endereço de entrega",
    "Solicitação de reembolso do pedido",
    "Cupom de desconto não aplicado",
    "Atraso na entrega expressa",
    "Alteração de forma de pagamento",
    "Cancelamento de assinatura",
    "Erro ao finalizar a compra",
    "Produto diferente do anunciado",
    "Senha não é aceita no aplicativo",
    "Pedido faturado mas não enviado",
    "Boleto vencido, preciso de segunda via",
    "Garantia estendida não aparece",
    "Frete cobrado a mais",
    "Item faltando na caixa",
    "Atualização cadastral da empresa",
]


def command(*args: str) -> dict:
    out = io.StringIO()
    call_command(*args, "--json", stdout=out)
    return json.loads(out.getvalue())


def png(path: Path) -> Path:
    from PIL import Image

    Image.new("RGB", (64, 64), (30, 120, 200)).save(path, format="PNG")
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--workdir", required=True)
    options = parser.parse_args()

    from helpdesk.models import Agent, Organization
    from tickets.fields.services import custom_field_create
    from tickets.models import StatusCategory, TicketStatus
    from tickets.services import (
        RequesterData,
        reply_create_by_agent,
        reply_create_by_customer,
        ticket_create,
        ticket_update,
    )

    admin_email = "admin@bench.example"
    admin_password = "Bench-" + secrets.token_urlsafe(16)
    organization_id = command(
        "create_organization", "--name", "Bench", "--admin-email", admin_email, "--admin-password", admin_password
    )["organization_id"]
    api_key = command("create_api_key", "--organization", organization_id, "--name", "bench")["key"]
    avatar = png(Path(options.workdir) / "avatar.png")
    agent_ids = []
    for n in range(AGENTS):
        extra = ["--avatar", str(avatar)] if n % 3 == 0 else []
        agent_ids.append(
            command(
                "create_agent",
                "--organization",
                organization_id,
                "--name",
                f"Atendente {n:02d}",
                "--email",
                f"atendente{n:02d}@bench.example",
                *extra,
            )["agent_id"]
        )
    agents = {str(agent.pk): agent for agent in Agent.objects.filter(pk__in=agent_ids)}
    agents = [agents[agent_id] for agent_id in agent_ids]
    organization = Organization.objects.get(pk=organization_id)
    for field in CUSTOM_FIELDS:
        custom_field_create(organization=organization, **field)
    in_progress = TicketStatus.objects.filter(organization=organization, category=StatusCategory.IN_PROGRESS).first()

    tickets = []
    for n in range(TICKETS):
        customer = n % CUSTOMERS
        ticket, _ = ticket_create(
            organization=organization,
            subject=f"{SUBJECTS[n % len(SUBJECTS)]} #{10000 + n}",
            description=f"Cliente relata: {SUBJECTS[(n * 7) % len(SUBJECTS)].lower()}. Pedido {50000 + n}.",
            priority=["baixa", "media", "alta", "urgente"][n % 4],
            external_id=REPEATED_EXTERNAL_ID if n == 0 else f"seed-{n}",
            requester=RequesterData(
                name=f"Cliente {customer}", email=f"cliente{customer}@bench.example", external_id=f"cli-{customer}"
            ),
        )
        agent = agents[n % AGENTS]
        reply_create_by_customer(
            organization=ticket.organization, ticket_id=ticket.pk, body=f"Alguma novidade sobre o pedido {50000 + n}?"
        )
        reply_create_by_agent(ticket=ticket, agent=agent, body="Olá! Já estamos verificando o seu pedido.")
        reply_create_by_agent(ticket=ticket, agent=agent, body="Nota: conferir com a transportadora.", internal=True)
        if n % 4 == 0:
            reply_create_by_customer(
                organization=ticket.organization, ticket_id=ticket.pk, body="Obrigado, aguardo retorno."
            )
        if n % 5 == 1:
            ticket_update(ticket=ticket, status=in_progress, assignee=agent)
        tickets.append(ticket)
        if (n + 1) % 250 == 0:
            print(f"  {n + 1} tickets", file=sys.stderr, flush=True)

    # Reads and replies use disjoint tickets, so the threads read stay the same size.
    read_ids = [str(ticket.pk) for ticket in tickets[1:41]]
    reply_ids = [str(ticket.pk) for ticket in tickets[100:200]]
    Path(options.out).write_text(
        json.dumps(
            {
                "organization_id": organization_id,
                "api_key": api_key,
                "admin_email": admin_email,
                "admin_password": admin_password,
                "agent_ids": agent_ids,
                "read_ids": read_ids,
                "reply_ids": reply_ids,
                "all_ticket_ids": [str(ticket.pk) for ticket in tickets],
                "repeated_external_id": REPEATED_EXTERNAL_ID,
                "search_term": SEARCH_TERM,
            }
        )
    )


if __name__ == "__main__":
    main()
