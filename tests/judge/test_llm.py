"""LLM-assisted grading against a local fake HTTP server (never a live API): strict parsing,
malformed answers, timeouts, 429 with Retry-After, 5xx, resumable cache, keys never shown,
rate limiting, and a judgment set that a suite gates on."""

from __future__ import annotations

import json
import logging
import re
import textwrap
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from pytest_retrieval.cli import main as cli_main
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.judge.llm import (
    AnthropicJudge,
    CallableJudge,
    GradeParseError,
    JudgeCache,
    JudgePair,
    OpenAICompatibleJudge,
    Prices,
    RetryPolicy,
    grade_pairs,
    parse_grade,
    prompt_template,
)

SECRET = "sk-ant-test-DO-NOT-LEAK-4242"


# ------------------------------------------------------------------ parsing


@pytest.mark.parametrize(
    "text,grade",
    [
        ("2", 2),
        ("0", 0),
        ("3", 3),
        (" 1\n", 1),
        ('"2"', 2),
        ("'3'", 3),
        ("`0`", 0),
        ("**2**", 2),
        ("2.", 2),
        ("Grade: 2", 2),
        ("grade=1", 1),
        ("Score: 3", 3),
        ("##final score: 2", 2),
        ("Relevance 0", 0),
        ("\n\t3 \n", 3),
    ],
)
def test_parse_grade_accepts_a_lone_grade(text: str, grade: int) -> None:
    assert parse_grade(text) == grade


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "4",
        "-1",
        "2.5",
        "2.0",
        "2/3",
        "two",
        "2 or 3",
        "Grade: 2 because it is on topic",
        "I would say 2",
        "2\n3",
        "'2\"",
        "**2*",
        "[2]",
        "12",
        "Grade:",
        "0x2",
        "２"[0:0] + "2 2",
    ],
)
def test_parse_grade_rejects_everything_else(text: str) -> None:
    with pytest.raises(GradeParseError):
        parse_grade(text)


def test_parse_grade_ints_and_non_strings() -> None:
    assert parse_grade(2) == 2
    for bad in (True, 4, -1, 2.0, None):
        with pytest.raises(GradeParseError):
            parse_grade(bad)


def test_prompt_is_versioned_and_asks_for_the_integer_only() -> None:
    p = prompt_template()
    assert p.version == "umbrela-int-v1"
    text = p.render("q {with braces}", "doc {x}")
    assert "Query: q {with braces}" in text and "Passage: doc {x}" in text
    assert "integer" in text and "0, 1, 2 or 3" in text
    custom = prompt_template(text="Q={query} D={document} grade?")
    assert custom.version.startswith("custom-")
    assert prompt_template(text="Q={query} D={document} grade?").version == custom.version
    assert prompt_template("mine-v2", "Q={query} D={document}").version == "mine-v2"
    with pytest.raises(ValueError):
        prompt_template(text="no placeholders")
    with pytest.raises(ValueError):
        prompt_template("nope-v9")


# ------------------------------------------------------------ the fake API


