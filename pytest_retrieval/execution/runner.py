"""Running a suite: judgments -> backend -> every retriever -> metrics and latency.

The retrieval runs once per suite; every gate item of the suite reads the result.
Leaf retrievers (bm25, knn, template) go to the backend; stages built on others
(rrf, weighted, linear) are fused client-side from the leaves' candidates with the
pure functions of ``fusion``, the same way on every backend; rerank stages re-score
their input's candidates client-side. What the suite builds (judgments, backend, specs)
is in :mod:`.plan`, the quality pass in :mod:`.passes`, the scoring in :mod:`.scoring`, the
latency pass in :mod:`.latency`.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..backends.base import AnalyzerNotes, Backend
from ..backends.search_engine.retry import describe_retries, retries_since
from ..config.load import Suite
from ..errors import cleanup_after_failure
from ..io.judgment_set import JudgmentSet, check_overlap
from ..types import Query, Run
from .cutoffs import run_depth
from .integrity import (
    check_expectation_documents,
    find_missing_documents,
    self_hit_warnings,
    self_judged_warnings,
)
from .latency import latency_pass, stage_timer
from .passes import StagePasses, doc_texts
from .plan import StagePlan, load_judgments, make_backend, needs_corpus
from .results import Retrieval, SuiteResult
from .scoring import score_retriever
from .security import security_warnings
from .selection import canary_queries, check_query_set, golden_queries, golden_retrievers, queries_to_run
from .shared import SharedBackend
from .sparse import sparse_retrievers
from .vectors import SuiteVectors

# the engine clients' loggers: their retries and node-pool warnings are noise during a run
CLIENT_LOGGERS = ("elastic_transport", "elasticsearch", "opensearch", "opensearchpy", "urllib3")
# the embedded engine's library: its DEBUG/INFO records ("Building index from tokens") would fill
# the logs pytest captures under --log-level=DEBUG (issue #26); its warnings still show
LIBRARY_LOGGERS = ("bm25s",)


@contextlib.contextmanager
def quiet_client_loggers() -> Any:
    """Only CRITICAL records of the client libraries' loggers, and WARNING and above of the
    embedded engine's library, while the block runs."""
    wanted = {name: logging.CRITICAL for name in CLIENT_LOGGERS}
    wanted.update({name: logging.WARNING for name in LIBRARY_LOGGERS})
    loggers = [logging.getLogger(name) for name in wanted]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(wanted[lg.name])
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


