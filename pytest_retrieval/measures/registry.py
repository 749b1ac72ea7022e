"""Every measure, declared once (as ir_measures declares its measures): its name, the other
spellings it is known by, its trec_eval names, its cutoff rule, what it counts in the
judgments, its formula and a one-line definition.

Generated from the declarations: the parser's tables (:func:`.metrics.parse_metric`), the
list of known metrics in error messages (:data:`KNOWN_METRICS`), the formula each metric is
computed by (:func:`.metrics.evaluate_columns`) and the metrics tables of ``docs/explanation/metrics.md`` and
``docs/metrics.md`` (written by ``scripts/make_metrics_table.py``; a test checks both are up
to date). Adding a measure is one :class:`Measure` in :data:`MEASURES` and its formula in
:mod:`.formulas`; a measure trec_eval has also needs its case in
``tests/measures/test_metrics_trec_eval.py`` (a test fails without it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from . import formulas
from .formulas import Formula

__all__ = [
    "Measure",
    "MEASURES",
    "BY_NAME",
    "ALIASES",
    "TREC_CUT",
    "TREC_CUT_RE",
    "KNOWN_METRICS",
    "REFERENCE_METRICS",
    "TREC_EXAMPLES",
    "RELEVANCE",
    "CUTOFF_RULES",
    "readme_table",
    "docs_page",
]

#: What a measure counts in the judgments.
RELEVANCE: Dict[str, str] = {
    "graded": "the grade, as a gain (grades > 0; the threshold is ignored)",
    "binary": "grade >= `relevance_threshold` is relevant",
    "judged": "any judgment (grade 0 and negative grades included)",
    "reference": "the exact top k of a kNN retriever, not the judgments",
}

#: Whether a measure takes a cutoff ``@k``.
CUTOFF_RULES = ("required", "optional", "none")


@dataclass(frozen=True)
class Measure:
    """One measure.

    ``name``: canonical, lower case (``str(Metric)`` prints it). ``aliases``: other spellings
    (ir_measures, ranx), lower case; names are matched case-insensitively. ``trec_eval``:
    trec_eval's name of the measure over the whole ranking (``recip_rank``), also a
    spelling; ``trec_eval_cut``: trec_eval's name with a cutoff, spelt ``<name>_<k>``
    (``ndcg_cut_10``, ``P_10``). ``cutoff``: one of :data:`CUTOFF_RULES`. ``relevance``: a
    key of :data:`RELEVANCE`. ``formula``: its function in :mod:`.formulas` (None for a
    ``reference`` measure, scored elsewhere). ``scope``: which retrievers it applies to,
    when not all. ``doc``: its definition, one line of markdown.
    """

    name: str
    cutoff: str
    relevance: str
    formula: Optional[Formula]
    doc: str
    aliases: Tuple[str, ...] = ()
    trec_eval: Optional[str] = None
    trec_eval_cut: Optional[str] = None
    scope: str = ""

    @property
    def synopsis(self) -> str:
        """``ndcg[@k]``, ``recall@k``, ``r-precision``."""
        return self.name + _CUTOFF_SUFFIX[self.cutoff]

    def spellings(self) -> Tuple[str, ...]:
        """The other names it is parsed from (lower case): aliases, then trec_eval's name."""
        trec = (self.trec_eval.lower(),) if self.trec_eval and self.trec_eval.lower() != self.name else ()
        return self.aliases + trec


_CUTOFF_SUFFIX = {"required": "@k", "optional": "[@k]", "none": ""}

MEASURES: Tuple[Measure, ...] = (
    Measure(
        "ndcg",
        cutoff="optional",
        relevance="graded",
        formula=formulas.ndcg,
        trec_eval="ndcg",
        trec_eval_cut="ndcg_cut",
        doc=(
            "DCG@k / IDCG@k with DCG@k = sum_i (2^rel_i - 1) / log2(i + 1) (profile `exp`) or "
            "rel_i / log2(i + 1) (profile `trec`, as trec_eval); IDCG from the ideal order of all "
            "judged-relevant documents, cut at k. Grades 3,2,0,0,1 give nDCG@5 = 0.988"
        ),
    ),
    Measure(
        "mrr",
        cutoff="optional",
        relevance="binary",
        formula=formulas.mrr,
        aliases=("rr",),
        trec_eval="recip_rank",
        doc="1 / rank of the first relevant document in the top k, else 0",
    ),
    Measure(
        "recall",
        cutoff="required",
        relevance="binary",
        formula=formulas.recall,
        aliases=("r",),
        trec_eval_cut="recall",
        doc="relevant documents in the top k / all relevant documents",
    ),
    Measure(
        "precision",
        cutoff="required",
        relevance="binary",
        formula=formulas.precision,
        aliases=("p",),
        trec_eval_cut="P",
        doc="relevant documents in the top k / k",
    ),
    Measure(
        "map",
        cutoff="optional",
        relevance="binary",
        formula=formulas.average_precision,
        aliases=("ap",),
        trec_eval="map",
        trec_eval_cut="map_cut",
        doc="average precision (over all relevant documents, as trec_eval's `map` and `map_cut_k`)",
    ),
    Measure(
        "r-precision",
        cutoff="none",
        relevance="binary",
        formula=formulas.r_precision,
        trec_eval="Rprec",
        doc="precision at R, R = number of relevant documents",
    ),
    Measure(
        "hit",
        cutoff="required",
        relevance="binary",
        formula=formulas.hit,
        aliases=("success",),
        trec_eval_cut="success",
        doc="1 if any relevant document is in the top k",
    ),
    Measure(
        "judged",
        cutoff="required",
        relevance="judged",
        formula=formulas.judged,
        doc=(
            "share of the top k that has any judgment (grade 0 included): low values mean the "
            "numbers rest on unjudged documents"
        ),
    ),
    Measure(
        "ann_recall",
        cutoff="required",
        relevance="reference",
        formula=None,  # measures/ann.py, against the exact kNN run (execution/runner.py)
        scope="kNN retrievers on the engines",
        doc=(
            "`knn` retrievers on Elasticsearch/OpenSearch: share of the exact k nearest "
            "neighbours the engine's approximate (HNSW) top k holds, per query. Scored against "
            "the exact top k, not the judgments: from the document vectors for a throwaway "
            "index, by the engine's brute-force `script_score` for an existing index (needs "
            "the `lang-painless` module on Elasticsearch). A change of `m`, `ef_construction`, "
            "`num_candidates` or quantisation can cut it while nDCG on a small judgment set "
            "barely moves. A query whose exact top k is empty (no document vector) is an error "
            "naming it, never a recall of 1.0"
        ),
    ),
)

