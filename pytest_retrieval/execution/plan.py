"""From a loaded suite to what a run works with: the judgment set (files and inline), the
backend, each leaf retriever's spec, and the plan of the stages built on them (fusion
configurations, rerankers, how deep each leaf fetches)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..backends.base import Backend, BM25Spec, KnnSpec, ServiceSpec, SparseSpec, TemplateSpec
from ..backends.registry import backend_factory, build_backend
from ..config.load import Suite
from ..config.schema import ENGINE_TYPES, FUSION_TYPES, PIPELINE_TYPES, STAGE_TYPES
from ..config.yamlio import locate
from ..errors import ConfigError
from ..io.beir import load_beir
from ..io.corpus import load_corpus
from ..io.grades import GradeScale
from ..io.ids import as_id, reconcile_ids
from ..io.judgment_set import JudgmentSet
from ..io.qrels import load_qrels
from ..io.queries import load_queries
from ..io.tags import load_tags
from ..types import Document

# ------------------------------------------------------------------ judgments


def load_judgments(suite: Suite) -> JudgmentSet:
    """The suite's queries, qrels, tags and (when a stage needs it) corpus: from a BEIR folder
    and/or files, then the inline ones; ids of the other files re-keyed onto the queries'."""
    j = suite.model.judgments
    scale = grade_scale(suite)
    if j.beir:
        js = load_beir(
            suite.resolve_path(("judgments", "beir"), j.beir),
            j.split,
            with_corpus=_wants_corpus(suite) and not j.corpus,
            grades=scale,
        )
    else:
        js = JudgmentSet(queries={}, qrels={})
    _read_files(suite, js, scale)
    _add_inline_queries(suite, js, scale)
    _add_inline_documents(suite, js)
    _key_by_queries(js)
    _check_gains(suite, js)
    js.id_field = suite.model.backend.index.id_field
    return js


def _check_gains(suite: Suite, js: JudgmentSet) -> None:
    """A grade whose gain under the suite's profile overflows a float (2^1100 - 1 under
    ``exp``) is refused by name at ``judgments.grades``: nDCG would be NaN."""
    import numpy as np

    from ..measures.gains import gain_overflow

    grades = [g for per_q in js.qrels.values() for g in per_q.values()]
    if not grades or max(grades) < 900:  # 2^900 times any count of judgments stays finite
        return
    query = np.repeat(np.arange(len(js.qrels)), [len(per_q) for per_q in js.qrels.values()])
    with_err = any(str(m).startswith("err") for m in suite.metrics)
    why = gain_overflow(np.asarray(grades, dtype=np.int64), query, suite.scoring()["gain"], with_err)
    if why:
        raise suite.error(("judgments", "grades"), why)


def check_judgment_files(suite: Suite) -> None:
    """The judgment files and the BEIR folder the suite names exist: a missing one is one
    ConfigError naming the suite file's line and key, raised when the suite is collected (not
    one identical setup error per gate, issue #26). Reading them stays with the run."""
    j = suite.model.judgments
    for role in ("beir", "queries", "qrels", "corpus", "tags", "canary"):
        value = getattr(j, role)
        if not value:
            continue
        p = suite.resolve_path(("judgments", role), value)
        if not p.exists():
            what = "folder" if role == "beir" else "file"
            raise suite.error(("judgments", role), f"{what} not found: {p}")


def grade_scale(suite: Suite) -> GradeScale:
    """The suite's ``judgments.grades``: range and map applied to every judgment on load."""
    g = suite.model.judgments.grades
    return GradeScale(low=g.min, high=g.max, mapping=dict(g.map) if g.map else None)


def _read_files(suite: Suite, js: JudgmentSet, scale: GradeScale) -> None:
    """The files ``judgments`` names (queries, qrels, corpus, tags), over a BEIR folder's."""
    j = suite.model.judgments
    readers: Dict[str, Callable[[Path], Any]] = {
        "queries": load_queries,
        "qrels": lambda p: load_qrels(p, scale),
        "corpus": load_corpus,
        "tags": load_tags,
    }
    for role, read in readers.items():
        value = getattr(j, role)
        if value and (role != "corpus" or _wants_corpus(suite)):
            p = suite.resolve_path(("judgments", role), value)
            setattr(js, role, read(p))
            js.sources[role] = str(p)


def _add_inline_queries(suite: Suite, js: JudgmentSet, scale: GradeScale) -> None:
    """The suite file's own ``judgments.inline`` queries, their judgments and tags."""
    inline = suite.model.judgments.inline
    if not inline:
        return
    for i, q in enumerate(inline):
        qid = as_id(q.id)
        js.queries[qid] = q.text
        for d, g in q.relevant.items():
            try:
                grade = scale.apply(g, file=str(suite.path))
            except ConfigError as exc:
                raise suite.error(("judgments", "inline", i, "relevant", d), exc.detail) from None
            js.qrels.setdefault(qid, {})[as_id(d)] = grade
        if q.tags:
            js.tags[qid] = tuple(q.tags)
    js.sources.setdefault("queries", f"{suite.path} (inline)")
    js.sources.setdefault("qrels", f"{suite.path} (inline)")


