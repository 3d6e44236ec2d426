from django.core.management.base import CommandError

from foundation.ids import parse_uuid
from helpdesk.actors import SYSTEM
from helpdesk.management.output import OperatorCommand
from helpdesk.models import Organization
from tickets.models import Ticket
from tickets.payloads import tombstone_public
from tickets.services import ticket_delete


class Command(OperatorCommand):
    help = (
        "Delete a ticket of an organization (with its replies and files), by id or number: partners hear of it "
        "(ticket.excluido, and the change list's excluidos), as from the admin."
    )

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--organization", required=True, help="organization id")
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--ticket", help="ticket id")
        which.add_argument("--number", type=int, help="ticket number in the organization")

    def handle(self, *args, **options):
        organization = Organization.objects.filter(pk=parse_uuid(options["organization"])).first()
        if organization is None:
            raise CommandError(f"organization {options['organization']} does not exist")
        tickets = Ticket.objects.filter(organization=organization)
        if options["ticket"] is not None:
            ticket = tickets.filter(pk=parse_uuid(options["ticket"])).first() if parse_uuid(options["ticket"]) else None
        else:
            ticket = tickets.filter(number=options["number"]).first()
        if ticket is None:
            raise CommandError(f"ticket {options['ticket'] or options['number']} does not exist in this organization")
        tombstone = ticket_delete(ticket=ticket, actor=SYSTEM)
        self.emit(options, tombstone_public(tombstone), f"Ticket #{tombstone.number} ({tombstone.pk}) deleted.")
