"""Partner-visible rows are written only by the services, which move the change list and announce what they
did (tickets.signals). Nothing else may save, update, create or delete a ticket, reply, contact, status,
attachment or agent: a write elsewhere would change what a partner sees without moving the change list and
without an event, since no receiver guesses changes from saved models any more.

The code of the apps is scanned (an AST walk, no import): a write method called on one of those models
(`Ticket.objects.filter(...).update(...)`), on a variable known to hold one (a parameter annotated with
the model, a name bound from a query of it), or SQL that writes their tables (by name, or named from the
model by foundation.db.model_sql), outside a services module, is a failure. The admin writes through ModelAdmin
hooks Django calls itself: each admin of those models overrides the hooks it allows, or does not allow them.
"""

import ast
import re
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.admin import ModelAdmin

from helpdesk.models import Agent
from tickets.models import Attachment, Contact, Reply, Ticket, TicketStatus

ROOT = Path(__file__).resolve().parent.parent
APPS = ("helpdesk", "sla", "tickets", "macros", "integrations", "config", "api_framework", "foundation")
GUARDED = {"Ticket", "Reply", "Contact", "TicketStatus", "Attachment", "Agent", "TicketTombstone"}
TABLES = ("tickets_ticket", "tickets_reply", "tickets_contact", "tickets_ticketstatus", "tickets_attachment")
WRITES = {"save", "delete", "update", "bulk_update", "bulk_create", "create", "get_or_create", "update_or_create"}
QUERIES = {"objects", "filter", "exclude", "all", "get", "first", "last", "select_for_update", "select_related"}
# Where partner-visible rows may be written: the services, each of which moves the change list and
# announces (tickets.signals, helpdesk.signals).
WRITERS = {
    "tickets/services.py",
    "tickets/attachments/services.py",
    "tickets/fields/services.py",
    "tickets/merging.py",
    "helpdesk/services.py",
    # The SLA clock's writes: in the services' own transactions, or the beat's re-target after a change of the
    # settings (audited by sla.services), which moves each ticket in the change list.
    "tickets/service_levels.py",
}


def _root_name(node: ast.AST) -> str | None:
    """The name a chain of attributes and calls starts from: `Ticket` in Ticket.objects.filter(...).update."""
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _annotation_names(annotation: ast.AST | None) -> set[str]:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):  # "Ticket | None"
        annotation = ast.parse(annotation.value, mode="eval")
    return {node.id for node in ast.walk(annotation) if isinstance(node, ast.Name)} if annotation else set()


class _Writes(ast.NodeVisitor):
    """Every write of a guarded model in one module, as `line: code`."""

    def __init__(self, source: str):
        self.source = source
        self.found: list[str] = []
        self.typed: list[set[str]] = [set()]  # names known to hold a guarded row, per function

    def visit_FunctionDef(self, node):
        arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        typed = {arg.arg for arg in arguments if _annotation_names(arg.annotation) & GUARDED}
        self.typed.append(typed)
        self.generic_visit(node)
        self.typed.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node):
        if _root_name(node.value) in GUARDED and self._is_query(node.value):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        self.typed[-1].add(name.id)
        self.generic_visit(node)

    def visit_For(self, node):
        if _root_name(node.iter) in GUARDED or (_root_name(node.iter) in self.typed[-1]):
            for name in ast.walk(node.target):
                if isinstance(name, ast.Name):
                    self.typed[-1].add(name.id)
        self.generic_visit(node)

    @staticmethod
    def _is_query(node: ast.AST) -> bool:
        return any(isinstance(part, ast.Attribute) and part.attr in QUERIES for part in ast.walk(node))

    def visit_Call(self, node):
        function = node.func
        if isinstance(function, ast.Attribute) and function.attr in WRITES:
            root = _root_name(function.value)
            if root in GUARDED or root in self.typed[-1]:
                self.found.append(f"{node.lineno}: {ast.get_source_segment(self.source, node)}")
        if isinstance(function, ast.Name) and function.id == "model_sql":
            self._model_sql(node)
        self.generic_visit(node)

    def _model_sql(self, node: ast.Call) -> None:
        """SQL named from the models (foundation.db.model_sql): `{t}` written to, with t=Ticket or
        Table(Ticket, ...)."""
        template = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else ""
        sql = " ".join(str(template).split()).lower()
        for keyword in node.keywords:
            if keyword.arg is None:  # **names is not followed: a guarded model is named in a keyword
                continue
            value = keyword.value
            if isinstance(value, ast.Call) and value.args:  # Table(Ticket, "t")
                value = value.args[0]
            writes = re.search(rf"\b(update|insert into|delete from) {{{keyword.arg.lower()}}}", sql)
            if writes and isinstance(value, ast.Name) and value.id in GUARDED:
                self.found.append(f"{node.lineno}: SQL writing {value.id}")

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            sql = " ".join(node.value.split()).lower()
            for table in TABLES:  # the table itself, not one whose name it begins (tickets_ticketcount)
                if re.search(rf"\b(update|insert into|delete from) {table}\b", sql):
                    self.found.append(f"{node.lineno}: SQL writing {table}")


