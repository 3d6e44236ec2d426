"""Operator commands print one JSON object with --json, readable text otherwise."""

import json

from django.core.management.base import BaseCommand, CommandError

from foundation.exceptions import ValidationFailed
from helpdesk.audit import audit_as_system


class OperatorCommand(BaseCommand):
    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")

    def execute(self, *args, **options):
        # What the command writes is audited as the system, named by the command (helpdesk.audit).
        name = f"manage.py {self.__module__.rsplit('.', 1)[-1]}"
        try:
            with audit_as_system(name):
                return super().execute(*args, **options)
        except CommandError as error:
            if options.get("json"):
                # Scripts parse stdout: a failure is one JSON object too (and a non-zero exit).
                self.stdout.write(json.dumps({"error": str(error)}, ensure_ascii=False))
            raise

    def emit(self, options, result: dict, text: str) -> None:
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False))
        else:
            self.stdout.write(text)


def fail_from_validation(error: ValidationFailed) -> CommandError:
    return CommandError("; ".join(f"{field}: {' '.join(messages)}" for field, messages in error.errors.items()))
