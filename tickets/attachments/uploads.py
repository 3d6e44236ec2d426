"""The streamed upload: multipart/form-data read in chunks into temporary files, counted and hashed as
the bytes arrive, and refused as soon as a file passes ANEXO_MAX_BYTES. Nothing is read whole into
memory: not the body (the JSON routes' API_MAX_BODY_BYTES does not apply here) and not a file.
"""

import hashlib

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.core.files.uploadedfile import TemporaryUploadedFile, UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, StopFutureHandlers
from django.http import HttpResponse
from rest_framework.exceptions import ParseError
from rest_framework.parsers import MultiPartParser

from foundation.exceptions import BadRequest, PayloadTooLarge, ValidationFailed
from tickets.exceptions import AttachmentTooLarge

FIELD = "arquivo"
# Room for the other fields and the multipart framing of each file, on top of the files themselves.
MULTIPART_OVERHEAD = 64 * 1024


def upload_ceiling(max_files: int) -> int:
    """The largest multipart body a route takes: its files at the limit, plus the framing."""
    return max_files * settings.ANEXO_MAX_BYTES + MULTIPART_OVERHEAD


class StreamedUploadHandler(FileUploadHandler):
    """Each file part to a temporary file, its size counted and its SHA-256 computed while it streams.

    A body announced larger than the route's ceiling is refused before a byte is read; a file that
    passes ANEXO_MAX_BYTES is refused at that chunk (413 on `arquivo`), its temporary file removed.
    """

    def __init__(self, request=None, *, max_files: int):
        super().__init__(request)
        self.max_files = max_files
        self.max_bytes = settings.ANEXO_MAX_BYTES
        self.files_seen = 0
        self.file: TemporaryUploadedFile | None = None

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        if content_length > upload_ceiling(self.max_files):
            raise AttachmentTooLarge(max_bytes=self.max_bytes)

    def new_file(self, field_name, file_name, content_type, content_length, charset=None, content_type_extra=None):
        super().new_file(field_name, file_name, content_type, content_length, charset, content_type_extra)
        self.files_seen += 1
        if self.files_seen > self.max_files:
            many = "um único arquivo" if self.max_files == 1 else f"no máximo {self.max_files} arquivos"
            raise ValidationFailed({FIELD: [f"Envie {many} por requisição."]})
        # Named after the upload only once made: Django gives the temporary file the upload's extension,
        # and a 250-character one is a name the file system refuses (a 500 before this).
        self.file = TemporaryUploadedFile("upload", content_type, 0, charset, content_type_extra)
        self.file.name = file_name
        self.size = 0
        self.digest = hashlib.sha256()
        raise StopFutureHandlers()

    def receive_data_chunk(self, raw_data, start):
        self.size += len(raw_data)
        if self.size > self.max_bytes:
            self.file.close()  # removes the temporary file
            raise AttachmentTooLarge(max_bytes=self.max_bytes)
        self.digest.update(raw_data)
        self.file.write(raw_data)
        return None

    def file_complete(self, file_size):
        self.file.seek(0)
        self.file.size = file_size
        self.file.sha256 = self.digest.hexdigest()
        return self.file

    def upload_interrupted(self):
        if self.file is not None:
            self.file.close()


def use_streamed_uploads(request, *, max_files: int) -> None:
    """Before the body is read: this request's files go through StreamedUploadHandler only."""
    # Private DRF API: test_the_limit_is_counted_while_the_file_streams_not_after
    request._request.upload_handlers = [StreamedUploadHandler(request._request, max_files=max_files)]


class StreamedMultiPartParser(MultiPartParser):
    """DRF's multipart parser (Django's, through the request's upload handlers), with Django's own
    refusals answered in the envelope instead of a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except ParseError:
            raise BadRequest(
                "Multipart inválido.", field="body", detail="O corpo multipart/form-data não pôde ser lido."
            )
        except RequestDataTooBig:
            raise PayloadTooLarge(detail="Os campos de texto do formulário excedem 1 MiB.")
        except SuspiciousOperation:  # too many fields or files (Django's DATA_UPLOAD_MAX_NUMBER_*)
            raise BadRequest("Multipart inválido.", field="body", detail="O formulário tem campos ou arquivos demais.")


def form_text(request, names: tuple[str, ...]) -> dict:
    """The form's text fields among `names`, each sent once (a repeated one is a 422: which one counts?)."""
    repeated = [name for name in names if len(request.data.getlist(name)) > 1]
    if repeated:
        raise ValidationFailed({name: ["Informe um único valor."] for name in repeated})
    return {name: request.data[name] for name in names if name in request.data and name not in request.FILES}


def upload_sha256(upload: UploadedFile) -> str:
    """Computed while streaming (StreamedUploadHandler), else read once in chunks (the admin's uploads)."""
    known = getattr(upload, "sha256", None)
    if known:
        return known
    digest = hashlib.sha256()
    for chunk in upload.chunks():
        digest.update(chunk)
    upload.seek(0)
    upload.sha256 = digest.hexdigest()
    return upload.sha256


# Every multipart form the admin takes (a reply's or a note's files, an agent's photo), at most this many files.
ADMIN_FILES_PER_FORM = 10


class AdminUploadStreamingMiddleware:
    """The admin's multipart forms go through StreamedUploadHandler like the API's: a body announced past
    the ceiling is refused unread, a file past ANEXO_MAX_BYTES at that chunk, nothing held whole in memory.
    Before CsrfViewMiddleware, which reads the form (and so its files) before any admin view runs."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method == "POST" and request.path.startswith("/admin/") and _is_multipart(request):
            request.upload_handlers = [StreamedUploadHandler(request, max_files=ADMIN_FILES_PER_FORM)]
            try:
                request.POST  # noqa: B018  (read now, streamed, so the refusal is answered here)
            except (AttachmentTooLarge, ValidationFailed) as refused:
                detail = refused.detail if isinstance(refused, AttachmentTooLarge) else refused.errors[FIELD][0]
                status = 413 if isinstance(refused, AttachmentTooLarge) else 400
                return HttpResponse(f"{detail} Volte e envie outro arquivo.", status=status, content_type=TEXT)
        return self.get_response(request)


TEXT = "text/plain; charset=utf-8"


def _is_multipart(request) -> bool:
    return request.META.get("CONTENT_TYPE", "").lower().startswith("multipart/form-data")
