"""Named rows: what `values_list(*columns, named=True)` reads, also made from objects in hand and from
the positional rows of a UNION, so that code reads every value by its column's name, never by its place.
"""

from collections import namedtuple
from functools import cache


@cache
def row_type(columns: tuple[str, ...]) -> type:
    """One tuple type per set of columns, its fields named as the columns (`status__name`)."""
    return namedtuple("Row", columns)


def row_of(obj, columns: tuple[str, ...]) -> tuple:
    """The row `values_list(*columns, named=True)` reads for `obj`, made from the object and its related
    objects instead (after a write, nothing is read again). A relation that is None gives None, as the
    LEFT JOIN does."""
    return row_type(columns)._make(_value(obj, column) for column in columns)


def _value(obj, column: str):
    for name in column.split("__"):
        if obj is None:
            return None
        obj = getattr(obj, name)
    return obj
