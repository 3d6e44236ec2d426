"""A demo organization to try the service with; safe to run any number of times."""

import json
import secrets

from django.conf import settings
from django.db import transaction

from helpdesk.management.output import OperatorCommand
from helpdesk.models import User
from helpdesk.services import agent_create, organization_create
from integrations.services import credential_create
from tickets.services import RequesterData, reply_create_by_agent, ticket_create

DEMO_ORGANIZATION = "Demo Helpdesk"
DEMO_ADMIN_EMAIL = "admin@demo.helpdesk.local"


class Command(OperatorCommand):
    help = "Seed the demo organization once; --with-key also issues a fresh API key."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--with-key", action="store_true", help="issue and print a new API key of the demo")

    def handle(self, *args, **options):
        login_file = settings.DATA_DIR / "demo-login.json"
        admin = User.objects.filter(email__iexact=DEMO_ADMIN_EMAIL).select_related("organization").first()
        password = _stored_password(login_file) if admin else None
        created = admin is None
        if created:
            password = secrets.token_urlsafe(12)
            with transaction.atomic():
                organization, admin = organization_create(
                    name=DEMO_ORGANIZATION, admin_email=DEMO_ADMIN_EMAIL, admin_password=password
                )
                _seed_tickets(organization, admin.agent)
        elif password is None or not admin.check_password(password):
            # The login file went missing (new DATA_DIR, same database): issue a new password.
            password = secrets.token_urlsafe(12)
            admin.set_password(password)
            admin.save(update_fields=["password"])
        login_file.touch(mode=0o600)
        login_file.write_text(json.dumps({"email": DEMO_ADMIN_EMAIL, "password": password}))

        result = {
            "organization_id": str(admin.organization_id),
            "admin_email": DEMO_ADMIN_EMAIL,
            "admin_password": password,
            "created": created,
        }
        lines = [
            f"Demo organization {admin.organization_id} ({'created' if created else 'already seeded'}).",
            f"Panel login: {DEMO_ADMIN_EMAIL} / {password}",
        ]
        if options["with_key"]:
            credential, key = credential_create(organization=admin.organization, name="make run")
            result["api_key"] = key
            lines.append(f"API key: {key}")
        self.emit(options, result, "\n".join(lines))


def _stored_password(login_file) -> str | None:
    try:
        return json.loads(login_file.read_text())["password"]
    except (OSError, ValueError, KeyError):
        return None


def _seed_tickets(organization, admin_agent) -> None:
    agent = agent_create(organization=organization, name="Ana Atendente", email="ana@demo.helpdesk.local")
    ticket, _ = ticket_create(
        organization=organization,
        subject="Não consigo acessar minha conta",
        description="Ao tentar entrar, recebo 'senha inválida'.",
        priority="alta",
        external_id="demo-1",
        requester=RequesterData(name="Maria Cliente", email="maria@example.com", external_id="cliente-1"),
    )
    reply_create_by_agent(ticket=ticket, agent=agent, body="Olá Maria, já estamos verificando.")
    reply_create_by_agent(ticket=ticket, agent=admin_agent, body="Conta bloqueada por tentativas.", internal=True)
    ticket_create(
        organization=organization,
        subject="Dúvida sobre a fatura",
        description="A fatura de outubro veio em dobro.",
        requester=RequesterData(name="João Cliente", email="joao@example.com"),
    )
