"""Contacts, statuses, tickets and the reply thread."""

import uuid

from django.db import models
from django.db.models import Q, Value
from django.db.models.functions import NullIf, Replace
from django.utils import timezone

from foundation.feeds import ChangeSequenceDefault, ChangeTransaction, WrittenOnce, change_fields
from helpdesk.models import Agent, Organization

# What a phone number may be written with that does not change it: "+55 (11) 9999-0000" is "+551199990000".
PHONE_SEPARATORS = (" ", "-", ".", "(", ")")


def _without(characters, expression):
    for character in characters:
        expression = Replace(expression, Value(character), Value(""))
    return expression


# The longest e-mail any door takes (RFC 5321's path limit, the API's maxLength). E-mails are stored
# lower-cased, and lower() turns İ into two characters (i and a combining dot): the column holds twice as
# many, so every address a door takes fits once lowered.
EMAIL_MAX_LENGTH = 254


def phone_normalize(value: str) -> str:
    """A phone as Contact.phone_normalized holds it (without PHONE_SEPARATORS), to compare with it."""
    for character in PHONE_SEPARATORS:
        value = value.replace(character, "")
    return value


class Contact(models.Model):
    """A requester (solicitante); deduplicated by the partner's external_id."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.PROTECT, related_name="contacts"
    )
    name = models.CharField("nome", max_length=255)
    email = models.EmailField("e-mail", max_length=2 * EMAIL_MAX_LENGTH, blank=True)
    phone = models.CharField("telefone", max_length=32, blank=True)
    # NULL, not "": the unique constraint applies only when the partner gives one.
    external_id = models.CharField("ID externo", max_length=255, null=True, blank=True)  # noqa: DJ001
    created_at = models.DateTimeField("criado em", auto_now_add=True)
    updated_at = models.DateTimeField("atualizado em", auto_now=True)
    # Set once by contact_anonymize (a data-subject request): the person's data is gone, for good.
    anonymized_at = models.DateTimeField("anonimizado em", null=True, blank=True, editable=False)
    # What the partner API's `telefone` filter compares: computed by the database on
    # every write, whatever writes the row (a service, a raw upsert, a bulk load); NULL without a phone.
    phone_normalized = models.GeneratedField(
        expression=NullIf(_without(PHONE_SEPARATORS, models.F("phone")), Value("")),
        output_field=models.CharField(max_length=32, null=True),
        db_persist=True,
        verbose_name="telefone normalizado",
    )

    # What an anonymised contact shows (docs/decisions.md, "Data-subject requests").
    ANONYMOUS_NAME = "Contato anonimizado"

    class Meta:
        verbose_name = "contato"
        verbose_name_plural = "contatos"
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "external_id"],
                condition=Q(external_id__isnull=False),
                name="contact_org_external_id_unique",
            )
        ]
        indexes = [
            models.Index(fields=["organization", "email"], name="contact_org_email"),
            # The partner API's contact list (newest first) and its `telefone` filter.
            models.Index(fields=["organization", "-created_at", "-id"], name="contact_org_newest"),
            models.Index(fields=["organization", "phone_normalized"], name="contact_org_phone"),
        ]

    def __str__(self) -> str:
        return self.name


class StatusCategory(models.TextChoices):
    OPEN = "aberto", "Aberto"
    IN_PROGRESS = "em_andamento", "Em andamento"
    WAITING = "aguardando", "Aguardando cliente"
    RESOLVED = "resolvido", "Resolvido"
    CLOSED = "fechado", "Fechado"


class TicketStatus(models.Model):
    """A named status of one organization, in one of the fixed categories."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.CASCADE, related_name="ticket_statuses"
    )
    name = models.CharField("nome", max_length=60)
    category = models.CharField("categoria", max_length=20, choices=StatusCategory.choices)
    color = models.CharField("cor", max_length=7, default="#6B7280")
    position = models.PositiveSmallIntegerField("ordem", default=0)

    class Meta:
        verbose_name = "status de ticket"
        verbose_name_plural = "status de ticket"
        ordering = ["position", "name"]
        constraints = [models.UniqueConstraint(fields=["organization", "name"], name="status_org_name_unique")]
        indexes = [models.Index(fields=["organization", "category", "position"], name="status_org_category")]

    def __str__(self) -> str:
        return self.name


