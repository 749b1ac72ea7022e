"""Running a suite: judgments -> backend -> every retriever -> metrics and latency.

The retrieval runs once per suite; every gate item of the suite reads the result.
Leaf retrievers (bm25, knn, template) go to the backend; stages built on others
(rrf, weighted, linear) are fused client-side from the leaves' candidates with the
pure functions of ``fusion``, the same way on every backend; rerank stages re-score
their input's candidates client-side. What the suite builds (judgments, backend, specs)
is in :mod:`.build`, the latency pass in :mod:`.latency`.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..backends.base import Backend, KnnSpec
from ..errors import ConfigError, cleanup_after_failure
from ..stats.latency import LatencySummary
from ..types import Document, DocVectors, Query, Run
from .build import StagePlan, load_judgments, make_backend, needs_corpus
from .integrity import MissingDocuments, QuerySetCheck, self_hit_warnings, self_judged_warnings
from .judgments import JudgmentSet, check_overlap, without_self_hits
from .latency import latency_pass, stage_timer
from .load import Suite
from .result import ABLatency, RetrieverResult, SuiteResult

ANN_RECALL = "ann_recall@"

# the engine clients' loggers: their retries and node-pool warnings are noise during a run
CLIENT_LOGGERS = ("elastic_transport", "elasticsearch", "opensearch", "opensearchpy", "urllib3")


@contextlib.contextmanager
def quiet_client_loggers() -> Any:
    """Only CRITICAL records of the client libraries' loggers while the block runs."""
    loggers = [logging.getLogger(name) for name in CLIENT_LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


@dataclass
class Retrieval:
    """What the engines returned for a suite: runs per retriever, latency, engine facts."""

    depth: int
    fusions: Dict[str, Any]
    rerankers: Dict[str, Any] = field(default_factory=dict)
    runs: Dict[str, Run] = field(default_factory=dict)
    latency: Dict[str, LatencySummary] = field(default_factory=dict)
    ab: Dict[str, ABLatency] = field(default_factory=dict)
    queries: List[Query] = field(default_factory=list)  # as sent, with vectors when embedded
    backend_info: Dict[str, Any] = field(default_factory=dict)
    missing_documents: Optional[MissingDocuments] = None  # when asked to check the judged docs
    exact: Dict[str, Run] = field(default_factory=dict)  # kNN leaf -> its exact top k (ann_recall@k)


class SuiteRunner:
    """Runs one loaded suite: judgments, backend, every retriever and stage, metrics, latency.
    ``run()`` returns the :class:`SuiteResult` every gate item and report reads."""

    def __init__(
        self,
        suite: Suite,
        *,
        progress: Optional[Callable[[str], None]] = None,
        backend: Optional[Backend] = None,
    ):
        self.suite = suite
        self.progress = progress or (lambda msg: None)
        self._backend = backend

    def run(self) -> SuiteResult:
        """The suite's judged (and unanswerable) queries through every retriever, scored.
        The engine clients' own loggers are quiet meanwhile: a transport fault is reported
        once, as the backend's ``InfrastructureError`` line, not as their retry chatter."""
        with quiet_client_loggers():
            return self._run()

    def _run(self) -> SuiteResult:
        suite = self.suite
        js = load_judgments(suite)
        query_set = self._check_query_set(js)
        overlap = check_overlap(js, where=js.sources.get("qrels", str(suite.path)))
        warnings = query_set.warnings() + security_warnings(suite)
        qids, unanswerable = self._queries_to_run(js)
        overlap.run = len(qids)
        got = self.retrieve(js, qids, latency=suite.model.latency.enabled, check_documents=True)
        missing = got.missing_documents
        if missing is not None and missing.missing and suite.model.judgments.missing_documents == "drop":
            js.qrels = missing.drop_from(js.qrels)  # scored (and written out) without them
            missing.dropped = True
        results = {name: self._result(name, js, got, unanswerable) for name in suite.order}
        if suite.model.evaluation.exclude_self_hits:
            warnings += self_judged_warnings(js.qrels)
        else:
            first = results[suite.order[0]].evaluation.evaluated if suite.order else []
            warnings += self_hit_warnings({n: r.run for n, r in results.items()}, first)
        out = SuiteResult(suite, js, overlap, results, got.backend_info, warnings)
        out.query_set = query_set
        out.missing_documents = missing
        return out

    def _check_query_set(self, js: JudgmentSet) -> QuerySetCheck:
        """How queries and qrels line up; with ``judgments.require_all`` any gap is an error."""
        check = QuerySetCheck.of(js)
        j = self.suite.model.judgments
        if j.require_all:
            problem = check.problem(unjudged_expected=bool(j.beir and not j.queries))
            if problem:
                raise self.suite.error(
                    ("judgments", "require_all"),
                    f"{problem} ({js.sources.get('queries', 'queries')} vs {js.sources.get('qrels', 'qrels')})",
                )
        return check

    def _queries_to_run(self, js: JudgmentSet) -> Tuple[List[str], List[str]]:
        """(the queries sent: the judged ones, then the unanswerable ones without judgments;
        the unanswerable ones). Refuses unanswerable queries with a relevant judgment."""
        model = self.suite.model
        qids = [q for q in js.queries if q in js.qrels]
        unanswerable: List[str] = []
        if model.unanswerable is not None:
            tag = model.unanswerable.tag
            unanswerable = [q for q in js.queries if tag in js.tags.get(q, ())]
            relevant = [q for q in unanswerable if any(g > 0 for g in js.qrels.get(q, {}).values())]
            if relevant:
                raise self.suite.error(
                    ("unanswerable", "tag"),
                    f"{len(relevant)} queries tagged {tag!r} have relevant judgments "
                    f"(e.g. {relevant[0]!r}): unanswerable means no relevant document",
                )
            qids += [q for q in unanswerable if q not in js.qrels]
        return qids, unanswerable

    def _result(self, name: str, js: JudgmentSet, got: Retrieval, unanswerable: List[str]) -> RetrieverResult:
        """One retriever's evaluation, latency, abstention, and for a stage its window,
        warnings and the recall its inputs' windows can hold."""
        from ..measures.metrics import evaluate

        suite = self.suite
        model = suite.model
        run = got.runs[name]
        ev = evaluate(
            js.qrels,
            {q: rk.top(got.depth) for q, rk in run.items()},
            suite.metrics,
            gain="exp" if model.evaluation.profile == "exp" else "linear",
            ties=model.evaluation.ties,
            relevance_threshold=model.judgments.relevance_threshold,
        )
        if name in got.exact:  # ann_recall@k: against the exact kNN run, over the same queries
            from ..measures.ann import ann_recall, mean

            for m in [m for m in suite.metrics if m.startswith(ANN_RECALL)]:
                ev.per_query[m] = ann_recall(run, got.exact[name], _metric_k(m), ev.evaluated)
                ev.aggregate[m] = mean(ev.per_query[m])
        rr = RetrieverResult(
            name, model.retrievers[name].type, run, ev, latency=got.latency.get(name), ab=got.ab.get(name)
        )
        rr.depth = got.depth
        if model.unanswerable is not None:
            from ..stats.abstention import abstention

            rr.abstention = abstention(
                run, unanswerable, model.unanswerable.threshold.get(name), answerable_qids=ev.evaluated
            )
        if name in got.rerankers:
            from ..models.rerankers import rerank_warnings

            window = suite.rerank_config(name).window
            rr.window = window
            rr.warnings.extend(rerank_warnings(window, _gated_k(suite, name)))
        if name in got.fusions:
            from ..measures.fusion import fusion_warnings

            rr.warnings.extend(fusion_warnings(got.fusions[name], _gated_k(suite, name)))
            rr.window = got.fusions[name].window
        if rr.window is not None:  # a stage: how much its window of each input can hold
            key = f"recall@{rr.window}"
            for inp in suite.inputs(name):
                rr.candidate_recall[inp] = evaluate(
                    js.qrels, got.runs[inp], [key], relevance_threshold=model.judgments.relevance_threshold
                ).aggregate[key]
        return rr

    def retrieve(
        self,
        js: JudgmentSet,
        qids: Sequence[str],
        *,
        min_depth: int = 0,
        latency: bool = False,
        only: Optional[Sequence[str]] = None,
        check_documents: bool = False,
    ) -> Retrieval:
        """Every retriever of the suite (or those in ``only`` and what they build on) over
        ``qids``: the quality pass (and, if asked, the latency pass). Shared by the gate run,
        pooling for annotation and fusion sweeps. A backend passed to the runner stays open
        (its owner closes it); one the runner made is closed here. ``check_documents``: check
        the judged documents exist (``Retrieval.missing_documents``) and refuse the suite when
        more than ``judgments.max_missing_documents`` of the relevant ones are missing."""
        suite = self.suite
        order = suite.order if only is None else suite.with_inputs(only)
        depth = max([suite.model.evaluation.depth, min_depth] + [_metric_k(m) for m in suite.metrics])
        plan = StagePlan.of(suite, order, depth)
        embedder = self.embedder() if plan.needs_vectors else None
        queries = self.queries(js, qids, embedder)

        backend = self._backend or make_backend(suite)
        out = Retrieval(depth=depth, fusions=plan.fusions, rerankers=plan.rerankers, queries=queries)
        doc_texts = self._doc_texts(js, plan)
        try:
            self._prepare(backend, js, embedder, plan, out)
            if check_documents:
                out.missing_documents = self._check_documents(backend, js)
            self._quality_pass(backend, plan, queries, doc_texts, out)
            self._exact_pass(backend, plan, queries, out)
            if latency:
                single = stage_timer(suite, backend, plan, doc_texts)
                out.latency, out.ab = latency_pass(suite, single, order, queries, self.progress)
        except BaseException as exc:
            if self._backend is None:  # the cause stays first, a failed clean-up second
                cleanup_after_failure(backend.close, exc)
            raise
        if self._backend is None:
            backend.close()
        return out

    def _doc_texts(self, js: JudgmentSet, plan: StagePlan) -> Dict[str, str]:
        """The documents' text, which rerank stages score (empty without one)."""
        if not plan.rerankers:
            return {}
        if not js.corpus:
            raise self.suite.error(
                ("retrievers", next(iter(plan.rerankers)), "reranker"),
                "a rerank stage needs the documents' text: add judgments.corpus (or beir) to the suite",
            )
        from ..models.embedders import document_text

        return {d.doc_id: document_text(d) for d in js.corpus}

    def _prepare(
        self, backend: Backend, js: JudgmentSet, embedder: Any, plan: StagePlan, out: Retrieval
    ) -> None:
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
            doc_vectors = self._doc_vectors(embedder, documents)
        self.progress(f"preparing {backend.name} backend ({len(documents or [])} documents)")
        backend.prepare(documents, doc_vectors)
        out.backend_info = dict(backend.describe())
        if embedder is not None:
            out.backend_info.setdefault("embedder", embedder.id)
        if plan.rerankers:
            out.backend_info["rerankers"] = {n: rk.id for n, rk in plan.rerankers.items()}

    def _check_documents(self, backend: Backend, js: JudgmentSet) -> MissingDocuments:
        """The judged documents absent from the corpus (embedded, throwaway index) or from the
        existing index (batched read-only id lookups); an error above the allowed share."""
        suite = self.suite
        judged = [d for docs in js.qrels.values() for d in docs]
        if needs_corpus(suite):
            existing = {d.doc_id for d in js.corpus or []}
            where = f"corpus ({js.sources.get('corpus', 'judgments.documents')})"
        else:
            self.progress(f"checking {len(set(judged))} judged document ids against the index")
            found = backend.existing_ids(judged)
            if found is None:  # a backend that cannot tell: nothing to report
                return MissingDocuments("index", 0, 0)
            existing = found
            where = f"index {suite.model.backend.index.name!r}"
        missing = MissingDocuments.of(js.qrels, existing, where)
        problem = missing.too_many(suite.model.judgments.max_missing_documents)
        if problem:
            raise suite.error(("judgments", "max_missing_documents"), problem)
        return missing

    def _quality_pass(
        self,
        backend: Backend,
        plan: StagePlan,
        queries: List[Query],
        doc_texts: Dict[str, str],
        out: Retrieval,
    ) -> None:
        """Every retriever of the plan over all queries at once, in dependency order."""
        suite = self.suite
        query_texts = {q.qid: q.text for q in queries}
        for name in plan.order:
            self.progress(f"retrieving {name}")
            if name in plan.leaves:
                out.runs[name] = self._leaf_pass(backend, name, plan, queries)
            elif name in plan.rerankers:
                from ..models.rerankers import rerank_run

                (inp,) = suite.inputs(name)
                window = suite.rerank_config(name).window
                out.runs[name] = rerank_run(
                    plan.rerankers[name], out.runs[inp], query_texts, doc_texts, window
                )
            else:
                from ..measures.fusion import fuse_runs

                subs = [out.runs[s] for s in suite.inputs(name)]
                out.runs[name] = fuse_runs(subs, plan.fusions[name], k=plan.leaf_depth)

    def _exact_pass(self, backend: Backend, plan: StagePlan, queries: List[Query], out: Retrieval) -> None:
        """The exact top k of every kNN leaf, when the suite measures ``ann_recall@k``."""
        ks = [_metric_k(m) for m in self.suite.metrics if m.startswith(ANN_RECALL)]
        if not ks:
            return
        for name, spec in plan.leaves.items():
            if isinstance(spec, KnnSpec):
                self.progress(f"exact kNN of {name} (ann_recall@{max(ks)})")
                exact = backend.exact_knn(spec, queries, max(ks))
                if exact is not None:
                    out.exact[name] = exact

    def _leaf_pass(self, backend: Backend, name: str, plan: StagePlan, queries: List[Query]) -> Run:
        """One leaf retriever over all queries; a backend's refusal of the retriever's
        options (key ``retrievers``) is located at this retriever in the suite file."""
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

    def queries(self, js: JudgmentSet, qids: Sequence[str], embedder: Any = None) -> List[Query]:
        """The queries ``qids`` as the backends take them, with vectors from ``embedder``
        (the suite's, see :meth:`embedder`) when one is given."""
        queries = [Query(q, js.queries[q], None, js.tags.get(q, ())) for q in qids]
        if embedder is None:
            return queries
        self.progress(f"embedding {len(queries)} queries ({embedder.id})")
        vecs = embedder.embed_queries([q.qid for q in queries], [q.text for q in queries])
        return [Query(q.qid, q.text, vecs[i], q.tags) for i, q in enumerate(queries)]

    # ---------------------------------------------------------------- helpers

    def embedder(self):
        from ..models.embedders import make_embedder

        if self.suite.model.embedder is None:
            raise self.suite.error(("embedder",), "knn retrievers need an 'embedder' section")

        cfg = self.suite.model.embedder
        paths = {}  # relative to the file that names them
        for key in ("queries", "query_ids", "documents", "document_ids", "model"):
            if getattr(cfg, key, None) is not None and cfg.type in ("precomputed", "onnx"):
                paths[key] = str(self.suite.resolve_path(("embedder", key), getattr(cfg, key)))
        return make_embedder(cfg.model_copy(update=paths), self.suite.path.parent)

    def _doc_vectors(self, embedder, documents: Sequence[Document]) -> DocVectors:
        from ..models.embedders import embed_corpus

        self.progress(f"embedding {len(documents)} documents ({embedder.id})")
        return embed_corpus(embedder, documents)


def security_warnings(suite: Suite) -> List[str]:
    """Said once in the summary, not per request: certificates not checked, and credentials
    sent in clear text over ``http://`` to a host other than this machine."""
    import ipaddress
    from urllib.parse import urlsplit

    b = suite.model.backend
    conn = b.connection
    if b.type == "embedded" or conn is None:
        return []
    out: List[str] = []
    if not conn.verify_certs:
        out.append("backend.connection.verify_certs is false: the engine's TLS certificate is not checked")
    has_credentials = bool(conn.password or conn.api_key)
    for host in conn.hosts:
        try:
            parts = urlsplit(host if "://" in host else f"http://{host}")
            name = parts.hostname or ""
        except ValueError:
            continue
        creds = has_credentials or bool(parts.password)
        if parts.scheme != "http" or not creds:
            continue
        try:
            loopback = ipaddress.ip_address(name).is_loopback
        except ValueError:
            loopback = name in ("localhost",) or name.endswith(".localhost")
        if not loopback:
            port = f":{parts.port}" if parts.port else ""
            out.append(f"credentials are sent in clear text over http:// to {name}{port} (use https://)")
    return out


def _metric_k(metric: str) -> int:
    _, _, k = metric.partition("@")
    return int(k) if k.isdigit() else 0


def _gated_k(suite: Suite, retriever: str) -> int:
    """The deepest cut-off a floor of this retriever looks at (10 when none names one)."""
    ks = [_metric_k(f.metric) for f in suite.floors if f.retriever == retriever]
    return max([k for k in ks if k] or [10])


def run_suite(path: Any, *, overrides: Sequence[Any] = (), backend: Optional[str] = None) -> SuiteResult:
    """Load the suite file at ``path`` (with team override files) and run it: the Python twin of
    ``pytest path``. ``backend`` overrides ``backend.type`` (``embedded``, ``elasticsearch``,
    ``opensearch``). Raises ``ConfigError`` on bad input, ``InfrastructureError`` on a failed engine."""
    from pathlib import Path

    from .load import load_suite

    cli = {"backend.type": backend} if backend else None
    suite = load_suite(Path(path), overrides=tuple(Path(o) for o in overrides), cli=cli)
    return SuiteRunner(suite).run()
