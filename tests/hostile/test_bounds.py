"""Bounded in time and size (issue #32, section 3), against real servers on 127.0.0.1.

A service that drips its answer, one far too large, a gzip bomb, an endless chunked answer:
each stops at the attempt's deadline or the size cap with one line naming the backend, the
endpoint and the bound (asserted on the message and on the bytes the server got out, never on
wall time or memory). Query text holding ``..`` or ``/`` stays in its path segment; a
placeholder left unfilled is refused before anything is sent; a team's Python function that
hangs (sync or async) is an error naming the query.
"""

from __future__ import annotations

import re
import socket
import socketserver
import sys
import threading
import zlib
from pathlib import Path
from typing import Any, Callable, Iterator, List
from urllib.parse import unquote

import pytest

from pytest_retrieval.backends.base import ServiceSpec
from pytest_retrieval.backends.http.backend import HttpBackend
from pytest_retrieval.backends.http.config import HttpRequestConfig, HttpResponseConfig
from pytest_retrieval.bounds.limits import AnswerTooLarge, CappedDecoder, read_capped
from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.execution.runner import run_suite
from pytest_retrieval.types import Query
from tests.ci import unavailable

from .conftest import bounded, one_line

CAP = 1024 * 1024  # backend.request.max_response_bytes of these cases
TOKEN = "Zq9-bounds-token-value"


class RawServer:
    """A TCP server whose handler writes whatever bytes it likes; it records each request's
    path and how many bytes of its answer got out before the client went away."""

    def __init__(self, answer: Callable[[socket.socket, str], int]):
        self.paths: List[str] = []
        self.sent: List[int] = []
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                head = b""
                while b"\r\n\r\n" not in head:
                    data = self.request.recv(65536)
                    if not data:
                        return
                    head += data
                path = head.split(b" ", 2)[1].decode("latin-1")
                server.paths.append(path)
                try:
                    server.sent.append(answer(self.request, path))
                except OSError:  # the client went away
                    server.sent.append(-1)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> RawServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def send_until_gone(sock: socket.socket, chunks: Iterator[bytes], limit: int) -> int:
    """Writes chunks until the client goes away or ``limit`` bytes are out; the bytes out."""
    out = 0
    try:
        for chunk in chunks:
            sock.sendall(chunk)
            out += len(chunk)
            if out >= limit:
                break
    except OSError:
        pass
    return out


def head(extra: str = "", status: str = "200 OK") -> bytes:
    return f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}\r\n".encode()


def http_backend(url: str, timeout: float = 1.0, **request: Any) -> HttpBackend:
    config = {"url": url, "timeout": timeout, "max_retries": 0, "max_response_bytes": CAP, **request}
    return HttpBackend(
        HttpRequestConfig.model_validate(config), HttpResponseConfig.model_validate({"hits": "results"})
    )


def failure(b: HttpBackend, text: str = "solar") -> str:
    with bounded(30), pytest.raises(InfrastructureError) as info:
        b.search_one(ServiceSpec(), Query("q1", text), 10)
    message = str(info.value)
    one_line(message, "http backend", "(query 'q1')")
    return message


# --- time: one deadline per attempt, from connecting to the last byte


def drip_body(sock: socket.socket, path: str) -> int:
    sock.sendall(head("content-length: 1000\r\n"))
    return send_until_gone(sock, _dripped(b'{"results": [' + b" " * 986 + b"]}"), 10**6)


def drip_head(sock: socket.socket, path: str) -> int:
    return send_until_gone(sock, _dripped(head("x-pad: " + "a" * 500 + "\r\n")), 10**6)


def _dripped(data: bytes) -> Iterator[bytes]:
    stop = threading.Event()
    for i in range(len(data)):
        stop.wait(0.1)
        yield data[i : i + 1]


@pytest.mark.parametrize("answer", [drip_body, drip_head], ids=["body", "headers"])
def test_a_dripping_service_times_out_at_the_deadline(answer: Callable[..., int]) -> None:
    with RawServer(answer) as server:
        message = failure(http_backend(server.url + "/s?q={query}", timeout=1.0))
    assert "timed out after 1 s" in message and "request.timeout" in message, message
    assert f"{server.url}/s" in message
    # each byte takes 0.1 s: the attempt stopped long before the answer was complete
    assert len(server.paths) == 1


# --- size: the answer's bytes, counted after decompression


def endless(prefix: bytes, block: bytes) -> Iterator[bytes]:
    yield prefix
    while True:
        yield block


