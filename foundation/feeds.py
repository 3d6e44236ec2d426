"""Change feeds: where a changed row sits in its organization's feed, which rows a reader may
return without ever skipping one, and the encrypted cursor a client carries between pages.

A row's position is (change_tx, change_seq), written by the very statement that changes it
(ChangeTransaction, NextChange). Readers walk positions in order (`page_after`) and return only
settled rows (`settled`): rows that no transaction still running can be ordered before.

- PostgreSQL: change_tx is the writing transaction's id (`pg_current_xact_id()`) and change_seq a
  value of one shared sequence. Transactions do not commit in id order, so a reader returns only
  rows of transactions older than every transaction still running (`pg_snapshot_xmin` of the
  reader's own snapshot): those transactions are all over, and any transaction still to write
  gets a larger id. Every row below that horizon is final; a reader that stops there never
  passes a place where a row could still appear.
- SQLite has one writer at a time (IMMEDIATE transactions), so write order is commit order:
  change_tx is 0 and change_seq the organization's largest so far plus one, computed inside the
  write, under the write lock. Every committed row is settled.

docs/decisions.md, "Change list and event feed", has the reasoning and its costs.
"""

import base64
import struct
import time
from dataclasses import dataclass
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core import signing
from django.db import connection, models
from django.db.models import BigIntegerField, BooleanField, Expression, F, Func, IntegerField, Q, Value
from django.utils.encoding import force_bytes

from foundation.db import db_value, model_sql

CHANGE_SEQUENCE = "helpdesk_change_seq"  # PostgreSQL only (helpdesk.migrations.0003)
_NO_LIMIT = 9_223_372_036_854_775_807
FEED_ORDER = ("change_tx", "change_seq")


class _VendorSQL(Expression):
    """A bare SQL expression without columns, written for each database."""

    output_field = BigIntegerField()
    allowed_default = True  # usable as a db_default
    postgresql = sqlite = "NULL"

    def as_sql(self, compiler, connection, **extra_context):
        return self.sqlite, []

    def as_postgresql(self, compiler, connection, **extra_context):
        return self.postgresql, []


class ChangeTransaction(_VendorSQL):
    """change_tx of a row written now: the writing transaction's id on PostgreSQL, 0 on SQLite."""

    postgresql = "pg_current_xact_id()::text::bigint"
    sqlite = "0"


class ChangeSequenceDefault(_VendorSQL):
    """change_seq's column default: rows inserted by hand (bulk SQL) still get a position on PostgreSQL."""

    postgresql = f"nextval('{CHANGE_SEQUENCE}')"
    sqlite = "0"


class _Horizon(_VendorSQL):
    # The oldest transaction still running (the reader's own included), as the reader's snapshot
    # sees it: every transaction below it is over. One value per statement.
    postgresql = "(SELECT pg_snapshot_xmin(pg_current_snapshot()))::text::bigint"
    sqlite = str(_NO_LIMIT)


class _OwnTransaction(_VendorSQL):
    # The reader's own transaction when it has written, whose rows it sees: a test runs inside one.
    # NULL for a read of the API, which runs outside any transaction.
    postgresql = "(SELECT pg_current_xact_id_if_assigned())::text::bigint"
    sqlite = "NULL"


class NextChange(Expression):
    """change_seq of a row written now: the next value of the shared sequence on PostgreSQL; on
    SQLite the organization's largest so far plus one, read inside the write (one row per statement).

    A feed may hold rows of several tables (the change list: tickets and the tombstones of deleted
    ones); a model names them all in `change_feed_models()`, and SQLite numbers across them."""

    output_field = BigIntegerField()

    def __init__(self, model, organization_id):
        super().__init__()
        self.model, self.organization_id = model, organization_id

    def as_sql(self, compiler, connection, **extra_context):
        models = self.model.change_feed_models() if hasattr(self.model, "change_feed_models") else [self.model]
        parts, params = [], []
        for model in models:
            # Identifiers from the model, the organization as a parameter.
            parts.append(
                model_sql(
                    "SELECT MAX({t.change_seq}) AS seq FROM {t} WHERE {t.organization} = %s AND {t.change_tx} = 0",
                    t=model,
                )
            )
            params.append(db_value(model, "organization", self.organization_id, connection=connection))
        return f"(SELECT COALESCE(MAX(seq), 0) + 1 FROM ({' UNION ALL '.join(parts)}))", params  # noqa: S608

    def as_postgresql(self, compiler, connection, **extra_context):
        return f"nextval('{CHANGE_SEQUENCE}')", []


