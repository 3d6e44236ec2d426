"""Where attachment files live: the "attachments" storage of settings.STORAGES (files under
DATA_DIR/attachments, or an S3-compatible bucket through django-storages).

Keys are random and carry the hour they were written (`YYYY/MM/DD/HH/<random>`), never the file's
name: a link cannot be guessed, and the orphan sweep lists only the recent hours' folders.
"""

import logging
import secrets
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.core.files.storage import FileSystemStorage, Storage, storages
from django.db import transaction
from django.utils import timezone

logger = logging.getLogger(__name__)

ALIAS = "attachments"
_HOUR_FORMAT = "%Y/%m/%d/%H"


def attachment_storage() -> Storage:
    """Looked up on every use, so a settings change (tests, S3) takes effect without a restart of the model."""
    return storages[ALIAS]


def attachment_storage_location() -> Path | None:
    """The directory files are written to, when they are written to this machine's disk."""
    storage = attachment_storage()
    return Path(storage.location) if isinstance(storage, FileSystemStorage) else None


def new_key(now: datetime | None = None) -> str:
    return f"{hour_folder(now or timezone.now())}/{secrets.token_urlsafe(24)}"


def hour_folder(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(_HOUR_FORMAT)


def recent_hour_folders(now: datetime, *, older_than: timedelta, within: timedelta) -> list[str]:
    """The folders of whole hours that ended more than `older_than` ago and began less than `within` ago."""
    last = (now - older_than).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    first = now - within
    folders = []
    hour = last
    while hour >= first.replace(minute=0, second=0, microsecond=0):
        folders.append(hour_folder(hour))
        hour -= timedelta(hours=1)
    return folders


def file_delete(key: str) -> None:
    """Deletes one stored file; a file already gone is fine, a storage error is logged (the sweep retries)."""
    try:
        attachment_storage().delete(key)
    except Exception:
        logger.warning("could not delete attachment file", extra={"key": key}, exc_info=True)


def files_delete_after_commit(keys: list[str]) -> None:
    """The rows are deleted in this transaction: their files go once it commits (a rollback keeps both)."""
    if keys:
        transaction.on_commit(lambda: [file_delete(key) for key in keys])
