"""Tracebacks turned into one clear line (issue #28 section 5): tampered JSON reports and their
baseline columns read by ``compare``/``report`` (empty, overflowing, wrong types, null, nested
too deeply), ``evaluate -m ann_recall@10``, ``judge pool -o`` where no folder can be made (a missing
one is created, as ``report`` and ``compare`` do). Each case:
exit status 2 and one line on stderr naming the file (or option) and the place."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest

from pytest_retrieval import cli

from .conftest import BASE, bounded, one_line

Tamper = Callable[[Dict[str, Any]], None]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Dict[str, Any]:
    """A real JSON report with a baseline comparison (embedded backend)."""
    d = tmp_path_factory.mktemp("report")
    (d / "retrieval_s.yaml").write_text(
        BASE + "floors:\n  bm25:\n    ndcg@10: 0.1\nregression:\n  max_drop: {ndcg@10: 0.5}\n"
    )
    run = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    subprocess.run([*run, "--retrieval-baseline-update"], cwd=d, capture_output=True, timeout=300, check=True)
    subprocess.run([*run, "--retrieval-report=r.json"], cwd=d, capture_output=True, timeout=300, check=True)
    return json.loads((d / "r.json").read_text())


def _suite(d: Dict[str, Any]) -> Dict[str, Any]:
    return d["suites"][0]


def _saved(d: Dict[str, Any]) -> Dict[str, Any]:
    return _suite(d)["baseline"]["retrievers"]["bm25"]


def _set(get: Callable[[Dict[str, Any]], Any], key: Any, value: Any) -> Tamper:
    def tamper(d: Dict[str, Any]) -> None:
        get(d)[key] = value

    return tamper


def _column(d: Dict[str, Any]) -> Dict[str, Any]:
    return _saved(d)["per_query"]


def _first_retriever(d: Dict[str, Any]) -> Dict[str, Any]:
    return _suite(d)["retrievers"][0]


BIG = 10**400  # json.dumps writes it out; float() overflows

# (id, tamper, fragments of the one line)
REPORT_CASES: List[Tuple[str, Tamper, List[str]]] = [
    ("baseline column empty", _set(_column, "ndcg@10", {}), ["per_query.ndcg@10", "empty column"]),
    ("baseline column a list", _set(_column, "ndcg@10", [1, 2]), ["per_query.ndcg@10", "got list"]),
    ("baseline column null", _set(_column, "ndcg@10", None), ["per_query.ndcg@10", "got null"]),
    ("baseline value text", _set(lambda d: _column(d)["ndcg@10"], "q1", "1.0"), ["ndcg@10.q1", "got str"]),
    ("baseline value null", _set(lambda d: _column(d)["ndcg@10"], "q1", None), ["ndcg@10.q1", "null"]),
    ("baseline value overflow", _set(lambda d: _column(d)["ndcg@10"], "q1", BIG), ["ndcg@10.q1", "finite"]),
    ("baseline value bool", _set(lambda d: _column(d)["ndcg@10"], "q1", True), ["ndcg@10.q1", "got bool"]),
    ("baseline value list", _set(lambda d: _column(d)["ndcg@10"], "q1", [1]), ["ndcg@10.q1", "got list"]),
    ("baseline aggregate overflow", _set(lambda d: _saved(d)["aggregate"], "ndcg@10", BIG), ["aggregate"]),
    ("baseline aggregate text", _set(lambda d: _saved(d)["aggregate"], "ndcg@10", "x"), ["aggregate"]),
    ("baseline per_query a list", _set(_saved, "per_query", []), ["bm25.per_query", "got list"]),
    ("baseline retriever null", _set(lambda d: _suite(d)["baseline"]["retrievers"], "bm25", None), ["bm25"]),
    ("baseline text", _set(_suite, "baseline", "x"), ["baseline", "got str"]),
    ("baseline top a string", _set(lambda d: _saved(d)["top"], "q1", "d1"), ["top.q1", "got str"]),
    (
        "per-query null",
        _set(lambda d: _first_retriever(d)["per_query"]["q1"], "ndcg@10", None),
        ["q1.ndcg@10"],
    ),
    (
        "per-query text",
        _set(lambda d: _first_retriever(d)["per_query"]["q1"], "ndcg@10", "x"),
        ["q1.ndcg@10"],
    ),
    (
        "per-query overflow",
        _set(lambda d: _first_retriever(d)["per_query"]["q1"], "ndcg@10", BIG),
        ["finite"],
    ),
    ("per-query row null", _set(lambda d: _first_retriever(d)["per_query"], "q1", None), ["per_query.q1"]),
    ("metric overflow", _set(lambda d: _first_retriever(d)["metrics"], "ndcg@10", BIG), ["metrics.ndcg@10"]),
    ("metric text", _set(lambda d: _first_retriever(d)["metrics"], "ndcg@10", "0.5"), ["metrics.ndcg@10"]),
    ("latency overflow", _set(lambda d: _first_retriever(d)["latency_ms"], "p95", BIG), ["latency_ms.p95"]),
    ("retriever null", _set(lambda d: _suite(d)["retrievers"], 0, None), ["retrievers[0]", "got null"]),
    ("retriever name null", _set(_first_retriever, "name", None), ["retrievers[0].name"]),
    ("retrievers null", _set(_suite, "retrievers", None), ["retrievers", "got null"]),
    ("regressions null", _set(_suite, "regressions", None), ["regressions", "got null"]),
    ("comparison null", _set(lambda d: _suite(d)["regressions"][0], "comparison", None), ["comparison"]),
    ("max_drop text", _set(lambda d: _suite(d)["regressions"][0], "max_drop", "x"), ["max_drop"]),
    ("gates null", _set(_suite, "gates", None), ["gates", "got null"]),
    ("gate null", _set(lambda d: _suite(d)["gates"], 0, None), ["gates[0]"]),
    ("gated null", _set(_suite, "gated", None), ["gated"]),
    ("gated metric null", _set(lambda d: _suite(d)["gated"][0], "metric", None), ["gated[0].metric"]),
    ("stages null", _set(_suite, "stages", None), ["stages"]),
    ("suite null", _set(lambda d: d["suites"], 0, None), ["suites[0]", "got null"]),
]

COMMANDS = {
    "compare-a": lambda t, ok: ["compare", t, ok],
    "compare-b": lambda t, ok: ["compare", ok, t],
    "report": lambda t, ok: ["report", t],
    "report-html": lambda t, ok: ["report", t, "--html", str(Path(t).with_suffix(".html"))],
}


def _cli(argv: List[str], capsys) -> Tuple[int, str]:
    with bounded(60):
        rc = cli.main(argv)
    out, err = capsys.readouterr()
    return rc, err


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("tamper,fragments", [c[1:] for c in REPORT_CASES], ids=[c[0] for c in REPORT_CASES])
def test_a_tampered_report_is_one_line(
    tmp_path: Path, report, capsys, command: str, tamper: Tamper, fragments: List[str]
) -> None:
    ok, bad = tmp_path / "ok.json", tmp_path / "tampered.json"
    ok.write_text(json.dumps(report))
    doc = copy.deepcopy(report)
    tamper(doc)
    bad.write_text(json.dumps(doc))
    rc, err = _cli(COMMANDS[command](str(bad), str(ok)), capsys)
    assert rc == 2, err
    one_line(err, "tampered.json: suites[0]", *fragments)


@pytest.mark.parametrize(
    "text,fragment",
    [
        ('{"suites": [' + "[" * 100_000 + "]" * 100_000 + "]}", "nested too deeply"),
        ('{"suites": [{"x": ' + "[" * 500 + "]" * 500 + "}]}", "nested too deeply"),
        ('{"suites": [{"retrievers": [{"name": "a", "metrics": {"m": NaN}}]}]}', "NaN"),
        ('{"suites": [{"retrievers": [{"name": "a", "metrics": {"m": 1e400}}]}]}', "finite"),
        ('{"suites": [{"retrievers": [{"name": "a", "metrics": {"m": ' + "9" * 5000 + "}}]}]}", "digits"),
    ],
    ids=["deep-100000", "deep-500", "nan", "float-overflow", "5000-digit-integer"],
)
@pytest.mark.parametrize("command", ["report", "compare-b"])
def test_a_hostile_json_report_is_one_line(
    tmp_path: Path, report, capsys, command: str, text: str, fragment: str
) -> None:
    ok, bad = tmp_path / "ok.json", tmp_path / "bad.json"
    ok.write_text(json.dumps(report))
    bad.write_text(text)
    rc, err = _cli(COMMANDS[command](str(bad), str(ok)), capsys)
    assert rc == 2, err
    one_line(err, "bad.json", fragment)


def test_the_untampered_report_still_renders_and_compares(tmp_path: Path, report, capsys) -> None:
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(report))
    assert _cli(["compare", str(ok), str(ok)], capsys)[0] == 0
    assert _cli(["report", str(ok)], capsys)[0] == 0


@pytest.fixture
def files(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "qrels.trec").write_text("1 0 d1 1\n1 0 d2 0\n")
    (tmp_path / "r1.trec").write_text("1 Q0 d1 1 2.0 a\n1 Q0 d2 2 1.0 a\n")
    (tmp_path / "retrieval_s.yaml").write_text(textwrap.dedent(BASE) + "floors:\n  bm25:\n    ndcg@10: 0.1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


CLI_CASES = [
    ("evaluate ann_recall", "evaluate qrels.trec r1.trec -m ann_recall@10", ["-m ann_recall@10", "run file"]),
    (
        "evaluate ann_recall json",
        "evaluate qrels.trec r1.trec -m ndcg@10 -m ann_recall@5 --json",
        ["-m ann_recall@5"],
    ),
    (
        "judge pool folder is a file",
        "judge pool retrieval_s.yaml -o afile/pool.csv",
        ["--out afile/pool.csv", "cannot create the folder afile"],
    ),
    (
        "judge pool second folder under a file",
        "judge pool retrieval_s.yaml -o pool.csv -o afile/sub/pool.jsonl",
        ["--out afile/sub/pool.jsonl", "cannot create the folder"],
    ),
    ("judge pool a folder", "judge pool retrieval_s.yaml -o sub.csv", ["--out sub.csv", "directory"]),
]


@pytest.mark.parametrize("argv,fragments", [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
def test_a_command_refused_in_one_line(files: Path, capsys, argv: str, fragments: List[str]) -> None:
    (files / "sub.csv").mkdir()
    (files / "afile").write_text("a file where a folder is asked for\n")
    rc, err = _cli(argv.split(), capsys)
    assert rc == 2, err
    one_line(err, *fragments)
    assert not (files / "pool.csv").exists()  # refused before any work


def test_judge_pool_into_a_missing_folder_creates_it(files: Path, capsys) -> None:
    """As ``report``, ``compare`` and the plugin's outputs do."""
    argv = "judge pool retrieval_s.yaml --include-judged --no-progress -o new/folder/pool.csv"
    rc, err = _cli(argv.split(), capsys)
    assert rc == 0, err
    assert (files / "new" / "folder" / "pool.csv").is_file()


