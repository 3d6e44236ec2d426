"""What an attachment may be: its type sniffed from the content (libmagic, never the client's header
or the file's name) against an allow-list, and its name cleaned for display and downloads."""

import threading
import unicodedata

# The types a help desk takes: images, PDF, plain text and CSV, office documents (OOXML, OpenDocument,
# legacy Office) and ZIP. What libmagic names each of them, mapped to the type the download serves.
ALLOWED_TYPES = {
    "image/png": "image/png",
    "image/jpeg": "image/jpeg",
    "image/gif": "image/gif",
    "image/webp": "image/webp",
    "application/pdf": "application/pdf",
    "text/plain": "text/plain",
    "text/csv": "text/csv",
    "application/zip": "application/zip",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    ),
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": (
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    ),
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": (
        "application/vnd.openxmlformats-officedocument.presentationml.presentation"
    ),
    "application/vnd.oasis.opendocument.text": "application/vnd.oasis.opendocument.text",
    "application/vnd.oasis.opendocument.spreadsheet": "application/vnd.oasis.opendocument.spreadsheet",
    "application/vnd.oasis.opendocument.presentation": "application/vnd.oasis.opendocument.presentation",
    "application/msword": "application/msword",
    "application/vnd.ms-excel": "application/vnd.ms-excel",
    "application/vnd.ms-powerpoint": "application/vnd.ms-powerpoint",
}
# The extension a file of each served type is downloaded with, whatever it was called when sent.
CANONICAL_EXTENSIONS = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
    "application/pdf": "pdf",
    "text/plain": "txt",
    "text/csv": "csv",
    "application/zip": "zip",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/vnd.oasis.opendocument.text": "odt",
    "application/vnd.oasis.opendocument.spreadsheet": "ods",
    "application/vnd.oasis.opendocument.presentation": "odp",
    "application/msword": "doc",
    "application/vnd.ms-excel": "xls",
    "application/vnd.ms-powerpoint": "ppt",
}
# What a download may be served as (the OpenAPI enum of `tipo`).
SERVED_TYPES = sorted(set(ALLOWED_TYPES.values()))
ALLOWED_DESCRIPTION = (
    "imagens (PNG, JPEG, GIF, WebP), PDF, texto, CSV, documentos de escritório (Office, OpenDocument) e ZIP"
)

MAX_NAME_LENGTH = 255
FALLBACK_NAME = "arquivo"
# Bidirectional controls: "fatura\u202efdp.exe" shows as "fatura.pdf"; zero-width joiners (emoji) stay.
_BIDI_CONTROLS = {"\u061c", "\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}
# Invisible or line-breaking: "boleto\u200b.pdf" looks like "boleto.pdf", a line separator breaks a header line.
_INVISIBLE = {"\u200b", "\u200c", "\u2060", "\ufeff", "\u00ad", "\u180e"}


# libmagic reads up to 7 MiB of a file by default, into memory: the start of a file is enough to tell
# its type (an office document's parts are listed first), and a web process must not hold 7 MiB per upload.
SNIFF_BYTES = 512 * 1024
_lock = threading.Lock()
_magic = None


def libmagic():
    """One libmagic handle per process, made on first use (python-magic serialises calls on it).
    Without Debian's libmagic1 this raises ImportError: the system check tickets.E001 says so at start."""
    global _magic
    with _lock:
        if _magic is None:
            import magic

            handle = magic.Magic(mime=True)
            handle.setparam(magic.MAGIC_PARAM_BYTES_MAX, SNIFF_BYTES)
            _magic = handle
    return _magic


def sniff(path: str | None = None, *, data: bytes | None = None) -> str | None:
    """The served type of this content, or None when it is not on the allow-list."""
    handle = libmagic()
    found = handle.from_file(path) if path is not None else handle.from_buffer((data or b"")[:SNIFF_BYTES])
    return ALLOWED_TYPES.get(found)


def download_name(name: str, content_type: str) -> str:
    """The name a download is saved under: the shown name with the served type's extension, so a text
    sent as `boleto.pdf.bat` is saved as `boleto.pdf.txt`, never run (the list keeps the name as sent)."""
    extension = CANONICAL_EXTENSIONS[content_type]
    stem, dot, current = name.rpartition(".")
    if dot and stem and current.lower() == extension:
        return name
    base = stem if dot and stem else name
    return f"{base[: MAX_NAME_LENGTH - len(extension) - 1]}.{extension}"


def clean_name(raw: str | None) -> str:
    """No folders, no control or bidirectional characters, no blank ends, at most 255 characters
    (the extension kept); Unicode is kept, in its composed form."""
    name = unicodedata.normalize("NFC", raw or "")
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(
        char
        for char in name
        if unicodedata.category(char) not in ("Cc", "Cs", "Co", "Cn", "Zl", "Zp")
        and char not in _BIDI_CONTROLS
        and char not in _INVISIBLE
    )
    name = name.strip()
    if name in ("", ".", ".."):
        return FALLBACK_NAME
    if len(name) > MAX_NAME_LENGTH:
        stem, dot, extension = name.rpartition(".")
        if dot and stem and len(extension) <= 16:
            name = stem[: MAX_NAME_LENGTH - len(extension) - 1].rstrip() + "." + extension
        else:
            name = name[:MAX_NAME_LENGTH].rstrip()
    return name
