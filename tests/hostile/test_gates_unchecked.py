"""Hostile inputs for gates that must not pass on what they did not check (issue #28, part 1):
``compare`` on reports it cannot pair or trust, ``ann_recall@k`` without an exact top k, a
latency gate on too few samples, includes that fan out, latency bounds and team files
merging expectations. Each case: one clear line (or the exact refusal), bounded in time."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Dict, List

import pytest

from pytest_retrieval import cli
from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.gates import Floor, evaluate
from pytest_retrieval.measures.ann import ann_recall
from pytest_retrieval.types import Ranking

from .conftest import BASE, FLOORS, bounded, one_line

# ------------------------------------------------------------------ suite files


def _fan_out(tmp: Path) -> Path:
    """Five levels, each file including the four of the next: 4**5 loads, no cycle."""
    for level in range(5):
        for i in range(4):
            inc = f"include: [{', '.join(f'l{level + 1}_{j}.yaml' for j in range(4))}]\n" if level < 4 else ""
            (tmp / f"l{level}_{i}.yaml").write_text(inc + f"description: l{level}\n")
    (tmp / "base.yaml").write_text(BASE + FLOORS)
    return _suite(tmp, "include: [base.yaml, l0_0.yaml, l0_1.yaml, l0_2.yaml, l0_3.yaml]\n")


def _suite(tmp: Path, text: str) -> Path:
    path = tmp / "retrieval_t.yaml"
    path.write_text(text)
    return path


def _latency(value: str) -> Callable[[Path], Path]:
    return lambda tmp: _suite(tmp, BASE.replace("  warmup: 0\n  repetitions: 1\n", value) + FLOORS)


def _team(team: str) -> Callable[[Path], Path]:
    """The base suite with two expectations, and a team file that includes it."""

    def make(tmp: Path) -> Path:
        expectations = (
            "expectations:\n  - {query: solar, contains: [d1]}\n  - {query: river, contains: [d2]}\n"
        )
        (tmp / "retrieval_base.yaml").write_text(BASE + FLOORS + expectations)
        return _suite(tmp, "include: retrieval_base.yaml\n" + team)

    return make


SUITE_CASES = [
    (
        "include fan-out",
        _fan_out,
        ["l3_3.yaml:1: include[0]: includes fan out to more than 1000 file loads for one suite"],
    ),
    ("warmup huge", _latency("  warmup: 10001\n"), ["latency.warmup", "less than or equal to 10000"]),
    ("warmup astronomical", _latency("  warmup: 99999999999999999999\n"), ["latency.warmup"]),
    ("repetitions huge", _latency("  repetitions: 1000000\n"), ["latency.repetitions", "10000"]),
    (
        "team replaces an expectation with a broken one",
        _team("expectations:\n  - {query: solar, k: 0, contains: [d1]}\n"),
        ["retrieval_t.yaml:3", "expectations[0].k"],
    ),
    (
        "team expectations not a list",
        _team("expectations: {query: solar}\n"),
        ["retrieval_t.yaml", "expectations"],
    ),
    (
        "team expectation not a mapping",
        _team("expectations:\n  - solar\n"),
        ["retrieval_t.yaml:3", "expectations[2]"],
    ),
    (
        "team expectation without a query",
        _team("expectations:\n  - {name: x, contains: [d1]}\n"),
        ["retrieval_t.yaml", "expectations[2]", "exactly one of 'query'"],
    ),
]


@pytest.mark.parametrize(("make", "fragments"), [c[1:] for c in SUITE_CASES], ids=[c[0] for c in SUITE_CASES])
def test_suite_bounds_and_merges_are_one_line(tmp_path: Path, make: Callable, fragments: List[str]) -> None:
    path = make(tmp_path)
    with bounded(60), pytest.raises(ConfigError) as e:
        load_suite(path)
    one_line(str(e.value), *fragments)


def test_a_team_file_never_deletes_the_suites_expectations(tmp_path: Path) -> None:
    path = _team("expectations:\n  - {query: wind, contains: [d1]}\n")(tmp_path)
    with bounded(30):
        got = [e.query for e in load_suite(path).model.expectations]
    assert got == ["solar", "river", "wind"]


# ------------------------------------------------------------------ ann_recall


ANN_CASES = [
    ("no exact run at all", {}, ["q1", "q2"], "2 queries ('q1', 'q2')"),
    ("an empty exact ranking", {"q1": Ranking([], [])}, ["q1"], "query 'q1'"),
    ("a newline in the query id", {}, ["a\nb"], "query 'a\\nb'"),
    ("a huge query id", {}, ["x" * 100_000], "query 'xxxxx"),
    (
        "a million queries",
        {},
        [str(i) for i in range(1_000_000)],
        "1000000 queries ('0', '1', '2', '3', '4' and",
    ),
]


@pytest.mark.parametrize(
    ("exact", "qids", "named"), [c[1:] for c in ANN_CASES], ids=[c[0] for c in ANN_CASES]
)
def test_ann_recall_without_an_exact_top_k_is_an_error(exact: Dict, qids: List[str], named: str) -> None:
    with bounded(30), pytest.raises(InfrastructureError) as e:
        ann_recall({}, exact, 10, qids)
    one_line(str(e.value), "ann_recall@10: the exact top 10 is empty for " + named)
    assert len(str(e.value)) < 600


# ------------------------------------------------------------------ latency samples


def _result(samples: List[float], paired: int = 0) -> Any:
    """A run as the latency gates read it: one retriever's samples and its A/B pairs."""
    ab = SimpleNamespace(paired=lambda: ([1.0] * paired, [1.0] * paired), result=None)
    latency = SimpleNamespace(samples_ms=samples, p50=1.0, p95=1.0, p99=1.0)
    model = SimpleNamespace(latency=SimpleNamespace(verdict="ci", confidence=0.95))
    return SimpleNamespace(
        suite=SimpleNamespace(name="t", model=model),
        retrievers={"bm25": SimpleNamespace(latency=latency, ab=ab)},
    )


