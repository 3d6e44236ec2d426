"""Ids from URLs and bodies: a malformed id is simply one that matches nothing."""

import uuid


def parse_uuid(value) -> uuid.UUID | None:
    """The UUID `value` spells, or None; callers answer None with their own 404."""
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        return None
