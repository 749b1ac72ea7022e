"""A fusion sweep for a suite: fetch each sub-retriever's candidates once through the suite's
backend, split the judged queries, replay the grid offline (:mod:`pytest_retrieval.tuning.sweep`),
and optionally check a few variants against the real OpenSearch server.

This is the I/O edge of the sweep (judgments, backend, pipelines); the grid, the replay and the
selection stay pure (:mod:`~pytest_retrieval.tuning.grid`, :mod:`~pytest_retrieval.fusion.replay`,
:mod:`~pytest_retrieval.tuning.selection`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..config.load import Suite
from ..config.schema import FUSION_TYPES
from ..errors import ConfigError

Say = Callable[[str], None]


@dataclass
class CheckResult:
    """Offline replay against the OpenSearch server, per variant."""

    k: int
    queries: int
    variants: List[Dict[str, Any]] = field(default_factory=list)  # label, max_score_diff, mismatches, first

    @property
    def ok(self) -> bool:
        return all(v["mismatches"] == 0 for v in self.variants)

    def summary(self) -> str:
        lines = [
            f"check on the OpenSearch server: {len(self.variants)} variants, "
            f"{self.queries} queries, top {self.k} (tie groups compared as sets)"
        ]
        for v in self.variants:
            verdict = "same" if v["mismatches"] == 0 else f"DIFFERENT on {v['mismatches']} queries"
            lines.append(f"  {verdict:>28}  max |score diff| {v['max_score_diff']:.2g}  {v['label']}")
            if v["first"]:
                lines.append(f"      first: {v['first']}")
        return "\n".join(lines)


def fusion_inputs(suite: Suite, retriever: Optional[str]) -> Tuple[str, List[str]]:
    """The fusion retriever to tune (default: the suite's first) and its sub-retrievers."""
    fusions = [n for n in suite.order if suite.model.retrievers[n].type in FUSION_TYPES]
    if retriever is None:
        if not fusions:
            raise ConfigError(f"{suite.path}: no fusion retriever (rrf, weighted) to sweep")
        retriever = fusions[0]
    if retriever not in suite.model.retrievers:
        raise ConfigError(
            f"{suite.path}: no retriever {retriever!r} (fusion retrievers: {', '.join(fusions) or 'none'})"
        )
    r = suite.model.retrievers[retriever]
    if r.type not in FUSION_TYPES:
        raise ConfigError(
            f"{suite.path}: retriever {retriever!r} is a {r.type}, not a fusion "
            f"(fusion retrievers: {', '.join(fusions) or 'none'})"
        )
    return retriever, suite.inputs(retriever)


def splits(
    suite: Suite, js: Any, *, tune_split: Optional[str], tune_fraction: float, seed: int
) -> Tuple[Dict[str, Dict[str, int]], Dict[str, Dict[str, int]], str]:
    """(tuning qrels, evaluation qrels, how they were made). ``tune_split`` names another
    BEIR qrels split of the suite's collection (``train``, ``dev``) to tune on while the
    suite's own split evaluates; otherwise the suite's judged queries are split at random
    (``tune_fraction`` of them tune, seeded)."""
    from .selection import restrict_qrels, split_queries

    if tune_split is not None:
        j = suite.model.judgments
        if not j.beir:
            raise ConfigError(
                f"{suite.path}: --tune-split needs a BEIR collection (judgments.beir); use --tune-fraction"
            )
        if tune_split == j.split:
            raise ConfigError(
                f"--tune-split {tune_split!r} is the split the suite evaluates on: "
                f"tuning and evaluation queries would overlap"
            )
        from ..io.qrels import load_qrels

        path = suite.resolve_path(("judgments", "beir"), j.beir) / "qrels" / f"{tune_split}.tsv"
        tune = {q: dict(d) for q, d in load_qrels(path).items() if q in js.queries}
        return (
            tune,
            {q: dict(d) for q, d in js.qrels.items()},
            f"tune on BEIR {tune_split!r}, evaluate on {j.split!r}",
        )
    if not 0.0 < tune_fraction < 1.0:
        raise ConfigError(f"--tune-fraction must be in (0, 1), got {tune_fraction!r}")
    tune_ids, eval_ids = split_queries(list(js.qrels), fraction=tune_fraction, seed=seed)
    return (
        restrict_qrels(js.qrels, tune_ids),
        restrict_qrels(js.qrels, eval_ids),
        f"random split of the suite's queries: {tune_fraction:g} tune, seed {seed}",
    )


def run_sweep(
    suite: Suite,
    *,
    retriever: Optional[str] = None,
    tune_split: Optional[str] = None,
    tune_fraction: float = 0.5,
    seed: int = 0,
    grid: Any = None,
    objective: str = "ndcg@10",
    check: bool = False,
    check_variants: int = 7,
    check_k: int = 10,
    say: Optional[Say] = None,
) -> Tuple[Any, str, Optional[CheckResult]]:
    """Fetch once, sweep, and (``check``) replay ``check_variants`` variants on OpenSearch.
    Returns (``SweepResult``, how the split was made, ``CheckResult`` or None)."""
    from ..execution.plan import load_judgments
    from ..measures.metrics import parse_metric

    say = say or (lambda msg: None)
    parse_metric(objective)  # a typo fails before any query is sent
    name, subs = fusion_inputs(suite, retriever)
    if check and suite.model.backend.type != "opensearch":
        raise ConfigError(
            f"--check replays variants on OpenSearch; this suite's backend is "
            f"{suite.model.backend.type} (use --backend opensearch)"
        )
    js = load_judgments(suite)
    tune_qrels, eval_qrels, how = splits(
        suite, js, tune_split=tune_split, tune_fraction=tune_fraction, seed=seed
    )
    job = _SweepJob(suite, name, subs, _suite_grid(suite, grid), objective, say)
    qids = [q for q in js.queries if q in tune_qrels or q in eval_qrels]
    result, checked = job.run(js, qids, tune_qrels, eval_qrels, (check_variants, check_k) if check else None)
    return result, how, checked


def _suite_grid(suite: Suite, grid: Any) -> Any:
    """``grid`` (default: ``SweepGrid()``) with RRF as the suite's engine computes it
    (Suite.fusion's default)."""
    from .grid import SweepGrid

    rrf_semantics = "opensearch" if suite.model.backend.type == "opensearch" else "elasticsearch"
    return dataclasses.replace(grid or SweepGrid(), rrf_semantics=rrf_semantics)


@dataclass
class _SweepJob:
    """One sweep of a suite's fusion retriever ``name`` over its sub-retrievers ``subs``."""

    suite: Suite
    name: str
    subs: List[str]
    grid: Any
    objective: str
    say: Say

    @property
    def window(self) -> int:
        """The tuned retriever's window (default: evaluation.depth) unless the grid names windows."""
        default = self.suite.fusion(self.name, self.suite.model.evaluation.depth).window
        return max(self.grid.windows or (default,))

    def run(
        self, js: Any, qids: List[str], tune_qrels: Any, eval_qrels: Any, check: Optional[Tuple[int, int]]
    ) -> Tuple[Any, Optional[CheckResult]]:
        """Fetch the candidates once through the suite's backend, sweep, and (``check``:
        (variants, k)) compare with the OpenSearch server."""
        from ..execution.plan import make_backend
        from ..execution.runner import SuiteRunner
        from .sweep import sweep

        window = self.window
        backend = make_backend(self.suite)
        try:
            runner = SuiteRunner(self.suite, progress=self.say, backend=backend)
            got = runner.retrieve(js, qids, min_depth=window, only=self.subs)
            runs = {s: {q: rk.top(window) for q, rk in got.runs[s].items()} for s in self.subs}
            self.say(f"sweeping {self.grid.size(len(self.subs))} variants offline")
            result = sweep(
                runs,
                tune_qrels,
                eval_qrels,
                grid=self.grid,
                objective=self.objective,
                metrics=list(dict.fromkeys([self.objective] + self.suite.metrics)),
                depth=got.depth,
                default_window=window,
                **self.suite.scoring(),  # scored and averaged as the suite's gates are
            )
            checked = None
            if check is not None:
                checked = _check_on_opensearch(
                    self.suite, backend, got.queries, runs, result, self.subs, check[0], check[1], self.say
                )
        finally:
            backend.close()
        return result, checked


def _check_variants(result: Any, n: int) -> List[Any]:
    """The best, the defaults, then the best of each (normalisation, combination) pair and
    the best RRF: the variants a team would paste, and one of each server code path."""
    picked: List[Any] = [result.best.config] + [d.config for d in result.defaults]
    families: Dict[Tuple[str, Optional[str], Optional[str]], Any] = {}
    for v in result.ranked():
        key = (v.config.method, v.config.normalization, v.config.combination)
        families.setdefault(key, v.config)
    for cfg in families.values():
        if cfg not in picked:
            picked.append(cfg)
    return picked[: max(n, 1)]


def _check_on_opensearch(
    suite: Suite,
    backend: Any,
    queries: Sequence[Any],
    runs: Dict[str, Any],
    result: Any,
    subs: Sequence[str],
    n: int,
    k: int,
    say: Say,
) -> CheckResult:
    """Server-side ``hybrid`` query through a search pipeline per variant, against the
    offline replay of the same variant (same candidates, same window)."""
    from ..fusion.replay import replay
    from .grid import describe
    from .selection import opensearch_pipeline

    bm25, knn = _hybrid_specs(suite, subs)
    out = CheckResult(k=k, queries=len(queries))
    for cfg in _check_variants(result, n):
        label = describe(cfg)
        say(f"checking on OpenSearch: {label}")
        server = backend.search_hybrid(
            bm25, knn, queries, k, opensearch_pipeline(cfg), pagination_depth=cfg.window
        )
        offline = replay([runs[s] for s in subs], cfg)
        out.variants.append({"label": label, **_compare_runs(queries, server, offline, k)})
    return out


def _hybrid_specs(suite: Suite, subs: Sequence[str]) -> Tuple[Any, Any]:
    """(BM25Spec, KnnSpec) of the fusion's sub-retrievers: what OpenSearch's hybrid query runs."""
    from ..backends.base import BM25Spec, KnnSpec
    from ..execution.plan import leaf_spec

    specs = [leaf_spec(suite, s) for s in subs]
    if not (len(specs) == 2 and isinstance(specs[0], BM25Spec) and isinstance(specs[1], KnnSpec)):
        raise ConfigError(
            "--check runs OpenSearch's hybrid query over [bm25, knn]: the fusion's "
            "'of' must list a bm25 retriever, then a knn retriever"
        )
    return specs[0], specs[1]


def _compare_runs(queries: Sequence[Any], server: Any, offline: Any, k: int) -> Dict[str, Any]:
    """max_score_diff, mismatches (queries whose top k differ) and the first of them."""
    from ..measures.parity import compare_top
    from ..types import Ranking

    worst, bad, first = 0.0, 0, ""
    for q in queries:
        c = compare_top(server.get(q.qid) or Ranking(), offline.get(q.qid) or Ranking(), k)
        worst = max(worst, c.max_score_diff)
        if c.mismatch is not None:
            bad += 1
            first = first or f"query {q.qid}: {c.mismatch}"
    return {"max_score_diff": worst, "mismatches": bad, "first": first}