class Priority(models.TextChoices):
    LOW = "baixa", "Baixa"
    MEDIUM = "media", "Média"
    HIGH = "alta", "Alta"
    URGENT = "urgente", "Urgente"


class Channel(models.TextChoices):
    API = "api", "API"
    PANEL = "painel", "Painel"


class TicketSequence(models.Model):
    """Last ticket number per organization; its row lock serialises numbering.

    `numbered_in_order` holds while the numbers follow creation (a higher number is never created
    earlier): the list's deep pages then start at a number (tickets.selectors.ticket_page). The database's triggers
    clear it (tickets.migrations.0007).
    """

    organization = models.OneToOneField(Organization, on_delete=models.CASCADE, primary_key=True, related_name="+")
    last_number = models.PositiveIntegerField(default=0)
    numbered_in_order = models.BooleanField(default=True)
    # When beat last recounted the organization's tickets (tickets.counts): the oldest go first.
    counts_checked_at = models.DateTimeField(null=True, blank=True, db_index=True)

    def __str__(self) -> str:
        return f"{self.organization_id}: {self.last_number}"


class Ticket(models.Model):
    """A partner's ticket. updated_at (atualizado_em) moves only with a change the partner can see,
    and the ticket's place in the change list (change_tx, change_seq) moves with it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.PROTECT, related_name="tickets"
    )
    number = models.PositiveIntegerField("número")
    subject = models.CharField("assunto", max_length=255)
    description = models.TextField("descrição")
    priority = models.CharField("prioridade", max_length=10, choices=Priority.choices, default=Priority.MEDIUM)
    channel = models.CharField("canal de origem", max_length=20, choices=Channel.choices, default=Channel.API)
    source_system = models.CharField("sistema de origem", max_length=20, choices=Channel.choices, default=Channel.API)
    status = models.ForeignKey(TicketStatus, verbose_name="status", on_delete=models.PROTECT, related_name="tickets")
    requester = models.ForeignKey(Contact, verbose_name="solicitante", on_delete=models.PROTECT, related_name="tickets")
    assignee = models.ForeignKey(
        Agent, verbose_name="atendente", on_delete=models.SET_NULL, null=True, blank=True, related_name="tickets"
    )
    # NULL, not "": the unique constraint applies only when the partner gives one.
    external_id = models.CharField("ID externo", max_length=255, null=True, blank=True)  # noqa: DJ001
    created_at = models.DateTimeField("criado em", auto_now_add=True, db_index=False)
    updated_at = models.DateTimeField("atualizado em", auto_now=True)
    resolved_at = models.DateTimeField("resolvido em", null=True, blank=True)
    # The organization's custom fields (CustomField) of this ticket, `chave -> valor` as the API writes them
    # (tickets.fields.values): what the `campos` block shows, filtered by the current definitions. Written
    # only by tickets.fields.services, with the TicketFieldValue rows the list's filters read.
    custom_fields = models.JSONField(
        "campos personalizados", default=dict, blank=True, db_default=Value({}, output_field=models.JSONField())
    )
    # Labels of the partner and of agents: normalised, unique and sorted by tickets.tags (at most MAX_TAGS); one
    # row to lock, read with the ticket. On PostgreSQL a GIN index (jsonb_path_ops) answers `?tag=`.
    tags = models.JSONField("tags", default=list, blank=True, db_default=Value([], output_field=models.JSONField()))
    # The SLA clock (sla.clock, as JSON; null for a ticket opened before clocks were kept, until its next change)
    # and what lists filter and sort by, written with it by tickets.service_levels only: the earliest deadline
    # and 80% instant of the targets still open, and whether one was breached. `sla_version`: the calendar and
    # policies it was targeted with (sla.selectors.ServiceLevels.version).
    sla_clock = models.JSONField("SLA", null=True, blank=True, editable=False)
    sla_version = models.CharField(max_length=80, blank=True, default="", db_default="", editable=False)
    sla_due_at = models.DateTimeField("próximo prazo", null=True, blank=True, editable=False)
    sla_risk_at = models.DateTimeField("em risco a partir de", null=True, blank=True, editable=False)
    sla_breached = models.BooleanField("SLA violado", default=False, db_default=False, editable=False)
    # When the beat has an `em_risco` or `violado` to announce for this ticket (sla.clock.SlaClock.next_announcement).
    sla_event_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Metrics (`incluir=metricas`), kept by the services that move them, under the ticket's row lock: the first
    # public agent reply, business minutes from creation to it and to the (last) resolution, how many times the
    # ticket left `resolvido`/`fechado`, and its public replies counted by side (internal notes are not replies).
    # Minutes and reopenings before clocks were kept are not known (null, 0); the rest was counted then.
    first_response_at = models.DateTimeField("primeira resposta em", null=True, blank=True, editable=False)
    first_response_minutes = models.PositiveIntegerField(null=True, blank=True, editable=False)
    resolution_minutes = models.PositiveIntegerField(null=True, blank=True, editable=False)
    reopen_count = models.PositiveIntegerField("reaberturas", default=0, db_default=0, editable=False)
    agent_reply_count = models.PositiveIntegerField(default=0, db_default=0, editable=False)
    customer_reply_count = models.PositiveIntegerField(default=0, db_default=0, editable=False)
    # Satisfaction (issue 23): how many times the ticket entered `resolvido` (each a rating cycle), the agent who
    # resolved it last (the one rated; the assignee when the customer or the system resolved it), and the rating
    # of the last cycle (`incluir=avaliacao`; cleared by the next resolution). Kept by tickets.services.
    resolution_count = models.PositiveIntegerField(default=0, db_default=0, editable=False)
    resolved_by = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False, db_index=False
    )
    current_rating = models.ForeignKey(
        "TicketRating",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
        db_index=False,  # read from the ticket only (a join by the rating's key)
    )
    # The ticket's place in GET /api/v1/tickets/alteracoes (foundation.feeds), written by every save
    # that writes updated_at.
    change_tx = models.BigIntegerField(editable=False, db_default=ChangeTransaction())
    change_seq = models.BigIntegerField(editable=False, db_default=ChangeSequenceDefault())
    # The ticket this one was merged into (tickets.merging): set once, with the move of its thread there; always a
    # ticket that is not merged itself (a later merge of that ticket points its sources to the new target).
    merged_into = models.ForeignKey(
        "self",
        verbose_name="mesclado em",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="merged_sources",
        editable=False,
    )

    class Meta:
        verbose_name = "ticket"
        verbose_name_plural = "tickets"
        ordering = ["-created_at", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "number"], name="ticket_org_number_unique"),
            # The change list's order, and the proof that no two changes share a place in it.
            models.UniqueConstraint(
                fields=["organization", "change_tx", "change_seq"], name="ticket_org_change_position"
            ),
            models.UniqueConstraint(
                fields=["organization", "external_id"],
                condition=Q(external_id__isnull=False),
                name="ticket_org_external_id_unique",
            ),
        ]
        indexes = [
            models.Index(fields=["organization", "-created_at", "-number"], name="ticket_org_newest"),
            models.Index(fields=["organization", "priority", "-created_at"], name="ticket_org_priority"),
            models.Index(fields=["organization", "status", "-created_at"], name="ticket_org_status"),
            models.Index(fields=["organization", "assignee", "-created_at"], name="ticket_org_assignee"),
            # A requester's tickets (solicitante_external_id, solicitante_email, a contact's list), newest first.
            models.Index(fields=["organization", "requester", "-created_at", "-number"], name="ticket_org_requester"),
            # Where a change list asked from a timestamp starts, atualizado_desde, and the orders by atualizado_em.
            models.Index(fields=["organization", "updated_at", "number"], name="ticket_org_updated_number"),
            # `sla=violado` and `sla=em_risco` (tickets.service_levels), the admin's order by the next deadline.
            models.Index(
                fields=["organization", "sla_due_at"], condition=Q(sla_due_at__isnull=False), name="ticket_org_sla_due"
            ),
            models.Index(
                fields=["organization", "sla_risk_at"],
                condition=Q(sla_risk_at__isnull=False),
                name="ticket_org_sla_risk",
            ),
            models.Index(fields=["organization"], condition=Q(sla_breached=True), name="ticket_org_sla_breached"),
            # The satisfaction report: an agent's resolutions of a period (and an agent's deletion, SET_NULL).
            models.Index(fields=["organization", "resolved_by", "resolved_at"], name="ticket_org_resolver"),
            # The beat's announcements, every organization's, the earliest first.
            models.Index(fields=["sla_event_at"], condition=Q(sla_event_at__isnull=False), name="ticket_sla_event"),
        ]

    def __str__(self) -> str:
        return f"#{self.number} {self.subject}"

    def save(self, *args, update_fields=None, **kwargs):
        # A save that writes updated_at is a change the partner can see: the ticket takes a new
        # place in the change list in the same statement. Services leave updated_at out of a
        # save that changes nothing the partner sees (an internal note).
        if update_fields is None or "updated_at" in update_fields:
            for name, value in change_fields(Ticket, self.organization_id).items():
                setattr(self, name, value)
            if update_fields is not None:
                update_fields = {*update_fields, "change_tx", "change_seq"}
        super().save(*args, update_fields=update_fields, **kwargs)

    @staticmethod
    def change_feed_models():
        """The change list holds tickets and the tombstones of deleted ones, in one order."""
        return [Ticket, TicketTombstone]


class TicketTombstone(WrittenOnce):
    """What stays of a deleted ticket, so every copy deletes it too: the change list answers it in
    `excluidos` at its place in the list's order. Kept EVENT_RETENTION_DAYS, as events are."""

    id = models.UUIDField("ticket", primary_key=True, editable=False)  # the deleted ticket's id
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.CASCADE, related_name="+"
    )
    number = models.PositiveIntegerField("número")
    external_id = models.CharField("ID externo", max_length=255, null=True, blank=True)  # noqa: DJ001
    deleted_at = models.DateTimeField("excluído em")
    # change_tx, change_seq: its place in GET /api/v1/tickets/alteracoes, among the tickets' (foundation.feeds).

    class Meta:
        verbose_name = "ticket excluído"
        verbose_name_plural = "tickets excluídos"
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "change_tx", "change_seq"], name="tombstone_org_change_position"
            )
        ]
        indexes = [
            # Where a change list asked from a timestamp starts, and what the retention purges.
            models.Index(fields=["organization", "deleted_at"], name="tombstone_org_deleted"),
            models.Index(fields=["deleted_at"], name="tombstone_deleted"),
        ]

    def __str__(self) -> str:
        return f"#{self.number} ({self.id})"

    @staticmethod
    def change_feed_models():
        return Ticket.change_feed_models()


