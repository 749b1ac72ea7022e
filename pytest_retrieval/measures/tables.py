"""The metrics tables generated from the measures' declarations (:mod:`.registry`):
``docs/metrics.md`` (:func:`docs_page`) and a short table for a front page
(:func:`readme_table`), written by ``scripts/make_metrics_table.py``."""

from __future__ import annotations

from typing import Optional

from .registry import MEASURES, RELEVANCE, Measure, aliases_listed

__all__ = ["readme_table", "docs_page"]


def readme_table() -> str:
    """A short metrics table (metric, definition) for a front page; ``docs/metrics.md`` is
    the full one."""
    rows = ["| metric | definition |", "|---|---|"]
    rows += [f"| `{m.synopsis}` | {m.doc} |" for m in MEASURES]
    return "\n".join(rows) + "\n"


def _trec_eval_names(m: Measure) -> str:
    names = ([m.trec_eval] if m.trec_eval else []) + ([f"{m.trec_eval_cut}_k"] if m.trec_eval_cut else [])
    names += [f"{m.trec_eval_param}_x.xx"] if m.trec_eval_param else []
    return ", ".join(f"`{n}`" for n in names) or "-"


def _tool_names(template: Optional[str]) -> str:
    if not template:
        return "-"
    parts = [p for p in template.split("|") if p]
    shown = (p.replace("{k}", "k").replace("{param}", "x").replace("{rel}", "t") for p in parts)
    return ", ".join(f"`{p}`" for p in shown)