# ------------------------------------------------------------------ _count answers

COUNT_ANSWERS = {
    "html": ("text/html", b"<!DOCTYPE html><html><body>sign in</body></html>"),
    "text": ("text/plain", b"OK"),
    "truncated-json": ("application/json", b'{"count": 1'),
    "empty": ("application/json", b""),
    "json-array": ("application/json", b"[3]"),
    "count-missing": ("application/json", b'{"_shards": {"total": 1}}'),
    "count-null": ("application/json", b'{"count": null}'),
    "count-text": ("application/json", b'{"count": "12"}'),
    "count-fraction": ("application/json", b'{"count": 1.7}'),
    "count-negative": ("application/json", b'{"count": -3}'),
    "count-bool": ("application/json", b'{"count": true}'),
    "count-object": ("application/json", b'{"count": {"value": 3}}'),
}


@pytest.fixture(scope="module")
def count_server():
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    state: Dict[str, Any] = {"answer": COUNT_ANSWERS["html"]}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            content_type, body = state["answer"]
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.send_header("X-Elastic-Product", "Elasticsearch")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", state
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("backend", ["elasticsearch", "opensearch"])
@pytest.mark.parametrize("answer", sorted(COUNT_ANSWERS))
def test_a_count_answer_that_is_no_count_is_one_infrastructure_error(
    count_server, backend: str, answer: str
) -> None:
    from pytest_retrieval.backends.elasticsearch import ElasticsearchBackend
    from pytest_retrieval.backends.opensearch import OpenSearchBackend
    from pytest_retrieval.backends.search_engine.index import count_docs
    from pytest_retrieval.errors import InfrastructureError

    url, state = count_server
    state["answer"] = COUNT_ANSWERS[answer]
    kind = ElasticsearchBackend if backend == "elasticsearch" else OpenSearchBackend
    b = kind(
        {"hosts": [url], "username": "u", "password": "C0untS3cret", "max_retries": 0}, {"name": "products"}
    )
    with bounded(30), pytest.raises(InfrastructureError) as err:
        count_docs(b._http, "products")
    msg = str(err.value)
    one_line(msg, backend, "count of index 'products'")
    assert "C0untS3cret" not in msg and len(msg) < 700


