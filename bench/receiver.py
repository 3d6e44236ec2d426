"""A fast webhook receiver, in a process of its own: answers 200 at once and records arrivals.

    python -m bench.receiver --port P

POST (any path): records (arrival unix time, X-Service-Delivery, event id, event criado_em, path).
POST /slow/<seconds>/...: the same, answered after that many seconds (a slow partner; past the
service's WEBHOOK_TIMEOUT, one that times out).
GET /_records?since=N: the records from index N on, as a JSON array.
GET /_count: {"count": N}.
"""

import argparse
import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

_records: list = []
_lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One write per answer: headers and body in two small writes on a kept-alive connection
    # wait ~40 ms for the client's delayed ACK (Nagle), which no real receiver does.
    wbufsize = -1

    def do_POST(self):
        arrived = time.time()
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            event = json.loads(body)
            event_id, created = event.get("id"), event.get("criado_em")
        except ValueError:
            event_id = created = None
        with _lock:
            _records.append((arrived, self.headers.get("X-Service-Delivery"), event_id, created, self.path))
        parts = self.path.split("/")
        if len(parts) > 2 and parts[1] == "slow":
            time.sleep(float(parts[2]))
        self._answer(b'{"ok":true}')

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/_count":
            self._answer(json.dumps({"count": len(_records)}).encode())
        elif url.path == "/_records":
            since = int(parse_qs(url.query).get("since", ["0"])[0])
            with _lock:
                chunk = _records[since:]
            self._answer(json.dumps(chunk).encode())
        else:
            self.send_error(404)

    def _answer(self, payload: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the service gave up waiting
            self.wfile.write(payload)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    options = parser.parse_args()
    Server(("127.0.0.1", options.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
