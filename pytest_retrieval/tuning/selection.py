"""Choosing the best fusion variant and reporting it.

Splits. The tuning and evaluation qrels must not share a query id (a sweep that tunes on the
queries it reports is refused with ``ValueError``): use two qrels files (e.g. BEIR
``train``/``dev`` for tuning and ``test`` for evaluation), or :func:`split_queries` +
:func:`restrict_qrels` on one file.

Choosing the best (deterministic, :func:`selection_key`): the highest tuning-split objective;
exact ties go to a default configuration, then to the earlier variant in grid order (see
:mod:`~pytest_retrieval.tuning.grid`).

Reporting: :class:`SweepResult` (text summary, JSON), the best variant as a suite-file retriever
block (:func:`yaml_block`) and as an OpenSearch search pipeline (:func:`opensearch_pipeline`),
and the best against each default on the evaluation split (:func:`paired_comparison`).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..fusion.config import FusionConfig
from ..measures.metrics import Evaluation
from .grid import format_weight

__all__ = [
    "Qrels",
    "SweepResult",
    "VariantScore",
    "check_disjoint",
    "opensearch_pipeline",
    "paired_comparison",
    "restrict_qrels",
    "selection_key",
    "split_queries",
    "yaml_block",
]

Qrels = Mapping[str, Mapping[str, int]]


# =========================================================================== splits


def split_queries(qids: Iterable[str], fraction: float = 0.5, seed: int = 0) -> Tuple[List[str], List[str]]:
    """Deterministic split of ``qids`` into (tune, evaluate).

    Each id is ranked by ``sha256(f"{seed}:{qid}")``; the ``round(fraction * n)`` lowest go to
    the tuning split. The result depends only on the set of ids and the seed (not on their
    order, the Python version or the platform), and a query keeps its side when others are
    added unless it sits at the boundary. Both lists keep the input order."""
    ids = list(dict.fromkeys(str(q) for q in qids))
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"split fraction must be strictly between 0 and 1, got {fraction!r}")
    if len(ids) < 2:
        raise ValueError(f"cannot split {len(ids)} query id(s) into two non-empty sets")
    n_tune = min(max(int(round(fraction * len(ids))), 1), len(ids) - 1)
    ranked = sorted(ids, key=lambda q: (hashlib.sha256(f"{seed}:{q}".encode()).digest(), q))
    tune = set(ranked[:n_tune])
    return [q for q in ids if q in tune], [q for q in ids if q not in tune]


def restrict_qrels(qrels: Qrels, qids: Iterable[str]) -> Dict[str, Dict[str, int]]:
    """The judgments of ``qids`` only (ids absent from ``qrels`` are skipped)."""
    return {q: dict(qrels[q]) for q in qids if q in qrels}


def check_disjoint(tune_qids: Iterable[str], eval_qids: Iterable[str]) -> None:
    """``ValueError`` (one line) when the two splits share a query id."""
    tune = set(tune_qids)
    shared = [q for q in dict.fromkeys(eval_qids) if q in tune]
    if shared:
        shown = ", ".join(repr(q) for q in shared[:5])
        more = f" and {len(shared) - 5} more" if len(shared) > 5 else ""
        raise ValueError(
            f"sweep refused: {len(shared)} query id(s) are in both the tuning and "
            f"the evaluation split ({shown}{more}); tune and evaluate on disjoint "
            f"queries (split_queries, or separate qrels files)"
        )


# =========================================================================== choosing


@dataclass
class VariantScore:
    config: FusionConfig
    label: str
    tune: float  # objective on the tuning split
    is_default: bool = False
    grid_index: int = 0  # position in grid order (defaults outside the grid come last)


@dataclass
class SweepResult:
    """Every variant's tuning score, the chosen one, and the evaluation-split comparison.

    ``evaluation[label]`` is the :class:`~pytest_retrieval.measures.metrics.Evaluation` on the
    evaluation split of the best variant and of each default (keys are :func:`describe`
    labels; ``best_label`` and ``default_labels`` name them). ``comparison[label]`` compares
    the best with that default on the objective, per evaluation query: mean difference,
    wins / losses / ties, and a two-sided paired sign-flip randomisation p-value
    (10,000 flips, seed 0)."""

    names: Tuple[str, ...]
    objective: str
    metrics: Tuple[str, ...]
    variants: List[VariantScore]
    best: VariantScore
    defaults: List[VariantScore]
    evaluation: Dict[str, Evaluation]
    comparison: Dict[str, Dict[str, float]]
    tune_queries: int
    eval_queries: int
    grid_size: int
    warnings: List[str] = field(default_factory=list)

    @property
    def best_label(self) -> str:
        return self.best.label

    @property
    def default_labels(self) -> List[str]:
        return [d.label for d in self.defaults]

    def ranked(self) -> List[VariantScore]:
        """All scored variants, best first, by the selection rule."""
        return sorted(self.variants, key=selection_key)

    def eval_metrics(self, label: Optional[str] = None) -> Dict[str, float]:
        return dict(self.evaluation[label or self.best.label].aggregate)

    def yaml_block(self, name: str = "hybrid") -> str:
        comment = (
            f"sweep: best of {len(self.variants)} on {self.tune_queries} tuning queries, "
            f"{self.objective} {self.best.tune:.4f}"
        )
        return yaml_block(self.best.config, self.names, name=name, comment=comment)

    def opensearch_pipeline(self) -> Dict[str, Any]:
        return opensearch_pipeline(self.best.config)

    def summary(self, top: int = 10) -> str:
        """A plain-text report: top variants on the tuning split, then the evaluation split."""
        lines = [
            f"fusion sweep over {', '.join(self.names)}: {len(self.variants)} variants "
            f"({self.grid_size} in the grid), objective {self.objective}",
            f"  tuning split: {self.tune_queries} judged queries; evaluation split: "
            f"{self.eval_queries} judged queries (disjoint)",
            f"  top {min(top, len(self.variants))} on the tuning split:",
        ]
        for v in self.ranked()[:top]:
            mark = " (default)" if v.is_default else ""
            lines.append(f"    {v.tune:.4f}  {v.label}{mark}")
        lines.append("  evaluation split:")
        metrics = list(self.metrics)
        width = max(len(self.best.label), *(len(d.label) for d in self.defaults)) + 2
        lines.append("    " + "variant".ljust(width) + "  ".join(m.rjust(10) for m in metrics))
        for label, role in [(self.best.label, "best")] + [(d.label, "default") for d in self.defaults]:
            agg = self.evaluation[label].aggregate
            lines.append(
                "    "
                + f"{label}".ljust(width)
                + "  ".join(f"{agg[m]:10.4f}" for m in metrics)
                + f"   {role}"
            )
        for label, c in self.comparison.items():
            lines.append(
                f"  best vs {label}: {self.objective} {c['mean_delta']:+.4f} "
                f"(wins {int(c['wins'])}, losses {int(c['losses'])}, ties "
                f"{int(c['ties'])}; paired randomisation p = {c['p_value']:.4f})"
            )
        for w in self.warnings:
            lines.append(f"  warning: {w}")
        return "\n".join(lines)

    def as_dict(self) -> Dict[str, Any]:
        """JSON-able: every variant's tuning score, the best, defaults, evaluation metrics,
        comparisons and the two snippets."""
        return {
            "sub_retrievers": list(self.names),
            "objective": self.objective,
            "tune_queries": self.tune_queries,
            "eval_queries": self.eval_queries,
            "grid_size": self.grid_size,
            "variants": [{"label": v.label, "tune": v.tune, "default": v.is_default} for v in self.variants],
            "best": self.best.label,
            "defaults": self.default_labels,
            "evaluation": {
                k: {m: _json_float(x) for m, x in ev.aggregate.items()} for k, ev in self.evaluation.items()
            },
            "comparison": self.comparison,
            "yaml": self.yaml_block(),
            "opensearch_pipeline": self.opensearch_pipeline(),
            "warnings": list(self.warnings),
        }


def _json_float(x: float) -> Optional[float]:
    return None if isinstance(x, float) and math.isnan(x) else x


def selection_key(v: VariantScore) -> Tuple[float, int, int]:
    score = v.tune if not math.isnan(v.tune) else -math.inf
    return (-score, 0 if v.is_default else 1, v.grid_index)


def paired_comparison(
    best: Mapping[str, float], other: Mapping[str, float], flips: int = 10_000, seed: int = 0
) -> Dict[str, float]:
    """Mean difference, wins/losses/ties and a two-sided paired sign-flip randomisation
    p-value ((hits + 1) / (flips + 1)) of ``best - other`` over their common queries."""
    qs = [q for q in best if q in other]
    d = np.array([best[q] - other[q] for q in qs], dtype=np.float64)
    if not len(d):
        return {"mean_delta": math.nan, "wins": 0, "losses": 0, "ties": 0, "p_value": math.nan}
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    rows = max(1, min(flips, 2_000_000 // len(d)))  # bounded memory per chunk
    hits = done = 0
    while done < flips:
        b = min(rows, flips - done)
        signs = rng.integers(0, 2, size=(b, len(d)), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        hits += int((np.abs(signs @ d) / len(d) >= observed - 1e-12).sum())
        done += b
    return {
        "mean_delta": float(d.mean()),
        "wins": int((d > 0).sum()),
        "losses": int((d < 0).sum()),
        "ties": int((d == 0).sum()),
        "p_value": (hits + 1) / (flips + 1),
    }


# =========================================================================== snippets


def yaml_block(config: FusionConfig, of: Sequence[str], name: str = "hybrid", comment: str = "") -> str:
    """The suite-file retriever block for ``config`` (``retrievers:`` entry)."""
    lines = [f"{name}:" + (f"  # {comment}" if comment else "")]
    if config.method == "rrf":
        lines += [
            "  type: rrf",
            f"  of: [{', '.join(of)}]",
            f"  rank_constant: {config.rank_constant}",
            f"  window: {config.window}",
        ]
        if config.semantics in ("opensearch", "elasticsearch"):
            lines.append(f"  semantics: {config.semantics}")
    elif config.method == "weighted":
        lines += [
            "  type: weighted",
            f"  of: [{', '.join(of)}]",
            f"  normalization: {config.normalization}",
            f"  combination: {config.combination}",
        ]
        if config.weights is not None:
            lines.append(f"  weights: [{', '.join(format_weight(w) for w in config.weights)}]")
        lines.append(f"  window: {config.window}")
    else:
        raise ValueError("yaml_block supports rrf and weighted configurations")
    return "\n".join(lines) + "\n"


def opensearch_pipeline(config: FusionConfig, description: Optional[str] = None) -> Dict[str, Any]:
    """The OpenSearch search pipeline body for ``config``: a ``normalization-processor``
    (weighted) or a ``score-ranker-processor`` with ``combination.technique: rrf``. The window
    is not part of the pipeline: it is the hybrid query's ``pagination_depth`` (OpenSearch
    3.0+) or each sub-query's ``size``/``k``. Weights follow the hybrid sub-query order."""
    from ..backends.opensearch import normalization_pipeline, rrf_pipeline

    body: Dict[str, Any] = {}
    if description:
        body["description"] = description
    k, norm, comb = config.rank_constant, config.normalization, config.combination
    if config.method == "rrf":
        assert k is not None  # FusionConfig sets it for rrf
        body.update(rrf_pipeline(k))
    elif config.method == "weighted":
        assert isinstance(norm, str) and comb is not None  # FusionConfig sets both for weighted
        body.update(normalization_pipeline(norm, comb, config.weights))
    else:
        raise ValueError("opensearch_pipeline supports rrf and weighted configurations")
    return body
