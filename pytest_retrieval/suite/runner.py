"""Running a suite: judgments -> backend -> every retriever -> metrics and latency.

The retrieval runs once per suite; every gate item of the suite reads the result.
Leaf retrievers (bm25, knn, template) go to the backend; stages built on others
(rrf, weighted, linear) are fused client-side from the leaves' candidates with the
pure functions of ``fusion``, the same way on every backend.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..backends.base import Backend, BM25Spec, Document, DocVectors, KnnSpec, Query, TemplateSpec
from ..errors import ConfigError
from ..gates.floors import GateKind
from ..stats.latency import LatencySummary, summarize_latency
from ..types import Run
from .judgments import (
    JudgmentSet,
    check_overlap,
    load_beir,
    load_corpus,
    load_qrels,
    load_queries,
    load_tags,
    reconcile_ids,
)
from .load import Suite
from .result import ABLatency, RetrieverResult, SuiteResult  # noqa: F401
from .schema import FUSION_TYPES, STAGE_TYPES

# ------------------------------------------------------------------ judgments


def load_judgments(suite: Suite) -> JudgmentSet:
    j = suite.model.judgments
    key = ("judgments",)
    if j.beir:
        js = load_beir(
            suite.resolve_path(key + ("beir",), j.beir),
            j.split,
            with_corpus=(_needs_corpus(suite) or _needs_texts(suite)) and not j.corpus,
        )
    else:
        js = JudgmentSet(queries={}, qrels={})
    if j.queries:
        p = suite.resolve_path(key + ("queries",), j.queries)
        js.queries = load_queries(p)
        js.sources["queries"] = str(p)
    if j.qrels:
        p = suite.resolve_path(key + ("qrels",), j.qrels)
        js.qrels = load_qrels(p)
        js.sources["qrels"] = str(p)
    if j.corpus and (_needs_corpus(suite) or _needs_texts(suite)):
        p = suite.resolve_path(key + ("corpus",), j.corpus)
        js.corpus = load_corpus(p)
        js.sources["corpus"] = str(p)
    if j.tags:
        p = suite.resolve_path(key + ("tags",), j.tags)
        js.tags = load_tags(p)
        js.sources["tags"] = str(p)
    if j.inline:
        from .judgments import as_id

        for q in j.inline:
            qid = as_id(q.id)
            js.queries[qid] = q.text
            if q.relevant:
                js.qrels.setdefault(qid, {}).update({as_id(d): g for d, g in q.relevant.items()})
            if q.tags:
                js.tags[qid] = tuple(q.tags)
        js.sources.setdefault("queries", f"{suite.path} (inline)")
        js.sources.setdefault("qrels", f"{suite.path} (inline)")
    if j.documents:
        from .judgments import as_id

        docs = [
            Document(as_id(d.id), {k: v for k, v in (("title", d.title), ("text", d.text)) if v})
            for d in j.documents
        ]
        js.corpus = (js.corpus or []) + docs
    qsrc = js.sources.get("queries", "queries")
    js.qrels = reconcile_ids(
        js.queries, js.qrels, reference_name=qsrc, other_name=js.sources.get("qrels", "qrels")
    )
    if js.tags:
        js.tags = reconcile_ids(
            js.queries, js.tags, reference_name=qsrc, other_name=js.sources.get("tags", "tags")
        )
    return js


def _needs_corpus(suite: Suite) -> bool:
    """Whether the backend builds its index from the corpus (embedded, or a throwaway index)."""
    b = suite.model.backend
    return b.type == "embedded" or not b.index.name


def _needs_texts(suite: Suite) -> bool:
    """Whether a client-side rerank stage needs the documents' text."""
    return any(r.type == "rerank" for r in suite.model.retrievers.values())


# -------------------------------------------------------------------- backend


def make_backend(suite: Suite) -> Backend:
    b = suite.model.backend
    if b.type == "embedded":
        from ..backends.embedded.backend import EmbeddedBackend

        return EmbeddedBackend()
    if b.connection is None:
        raise suite.error(("backend",), f"backend {b.type} needs a 'connection' (hosts, auth)")
    conn = b.connection.model_dump()
    for secret in ("api_key", "password"):
        if conn.get(secret) is not None:
            conn[secret] = conn[secret].get_secret_value()
    if conn.get("ca_certs"):
        conn["ca_certs"] = str(suite.resolve_path(("backend", "connection", "ca_certs"), conn["ca_certs"]))
    index = b.index.model_dump()
    index["suite"] = suite.name
    if b.type == "elasticsearch":
        from ..backends.elasticsearch import ElasticsearchBackend

        return ElasticsearchBackend(conn, index)
    from ..backends.opensearch import OpenSearchBackend

    return OpenSearchBackend(conn, index)


