"""The ``http`` backend's urllib3 client: a total deadline per attempt and a capped answer.

urllib3's timeouts bound each socket operation, not the request: a service dripping a byte
every half second never times out. Here a watchdog (one thread for every attempt) shuts the
attempt's socket down when its deadline passes; ``shutdown`` wakes a read blocked in another
thread (close does not, on Linux), the read fails or ends early, and the attempt is reported
as past its deadline, never as a short answer. The connection classes hand their socket to
the current attempt (a thread-local) when they connect and when they wait for the answer,
which covers a new connection and a reused one alike.

The body is read in chunks (``preload_content=False``), inflated here when the service sends
gzip or deflate anyway (the request asks for ``identity``), and counted after inflating:
:func:`~.limits.read_capped` stops at the cap. An error answer's body is only read for its
first :data:`ERROR_BODY_BYTES` (a snippet of it goes into the message).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from .limits import (
    CHUNK_BYTES,
    AnswerTooLarge,
    CappedDecoder,
    Deadline,
    DeadlineExceeded,
    UnexpectedEncoding,
    read_capped,
)

__all__ = ["ERROR_BODY_BYTES", "Answer", "bounded_pool", "fetch"]

ERROR_BODY_BYTES = 64 * 1024
_ENCODINGS = ("gzip", "x-gzip", "deflate")


@dataclass(frozen=True)
class Answer:
    """An answer read whole: its status, headers (lower-case names) and body."""

    status: int
    headers: Mapping[str, str]
    body: bytes


class _Attempt:
    """One attempt: its deadline, and the connection to shut when the deadline passes."""

    def __init__(self, seconds: float):
        self.deadline = Deadline(seconds)
        self.expired = self.done = False
        self._connection: Any = None
        self._lock = threading.Lock()

    def hold(self, connection: Any) -> None:
        with self._lock:
            self._connection = connection
            if self.expired:
                _shut(connection)

    def finish(self) -> None:
        with self._lock:
            self.done = True

    def expire(self) -> None:
        with self._lock:
            if self.done:
                return
            self.expired = True
            if self._connection is not None:
                _shut(self._connection)


def _shut(connection: Any) -> None:
    sock = getattr(connection, "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class _Watchdog:
    """Expires attempts at their deadlines, from one daemon thread (started on first use)."""

    def __init__(self) -> None:
        self._heap: List[Tuple[float, int, _Attempt]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: Optional[threading.Thread] = None

    def arm(self, attempt: _Attempt) -> None:
        with self._wake:
            heapq.heappush(self._heap, (attempt.deadline.at, next(self._order), attempt))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="pytest-retrieval-deadlines", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._heap and self._heap[0][2].done:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._wake.wait()
                    continue
                wait = self._heap[0][2].deadline.remaining()
                if wait > 0:
                    self._wake.wait(wait)
                    continue
                attempt = heapq.heappop(self._heap)[2]
            attempt.expire()


_WATCHDOG = _Watchdog()
_CURRENT = threading.local()


def _hold(connection: Any) -> None:
    attempt = getattr(_CURRENT, "attempt", None)
    if attempt is not None:
        attempt.hold(connection)


class _HeldHTTPConnection(HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _hold(self)

    def getresponse(self, *args: Any, **kwargs: Any) -> Any:
        _hold(self)
        return super().getresponse(*args, **kwargs)


class _HeldHTTPSConnection(HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        _hold(self)

    def getresponse(self, *args: Any, **kwargs: Any) -> Any:
        _hold(self)
        return super().getresponse(*args, **kwargs)


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HeldHTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HeldHTTPSConnection


def bounded_pool(maxsize: int) -> Any:
    """A PoolManager whose connections hand their socket to the current attempt; urllib3's
    own retries off (the caller retries under its policy) and no redirects followed."""
    pool = urllib3.PoolManager(num_pools=4, maxsize=maxsize, retries=False)
    pool.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
    return pool


def fetch(
    pool: Any,
    method: str,
    url: str,
    body: Optional[bytes],
    headers: Dict[str, str],
    deadline_s: float,
    cap: int,
) -> Answer:
    """One attempt: the whole answer within ``deadline_s`` seconds (DeadlineExceeded), its body
    at most ``cap`` bytes after inflating (AnswerTooLarge); urllib3's errors otherwise."""
    attempt = _Attempt(deadline_s)
    _CURRENT.attempt = attempt
    _WATCHDOG.arm(attempt)
    try:
        response = pool.request(
            method,
            url,
            body=body,
            headers={**headers, "accept-encoding": "identity"},
            redirect=False,
            preload_content=False,
            decode_content=False,
            timeout=urllib3.Timeout(connect=deadline_s, read=deadline_s),
        )
        try:
            data = _body(response, cap, attempt.deadline)
        finally:
            response.release_conn()
    except (AnswerTooLarge, UnexpectedEncoding):
        raise
    except Exception:
        if attempt.expired:
            raise DeadlineExceeded(deadline_s) from None
        raise
    finally:
        attempt.finish()
        _CURRENT.attempt = None
    if attempt.expired:  # an answer without a length ends early when its socket is shut
        raise DeadlineExceeded(deadline_s)
    return Answer(response.status, {str(k).lower(): v for k, v in response.headers.items()}, data)


def _body(response: Any, cap: int, deadline: Deadline) -> bytes:
    ok = 200 <= response.status < 300
    limit = cap if ok else min(cap, ERROR_BODY_BYTES)
    try:
        return read_capped(_chunks(response, limit, truncate=not ok), limit, deadline)
    except BaseException:
        response.close()  # not back into the pool half read
        raise


def _chunks(response: Any, cap: int, truncate: bool) -> Iterator[bytes]:
    """The body's bytes, inflated with a bound; ``truncate``: its first ``cap`` bytes only."""
    encoding = str(response.headers.get("content-encoding") or "identity").strip().lower()
    if encoding not in ("identity", *_ENCODINGS):
        raise UnexpectedEncoding(UnexpectedEncoding.message(encoding))
    decoder = CappedDecoder(encoding, cap) if encoding in _ENCODINGS else None
    seen = 0
    for raw in response.stream(CHUNK_BYTES, decode_content=False):
        for chunk in decoder.decode(raw) if decoder is not None else (raw,):
            if truncate and seen + len(chunk) > cap:
                yield chunk[: cap - seen]
                return
            seen += len(chunk)
            yield chunk
