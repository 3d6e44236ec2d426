from foundation.exceptions import ValidationFailed
from helpdesk.management.output import OperatorCommand, fail_from_validation
from helpdesk.services import organization_create


class Command(OperatorCommand):
    help = "Create an organization with its default statuses and an admin panel user."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--name", required=True)
        parser.add_argument("--admin-email", required=True)
        parser.add_argument("--admin-password", required=True)

    def handle(self, *args, **options):
        try:
            organization, user = organization_create(
                name=options["name"], admin_email=options["admin_email"], admin_password=options["admin_password"]
            )
        except ValidationFailed as error:
            raise fail_from_validation(error)
        self.emit(
            options,
            {"organization_id": str(organization.pk), "admin_user_id": str(user.pk)},
            f"Organization {organization.pk} created; admin {user.email} ({user.pk}).",
        )