def huge(sock: socket.socket, path: str) -> int:
    size = 300 * 1024 * 1024
    sock.sendall(head(f"content-length: {size}\r\n"))
    return send_until_gone(sock, endless(b'{"results": ["', b"a" * 65536), size)


def endless_chunked(sock: socket.socket, path: str) -> int:
    sock.sendall(head("transfer-encoding: chunked\r\n"))
    block = b"a" * 65536
    return send_until_gone(sock, endless(b'e\r\n{"results": ["\r\n', b"10000\r\n" + block + b"\r\n"), 10**9)


def bomb_bytes(decoded: int) -> bytes:
    pack = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip
    zeros = b"0" * (1024 * 1024)
    body = pack.compress(b'{"results": ["')
    for _ in range(decoded // len(zeros)):
        body += pack.compress(zeros)
    return body + pack.compress(b'"]}') + pack.flush()


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return bomb_bytes(256 * 1024 * 1024)  # 256 MiB of JSON in about 250 KB


@pytest.mark.parametrize("answer", [huge, endless_chunked], ids=["300 MB", "endless chunked"])
def test_a_huge_answer_stops_at_the_cap(answer: Callable[..., int]) -> None:
    with RawServer(answer) as server:
        message = failure(http_backend(server.url + "/s?q={query}", timeout=20.0))
    assert "larger than the cap of 1 MiB (1048576 bytes)" in message, message
    assert "backend.request.max_response_bytes" in message and f"{server.url}/s" in message
    # the rest was never read: what got out is the cap plus the sockets' buffers, not 300 MB
    assert 0 < len(server.paths) == 1
    assert -1 in server.sent or server.sent[0] < 64 * 1024 * 1024, server.sent


def test_a_huge_batch_answer_stops_at_the_cap() -> None:
    from pytest_retrieval.backends.http.config import HttpBatchConfig

    with RawServer(endless_chunked) as server:
        b = http_backend(server.url + "/s", method="POST", body={"q": "{query}"}, timeout=20.0)
        b = HttpBackend(b.request, b.response, batch=HttpBatchConfig.model_validate({"size": 2}))
        with bounded(30), pytest.raises(InfrastructureError) as info:
            b.search_batch(ServiceSpec(), [Query("q1", "a"), Query("q2", "b")], 10)
    one_line(
        str(info.value), "http backend POST", "(batch of 2 from query 'q1')", "larger than the cap of 1 MiB"
    )
    assert len(server.paths) == 1


def test_a_gzip_bomb_stops_at_the_cap_after_decompression(bomb: bytes) -> None:
    def answer(sock: socket.socket, path: str) -> int:
        sock.sendall(head(f"content-encoding: gzip\r\ncontent-length: {len(bomb)}\r\n") + bomb)
        return len(bomb)

    with RawServer(answer) as server:
        message = failure(http_backend(server.url + "/s?q={query}", timeout=20.0))
    assert "larger than the cap of 1 MiB" in message and "after decompression" in message, message


def test_the_decoder_never_inflates_past_the_cap(bomb: bytes) -> None:
    decoder = CappedDecoder("gzip", CAP)
    chunks = (bomb[i : i + 65536] for i in range(0, len(bomb), 65536))
    with pytest.raises(AnswerTooLarge):
        read_capped((piece for raw in chunks for piece in decoder.decode(raw)), CAP)
    assert decoder.produced <= CAP + 65536  # of 256 MiB


def test_a_small_gzip_answer_is_read() -> None:
    body = zlib.compress(b'{"results": [{"id": "d1", "score": 2.0}]}')  # deflate, zlib-wrapped

    def answer(sock: socket.socket, path: str) -> int:
        sock.sendall(head(f"content-encoding: deflate\r\ncontent-length: {len(body)}\r\n") + body)
        return len(body)

    with RawServer(answer) as server, bounded(30):
        ranking = http_backend(server.url + "/s?q={query}").search_one(ServiceSpec(), Query("q1", "x"), 10)
    assert ranking.ranking.doc_ids == ["d1"]


def test_an_encoding_not_asked_for_is_refused() -> None:
    def answer(sock: socket.socket, path: str) -> int:
        sock.sendall(head("content-encoding: br\r\ncontent-length: 4\r\n") + b"\x0b\x01\x80\x03")
        return 4

    with RawServer(answer) as server:
        message = failure(http_backend(server.url + "/s?q={query}"))
    assert "Content-Encoding 'br'" in message and "did not accept" in message, message


# --- the URL: filled values stay where the template puts them


def empty_answer(sock: socket.socket, path: str) -> int:
    body = b'{"results": []}'
    sock.sendall(head(f"content-length: {len(body)}\r\n") + body)
    return len(body)


@pytest.mark.parametrize("text", ["..", ".", "/", "../..", "a/../b", "%2e%2e", "?x=1#y"])
def test_query_text_stays_in_its_path_segment(text: str) -> None:
    with RawServer(empty_answer) as server, bounded(30):
        http_backend(server.url + "/s/{query}/hits?q={query}").search_one(
            ServiceSpec(), Query("q1", text), 10
        )
    path = server.paths[0]
    segment, _, query = path.partition("?")
    parts = segment.split("/")
    assert parts[:2] == ["", "s"] and parts[3:] == ["hits"] and len(parts) == 4, path
    assert unquote(parts[2]) == text and query == "q=" + parts[2].replace("%2E", "."), path


def test_a_placeholder_in_the_host_is_refused() -> None:
    with pytest.raises(ValueError, match="placeholder .query. is in the scheme or host"):
        HttpRequestConfig.model_validate({"url": "http://{query}.example.com/s"})


HEAD_YAML = """\
suite: t
judgments:
  inline:
    - {id: q1, text: "solar panels", relevant: {d1: 1}}
backend:
  type: http
  request:
    url: "URL/s?q={query}"
    headers: HEADERS
  response: {hits: results}
retrievers:
  svc:
    type: service
floors:
  svc:
    ndcg@10: 0.1
"""


@pytest.mark.parametrize(
    "headers",
    ['{X-Tenant: "{tenant}"}', '{X-Q: "q={query}"}', '{Authorization: "Bearer ${BOUNDS_TOKEN}{k}"}'],
)
def test_a_placeholder_in_a_header_is_refused_before_any_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, headers: str
) -> None:
    monkeypatch.setenv("BOUNDS_TOKEN", TOKEN)
    with RawServer(empty_answer) as server:
        path = tmp_path / "s.yaml"
        path.write_text(HEAD_YAML.replace("URL", server.url).replace("HEADERS", headers), encoding="utf-8")
        with bounded(30), pytest.raises(ConfigError) as info:
            run_suite(path)
    one_line(str(info.value), "s.yaml", "backend.request.headers", "holds a {placeholder}")
    assert TOKEN not in str(info.value)
    assert server.paths == []


