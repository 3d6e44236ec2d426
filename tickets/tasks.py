"""Celery tasks of tickets."""

from celery import shared_task

from tickets.attachments.services import attachment_files_sweep
from tickets.services import tombstones_purge_expired


@shared_task(name="tickets.sweep_attachment_files", ignore_result=True)
def sweep_attachment_files() -> int:
    """Stored attachment files no row names (a rolled-back transaction's, a killed process's): deleted."""
    return attachment_files_sweep()


@shared_task(name="tickets.purge_expired_tombstones", ignore_result=True)
def purge_expired_tombstones() -> int:
    """Deleted tickets' tombstones older than the retention (the change list's cursors expire with them)."""
    return tombstones_purge_expired()