class ReplyOrigin(models.TextChoices):
    AGENT = "agente", "Atendente"
    CUSTOMER_API = "cliente_api", "Cliente (API)"


class Reply(models.Model):
    """A message in a ticket's thread: a public reply or an internal note (is_internal)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    ticket = models.ForeignKey(Ticket, verbose_name="ticket", on_delete=models.CASCADE, related_name="replies")
    body = models.TextField("mensagem")
    is_internal = models.BooleanField("nota interna", default=False)
    origin = models.CharField("origem", max_length=20, choices=ReplyOrigin.choices)
    author_agent = models.ForeignKey(
        Agent, verbose_name="atendente", on_delete=models.PROTECT, null=True, blank=True, related_name="replies"
    )
    author_contact = models.ForeignKey(
        Contact, verbose_name="contato", on_delete=models.PROTECT, null=True, blank=True, related_name="replies"
    )
    edited = models.BooleanField("editado", default=False)
    # The number of the ticket this message was written in, when a merge moved it here (tickets.merging).
    merged_from_number = models.PositiveIntegerField("do ticket mesclado", null=True, blank=True, editable=False)
    # Set by the services to the instant they touch the ticket, so a reply is never newer
    # than its ticket's atualizado_em (webhook payloads are built inside the transaction).
    created_at = models.DateTimeField("criado em", default=timezone.now, editable=False)
    updated_at = models.DateTimeField("atualizado em", auto_now=True)

    class Meta:
        verbose_name = "resposta"
        verbose_name_plural = "respostas"
        ordering = ["created_at"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(origin=ReplyOrigin.AGENT, author_contact__isnull=True))
                | Q(origin=ReplyOrigin.CUSTOMER_API, is_internal=False, author_agent__isnull=True),
                name="reply_author_matches_origin",
            )
        ]
        indexes = [models.Index(fields=["ticket", "is_internal", "created_at"], name="reply_ticket_thread")]

    def __str__(self) -> str:
        kind = "Nota interna" if self.is_internal else "Resposta"
        return f"{kind} de {self.created_at:%d/%m/%Y %H:%M}" if self.created_at else kind


class AttachmentSender(models.TextChoices):
    PARTNER = "parceiro", "Parceiro (API)"
    AGENT = "atendente", "Atendente"


class Attachment(models.Model):
    """A file sent with a ticket: by the partner (alone or with one of its replies) or by an agent with a
    public reply or an internal note. Public unless its reply is an internal note (never shown to a partner).

    `storage_key` is the file's random name in the "attachments" storage (tickets.attachments.storage);
    the name, the type sniffed from the content and the size are what the API shows.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.PROTECT, related_name="attachments"
    )
    ticket = models.ForeignKey(Ticket, verbose_name="ticket", on_delete=models.CASCADE, related_name="attachments")
    reply = models.ForeignKey(
        Reply, verbose_name="resposta", on_delete=models.CASCADE, null=True, blank=True, related_name="attachments"
    )
    storage_key = models.CharField("arquivo armazenado", max_length=255, unique=True, editable=False)
    name = models.CharField("nome", max_length=255)
    content_type = models.CharField("tipo", max_length=100)
    size = models.PositiveBigIntegerField("tamanho (bytes)")
    sha256 = models.CharField("SHA-256", max_length=64, editable=False)
    sender = models.CharField("enviado por", max_length=20, choices=AttachmentSender.choices)
    author_agent = models.ForeignKey(
        Agent, verbose_name="atendente", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField("criado em", default=timezone.now, editable=False)

    class Meta:
        verbose_name = "anexo"
        verbose_name_plural = "anexos"
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["ticket", "created_at", "id"], name="attachment_ticket_oldest")]

    def __str__(self) -> str:
        return self.name


