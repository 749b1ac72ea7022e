"""``compare A B``: the gates' own metrics, margins and paired test; suites paired by name and
file; what it could not check fails ``--fail-on-regression`` (exit 2), a regression exit 1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from pytest_retrieval.cli import main
from pytest_retrieval.reports.compare import compare_reports, render_compare_markdown, render_compare_text
from pytest_retrieval.reports.pairing import shared_tail

QIDS = [f"q{i}" for i in range(20)]


def suite(
    values: List[float],
    *,
    name: str = "search",
    file: Optional[str] = "/ci/main/tests/retrieval_search.yaml",
    max_drop: Optional[float] = None,
    seed: int = 0,
    **extra: Any,
) -> Dict[str, Any]:
    """A suite entry of a JSON report: bm25's ndcg@10 per query, a floor on it, and a
    regression gate with ``max_drop`` when given."""
    per_query = {q: {"ndcg@10": v} for q, v in zip(QIDS, values)}
    gated: List[Dict[str, Any]] = [
        {"retriever": "bm25", "metric": "ndcg@10", "kind": "quality", "op": ">=", "threshold": 0.1},
        {"retriever": "bm25", "metric": "p95_ms", "kind": "latency", "op": "<=", "threshold": 100},
    ]
    out: Dict[str, Any] = {
        "suite": name,
        "file": file,
        "retrievers": [
            {
                "name": "bm25",
                "metrics": {"ndcg@10": sum(v or 0.0 for v in values) / 20},
                "per_query": per_query,
            }
        ],
        "gated": gated,
    }
    if max_drop is not None:
        gated.append({"retriever": "bm25", "metric": "ndcg@10", "kind": "regression", "max_drop": max_drop})
        comparison = {"confidence": 0.9, "n_resamples": 2000, "seed": seed}
        out["regressions"] = [
            {"retriever": "bm25", "metric": "ndcg@10", "max_drop": max_drop, "comparison": comparison}
        ]
    out.update(extra)
    return out


SAME = [0.5] * 20
SLIGHTLY_WORSE = [0.5] * 19 + [0.47]  # a mean drop of 0.0015


def report(*suites: Dict[str, Any]) -> Dict[str, Any]:
    return {"version": 1, "suites": list(suites)}


def test_the_margin_is_the_gates_a_max_drop_of_zero_stays_zero() -> None:
    a = report(suite(SAME))
    within = compare_reports(a, report(suite(SLIGHTLY_WORSE)))  # floor only: 0.01
    assert not within.regressions and not within.unchecked()
    zero = compare_reports(a, report(suite(SLIGHTLY_WORSE, max_drop=0.0)))
    (row,) = zero.rows
    assert row.max_drop == 0.0 and row.regressed, row.verdict()
    # the paired test runs as B's regression gate ran it
    assert (row.comparison["confidence"], row.comparison["n_resamples"]) == (0.9, 2000)


def test_the_direction_is_the_gates_a_is_the_reference() -> None:
    better, worse = report(suite(SAME)), report(suite([0.3] * 20))
    assert len(compare_reports(better, worse).regressions) == 1
    (row,) = compare_reports(worse, better).rows
    assert not row.regressed and row.verdict() == "improved"
    # a latency ceiling (lower is better) is not a per-query mean: not compared as one
    assert [r.metric for r in compare_reports(better, worse).rows] == ["ndcg@10"]


@pytest.mark.parametrize(
    ("b", "problem"),
    [
        (report(), "B has no suite"),
        (report(suite(SAME, error="engine down")), "suite search: did not run in B (engine down)"),
        (
            report(suite(SAME, name="other", file="/ci/pr/tests/retrieval_other.yaml")),
            "suite search (/ci/main/tests/retrieval_search.yaml): only in A (missing from B)",
        ),
        (report(suite(SAME, file=None)), "suite search (no file): has no file: suites pair by name and file"),
        (
            report(suite(SAME), suite(SAME)),
            "suite search (/ci/main/tests/retrieval_search.yaml): 2 suites of B pair with it",
        ),
        (report(suite(SAME), "not a suite"), "B: suites[1] is not a suite of a JSON report"),
        (
            {
                **report(suite(SAME)),
                "session": {"collection_errors": [{"nodeid": "x.yaml", "message": "bad\nkey"}]},
            },
            "B: x.yaml could not be collected (bad key)",
        ),
        (
            report(suite([None] + SAME[1:])),
            "bm25 ndcg@10 not compared (per-query values that are not finite numbers)",
        ),
        (
            report(suite(SAME, retrievers=[{"name": "bm25_v2", "metrics": {}, "per_query": {}}])),
            "suite search: retriever bm25 only in A (gated: not compared)",
        ),
    ],
)
def test_what_b_did_not_check_fails_the_comparison(b: Dict[str, Any], problem: str) -> None:
    cmp = compare_reports(report(suite(SAME)), b, names=("A", "B"))
    assert any(problem in p for p in cmp.unchecked()), cmp.unchecked()
    text = render_compare_text(cmp)
    assert "NOT CHECKED: " in text and "not checked" in text.splitlines()[-1]
    assert render_compare_markdown(cmp).startswith("## ⚠️ B against A: no gated regression; ")


def test_suites_pair_by_name_and_file_never_by_name_alone() -> None:
    a = report(
        suite(SAME, file="/ci/main/teams/ads/retrieval_s.yaml"),
        suite([0.9] * 20, file="/ci/main/teams/search/retrieval_s.yaml"),
    )
    # another checkout: each suite meets its own file, whatever the order
    b = report(
        suite([0.9] * 20, file="/builds/pr/teams/search/retrieval_s.yaml"),
        suite(SAME, file="/builds/pr/teams/ads/retrieval_s.yaml"),
    )
    cmp = compare_reports(a, b)
    assert not cmp.unchecked() and not cmp.regressions and len(cmp.rows) == 2
    # the same name in another file is another suite
    other = compare_reports(a, report(suite(SAME, file="/builds/pr/teams/shop/retrieval_t.yaml")))
    assert not other.rows and len(other.unchecked()) == 3
    # two equally good matches: neither is chosen
    tie = compare_reports(a, report(suite(SAME, file="retrieval_s.yaml")))
    assert "matches 2 suites of the reference equally well" in " ".join(tie.unchecked())
    assert shared_tail("C:\\ci\\x\\retrieval_s.yaml", "/ci/x/retrieval_s.yaml") == 3
    assert shared_tail(None, "a.yaml") == 0


@pytest.mark.parametrize(
    ("b", "code"),
    [
        (report(suite(SAME)), 0),
        (report(suite([0.3] * 20)), 1),  # a gated regression
        (report(suite(SAME, error="engine down")), 2),  # not checked: an error, not a pass
        (report(), 2),
    ],
)
def test_fail_on_regression_exit_codes(tmp_path: Path, capsys, b: Dict[str, Any], code: int) -> None:
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(report(suite(SAME))))
    pb.write_text(json.dumps(b))
    assert main(["compare", str(pa), str(pb), "--fail-on-regression"]) == code
    assert main(["compare", str(pa), str(pb)]) == 0  # without the flag: a report, no gate
    out = capsys.readouterr().out
    assert "Traceback" not in out
    assert main(["compare", str(pa), str(pb), "--fail-on-regression", "--json"]) == code
    doc = json.loads(capsys.readouterr().out)
    assert bool(doc["unchecked"]) == (code == 2)


def test_an_asked_latency_metric_is_not_compared_and_says_so() -> None:
    cmp = compare_reports(report(suite(SAME)), report(suite(SAME)), metrics=["p95_ms"])
    assert cmp.unchecked() == ["suite search: bm25 p95_ms not compared (not a per-query quality metric)"]


def test_a_metric_whose_figure_is_not_a_mean_is_not_compared_pairwise():
    # gm_map (geometric mean) and the counts (sum): the paired test on per-query values would
    # judge another figure (the mean AP, the mean count) than the one the report shows.
    from pytest_retrieval.reports.compare import _per_query_quality

    assert _per_query_quality("ndcg'@10") and _per_query_quality("rbp(0.8)@10") and _per_query_quality("map")
    assert not _per_query_quality("gm_map") and not _per_query_quality("num_ret")
    assert _per_query_quality("some_other_figure")  # unknown names: left to the other checks
