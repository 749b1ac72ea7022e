"""The suite file's schema (pydantic, published as JSON Schema); loading is in ``load``.

A suite file (``retrieval_*.yaml`` or ``*.retrieval.yaml``) names a judgment set, a
backend, an embedder, retrievers (leaves and stages built on others) and floors.
Every mistake becomes one ``ConfigError`` line: file, key path, line, problem.
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Union

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_serializer,
    field_validator,
    model_validator,
)
from typing_extensions import Annotated

from ..backends.base import AnalyzerName, BM25Spec, KnnSpec, MultiMatchType, Similarity, SparseSpec, Stopwords

# the kinds' config models live beside their implementations (re-exported for load.py)
from ..backends.http.config import HttpBatchConfig, HttpRequestConfig, HttpResponseConfig
from ..backends.http.template import BUILT_IN_PLACEHOLDERS, PLACEHOLDER
from ..backends.search_engine.http import ConnectionConfig
from ..backends.search_engine.index_config import IndexConfig
from ..io.grades import grade_of
from ..models.embedders import CallableEmbedderConfig as CallableEmbedderConfig
from ..models.embedders import EmbedderConfig
from ..models.embedders import OnnxEmbedderConfig as OnnxEmbedderConfig
from ..models.embedders import PrecomputedEmbedderConfig as PrecomputedEmbedderConfig
from ..models.rerankers import RerankerConfig
from ..models.sparse import SparseEncoderConfig
from ..numbers import NUMBER
from .gate_models import FloorValue, RegressionConfig, StabilityGates
from .gate_models import GateNumber as GateNumber
from .gate_models import Margin as Margin
from .gate_models import ReferenceConfig as ReferenceConfig
from .ownership import GateOwnership
from .scalars import ANY, ScalarRules


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# ------------------------------------------------------------------- judgments

# where a suite file holds ids and grades: their plain YAML scalars are typed by the suite's
# rules, not YAML's (``scalars``: ``0123`` is refused, never the octal 83)
SCALAR_RULES = ScalarRules(
    ids=(
        ("judgments", "inline", ANY, "id"),
        ("judgments", "documents", ANY, "id"),
        ("expectations", ANY, "query_id"),
        ("expectations", ANY, "first"),
        ("expectations", ANY, "contains", ANY),
        ("expectations", ANY, "excludes", ANY),
        ("expectations", ANY, "above", ANY),
    ),
    id_keys=(("judgments", "inline", ANY, "relevant"),),
    grades=(
        ("judgments", "inline", ANY, "relevant", ANY),
        ("judgments", "grades", "min"),
        ("judgments", "grades", "max"),
        ("judgments", "grades", "map", ANY),
    ),
    grade_keys=(("judgments", "grades", "map"),),
)


def _id_text(value: Any) -> Any:
    """An id is text; an int (a plain decimal in YAML, a number in JSON) is its decimal. The
    YAML reader refuses the ambiguous forms (``scalars``); a boolean or a float is refused here."""
    if isinstance(value, (bool, float)):
        raise ValueError(f"id {value!r} is not text: ids are strings, quote it")
    return str(value) if isinstance(value, int) else value


# a query or document id: read as a string ("1" for a plain 1)
DocId = Annotated[Union[str, int], BeforeValidator(_id_text)]

# a relevance grade: an int, or text as trec_eval reads it (never a boolean, "1_0", "\u0661")
Grade = Annotated[int, BeforeValidator(grade_of)]


class InlineQuery(_Strict):
    id: DocId = Field(description="Query id (a plain decimal 1 is the string '1'; quote others).")
    text: str
    tags: List[str] = Field(default_factory=list)
    relevant: Dict[str, Grade] = Field(
        default_factory=dict, description="doc id -> grade (0 = judged non-relevant)."
    )

    @field_validator("relevant", mode="before")
    @classmethod
    def _str_keys(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): g for k, g in v.items()}
        return v


class InlineDocument(_Strict):
    id: DocId
    title: Optional[str] = None
    text: str


class GradesConfig(_Strict):
    """The relevance scale of the qrels: allowed range and an optional map applied on load."""

    min: Grade = Field(default=0, description="Lowest allowed grade (after the map).")
    max: Grade = Field(default=10, description="Highest allowed grade (after the map).")
    map: Optional[Dict[Grade, Grade]] = Field(
        default=None,
        description="raw grade -> grade, applied to every judgment as it is read, e.g. "
        "{-1: 0} for 'judged, not relevant' or {1: 3, 2: 2, 3: 1} for an inverted scale; "
        "grades not named are kept.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> GradesConfig:
        if self.min > self.max:
            raise ValueError(f"grades: min {self.min} is above max {self.max}")
        return self


class JudgmentsConfig(_Strict):
    beir: Optional[str] = Field(None, description="BEIR folder (corpus.jsonl, queries.jsonl, qrels/).")
    split: str = Field("test", description="BEIR qrels split.")
    queries: Optional[str] = Field(None, description="Queries file (JSONL or TSV).")
    qrels: Optional[str] = Field(None, description="Qrels file (TREC, BEIR TSV or JSONL).")
    corpus: Optional[str] = Field(None, description="Corpus JSONL (for throwaway/embedded indexes).")
    tags: Optional[str] = Field(None, description="Per-query tags (TSV or JSONL).")
    canary: Optional[str] = Field(
        None,
        description="Canary queries file (JSONL or TSV, as queries): unlabelled queries (e.g. a "
        "judge sample of production logs) run through every retriever and scored by the stability "
        "measures only, never by relevance measures (docs/how-to/stability.md).",
    )
    inline: Optional[List[InlineQuery]] = None
    documents: Optional[List[InlineDocument]] = None
    relevance_threshold: Annotated[int, Field(ge=1), NUMBER] = Field(
        1, description="Binary metrics (MRR, recall, MAP, ...) count grade >= this as relevant."
    )
    grades: GradesConfig = Field(default_factory=GradesConfig)
    missing_documents: Literal["count", "drop"] = Field(
        "count",
        description="Judgments naming documents absent from the corpus/index: count (they "
        "score 0, as trec_eval counts them) or drop (left out; a query left without a "
        "relevant document leaves the averages, listed).",
    )
    max_missing_documents: Annotated[float, Field(ge=0, le=1), NUMBER] = Field(
        0.01,
        description="Above this share of relevant judgments naming missing documents the "
        "suite is an error (wrong corpus, index or id scheme).",
    )
    require_all: bool = Field(
        False,
        description="Every judged query must have a text and every query a judgment "
        "(otherwise a gap is only reported).",
    )


# ---------------------------------------------------------------------- backend


# the keys of ``backend`` that belong to one type only (http, python, third-party packages)
BACKEND_KEYS_OF = {
    "request": ("http",),
    "response": ("http",),
    "batch": ("http",),
    "function": ("python",),
    "batch_function": ("python",),
    "max_concurrency": ("http", "python"),
    "timeout": ("python",),
}
# the keys a type cannot do without
BACKEND_NEEDS = {
    "http": (("request", "response"), "'request' (url, ...) and 'response' (hits, id, score)"),
    "python": (("function",), "'function' ('module:function')"),
}
ENGINE_TYPES = ("embedded", "elasticsearch", "opensearch")
PIPELINE_TYPES = ("http", "python")  # whole-pipeline backends: they answer 'service' retrievers


class BackendConfig(_Strict):
    type: str = Field(
        default="embedded",
        pattern=r"^[a-z][a-z0-9_-]{0,63}$",
        description="embedded | elasticsearch | opensearch | http (a team's search endpoint) | "
        "python (a function) | a backend an installed package declares (entry point group "
        "pytest_retrieval.backends).",
    )
    connection: Optional[ConnectionConfig] = None
    index: IndexConfig = Field(default_factory=IndexConfig)
    request: Optional[HttpRequestConfig] = Field(
        default=None, description="type http: the request sent per query."
    )
    response: Optional[HttpResponseConfig] = Field(
        default=None,
        description="type http: where the answer holds the hits, their ids and scores (JMESPath).",
    )
    batch: Optional[HttpBatchConfig] = Field(
        default=None, description="type http: the quality pass's queries sent size at a time in one POST."
    )
    function: Optional[str] = Field(
        default=None,
        description="type python: 'module:function' called as function(query_text, k, query_id) "
        "-> [(doc_id, score), ...] (sync or async).",
    )
    batch_function: Optional[str] = Field(
        default=None,
        description="type python: 'module:function' called as f(query_texts, k, query_ids, **params) -> one "
        "ranking per query, for the quality pass.",
    )
    max_concurrency: Optional[Annotated[int, Field(ge=1, le=256, strict=True)]] = Field(
        default=None,
        description="type http/python: queries asked at a time in the quality pass (http: 4, python: 1).",
    )
    timeout: Optional[Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False), NUMBER]] = Field(
        default=None,
        description="type python: seconds per call of function or batch_function (default 60), then an error.",
    )
    options: Optional[Dict[str, Any]] = Field(
        default=None,
        description="A third-party backend's own settings, handed to its factory as index['options'].",
    )

    @model_validator(mode="after")
    def _keys_of_the_type(self) -> BackendConfig:
        given = [key for key in BACKEND_KEYS_OF if getattr(self, key) is not None]
        for key in given:
            if self.type not in BACKEND_KEYS_OF[key]:
                raise ValueError(
                    f"{key!r} belongs to backend type {' or '.join(BACKEND_KEYS_OF[key])}, not {self.type!r}"
                )
        if self.options is not None and self.type in ENGINE_TYPES + PIPELINE_TYPES:
            raise ValueError(f"'options' is for a third-party backend, not {self.type!r}")
        needed, what = BACKEND_NEEDS.get(self.type, ((), ""))
        if any(getattr(self, key) is None for key in needed):
            raise ValueError(f"backend type {self.type} needs {what}")
        return self


# ------------------------------------------------------------- embedder, rerankers
# One config model per kind, beside its implementation in models/; EmbedderConfig and
# RerankerConfig are their unions, discriminated by ``type``.

# ------------------------------------------------------------------- retrievers


# a leaf's values and defaults are those of the spec it becomes (backends/base.py)


class BM25RetrieverConfig(_Strict):
    type: Literal["bm25"]
    # a boost is finite and >= 0 (Elasticsearch and OpenSearch refuse a negative one)
    fields: Union[List[str], Dict[str, Annotated[float, Field(ge=0), NUMBER]]] = Field(
        default_factory=lambda: [name for name, _ in BM25Spec.fields],
        description="Fields to search: ['title^2', 'text'] or {title: 2, text: 1} (boosts >= 0).",
    )
    multi_match_type: MultiMatchType = BM25Spec.multi_match_type
    tie_breaker: Annotated[float, Field(ge=0, le=1), NUMBER] = BM25Spec.tie_breaker
    k1: Annotated[float, Field(ge=0), NUMBER] = BM25Spec.k1
    b: Annotated[float, Field(ge=0, le=1), NUMBER] = BM25Spec.b
    stopwords: Optional[Stopwords] = BM25Spec.stopwords
    analyzer: Optional[Union[AnalyzerName, Dict[str, AnalyzerName]]] = None  # docs/how-to/languages.md


class KnnRetrieverConfig(_Strict):
    type: Literal["knn"]
    similarity: Similarity = KnnSpec.similarity
    num_candidates: Optional[Annotated[int, Field(gt=0), NUMBER]] = KnnSpec.num_candidates
    field: Optional[str] = None
    filter: Optional[Dict[str, Any]] = None


class SparseRetrieverConfig(_Strict):
    """Learned sparse retrieval (SPLADE-style): score(q, d) = sum over shared terms of
    q_weight x d_weight, times idf(t) with ``idf: bm25_plus1`` (applied query-side)."""

    type: Literal["sparse"]
    sparse_encoder: SparseEncoderConfig = Field(
        description="type: precomputed | onnx | callable, plus its options (see docs/how-to/sparse.md)."
    )
    idf: Literal["none", "bm25_plus1"] = Field(
        SparseSpec.idf,
        description="none: raw weights (SPLADE); bm25_plus1: query weights times "
        "ln(1 + (N - df + 0.5) / (df + 0.5)) (models trained for it, uniCOIL-like or BM25 term weights).",
    )
    field: Optional[str] = Field(
        None, description=f"The index field of the sparse vectors (default {SparseSpec.field!r})."
    )

    @field_serializer("sparse_encoder")
    def _encoder_as_written(self, encoder: Any) -> Dict[str, Any]:
        return encoder.as_written()


class TemplateRetrieverConfig(_Strict):
    type: Literal["template"]
    body: Dict[str, Any] = Field(description="Query body with {{query_text}}, {{query_vector}}, {{k}}.")
    pipeline: Optional[str] = None


class ServiceRetrieverConfig(_Strict):
    type: Literal["service"]
    params: Dict[
        str,
        Union[
            Annotated[str, Field(max_length=1000)], bool, int, Annotated[float, Field(allow_inf_nan=False)]
        ],
    ] = Field(
        default_factory=dict,
        description="Filled into the http request's {name} placeholders, or passed to the python "
        "function as keyword arguments (e.g. {mode: hybrid}).",
    )

    @field_validator("params")
    @classmethod
    def _param_names(cls, v: Dict[str, Any]) -> Dict[str, Any]:
        for name in v:
            if not PLACEHOLDER.fullmatch("{" + str(name) + "}"):
                raise ValueError(f"param name {name!r} is not a name (letters, digits, _)")
            if name in BUILT_IN_PLACEHOLDERS:
                raise ValueError(f"param {name!r} would hide the built-in placeholder {{{name}}}")
        return v


class RRFRetrieverConfig(_Strict):
    type: Literal["rrf"]
    of: List[str] = Field(min_length=2)
    rank_constant: Annotated[int, Field(ge=1), NUMBER] = 60
    window: Optional[Annotated[int, Field(ge=1), NUMBER]] = None
    semantics: Optional[Literal["elasticsearch", "opensearch"]] = None


class WeightedRetrieverConfig(_Strict):
    type: Literal["weighted"]
    of: List[str] = Field(min_length=2)
    normalization: Literal["min_max", "l2"] = "min_max"
    combination: Literal["arithmetic_mean", "geometric_mean", "harmonic_mean"] = "arithmetic_mean"
    weights: Optional[List[Annotated[float, Field(ge=0, le=1), NUMBER]]] = None
    window: Optional[Annotated[int, Field(ge=1), NUMBER]] = None


class LinearRetrieverConfig(_Strict):
    type: Literal["linear"]
    of: List[str] = Field(min_length=2)
    normalizer: Literal["minmax", "l2_norm", "none"] = "minmax"
    weights: Optional[List[Annotated[float, Field(ge=0), NUMBER]]] = None
    window: Optional[Annotated[int, Field(ge=1), NUMBER]] = None


class RerankRetrieverConfig(_Strict):
    type: Literal["rerank"]
    of: List[str] = Field(
        min_length=1, max_length=1, description="The one retriever whose candidates are reranked."
    )
    window: Annotated[int, Field(ge=1), NUMBER] = Field(
        100, description="Candidates re-scored per query (the reranked ranking holds only these)."
    )
    reranker: RerankerConfig = Field(
        description="type: onnx-cross-encoder | onnx-bi-encoder | sentence-transformers | "
        "cohere | callable, plus its options (docs/how-to/hybrid.md, A reranker)."
    )
    min_lift: Annotated[float, Field(ge=-1, le=1), NUMBER] = Field(
        0.01,
        description="Verdict: the reranker earns its cost when it lifts nDCG@10 over its "
        "input by at least this much ...",
    )
    p95_budget_ms: Optional[Annotated[float, Field(gt=0), NUMBER]] = Field(
        None, description="... and its p95 stays within this budget (default: its p95_ms floor)."
    )

    @field_serializer("reranker")
    def _reranker_as_written(self, reranker: Any) -> Dict[str, Any]:
        return reranker.as_written()  # what baseline fingerprints hash, as before the models


RetrieverConfig = Annotated[
    Union[
        BM25RetrieverConfig,
        KnnRetrieverConfig,
        SparseRetrieverConfig,
        TemplateRetrieverConfig,
        ServiceRetrieverConfig,
        RRFRetrieverConfig,
        WeightedRetrieverConfig,
        LinearRetrieverConfig,
        RerankRetrieverConfig,
    ],
    Field(discriminator="type"),
]

FUSION_TYPES = ("rrf", "weighted", "linear")
STAGE_TYPES = FUSION_TYPES + ("rerank",)  # retrievers built on others ('of'), run client-side


# ------------------------------------------------------------------------ other


class EvaluationConfig(_Strict):
    profile: Literal["exp", "trec"] = Field(
        default="exp", description="nDCG gain: exp = 2^rel - 1 (design default), trec = rel (trec_eval)."
    )
    ties: Literal["engine", "trec"] = Field(
        default="engine", description="engine = keep the engine's order; trec = score desc, docid desc."
    )
    depth: Annotated[int, Field(ge=1), NUMBER] = Field(default=100, description="Hits fetched per query.")
    average_over: Optional[Literal["relevant", "judged", "run"]] = Field(
        default=None,
        description="Queries the means are over: relevant = those with a relevant judgment (default "
        "under profile exp); judged = every judged query, one without hits scoring 0 (trec_eval -c); "
        "run = the judged queries in the run (trec_eval's default, pytrec_eval, BEIR; default under "
        "profile trec). A query judged without a relevant document counts (as 0) under judged and run.",
    )
    exclude_self_hits: bool = Field(
        default=False,
        description="Drop any hit whose doc id equals the query id before scoring (BEIR's "
        "ignore_identical_ids), fetching one hit more so the cut-offs still hold k hits.",
    )
    metrics: List[str] = Field(
        default_factory=lambda: ["ndcg@10", "mrr@10", "recall@100"],
        description="Metrics shown in the summary and report.",
    )
    rank_eval: bool = Field(default=False, description="Cross-check with _rank_eval (--retrieval-rank-eval).")


# A sane maximum of timed work: 10,000 warm-up requests, 10,000 passes over the queries (auto
# plans p99 on one query at 2,000); more is a typo (an extra zero), not a measurement (#28).
MAX_LATENCY_WARMUP = 10_000
MAX_LATENCY_REPETITIONS = 10_000


class LatencyConfig(_Strict):
    enabled: bool = True
    warmup: Annotated[int, Field(ge=0, le=MAX_LATENCY_WARMUP), NUMBER] = 5
    repetitions: Union[Annotated[int, Field(ge=1, le=MAX_LATENCY_REPETITIONS), NUMBER], Literal["auto"]] = (
        Field(
            default="auto",
            description="Passes over the queries; auto = enough for 20 samples above the "
            "gated percentile (p95: 400 samples, p99: 2000).",
        )
    )
    max_queries: Union[Annotated[int, Field(ge=1), NUMBER], Literal["all"], None] = Field(
        default=None,
        description="Queries timed. Default: a seeded sample, enough for the gated percentile's "
        "interval (at least 400, at most 1,000); all = every query; N = the first N.",
    )
    verdict: Literal["ci", "point"] = Field(
        default="ci",
        description="ci: fail only when the percentile's lower confidence bound is above "
        "the ceiling (does not flake on noise); point: compare the estimate.",
    )
    confidence: Annotated[float, Field(gt=0.5, lt=1), NUMBER] = 0.95
    baseline: Optional[str] = Field(
        default=None,
        description="A/B: the retriever timed interleaved (same machine, same job) with "
        "every retriever that has a p50_ratio/p95_ratio/p99_ratio ceiling.",
    )


class UnanswerableConfig(_Strict):
    """Queries with no relevant document in the corpus, scored by whether the retriever abstains."""

    tag: str = Field("unanswerable", description="The query tag marking them.")
    threshold: Dict[str, Annotated[float, Field(strict=True, allow_inf_nan=False)]] = Field(
        default_factory=dict,
        description="retriever -> top score below which it abstains "
        "(without one, only zero hits count as abstaining).",
    )


class ExpectationConfig(_Strict):
    """A golden query: what one query must (not) return, checked per retriever as its own test
    item ``<suite file>::<retriever>::expect[<name>]``."""

    query: Optional[str] = Field(None, description="The query text (or give query_id).")
    query_id: Optional[DocId] = Field(None, description="A judged query's id (or give query).")
    name: Optional[str] = Field(None, description="The item's name (default: the query or its id).")
    retrievers: Optional[List[str]] = Field(None, description="The retrievers it applies to (default: all).")
    contains: List[DocId] = Field(default_factory=list, description="Doc ids that must be in the top k.")
    excludes: List[DocId] = Field(default_factory=list, description="Doc ids that must not be in the top k.")
    k: Annotated[int, Field(ge=1, strict=True)] = Field(
        10, description="The cut-off of contains and excludes."
    )
    first: Optional[DocId] = Field(None, description="The doc id that must be ranked first.")
    above: Optional[Annotated[List[DocId], Field(min_length=2, max_length=2)]] = Field(
        None, description="[a, b]: a must be among the hits and ranked above b."
    )
    min_hits: Optional[Annotated[int, Field(ge=1, strict=True)]] = Field(
        None, description="At least this many hits."
    )

    @field_validator("retrievers")
    @classmethod
    def _some_retrievers(cls, v: Optional[List[str]]) -> Optional[List[str]]:
        if v is not None and not v:
            raise ValueError("an empty list applies to no retriever: name some, or leave it out for all")
        return v

    @field_validator("above")
    @classmethod
    def _two_documents(cls, v: Optional[List[str]]) -> Optional[List[str]]:
        if v is not None and len(v) == 2 and str(v[0]) == str(v[1]):
            raise ValueError(f"above names {str(v[0])!r} twice: [a, b] ranks one document above another")
        return v

    @model_validator(mode="after")
    def _one_query_and_a_check(self) -> ExpectationConfig:
        if (self.query is None) == (self.query_id is None):
            raise ValueError("an expectation needs exactly one of 'query' (text) or 'query_id'")
        if self.query is not None and not self.query.strip():
            raise ValueError("an expectation's query is empty")
        if not (
            self.contains
            or self.excludes
            or self.first is not None
            or self.above
            or self.min_hits is not None
        ):
            raise ValueError("an expectation needs a check: contains, excludes, first, above or min_hits")
        return self


class SuiteFile(_Strict, GateOwnership):
    """Schema of a pytest-retrieval suite file (``owner``, ``mention``, ``teams``, ``overrides``: ownership.py)."""

    model_config = ConfigDict(extra="forbid", title="pytest-retrieval suite")

    suite: Optional[str] = Field(None, description="Suite name (default: the file name).")
    description: Optional[str] = None
    judgments: JudgmentsConfig
    backend: BackendConfig = Field(default_factory=BackendConfig)
    embedder: Optional[EmbedderConfig] = None
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    latency: LatencyConfig = Field(default_factory=LatencyConfig)
    retrievers: Dict[str, RetrieverConfig] = Field(min_length=1)
    regression: Optional[RegressionConfig] = None
    unanswerable: Optional[UnanswerableConfig] = None
    stability: StabilityGates = Field(
        default_factory=dict,
        description="retriever -> {stability measure: threshold} against the baseline's stored "
        "rankings, e.g. {rrf: {rbo@10: 0.9, top1_changed: 0.05}}: similarities (rbo, jaccard, "
        "overlap, kendall_tau) pass when value >= threshold, shares of changed queries and rank "
        "changes when value <= threshold.",
    )
    floors: Dict[str, Dict[str, FloorValue]] = Field(
        default_factory=dict,
        description="retriever -> {metric: floor}. Quality metrics pass when value >= floor; "
        "p50_ms/p95_ms/p99_ms pass when value <= floor.",
    )
    expectations: List[ExpectationConfig] = Field(
        default_factory=list,
        description="Golden queries: per query, documents that must (not) be in the top k, "
        "ranked first or above another; one test item per (expectation, retriever).",
    )


def json_schema() -> Dict[str, Any]:
    schema = SuiteFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["properties"]["include"] = {
        "description": "Files merged before this one (this file overrides them).",
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
    }
    return schema
