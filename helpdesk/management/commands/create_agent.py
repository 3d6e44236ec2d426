from pathlib import Path

from django.core.files import File
from django.core.management.base import CommandError

from foundation.exceptions import ValidationFailed
from foundation.ids import parse_uuid
from helpdesk.management.output import OperatorCommand, fail_from_validation
from helpdesk.models import Organization
from helpdesk.services import agent_create


class Command(OperatorCommand):
    help = "Create an agent (atendente) of an organization."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--organization", required=True, help="organization id")
        parser.add_argument("--name", required=True)
        parser.add_argument("--email", required=True)
        parser.add_argument("--password")
        parser.add_argument("--inactive", action="store_true")
        parser.add_argument("--avatar", help="path of an image file")

    def handle(self, *args, **options):
        organization = Organization.objects.filter(pk=parse_uuid(options["organization"])).first()
        if organization is None:
            raise CommandError(f"organization {options['organization']} does not exist")
        avatar_path = Path(options["avatar"]) if options["avatar"] else None
        if avatar_path is not None and not avatar_path.is_file():
            raise CommandError(f"avatar file {avatar_path} does not exist")
        try:
            if avatar_path is None:
                agent = self._create(organization, options, None)
            else:
                with avatar_path.open("rb") as handle:
                    agent = self._create(organization, options, File(handle, name=avatar_path.name))
        except ValidationFailed as error:
            raise fail_from_validation(error)
        self.emit(
            options,
            {"agent_id": str(agent.pk), "user_id": str(agent.user_id)},
            f"Agent {agent.name} ({agent.pk}) created.",
        )

    def _create(self, organization, options, avatar):
        return agent_create(
            organization=organization,
            name=options["name"],
            email=options["email"],
            password=options["password"],
            is_active=not options["inactive"],
            avatar=avatar,
        )
