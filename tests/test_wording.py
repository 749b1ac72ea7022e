"""One phrase per verdict kind (issue #36 section 3): every view takes its verdict words from
``pytest_retrieval/wording.py``; the retired phrases appear nowhere in the package."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pytest_retrieval.reports.view import Verdict
from pytest_retrieval.stats.paired import paired_comparison
from pytest_retrieval.wording import HEADLINES, VERDICTS, phrase, word

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_retrieval"
RETIRED = (
    "regressed by more than",
    "significantly worse;",
    "pass, non-inferior",
    "ABOVE the ceiling",
    "'SLOWER'",
    "slower than its ceiling",
    "REGRESSED",
)


def test_the_retired_phrases_are_gone_from_the_package():
    found = [
        f"{p.relative_to(PACKAGE)}: {old}"
        for p in PACKAGE.rglob("*.py")
        for old in RETIRED
        if p.name != "wording.py" and old in p.read_text(encoding="utf-8")
    ]
    assert found == []


def _map(xs):
    return {f"q{i}": float(x) for i, x in enumerate(xs)}


def test_a_failed_comparison_reads_regressed_however_far_its_bounds_lie():
    rng = np.random.default_rng(1)
    base = rng.uniform(0.3, 1.0, 200)
    far = paired_comparison(_map(base), _map(base - 0.1), max_drop=0.01)  # all bounds below -0.01
    near = paired_comparison(_map(base), _map(base - 0.008 + rng.normal(0, 0.05, 200)), max_drop=0.01)
    assert far.regressed and near.regressed
    for r in (far, near):
        assert r.verdict_text() == f"FAIL, {phrase('regressed', 0.01)}"
    assert phrase("regressed", 0.01) == "regressed: a drop larger than 0.01 is not ruled out"


def test_each_pass_kind_has_its_own_phrase():
    rng = np.random.default_rng(2)
    base = rng.uniform(0.3, 1.0, 300)
    same = paired_comparison(_map(base), _map(base), max_drop=0.01)
    better = paired_comparison(_map(base), _map(base + 0.05), max_drop=0.01)
    assert same.verdict_text() == f"pass, {phrase('no_drop', 0.01)}"
    assert better.verdict_text() == f"pass, {word('improved')}"


def test_the_table_covers_every_kind_once_and_a_baseline_update_reads_baseline_written():
    assert len({p.text for p in VERDICTS.values()}) == len(VERDICTS)
    v = Verdict(passed=2, skipped=1, gates={"total": 3, "ran": 2, "skipped": 1})
    v.baseline_update = {"written": ["retrieval_x.baseline.json"], "not_written": []}
    line = v.headline(icon=False)
    assert line.startswith(HEADLINES["baseline"] + " retrieval_x.baseline.json;")
    assert "2 of 3 gates ran" in line  # what did not run is still said
    v.baseline_update = {"written": [], "not_written": ["retrieval_x.baseline.json"]}
    assert v.headline(icon=False).startswith(HEADLINES["partial"])  # a baseline not written: never "written"
