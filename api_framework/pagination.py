"""The one paginator: {data, total, por_pagina, pagina_atual, ultima_pagina}."""

import math
from dataclasses import dataclass
from typing import Any

from rest_framework import serializers

PAGE_PARAMETERS = ("page", "por_pagina", "cursor")


@dataclass(frozen=True)
class Page:
    items: list[Any]
    total: int
    per_page: int
    number: int

    @property
    def last_page(self) -> int:
        return max(1, math.ceil(self.total / self.per_page))


def paginate(queryset, *, page: int, per_page: int, columns: tuple[str, ...] | None = None) -> Page:
    """Two queries whatever the page size: a count (on the plain queryset, without the joins
    of `columns`), and the page as named rows of `columns` when given. A page past the end is empty."""
    total = queryset.count()
    offset = (page - 1) * per_page
    rows = queryset.values_list(*columns, named=True) if columns else queryset
    items = list(rows[offset : offset + per_page]) if offset < total else []
    return Page(items=items, total=total, per_page=per_page, number=page)


def page_payload(page: Page, build) -> dict:
    """`build` turns the page's items into their payloads: a serializer class or a function of the list."""
    data = build(page.items, many=True).data if isinstance(build, type) else build(page.items)
    return {
        "data": data,
        "total": page.total,
        "por_pagina": page.per_page,
        "pagina_atual": page.number,
        "ultima_pagina": page.last_page,
    }


class PageQuery(serializers.Serializer):
    """`page` from 1; a fixed page size unless a subclass adds `por_pagina`.

    The other validated parameters are the selector's keyword arguments (`filters`).
    """

    page = serializers.IntegerField(required=False, default=1, min_value=1, max_value=1_000_000)

    @classmethod
    def from_request(cls, request) -> "PageQuery":
        """The validated query string; a bad value is a 422 like a bad body."""
        query = cls(data=request.query_params)
        query.is_valid(raise_exception=True)
        return query

    @property
    def filters(self) -> dict:
        return {name: value for name, value in self.validated_data.items() if name not in PAGE_PARAMETERS}

    def page_of(self, queryset, *, columns: tuple[str, ...] | None = None, per_page: int | None = None) -> Page:
        data = self.validated_data
        return paginate(queryset, page=data["page"], per_page=per_page or data["por_pagina"], columns=columns)