LATENCY_CASES = [
    (
        "p95 on one sample",
        _result([1.0]),
        "p95_ms",
        "not enough samples to judge p95: 1 timed request, p95 needs at least 20",
    ),
    ("p95 on 19 samples", _result([1.0] * 19), "p95_ms", "19 timed requests, p95 needs at least 20"),
    (
        "p99 on 99 samples",
        _result([1.0] * 99),
        "p99_ms",
        "not enough samples to judge p99: 99 timed requests",
    ),
    ("p50 on one sample", _result([1.0]), "p50_ms", "p50 needs at least 2"),
    ("p95 ratio on 4 pairs", _result([1.0] * 400, paired=4), "p95_ratio", "judge p95: 4 timed requests"),
    ("p99 ratio on 19 pairs", _result([1.0] * 400, paired=19), "p99_ratio", "p99 needs at least 100"),
]


@pytest.mark.parametrize(
    ("result", "metric", "fragment"), [c[1:] for c in LATENCY_CASES], ids=[c[0] for c in LATENCY_CASES]
)
def test_a_latency_gate_on_too_few_samples_is_an_error(result: Any, metric: str, fragment: str) -> None:
    with bounded(30), pytest.raises(InfrastructureError) as e:
        evaluate(result, Floor("bm25", metric, "<=", 1e9))
    one_line(str(e.value), f"t :: bm25 :: {metric}: ", fragment)


# ------------------------------------------------------------------ compare


def _entry(**over: Any) -> Dict[str, Any]:
    per_query = {f"q{i}": {"ndcg@10": 0.5} for i in range(10)}
    entry = {
        "suite": "s",
        "file": "/ci/tests/retrieval_s.yaml",
        "retrievers": [{"name": "bm25", "metrics": {"ndcg@10": 0.5}, "per_query": per_query}],
        "gated": [
            {"retriever": "bm25", "metric": "ndcg@10", "kind": "quality", "op": ">=", "threshold": 0.1}
        ],
    }
    entry.update(over)
    return entry


def _nan_per_query(value: Any) -> Dict[str, Any]:
    return _entry(retrievers=[{"name": "bm25", "metrics": {}, "per_query": {"q0": {"ndcg@10": value}}}])


