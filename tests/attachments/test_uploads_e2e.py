"""Uploads through the real stack (gunicorn, tests/e2e/stack.py): a 10 MiB file goes in and comes back
out through its link byte for byte, larger ones are refused with 413, and the web worker's peak memory
(VmHWM) stays flat all along: the body and the file stream through in chunks, never whole in memory.

On the S3 run of .ci/run the same stack stores the files in the bucket (the environment passes through)."""

import hashlib
import json
from pathlib import Path

import pytest
import requests

from tests.e2e.stack import Stack

MiB = 1024 * 1024
LINE = b"2026-11-22T14:03:11Z pedido 1234: tentativa de entrega sem sucesso\n"
# Growth of the worker's peak resident memory allowed over one upload or download of 10 MiB. Holding the
# body or the file in memory would add at least 10 MiB (Django parsing a body read whole, twice that);
# streaming measured 0 to 4.5 MB, the noise of the C allocator's arenas (Python's own peak over the
# request, with tracemalloc, is under 400 KiB).
MEMORY_GROWTH_LIMIT = 6 * MiB
WEB_THREADS = 4  # tests/e2e/stack.py runs one gunicorn process with 4 threads


class WebOnlyStack(Stack):
    """Only the web server: no worker or beat is needed to upload and download."""

    def start_processes(self) -> None:
        self.start_web()


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    running = WebOnlyStack(tmp_path_factory.mktemp("attachments-e2e"), database_prefix="helpdesk_att_e2e_")
    try:
        yield running.start()
    finally:
        running.stop()


class MultipartBody:
    """A multipart/form-data body with one text file of `size` bytes, produced while it is sent (the
    client holds 64 KiB at a time), with its Content-Length known up front as Django needs it."""

    def __init__(self, size: int, name: str = "log.txt"):
        self.boundary = "----helpdesk-e2e-boundary"
        self.head = (
            f'--{self.boundary}\r\nContent-Disposition: form-data; name="arquivo"; filename="{name}"\r\n'
            "Content-Type: text/plain\r\n\r\n"
        ).encode()
        self.tail = f"\r\n--{self.boundary}--\r\n".encode()
        self.size = size
        self.digest = hashlib.sha256()
        self._chunks = self._generate()
        self._pending = b""

    @property
    def content_type(self) -> str:
        return f"multipart/form-data; boundary={self.boundary}"

    def __len__(self) -> int:
        return len(self.head) + self.size + len(self.tail)

    def __iter__(self):
        return self._generate()

    def _generate(self):
        yield self.head
        block = LINE * (64 * 1024 // len(LINE))
        left = self.size
        while left:
            piece = block[: min(left, len(block))]
            self.digest.update(piece)
            left -= len(piece)
            yield piece
        yield self.tail

    def read(self, size: int = -1) -> bytes:
        while len(self._pending) < max(size, 1):
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            self._pending += chunk
        size = len(self._pending) if size < 0 else size
        data, self._pending = self._pending[:size], self._pending[size:]
        return data


def worker_pid(stack: Stack) -> int:
    master = stack.processes["web"].pid
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def peak_memory(pid: int) -> int:
    """The process's peak resident set size (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def upload(stack: Stack, ticket_id: str, body: MultipartBody):
    response = requests.post(
        f"{stack.base_url}/api/v1/tickets/{ticket_id}/anexos",
        data=body,
        headers={"Authorization": f"Bearer {stack.api_key}", "Content-Type": body.content_type},
        timeout=120,
    )
    return response.status_code, json.loads(response.content)


def download_digest(url: str) -> tuple[int, dict, str]:
    """Streams the download (a redirect to the bucket is followed), hashing it 64 KiB at a time."""
    digest = hashlib.sha256()
    with requests.get(url, stream=True, timeout=120) as response:
        for chunk in response.iter_content(64 * 1024):
            digest.update(chunk)
        return response.status_code, dict(response.headers), digest.hexdigest()


def test_uploads_and_downloads_stream_through_the_web_worker_with_flat_memory(web):
    ticket = web.create_ticket()
    pid = worker_pid(web)
    # Warm-up: the first uploads and downloads load what they use (libmagic, the storage, the views),
    # on each of the worker's threads (each may get a malloc arena of its own).
    for _ in range(WEB_THREADS):
        status, warm = upload(web, ticket["id"], MultipartBody(MiB))
        assert status == 201, warm
        assert download_digest(warm["data"]["url"])[0] == 200
    growth = {}

    def measured(name, call):
        before = peak_memory(pid)
        result = call()
        growth[name] = peak_memory(pid) - before
        return result

    ten = MultipartBody(10 * MiB, name="pedido 1234 – log.txt")
    status, accepted = measured("upload of 10 MiB", lambda: upload(web, ticket["id"], ten))
    status_download, headers, digest = measured("download of 10 MiB", lambda: download_digest(accepted["data"]["url"]))
    over_by_one = measured("10 MiB + 1 refused", lambda: upload(web, ticket["id"], MultipartBody(10 * MiB + 1)))
    thirty = measured("30 MiB refused", lambda: upload(web, ticket["id"], MultipartBody(30 * MiB)))

    assert status == 201, accepted
    assert (accepted["data"]["tamanho"], accepted["data"]["tipo"]) == (10 * MiB, "text/plain")
    assert accepted["data"]["nome"] == "pedido 1234 – log.txt"
    assert (status_download, digest) == (200, ten.digest.hexdigest())
    assert headers["Content-Disposition"].startswith("attachment;")
    for refused in (over_by_one, thirty):
        assert refused[0] == 413, refused
        assert refused[1]["errors"]["field"] == "arquivo"
    # Each would grow by at least the file's 10 MiB if a body or a file were held in memory.
    assert all(value < MEMORY_GROWTH_LIMIT for value in growth.values()), growth
    status, listed = web.partner("GET", f"/api/v1/tickets/{ticket['id']}/anexos")
    assert [item["tamanho"] for item in listed["data"]["data"]] == [MiB] * WEB_THREADS + [10 * MiB]
