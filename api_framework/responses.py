from rest_framework.response import Response


class EnvelopeResponse(Response):
    """A success response: the renderer puts `data` and `message` into the envelope."""

    def __init__(self, data=None, *, message: str, status: int = 200, headers=None):
        super().__init__(data, status=status, headers=headers)
        self.message = message