COMPARE_CASES = [
    ("no suites", {"suites": []}, "B.json has no suite"),
    ("suites of junk", {"suites": [1, "x", None, []]}, "B.json: suites[3] is not a suite of a JSON report"),
    ("retrievers not a list", {"suites": [_entry(retrievers=7)]}, "suites[0] is not a suite"),
    (
        "retriever names not text",
        {"suites": [_entry(retrievers=[{"name": ["x"]}])]},
        "suites[0] is not a suite",
    ),
    (
        "an errored suite",
        {"suites": [_entry(error="boom\n" + "x" * 10_000)]},
        "suite s: did not run in B.json (boom x",
    ),
    ("a suite without a file", {"suites": [_entry(file=None)]}, "suite s (no file): has no file"),
    ("a file that is a number", {"suites": [_entry(file=3)]}, "has no file"),
    (
        "another file of the same name",
        {"suites": [_entry(file="/ci/other/retrieval_t.yaml")]},
        "only in A.json",
    ),
    (
        "a huge file name",
        {"suites": [_entry(file="/" + "d/" * 50_000 + "retrieval_x.yaml")]},
        "suite s (…/d/d/",
    ),
    (
        "a null per-query value",
        {"suites": [_nan_per_query(None)]},
        "per-query values that are not finite numbers",
    ),
    (
        "a text per-query value",
        {"suites": [_nan_per_query("NaN")]},
        "per-query values that are not finite numbers",
    ),
    (
        "a boolean per-query value",
        {"suites": [_nan_per_query(True)]},
        "per-query values that are not finite numbers",
    ),
    (
        "per-query values not a mapping",
        {"suites": [_entry(retrievers=[{"name": "bm25", "per_query": [1]}])]},
        "suites[0] is not a suite",
    ),
    (
        "no per-query values",
        {"suites": [_entry(retrievers=[{"name": "bm25", "metrics": {"ndcg@10": 1.0}}])]},
        "bm25 ndcg@10 not compared (no per-query values)",
    ),
    (
        "the gated retriever gone",
        {"suites": [_entry(retrievers=[])]},
        "retriever bm25 only in A.json (gated: not compared)",
    ),
    ("two copies of the suite", {"suites": [_entry(), _entry()]}, "2 suites of B.json pair with it"),
    (
        "a collection error",
        {
            "suites": [_entry()],
            "session": {"collection_errors": [{"nodeid": "t.yaml", "message": "a\nb" * 5000}]},
        },
        "B.json: t.yaml could not be collected (a b",
    ),
    (
        "non-finite values in B",
        {"suites": [_entry()], "errors": ["suites[0].x: not a finite number"]},
        "B.json: suites[0].x",
    ),
    ("session not a mapping", {"suites": [_entry(error="x")], "session": [1]}, "did not run in B.json"),
]


@pytest.mark.parametrize(("b", "problem"), [c[1:] for c in COMPARE_CASES], ids=[c[0] for c in COMPARE_CASES])
def test_compare_fails_on_what_it_could_not_check(
    tmp_path: Path, capsys, b: Dict[str, Any], problem: str
) -> None:
    a_path, b_path = tmp_path / "A.json", tmp_path / "B.json"
    a_path.write_text(json.dumps({"version": 1, "suites": [_entry()]}))
    b_path.write_text(json.dumps(b))
    with bounded(60):
        assert cli.main(["compare", str(a_path), str(b_path), "--fail-on-regression"]) == 2
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    if not out.out and out.err.startswith("pytest-retrieval: error: ") and "B.json: " in out.err:
        # a damaged report is refused where it is read (cli/report_file.py): one line, exit 2
        one_line(out.err)
        return
    lines = [ln for ln in out.out.splitlines() if ln.startswith("NOT CHECKED: ")]
    hit = [ln for ln in lines if problem in ln]
    assert hit, (lines, out.err)
    for ln in lines:
        one_line(ln)
        assert len(ln) < 400, ln
    assert out.out.rstrip().splitlines()[-1].startswith("no gated regression; ")