# ------------------------------------------------------------------ an engine fault in a test

FAULT_TESTS = {
    "search": 'r = retrieval_retriever("retrieval_s.yaml", "bm25")\n    r.search("solar", k=3)',
    "search_many": 'r = retrieval_retriever("retrieval_s.yaml", "rrf")\n    r.search_many(["solar", "river"])',
    "suite": 'retrieval_suite("retrieval_s.yaml").value("bm25", "ndcg@10")',
}


@pytest.mark.parametrize("call", sorted(FAULT_TESTS))
def test_an_engine_fault_inside_a_test_is_one_error_line(tmp_path: Path, call: str) -> None:
    """``retrieval_retriever(...).search`` on an engine that is down: an ERROR whose report is
    the one InfrastructureError line (with the test's line), not a trace through the plugin."""
    (tmp_path / "retrieval_s.yaml").write_text(
        BASE
        + "floors:\n  bm25:\n    ndcg@10: 0.1\nbackend:\n  type: elasticsearch\n  connection:\n"
        + "    hosts: ['http://127.0.0.1:1']\n    username: u\n    password: F4ultS3cret\n    max_retries: 0\n"
    )
    (tmp_path / "test_fault.py").write_text(
        f"def test_it(retrieval_retriever, retrieval_suite):\n    {FAULT_TESTS[call]}\n"
    )
    with bounded(300):
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "test_fault.py"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "1 error" in out.splitlines()[-1], out[-3000:]
    lines = [line for line in out.splitlines() if line.startswith("InfrastructureError: elasticsearch")]
    assert len(lines) == 1, out[-3000:]
    one_line(lines[0], "http://127.0.0.1:1", "cannot be reached", "(at test_fault.py:")
    assert "Traceback" not in out and "pytest_retrieval/" not in out and "has failed for" not in out
    assert "F4ultS3cret" not in out
    assert len(out.splitlines()) < 25, out
