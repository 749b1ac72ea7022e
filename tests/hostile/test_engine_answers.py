"""An engine address that answers, but not as the engine (issue #11 item 8): a proxy, load
balancer or login page that says HTTP 200 with an HTML page (or text, or broken JSON). Every
request is then an ``InfrastructureError`` naming the engine, the request and what came back
(cut short, no credentials): never an ``AttributeError``, never a page of output, never zero
hits. The server here stands for that proxy (the engines themselves never answer this way)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator, Tuple

import pytest

from pytest_retrieval.backends.elasticsearch import ElasticsearchBackend
from pytest_retrieval.backends.opensearch import OpenSearchBackend
from pytest_retrieval.backends.search_engine.http import EngineHTTP
from pytest_retrieval.backends.search_engine.search import read_hits
from pytest_retrieval.errors import InfrastructureError

from .conftest import BASE, bounded, one_line

PASSWORD = "Pr0xyS3cret"
PAGE = (
    b"<!DOCTYPE html><html><body>"
    + b"<p>Please sign in to the corporate proxy</p>\n" * 400
    + b"</body></html>"
)

# (content type, body, the Elasticsearch product header or not)
ANSWERS = {
    "html": ("text/html; charset=utf-8", PAGE, True),
    "html-no-product-header": ("text/html", PAGE, False),
    "html-as-json": ("application/json", PAGE, True),
    "text": ("text/plain", b"OK\n" * 3000, True),
    "json-array": ("application/json", b"[1, 2, 3]", True),
    "json-string": ("application/json", b'"maintenance"', True),
    "truncated-json": ("application/json", b'{"took": 3, "hits": {"hits": [', True),
    "empty": ("application/json", b"", True),
}


def _es_client_major() -> int:
    try:
        import elasticsearch

        return int(elasticsearch.__versionstr__.split(".")[0])
    except ImportError:  # pragma: no cover
        return 8


_ES_CLIENT_MAJOR = _es_client_major()


@pytest.fixture(scope="module")
def proxy() -> Iterator[Tuple[str, dict]]:
    state: dict = {"answer": ANSWERS["html"], "root": None}

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            n = int(self.headers.get("content-length") or 0)
            if n:
                self.rfile.read(n)
            content_type, body, product = state["answer"]
            root = state.get("root")
            if root is not None and "_bulk" not in self.path:  # an engine everywhere but _bulk
                path = self.path.split("?")[0]
                content_type, product = "application/json", True
                body = json.dumps(root if path == "/" else {"acknowledged": True}).encode()
            self.send_response(200)
            self.send_header("content-type", content_type)
            if product:
                self.send_header("X-Elastic-Product", "Elasticsearch")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _answer

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", state
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("backend", [ElasticsearchBackend, OpenSearchBackend], ids=["es", "os"])
@pytest.mark.parametrize("answer", list(ANSWERS))
def test_a_non_json_answer_is_one_named_infrastructure_error(proxy, backend, answer: str) -> None:
    url, state = proxy
    state["answer"], state["root"] = ANSWERS[answer], None
    b = backend(
        {"hosts": [url], "username": "u", "password": PASSWORD, "max_retries": 0}, {"name": "products"}
    )
    http: EngineHTTP = b._http
    with bounded(30):
        for what, call in [
            ("version check", lambda: http.engine_info()),
            ("_msearch of 1 queries", lambda: b._searcher.msearch("products", [("q1", {"size": 1})], 10)),
            ("search for query 'q1'", lambda: b._searcher.one("products", "q1", {"size": 1}, {}, 10)),
        ]:
            with pytest.raises(InfrastructureError) as err:
                call()
            msg = str(err.value)
            one_line(msg, b.name, what)
            assert PASSWORD not in msg and "u:" not in msg
            assert len(msg) < 700, msg
            if answer.startswith("html") and "mimetype" not in msg:
                assert "HTML page" in msg and "instead of the engine's JSON" in msg, msg


@pytest.mark.parametrize(
    "resp,fragment",
    [
        ({"hits": {"hits": "none"}}, "no hits list"),
        ({"hits": []}, "no hits list"),
        ({"hits": {"hits": [{"_score": 1.0}]}}, "a hit without an _id"),
        ({"hits": {"hits": ["d1"]}}, "a hit without an _id"),
        ({"hits": {"hits": [{"_id": "d1", "_score": "high"}]}}, "_score that is not a number"),
        ({"hits": {"hits": [{"_id": "d1", "_score": True}]}}, "_score that is not a number"),
        (
            {"hits": {"hits": [{"_id": "d1", "_score": 10**400}]}},
            "a 401-digit integer is too large for a float",
        ),
        ({"took": 10**400, "hits": {"hits": []}}, "took is not a finite number of milliseconds"),
        ("<html>" + "x" * 5000, "HTML page"),
        ({"_shards": "?", "hits": {"hits": "?"}}, "no hits list"),
    ],
)
def test_a_malformed_search_answer_is_named_never_zero_hits(resp, fragment: str) -> None:
    def fail(what, detail):
        return InfrastructureError(f"engine {what}: {detail}")

    with pytest.raises(InfrastructureError) as err:
        read_hits(resp, "q1", 10, fail)
    one_line(str(err.value), "query 'q1'", fragment)
    assert len(str(err.value)) < 500


def test_a_whole_run_behind_the_proxy_is_one_error_line_per_item(proxy, tmp_path: Path) -> None:
    url, state = proxy
    state["answer"], state["root"] = ANSWERS["html"], None
    suite = BASE + (
        f"backend:\n  type: elasticsearch\n  connection:\n    hosts: ['{url}']\n"
        f"    username: u\n    password: {PASSWORD}\n    max_retries: 0\n"
        "floors:\n  bm25:\n    ndcg@10: 0.1\n"
    )
    (tmp_path / "retrieval_proxy.yaml").write_text(suite)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-rA",
            str(tmp_path / "retrieval_proxy.yaml"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and " passed" not in out.splitlines()[-1], out[-2000:]
    assert "Traceback" not in out and "AttributeError" not in out and PASSWORD not in out
    errors = [line for line in out.splitlines() if line.startswith("InfrastructureError: elasticsearch")]
    assert errors and all("HTML page" in e for e in errors), out[-3000:]
    assert len(out.splitlines()) < 400, f"{len(out.splitlines())} lines of output"


@pytest.mark.parametrize(
    "backend,root",
    [
        # the server major the installed client talks to (scripts/test runs the 9.x client)
        (
            ElasticsearchBackend,
            {"version": {"number": f"{_ES_CLIENT_MAJOR}.19.0", "build_flavor": "default"}},
        ),
        (OpenSearchBackend, {"version": {"number": "2.19.0", "distribution": "opensearch"}}),
    ],
    ids=["es", "os"],
)
def test_a_proxy_page_in_answer_to_bulk_is_named(proxy, backend, root) -> None:
    """The bulk load goes through the client's helper, not our requests: its failure on a
    page is named too, and cut short."""
    from pytest_retrieval.types import Document

    url, state = proxy
    state["answer"], state["root"] = ANSWERS["html"], root
    b = backend({"hosts": [url], "password": PASSWORD, "username": "u", "max_retries": 0}, {})
    with bounded(60), pytest.raises(InfrastructureError) as err:
        b.prepare([Document("d1", {"text": "solar"})], None)
    msg = str(err.value)
    one_line(msg, b.name, "bulk indexing")
    assert len(msg) < 700 and PASSWORD not in msg