def writes_in(source: str) -> list[str]:
    visitor = _Writes(source)
    visitor.visit(ast.parse(source))
    return visitor.found


def _modules():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if "/migrations/" not in relative and relative not in WRITERS:
                yield relative, path.read_text()


def test_no_module_but_the_services_writes_a_partner_visible_row():
    found = {relative: writes for relative, source in _modules() if (writes := writes_in(source))}

    assert found == {}, "write these through a service, which moves the change list and announces the change"


@pytest.mark.parametrize(
    "snippet",
    [
        "Ticket.objects.filter(pk=1).update(priority='alta')",
        "Contact.objects.filter(organization=o).update(name='x')",
        "Reply.objects.create(ticket=t, body='x')",
        "def f(contact: Contact):\n    contact.name = 'x'\n    contact.save()",
        "def f(reply: 'Reply | None'):\n    reply.save(update_fields=['body'])",
        "status = TicketStatus.objects.get(pk=1)\nstatus.save()",
        "for ticket in Ticket.objects.filter(x=1):\n    ticket.delete()",
        "cursor.execute('UPDATE tickets_ticket SET priority = %s', ['alta'])",
        "SQL = '''\n    DELETE FROM  tickets_reply WHERE id = %s'''",
        "SQL = model_sql('UPDATE {t} SET {t.priority} = %s', t=Ticket)",
        "SQL = model_sql('''\n    INSERT INTO  {c} ({c.name}) VALUES (%s)''', c=Table(Contact, 'c'))",
        "Agent.objects.filter(pk=1).update(name='Outro')",
    ],
)
def test_the_scan_finds_each_way_of_writing_around_the_services(snippet):
    assert writes_in(snippet)


@pytest.mark.parametrize(
    "snippet",
    [
        "Ticket.objects.filter(pk=1).values_list('id')",
        "webhook.save(update_fields=['is_active'])",
        "cache.delete(key)",
        "digest.update(chunk)",
        "ticket_update(ticket=ticket, priority='alta')",
        "SQL = 'SELECT id FROM tickets_ticket WHERE external_id = %s'",
        "SQL = model_sql('SELECT {t.id} FROM {t} WHERE {t.external_id} = %s', t=Ticket)",
        "SQL = model_sql('UPDATE {s} SET {s.last_number} = 1 FROM {t}', s=TicketSequence, t=Ticket)",
    ],
)
def test_the_scan_leaves_reads_and_other_models_alone(snippet):
    assert writes_in(snippet) == []


ADMIN_WRITES = {
    "save_model": "has_change_permission",
    "delete_model": "has_delete_permission",
    "delete_queryset": "has_delete_permission",
}


@pytest.mark.parametrize("model", [Ticket, Reply, Contact, TicketStatus, Attachment, Agent])
def test_every_admin_of_a_partner_visible_model_writes_through_services_or_not_at_all(model, rf, admin_user):
    model_admin = admin.site._registry.get(model)
    if model_admin is None:
        return  # no admin page, no door
    request = rf.get("/admin/")
    request.user = admin_user
    for hook, permission in ADMIN_WRITES.items():
        overridden = getattr(type(model_admin), hook) is not getattr(ModelAdmin, hook)
        allowed = getattr(model_admin, permission)(request)
        assert overridden or not allowed, f"{type(model_admin).__name__}.{hook} would save the model itself"
    if model_admin.inlines:
        assert type(model_admin).save_formset is not ModelAdmin.save_formset, type(model_admin).__name__
