"""A JSON HTTP(S) server for the tests of the scripts the project's Jobs run against the
master and the Kubernetes API (tests/determined/test_workspaces.py,
tests/observability/test_master_metrics.py)."""

from __future__ import annotations

import contextlib
import json
import ssl
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextlib.contextmanager
def serve(handle, tls: ssl.SSLContext | None = None):
    """An HTTP(S) server on a free port whose requests go to `handle`; yields its URL."""

    class Handler(BaseHTTPRequestHandler):
        def _serve(self):
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            status, answer = handle(
                self.command,
                url.path,
                urllib.parse.parse_qs(url.query),
                body,
                self.headers.get("Authorization"),
                self.headers.get("Content-Type"),
            )
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
