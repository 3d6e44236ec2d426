"""The one paginator: {data, total, por_pagina, pagina_atual, ultima_pagina}."""

import math
from dataclasses import dataclass
from typing import Any

from rest_framework import serializers


@dataclass(frozen=True)
class Page:
    items: list[Any]
    total: int
    per_page: int
    number: int

    @property
    def last_page(self) -> int:
        return max(1, math.ceil(self.total / self.per_page))


def paginate(queryset, *, page: int, per_page: int) -> Page:
    """Two queries: a count and the slice. A page past the end is simply empty."""
    total = queryset.count()
    offset = (page - 1) * per_page
    items = list(queryset[offset : offset + per_page]) if offset < total else []
    return Page(items=items, total=total, per_page=per_page, number=page)


def page_payload(page: Page, serializer_class, **serializer_kwargs) -> dict:
    return {
        "data": serializer_class(page.items, many=True, **serializer_kwargs).data,
        "total": page.total,
        "por_pagina": page.per_page,
        "pagina_atual": page.number,
        "ultima_pagina": page.last_page,
    }


class PageQuery(serializers.Serializer):
    """`page` from 1; a fixed page size unless a subclass adds `por_pagina`."""

    page = serializers.IntegerField(required=False, default=1, min_value=1, max_value=1_000_000)
