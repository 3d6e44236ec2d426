"""Celery tasks of tickets."""

from celery import shared_task

from tickets.attachments.services import attachment_files_sweep


@shared_task(name="tickets.sweep_attachment_files", ignore_result=True)
def sweep_attachment_files() -> int:
    """Stored attachment files no row names (a rolled-back transaction's, a killed process's): deleted."""
    return attachment_files_sweep()
