"""The measures' declarations (``measures/registry.py``): consistent, parsed under every
spelling, evaluated by their formula, and the documentation tables generated from them."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_retrieval.measures import formulas, formulas_gain, formulas_trec
from pytest_retrieval.measures.metrics import Metric, evaluate, parse_metric
from pytest_retrieval.measures.registry import (
    AGGREGATES,
    ALIASES,
    BY_NAME,
    CUTOFF_RULES,
    KNOWN_METRICS,
    MEASURES,
    RELEVANCE,
    TREC_EXAMPLES,
)
from pytest_retrieval.measures.tables import docs_page, readme_table
from pytest_retrieval.types import Ranking

ROOT = Path(__file__).resolve().parents[2]


def _example(name: str, cutoff: str, param: str = "") -> str:
    return name + param if cutoff == "none" else f"{name}{param}@10"


def _param_text(m) -> str:
    return "" if m.param is None or m.param.default is not None else "(1)"


def _canonical(m) -> Metric:
    return Metric(
        m.name, None if m.cutoff == "none" else 10, None if m.param is None else m.param.default or 1.0
    )


def test_declarations_are_consistent():
    assert len(BY_NAME) == len(MEASURES)
    spellings = [s for m in MEASURES for s in m.spellings()]
    assert len(spellings) == len(set(spellings)), "a spelling names two measures"
    formula_modules = {formulas, formulas_trec, formulas_gain}
    assert not set(spellings) & set(BY_NAME), "a spelling is another measure's name"
    for m in MEASURES:
        assert m.name == m.name.lower() and all(a == a.lower() for a in m.aliases), m
        assert m.cutoff in CUTOFF_RULES and m.relevance in RELEVANCE, m
        assert m.doc and "\n" not in m.doc and "|" not in m.doc, m
        # every measure but a reference or comparison one is computed by a formula of
        # measures/formulas.py
        assert (m.formula is None) == (not m.needs_qrels), m
        if m.formula is not None:
            assert inspect.getmodule(m.formula) in formula_modules, m
        assert m.aggregate in AGGREGATES and m.aggregate in formulas.AGGREGATES, m
        assert (m.trec_eval_param is None) or (m.param is not None), m


@pytest.mark.parametrize("m", MEASURES, ids=lambda m: m.name)
def test_every_spelling_parses_to_the_canonical_name(m):
    canonical = _canonical(m)
    for spelling in (m.name, *m.spellings()):
        for text in (
            _example(spelling, m.cutoff, _param_text(m)),
            _example(spelling.upper(), m.cutoff, _param_text(m)),
        ):
            assert parse_metric(text) == canonical, text
            assert parse_metric(str(canonical)) == canonical
    if m.trec_eval_cut:
        assert parse_metric(f"{m.trec_eval_cut}_10") == Metric(m.name, 10)
    if m.trec_eval_param:
        assert parse_metric(f"{m.trec_eval_param}_0.50") == Metric(m.name, param=0.5)
    if m.trec_eval and m.cutoff != "required":
        assert parse_metric(m.trec_eval) == Metric(m.name)
    assert ALIASES.keys() >= set(m.spellings())


def test_known_metrics_lists_every_measure_and_its_spellings():
    listed = KNOWN_METRICS.split("; trec_eval names such as ")[0]
    for m in MEASURES:
        assert m.synopsis in listed
        assert all(s in listed for s in m.spellings())
    for example in TREC_EXAMPLES:
        assert example in KNOWN_METRICS
        assert parse_metric(example).name in BY_NAME
    with pytest.raises(ValueError) as info:
        parse_metric("nope")
    assert str(info.value).endswith(f"; known metrics: {KNOWN_METRICS}")


@pytest.mark.parametrize("m", [m for m in MEASURES if m.formula is not None], ids=lambda m: m.name)
def test_every_declared_measure_is_evaluated_by_its_formula(m):
    qrels = {"q": {"a": 2, "b": 0, "c": 1}}
    run = {"q": Ranking(["x", "a", "b", "c"], [4.0, 3.0, 2.0, 1.0])}
    metric = parse_metric(_example(m.name, m.cutoff, _param_text(m)))
    ev = evaluate(qrels, run, [metric])
    value = ev.per_query[str(metric)]["q"]
    assert 0.0 < value <= (4.0 if m.relevance == "retrieved" or m.name.startswith("num_") else 1.0)
    assert ev.aggregate[str(metric)] == value


def test_reference_measures_are_left_to_their_own_scorer():
    reference = [m.name for m in MEASURES if m.relevance == "reference"]
    assert reference == ["ann_recall"]
    ev = evaluate({"q": {"a": 1}}, {"q": Ranking(["a"], [1.0])}, ["ann_recall@10", "ndcg@10"])
    assert list(ev.per_query) == ["ndcg@10"]


# --------------------------------------------------------------------------- documentation


def test_docs_tables_are_the_generated_ones():
    # the README's "Metrics" section moved to docs/explanation/metrics.md (issue #26)
    explained = (ROOT / "docs" / "explanation" / "metrics.md").read_text(encoding="utf-8")
    assert readme_table() in explained, (
        "docs/explanation/metrics.md's metrics table is stale: run python scripts/make_metrics_table.py"
    )
    docs = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert docs == docs_page(), "docs/metrics.md is stale: run python scripts/make_metrics_table.py"
    for m in MEASURES:
        assert f"| `{m.synopsis}` |" in docs


def test_make_metrics_table_check_passes_on_the_repository():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_metrics_table.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
