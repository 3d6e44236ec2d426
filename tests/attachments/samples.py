"""Small real files of every kind the service takes (and some it refuses), made here, and what the
tests read back from the attachments storage."""

import io
import threading
import zipfile

import requests
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connections
from PIL import Image

from tests.assertions import bearer_client
from tickets.attachments.storage import attachment_storage


def _image(kind: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (6, 6), (30, 120, 200)).save(buffer, format=kind)
    return buffer.getvalue()


def _zip(entries, *, stored_first: tuple[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        if stored_first is not None:  # OpenDocument: an uncompressed `mimetype` entry first
            archive.writestr(zipfile.ZipInfo(stored_first[0]), stored_first[1])
        for name, content in entries:
            archive.writestr(name, content)
    return buffer.getvalue()


_OOXML_TYPES = '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'

# name -> (bytes, the type the service must serve)
ACCEPTED = {
    "png": (_image("PNG"), "image/png"),
    "jpeg": (_image("JPEG"), "image/jpeg"),
    "gif": (_image("GIF"), "image/gif"),
    "webp": (_image("WEBP"), "image/webp"),
    "pdf": (b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n", "application/pdf"),
    "txt": ("Olá, o pedido 1234 não chegou.\n".encode(), "text/plain"),
    "csv": (b"nome,email,cidade\nAna,ana@example.com,Recife\nBia,bia@example.com,Natal\n", "text/csv"),
    "zip": (_zip([("log.txt", "erro 42")]), "application/zip"),
    "docx": (
        _zip([("[Content_Types].xml", _OOXML_TYPES), ("_rels/.rels", "<r/>"), ("word/document.xml", "<w/>")]),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    "xlsx": (
        _zip([("[Content_Types].xml", _OOXML_TYPES), ("_rels/.rels", "<r/>"), ("xl/workbook.xml", "<w/>")]),
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
    "odt": (
        _zip([("content.xml", "<x/>")], stored_first=("mimetype", "application/vnd.oasis.opendocument.text")),
        "application/vnd.oasis.opendocument.text",
    ),
}

REFUSED = {
    "html": b"<html><body><script>alert(1)</script></body></html>",
    "svg": b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
    "exe": b"MZ\x90\x00" + b"\x00" * 200,
    "binary": bytes(range(256)) * 4,
}

PNG = ACCEPTED["png"][0]
TEXT = ACCEPTED["txt"][0]


def upload_file(content: bytes = PNG, name: str = "foto.png", content_type: str = "image/png") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type)


def stored_keys() -> set[str]:
    """Every file in the attachments storage (a folder per hour), to prove what a request left there."""
    storage = attachment_storage()
    found, folders = set(), [""]
    while folders:
        folder = folders.pop()
        try:
            dirs, names = storage.listdir(folder)
        except FileNotFoundError:
            continue
        prefix = f"{folder}/" if folder else ""
        found |= {prefix + name for name in names}
        folders += [prefix + name for name in dirs]
    return found


def stored_bytes(key: str) -> bytes:
    with attachment_storage().open(key, "rb") as stored:
        return stored.read()


def download(client, url: str):
    """(status, headers, body) of a download link as a browser gets it: on object storage the link
    answers 302 to a presigned URL of the bucket, which is followed."""
    response = client.get(url)
    if response.status_code == 302:
        followed = requests.get(response["Location"], timeout=10)
        return followed.status_code, followed.headers, followed.content
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response.status_code, response.headers, body


def parallel_uploads(key: str, tickets: list, threads: int) -> list[int]:
    """`threads` partner uploads of one small text file, released at once (each thread its own database
    connection, closed after), to `tickets[index % len(tickets)]`; the answers' status codes in order."""
    barrier = threading.Barrier(threads)
    statuses: list = [None] * threads

    def worker(index: int) -> None:
        try:
            data = {"arquivo": upload_file(TEXT, f"{index}.txt", "text/plain")}
            barrier.wait(timeout=30)
            ticket = tickets[index % len(tickets)]
            response = bearer_client(key).post(f"/api/v1/tickets/{ticket.pk}/anexos", data, format="multipart")
            statuses[index] = response.status_code
        finally:
            connections.close_all()

    workers = [threading.Thread(target=worker, args=(index,)) for index in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(timeout=60)
    return statuses
