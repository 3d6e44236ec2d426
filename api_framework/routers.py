"""One router per API door: the contract's paths exactly, never a trailing slash."""

from rest_framework.routers import SimpleRouter


class ApiRouter(SimpleRouter):
    def __init__(self):
        super().__init__(trailing_slash=False)
