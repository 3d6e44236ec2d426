"""The API's routes as the contract writes them (`/api/v1/tickets/{id}`), read from the URL resolver."""

import re

from django.urls import URLPattern, URLResolver, get_resolver, resolve

_REGEX_GROUP = re.compile(r"\(\?P<(\w+)>[^)]*\)")
_CONVERTER = re.compile(r"<(?:\w+:)?(\w+)>")


def _template(route: str) -> str:
    route = _CONVERTER.sub(r"{\1}", _REGEX_GROUP.sub(r"{\1}", route))
    return "/" + route.replace("^", "").replace("$", "")


def _methods(pattern: URLPattern) -> tuple[str, ...]:
    callback = pattern.callback
    actions = getattr(callback, "actions", None)  # a viewset route: its method -> action map
    if actions is not None:
        methods = set(actions)
    else:
        view_class = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
        methods = {name for name in ("get", "post", "put", "patch", "delete") if hasattr(view_class, name)}
    return tuple(sorted(method.upper() for method in methods - {"head", "options"}))


def api_routes(patterns=None, prefix: str = "") -> dict[str, tuple[str, ...]]:
    """Every route under /api/ with the methods it answers; the catch-all 404 is not a route."""
    routes: dict[str, tuple[str, ...]] = {}
    for pattern in patterns if patterns is not None else get_resolver().url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            routes |= api_routes(pattern.url_patterns, route)
        elif route.startswith("api/"):
            routes[_template(route)] = _methods(pattern)
    return routes


def view_class_of(route: str) -> type:
    """The view class that answers a route of api_routes() (a viewset's class for router routes)."""
    match = resolve(re.sub(r"\{\w+\}", "x", route))
    assert _template(match.route) == route, f"{route} is answered by the route {match.route}"
    return getattr(match.func, "cls", None) or match.func.view_class


def action_of(route: str, method: str) -> str | None:
    """The viewset action that answers `method` on a route of api_routes() (None for a plain view)."""
    match = resolve(re.sub(r"\{\w+\}", "x", route))
    actions = getattr(match.func, "actions", None) or {}
    return actions.get(method.lower())