class SuiteRunner:
    """Runs one loaded suite: judgments, backend, every retriever and stage, metrics, latency.
    ``run()`` returns the :class:`SuiteResult` every gate item and report reads."""

    def __init__(
        self,
        suite: Suite,
        *,
        progress: Optional[Callable[[str], None]] = None,
        backend: Optional[Backend] = None,
        shared: Optional[SharedBackend] = None,
        isolate: bool = False,
    ):
        self.suite = suite
        # the gate run of the plugin: a retriever's own problem fails its gates only (passes.py)
        self.isolate = isolate
        self.progress = progress or (lambda msg: None)
        self._backend = backend
        self._shared = shared  # the session's backend of this suite (built once, kept open)
        self.vectors = SuiteVectors(suite, shared, self.progress)

    def run(self) -> SuiteResult:
        """The suite's judged (and unanswerable) queries through every retriever, scored.
        The engine clients' own loggers are quiet meanwhile: a transport fault is reported
        once, as the backend's ``InfrastructureError`` line, not as their retry chatter."""
        with quiet_client_loggers():
            return self._run()

    def _run(self) -> SuiteResult:
        suite = self.suite
        js = self._shared.judgments() if self._shared is not None else load_judgments(suite)
        query_set = check_query_set(suite, js)
        overlap = check_overlap(js, where=js.sources.get("qrels", str(suite.path)))
        warnings = query_set.warnings() + security_warnings(suite)
        qids, unanswerable = queries_to_run(suite, js)
        overlap.run = len(qids)
        golden = golden_queries(suite, js, set(qids))
        canary = canary_queries(suite, js, set(qids), golden)
        got = self.retrieve(
            js,
            qids,
            latency=suite.model.latency.enabled,
            check_documents=True,
            extra_queries=golden + canary,
            rank_eval=suite.model.evaluation.rank_eval,
        )
        warnings += [str(w) for w in got.backend_info.get("warnings", ())]  # e.g. client/server majors
        warnings += retry_warnings(got.retries)
        missing = got.missing_documents
        if missing is not None and drops_missing(suite, missing):
            js.qrels = missing.drop_from(js.qrels)  # scored (and written out) without them
            missing.dropped = True
        from ..measures.columnar import QrelsColumns

        qrels_columns = QrelsColumns.from_qrels(js.qrels)  # built once, read by every evaluation
        results = {
            name: score_retriever(suite, name, got, unanswerable, qrels_columns)
            for name in suite.order
            if name not in got.failed
        }
        if suite.model.evaluation.exclude_self_hits:
            warnings += self_judged_warnings(js.qrels)
        else:
            first = next(iter(results.values())).evaluation.evaluated if results else []
            warnings += self_hit_warnings({n: r.run for n, r in results.items()}, first)
        if got.rank_eval is not None:  # the engine's _rank_eval beside the plugin's values
            from .rank_eval import compare

            got.rank_eval = compare(got.rank_eval, results)
            if got.rank_eval.disagreements:
                warnings.append(
                    f"the engine's _rank_eval disagrees with the plugin on {len(got.rank_eval.disagreements)} "
                    "values (the _rank_eval cross-check lines name them)"
                )
        out = SuiteResult(suite, js, overlap, results, got.backend_info, warnings)
        out.rank_eval = got.rank_eval
        out.canary = {q.qid: q.text for q in canary}  # their rankings apart: never scored
        out.canary_runs = {
            n: {q: r for q, r in run.items() if q in out.canary} for n, run in got.golden.items()
        }
        out.golden_runs = {
            n: {q: r for q, r in run.items() if q not in out.canary} for n, run in got.golden.items()
        }
        out.retries = got.retries
        out.query_set = query_set
        out.missing_documents = missing
        out.failed = dict(got.failed)
        return out

    def retrieve(
        self,
        js: JudgmentSet,
        qids: Sequence[str],
        *,
        min_depth: int = 0,
        latency: bool = False,
        only: Optional[Sequence[str]] = None,
        check_documents: bool = False,
        extra_queries: Sequence[Query] = (),
        rank_eval: bool = False,
    ) -> Retrieval:
        """Every retriever of the suite (or those in ``only`` and what they build on) over
        ``qids``: the quality pass (and, if asked, the latency pass). Shared by the gate run,
        pooling for annotation and fusion sweeps. A backend passed to the runner stays open
        (its owner closes it); one the runner made is closed here. ``check_documents``: check
        the judged documents exist (``Retrieval.missing_documents``) and refuse the suite when
        more than ``judgments.max_missing_documents`` of the relevant ones are missing, or when
        an expectation names a document that exists nowhere.
        ``extra_queries`` (golden queries) go through the same quality pass, batched with the
        judged ones; their rankings are kept apart (``Retrieval.golden``), never scored.
        ``rank_eval``: also ask the engine's ``_rank_eval`` (``Retrieval.rank_eval``)."""
        suite = self.suite
        order = suite.order if only is None else suite.with_inputs(only)
        plan = self.plan(order, run_depth(suite, min_depth))
        embedder = self.vectors.embedder() if plan.needs_vectors else None
        queries = self.vectors.queries(js, qids, embedder)
        only_for = golden_retrievers(suite, {q.qid for q in extra_queries})
        extra = self.vectors.golden(list(extra_queries), embedder, only_for)

        out = Retrieval(depth=plan.depth, fusions=plan.fusions, rerankers=plan.rerankers, queries=queries)
        texts = doc_texts(suite, js, plan)
        owned = self._backend is None and self._shared is None
        backend, info = self._backend_of(js, embedder)
        try:
            out.backend_info = self._engine_facts(backend, js, embedder, info, plan)
            before = retries_of(backend)
            if check_documents:
                out.missing_documents = find_missing_documents(suite, backend, js, self.progress)
                check_expectation_documents(suite, backend, js, self.progress)
            passes = StagePasses(suite, backend, plan, self.progress, isolate=self.isolate)
            passes.run(queries, extra, texts, out, only_for)
            out.sparse = plan.sparse_facts(queries)
            if rank_eval:
                out.rank_eval = self._rank_eval(backend, plan, queries, js, out.missing_documents)
            _note_analyzers(out.backend_info, backend)
            before = _count_retries(out, "quality", backend, before)
            if latency:
                single = stage_timer(suite, backend, plan, texts)
                timed = [n for n in order if n not in out.failed]
                out.latency, out.ab = latency_pass(suite, single, timed, queries, self.progress)
                _count_retries(out, "latency", backend, before)
        except BaseException as exc:
            if owned:  # the cause stays first, a failed clean-up second
                cleanup_after_failure(backend.close, exc)
            raise
        if owned:
            backend.close()
        return out

    def _rank_eval(
        self, backend: Backend, plan: StagePlan, queries: List[Query], js: JudgmentSet, missing: Any
    ) -> Any:
        """The engine's ``_rank_eval`` answers, with the judgments as they will be scored."""
        from .rank_eval import rank_eval_pass

        self.progress("asking the engine's _rank_eval for the cross-check")
        qrels = missing.drop_from(js.qrels) if drops_missing(self.suite, missing) else js.qrels
        return rank_eval_pass(self.suite, backend, plan, queries, qrels)

    def _engine_facts(
        self,
        backend: Backend,
        js: JudgmentSet,
        embedder: Any,
        info: Optional[Dict[str, Any]],
        plan: StagePlan,
    ) -> Dict[str, Any]:
        """The engine facts of ``backend`` (prepared here unless the session's shared one already
        was), with the rerank stages' models."""
        facts = dict(info if info is not None else self._prepare(backend, js, embedder))
        if plan.rerankers:
            facts["rerankers"] = {n: rk.id for n, rk in plan.rerankers.items()}
        return facts

    def _backend_of(self, js: JudgmentSet, embedder: Any) -> Tuple[Backend, Optional[Dict[str, Any]]]:
        """(the backend to search, its engine facts when already prepared): the session's
        shared one (built once per session, whichever user comes first), the one passed to the
        runner, or a new one of the suite's ``backend`` section."""
        if self._shared is not None:
            return self._shared.backend(lambda b: self._prepare(b, js, self.vectors.index_embedder()))
        return self._backend or make_backend(self.suite), None

    def shared_backend(self, js: JudgmentSet) -> Backend:
        """The session's prepared backend of this suite (built on first use, kept open)."""
        assert self._shared is not None, "a runner without a shared backend has none to give"
        backend, _ = self._shared.backend(lambda b: self._prepare(b, js, self.vectors.index_embedder()))
        return backend

    def search_all(
        self, backend: Backend, plan: StagePlan, queries: List[Query], doc_texts: Dict[str, str]
    ) -> Dict[str, Run]:
        """Every retriever of ``plan`` over ``queries``, batched: the quality pass's rankings."""
        out = Retrieval(depth=plan.depth, fusions=plan.fusions, rerankers=plan.rerankers, queries=queries)
        StagePasses(self.suite, backend, plan, self.progress).quality(queries, doc_texts, out)
        return out.runs

    def plan(self, order: List[str], depth: int) -> StagePlan:
        """The stage plan of ``order`` at ``depth``, with the suite's sparse retrievers' state
        when a leaf is sparse."""
        plan = StagePlan.of(self.suite, order, depth)
        if plan.sparse_leaves:
            plan.sparse = self.vectors.sparse()
        return plan

    def doc_texts(self, js: JudgmentSet, plan: StagePlan) -> Dict[str, str]:
        """The documents' text, which rerank stages score (empty without one)."""
        return doc_texts(self.suite, js, plan)

    def _prepare(self, backend: Backend, js: JudgmentSet, embedder: Any) -> Dict[str, Any]:
        """Index the corpus (with its vectors) or attach to the existing index; engine facts."""
        suite = self.suite
        documents = js.corpus if needs_corpus(suite) else None
        if needs_corpus(suite) and not documents:
            raise suite.error(
                ("judgments",),
                "this backend builds its index from the corpus: "
                "add judgments.corpus (or beir), or name an existing index",
            )
        doc_vectors = None
        if documents and embedder is not None:
            doc_vectors = self.vectors.documents(embedder, documents)
        self.progress(f"preparing {backend.name} backend ({len(documents or [])} documents)")
        backend.prepare(documents, doc_vectors)
        sparse = self._prepare_sparse(backend, documents)
        info = dict(backend.describe())
        if embedder is not None:
            info.setdefault("embedder", embedder.id)
        if sparse:
            info.setdefault("sparse_encoders", sparse)
        return info

    def _prepare_sparse(self, backend: Backend, documents: Any) -> Dict[str, str]:
        """The sparse retrievers' document vectors given to ``backend`` (``prepare_sparse``, once
        per encoder); retriever -> encoder id (empty without a sparse retriever)."""
        if not sparse_retrievers(self.suite):
            return {}
        sparse = self.vectors.sparse()
        sparse.prepare(backend, documents)
        return sparse.encoders()

    def queries(self, js: JudgmentSet, qids: Sequence[str], embedder: Any = None) -> List[Query]:
        """The queries ``qids`` as the backends take them, with vectors from ``embedder``
        (the suite's, see :meth:`embedder`) when one is given."""
        return self.vectors.queries(js, qids, embedder)

    def embedder(self) -> Any:
        """A new embedder of the suite's ``embedder`` section."""
        return self.vectors.new_embedder()


