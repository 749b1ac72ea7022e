"""Fusion sweeps: replay every fusion variant offline from candidates fetched once.

Pure (no I/O). Each sub-retriever is queried once, deep enough for the largest window (a
:class:`~pytest_retrieval.types.Run` per sub-retriever, with scores); every variant of the grid
(:mod:`~pytest_retrieval.tuning.grid`) is then fused from those candidates, exactly as
:func:`pytest_retrieval.fusion.semantics.fuse_runs` would fuse them
(:mod:`~pytest_retrieval.fusion.replay`), scored with
:func:`pytest_retrieval.measures.metrics.evaluate` on a *tuning* split, and the best variant
(:mod:`~pytest_retrieval.tuning.selection`) is then measured once on a disjoint *evaluation*
split next to the default configurations. Each variant's top k is scored by the one metric
engine; with the engine's order a metric @k reads only the top k, so the tuning pass fuses no
deeper.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..fusion.candidates import query_order
from ..fusion.config import FusionConfig
from ..fusion.replay import Replayer
from ..measures.metrics import Evaluation, evaluate, parse_metric
from ..types import Run
from .grid import SweepGrid, default_configs, describe
from .selection import Qrels, SweepResult, VariantScore, check_disjoint, paired_comparison, selection_key

if TYPE_CHECKING:
    from ..measures.columnar import QrelsColumns, RunColumns

__all__ = ["sweep"]


def sweep(
    runs: Union[Mapping[str, Run], Sequence[Run]],
    tune_qrels: Qrels,
    eval_qrels: Qrels,
    *,
    grid: Optional[SweepGrid] = None,
    objective: str = "ndcg@10",
    metrics: Sequence[str] = ("ndcg@10", "mrr@10", "recall@100"),
    gain: str = "exp",
    ties: str = "engine",
    relevance_threshold: int = 1,
    depth: int = 100,
    default_window: Optional[int] = None,
    average_over: str = "relevant",
) -> SweepResult:
    """Replay the grid on the tuning queries, pick the best, report it on the evaluation ones.

    ``runs``: ``{name: Run}`` per sub-retriever (names go into the YAML ``of``; a plain
    sequence is named ``r1``, ``r2``, ...), each ranking its top candidates with scores, fetched
    at least as deep as the largest window. ``tune_qrels`` / ``eval_qrels``: the judgments of
    the two splits; their query ids must be disjoint (else ``ValueError``). ``objective``
    picks the best; ``metrics`` are reported on the evaluation split. Each fused ranking is
    cut to ``depth`` before evaluation (the suite's ``evaluation.depth``); ``gain``, ``ties``,
    ``relevance_threshold`` and ``average_over`` go to :func:`~..measures.metrics.evaluate`
    (``gain`` also takes the profile names ``exp`` / ``trec``), so a sweep averages as the gates
    do. The defaults are scored with ``default_window`` (default: the largest grid window)."""
    names, run_list = _named_runs(runs)
    check_disjoint(tune_qrels, eval_qrels)
    grid = grid or SweepGrid()
    objective, report = _objective_and_report(objective, metrics)
    _check_positive("depth", depth)
    _check_positive("default_window", default_window, optional=True)
    # the suite's evaluation.profile names are accepted too: exp, trec (= linear gain)
    scoring = _Scoring("linear" if gain == "trec" else gain, ties, relevance_threshold, average_over)

    warnings: List[str] = []
    fetched, windows = _windows(run_list, grid, warnings)
    tune_ids, eval_ids, present = _judged_splits(tune_qrels, eval_qrels, run_list, warnings, average_over)
    grid_configs = grid.configs(len(run_list), fetched)
    default_window = default_window or max(windows)
    defaults = default_configs(len(run_list), default_window, grid.rrf_semantics, grid.tie_break)
    variants, default_scores = _variants(grid_configs, defaults)
    replays = _Replays(run_list, present)
    _score_tuning(variants, replays, tune_ids, tune_qrels, objective, depth, scoring)
    best = min(variants, key=selection_key)
    evaluation = _evaluate([best] + default_scores, replays, eval_ids, eval_qrels, report, depth, scoring)
    return SweepResult(
        names=names,
        objective=objective,
        metrics=tuple(report),
        variants=variants,
        best=best,
        defaults=default_scores,
        evaluation=evaluation,
        comparison=_comparison(best, default_scores, evaluation, objective),
        tune_queries=len(tune_ids),
        eval_queries=len(eval_ids),
        grid_size=len(grid_configs),
        warnings=warnings,
    )


@dataclass(frozen=True)
class _Scoring:
    """How fused runs are scored: :func:`~pytest_retrieval.measures.metrics.evaluate`'s options."""

    gain: str
    ties: str
    relevance_threshold: int
    average_over: str = "relevant"

    def __post_init__(self) -> None:
        from ..measures.aggregate import check_average_over

        check_average_over(self.average_over)  # refused before any work

    def evaluate(self, qrels: QrelsColumns, run: RunColumns, metrics: Sequence[str]) -> Evaluation:
        return evaluate(
            qrels,
            run,
            metrics,
            gain=self.gain,
            ties=self.ties,
            relevance_threshold=self.relevance_threshold,
            average_over=self.average_over,
        )

    def tune_k(self, objective: str, depth: int) -> int:
        """How deep the tuning pass fuses: with the engine's order, a metric @k reads only the
        top k of each ranking (same values as cutting at ``depth``); not a condensed metric
        (``ndcg'@10``), whose top k are the first k judged documents, however deep."""
        obj = parse_metric(objective)
        if self.ties == "engine" and obj.k is not None and obj.name != "r-precision" and not obj.condensed:
            return min(depth, obj.k)
        return depth


class _Replays:
    """One :class:`~pytest_retrieval.fusion.replay.Replayer` per (window, tie rule, split), built
    on first use over the split's queries that some run holds."""

    def __init__(self, runs: List[Run], present: Sequence[str]):
        self.runs = runs
        self.present = set(present)
        self._replayers: Dict[Tuple[int, str, bool], Replayer] = {}

    def columns(
        self, cfg: FusionConfig, ids: Sequence[str], split: bool, k: int, qrels: QrelsColumns, ties: str
    ) -> RunColumns:
        """The fused run of ``ids`` as the metric engine's columns (``Replayer.columns``)."""
        key = (cfg.window, cfg.tie_break, split)
        if key not in self._replayers:
            qids = [q for q in ids if q in self.present]
            self._replayers[key] = Replayer(self.runs, qids, cfg.window, cfg.tie_break)
        return self._replayers[key].columns(cfg, qrels, ties=ties, k=k)


def _named_runs(runs: Union[Mapping[str, Run], Sequence[Run]]) -> Tuple[Tuple[str, ...], List[Run]]:
    if isinstance(runs, Mapping):
        names = tuple(str(n) for n in runs)
        run_list = [runs[n] for n in runs]
    else:
        run_list = list(runs)
        names = tuple(f"r{i + 1}" for i in range(len(run_list)))
    if len(run_list) < 2:
        raise ValueError(f"a fusion sweep needs at least two sub-retriever runs, got {len(run_list)}")
    return names, run_list


def _objective_and_report(objective: str, metrics: Sequence[str]) -> Tuple[str, List[str]]:
    """The objective's canonical name, and the metrics to report (the objective first)."""
    objective = str(parse_metric(objective))
    return objective, list(dict.fromkeys([objective] + [str(parse_metric(m)) for m in metrics]))


def _check_positive(what: str, value: object, optional: bool = False) -> None:
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"sweep {what} must be an integer >= 1, got {value!r}")