def _add_inline_documents(suite: Suite, js: JudgmentSet) -> None:
    """The suite file's own ``judgments.documents``, after the corpus read from files."""
    documents = suite.model.judgments.documents
    if documents:
        docs = [
            Document(as_id(d.id), {k: v for k, v in (("title", d.title), ("text", d.text)) if v})
            for d in documents
        ]
        js.corpus = (js.corpus or []) + docs


def _key_by_queries(js: JudgmentSet) -> None:
    """The qrels' and tags' ids re-keyed onto the queries' ids (counted when normalised)."""
    qsrc = js.sources.get("queries", "queries")
    for what in ("qrels", "tags"):
        mapping = getattr(js, what)
        if what == "tags" and not mapping:
            continue
        remapped: List[Any] = []
        setattr(
            js,
            what,
            reconcile_ids(
                js.queries,
                mapping,
                reference_name=qsrc,
                other_name=js.sources.get(what, what),
                remapped_out=remapped,
            ),
        )
        js.normalised[what] = len(remapped)


def _wants_corpus(suite: Suite) -> bool:
    """Whether the documents are read: to build the index, or for a rerank stage's texts."""
    return needs_corpus(suite) or needs_texts(suite)


def needs_corpus(suite: Suite) -> bool:
    """Whether the backend builds its index from the corpus (embedded, or a throwaway index)."""
    b = suite.model.backend
    if b.type in PIPELINE_TYPES:
        return False  # the service searches its own index
    return b.type == "embedded" or not b.index.name


def needs_texts(suite: Suite) -> bool:
    """Whether a client-side rerank stage needs the documents' text."""
    return any(r.type == "rerank" for r in suite.model.retrievers.values())


# -------------------------------------------------------------------- backend


def make_backend(suite: Suite) -> Backend:
    """The suite's backend, made by the factory registered under its ``backend.type``."""
    b = suite.model.backend
    try:
        make = backend_factory(b.type)
    except ConfigError as exc:
        raise suite.error(("backend", "type"), exc.detail) from None
    if b.connection is None and b.type in ("elasticsearch", "opensearch"):
        raise suite.error(("backend",), f"backend {b.type} needs a 'connection' (hosts, auth)")
    index = b.index.model_dump()
    index["suite"] = suite.name
    if b.type in ("elasticsearch", "opensearch") and any(
        r.type == "sparse" for r in suite.model.retrievers.values()
    ):
        index["sparse"] = True  # the throwaway index is built once, with the sparse vectors
    if b.type not in ENGINE_TYPES + PIPELINE_TYPES:  # a third-party backend's own settings
        index["options"] = dict(b.options or {})
        index["base_dir"] = str(suite.resolve_path(("backend",), "."))
    try:
        return build_backend(b.type, connection_values(suite), index, make)
    except ConfigError as exc:
        if exc.file:
            raise
        key, _, detail = exc.detail.partition(" ")  # "backend.function 'm:f': cannot import ..."
        if key in ("backend.function", "backend.batch_function"):
            raise suite.error(tuple(key.split(".")), detail) from None
        raise suite.error(("backend",), exc.detail) from None


def connection_values(suite: Suite) -> Optional[Dict[str, Any]]:
    """The suite's ``backend.connection`` as plain values: secrets revealed, ``ca_certs``
    resolved against the file that names it; None when the suite gives none."""
    if suite.model.backend.type in PIPELINE_TYPES:
        return pipeline_values(suite)
    connection = suite.model.backend.connection
    if connection is None:
        return None
    conn = connection.model_dump()
    for secret in ("api_key", "password"):
        if conn.get(secret) is not None:
            conn[secret] = conn[secret].get_secret_value()
    if conn.get("ca_certs"):
        conn["ca_certs"] = str(suite.resolve_path(("backend", "connection", "ca_certs"), conn["ca_certs"]))
    return conn


def pipeline_values(suite: Suite) -> Dict[str, Any]:
    """What the http and python backends are made of: the request and response (header values
    stay ``SecretStr``) with the ``${VAR}`` values they hold (secrets every message hides), or the
    function's name and the folder it is imported from."""
    b = suite.model.backend
    if b.type == "http":
        assert b.request is not None and b.response is not None
        batch = b.batch.model_dump() if b.batch else None
        written = json.dumps([b.request.url, b.request.body, batch], default=str)
        return {
            "request": b.request.model_dump(),
            "response": b.response.model_dump(),
            "batch": batch,
            "max_concurrency": b.max_concurrency or 4,
            "secrets": [secret for v in suite.interpolated for _, secret in v.values if secret in written],
        }
    file, _ = locate(suite.positions, ("backend", "function"))
    return {
        "function": b.function,
        "batch_function": b.batch_function,
        "max_concurrency": b.max_concurrency or 1,
        "timeout": b.timeout,
        "base_dir": str(Path(file).parent if file else suite.path.parent),
    }