def leaf_spec(suite: Suite, name: str) -> Any:
    r = suite.model.retrievers[name]
    if r.type == "bm25":
        fields = suite.bm25_fields(name)
        return BM25Spec(
            fields=fields,
            multi_match_type=r.multi_match_type,
            tie_breaker=r.tie_breaker,
            k1=r.k1,
            b=r.b,
            stopwords=r.stopwords,
        )
    if r.type == "knn":
        return KnnSpec(
            similarity=r.similarity,
            num_candidates=r.num_candidates,
            field=r.field or suite.model.backend.index.vector_field,
            filter=r.filter,
        )
    if r.type == "template":
        if suite.model.backend.type == "embedded":
            raise suite.error(
                ("retrievers", name, "body"),
                "template retrievers need backend type elasticsearch or opensearch",
            )
        return TemplateSpec(body=r.body, pipeline=r.pipeline)
    raise AssertionError(r.type)


# ------------------------------------------------------------------ the runner


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


class SuiteRunner:
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
        from ..measures.metrics import evaluate

        suite = self.suite
        model = suite.model
        js = load_judgments(suite)
        where = js.sources.get("qrels", str(suite.path))
        overlap = check_overlap(js, where=where)
        warnings: List[str] = []
        if overlap.qrels_without_query:
            ex = ", ".join(repr(q) for q in overlap.qrels_without_query[:5])
            warnings.append(
                f"{len(overlap.qrels_without_query)} judged query id(s) have no query "
                f"text and score 0 (e.g. {ex})"
            )

        qids = [q for q in js.queries if q in js.qrels]
        overlap.run_and_judged = len(qids)
        unanswerable: List[str] = []
        if model.unanswerable is not None:
            tag = model.unanswerable.tag
            unanswerable = [q for q in js.queries if tag in js.tags.get(q, ())]
            relevant = [q for q in unanswerable if any(g > 0 for g in js.qrels.get(q, {}).values())]
            if relevant:
                raise suite.error(
                    ("unanswerable", "tag"),
                    f"{len(relevant)} queries tagged {tag!r} have relevant judgments "
                    f"(e.g. {relevant[0]!r}): unanswerable means no relevant document",
                )
            qids += [q for q in unanswerable if q not in js.qrels]
        overlap.run = len(qids)
        got = self.retrieve(js, qids, latency=model.latency.enabled)
        depth, runs, fusions = got.depth, got.runs, got.fusions
        results: Dict[str, RetrieverResult] = {}
        for name in suite.order:
            ev = evaluate(
                js.qrels,
                {q: rk.top(depth) for q, rk in runs[name].items()},
                suite.metrics,
                gain="exp" if model.evaluation.profile == "exp" else "linear",
                ties=model.evaluation.ties,
                relevance_threshold=model.judgments.relevance_threshold,
            )
            rr = RetrieverResult(
                name,
                model.retrievers[name].type,
                runs[name],
                ev,
                latency=got.latency.get(name),
                ab=got.ab.get(name),
            )
            if model.unanswerable is not None:
                from ..stats.abstention import abstention

                rr.abstention = abstention(
                    runs[name],
                    unanswerable,
                    model.unanswerable.threshold.get(name),
                    answerable_qids=ev.evaluated,
                )
            if name in got.rerankers:
                from ..models.rerankers import rerank_warnings

                rr.window = model.retrievers[name].window
                rr.warnings.extend(rerank_warnings(rr.window, _gated_k(suite, name)))
            if name in fusions:
                from ..measures.fusion import fusion_warnings

                rr.warnings.extend(fusion_warnings(fusions[name], _gated_k(suite, name)))
                rr.window = fusions[name].window
            if rr.window is not None:  # a stage: how much its window of each input can hold
                key = f"recall@{rr.window}"
                for inp in model.retrievers[name].of:
                    rr.candidate_recall[inp] = evaluate(
                        js.qrels,
                        runs[inp],
                        [key],
                        relevance_threshold=model.judgments.relevance_threshold,
                    ).aggregate[key]
            results[name] = rr
        return SuiteResult(suite, js, overlap, results, got.backend_info, warnings)

    def retrieve(
        self,
        js: JudgmentSet,
        qids: Sequence[str],
        *,
        min_depth: int = 0,
        latency: bool = False,
        only: Optional[Sequence[str]] = None,
    ) -> Retrieval:
        """Every retriever of the suite (or those in ``only`` and what they build on) over
        ``qids``: the quality pass (and, if asked, the latency pass). Shared by the gate run,
        pooling for annotation and fusion sweeps. A backend passed to the runner stays open
        (its owner closes it); one the runner made is closed here."""
        suite = self.suite
        model = suite.model
        order = suite.order if only is None else _with_inputs(suite, only)
        depth = max([model.evaluation.depth, min_depth] + [_metric_k(m) for m in suite.metrics])
        fusions = {n: suite.fusion(n, depth) for n in order if model.retrievers[n].type in FUSION_TYPES}
        rerankers = {n: suite.reranker(n) for n in order if model.retrievers[n].type == "rerank"}
        # every leaf fetches as deep as the deepest window built on it needs
        leaf_depth = max(
            [depth] + [f.window for f in fusions.values()] + [model.retrievers[n].window for n in rerankers]
        )

        leaves = {n: leaf_spec(suite, n) for n in order if model.retrievers[n].type not in STAGE_TYPES}
        needs_vectors = any(
            isinstance(s, KnnSpec) or (isinstance(s, TemplateSpec) and "{{query_vector}}" in repr(s.body))
            for s in leaves.values()
        )
        embedder = self.embedder() if needs_vectors else None
        queries = self.queries(js, qids, embedder)

        backend = self._backend or make_backend(suite)
        out = Retrieval(depth=depth, fusions=fusions, rerankers=rerankers, queries=queries)
        doc_texts: Dict[str, str] = {}
        if rerankers:
            if not js.corpus:
                raise suite.error(
                    ("retrievers", next(iter(rerankers)), "reranker"),
                    "a rerank stage needs the documents' text: add judgments.corpus (or beir) to the suite",
                )
            from ..models.embedders import document_text

            doc_texts = {d.doc_id: document_text(d) for d in js.corpus}
        try:
            documents = js.corpus if _needs_corpus(suite) else None
            if _needs_corpus(suite) and not documents:
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
            if rerankers:
                out.backend_info["rerankers"] = {n: rk.id for n, rk in rerankers.items()}
            query_texts = {q.qid: q.text for q in queries}
            for name in order:
                self.progress(f"retrieving {name}")
                if name in leaves:
                    out.runs[name] = backend.search_batch(leaves[name], queries, leaf_depth)
                elif name in rerankers:
                    from ..models.rerankers import rerank_run

                    (inp,) = model.retrievers[name].of
                    out.runs[name] = rerank_run(
                        rerankers[name], out.runs[inp], query_texts, doc_texts, model.retrievers[name].window
                    )
                else:
                    from ..measures.fusion import fuse_runs

                    r = model.retrievers[name]
                    out.runs[name] = fuse_runs([out.runs[s] for s in r.of], fusions[name], k=leaf_depth)
            if latency:
                single = self._stage_timer(backend, leaves, fusions, rerankers, doc_texts, leaf_depth)
                for name in order:
                    self.progress(f"latency {name}")
                    out.latency[name] = self._latency(single, name, queries)
                ab_gated = sorted({f.retriever for f in suite.floors if f.kind is GateKind.LATENCY_RATIO})
                for name in ab_gated:
                    self.progress(f"latency {name} vs {model.latency.baseline} (A/B)")
                    out.ab[name] = self._ab_latency(single, name, model.latency.baseline, queries)
        finally:
            if self._backend is None:
                backend.close()
        return out

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

        cfg = self.suite.model.embedder.model_dump(exclude_none=True)
        for key in ("queries", "query_ids", "documents", "document_ids", "model"):
            if key in cfg and cfg["type"] in ("precomputed", "onnx"):
                cfg[key] = str(self.suite.resolve_path(("embedder", key), cfg[key]))
        return make_embedder(cfg, self.suite.path.parent)

    def _doc_vectors(self, embedder, documents: Sequence[Document]) -> DocVectors:
        from ..models.embedders import embed_corpus

        self.progress(f"embedding {len(documents)} documents ({embedder.id})")
        return embed_corpus(embedder, documents)

    def _stage_timer(
        self, backend: Backend, leaves, fusions, rerankers, doc_texts, leaf_depth: int
    ) -> Callable[[str, Query], Any]:
        """``single(name, query) -> (ranking, server took ms)``: one query through the whole
        stage tree, as production would serve it (a rerank stage's model time included)."""
        from ..measures.fusion import fuse

        model = self.suite.model

        def single(n: str, q: Query):
            if n in leaves:
                res = backend.search_one(leaves[n], q, leaf_depth)
                return res.ranking, res.server_took_ms
            if n in rerankers:
                from ..models.rerankers import rerank_ranking

                ranking, took = single(model.retrievers[n].of[0], q)
                # production pays the model for every candidate of every query: no vectors
                # cached by the quality pass or an earlier repetition (bi-encoders)
                getattr(rerankers[n], "clear_cache", lambda: None)()
                return rerank_ranking(
                    rerankers[n], q.text, ranking, doc_texts, model.retrievers[n].window
                ), took
            parts = [single(s, q) for s in model.retrievers[n].of]
            took = [t for _, t in parts if t is not None]
            return fuse([p[0] for p in parts], fusions[n]), (sum(took) if took else None)

        return single

    def _latency_plan(self, name: str, queries: Sequence[Query], ratio: bool = False):
        """(sampled queries, repetitions) for ``name``'s latency pass. ``auto`` takes enough
        passes for 20 samples above the highest percentile gated (p95: 400 samples); an A/B
        pass takes at least 4 rounds under ``auto`` (2 when set), see
        ``benchmarks/latency_gate_flakiness.py``."""
        import math

        from ..stats.latency import repetitions_needed

        cfg = self.suite.model.latency
        sample = list(queries[: cfg.max_queries] if cfg.max_queries else queries)
        repetitions = cfg.repetitions
        if repetitions == "auto":
            floors = [
                f
                for f in self.suite.floors
                if f.retriever == name and f.kind is (GateKind.LATENCY_RATIO if ratio else GateKind.LATENCY)
            ]
            qs = [f.percentile for f in floors] or [50]
            repetitions = max(1, math.ceil(repetitions_needed(max(qs)) / max(len(sample), 1)))
        if ratio:  # measured: 2 rounds caught a 30% slowdown 95/100 times, 4 rounds 100/100
            repetitions = max(4 if cfg.repetitions == "auto" else 2, repetitions)
        return sample, repetitions

    def _latency(self, single, name: str, queries: Sequence[Query]) -> LatencySummary:
        """One query at a time, ``repetitions`` passes after ``warmup`` requests."""
        cfg = self.suite.model.latency
        sample, repetitions = self._latency_plan(name, queries)
        if not sample:
            return summarize_latency([], [], warmup=0, repetitions=0)
        for q in (sample * ((cfg.warmup // len(sample)) + 1))[: cfg.warmup]:
            single(name, q)
        wall: List[float] = []
        took: List[float] = []
        for _ in range(repetitions):
            for q in sample:
                t0 = time.perf_counter()
                _, server = single(name, q)
                wall.append((time.perf_counter() - t0) * 1000.0)
                if server is not None:
                    took.append(float(server))
        return summarize_latency(wall, took, warmup=cfg.warmup, repetitions=repetitions)

    def _ab_latency(self, single, name: str, baseline: str, queries: Sequence[Query]) -> ABLatency:
        """``baseline`` (A) and ``name`` (B) timed interleaved, query by query
        (``stats.latency.ab_schedule``: a fresh seeded order each round, the arm that goes
        first alternating), so that load on the machine hits both arms alike."""
        from ..stats.latency import ab_schedule

        cfg = self.suite.model.latency
        sample, repetitions = self._latency_plan(name, queries, ratio=True)
        arms = {"A": baseline, "B": name}
        if sample:
            for q in (sample * ((cfg.warmup // len(sample)) + 1))[: cfg.warmup]:
                single(baseline, q)
                single(name, q)
        times: Dict[str, List[List[float]]] = {"A": [[] for _ in sample], "B": [[] for _ in sample]}
        for qi, arm in ab_schedule(len(sample), repetitions, seed=0):
            t0 = time.perf_counter()
            single(arms[arm], sample[qi])
            times[arm][qi].append((time.perf_counter() - t0) * 1000.0)
        return ABLatency(
            baseline=baseline, baseline_ms=times["A"], current_ms=times["B"], repetitions=repetitions
        )


def _with_inputs(suite: Suite, names: Sequence[str]) -> List[str]:
    """``names`` and every retriever they build on, in the suite's dependency order."""
    wanted: set = set()
    stack = list(names)
    while stack:
        n = stack.pop()
        if n not in suite.model.retrievers:
            raise ConfigError(
                f"{suite.path}: no retriever {n!r} (defined: {', '.join(suite.model.retrievers)})"
            )
        if n not in wanted:
            wanted.add(n)
            stack.extend(getattr(suite.model.retrievers[n], "of", None) or [])
    return [n for n in suite.order if n in wanted]


def _metric_k(metric: str) -> int:
    _, _, k = metric.partition("@")
    return int(k) if k.isdigit() else 0


def _gated_k(suite: Suite, retriever: str) -> int:
    """The deepest cut-off a floor of this retriever looks at (10 when none names one)."""
    ks = [_metric_k(f.metric) for f in suite.floors if f.retriever == retriever]
    return max([k for k in ks if k] or [10])