def change_fields(model, organization_id) -> dict:
    """The values that give a row written now its new position."""
    return {"change_tx": ChangeTransaction(), "change_seq": NextChange(model, organization_id)}


class WrittenOnce(models.Model):
    """A feed row written once and never changed (an event, a tombstone): its place is set by its INSERT.

    Subclasses declare `organization`; their feed's order is (organization, change_tx, change_seq)."""

    change_tx = models.BigIntegerField(editable=False, db_default=ChangeTransaction())
    change_seq = models.BigIntegerField(editable=False, db_default=ChangeSequenceDefault())

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        # Private Django API: test_events_are_recorded_and_listed_in_order_without_any_webhook
        if self._state.adding:
            for name, value in change_fields(type(self), self.organization_id).items():
                setattr(self, name, value)
        super().save(*args, **kwargs)


@dataclass(frozen=True, order=True)
class Position:
    """A place in a feed, between rows: a page answers the rows after it."""

    tx: int
    seq: int

    @classmethod
    def of(cls, row) -> "Position":
        """The position of a row read with `page_after`'s columns (change_tx and change_seq last)."""
        return cls(row[-2], row[-1])

    @property
    def just_before(self) -> "Position":
        """A position from which a page starts with this one's row."""
        return Position(self.tx, self.seq - 1)


START = Position(-1, -1)


class _After(Func):
    # (change_tx, change_seq) > (tx, seq): one range of the (organization, change_tx, change_seq) index.
    output_field = BooleanField()

    def __init__(self, position: Position):
        super().__init__(F("change_tx"), F("change_seq"), Value(position.tx), Value(position.seq))

    def as_sql(self, compiler, connection, **extra_context):
        parts, params = [], []
        for expression in self.source_expressions:
            sql, expression_params = compiler.compile(expression)
            parts.append(sql)
            params.extend(expression_params)
        return f"({parts[0]}, {parts[1]}) > ({parts[2]}, {parts[3]})", params


def settled() -> Q:
    """Rows no transaction still running can be ordered before (always true on SQLite)."""
    return Q(change_tx__lt=_Horizon()) | Q(change_tx=_OwnTransaction())


@dataclass(frozen=True)
class FeedPage:
    rows: list
    next: Position
    has_more: bool


def page_after(queryset, position: Position, *, limit: int, columns: tuple, also: tuple = ()) -> FeedPage:
    """Up to `limit` settled rows after `position`, in feed order, as `columns` rows followed by
    change_tx and change_seq; one statement whatever the limit.

    `also` adds the rows of other tables of the same feed, as (queryset, columns) with as many columns
    (expressions allowed): one UNION ALL in the same statement, so one snapshot and one horizon judge
    every row. Each row then ends with its branch (0 for `queryset`, 1... for `also`) before its position.
    Each branch is a range of its position index: PostgreSQL takes each one's first `limit` + 1 rows
    (ORDER BY and LIMIT per branch), SQLite merges the branches in order by itself.
    """
    branches = [(queryset, columns), *also]
    tagged = bool(also)
    selects = []
    for n, (branch, branch_columns) in enumerate(branches):
        tag = [Value(n, output_field=IntegerField())] if tagged else []
        select = (
            branch.filter(_After(position), settled())
            .order_by(*FEED_ORDER)
            .values_list(*branch_columns, *tag, *FEED_ORDER)
        )
        if tagged and not connection.features.supports_slicing_ordering_in_compound:
            select = select.order_by()
        elif tagged:
            select = select[: limit + 1]
        selects.append(select)
    query = selects[0].union(*selects[1:], all=True).order_by(*FEED_ORDER) if tagged else selects[0]
    rows = list(query[: limit + 1])
    page = rows[:limit]
    return FeedPage(rows=page, next=Position.of(page[-1]) if page else position, has_more=len(rows) > limit)