def bm25_analyzers(suite: Suite, name: str, fields: Any) -> Tuple[Tuple[str, str], ...]:
    """``analyzer`` of a bm25 retriever as (field, name) for each of its fields: one name for
    all, or a mapping whose fields must be searched ones (the rest stay ``standard``); stop words
    belong to the standard analyzer only; on the embedded engine the name must be one it has."""
    r = suite.model.retrievers[name]
    given = getattr(r, "analyzer", None)
    if given is None:
        return ()
    searched = [f for f, _ in fields]
    if isinstance(given, str):
        names = {f: given for f in searched}
    else:
        extra = sorted(set(given) - set(searched))
        if extra:
            raise suite.error(
                ("retrievers", name, "analyzer"),
                f"analyzer names field(s) {', '.join(map(repr, extra))} the retriever does not search "
                f"(fields: {', '.join(searched)})",
            )
        names = {f: given.get(f, "standard") for f in searched}
    if getattr(r, "stopwords", None) is not None and any(v != "standard" for v in names.values()):
        raise suite.error(
            ("retrievers", name, "stopwords"),
            "stopwords belong to the standard analyzer; a language analyzer has its own stop words",
        )
    if suite.model.backend.type == "embedded":
        from ..backends.embedded.languages import UnknownAnalyzer, named_analyzer

        for field_name, analyzer in names.items():
            try:
                named_analyzer(analyzer)
            except UnknownAnalyzer as exc:
                raise suite.error(("retrievers", name, "analyzer"), f"field {field_name!r}: {exc}") from None
    return tuple(names.items())


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
            analyzer=bm25_analyzers(suite, name, fields),
            index_options=tuple(o for o in ("k1", "b", "stopwords", "analyzer") if o in r.model_fields_set),
        )
    if r.type == "knn":
        return KnnSpec(
            similarity=r.similarity,
            num_candidates=r.num_candidates,
            field=r.field or suite.model.backend.index.vector_field,
            filter=r.filter,
        )
    if r.type == "sparse":
        return SparseSpec(
            field=r.field or SparseSpec.field, idf=r.idf, encoder_id=suite.sparse_encoder(name).id
        )
    if r.type == "template":
        if suite.model.backend.type == "embedded":
            raise suite.error(
                ("retrievers", name, "body"),
                "template retrievers need backend type elasticsearch or opensearch",
            )
        return TemplateSpec(body=r.body, pipeline=r.pipeline)
    if r.type == "service":
        return ServiceSpec(params=tuple(sorted(r.params.items())))
    raise AssertionError(r.type)


# ---------------------------------------------------------------- stage plan


@dataclass
class StagePlan:
    """The retrievers of one run in dependency order: the leaves' specs, the stages' fusion
    configurations and rerankers, the depth every ranking is evaluated at, and the depth every
    leaf fetches (as deep as the deepest window built on it needs)."""

    order: List[str]
    depth: int
    leaf_depth: int
    leaves: Dict[str, Any]
    fusions: Dict[str, Any]
    rerankers: Dict[str, Any]
    sparse: Any = None  # the run's .sparse.SparseLeaves when a leaf is sparse (set by the runner)

    @classmethod
    def of(cls, suite: Suite, order: List[str], depth: int) -> StagePlan:
        model = suite.model
        fusions = {n: suite.fusion(n, depth) for n in order if model.retrievers[n].type in FUSION_TYPES}
        rerankers = {n: suite.reranker(n) for n in order if model.retrievers[n].type == "rerank"}
        leaf_depth = max(
            [depth]
            + [f.window for f in fusions.values()]
            + [suite.rerank_config(n).window for n in rerankers]
        )
        leaves = {n: leaf_spec(suite, n) for n in order if model.retrievers[n].type not in STAGE_TYPES}
        return cls(order, depth, leaf_depth, leaves, fusions, rerankers)

    @property
    def sparse_leaves(self) -> List[str]:
        """The leaves that send learned sparse query vectors."""
        return [n for n, s in self.leaves.items() if isinstance(s, SparseSpec)]

    def with_sparse(self, name: str, queries: List[Any]) -> List[Any]:
        """``queries`` as the leaf ``name`` sends them: with its sparse vectors when it is sparse."""
        if self.sparse is None or not isinstance(self.leaves.get(name), SparseSpec):
            return queries
        return self.sparse.queries(name, queries)

    def sparse_facts(self, queries: List[Any]) -> Dict[str, Any]:
        """sparse leaf -> its efficiency facts (``sparse.SparseFacts``) over ``queries``."""
        if self.sparse is None:
            return {}
        return {n: self.sparse.facts(n, queries) for n in self.sparse_leaves}

    @property
    def needs_vectors(self) -> bool:
        """Whether a leaf sends query vectors (kNN, or a template with ``{{query_vector}}``)."""
        return any(
            isinstance(s, KnnSpec) or (isinstance(s, TemplateSpec) and "{{query_vector}}" in repr(s.body))
            for s in self.leaves.values()
        )