#: canonical name -> its declaration
BY_NAME: Dict[str, Measure] = {m.name: m for m in MEASURES}

#: other spelling (lower case) -> canonical name
ALIASES: Dict[str, str] = {spelling: m.name for m in MEASURES for spelling in m.spellings()}

#: trec_eval name with a cutoff (lower case) -> canonical name: ``ndcg_cut_10``, ``P_10``
#: (trec_eval -m ndcg_cut.10 prints ndcg_cut_10)
TREC_CUT: Dict[str, str] = {m.trec_eval_cut.lower(): m.name for m in MEASURES if m.trec_eval_cut}
TREC_CUT_RE = re.compile(f"({'|'.join(map(re.escape, TREC_CUT))})_([0-9]+)")

#: Metrics scored against a reference run (the exact kNN top k), not against judgments.
REFERENCE_METRICS = tuple(m.name for m in MEASURES if m.relevance == "reference")

# examples in the list of known metrics, checked to parse by the registry's tests
TREC_EXAMPLES = ("ndcg_cut_10", "P_10", "recall_100", "map_cut_10")


def _aliases_listed(m: Measure) -> Tuple[str, ...]:
    """``rr``, ``recip_rank``; ``r@k`` when the measure needs a cutoff."""
    suffix = "@k" if m.cutoff == "required" else ""
    return tuple(s + suffix for s in m.spellings())


def _listed(m: Measure) -> str:
    extras = _aliases_listed(m) + ((m.scope,) if m.scope else ())
    return m.synopsis + (f" ({', '.join(extras)})" if extras else "")


#: The known metrics, as listed in error messages.
KNOWN_METRICS = ", ".join(map(_listed, MEASURES)) + "; trec_eval names such as " + ", ".join(TREC_EXAMPLES)


# --------------------------------------------------------------------------- tables


def readme_table() -> str:
    """The short metrics table (``docs/explanation/metrics.md``): metric, definition."""
    rows = ["| metric | definition |", "|---|---|"]
    rows += [f"| `{m.synopsis}` | {m.doc} |" for m in MEASURES]
    return "\n".join(rows) + "\n"


def _trec_eval_names(m: Measure) -> str:
    names = ([m.trec_eval] if m.trec_eval else []) + ([f"{m.trec_eval_cut}_k"] if m.trec_eval_cut else [])
    return ", ".join(f"`{n}`" for n in names) or "-"


def docs_page() -> str:
    """``docs/metrics.md``: every measure with its spellings, trec_eval names and relevance."""
    head = [
        "# Metrics",
        "",
        "<!-- Generated from pytest_retrieval/measures/registry.py by scripts/make_metrics_table.py;",
        "     do not edit. -->",
        "",
        "Names are case-insensitive; `k` is a positive integer cutoff (`[@k]`: optional, none = the",
        "whole ranking). Every spelling is printed under the canonical name. trec_eval's names are",
        "spellings too (`ndcg_cut_10` = `ndcg@10`), and the metric equals trec_eval's on it",
        "(`tests/measures/test_metrics_trec_eval.py`).",
        "",
        "| metric | also spelt | trec_eval | counts | definition |",
        "|---|---|---|---|---|",
    ]
    rows = [
        f"| `{m.synopsis}` | {', '.join(f'`{s}`' for s in _aliases_listed(m)) or '-'} | "
        f"{_trec_eval_names(m)} | {RELEVANCE[m.relevance]} | {m.doc} |"
        for m in MEASURES
    ]
    return "\n".join(head + rows) + "\n"