_DOCS_HEAD = """# Metrics

<!-- Generated from pytest_retrieval/measures/registry.py by scripts/make_metrics_table.py;
     do not edit. -->

Names are case-insensitive; `k` is a positive integer cutoff (`[@k]`: optional, none = the
whole ranking); `(x)` is a measure's parameter (`rbp(0.9)`, also `rbp(p=0.9)`; `[(x)]`: it
has a default). Every spelling is printed under the canonical name. trec_eval's names are
spellings too (`ndcg_cut_10` = `ndcg@10`, `iprec_at_recall_0.50` = `iprec(0.5)`), and the
metric equals trec_eval's (pytrec_eval's) on it: `tests/measures/test_metrics_trec_eval.py`
and `tests/measures/test_measures_trec_eval.py` compare every one of them per query and over
the queries. The ir_measures and ranx columns name the same measure in those tools (`t` is
the relevance threshold); `tests/measures/test_measures_models.py` computes every one of
those names in ir_measures and ranx and checks the values equal ours, and checks ERR, RBP,
NCG and the condensed lists against implementations written there from the papers.

Conventions the names do not carry: nDCG's gain is the suite's `evaluation.profile` (`exp`:
2^g - 1, `trec`: g as trec_eval, ir_measures' `nDCG` and ranx's `ndcg`; ir_measures'
`nDCG(dcg='exp-log2')` and ranx's `ndcg_burges` are `exp`); ties are broken as
`evaluation.ties` says (`trec`: score descending, then document id descending, as trec_eval;
ir_measures and ranx sort a run by score themselves, and ir_measures' `RR` goes to its
msmarco provider, which breaks ties by document id ascending).

## Judged documents only (condensed lists)

`ndcg'@10` (or `condensed(ndcg@10)`) scores the ranking with every document that has no
judgment removed first, the documents below moving up (Sakai 2007, "Alternatives to Bpref";
trec_eval's `-J`, `judged_docs_only_flag`, which also drops negative grades: so do we).
Any measure but `judged`/`judged_ret` takes the prime: `map'`, `precision'@10`, `rbp(0.8)'`.
A prime metric is a metric like any other: in `evaluation.metrics`, floors, the baseline
comparison (`regression.max_drop: {"ndcg'@10": 0.01}`), `compare -m`, `evaluate -m`.
The condensed list is cut from the ranking as retrieved (`evaluation.depth` deep), so its
top 10 may come from far below rank 10. When a new retriever brings unjudged documents
into the top 10, `ndcg@10` counts them non-relevant and drops; `ndcg'@10` compares what
was judged (it is biased the other way: a run of only unjudged documents scores as the
judged ones it has), so gating both tells "worse" from "unjudged".

## `judged@k` and `judged_ret@k`

`judged@k` divides the judged documents of the top k by k, a short ranking counting its
missing places as unjudged; `judged_ret@k` divides by the documents there are
(min(k, ranking length)), as ir_measures' `Judged@k`. trec_eval 10's `unj_k`
(m_unjudged.c) is the other side, unjudged documents (and negative grades) over k.

## Figures over the queries

A measure's figure over the queries is the mean of its per-query values, except
`gm_map` (geometric mean, values floored at 0.00001, trec_eval's `te_calc_avg_meas_s_gm`)
and the counts `num_ret`, `num_rel`, `num_rel_ret` (the sum, as trec_eval prints them).
The counts are reported, never gated (a floor or baseline comparison on one is refused);
`gm_map` can be a floor but not a baseline comparison, which tests a mean difference.

## Comparing two rankings (no judgments)

`rbo@k`, `rbo_min@k`, `rbo_res@k`, `jaccard@k`, `overlap@k`, `top1_changed`,
`topk_changed@k`, `kendall_tau@k` and `rank_change@k` compare two rankings of one query, a
reference's (the baseline's, a stored run's) and this run's, and need no judgments: they say
how much the rankings moved, on any query, labelled or not (issue #33). `evaluate` never
scores them against qrels (`evaluate -m rbo@10` is refused); `measures/stability.py` computes
them on arrays, one value per query.

Rank-biased overlap (W. Webber, A. Moffat, J. Zobel, "A similarity measure for indefinite
rankings", ACM TOIS 28(4), 2010): with X_d the documents the two rankings share in their first
d and persistence p (`rbo(0.9)@10`; 0.9 when not given: the first 10 ranks carry 86% of the
weight, the paper's eq. 21), RBO = (1 - p) sum_{d >= 1} p^(d-1) X_d / d. On the top k only
part of that sum is seen, so three numbers are reported:

- `rbo_min@k` (eq. 11): the lower bound, every document past the top k assumed disjoint;
- `rbo_res@k` (eq. 30): the residual, what those unseen documents could still add. The
  full rankings' RBO lies in [rbo_min, rbo_min + rbo_res]: the residual is the uncertainty
  that comes from looking at the top k only (0.144 for two identical top 10 at p = 0.9;
  it shrinks as k grows);
- `rbo@k` (RBO_ext, eq. 32): the point estimate, the agreement seen at depth k carried past
  it. Two identical top 10 have rbo@10 = 1 and rbo_min@10 = 0.856; this is the one to gate.

A ranking shorter than k (the retriever returned fewer documents) is an uneven list, as the
paper's section 4.3 treats it. Two empty rankings are identical (1, residual 0); an empty and a
non-empty one share nothing (0, residual 0). `jaccard@k` is |A n B| / |A u B| of the two
top-k sets, `overlap@k` |A n B| / the longer top k (the paper's agreement A_k when both hold
k). `top1_changed` and `topk_changed@k` are 0 or 1 per query (the top k compared as ordered
lists): their mean is the share of queries that changed. `kendall_tau@k` is Kendall's tau
between the two ranks of the documents in both top k and `rank_change@k` their mean absolute
rank change; both are undefined (NaN, counted apart, never averaged in) when too few
documents are shared (two for tau, one for the rank change). Checked against a transcription of
the paper's formulas and the `rbo` package (10,000 random pairs, 1e-12) and scipy's
`kendalltau` (`tests/measures/test_stability.py`).

## Measures

| metric | also spelt | trec_eval | ir_measures | ranx | counts | definition |
|---|---|---|---|---|---|---|
"""


def docs_page() -> str:
    """``docs/metrics.md``: every measure with its spellings, names in trec_eval, ir_measures
    and ranx, what it counts and its definition."""
    rows = [
        f"| `{m.synopsis}` | {', '.join(f'`{s}`' for s in aliases_listed(m)) or '-'} | "
        f"{_trec_eval_names(m)} | {_tool_names(m.ir_measures)} | {_tool_names(m.ranx)} | "
        f"{RELEVANCE[m.relevance]} | {m.doc} |"
        for m in MEASURES
    ]
    return _DOCS_HEAD + "\n".join(rows) + "\n"
