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
import urllib.error
import urllib.request
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

    answer(method, path, body) returns (status, json_document), optionally
    with a dict of headers as a third item, or the string "drop" to close
    the connection without an answer. Every request is
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
                status, doc = reply[0], reply[1]
                data = b"" if doc is None else json.dumps(doc).encode()
                self.send_response(status)
                for name, value in (reply[2] if len(reply) > 2 else {}).items():
                    self.send_header(name, value)
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


class FailingProxy:
    """A proxy in front of a real xbo server that spoils the first requests
    whose path ends with a given suffix: ``plan`` maps a suffix to a list of
    failures, used in order. "lost" forwards the request and answers 502
    instead of the server's answer (the server acted; the client cannot
    know), "drop" forwards it and closes the connection without an answer,
    "refused" answers 503 without forwarding.
    """

    def __init__(self, target, plan):
        self.plan = {k: list(v) for k, v in plan.items()}
        self.lock = threading.Lock()
        self.requests = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status, data, content_type="application/json"):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def handle_any(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else None
                fail = outer.next(self.path)
                if fail == "refused":
                    return self.reply(503, b'{"error":"injected: service unavailable"}')
                req = urllib.request.Request(target + self.path, data=raw, method=self.command)
                for name, value in self.headers.items():
                    if name.lower() not in ("host", "content-length", "connection"):
                        req.add_header(name, value)
                try:
                    with urllib.request.urlopen(req, timeout=60) as resp:
                        status, data, ctype = resp.status, resp.read(), resp.headers.get("Content-Type", "")
                except urllib.error.HTTPError as e:
                    status, data, ctype = e.code, e.read(), e.headers.get("Content-Type", "")
                if fail == "lost":
                    return self.reply(502, b'{"error":"injected: bad gateway"}')
                if fail == "drop":
                    self.close_connection = True
                    return
                self.reply(status, data, ctype)

            do_GET = do_POST = do_DELETE = handle_any

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def next(self, path):
        with self.lock:
            self.requests += 1
            for suffix, fails in self.plan.items():
                if path.endswith(suffix) and fails:
                    return fails.pop(0)
        return ""

    def left(self):
        with self.lock:
            return sum(len(v) for v in self.plan.values())

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