class FakeLLM:
    """An Anthropic- and OpenAI-compatible endpoint on 127.0.0.1 that misbehaves on cue.

    The document text decides: ``[malformed]`` answers prose, ``[slow-once]`` stalls past the
    client timeout on its first request, ``[429-once]`` is rate limited once (Retry-After: 1),
    ``[500]`` always fails with 500, ``[echo-key]`` answers 500 with the caller's key in the
    body. ``healed = True`` makes every document answer normally. The grade is the number of
    query words found in the document, capped at 3."""

    def __init__(self, key: Optional[str] = SECRET, stall: float = 1.5):
        self.key = key
        self.stall = stall
        self.healed = False
        self.requests: Counter = Counter()  # (query, document) -> requests
        self.paths: List[str] = []
        self.headers: List[Dict[str, str]] = []
        self.bodies: List[dict] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                try:
                    fake._handle(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def total(self) -> int:
        return sum(self.requests.values())

    def _send(self, h, status: int, obj, headers: Optional[Dict[str, str]] = None) -> None:
        data = (json.dumps(obj) if not isinstance(obj, str) else obj).encode()
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    def _handle(self, h) -> None:
        body = json.loads(h.rfile.read(int(h.headers["content-length"])))
        prompt = body["messages"][0]["content"]
        m = re.search(r"Query: (.*)\nPassage: (.*?)\n\nSplit this problem", prompt, re.S)
        query, doc = m.group(1), m.group(2)
        with self._lock:
            self.requests[(query, doc)] += 1
            n = self.requests[(query, doc)]
            self.paths.append(h.path)
            self.headers.append({k.lower(): v for k, v in h.headers.items()})
            self.bodies.append(body)
        anthropic = h.path == "/v1/messages"
        # the official SDKs choose the header: x-api-key (Anthropic's documented one) or a bearer token
        bearer = (h.headers.get("authorization") or "").removeprefix("Bearer ") or None
        got_key = (h.headers.get("x-api-key") or bearer) if anthropic else bearer
        if self.key is not None and got_key != self.key:
            return self._send(h, 401, {"error": {"type": "authentication_error"}})
        if not self.healed:
            if "[echo-key]" in doc:
                return self._send(h, 500, {"error": f"internal error for key {got_key}"})
            if "[500]" in doc:
                return self._send(h, 500, {"error": {"type": "api_error"}})
            if "[429-once]" in doc and n == 1:
                return self._send(h, 429, {"error": {"type": "rate_limit_error"}}, {"Retry-After": "1"})
            if "[slow-once]" in doc and n == 1:
                time.sleep(self.stall)
            if "[malformed]" in doc:
                return self._reply(h, anthropic, "The passage seems relevant, maybe a 2?")
        words = {w for w in re.findall(r"\w+", query.lower()) if len(w) > 2}
        grade = min(3, sum(1 for w in words if w in doc.lower()))
        # vary the formatting a little: all of these parse
        text = [f"{grade}", f" {grade}\n", f"Grade: {grade}"][n % 3]
        self._reply(h, anthropic, text)

    def _reply(self, h, anthropic: bool, text: str) -> None:
        if anthropic:
            self._send(
                h,
                200,
                {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                    "usage": {"input_tokens": 100, "output_tokens": 2},
                },
            )
        else:
            self._send(
                h,
                200,
                {
                    "choices": [{"message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 90, "completion_tokens": 1},
                },
            )


@pytest.fixture(autouse=True)
def _no_proxy_for_localhost(monkeypatch):
    # urllib honours *_proxy variables; the fake server must be reached directly
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def fake():
    server = FakeLLM()
    yield server
    server.close()


def _pairs(docs: List[str], query: str = "solar panel efficiency") -> List[JudgePair]:
    return [JudgePair("q1", query, f"d{i}", d) for i, d in enumerate(docs)]


class SleepRecorder:
    def __init__(self):
        self.calls: List[float] = []

    def __call__(self, s: float) -> None:
        self.calls.append(s)


# -------------------------------------------- survive misbehaviour, then resume


def test_survives_malformed_timeouts_429_500_and_rerun_resumes_from_cache(
    fake, tmp_path, monkeypatch, caplog
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    docs = [
        "solar panel efficiency in winter",  # 3
        "wind farms and panel maintenance",  # 1
        "river flood defences",  # 0
        "solar [malformed] heating",  # malformed answer
        "efficiency of solar cells [slow-once]",  # times out once, then 2
        "solar roof panel [429-once]",  # 429 Retry-After: 1 once, then 2
        "panel [500] failure",  # 500 every time
        "solar [500] storms",
    ]  # 500 every time
    pairs = _pairs(docs)
    judge = AnthropicJudge("claude-test", base_url=fake.url, timeout=0.75)
    cache = tmp_path / "cache.jsonl"
    sleeps = SleepRecorder()
    with caplog.at_level(logging.WARNING, logger="pytest_retrieval.judge"):
        r1 = grade_pairs(
            pairs,
            judge,
            cache=cache,
            concurrency=4,
            retry=RetryPolicy(max_retries=2, base_delay=0.01, jitter=False),
            prices=Prices(3.0, 15.0),
            sleep=sleeps,
            progress=False,
        )
    assert (r1.cached, r1.new, r1.failed) == (0, 5, 3)
    assert r1.grades == {("q1", "d0"): 3, ("q1", "d1"): 1, ("q1", "d2"): 0, ("q1", "d4"): 2, ("q1", "d5"): 2}
    failed = {f.doc_id: f.error for f in r1.failures}
    assert set(failed) == {"d3", "d6", "d7"}
    assert "not a lone grade" in failed["d3"] and "maybe a 2?" in failed["d3"]
    assert "HTTP 500" in failed["d6"] and "gave up after 3 attempt(s)" in failed["d6"]
    # logged, never a silent 0
    assert sum("judge failed" in r.getMessage() for r in caplog.records) == 3
    assert ("q1", "d3") not in r1.grades
    # Retry-After honoured (1 s); timeouts and 500s retried with backoff
    assert 1.0 in sleeps.calls
    assert fake.requests[("solar panel efficiency", docs[4])] == 2
    assert fake.requests[("solar panel efficiency", docs[5])] == 2
    assert fake.requests[("solar panel efficiency", docs[6])] == 3
    assert r1.requests == fake.total and r1.retries == 2 + 2 + 1 + 1
    # usage and cost from the API's token counts (malformed answers cost tokens too)
    assert r1.usage_reported and r1.output_tokens == 2 * 6
    assert r1.cost == pytest.approx((r1.input_tokens * 3.0 + r1.output_tokens * 15.0) / 1e6)
    assert "5 new, 3 failed" in r1.summary() and "rerun" in r1.summary()

    # the rerun asks only what failed: nothing cached is asked again
    fake.healed = True
    before = Counter(fake.requests)
    r2 = grade_pairs(pairs, judge, cache=cache, concurrency=4, sleep=sleeps, progress=False)
    asked = fake.requests - before
    assert set(d for _, d in asked) == {docs[3], docs[6], docs[7]}
    assert sum(asked.values()) == 3
    assert (r2.cached, r2.new, r2.failed) == (5, 3, 0) and r2.complete
    assert len(r2.grades) == len(pairs)
    assert r2.grades[("q1", "d3")] == 1

    # a third run is all cache
    before = fake.total
    r3 = grade_pairs(pairs, judge, cache=cache, progress=False)
    assert fake.total == before and r3.cached == len(pairs) and r3.grades == r2.grades


def test_keys_never_appear_in_errors_reports_logs_or_cache(
    fake, tmp_path, monkeypatch, caplog, capsys
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    judge = AnthropicJudge("claude-test", base_url=fake.url, timeout=2)
    assert SECRET not in repr(judge) and SECRET not in repr(vars(judge))
    pairs = _pairs(["solar [echo-key] panel", "solar panel"])
    with caplog.at_level(logging.DEBUG, logger="pytest_retrieval.judge"):
        r = grade_pairs(
            pairs,
            judge,
            cache=tmp_path / "c.jsonl",
            progress=False,
            retry=RetryPolicy(max_retries=1, base_delay=0, jitter=False),
        )
    assert r.failed == 1 and "internal error for key ***" in r.failures[0].error
    # the server did receive the key, in the right header, with the version header
    sent = fake.headers[0]
    assert SECRET in (sent.get("x-api-key"), sent.get("authorization", "").removeprefix("Bearer "))
    assert sent["anthropic-version"] == "2023-06-01" and sent["user-agent"].startswith("Anthropic/Python")
    assert sent["x-stainless-retry-count"] == "0"  # the SDK does not retry: grade_pairs does
    assert fake.paths[0] == "/v1/messages"
    assert fake.bodies[0]["model"] == "claude-test" and fake.bodies[0]["max_tokens"] == 16
    everything = (
        caplog.text
        + r.summary()
        + repr(r)
        + (tmp_path / "c.jsonl").read_text()
        + "".join(capsys.readouterr())
    )
    assert SECRET not in everything


def test_wrong_key_stops_the_run_instead_of_failing_every_pair(fake, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-wrong-key-123456")
    judge = AnthropicJudge("claude-test", base_url=fake.url)
    r = grade_pairs(
        _pairs([f"solar doc {i}" for i in range(40)]),
        judge,
        cache=tmp_path / "c.jsonl",
        concurrency=2,
        progress=False,
    )
    assert r.aborted and "HTTP 401" in r.aborted and "ANTHROPIC_API_KEY" in r.aborted
    assert "sk-wrong-key-123456" not in r.aborted
    assert fake.total <= 4 and r.not_asked >= 36 and not r.complete


def test_missing_key_is_reported_without_a_request(fake, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    r = grade_pairs(
        _pairs(["solar"]), AnthropicJudge("m", base_url=fake.url), cache=tmp_path / "c.jsonl", progress=False
    )
    assert fake.total == 0 and "ANTHROPIC_API_KEY is not set" in (r.aborted or "")


def test_openai_compatible_endpoint(tmp_path, monkeypatch) -> None:
    server = FakeLLM(key="sk-openai-test-999")
    try:
        monkeypatch.setenv("MY_LLM_KEY", "sk-openai-test-999")
        judge = OpenAICompatibleJudge("local-model", base_url=server.url + "/v1", api_key_env="MY_LLM_KEY")
        assert judge.id == "openai:local-model"
        r = grade_pairs(
            _pairs(["solar panel", "nothing here"]), judge, cache=tmp_path / "c.jsonl", progress=False
        )
        assert r.grades == {("q1", "d0"): 2, ("q1", "d1"): 0}
        assert server.paths == ["/v1/chat/completions"] * 2
        assert server.headers[0]["authorization"] == "Bearer sk-openai-test-999"
        assert r.input_tokens == 180 and r.output_tokens == 2
    finally:
        server.close()


def test_cache_key_covers_judge_prompt_query_and_document(fake, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    cache = tmp_path / "c.jsonl"
    a = AnthropicJudge("model-a", base_url=fake.url)
    grade_pairs(_pairs(["solar panel"]), a, cache=cache, progress=False)
    assert fake.total == 1
    # same texts under other ids: cached (the key is the texts, not the ids)
    grade_pairs(
        [JudgePair("other-q", "solar panel efficiency", "other-d", "solar panel")],
        a,
        cache=cache,
        progress=False,
    )
    assert fake.total == 1
    for judge, pair in [
        (AnthropicJudge("model-b", base_url=fake.url), _pairs(["solar panel"])[0]),
        (
            AnthropicJudge(
                "model-a", base_url=fake.url, prompt=prompt_template(text=prompt_template().text + "\n")
            ),
            _pairs(["solar panel"])[0],
        ),
        (a, _pairs(["solar panel"], query="solar panel price")[0]),
        (a, _pairs(["solar panel."])[0]),
    ]:
        before = fake.total
        grade_pairs([pair], judge, cache=cache, progress=False)
        assert fake.total == before + 1


def test_identical_pairs_are_asked_once(fake, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    pairs = [JudgePair(f"q{i}", "solar panel", f"d{i}", "solar panel text") for i in range(5)]
    r = grade_pairs(pairs, AnthropicJudge("m", base_url=fake.url), cache=tmp_path / "c.jsonl", progress=False)
    assert fake.total == 1 and r.new == 5 and len(r.grades) == 5


# ---------------------------------------------------------- crash and resume


def test_crash_mid_run_loses_nothing_that_arrived(tmp_path) -> None:
    calls: List[Tuple[str, str]] = []

    def judge_fn(query: str, document: str) -> int:
        calls.append((query, document))
        if len(calls) == 4:
            raise KeyboardInterrupt  # the process is killed mid-run
        return len(document) % 4

    pairs = [JudgePair("q", "query", f"d{i}", f"document {'x' * i}") for i in range(8)]
    judge = CallableJudge(judge_fn, judge_id="fn")
    cache = tmp_path / "c.jsonl"
    with pytest.raises(KeyboardInterrupt):
        grade_pairs(pairs, judge, cache=cache, concurrency=1, progress=False)
    saved = [json.loads(l) for l in cache.read_text().splitlines()]
    # every answer that arrived is on disk: the three before the crash, and any the worker
    # finished before it saw the stop
    answered = {f"d{i}" for i, _ in enumerate(calls) if i != 3}
    assert {r["doc_id"] for r in saved} == answered >= {"d0", "d1", "d2"}
    assert all(isinstance(r["grade"], int) for r in saved)
    calls.clear()
    r = grade_pairs(pairs, judge, cache=cache, concurrency=1, progress=False)
    assert r.cached == len(saved) and r.new == 8 - len(saved) and len(calls) == r.new
    assert r.grades == {(p.query_id, p.doc_id): len(p.document) % 4 for p in pairs}


def test_torn_last_line_is_skipped_and_never_glued_to(tmp_path) -> None:
    cache = tmp_path / "c.jsonl"
    judge = CallableJudge(lambda q, d: 2, judge_id="fn")
    pairs = [JudgePair("q", "query", f"d{i}", f"doc {i}") for i in range(3)]
    grade_pairs(pairs[:2], judge, cache=cache, progress=False)
    with open(cache, "a") as fh:
        fh.write('{"v": 1, "key": "abc", "gra')  # crash in the middle of a write
    with pytest.warns(UserWarning, match="skipped 1 unreadable line"):
        r = grade_pairs(pairs, judge, cache=cache, progress=False)
    assert (r.cached, r.new) == (2, 1)
    lines = cache.read_text().splitlines()
    assert lines[2].endswith('"gra') and json.loads(lines[3])["grade"] == 2
    with pytest.warns(UserWarning):
        assert len(JudgeCache(cache)) == 3


def test_callable_judge_module_function_and_failures(tmp_path, monkeypatch) -> None:
    (tmp_path / "myjudge.py").write_text(
        textwrap.dedent("""
        def grade(query, document):
            if "boom" in document:
                raise RuntimeError("model exploded")
            if "prose" in document:
                return "it is relevant"
            if "big" in document:
                return 7
            return "Grade: 1" if "one" in document else 3
        grade.prompt_version = "mine-v1"
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    judge = CallableJudge("myjudge:grade")
    assert judge.id == "callable:myjudge:grade" and judge.prompt_version == "mine-v1"
    docs = ["one", "three", "boom", "prose", "big"]
    r = grade_pairs(
        [JudgePair("q", "query", d, d) for d in docs], judge, cache=tmp_path / "c.jsonl", progress=False
    )
    assert r.grades == {("q", "one"): 1, ("q", "three"): 3}
    errors = {f.doc_id: f.error for f in r.failures}
    assert errors["boom"] == "RuntimeError: model exploded"
    assert "not a lone grade" in errors["prose"] and "'7'" in errors["big"]
    with pytest.raises(ConfigError):
        CallableJudge("myjudge:nope")


def test_consecutive_failures_stop_the_run(tmp_path) -> None:
    judge = CallableJudge(lambda q, d: "no idea", judge_id="fn")
    pairs = [JudgePair("q", "query", f"d{i}", f"doc {i}") for i in range(50)]
    r = grade_pairs(
        pairs, judge, cache=tmp_path / "c.jsonl", concurrency=1, max_consecutive_failures=5, progress=False
    )
    assert r.failed == 5 and r.not_asked == 45 and "5 failures in a row" in r.aborted


# --------------------------------------------------------- rate limit, retry


def test_token_bucket_limits_real_threads(tmp_path) -> None:
    stamps: List[float] = []

    def judge_fn(q: str, d: str) -> int:
        stamps.append(time.monotonic())
        return 1

    pairs = [JudgePair("q", "query", f"d{i}", f"doc {i}") for i in range(5)]
    grade_pairs(
        pairs,
        CallableJudge(judge_fn, judge_id="fn"),
        cache=tmp_path / "c.jsonl",
        concurrency=5,
        requests_per_minute=1200,
        progress=False,
    )  # one per 50 ms
    stamps.sort()
    assert stamps[-1] - stamps[0] >= 4 * 0.05 * 0.9


def test_dry_run_counts_and_estimates_without_asking(fake, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    judge = AnthropicJudge("m", base_url=fake.url)
    cache = tmp_path / "c.jsonl"
    grade_pairs(_pairs(["solar panel"]), judge, cache=cache, progress=False)
    r = grade_pairs(
        _pairs(["solar panel", "other", "more"]),
        judge,
        cache=cache,
        dry_run=True,
        prices=Prices(3.0, 15.0),
        progress=False,
    )
    assert fake.total == 1 and r.cached == 1 and r.not_asked == 2
    assert r.estimated_input_tokens > 300 and r.cost > 0 and "dry run" in r.summary()


# ---------------------------------- the command, and a suite that gates on it

CORPUS = [
    {"_id": "d1", "title": "Solar panels", "text": "solar panel efficiency drops in winter"},
    {"_id": "d2", "title": "Wind", "text": "wind turbines offshore"},
    {"_id": "d3", "title": "Floods", "text": "river flood defences for cities"},
    {"_id": "d4", "title": "Flood insurance", "text": "insurance after a river flood"},
    {"_id": "d5", "title": "Gravity", "text": "quantum gravity and loops"},
    {"_id": "d6", "title": "Panels", "text": "solar roofs and panel prices"},
]
QUERIES = [
    {"_id": "q1", "text": "solar panel efficiency"},
    {"_id": "q2", "text": "river flood defences"},
    {"_id": "q3", "text": "quantum gravity"},
]


def _write_suite(root: Path, qrels: str) -> Path:
    with open(root / "corpus.jsonl", "w") as fh:
        fh.writelines(json.dumps(d) + "\n" for d in CORPUS)
    with open(root / "queries.jsonl", "w") as fh:
        fh.writelines(json.dumps(q) + "\n" for q in QUERIES)
    path = root / "retrieval_llm.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        suite: llm-labels
        judgments: {{queries: queries.jsonl, qrels: {qrels}, corpus: corpus.jsonl}}
        latency: {{enabled: false}}
        retrievers:
          bm25: {{type: bm25, fields: [title, text]}}
        floors:
          bm25: {{ndcg@10: 0.9, recall@1: 0.9}}
        """)
    )
    return path


def _verdicts(result) -> Dict[str, bool]:
    from pytest_retrieval.gates.verdicts import compare

    return {
        f"{f.retriever}::{f.metric}": compare(result.value(f.retriever, f.metric), f.op, f.threshold)
        for f in result.suite.floors
    }


def test_llm_command_builds_a_judgment_set_a_suite_gates_on(fake, tmp_path, monkeypatch, capsys) -> None:
    from pytest_retrieval.config.load import load_suite
    from pytest_retrieval.execution.runner import SuiteRunner

    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    suite = _write_suite(tmp_path, "llm.qrels")
    # empty judgment set: llm.qrels does not exist yet; pool every retriever's top 5
    assert cli_main(["judge", "pool", str(suite), "-o", str(tmp_path / "pool.jsonl"), "--depth", "5"]) == 0
    assert "does not exist yet" in capsys.readouterr().err
    argv = [
        "judge",
        "llm",
        str(tmp_path / "pool.jsonl"),
        "--out",
        str(tmp_path / "llm.qrels"),
        "--provider",
        "anthropic",
        "--model",
        "claude-test",
        "--base-url",
        fake.url,
        "--cache",
        str(tmp_path / "cache.jsonl"),
        "--price-input",
        "3",
        "--price-output",
        "15",
        "--no-progress",
        "--failures",
        str(tmp_path / "fail.jsonl"),
    ]
    assert cli_main(argv) == 0
    err = capsys.readouterr().err
    assert "5 pairs: 0 cached, 5 new, 0 failed" in err and "est. cost $" in err
    assert "tokens in 500 / out 10" in err and SECRET not in err
    assert not (tmp_path / "fail.jsonl").exists()
    # rerun: everything from the cache, same labels
    assert cli_main(argv) == 0
    assert fake.total == 5 and "5 cached, 0 new" in capsys.readouterr().err

    result = SuiteRunner(load_suite(suite)).run()
    assert result.judgments.qrels == {"q1": {"d1": 3, "d6": 2}, "q2": {"d3": 3, "d4": 2}, "q3": {"d5": 2}}
    # bm25 puts the best-graded document first everywhere: nDCG@10 = 1 passes its floor;
    # q1 and q2 have two relevant documents each, so recall@1 = (0.5 + 0.5 + 1) / 3 fails
    assert result.value("bm25", "ndcg@10") == pytest.approx(1.0)
    assert result.value("bm25", "recall@1") == pytest.approx(2 / 3)
    assert _verdicts(result) == {"bm25::ndcg@10": True, "bm25::recall@1": False}


def test_llm_command_reports_failures_and_exit_code(fake, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    pool = tmp_path / "pool.csv"
    pool.write_text(
        "query_id,query,doc_id,title,text,grade\n"
        "q1,solar panel,d1,Solar,solar panel,\n"
        "q1,solar panel,d2,Bad,[malformed] solar,\n"
    )
    argv = [
        "judge",
        "llm",
        str(pool),
        "--out",
        str(tmp_path / "out.qrels"),
        "--provider",
        "anthropic",
        "--model",
        "m",
        "--base-url",
        fake.url,
        "--cache",
        str(tmp_path / "c.jsonl"),
        "--failures",
        str(tmp_path / "f.jsonl"),
        "--no-progress",
    ]
    assert cli_main(argv) == 1
    err = capsys.readouterr().err
    assert "1 new, 1 failed" in err and "failed (q1, d2)" in err and "rerun" in err
    assert json.loads((tmp_path / "f.jsonl").read_text())["doc_id"] == "d2"
    assert (tmp_path / "out.qrels").read_text() == "q1 0 d1 2\n"
    fake.healed = True
    assert cli_main(argv) == 0
    assert (tmp_path / "out.qrels").read_text().splitlines() == ["q1 0 d1 2", "q1 0 d2 1"]
