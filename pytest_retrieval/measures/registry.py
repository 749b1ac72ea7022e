"""Every measure, declared once (as ir_measures declares its measures): its name, the other
spellings it is known by, its trec_eval names, its cutoff rule, what it counts in the
judgments, its formula and a one-line definition.

The measures comparing two rankings of one query without judgments (``rbo@10``,
``top1_changed``, ...) are declared in :mod:`.comparison_registry` and listed here with the
others; :mod:`.stability` computes them. Generated from the declarations: the parser's tables (:func:`.metrics.parse_metric`), the
list of known metrics in error messages (:data:`KNOWN_METRICS`), the formula each metric is
computed by (:func:`.metrics.evaluate_columns`), the names in trec_eval, ir_measures and ranx
(:func:`external_names`) and the metrics tables of ``docs/metrics.md`` and
``docs/explanation/metrics.md`` (:mod:`.tables`, written by ``scripts/make_metrics_table.py``;
a test checks both are up to date). Adding a measure is one :class:`Measure` in
:data:`MEASURES` and its formula in :mod:`.formulas` (or :mod:`.formulas_trec`,
:mod:`.formulas_gain`); a measure trec_eval has also needs its case in
``tests/measures/test_metrics_trec_eval.py`` or ``tests/measures/test_measures_trec_eval.py``
(a test fails without it).
"""

from __future__ import annotations

import re
from typing import Dict, Mapping, Optional, Tuple

from . import formulas, formulas_gain, formulas_trec
from .comparison_registry import COMPARISON_MEASURES
from .declaration import AGGREGATES, CUTOFF_RULES, RELEVANCE, Measure, Param

__all__ = [
    "Measure",
    "Param",
    "AGGREGATES",
    "TREC_PARAM",
    "TREC_PARAM_RE",
    "MEASURES",
    "BY_NAME",
    "ALIASES",
    "TREC_CUT",
    "TREC_CUT_RE",
    "KNOWN_METRICS",
    "aliases_listed",
    "REFERENCE_METRICS",
    "COMPARISON_METRICS",
    "TREC_EXAMPLES",
    "RELEVANCE",
    "CUTOFF_RULES",
    "external_names",
]