def _windows(runs: List[Run], grid: SweepGrid, warnings: List[str]) -> Tuple[int, Tuple[int, ...]]:
    """(the deepest candidate list fetched, the windows swept)."""
    fetched = max((len(r) for run in runs for r in run.values()), default=0)
    if fetched == 0:
        raise ValueError("the sub-retriever runs hold no candidates")
    windows = grid.windows or (fetched,)
    if max(windows) > fetched:
        warnings.append(
            f"window {max(windows)} exceeds the deepest candidate list fetched "
            f"({fetched}): larger windows see the same candidates"
        )
    return fetched, windows


def _judged_splits(
    tune_qrels: Qrels, eval_qrels: Qrels, runs: List[Run], warnings: List[str], average_over: str
) -> Tuple[List[str], List[str], List[str]]:
    """(judged tuning ids, judged evaluation ids, the ids some run holds); a split without a
    relevant judgment is refused, judged ids in no run are warned about. Under ``average_over:
    relevant`` the splits hold the queries with a relevant judgment; under ``judged`` and
    ``run`` every judged query, as the suite's means (``measures/aggregate.py``)."""

    def relevant(qrels: Qrels) -> List[str]:
        return [q for q, js in qrels.items() if any(g > 0 for g in js.values())]

    if not relevant(tune_qrels):
        raise ValueError("the tuning split has no query with a relevant judgment")
    if not relevant(eval_qrels):
        raise ValueError("the evaluation split has no query with a relevant judgment")
    if average_over == "relevant":
        tune_ids, eval_ids = relevant(tune_qrels), relevant(eval_qrels)
    else:
        tune_ids, eval_ids = list(tune_qrels), list(eval_qrels)
    present = query_order(runs)
    have = set(present)
    for what, ids in (("tuning", tune_ids), ("evaluation", eval_ids)):
        absent = [q for q in ids if q not in have]
        if absent:
            warnings.append(
                f"{len(absent)} judged {what} query id(s) are in no run and score 0 "
                f"(e.g. {', '.join(repr(q) for q in absent[:3])})"
            )
    return tune_ids, eval_ids, present


