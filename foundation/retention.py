"""How long what partners sync from is kept: events (integrations) and deleted tickets' tombstones (tickets),
both EVENT_RETENTION_DAYS, so the event feed and the change list agree on when a partner must resync."""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

# A row a feed listed stays usable to continue from for at least this long: the feeds list rows newer
# than the retention, refuse (410) and purge only those older than it by this much. Without it, an event
# listed a moment before it expired would be a 410 on the next call, and a client restarting from the
# feed's start could be sent back to it again and again.
RETENTION_GRACE = timedelta(hours=1)


def retention() -> timedelta:
    return timedelta(days=settings.EVENT_RETENTION_DAYS)


def retention_cutoff(now=None):
    """Where the feeds start: rows created before it are no longer listed."""
    return (now or timezone.now()) - retention()


def purge_cutoff(now=None):
    """Rows created before it are purged, and refused as a place to continue from (410)."""
    return retention_cutoff(now) - RETENTION_GRACE
