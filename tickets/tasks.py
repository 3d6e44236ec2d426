"""Celery tasks of tickets."""

from celery import shared_task

from tickets.attachments.services import attachment_files_sweep
from tickets.counts import ticket_counts_recount
from tickets.service_levels import sla_announcements_run, sla_retargets_run
from tickets.services import tombstones_purge_expired


@shared_task(name="tickets.sweep_attachment_files", ignore_result=True)
def sweep_attachment_files() -> int:
    """Stored attachment files no row names (a rolled-back transaction's, a killed process's): deleted."""
    return attachment_files_sweep()


@shared_task(name="tickets.purge_expired_tombstones", ignore_result=True)
def purge_expired_tombstones() -> int:
    """Deleted tickets' tombstones older than the retention (the change list's cursors expire with them)."""
    return tombstones_purge_expired()


@shared_task(name="tickets.recount_ticket_counts", ignore_result=True)
def recount_ticket_counts() -> int:
    """The organizations' ticket counters checked against their tickets, a batch per run; drift corrected."""
    return ticket_counts_recount().organizations


@shared_task(name="tickets.retarget_sla_deadlines", ignore_result=True)
def retarget_sla_deadlines() -> int:
    """Open tickets' SLA deadlines moved to an organization's new calendar or policies (sla.models.SlaRetarget)."""
    return sla_retargets_run()


@shared_task(name="tickets.announce_sla_deadlines", ignore_result=True)
def announce_sla_deadlines() -> int:
    """`ticket.sla_em_risco` and `ticket.sla_violado` when their moment came, each once per target and cycle."""
    return sla_announcements_run()
