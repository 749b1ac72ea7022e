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
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..backends.base import Backend, KnnSpec
from ..config.load import Suite
from ..errors import ConfigError, cleanup_after_failure
from ..io.judgments import JudgmentSet, check_overlap, without_self_hits
from ..stats.latency import LatencySummary
from ..types import Document, DocVectors, Query, Run
from .integrity import MissingDocuments, QuerySetCheck, self_hit_warnings, self_judged_warnings
from .latency import latency_pass, stage_timer
from .plan import StagePlan, load_judgments, make_backend, needs_corpus
from .results import ABLatency, RetrieverResult, SuiteResult
from .shared import SharedBackend

if TYPE_CHECKING:
    from ..measures.columnar import QrelsColumns

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
    golden: Dict[str, Run] = field(default_factory=dict)  # retriever -> rankings of extra_queries
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
        shared: Optional[SharedBackend] = None,
    ):
        self.suite = suite
        self.progress = progress or (lambda msg: None)
        self._backend = backend
        self._shared = shared  # the session's backend of this suite (built once, kept open)

    def run(self) -> SuiteResult:
        """The suite's judged (and unanswerable) queries through every retriever, scored.
        The engine clients' own loggers are quiet meanwhile: a transport fault is reported
        once, as the backend's ``InfrastructureError`` line, not as their retry chatter."""
        with quiet_client_loggers():
            return self._run()

    def _run(self) -> SuiteResult:
        suite = self.suite
        js = self._shared.judgments() if self._shared is not None else load_judgments(suite)
        query_set = self._check_query_set(js)
        overlap = check_overlap(js, where=js.sources.get("qrels", str(suite.path)))
        warnings = query_set.warnings() + security_warnings(suite)
        qids, unanswerable = self._queries_to_run(js)
        overlap.run = len(qids)
        golden = self._golden_queries(js, set(qids))
        got = self.retrieve(
            js, qids, latency=suite.model.latency.enabled, check_documents=True, extra_queries=golden
        )
        warnings += [str(w) for w in got.backend_info.get("warnings", ())]  # e.g. client/server majors
        missing = got.missing_documents
        if missing is not None and missing.missing and suite.model.judgments.missing_documents == "drop":
            js.qrels = missing.drop_from(js.qrels)  # scored (and written out) without them
            missing.dropped = True
        from ..measures.columnar import QrelsColumns

        qrels_columns = QrelsColumns.from_qrels(js.qrels)  # built once, read by every evaluation
        results = {name: self._result(name, js, got, unanswerable, qrels_columns) for name in suite.order}
        if suite.model.evaluation.exclude_self_hits:
            warnings += self_judged_warnings(js.qrels)
        else:
            first = results[suite.order[0]].evaluation.evaluated if suite.order else []
            warnings += self_hit_warnings({n: r.run for n, r in results.items()}, first)
        out = SuiteResult(suite, js, overlap, results, got.backend_info, warnings)
        out.golden_runs = got.golden
        out.query_set = query_set
        out.missing_documents = missing
        return out

    def _golden_queries(self, js: JudgmentSet, running: Set[str]) -> List[Query]:
        """The texts of the suite's expectations, run in the same pass as the judged queries
        (an expectation naming a judged query reads that query's ranking)."""
        suite = self.suite
        out: List[Query] = []
        for e in suite.expectations:
            if e.query_id is not None:
                if e.query_id not in js.queries:
                    raise suite.error(
                        ("expectations", e.index, "query_id"),
                        f"no query {e.query_id!r} in {js.sources.get('queries', 'the judgments')}",
                    )
                if e.query_id not in running and all(q.qid != e.query_id for q in out):
                    out.append(Query(e.query_id, js.queries[e.query_id]))  # a query not run otherwise
            else:
                out.append(Query(e.qid, e.text or ""))
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

    def _result(
        self, name: str, js: JudgmentSet, got: Retrieval, unanswerable: List[str], qrels_columns: QrelsColumns
    ) -> RetrieverResult:
        """One retriever's evaluation, latency, abstention, and for a stage its window,
        warnings and the recall its inputs' windows can hold. ``qrels_columns``: ``js.qrels``
        as columns (``measures.columnar``), shared by every retriever's evaluation."""
        from ..measures.metrics import evaluate

        suite = self.suite
        model = suite.model
        run = got.runs[name]
        ev = evaluate(
            qrels_columns,
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
            from ..fusion.config import fusion_warnings

            rr.warnings.extend(fusion_warnings(got.fusions[name], _gated_k(suite, name)))
            rr.window = got.fusions[name].window
        if rr.window is not None:  # a stage: how much its window of each input can hold
            key = f"recall@{rr.window}"
            for inp in suite.inputs(name):
                rr.candidate_recall[inp] = evaluate(
                    qrels_columns,
                    got.runs[inp],
                    [key],
                    relevance_threshold=model.judgments.relevance_threshold,
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
        extra_queries: Sequence[Query] = (),
    ) -> Retrieval:
        """Every retriever of the suite (or those in ``only`` and what they build on) over
        ``qids``: the quality pass (and, if asked, the latency pass). Shared by the gate run,
        pooling for annotation and fusion sweeps. A backend passed to the runner stays open
        (its owner closes it); one the runner made is closed here. ``check_documents``: check
        the judged documents exist (``Retrieval.missing_documents``) and refuse the suite when
        more than ``judgments.max_missing_documents`` of the relevant ones are missing.
        ``extra_queries`` (golden queries) go through the same quality pass, batched with the
        judged ones; their rankings are kept apart (``Retrieval.golden``), never scored."""
        suite = self.suite
        order = suite.order if only is None else suite.with_inputs(only)
        depth = max([suite.model.evaluation.depth, min_depth] + [_metric_k(m) for m in suite.metrics])
        plan = StagePlan.of(suite, order, depth)
        embedder = self._embedder() if plan.needs_vectors else None
        queries = self.queries(js, qids, embedder)
        only_for = self._golden_retrievers({q.qid for q in extra_queries})
        extra = self._embedded(list(extra_queries), embedder, only_for)

        out = Retrieval(depth=depth, fusions=plan.fusions, rerankers=plan.rerankers, queries=queries)
        doc_texts = self._doc_texts(js, plan)
        owned = self._backend is None and self._shared is None
        if self._shared is not None:  # built once per session, whichever user comes first
            backend, info = self._shared.backend(lambda b: self._prepare(b, js, self._index_embedder()))
        else:
            backend = self._backend or make_backend(suite)
        try:
            if self._shared is None:
                info = self._prepare(backend, js, embedder)
            out.backend_info = dict(info)
            if plan.rerankers:
                out.backend_info["rerankers"] = {n: rk.id for n, rk in plan.rerankers.items()}
            if check_documents:
                out.missing_documents = self._check_documents(backend, js)
            self._quality_pass(backend, plan, queries + extra, doc_texts, out, only_for)
            for name, run in out.runs.items():  # golden rankings apart: never scored or exported
                out.golden[name] = {q.qid: run.pop(q.qid) for q in extra if q.qid in run}
            self._exact_pass(backend, plan, queries, out)
            if latency:
                single = stage_timer(suite, backend, plan, doc_texts)
                out.latency, out.ab = latency_pass(suite, single, order, queries, self.progress)
        except BaseException as exc:
            if owned:  # the cause stays first, a failed clean-up second
                cleanup_after_failure(backend.close, exc)
            raise
        if owned:
            backend.close()
        return out

    def shared_backend(self, js: JudgmentSet) -> Backend:
        """The session's prepared backend of this suite (built on first use, kept open)."""
        assert self._shared is not None, "a runner without a shared backend has none to give"
        backend, _ = self._shared.backend(lambda b: self._prepare(b, js, self._index_embedder()))
        return backend

    def search_all(
        self, backend: Backend, plan: StagePlan, queries: List[Query], doc_texts: Dict[str, str]
    ) -> Dict[str, Run]:
        """Every retriever of ``plan`` over ``queries``, batched: the quality pass's rankings."""
        out = Retrieval(depth=plan.depth, fusions=plan.fusions, rerankers=plan.rerankers, queries=queries)
        self._quality_pass(backend, plan, queries, doc_texts, out)
        return out.runs

    def doc_texts(self, js: JudgmentSet, plan: StagePlan) -> Dict[str, str]:
        """The documents' text, which rerank stages score (empty without one)."""
        return self._doc_texts(js, plan)

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
            doc_vectors = self._doc_vectors(embedder, documents)
        self.progress(f"preparing {backend.name} backend ({len(documents or [])} documents)")
        backend.prepare(documents, doc_vectors)
        info = dict(backend.describe())
        if embedder is not None:
            info.setdefault("embedder", embedder.id)
        return info

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
        only_for: Optional[Dict[str, Set[str]]] = None,
    ) -> None:
        """Every retriever of the plan over all queries at once, in dependency order; a query
        in ``only_for`` (a golden one) goes only to the retrievers named there."""
        suite = self.suite
        query_texts = {q.qid: q.text for q in queries}
        only_for = only_for or {}
        all_queries = queries
        for name in plan.order:
            self.progress(f"retrieving {name}")
            queries = [q for q in all_queries if q.qid not in only_for or name in only_for[q.qid]]
            if name in plan.leaves:
                out.runs[name] = self._leaf_pass(backend, name, plan, queries) if queries else {}
            elif name in plan.rerankers:
                from ..models.rerankers import rerank_run

                (inp,) = suite.inputs(name)
                window = suite.rerank_config(name).window
                inp_run = {q.qid: out.runs[inp][q.qid] for q in queries if q.qid in out.runs[inp]}
                out.runs[name] = rerank_run(plan.rerankers[name], inp_run, query_texts, doc_texts, window)
            else:
                from ..fusion.semantics import fuse_runs

                wanted = {q.qid for q in queries}
                subs = [{q: r for q, r in out.runs[s].items() if q in wanted} for s in suite.inputs(name)]
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

    def _golden_retrievers(self, extra: Set[str]) -> Dict[str, Set[str]]:
        """id of a query run only for golden checks (in ``extra``; never a judged query, which
        every retriever answers) -> the retrievers its expectations need, with their inputs."""
        out: Dict[str, Set[str]] = {}
        for e in self.suite.expectations:
            if e.qid in extra:
                out.setdefault(e.qid, set()).update(self.suite.with_inputs(list(e.retrievers)))
        return out

    def _embedded(self, queries: List[Query], embedder: Any, only_for: Dict[str, Set[str]]) -> List[Query]:
        """``queries`` with vectors from ``embedder`` when one of their retrievers sends them."""
        from .shared import vector_leaves

        vector = vector_leaves(self.suite)
        todo = [q for q in queries if only_for.get(q.qid, vector) & vector]
        if not todo or embedder is None:
            return queries
        vecs = embedder.embed_queries([q.qid for q in todo], [q.text for q in todo])
        by_id = {q.qid: Query(q.qid, q.text, vecs[i], q.tags) for i, q in enumerate(todo)}
        return [by_id.get(q.qid, q) for q in queries]

    def _embedder(self) -> Any:
        """The suite's embedder: the session's one when shared, else a new one."""
        return self._shared.embedder(self.embedder) if self._shared is not None else self.embedder()

    def _index_embedder(self) -> Any:
        """The embedder of the documents of a shared index: whenever any retriever of the suite
        needs vectors (the index serves them all, whatever this run asked for)."""
        from .shared import needs_vectors

        return self._embedder() if needs_vectors(self.suite) else None

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

    from ..config.load import load_suite

    cli = {"backend.type": backend} if backend else None
    suite = load_suite(Path(path), overrides=tuple(Path(o) for o in overrides), cli=cli)
    return SuiteRunner(suite).run()
