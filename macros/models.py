"""Macros (respostas prontas): a canned message with the changes that usually go with it."""

import uuid

from django.db import models
from django.db.models.functions import Lower

from helpdesk.models import Agent, Organization
from tickets.models import Priority, TicketStatus


class Assignment(models.TextChoices):
    """What a macro does with the ticket's assignee."""

    KEEP = "manter", "Manter o atendente"
    ME = "eu", "Atribuir a quem aplicar"
    AGENT = "atendente", "Atribuir a um atendente"
    NONE = "nenhum", "Tirar o atendente"


class Macro(models.Model):
    """One organization's canned reply (or note) and the actions applied with it (macros.services)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(
        Organization, verbose_name="organização", on_delete=models.CASCADE, related_name="macros"
    )
    name = models.CharField("nome", max_length=100)
    body = models.TextField(
        "mensagem",
        blank=True,
        default="",
        help_text=(
            "Opcional. Variáveis: {{solicitante.nome}}, {{ticket.numero}}, {{ticket.assunto}}, {{atendente.nome}}."
        ),
    )
    internal = models.BooleanField("nota interna", default=False, help_text="Sem marcar: resposta pública.")
    # A status removed later leaves the macro without a status change (statuses are the admin's to remove).
    status = models.ForeignKey(
        TicketStatus, verbose_name="status", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    priority = models.CharField("prioridade", max_length=10, choices=Priority.choices, blank=True, default="")
    assignment = models.CharField("atendente", max_length=10, choices=Assignment.choices, default=Assignment.KEEP)
    assignee = models.ForeignKey(
        Agent,
        verbose_name="atribuir a",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="Só com “Atribuir a um atendente”.",
    )
    tags_add = models.JSONField("tags a acrescentar", default=list, blank=True)
    tags_remove = models.JSONField("tags a retirar", default=list, blank=True)
    created_at = models.DateTimeField("criada em", auto_now_add=True)
    updated_at = models.DateTimeField("atualizada em", auto_now=True)

    class Meta:
        verbose_name = "macro"
        verbose_name_plural = "macros"
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                "organization",
                Lower("name"),
                name="macro_org_name_unique",
                violation_error_message="Já existe uma macro com este nome.",
            ),
        ]

    def __str__(self) -> str:
        return self.name