def test_an_unfilled_placeholder_is_refused_before_any_request() -> None:
    with RawServer(empty_answer) as server, bounded(30):
        b = http_backend(server.url + "/s/{tenant}?q={query}")
        with pytest.raises(ConfigError) as info:
            b.search_batch(ServiceSpec(), [Query("q1", "x"), Query("q2", "y")], 10)
        one_line(str(info.value), "backend.request.url", "{tenant} has no value", "nothing was sent")
        assert server.paths == []
        # a param of the retriever fills it
        b.search_one(ServiceSpec(params=(("tenant", "a/.."),)), Query("q1", "x"), 10)
    assert server.paths == ["/s/a%2F%2E%2E?q=x"]


# --- the python backend: a timeout per call

FUNCTIONS = """
import asyncio, threading

RELEASE = threading.Event()

def hangs(text, k, qid):
    RELEASE.wait(60)
    return []

async def hangs_async(text, k, qid):
    await asyncio.sleep(3600)

async def ignores_cancel(text, k, qid):
    for _ in range(3):
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            pass
    return []

def batch_hangs(texts, k, qids):
    RELEASE.wait(60)
    return []

def fine(text, k, qid):
    return [("d1", 1.0)]
"""


def python_suite(tmp_path: Path, function: str, extra: str = "") -> Path:
    """A suite calling ``function`` of a module of its own (a hung one holds its module)."""
    module = "bounds_fn_" + re.sub(r"\W", "_", tmp_path.name)
    (tmp_path / f"{module}.py").write_text(FUNCTIONS)
    text = HEAD_YAML.split("backend:")[0] + (
        f'backend:\n  type: python\n  function: "{module}:{function}"\n  timeout: 0.5\n'
        + extra.replace("bounds_fn:", f"{module}:")
        + "retrievers:\n  svc:\n    type: service\nfloors:\n  svc:\n    ndcg@10: 0.1\n"
    )
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def release() -> Iterator[None]:
    """Lets a hung sync function return once the case is over (its thread cannot be stopped)."""
    yield
    for name, module in list(sys.modules.items()):
        if name.startswith("bounds_fn_"):
            module.RELEASE.set()
            del sys.modules[name]


