from django.core.management.base import CommandError

from foundation.exceptions import ValidationFailed
from foundation.ids import parse_uuid
from helpdesk.management.output import OperatorCommand, fail_from_validation
from helpdesk.models import Organization
from integrations.services import credential_create


class Command(OperatorCommand):
    help = "Create a partner API key; the key is printed once and never stored."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--organization", required=True, help="organization id")
        parser.add_argument("--name", required=True)

    def handle(self, *args, **options):
        organization = Organization.objects.filter(pk=parse_uuid(options["organization"])).first()
        if organization is None:
            raise CommandError(f"organization {options['organization']} does not exist")
        name = options["name"].strip()
        if not 1 <= len(name) <= 100:
            raise CommandError("name must have 1 to 100 characters")
        try:
            credential, key = credential_create(organization=organization, name=name)
        except ValidationFailed as error:
            raise fail_from_validation(error)
        self.emit(
            options,
            {"id": str(credential.pk), "key": key, "key_prefix": credential.key_prefix},
            f"API key {credential.pk}: {key}",
        )
