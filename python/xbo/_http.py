"""JSON over HTTP to an xbo server, with retries (standard library only)."""

from __future__ import annotations

import http.client
import json
import os
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Optional

DEFAULT_URL = "http://127.0.0.1:8080"

# How long a failed request is repeated by default: long enough for a
# PostgreSQL restart or a supervised xbo serve restart, so that a worker
# rides out an outage that short without losing its result.
DEFAULT_RETRY_FOR = 60.0

# The longest Retry-After honoured, so that a misconfigured proxy cannot
# park a worker for hours.
MAX_RETRY_AFTER = 300.0


class XBOError(Exception):
    """An error answered by the xbo server, or no answer at all.

    ``status`` is the HTTP status (``None`` when the server could not be
    reached after every retry) and ``message`` the server's explanation.
    """

    def __init__(self, status: Optional[int], message: str) -> None:
        self.status = status
        self.message = message
        super().__init__(status, message)

    def __str__(self) -> str:
        if self.status is None:
            return self.message
        return "xbo server answered %d: %s" % (self.status, self.message)


def resolve_url(url: Optional[str]) -> str:
    """The server's base URL: the argument, else $XBO_URL, else the default.

    A trailing ``/`` or ``/api`` is dropped, so ``http://host:8080/api``
    works as well as ``http://host:8080``.
    """
    if url is None or url == "":
        url = os.environ.get("XBO_URL") or DEFAULT_URL
    if not isinstance(url, str):
        raise TypeError("url must be a string, not %s" % type(url).__name__)
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("url %r is not an http:// or https:// URL" % url)
    url = url.rstrip("/")
    if url.endswith("/api"):
        url = url[: -len("/api")]
    return url


def resolve_token(token: Optional[str]) -> Optional[str]:
    """The bearer token: the argument, else $XBO_TOKEN, else none."""
    if token is None:
        token = os.environ.get("XBO_TOKEN") or None
    if token is not None and not isinstance(token, str):
        raise TypeError("token must be a string, not %s" % type(token).__name__)
    return token


def quote(segment: str) -> str:
    """One URL path segment (a study name may hold '/', spaces, ...)."""
    return urllib.parse.quote(segment, safe="")


def _retry_after(headers: Any) -> float:
    """Seconds from a Retry-After header given in seconds (0 when absent)."""
    try:
        return max(0.0, float(headers.get("Retry-After", "")))
    except (TypeError, ValueError):
        return 0.0


class Connection:
    """Sends JSON requests to one xbo server.

    Retries: a refused connection and a 5xx answer are retried for every
    request (the server did not act on it, or rolled it back). Other
    connection errors (a reset, a timeout, a lost answer) are retried only
    for requests marked idempotent: tells and reports (the server accepts the
    same outcome twice), reads, and asks, which carry an Idempotency-Key
    header (the same for every attempt of one ask), so that a repeated ask
    receives the trial the server handed out for a lost answer instead of a
    second one.

    A request is repeated for ``retry_for`` seconds from its first attempt
    (default 60; 0: never), and at most ``retries`` times when that is
    given. The wait doubles from ``backoff`` seconds up to
    ``max_backoff``, drawn between half and one and a half times that so
    that many workers do not retry in step; it is never shorter than a
    503's Retry-After. No wait runs past the window's end, and the last
    attempt is made there: jitter never shortens the window.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        retries: Optional[int] = None,
        backoff: float = 0.1,
        max_backoff: float = 10.0,
        timeout: float = 300.0,
        retry_for: float = DEFAULT_RETRY_FOR,
    ) -> None:
        if retries is not None and (not isinstance(retries, int) or isinstance(retries, bool) or retries < 0):
            raise ValueError("retries must be None or an integer >= 0, not %r" % (retries,))
        for name, v in (("backoff", backoff), ("max_backoff", max_backoff), ("timeout", timeout)):
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
                raise ValueError("%s must be a number > 0, not %r" % (name, v))
        if not isinstance(retry_for, (int, float)) or isinstance(retry_for, bool) or not 0 <= retry_for < float("inf"):
            raise ValueError("retry_for must be a number of seconds >= 0, not %r" % (retry_for,))
        self.url = resolve_url(url)
        self.token = resolve_token(token)
        self.retries = retries
        self.retry_for = float(retry_for)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.timeout = float(timeout)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        idempotent: bool = True,
        headers: Optional[Dict[str, str]] = None,
    ) -> Any:
        """Send one request and return the decoded JSON answer (None if empty).

        ``headers`` are sent with every attempt (e.g. an ask's
        Idempotency-Key).

        Raises XBOError for an error answer, or when no answer came after
        the retries; ValueError when body holds NaN or infinity, which JSON
        cannot carry.
        """
        data = None
        if body is not None:
            try:
                data = json.dumps(body, allow_nan=False).encode("utf-8")
            except ValueError as e:
                raise ValueError("%s %s: the request holds NaN or infinity, which JSON cannot carry (%s)" % (method, path, e)) from None
        delay = self.backoff
        end = time.monotonic() + self.retry_for
        attempt = 0
        while True:
            left = end - time.monotonic()
            last = left <= 0 or (self.retries is not None and attempt >= self.retries)
            req = urllib.request.Request(self.url + path, data=data, method=method)
            req.add_header("Accept", "application/json")
            if data is not None:
                req.add_header("Content-Type", "application/json")
            if self.token:
                req.add_header("Authorization", "Bearer " + self.token)
            for name, value in (headers or {}).items():
                req.add_header(name, value)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
                return json.loads(raw) if raw.strip() else None
            except urllib.error.HTTPError as e:
                message = _error_message(e)
                if e.code < 500 or last:
                    raise XBOError(e.code, message) from None
                retry_after = min(_retry_after(e.headers), MAX_RETRY_AFTER)
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
                reason = getattr(e, "reason", e)
                refused = isinstance(reason, ConnectionRefusedError)
                if last or not (refused or idempotent):
                    raise XBOError(
                        None,
                        "%s %s%s: no answer (%s)%s"
                        % (method, self.url, path, reason, "" if attempt == 0 else " after %d retries" % attempt),
                    ) from e
                retry_after = 0.0
            # Jitter spreads the workers' retries; Retry-After is the
            # server's own estimate of the outage, so it is waited in full.
            wait = max(delay * (0.5 + random.random()), retry_after)
            time.sleep(max(0.0, min(wait, end - time.monotonic())))
            delay = min(2 * delay, self.max_backoff)
            attempt += 1


def _error_message(e: urllib.error.HTTPError) -> str:
    try:
        raw = e.read()
    except (OSError, http.client.HTTPException, socket.timeout):
        return str(e.reason)
    try:
        doc = json.loads(raw)
        if isinstance(doc, dict) and isinstance(doc.get("error"), str):
            return doc["error"]
    except ValueError:
        pass
    text = raw.decode("utf-8", "replace").strip()
    return text or str(e.reason)
