"""A small real search service for the ``http`` backend's tests: a ``ThreadingHTTPServer`` in a
thread in front of the embedded engine (BM25 over the documents it is given), with faults a
test switches on: an error status (once or always), ``Retry-After``, a slow answer, an HTML
page, an answer without the hits, hits of the wrong types.

``GET /search?q=...&k=...&qid=...`` and ``POST /search`` with ``{"query", "size", "id"}``
answer ``{"took": ms, "results": [{"doc": {"id": ...}, "score": ...}, ...]}``; ``POST /msearch``
with ``{"searches": [<a POST /search body>, ...]}`` answers ``{"took": ms, "responses": [<an
answer of /search>, ...]}`` in the same order (the fault ``short`` drops its last answer). A
request without the expected ``Authorization`` header is answered 401."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Deque, Dict, Iterator, List, Optional, Sequence, Tuple
from urllib.parse import parse_qs, urlsplit

from pytest_retrieval.backends.base import BM25Spec
from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
from pytest_retrieval.types import Document, Query

TOKEN = "s3cr3t-T0ken-for-tests"


class SearchService:
    """The service; ``faults`` are taken one per request (first in, first out), then
    ``always`` applies (None: answer normally)."""

    def __init__(self, documents: Sequence[Document], spec: BM25Spec = BM25Spec()):
        self.engine = EmbeddedBackend()
        self.engine.prepare(list(documents), None)
        self.spec = spec
        self.faults: Deque[Tuple[str, Any]] = deque()
        self.always: Optional[Tuple[str, Any]] = None
        self.requests: List[Dict[str, Any]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> SearchService:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def fault(self) -> Optional[Tuple[str, Any]]:
        with self.lock:
            return self.faults.popleft() if self.faults else self.always

    def answer(self, text: str, k: int, mode: str = "bm25") -> Dict[str, Any]:
        started = time.perf_counter()
        ranking = self.engine.search_one(self.spec, Query("q", text), k).ranking
        results = [{"doc": {"id": d}, "score": s} for d, s in zip(ranking.doc_ids, ranking.scores)]
        if mode == "reversed":
            results = results[::-1]
        return {"took": (time.perf_counter() - started) * 1000, "results": results}

    def _handler(self) -> Any:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                params = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
                self._serve(params.get("q", ""), params.get("k", "10"), params.get("qid"), params)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                if urlsplit(self.path).path == "/msearch":
                    return self._serve_batch(body)
                self._serve(body.get("query", ""), body.get("size", 10), body.get("id"), body)

            def _serve_batch(self, request: Dict[str, Any]) -> None:
                with service.lock:
                    service.requests.append(
                        {"path": self.path, "request": request, "headers": dict(self.headers)}
                    )
                if self.headers.get("authorization") != f"Bearer {TOKEN}":
                    return self._send(401, b'{"error": "unauthorized"}')
                fault = service.fault()
                if fault is not None and fault[0] != "short":
                    return self._fault(*fault, text="")
                started = time.perf_counter()
                searches = request["searches"]
                answers = [
                    service.answer(s["query"], int(s["size"]), str(s.get("mode", "bm25"))) for s in searches
                ]
                if fault is not None:
                    answers = answers[:-1]
                took = (time.perf_counter() - started) * 1000
                self._send(200, json.dumps({"took": took, "responses": answers}).encode())

            def _serve(self, text: str, k: Any, qid: Any, request: Dict[str, Any]) -> None:
                with service.lock:
                    service.requests.append(
                        {"path": self.path, "request": request, "headers": dict(self.headers)}
                    )
                if self.headers.get("authorization") != f"Bearer {TOKEN}":
                    return self._send(401, b'{"error": "unauthorized"}')
                fault = service.fault()
                if fault is not None:
                    return self._fault(*fault, text=text)
                if not text.strip():
                    return self._send(400, b'{"error": "empty query"}')
                answer = service.answer(text, int(k), str(request.get("mode", "bm25")))
                self._send(200, json.dumps(answer).encode())

            def _fault(self, kind: str, arg: Any, text: str) -> None:
                if kind == "status":
                    status, headers = arg if isinstance(arg, tuple) else (arg, {})
                    return self._send(status, b'{"error": "boom"}', headers=headers)
                if kind == "sleep":
                    time.sleep(arg)
                    return self._send(200, json.dumps(service.answer(text, 10)).encode())
                if kind == "html":
                    page = b"<!DOCTYPE html><html><body>Please log in</body></html>"
                    return self._send(200, page, content_type="text/html")
                if kind == "echo":  # a service that echoes the request's headers in its error
                    return self._send(
                        arg,
                        json.dumps(
                            {"error": "boom", "authorization": self.headers.get("authorization")}
                        ).encode(),
                    )
                if kind == "json":
                    return self._send(200, json.dumps(arg).encode())
                raise AssertionError(kind)

            def _send(
                self,
                status: int,
                body: bytes,
                content_type: str = "application/json",
                headers: Optional[Dict[str, str]] = None,
            ) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out
                    pass

        return Handler


def running(documents: Sequence[Document]) -> Iterator[SearchService]:
    """A started service (a fixture's body)."""
    with SearchService(documents) as service:
        yield service
