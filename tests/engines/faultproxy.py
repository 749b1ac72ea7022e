"""A fault-injecting HTTP proxy on loopback, in front of a real engine.

    with FaultProxy("http://127.0.0.1:19200") as proxy:
        proxy.inject(Fault("429", path="_msearch", every=2))
        backend = ElasticsearchBackend({"hosts": [proxy.url]}, {})

Every request is forwarded to the engine unless a fault matches it (its path holds
``path``, its method is ``method`` when given; the ``every``-th matching request, at most
``times`` of them). Faults:

* ``429``: answered ``429`` with ``Retry-After`` and an ``es_rejected_execution_exception``
  body, not forwarded (a full search thread pool);
* ``502``/``503``: answered with an HTML error page, not forwarded (a load balancer);
* ``slow``: forwarded after ``seconds`` (a hung node when longer than the client timeout);
* ``reset``: the connection is closed with a TCP reset, no answer;
* ``html``: answered ``200`` with an HTML page (a captive portal, a misrouted proxy);
* ``drop_item``: forwarded, and the last item of the ``_msearch`` answer's ``responses``
  removed;
* ``failed_shard``: forwarded, and the first search answer marked as one failed shard (a
  ``query_shard_exception``: not transient);
* ``lost_shard``: the same, but the shard failed because its copy's node left mid-search
  (``node_disconnected_exception``): transient, that search is sent again.
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

KINDS = ("429", "502", "503", "slow", "reset", "html", "drop_item", "failed_shard", "lost_shard")
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection"}


@dataclass
class Fault:
    kind: str
    path: str = "_search"  # a substring of the request path (``_msearch`` holds ``_search``)
    method: Optional[str] = None
    every: int = 1  # the every-th matching request
    times: Optional[int] = None  # at most this many faults (None: no limit)
    seconds: float = 0.0  # slow: the delay; 429: the Retry-After value
    seen: int = 0
    fired: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown fault {self.kind!r}; known: {', '.join(KINDS)}")

    def hits(self, method: str, path: str) -> bool:
        if self.path not in path or (self.method is not None and self.method != method):
            return False
        if self.times is not None and self.fired >= self.times:
            return False
        self.seen += 1
        if self.seen % self.every:
            return False
        self.fired += 1
        return True


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up on a slow answer: a broken pipe here is expected


class FaultProxy:
    """A threaded HTTP proxy to ``upstream`` on 127.0.0.1 (a free port); ``url`` is its address."""

    def __init__(self, upstream: str):
        parts = urlsplit(upstream)
        self.upstream: Tuple[str, int] = (parts.hostname or "127.0.0.1", parts.port or 9200)
        self.faults: List[Fault] = []
        self.log: List[Tuple[str, str, str]] = []  # (method, path, fault kind or "")
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def inject(self, *faults: Fault) -> None:
        with self._lock:
            self.faults = [dataclasses.replace(f, seen=0, fired=0) for f in faults]  # fresh counts
            self.log.clear()

    def fired(self, kind: Optional[str] = None) -> int:
        return sum(1 for _m, _p, k in self.log if k and (kind is None or k == kind))

    def choose(self, method: str, path: str) -> Optional[Fault]:
        with self._lock:
            chosen = next((f for f in self.faults if f.hits(method, path)), None)
            self.log.append((method, path, chosen.kind if chosen else ""))
            return chosen

    def forward(
        self, method: str, path: str, headers: Dict[str, str], body: bytes
    ) -> Tuple[int, Dict[str, str], bytes]:
        conn = http.client.HTTPConnection(*self.upstream, timeout=120)
        try:
            conn.request(method, path, body=body or None, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            out = {k: v for k, v in resp.getheaders() if k.lower() not in _HOP_BY_HOP}
            return resp.status, out, data
        finally:
            conn.close()


def _rejected(retry_after: float) -> bytes:
    reason = "rejected execution of coordinating operation [search thread pool queue is full]"
    err = {"type": "es_rejected_execution_exception", "reason": reason}
    return json.dumps({"error": dict(err, root_cause=[err]), "status": 429}).encode()


def _corrupt(kind: str, data: bytes) -> bytes:
    body = json.loads(data)
    if kind == "drop_item" and isinstance(body.get("responses"), list):
        body["responses"] = body["responses"][:-1]
    elif kind in ("failed_shard", "lost_shard"):
        target = body["responses"][0] if isinstance(body.get("responses"), list) else body
        shards = target.setdefault("_shards", {})
        shards["failed"] = 1
        shards["successful"] = max(0, int(shards.get("total", 1)) - 1)
        shards["failures"] = [
            {
                "shard": 0,
                "index": "x",
                "reason": {
                    "type": "node_disconnected_exception"
                    if kind == "lost_shard"
                    else "query_shard_exception",
                    "reason": "injected",
                },
            }
        ]
    return json.dumps(body).encode()


def _handler(proxy: FaultProxy) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _answer(self, status: int, body: bytes, headers: Dict[str, str]) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            method, path = self.command, self.path
            fault = proxy.choose(method, path)
            kind = fault.kind if fault else ""
            if kind == "reset":
                # SO_LINGER with a zero timeout: close() sends a TCP RST
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
                return
            if kind == "429":
                retry_after = str(int(fault.seconds)) if fault and fault.seconds else "1"
                headers = {"Content-Type": "application/json", "Retry-After": retry_after}
                return self._answer(429, _rejected(float(retry_after)), headers)
            if kind in ("502", "503", "html"):
                page = b"<html><head><title>Gateway</title></head><body>upstream unavailable</body></html>"
                status = 200 if kind == "html" else int(kind)
                return self._answer(status, page, {"Content-Type": "text/html"})
            if kind == "slow" and fault is not None:
                time.sleep(fault.seconds)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
            status, out_headers, data = proxy.forward(method, path, headers, body)
            if kind in ("drop_item", "failed_shard", "lost_shard") and status == 200:
                data = _corrupt(kind, data)
            self._answer(status, data, out_headers)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

    return Handler