def drops_missing(suite: Suite, missing: Any) -> bool:
    """Whether the run scores without the judgments of missing documents (``missing_documents: drop``)."""
    return bool(missing is not None and missing.missing and suite.model.judgments.missing_documents == "drop")


def retries_of(backend: Backend) -> Dict[str, int]:
    """Every retry ``backend`` made so far, by reason (a backend that does not retry: none)."""
    counted = getattr(backend, "retries", None)
    return dict(counted()) if callable(counted) else {}


def _count_retries(out: Retrieval, stage: str, backend: Backend, before: Dict[str, int]) -> Dict[str, int]:
    """The retries since ``before`` kept as ``out.retries[stage]`` (when any); the count now."""
    now = retries_of(backend)
    made = retries_since(before, now)
    if made:
        out.retries[stage] = made
    return now


def retry_warnings(retries: Dict[str, Dict[str, int]]) -> List[str]:
    """The retries of a run as warnings every report shows (issue #28: not only log lines)."""
    lines = []
    if retries.get("quality"):
        lines.append(
            f"the quality pass made {describe_retries(retries['quality'])}: the engine shed load or "
            "lost a node; every ranking kept is from a complete answer"
        )
    if retries.get("latency"):
        lines.append(
            f"the latency pass made {describe_retries(retries['latency'])}: the latency of a "
            "retried search includes its wait"
        )
    return lines