def _variants(
    grid_configs: List[FusionConfig], defaults: List[FusionConfig]
) -> Tuple[List[VariantScore], List[VariantScore]]:
    """(every variant to score, in grid order with the defaults the grid lacks last; the
    defaults among them)."""
    variants: List[VariantScore] = []
    seen: Dict[FusionConfig, VariantScore] = {}
    for i, cfg in enumerate(grid_configs):
        v = VariantScore(cfg, describe(cfg), math.nan, False, i)
        variants.append(v)
        seen[cfg] = v
    default_scores: List[VariantScore] = []
    for cfg in defaults:
        if cfg in seen:
            seen[cfg].is_default = True
            default_scores.append(seen[cfg])
        else:
            v = VariantScore(cfg, describe(cfg), math.nan, True, len(variants))
            variants.append(v)
            seen[cfg] = v
            default_scores.append(v)
    return variants, default_scores


def _score_tuning(
    variants: List[VariantScore],
    replays: _Replays,
    tune_ids: List[str],
    tune_qrels: Qrels,
    objective: str,
    depth: int,
    scoring: _Scoring,
) -> None:
    """Every variant's objective on the tuning split (``VariantScore.tune``), each fused no
    deeper than the objective reads (:meth:`_Scoring.tune_k`)."""
    k = scoring.tune_k(objective, depth)
    from ..measures.columnar import QrelsColumns

    qrels = QrelsColumns.from_qrels(tune_qrels)  # once (measures/columnar.py), read by every variant
    for v in variants:
        run = replays.columns(v.config, tune_ids, False, k, qrels, scoring.ties)
        v.tune = scoring.evaluate(qrels, run, [objective]).aggregate[objective]


def _evaluate(
    chosen: List[VariantScore],
    replays: _Replays,
    eval_ids: List[str],
    eval_qrels: Qrels,
    metrics: List[str],
    depth: int,
    scoring: _Scoring,
) -> Dict[str, Evaluation]:
    """Each chosen variant (the best, then the defaults) on the evaluation split, by label."""
    from ..measures.columnar import QrelsColumns

    qrels = QrelsColumns.from_qrels(eval_qrels)
    evaluation: Dict[str, Evaluation] = {}
    for v in chosen:
        if v.label not in evaluation:
            run = replays.columns(v.config, eval_ids, True, depth, qrels, scoring.ties)
            evaluation[v.label] = scoring.evaluate(qrels, run, metrics)
    return evaluation


def _comparison(
    best: VariantScore, defaults: List[VariantScore], evaluation: Dict[str, Evaluation], objective: str
) -> Dict[str, Dict[str, float]]:
    """The best against each other default, paired over the evaluation queries."""
    comparison: Dict[str, Dict[str, float]] = {}
    for d in defaults:
        if d.label != best.label:
            comparison[d.label] = paired_comparison(
                evaluation[best.label].per_query[objective], evaluation[d.label].per_query[objective]
            )
    return comparison
