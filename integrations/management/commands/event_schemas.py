import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from drf_spectacular.generators import SchemaGenerator

from integrations.api.event_schemas import incompatible_kinds, shapes

SNAPSHOT = Path(settings.BASE_DIR) / "docs" / "event-schemas.json"


class Command(BaseCommand):
    help = (
        "Compare the event bodies the OpenAPI document publishes with docs/event-schemas.json (the shapes "
        "receivers were promised); --write refreshes it when the change only adds kinds, fields or values."
    )

    def add_arguments(self, parser):
        parser.add_argument("--write", action="store_true", help="refresh docs/event-schemas.json")

    def handle(self, *args, **options):
        current = shapes(SchemaGenerator().get_schema(request=None, public=True))
        before = json.loads(SNAPSHOT.read_text()) if SNAPSHOT.exists() else {}
        problems = incompatible_kinds(before, current)
        if problems:
            raise CommandError(
                "incompatible change to event bodies (they may only grow; docs/webhooks.md):\n" + "\n".join(problems)
            )
        if options["write"]:
            SNAPSHOT.write_text(json.dumps(current, ensure_ascii=False, indent=2, sort_keys=True) + "\n")
            self.stdout.write(f"{SNAPSHOT.relative_to(settings.BASE_DIR)} written ({len(current)} kinds)")
        elif current != before:
            self.stdout.write("compatible additions: run `make event-schemas` to refresh docs/event-schemas.json")
        else:
            self.stdout.write("event schemas unchanged")
