"""The transport: retries, errors, URL and token resolution (against
scripted servers, so every failure can be staged)."""

import inspect
import os
import socket
import time
import unittest
import urllib.request
from unittest import mock

import xbo
from xbo._http import Connection, resolve_token, resolve_url

from support import ScriptedServer

STUDY = {
    "name": "s",
    "direction": "minimize",
    "space": {"objective": "minimize", "params": [
        {"name": "x", "type": "float", "low": 0, "high": 1},
        {"name": "n", "type": "int", "low": 1, "high": 9}]},
    "optimizer": {"strategy": "ei"},
}


def closed_port_url():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return "http://127.0.0.1:%d" % port


def shortest_jitter():
    """Make the backoff's jitter draw its shortest waits (half the nominal)."""
    return mock.patch("xbo._http.random.random", return_value=0.0)


def timed_attempts(times):
    """Record the time of every request the client sends into times."""
    real_urlopen = urllib.request.urlopen

    def timed(*args, **kwargs):
        times.append(time.monotonic())
        return real_urlopen(*args, **kwargs)

    return mock.patch("xbo._http.urllib.request.urlopen", timed)


class RetryTest(unittest.TestCase):
    def serve(self, answer):
        srv = ScriptedServer(answer)
        self.addCleanup(srv.close)
        return srv

    def test_ask_and_tell_retried_on_503(self):
        failures = {"ask": 2, "tell": 2}

        def answer(method, path, body):
            if method == "GET" and path == "/api/studies/s":
                return 200, STUDY
            for kind in failures:
                if path.endswith("/" + kind) and failures[kind] > 0:
                    failures[kind] -= 1
                    return 503, {"error": "database is restarting"}
            if path.endswith("/ask"):
                return 200, {"number": 7, "state": "running", "params": {"x": 0.25, "n": 4.0}}
            if path.endswith("/tell"):
                return 200, {"number": 7, "state": "complete", "value": body["value"], "params": {"x": 0.25, "n": 4}}
            return 404, {"error": "no route"}

        srv = self.serve(answer)
        study = xbo.load_study("s", url=srv.url, token="tok")
        trial = study.ask()
        self.assertEqual(srv.count("POST", "/api/studies/s/ask"), 3)
        self.assertEqual(trial.number, 7)
        self.assertEqual(trial.params, {"x": 0.25, "n": 4})
        self.assertIs(type(trial.params["n"]), int)
        frozen = study.tell(trial, 0.5)
        self.assertEqual(srv.count("POST", "/api/studies/s/trials/7/tell"), 3)
        self.assertEqual((frozen.state, frozen.value), ("complete", 0.5))
        for _, _, headers, _ in srv.requests:
            self.assertEqual(headers.get("Authorization"), "Bearer tok")
        # The three attempts of the ask carried one idempotency key; the
        # next ask has its own.
        study.ask()
        keys = [h.get("Idempotency-Key") for m, p, h, _ in srv.requests if p.endswith("/ask")]
        self.assertEqual(len(keys), 4)
        self.assertTrue(keys[0] and len(keys[0]) >= 32, keys)
        self.assertEqual(keys[0], keys[1])
        self.assertEqual(keys[0], keys[2])
        self.assertNotEqual(keys[0], keys[3])

    def test_ask_retried_after_a_lost_answer_with_its_key(self):
        drops = {"n": 2}

        def answer(method, path, body):
            if method == "GET":
                return 200, STUDY
            if drops["n"] > 0:
                drops["n"] -= 1
                return "drop"
            return 200, {"number": 3, "state": "running", "params": {"x": 0.5, "n": 2.0}}

        srv = self.serve(answer)
        study = xbo.load_study("s", url=srv.url)
        study._conn.backoff = 0.01
        self.assertEqual(study.ask().number, 3)
        keys = {h.get("Idempotency-Key") for m, p, h, _ in srv.requests if p.endswith("/ask")}
        self.assertEqual(srv.count("POST", "/api/studies/s/ask"), 3)
        self.assertEqual(len(keys), 1)

    def test_gives_up_with_the_servers_message(self):
        srv = self.serve(lambda m, p, b: (503, {"error": "still down"}))
        conn = Connection(srv.url, retries=2, backoff=0.01)
        with self.assertRaises(xbo.XBOError) as cm:
            conn.request("GET", "/api/studies")
        self.assertEqual((cm.exception.status, cm.exception.message), (503, "still down"))
        self.assertEqual(srv.count("GET", "/api/studies"), 3)

    def test_client_errors_are_not_retried(self):
        srv = self.serve(lambda m, p, b: (400, {"error": "space: parameter \"x\": low 1 must be below high 0"}))
        conn = Connection(srv.url, retries=5, backoff=0.01)
        with self.assertRaises(xbo.XBOError) as cm:
            conn.request("POST", "/api/studies", {"name": "s"})
        self.assertEqual(cm.exception.status, 400)
        self.assertIn("low 1 must be below high 0", str(cm.exception))
        self.assertEqual(len(srv.requests), 1)

    def test_lost_answer_retried_only_when_idempotent(self):
        drops = {"n": 1}

        def answer(method, path, body):
            if drops["n"] > 0:
                drops["n"] -= 1
                return "drop"
            return 200, {"ok": True}

        srv = self.serve(answer)
        conn = Connection(srv.url, retries=3, backoff=0.01)
        self.assertEqual(conn.request("POST", "/api/x", {"a": 1}), {"ok": True})
        self.assertEqual(len(srv.requests), 2)

        drops["n"] = 1
        with self.assertRaises(xbo.XBOError) as cm:
            conn.request("POST", "/api/studies", {"name": "s"}, idempotent=False)
        self.assertIsNone(cm.exception.status)
        self.assertEqual(len(srv.requests), 3)

    def test_refused_connection_retried_then_reported(self):
        url = closed_port_url()
        conn = Connection(url, retries=2, backoff=0.05)
        start = time.monotonic()
        with self.assertRaises(xbo.XBOError) as cm:
            conn.request("POST", "/api/studies", {"name": "s"}, idempotent=False)
        self.assertIsNone(cm.exception.status)
        self.assertIn("after 2 retries", cm.exception.message)
        self.assertIn(url, cm.exception.message)
        # two waits of 0.05 and 0.1 s, each with jitter of at least half
        self.assertGreaterEqual(time.monotonic() - start, 0.07)

    def test_default_retry_window_is_a_minute(self):
        # Every way to reach a study retries for at least 60 s by default
        # (the former 8 retries gave up after 11 to 23 s).
        self.assertGreaterEqual(Connection("http://127.0.0.1:1").retry_for, 60.0)
        for fn in (xbo.create_study, xbo.load_study, xbo.delete_study):
            default = inspect.signature(fn).parameters["retry_for"].default
            self.assertGreaterEqual(default, 60.0, fn.__name__)
            self.assertIsNone(inspect.signature(fn).parameters["retries"].default, fn.__name__)
        for bad in (-1, float("nan"), float("inf"), True, "60"):
            with self.assertRaises(ValueError):
                Connection("http://127.0.0.1:1", retry_for=bad)

    def test_jitter_never_shortens_the_window(self):
        # With the jitter drawing its shortest waits, a request that keeps
        # failing is still retried until the window's end, and last tried
        # there, not a doubled backoff later.
        srv = self.serve(lambda m, p, b: (503, {"error": "store unavailable"}))
        times = []
        conn = Connection(srv.url, retry_for=1.5, backoff=0.4)
        with shortest_jitter(), timed_attempts(times):
            with self.assertRaises(xbo.XBOError) as cm:
                conn.request("POST", "/api/studies/s/trials/1/tell", {"value": 1})
        self.assertEqual(cm.exception.status, 503)
        self.assertGreaterEqual(times[-1] - times[0], 1.5)
        self.assertLess(times[-1] - times[0], 2.3)

    def test_retry_after_is_waited_in_full(self):
        # Retry-After: 1 is waited a whole second each time, even when the
        # jitter draws its shortest wait (it used to halve it).
        left = {"n": 2}

        def answer(method, path, body):
            if left["n"] > 0:
                left["n"] -= 1
                return 503, {"error": "store unavailable"}, {"Retry-After": "1"}
            return 200, {"ok": True}

        srv = self.serve(answer)
        times = []
        conn = Connection(srv.url, backoff=0.01)
        with shortest_jitter(), timed_attempts(times):
            self.assertEqual(conn.request("GET", "/api/studies"), {"ok": True})
        self.assertEqual(len(times), 3)
        for a, b in zip(times, times[1:]):
            self.assertGreaterEqual(b - a, 1.0)

    def test_nan_is_never_sent(self):
        srv = self.serve(lambda m, p, b: (200, {}))
        conn = Connection(srv.url)
        with self.assertRaisesRegex(ValueError, "NaN or infinity"):
            conn.request("POST", "/api/x", {"value": float("nan")})
        self.assertEqual(srv.requests, [])

    def test_url_and_token(self):
        with mock.patch.dict(os.environ, {"XBO_URL": "http://h:1/api/", "XBO_TOKEN": "t"}):
            self.assertEqual(resolve_url(None), "http://h:1")
            self.assertEqual(resolve_token(None), "t")
            self.assertEqual(resolve_url("https://other:2"), "https://other:2")
            self.assertEqual(resolve_token("mine"), "mine")
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(resolve_url(None), "http://127.0.0.1:8080")
            self.assertIsNone(resolve_token(None))
        with self.assertRaisesRegex(ValueError, "not an http"):
            resolve_url("127.0.0.1:8080")

    def test_load_study_without_server_names_the_url(self):
        url = closed_port_url()
        with self.assertRaises(xbo.XBOError) as cm:
            xbo.load_study("s", url=url, retries=0)
        self.assertIsNone(cm.exception.status)
        self.assertIn(url, str(cm.exception))


if __name__ == "__main__":
    unittest.main()