@pytest.mark.parametrize(
    "function, extra, fragments",
    [
        ("hangs", "", [":hangs' for query 'q1'", "left running in the background"]),
        ("hangs_async", "", [":hangs_async' for query 'q1'", "cancelled"]),
        ("ignores_cancel", "", ["for query 'q1'", "did not return within 0.5 s"]),
        ("fine", '  batch_function: "bounds_fn:batch_hangs"\n', ["backend.batch_function", "left running"]),
    ],
)
def test_a_hung_python_function_is_an_error_naming_the_query(
    tmp_path: Path, release: None, function: str, extra: str, fragments: List[str]
) -> None:
    path = python_suite(tmp_path, function, extra)
    with bounded(30), pytest.raises(InfrastructureError) as info:
        run_suite(path)
    one_line(str(info.value), "did not return within 0.5 s", "(backend.timeout)", *fragments)


def test_a_python_function_in_time_is_answered(tmp_path: Path) -> None:
    with bounded(30):
        result = run_suite(python_suite(tmp_path, "fine"))
    assert result.retrievers["svc"].evaluation.aggregate["ndcg@10"] == 1.0


@pytest.mark.parametrize("value", ["0", "-1", ".nan", "'soon'", "[1]"])
def test_a_hostile_python_timeout_is_one_line(tmp_path: Path, value: str) -> None:
    path = python_suite(tmp_path, "fine")
    path.write_text(path.read_text().replace("timeout: 0.5", f"timeout: {value}"), encoding="utf-8")
    with bounded(30), pytest.raises(ConfigError) as info:
        load_suite(path)
    one_line(str(info.value), "s.yaml", "backend.timeout")


@pytest.mark.parametrize("value", ["0", "1023", "-5", "1.5", "'64MB'", "true"])
def test_a_hostile_max_response_bytes_is_one_line(tmp_path: Path, value: str) -> None:
    path = tmp_path / "s.yaml"
    text = HEAD_YAML.replace("URL", "http://127.0.0.1:9").replace("    headers: HEADERS\n", "")
    path.write_text(
        text.replace("  response:", f"    max_response_bytes: {value}\n  response:"), encoding="utf-8"
    )
    with bounded(30), pytest.raises(ConfigError) as info:
        load_suite(path)
    one_line(str(info.value), "s.yaml", "backend.request.max_response_bytes")


# --- the LLM judges' SDK clients: the same bounds


def judge(provider: str, url: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    from pytest_retrieval.judge.llm import AnthropicJudge, OpenAICompatibleJudge

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("ANTHROPIC_API_KEY", TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", TOKEN)
    if provider == "anthropic":
        return AnthropicJudge("m", base_url=url, timeout=1.0)
    return OpenAICompatibleJudge("m", base_url=url + "/v1", timeout=1.0)


def judge_failure(provider: str, answer: Callable[..., int], monkeypatch: pytest.MonkeyPatch) -> Any:
    try:
        __import__(provider)
    except ImportError:
        unavailable(f"needs the {provider} SDK (the test extras)")
    with RawServer(answer) as server, bounded(30), pytest.raises(Exception) as info:
        judge(provider, server.url, monkeypatch).complete("is it relevant?")
    one_line(str(info.value), f"{provider} judge ({server.url}")
    assert TOKEN not in str(info.value)
    return info.value


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("answer", [drip_body, drip_head], ids=["body", "headers"])
def test_a_dripping_judge_server_times_out_at_the_deadline(
    provider: str, answer: Callable[..., int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_retrieval.judge.llm import TransientJudgeError

    error = judge_failure(provider, answer, monkeypatch)
    assert isinstance(error, TransientJudgeError) and "timed out after 1 s" in str(error), error


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize(
    "answer", [huge, endless_chunked, "bomb"], ids=["300 MB", "endless chunked", "gzip bomb"]
)
def test_a_huge_judge_answer_stops_at_the_cap(
    provider: str, answer: Any, monkeypatch: pytest.MonkeyPatch, bomb: bytes
) -> None:
    from pytest_retrieval.judge.llm import JudgeError, TransientJudgeError

    def send_bomb(sock: socket.socket, path: str) -> int:
        sock.sendall(head(f"content-encoding: gzip\r\ncontent-length: {len(bomb)}\r\n") + bomb)
        return len(bomb)

    error = judge_failure(provider, send_bomb if answer == "bomb" else answer, monkeypatch)
    assert isinstance(error, JudgeError) and not isinstance(error, TransientJudgeError), error
    assert "larger than the cap of 8 MiB" in str(error) and "after decompression" in str(error), error
