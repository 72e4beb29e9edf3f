"""Helpers of the xbo client tests.

The tests run against a real ``xbo serve`` whose URL and token are in
$XBO_TEST_URL and $XBO_TEST_TOKEN; ``go test ./python`` (python_test.go)
builds xbo, starts the server and runs ``python3 -m unittest`` here. Tests
that need the server skip when those are not set.
"""

import http.server
import json
import os
import threading
import unittest
import uuid

SERVER_URL = os.environ.get("XBO_TEST_URL", "")
SERVER_TOKEN = os.environ.get("XBO_TEST_TOKEN", "")


def needs_server(cls):
    """Skip a TestCase when no xbo server was given."""
    return unittest.skipUnless(SERVER_URL, "XBO_TEST_URL is not set (run: go test ./python)")(cls)


def unique(prefix):
    """A study name no other test uses."""
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


def server_kwargs():
    return {"url": SERVER_URL, "token": SERVER_TOKEN or None}


class ScriptedServer:
    """A tiny HTTP server that answers from a script, to test the client's
    retries without an xbo server.

    answer(method, path, body) returns (status, json_document) or the string
    "drop" to close the connection without an answer. Every request is
    recorded in ``requests`` as (method, path, headers, body).
    """

    def __init__(self, answer):
        self.requests = []
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def handle_any(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                body = json.loads(raw) if raw else None
                with outer.lock:
                    outer.requests.append((self.command, self.path, dict(self.headers), body))
                reply = answer(self.command, self.path, body)
                if reply == "drop":
                    self.close_connection = True
                    return
                status, doc = reply
                data = b"" if doc is None else json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = handle_any

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def count(self, method, path):
        with self.lock:
            return sum(1 for m, p, _, _ in self.requests if m == method and p == path)