def feed_end(*, last: Position | None, horizon: int) -> Position:
    """Where a feed ends now: after its last row, and never past a transaction still running."""
    if last is None:
        return START
    return min(last, Position(horizon, -1))


def horizon_expression() -> Expression:
    """The horizon `settled` compares change_tx with, to read it beside other values."""
    return _Horizon()


# --- cursors ------------------------------------------------------------------------------------


class CursorExpired(Exception):
    """A genuine cursor, older than the feed keeps what it must tell (the caller resyncs)."""


# A position as the cursor holds it: two signed 64-bit integers (change_tx, change_seq).
_POSITION = struct.Struct(">qq")


def cursor_dumps(position: Position, *, salt: str) -> str:
    """An opaque cursor: the position encrypted and authenticated (Fernet) with a key derived from
    SECRET_KEY and `salt`, which names the organization. On PostgreSQL a position is a transaction id
    and a value of a sequence every organization shares: readable, it would tell a partner how much
    the whole service writes; encrypted, it tells nothing, and a changed one does not load."""
    token = _fernet(salt).encrypt(_POSITION.pack(position.tx, position.seq))
    return token.decode("ascii").rstrip("=")


def cursor_loads(cursor: str, *, salt: str, max_age=None) -> Position | None:
    """The position a cursor made by cursor_dumps with this salt holds; None for anything else.
    CursorExpired when it is genuine but made more than `max_age` (a timedelta) ago. A cursor signed
    (not encrypted) by the previous release still loads: it tells its holder nothing new, and it
    expires with the retention like any other."""
    token = _canonical_token(cursor)
    if token is None:
        return _signed_cursor_loads(cursor, salt=salt, max_age=max_age)
    fernet = _fernet(salt)
    try:
        made_at = fernet.extract_timestamp(token)
        plain = fernet.decrypt(token)
    except InvalidToken:
        return None
    if max_age is not None and time.time() - made_at > max_age.total_seconds():
        raise CursorExpired()
    if len(plain) != _POSITION.size:
        return None
    return Position(*_POSITION.unpack(plain))


def _canonical_token(cursor: str) -> bytes | None:
    """The Fernet token of a cursor written exactly as cursor_dumps writes it (unpadded base64url), else
    None: base64 decoders forgive trailing characters and unused bits, and one position must have one
    spelling."""
    if not cursor.isascii() or not cursor.startswith(_FERNET_START):
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except ValueError:
        return None
    if base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=") != cursor:
        return None
    return base64.urlsafe_b64encode(raw)


# Every Fernet token starts with its version byte (0x80) and a 64-bit timestamp whose high bytes are zero;
# a signed cursor of the previous release starts with base64 JSON ("Wz...") or "." when compressed.
_FERNET_START = "gAAAAA"


def _fernet(salt: str) -> MultiFernet:
    """The current key first; SECRET_KEY_FALLBACKS still open cursors made before a rotation."""
    return MultiFernet([_fernet_for(secret, salt) for secret in [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]])


@lru_cache(maxsize=1024)
def _fernet_for(secret: str, salt: str) -> Fernet:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=f"foundation.feeds.cursor:{salt}".encode())
    return Fernet(base64.urlsafe_b64encode(key.derive(force_bytes(secret))))


def _signed_cursor_loads(cursor: str, *, salt: str, max_age=None) -> Position | None:
    """A cursor of the previous release: the position in the clear, signed (django.core.signing)."""
    try:
        value = signing.loads(cursor, salt=salt, max_age=max_age)
    except signing.SignatureExpired:
        raise CursorExpired() from None
    except (signing.BadSignature, ValueError, TypeError, UnicodeError):
        return None
    if not (isinstance(value, list) and len(value) == 2 and all(type(part) is int for part in value)):
        return None
    return Position(*value)
