"""The quality pass of a suite run: every retriever of a stage plan over all queries at once, in
dependency order (leaves on the backend, rerank and fusion stages client-side); and the exact kNN
pass behind ``ann_recall@k``."""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set

from ..backends.base import Backend, KnnSpec
from ..config.load import Suite
from ..errors import ConfigError, QueryRefused, RetrieverFailed
from ..io.beir import without_self_hits
from ..io.judgment_set import JudgmentSet
from ..types import Query, Run
from .cutoffs import ANN_RECALL, metric_k
from .plan import StagePlan
from .results import Retrieval


class StagePasses:
    """Runs a suite's stage plan on a backend, filling a :class:`Retrieval`."""

    def __init__(
        self,
        suite: Suite,
        backend: Backend,
        plan: StagePlan,
        progress: Callable[[str], None],
        *,
        isolate: bool = False,
    ):
        self.suite = suite
        self.backend = backend
        self.plan = plan
        self.progress = progress
        # a gate run: one retriever's own problem fails that retriever (and what builds on it)
        # only, kept in ``Retrieval.failed``; anywhere else it is raised
        self.isolate = isolate

    def run(
        self,
        queries: List[Query],
        extra: List[Query],
        doc_texts: Dict[str, str],
        out: Retrieval,
        only_for: Dict[str, Set[str]],
    ) -> None:
        """The quality pass over ``queries`` and the golden ``extra`` ones (their rankings kept
        apart in ``out.golden``), then the exact kNN pass over ``queries``."""
        self.quality(queries + extra, doc_texts, out, only_for)
        for name, run in out.runs.items():  # golden rankings apart: never scored or exported
            out.golden[name] = {q.qid: run.pop(q.qid) for q in extra if q.qid in run}
        self.exact(queries, out)

    def quality(
        self,
        queries: List[Query],
        doc_texts: Dict[str, str],
        out: Retrieval,
        only_for: Optional[Dict[str, Set[str]]] = None,
    ) -> None:
        """Every retriever of the plan over all queries at once, in dependency order; a query
        in ``only_for`` (a golden one) goes only to the retrievers named there."""
        plan = self.plan
        query_texts = {q.qid: q.text for q in queries}
        only_for = only_for or {}
        for name in plan.order:
            broken = [i for i in self.suite.inputs(name) if i in out.failed]
            if broken:  # a stage on a failed retriever: failed too, pointing at the cause
                out.failed[name] = RetrieverFailed(f"built on retriever {broken[0]!r}, which failed")
                continue
            self.progress(f"retrieving {name}")
            sent = [q for q in queries if q.qid not in only_for or name in only_for[q.qid]]
            try:
                if name in plan.leaves:
                    out.runs[name] = self.leaf(name, sent) if sent else {}
                elif name in plan.rerankers:
                    out.runs[name] = self._rerank(name, sent, out.runs, query_texts, doc_texts)
                else:
                    out.runs[name] = self._fuse(name, sent, out.runs)
            except (ConfigError, QueryRefused) as exc:  # this retriever's problem, not the engine's
                if not self.isolate:
                    raise
                out.failed[name] = exc

    def _rerank(
        self,
        name: str,
        queries: List[Query],
        runs: Dict[str, Run],
        query_texts: Dict[str, str],
        doc_texts: Dict[str, str],
    ) -> Run:
        from ..models.rerankers import rerank_run

        (inp,) = self.suite.inputs(name)
        window = self.suite.rerank_config(name).window
        inp_run = {q.qid: runs[inp][q.qid] for q in queries if q.qid in runs[inp]}
        return rerank_run(self.plan.rerankers[name], inp_run, query_texts, doc_texts, window)

    def _fuse(self, name: str, queries: List[Query], runs: Dict[str, Run]) -> Run:
        from ..fusion.semantics import fuse_runs

        wanted = {q.qid for q in queries}
        subs = [{q: r for q, r in runs[s].items() if q in wanted} for s in self.suite.inputs(name)]
        return fuse_runs(subs, self.plan.fusions[name], k=self.plan.leaf_depth)

    def exact(self, queries: List[Query], out: Retrieval) -> None:
        """The exact top k of every kNN leaf, when the suite measures ``ann_recall@k``."""
        ks = [metric_k(m) for m in self.suite.metrics if m.startswith(ANN_RECALL)]
        if not ks:
            return
        for name, spec in self.plan.leaves.items():
            if isinstance(spec, KnnSpec) and name not in out.failed:
                self.progress(f"exact kNN of {name} (ann_recall@{max(ks)})")
                exact = self.backend.exact_knn(spec, queries, max(ks))
                if exact is not None:
                    out.exact[name] = exact

    def leaf(self, name: str, queries: List[Query]) -> Run:
        """One leaf retriever over all queries; a backend's refusal of the retriever's
        options (key ``retrievers``) is located at this retriever in the suite file."""
        plan, backend = self.plan, self.backend
        queries = plan.with_sparse(name, queries)
        try:
            if not self.suite.model.evaluation.exclude_self_hits:
                return backend.search_batch(plan.leaves[name], queries, plan.leaf_depth)
            # one hit more: a query's own document is at most one hit of its ranking
            run = backend.search_batch(plan.leaves[name], queries, plan.leaf_depth + 1)
            return without_self_hits(run, plan.leaf_depth)[0]
        except ConfigError as exc:
            if exc.key != "retrievers" or exc.file:
                raise
            raise self.suite.error(("retrievers", name), exc.detail) from None


def doc_texts(suite: Suite, js: JudgmentSet, plan: StagePlan) -> Dict[str, str]:
    """The documents' text, which rerank stages score (empty without one)."""
    if not plan.rerankers:
        return {}
    if not js.judged_corpus:
        raise suite.error(
            ("retrievers", next(iter(plan.rerankers)), "reranker"),
            "a rerank stage needs the documents' text: add judgments.corpus (or beir) to the suite",
        )
    from ..models.embedders import document_text

    return {d.doc_id: document_text(d) for d in js.judged_corpus or ()}
