"""The Anthropic and OpenAI judges on the official SDKs (issue #12 item 7), against a fake
server at the paid-API boundary (the SDK's ``base_url`` points at it): reasoning models get
``max_completion_tokens`` and no temperature, keyless local servers get no Authorization
header, the server's Retry-After / retry-after-ms / x-should-retry decide the retries, and
a missing SDK is one line naming the extra."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from pytest_retrieval.judge.llm import (
    AnthropicJudge,
    FatalJudgeError,
    JudgeError,
    OpenAICompatibleJudge,
    TransientJudgeError,
    grade_pairs,
    is_reasoning_model,
)
from pytest_retrieval.judge.llm.pairs import JudgePair


class Scripted:
    """Answers each request with the next (status, headers, body) of a script (the last one
    repeats), recording what the SDK sent."""

    def __init__(self) -> None:
        self.script: List[Tuple[int, Dict[str, str], Any]] = []
        self.bodies: List[dict] = []
        self.headers: List[Dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                outer.bodies.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
                outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                status, headers, body = outer.script[min(len(outer.bodies), len(outer.script)) - 1]
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}"


def chat(text: Any, finish: str = "stop") -> Dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 7},
    }


@pytest.fixture
def server(monkeypatch) -> Iterator[Scripted]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    s = Scripted()
    yield s
    s.server.shutdown()
    s.server.server_close()


@pytest.mark.parametrize(
    "model,reasoning",
    [
        ("o1", True),
        ("o1-mini", True),
        ("o3-2025-04-16", True),
        ("o4-mini", True),
        ("gpt-5", True),
        ("gpt-5-mini", True),
        ("gpt-5.1", True),
        ("openai/o3-mini", True),
        ("gpt-4o", False),
        ("gpt-4.1-mini", False),
        ("llama-3.1-8b", False),
        ("qwen2.5:7b", False),
        ("solo3", False),
    ],
)
def test_reasoning_models_are_known_by_name(model: str, reasoning: bool) -> None:
    assert is_reasoning_model(model) is reasoning


def test_reasoning_model_gets_max_completion_tokens_and_no_temperature(server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-1234")
    server.script = [(200, {}, chat("2"))]
    judge = OpenAICompatibleJudge("o3-mini", base_url=server.url + "/v1")
    assert judge.judge("q", "d").text == "2"
    body = server.bodies[-1]
    assert body["max_completion_tokens"] == 2048 and "max_tokens" not in body and "temperature" not in body
    assert server.headers[-1]["authorization"] == "Bearer sk-test-openai-1234"
    # a chat model: max_tokens and temperature, as before
    OpenAICompatibleJudge("gpt-4o", base_url=server.url + "/v1", max_tokens=5).judge("q", "d")
    body = server.bodies[-1]
    assert body["max_tokens"] == 5 and body["temperature"] == 0 and "max_completion_tokens" not in body
    # forced either way
    OpenAICompatibleJudge("my-deployment", base_url=server.url + "/v1", reasoning=True, max_tokens=999).judge(
        "q", "d"
    )
    assert server.bodies[-1]["max_completion_tokens"] == 999 and "temperature" not in server.bodies[-1]


def test_a_reasoning_model_out_of_tokens_is_named(server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-1234")
    server.script = [(200, {}, chat("", finish="length"))]
    with pytest.raises(JudgeError, match=r"used all 64 completion tokens .*raise --max-tokens"):
        OpenAICompatibleJudge("gpt-5-nano", base_url=server.url + "/v1", max_tokens=64).judge("q", "d")


def test_a_keyless_local_server_gets_no_authorization_header(server, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script = [(200, {}, chat("3"))]
    judge = OpenAICompatibleJudge("llama", base_url=server.url + "/v1")
    assert judge.judge("q", "d").text == "3" and "authorization" not in server.headers[-1]


@pytest.mark.parametrize(
    "status,headers,kind,retry_after",
    [
        (429, {"retry-after": "7"}, TransientJudgeError, 7.0),
        (429, {"retry-after-ms": "1500", "retry-after": "9"}, TransientJudgeError, 1.5),
        (503, {}, TransientJudgeError, None),
        (529, {}, TransientJudgeError, None),
        (409, {}, TransientJudgeError, None),
        (500, {"x-should-retry": "false"}, JudgeError, None),
        (400, {"x-should-retry": "true"}, TransientJudgeError, None),
        (400, {}, JudgeError, None),
        (401, {}, FatalJudgeError, None),
        (404, {}, FatalJudgeError, None),
    ],
)
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_status_errors_follow_the_servers_headers(
    server, monkeypatch, provider, status, headers, kind, retry_after
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-5678")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-1234")
    key = "sk-ant-test-5678" if provider == "anthropic" else "sk-test-openai-1234"
    server.script = [(status, headers, {"error": {"type": "x", "message": f"echoed key {key}"}})]
    judge = (
        AnthropicJudge("claude-x", base_url=server.url)
        if provider == "anthropic"
        else OpenAICompatibleJudge("gpt-4o", base_url=server.url + "/v1")
    )
    with pytest.raises(JudgeError) as err:
        judge.judge("q", "d")
    assert type(err.value) is kind, err.value
    assert (
        f"HTTP {status}" in str(err.value)
        and key not in str(err.value)
        and "echoed key ***" in str(err.value)
    )
    if kind is TransientJudgeError:
        assert err.value.retry_after == retry_after
    assert len(server.bodies) == 1  # the SDK itself never retries


def test_retry_after_is_honoured_through_grade_pairs(server, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-5678")
    ok = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "1"}],
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    server.script = [(429, {"retry-after": "2"}, {"error": {"type": "rate_limit_error"}}), (200, {}, ok)]
    sleeps: List[float] = []
    r = grade_pairs(
        [JudgePair("q1", "solar", "d1", "solar panels")],
        AnthropicJudge("claude-x", base_url=server.url),
        cache=tmp_path / "c.jsonl",
        sleep=sleeps.append,
        progress=False,
    )
    assert r.grades == {("q1", "d1"): 1} and r.retries == 1 and 2.0 in sleeps
    assert [h["x-stainless-retry-count"] for h in server.headers] == ["0", "0"]


def test_a_non_json_answer_fails_the_pair_not_the_run(server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-1234")
    server.script = [(200, {}, "<html>proxy login</html>")]
    with pytest.raises(JudgeError) as err:
        OpenAICompatibleJudge("gpt-4o", base_url=server.url + "/v1").judge("q", "d")
    assert not isinstance(err.value, (TransientJudgeError, FatalJudgeError)) and "\n" not in str(err.value)


@pytest.mark.parametrize("provider,extra", [("anthropic", "anthropic"), ("openai", "openai")])
def test_a_missing_sdk_names_the_extra(monkeypatch, provider: str, extra: str) -> None:
    monkeypatch.setitem(sys.modules, extra, None)  # import fails as if not installed
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-5678")
    judge = AnthropicJudge("m") if provider == "anthropic" else OpenAICompatibleJudge("m")
    with pytest.raises(Exception) as err:
        judge.judge("q", "d")
    assert f"pip install 'pytest-retrieval[{extra}]'" in str(err.value)