MEASURES: Tuple[Measure, ...] = (
    Measure(
        "ndcg",
        cutoff="optional",
        relevance="graded",
        formula=formulas.ndcg,
        trec_eval="ndcg",
        trec_eval_cut="ndcg_cut",
        ir_measures="nDCG@{k}|nDCG",
        ranx="ndcg@{k}|ndcg",
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
        ir_measures="RR@{k}|RR",
        ranx="mrr@{k}|mrr",
        doc="1 / rank of the first relevant document in the top k, else 0",
    ),
    Measure(
        "recall",
        cutoff="optional",
        relevance="binary",
        formula=formulas.recall,
        aliases=("r",),
        trec_eval="set_recall",
        trec_eval_cut="recall",
        ir_measures="R@{k}|SetR",
        ranx="recall@{k}|recall",
        doc=(
            "relevant documents in the top k / all relevant documents; without k over the whole "
            "ranking (trec_eval `set_recall`, m_set_recall.c)"
        ),
    ),
    Measure(
        "precision",
        cutoff="optional",
        relevance="binary",
        formula=formulas.precision,
        aliases=("p",),
        trec_eval="set_P",
        trec_eval_cut="P",
        ir_measures="P@{k}|SetP",
        ranx="precision@{k}|precision",
        doc=(
            "relevant documents in the top k / k (a short ranking is padded with non-relevant "
            "ones); without k relevant retrieved / retrieved (trec_eval `set_P`, m_set_P.c)"
        ),
    ),
    Measure(
        "map",
        cutoff="optional",
        relevance="binary",
        formula=formulas.average_precision,
        aliases=("ap",),
        trec_eval="map",
        trec_eval_cut="map_cut",
        ir_measures="AP@{k}|AP",
        ranx="|map",
        doc="average precision (over all relevant documents, as trec_eval's `map` and `map_cut_k`)",
    ),
    Measure(
        "r-precision",
        cutoff="none",
        relevance="binary",
        formula=formulas.r_precision,
        trec_eval="Rprec",
        ir_measures="Rprec",
        ranx="r-precision",
        doc="precision at R, R = number of relevant documents",
    ),
    Measure(
        "hit",
        cutoff="required",
        relevance="binary",
        formula=formulas.hit,
        aliases=("success",),
        trec_eval_cut="success",
        ir_measures="Success@{k}",
        ranx="hit_rate@{k}",
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
        "judged_ret",
        cutoff="required",
        relevance="judged",
        formula=formulas.judged_ret,
        ir_measures="Judged@{k}",
        doc=(
            "judged documents in the top k / min(k, ranking length), 0 for an empty ranking: "
            "ir_measures' `Judged@k` (judged_provider.py). Our `judged@k` divides by k, so a "
            "ranking of 3 judged documents has judged@10 = 0.3, judged_ret@10 = 1.0 (ir_measures' "
            "`Judged@k` is this measure, not `judged@k`; trec_eval 10's `unj_k`, m_unjudged.c, "
            "counts unjudged documents and divides by k)"
        ),
    ),
    Measure(
        "bpref",
        cutoff="none",
        relevance="preference",
        formula=formulas_trec.bpref,
        trec_eval="bpref",
        ir_measures="Bpref",
        doc=(
            "Buckley and Voorhees 2004, as trec_eval's m_bpref.c: (1/R) sum over the relevant "
            "retrieved documents of 1 - min(n, R) / min(N, R), n = judged non-relevant ranked "
            "above it, N = all judged non-relevant; unjudged documents are skipped"
        ),
    ),
    Measure(
        "infap",
        cutoff="none",
        relevance="preference",
        formula=formulas_trec.infap,
        trec_eval="infAP",
        ir_measures="infAP",
        doc=(
            "inferred AP (Yilmaz and Aslam 2006), as trec_eval's m_infap.c: precision above each "
            "relevant document estimated from the judged documents above it, documents without "
            "a judgment counted non-relevant, negative grades (pooled, unjudged) left to the "
            "estimate"
        ),
    ),
    Measure(
        "gm_map",
        cutoff="none",
        relevance="binary",
        formula=formulas_trec.gm_map,
        trec_eval="gm_map",
        aggregate="geometric",
        doc=(
            "geometric mean average precision: per query the AP, over the queries exp(mean(log("
            "max(AP, 0.00001)))) (m_gm_map.c, meas_avg.c; trec_eval prints log(max(AP, 0.00001)) "
            "per query)"
        ),
    ),
    Measure(
        "iprec",
        cutoff="none",
        relevance="binary",
        formula=formulas_trec.iprec,
        aliases=("iprec_at_recall",),
        param=Param("recall", None, 0.0, 1.0),
        trec_eval_param="iprec_at_recall",
        ir_measures="IPrec@{param}",
        doc=(
            "interpolated precision at a recall level (`iprec(0.5)`, ir_measures `IPrec@0.5`, "
            "trec_eval `iprec_at_recall_0.50`): the best precision at any rank whose recall "
            "reaches the level (m_iprec_at_recall.c; the level is floor(level * R + 0.9) relevant "
            "documents, as trec_eval 9.x)"
        ),
    ),
    Measure(
        "11pt_avg",
        cutoff="none",
        relevance="binary",
        formula=formulas_trec.iprec_11pt_avg,
        trec_eval="11pt_avg",
        doc="mean of `iprec` at the recall levels 0.0, 0.1, ..., 1.0 (m_11pt_avg.c)",
    ),
    Measure(
        "set_f",
        cutoff="none",
        relevance="binary",
        formula=formulas.set_f,
        param=Param("beta", 1.0, 0.0, float("inf"), low_open=True, high_open=True),
        trec_eval="set_F",
        ir_measures="SetF(beta={param})",
        doc=(
            "F of set precision P and set recall R: (1 + beta) P R / (beta P + R), 0 without a "
            "relevant document retrieved (m_set_F.c: beta, not beta^2)"
        ),
    ),
    Measure(
        "set_map",
        cutoff="none",
        relevance="binary",
        formula=formulas.set_map,
        trec_eval="set_map",
        ir_measures="SetAP",
        doc="relevant retrieved^2 / (retrieved * R): set precision times set recall (m_set_map.c)",
    ),
    Measure(
        "num_ret",
        cutoff="none",
        relevance="retrieved",
        formula=formulas.num_ret,
        trec_eval="num_ret",
        ir_measures="NumRet",
        aggregate="sum",
        doc="documents retrieved (repeats counted once); the figure over the queries is the sum",
    ),
    Measure(
        "num_rel",
        cutoff="none",
        relevance="binary",
        formula=formulas.num_rel,
        trec_eval="num_rel",
        ir_measures="NumRel",
        aggregate="sum",
        doc="relevant documents judged (R); the figure over the queries is the sum",
    ),
    Measure(
        "num_rel_ret",
        cutoff="none",
        relevance="binary",
        formula=formulas.num_rel_ret,
        trec_eval="num_rel_ret",
        ir_measures="NumRet(rel={rel})",
        aggregate="sum",
        doc="relevant documents retrieved; the figure over the queries is the sum",
    ),
    Measure(
        "rprec_mult",
        cutoff="none",
        relevance="binary",
        formula=formulas_trec.rprec_mult,
        param=Param("mult", None, 0.0, float("inf"), low_open=True, high_open=True),
        trec_eval_param="Rprec_mult",
        doc=(
            "precision at c = floor(mult * R + 0.9) documents (`rprec_mult(0.2)`, trec_eval "
            "`Rprec_mult_0.20`, m_Rprec_mult.c)"
        ),
    ),
    Measure(
        "bing",
        cutoff="none",
        relevance="binary",
        formula=formulas_trec.bin_g,
        trec_eval="binG",
        doc=(
            "binary G (m_binG.c): (1/R) sum over the relevant retrieved documents of 1 / log2(2 + "
            "non-relevant or unjudged documents ranked above it)"
        ),
    ),
    Measure(
        "ndcg_rel",
        cutoff="none",
        relevance="graded",
        formula=formulas_trec.ndcg_rel,
        trec_eval="ndcg_rel",
        doc=(
            "nDCG averaged over the relevant documents (m_ndcg_rel.c): the nDCG at the rank of "
            "each retrieved document with a gain > 0, the nDCG at the end of the ranking for each "
            "one not retrieved, divided by their number"
        ),
    ),
    Measure(
        "rndcg",
        cutoff="none",
        relevance="graded",
        formula=formulas_trec.r_ndcg,
        trec_eval="Rndcg",
        doc=(
            "nDCG averaged at the R levels (m_Rndcg.c): at each rank where the ideal gain drops "
            "(the running count of the documents of each grade > 0, best first), plus the whole "
            "ranking when it is longer than those documents + 1"
        ),
    ),
    Measure(
        "g",
        cutoff="none",
        relevance="graded",
        formula=formulas_trec.normalized_g,
        trec_eval="G",
        doc=(
            "normalised gain G (m_G.c): a document of gain g at rank i adds g / log2(2 + ideal "
            "cost to i - gain retrieved to i), the ideal cost counting at least 1 a rank; the sum "
            "/ the total ideal gain"
        ),
    ),
    Measure(
        "err",
        cutoff="optional",
        relevance="graded",
        formula=formulas_gain.err,
        ir_measures="ERR@{k}",
        doc=(
            "expected reciprocal rank (Chapelle et al. 2009): sum_r (1/r) R_r prod_{i<r} (1 - "
            "R_i), R = (2^g - 1) / 2^gmax, gmax the highest grade of the judgments; unjudged "
            "documents and grades <= 0 have R = 0. ir_measures' `ERR@k` (gdeval) fixes gmax = 4"
        ),
    ),
    Measure(
        "rbp",
        cutoff="optional",
        relevance="binary",
        formula=formulas_gain.rbp,
        param=Param("p", 0.8, 0.0, 1.0, low_open=True, high_open=True),
        ir_measures="|RBP(rel={rel},p={param})",  # cwl_eval: no cutoff
        doc=(
            "rank-biased precision (Moffat and Zobel 2008): (1 - p) sum_i rel_i p^(i-1) over "
            "the top k, p = persistence (default 0.8, as ir_measures; trec_eval 10's `rbp` "
            "defaults to 0.9). The base value: unjudged documents count non-relevant; the "
            "residual (at most p^k, or p^n past a ranking of n) is not added"
        ),
    ),
    Measure(
        "ncg",
        cutoff="optional",
        relevance="graded",
        formula=formulas_gain.ncg,
        doc=(
            "normalised cumulative gain (Jarvelin and Kekalainen 2002): the gains of the top k "
            "/ the gains of the ideal top k (nDCG without the discount; the gain as in nDCG)"
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
) + COMPARISON_MEASURES  # two rankings compared, no judgments: comparison_registry.py

#: canonical name -> its declaration
BY_NAME: Dict[str, Measure] = {m.name: m for m in MEASURES}

#: other spelling (lower case) -> canonical name
ALIASES: Dict[str, str] = {spelling: m.name for m in MEASURES for spelling in m.spellings()}

#: trec_eval name with a cutoff (lower case) -> canonical name: ``ndcg_cut_10``, ``P_10``
#: (trec_eval -m ndcg_cut.10 prints ndcg_cut_10)
TREC_CUT: Dict[str, str] = {m.trec_eval_cut.lower(): m.name for m in MEASURES if m.trec_eval_cut}
TREC_CUT_RE = re.compile(f"({'|'.join(map(re.escape, TREC_CUT))})_([0-9]+)")

#: trec_eval name of a measure with a parameter (lower case) -> canonical name:
#: ``iprec_at_recall_0.50``, ``Rprec_mult_0.20`` (trec_eval prints the parameter with %.2f)
TREC_PARAM: Dict[str, str] = {m.trec_eval_param.lower(): m.name for m in MEASURES if m.trec_eval_param}
TREC_PARAM_RE = re.compile(f"({'|'.join(map(re.escape, TREC_PARAM))})_([0-9]+(?:\\.[0-9]+)?)")

#: Metrics scored against a reference run (the exact kNN top k), not against judgments.
REFERENCE_METRICS = tuple(m.name for m in MEASURES if m.relevance == "reference")

#: Metrics comparing two rankings of one query (stability.py), not scored against judgments.
COMPARISON_METRICS = tuple(m.name for m in MEASURES if m.compares_rankings)

# examples in the list of known metrics, checked to parse by the registry's tests
TREC_EXAMPLES = ("ndcg_cut_10", "P_10", "recall_100", "map_cut_10", "iprec_at_recall_0.50")


def external_names(
    name: str, k: Optional[int] = None, param: Optional[float] = None, threshold: int = 1
) -> Dict[str, Optional[str]]:
    """The metric's name in trec_eval, ir_measures and ranx (None where the tool has no such
    measure): ``("ndcg", 10)`` -> ``ndcg_cut_10``, ``nDCG@10``, ``ndcg@10``. trec_eval's
    names are those it prints (``-m ndcg_cut.10`` prints ``ndcg_cut_10``). The nDCG gain,
    ties and relevance threshold are not in the names: see ``docs/metrics.md``."""
    m = BY_NAME[name]
    if m.trec_eval_param:
        trec = None if param is None else f"{m.trec_eval_param}_{param:.2f}"
    elif k is not None:
        trec = f"{m.trec_eval_cut}_{k}" if m.trec_eval_cut else None
    else:
        trec = m.trec_eval
    fill = {"k": k, "param": None if param is None else repr(float(param)), "rel": threshold}
    return {
        "trec_eval": trec,
        "ir_measures": _template(m.ir_measures, k, fill),
        "ranx": _template(m.ranx, k, fill),
    }


def _template(template: Optional[str], k: Optional[int], fill: Mapping[str, object]) -> Optional[str]:
    """``"nDCG@{k}|nDCG"``: the part before ``|`` names the measure with a cutoff, the part
    after it without; a part without ``{k}`` takes no cutoff; an empty part: no such name."""
    if not template:
        return None
    with_k, _, without_k = template.partition("|") if "|" in template else (template, "", template)
    chosen = with_k if k is not None else without_k
    if not chosen or (k is not None and "{k}" not in chosen) or (k is None and "{k}" in chosen):
        return None
    return chosen.format(**fill)


def aliases_listed(m: Measure) -> Tuple[str, ...]:
    """``rr``, ``recip_rank``; ``r@k`` when the measure needs a cutoff."""
    suffix = "@k" if m.cutoff == "required" else ""
    return tuple(s + suffix for s in m.spellings())


def _listed(m: Measure) -> str:
    extras = aliases_listed(m) + ((m.scope,) if m.scope else ())
    return m.synopsis + (f" ({', '.join(extras)})" if extras else "")


#: The known metrics, as listed in error messages.
KNOWN_METRICS = (
    ", ".join(map(_listed, MEASURES))
    + "; trec_eval names such as "
    + ", ".join(TREC_EXAMPLES)
    + "; judged documents only: a prime, e.g. ndcg'@10"
)