class AttachmentUsage(models.Model):
    """The bytes an organization's attachments hold, against ANEXOS_QUOTA_BYTES: added under this row's
    lock in the transaction that records a file, taken away in the one that deletes it
    (tickets.attachments.services, tickets.lifecycle)."""

    organization = models.OneToOneField(
        Organization, verbose_name="organização", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    bytes_used = models.BigIntegerField("bytes em uso", default=0)

    class Meta:
        verbose_name = "uso de anexos"
        verbose_name_plural = "uso de anexos"

    def __str__(self) -> str:
        return str(self.organization_id)


class TicketCount(models.Model):
    """How many tickets an organization has, per priority and status: the list's exact `total`
    without reading the tickets. Kept by the database's triggers on tickets_ticket in the transaction
    of every insert, delete and move, whatever wrote it (tickets.migrations.0007); beat recounts and
    corrects any drift (tickets.counts)."""

    # No foreign key constraints: the triggers write these rows while tickets are deleted, also when a whole
    # database is emptied table by table (a test's flush); a row of a gone organization is never read.
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    priority = models.CharField(max_length=10, choices=Priority.choices)
    status = models.ForeignKey(TicketStatus, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    tickets = models.IntegerField(default=0)

    class Meta:
        verbose_name = "contagem de tickets"
        verbose_name_plural = "contagens de tickets"
        constraints = [
            models.UniqueConstraint(fields=["organization", "priority", "status"], name="ticket_count_unique")
        ]

    def __str__(self) -> str:
        return f"{self.organization_id} {self.priority} {self.status_id}: {self.tickets}"


class TicketNumberGap(models.Model):
    """A number no ticket has any more (a deleted ticket's), written by the delete trigger: with the
    gaps, the n-th newest ticket of a list numbered in order is found without walking the list."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    number = models.PositiveIntegerField()

    class Meta:
        verbose_name = "número sem ticket"
        verbose_name_plural = "números sem ticket"
        constraints = [models.UniqueConstraint(fields=["organization", "number"], name="ticket_number_gap_unique")]

    def __str__(self) -> str:
        return f"{self.organization_id} #{self.number}"


class CustomFieldType(models.TextChoices):
    TEXT = "texto", "Texto"
    NUMBER = "numero", "Número"
    DATE = "data", "Data"
    BOOLEAN = "booleano", "Sim ou não"
    CHOICE = "lista", "Lista (uma opção)"
    MULTIPLE_CHOICE = "multilista", "Lista (várias opções)"


class CustomField(models.Model):
    """A custom field an organization defines for its tickets (an order id, a plan, a region): its `key`
    (chave) is how the API names it, immutable; partners see and write it as `visible_to_partner` and
    `editable_by_partner` allow. Written only by tickets.fields.services (docs/decisions.md, "Custom fields")."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.CASCADE, related_name="custom_fields"
    )
    key = models.CharField("chave", max_length=40)
    name = models.CharField("nome", max_length=100)
    type = models.CharField("tipo", max_length=12, choices=CustomFieldType.choices)
    options = models.JSONField("opções", default=list, blank=True)
    visible_to_partner = models.BooleanField("visível ao parceiro", default=True)
    editable_by_partner = models.BooleanField("editável pelo parceiro", default=True)
    is_active = models.BooleanField("ativo", default=True)
    created_at = models.DateTimeField("criado em", auto_now_add=True)
    updated_at = models.DateTimeField("atualizado em", auto_now=True)

    class Meta:
        verbose_name = "campo personalizado"
        verbose_name_plural = "campos personalizados"
        ordering = ["created_at", "key"]
        constraints = [models.UniqueConstraint(fields=["organization", "key"], name="custom_field_org_key_unique")]

    def __str__(self) -> str:
        return f"{self.name} ({self.key})"


class TicketFieldValue(models.Model):
    """A ticket's value of a custom field, typed, for the list's filters (`campo.<chave>`): one row per value,
    one per option of a `multilista`. The ticket's `custom_fields` is what is shown; these rows mirror it,
    written in the same transaction by tickets.fields.services, and their btree indexes answer exact matches,
    `multilista` membership and the ranges of `numero` and `data` on both databases."""

    id = models.BigAutoField(primary_key=True)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+", db_index=False)
    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="+")
    field = models.ForeignKey(CustomField, on_delete=models.CASCADE, related_name="+", db_index=False)
    # Text, an option, "true"/"false": its first 255 characters (a longer text is checked on the ticket too).
    text = models.CharField(max_length=255, null=True)  # noqa: DJ001
    number = models.DecimalField(max_digits=24, decimal_places=6, null=True)
    date = models.DateField(null=True)

    class Meta:
        verbose_name = "valor de campo personalizado"
        verbose_name_plural = "valores de campos personalizados"
        indexes = [
            models.Index(fields=["field", "text", "ticket"], name="field_value_text"),
            models.Index(fields=["field", "number", "ticket"], name="field_value_number"),
            models.Index(fields=["field", "date", "ticket"], name="field_value_date"),
        ]

    def __str__(self) -> str:
        return f"{self.field_id} {self.ticket_id}"