def run_suite(path: Any, *, overrides: Sequence[Any] = (), backend: Optional[str] = None) -> SuiteResult:
    """Load the suite file at ``path`` (with team override files) and run it: the Python twin of
    ``pytest path``. ``backend`` overrides ``backend.type`` (``embedded``, ``elasticsearch``,
    ``opensearch``). Raises ``ConfigError`` on bad input, ``InfrastructureError`` on a failed engine."""
    from pathlib import Path

    from ..config.load import load_suite

    cli = {"backend.type": backend} if backend else None
    suite = load_suite(Path(path), overrides=tuple(Path(o) for o in overrides), cli=cli)
    return SuiteRunner(suite).run()


def _note_analyzers(info: Dict[str, Any], backend: Backend) -> None:
    """The analyzer of each text field BM25 searched (known once the quality pass ran), for the
    summary: what the suite named, or what an existing index's mapping holds (issue #35)."""
    notes = getattr(backend, "analyzer_notes", None)
    if isinstance(notes, AnalyzerNotes) and notes.by_field:
        info["analyzers"] = notes.shown()
    empty = sorted(getattr(backend, "empty_fields", None) or ())
    if empty:  # searched, but no document of the corpus has them: they add nothing to a score
        info["warnings"] = list(info.get("warnings", ())) + [
            f"BM25 searches {', '.join(map(repr, empty))}, which no document of the corpus has: "
            "it adds nothing to any score"
        ]