class TicketRating(models.Model):
    """The customer's satisfaction with a resolution (CSAT), collected by the partner
    (POST /api/v1/tickets/{id}/avaliacao): one per resolution cycle (`cycle`, the ticket's resolution_count when it
    was given), changeable for 7 days, tied to the agent who resolved the ticket. Written by tickets.services."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    ticket = models.ForeignKey(Ticket, verbose_name="ticket", on_delete=models.CASCADE, related_name="ratings")
    cycle = models.PositiveIntegerField("ciclo de resolução")
    score = models.PositiveSmallIntegerField("nota")
    comment = models.TextField("comentário", blank=True)
    agent = models.ForeignKey(
        Agent, verbose_name="atendente", null=True, blank=True, on_delete=models.SET_NULL, related_name="ratings"
    )
    resolved_at = models.DateTimeField("resolvido em", null=True, blank=True)
    created_at = models.DateTimeField("criado em", default=timezone.now, editable=False)
    updated_at = models.DateTimeField("atualizado em", auto_now=True)

    class Meta:
        verbose_name = "avaliação"
        verbose_name_plural = "avaliações"
        constraints = [models.UniqueConstraint(fields=["ticket", "cycle"], name="rating_ticket_cycle_unique")]
        indexes = [
            # The report: an organization's ratings of a period, by agent.
            models.Index(fields=["organization", "created_at"], name="rating_org_created"),
        ]

    def __str__(self) -> str:
        return f"Nota {self.score} (ticket {self.ticket_id})"
