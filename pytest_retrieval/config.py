"""The suite file: schema (pydantic, published as JSON Schema), loading and validation.

A suite file (``retrieval_*.yaml`` or ``*.retrieval.yaml``) names a judgment set, a
backend, an embedder, retrievers (leaves and stages built on others) and floors.
Every mistake becomes one ``ConfigError`` line: file, key path, line, problem.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Tuple, Union

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from typing_extensions import Annotated

from .errors import ConfigError
from .yamlio import KeyPath, Positions, deep_merge, format_path, load_with_includes, locate

LATENCY_KEYS = ("p50_ms", "p95_ms", "p99_ms")
# pXX(retriever) / pXX(latency.baseline), timed interleaved in the same job (A/B)
LATENCY_RATIO_KEYS = ("p50_ratio", "p95_ratio", "p99_ratio")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# ------------------------------------------------------------------- judgments

class InlineQuery(_Strict):
    id: Union[str, int] = Field(description="Query id (ints are read as strings).")
    text: str
    tags: List[str] = Field(default_factory=list)
    relevant: Dict[str, int] = Field(default_factory=dict,
                                     description="doc id -> grade (0 = judged non-relevant).")

    @field_validator("relevant", mode="before")
    @classmethod
    def _str_keys(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): g for k, g in v.items()}
        return v


class InlineDocument(_Strict):
    id: Union[str, int]
    title: Optional[str] = None
    text: str


class JudgmentsConfig(_Strict):
    beir: Optional[str] = Field(None, description="BEIR folder (corpus.jsonl, queries.jsonl, qrels/).")
    split: str = Field("test", description="BEIR qrels split.")
    queries: Optional[str] = Field(None, description="Queries file (JSONL or TSV).")
    qrels: Optional[str] = Field(None, description="Qrels file (TREC, BEIR TSV or JSONL).")
    corpus: Optional[str] = Field(None, description="Corpus JSONL (for throwaway/embedded indexes).")
    tags: Optional[str] = Field(None, description="Per-query tags (TSV or JSONL).")
    inline: Optional[List[InlineQuery]] = None
    documents: Optional[List[InlineDocument]] = None
    relevance_threshold: Annotated[int, Field(ge=1)] = Field(
        1, description="Binary metrics (MRR, recall, MAP, ...) count grade >= this as relevant.")


# ---------------------------------------------------------------------- backend

class ConnectionConfig(_Strict):
    hosts: List[str] = Field(default_factory=lambda: ["http://localhost:9200"])
    api_key: Optional[SecretStr] = None
    username: Optional[str] = None
    password: Optional[SecretStr] = None
    ca_certs: Optional[str] = None
    verify_certs: bool = True
    request_timeout: Annotated[float, Field(gt=0)] = 30.0
    max_retries: Annotated[int, Field(ge=0)] = 3
    retry_on_timeout: bool = True
    batch_size: Annotated[int, Field(ge=1)] = Field(100, description="Queries per _msearch request.")
    concurrency: Annotated[int, Field(ge=1)] = Field(3, description="_msearch requests in flight.")


class IndexConfig(_Strict):
    name: Optional[str] = Field(None, description="Existing index (read-only). Omit for a throwaway index built from the corpus.")
    mappings: Optional[Dict[str, Any]] = None
    settings: Optional[Dict[str, Any]] = None
    vector_field: str = "embedding"
    reap_after_hours: Annotated[float, Field(gt=0)] = Field(
        24, description="Throwaway indexes of crashed runs older than this are deleted.")


class BackendConfig(_Strict):
    type: Literal["embedded", "elasticsearch", "opensearch"] = "embedded"
    connection: Optional[ConnectionConfig] = None
    index: IndexConfig = Field(default_factory=IndexConfig)


# --------------------------------------------------------------------- embedder

class PrecomputedEmbedderConfig(_Strict):
    type: Literal["precomputed"]
    queries: str
    query_ids: Optional[str] = None
    documents: Optional[str] = None
    document_ids: Optional[str] = None


class OnnxEmbedderConfig(_Strict):
    type: Literal["onnx"]
    model: str
    max_length: Annotated[int, Field(gt=0)] = 256
    batch_size: Annotated[int, Field(gt=0)] = 32
    normalize: bool = True


class SentenceTransformersEmbedderConfig(_Strict):
    type: Literal["sentence-transformers"]
    model: str


class CallableEmbedderConfig(_Strict):
    type: Literal["callable"]
    function: str = Field(description="module:function taking a list of texts")


EmbedderConfig = Annotated[Union[PrecomputedEmbedderConfig, OnnxEmbedderConfig,
                                 SentenceTransformersEmbedderConfig, CallableEmbedderConfig],
                           Field(discriminator="type")]


# ------------------------------------------------------------------- retrievers

class BM25RetrieverConfig(_Strict):
    type: Literal["bm25"]
    fields: Union[List[str], Dict[str, float]] = Field(
        default_factory=lambda: ["title", "text"],
        description="Fields to search: ['title^2', 'text'] or {title: 2, text: 1}.")
    multi_match_type: Literal["best_fields", "most_fields"] = "best_fields"
    tie_breaker: Annotated[float, Field(ge=0, le=1)] = 0.0
    k1: Annotated[float, Field(ge=0)] = 1.2
    b: Annotated[float, Field(ge=0, le=1)] = 0.75
    stopwords: Optional[Literal["english"]] = None


class KnnRetrieverConfig(_Strict):
    type: Literal["knn"]
    similarity: Literal["cosine", "dot_product", "l2_norm"] = "cosine"
    num_candidates: Optional[Annotated[int, Field(gt=0)]] = None
    field: Optional[str] = None
    filter: Optional[Dict[str, Any]] = None


class TemplateRetrieverConfig(_Strict):
    type: Literal["template"]
    body: Dict[str, Any] = Field(description="Query body with {{query_text}}, {{query_vector}}, {{k}}.")
    pipeline: Optional[str] = None


class RRFRetrieverConfig(_Strict):
    type: Literal["rrf"]
    of: List[str] = Field(min_length=2)
    rank_constant: Annotated[int, Field(ge=1)] = 60
    window: Optional[Annotated[int, Field(ge=1)]] = None
    semantics: Optional[Literal["elasticsearch", "opensearch"]] = None


class WeightedRetrieverConfig(_Strict):
    type: Literal["weighted"]
    of: List[str] = Field(min_length=2)
    normalization: Literal["min_max", "l2"] = "min_max"
    combination: Literal["arithmetic_mean", "geometric_mean", "harmonic_mean"] = "arithmetic_mean"
    weights: Optional[List[Annotated[float, Field(ge=0, le=1)]]] = None
    window: Optional[Annotated[int, Field(ge=1)]] = None


class LinearRetrieverConfig(_Strict):
    type: Literal["linear"]
    of: List[str] = Field(min_length=2)
    normalizer: Literal["minmax", "l2_norm", "none"] = "minmax"
    weights: Optional[List[Annotated[float, Field(ge=0)]]] = None
    window: Optional[Annotated[int, Field(ge=1)]] = None


class RerankRetrieverConfig(_Strict):
    type: Literal["rerank"]
    of: List[str] = Field(min_length=1, max_length=1,
                          description="The one retriever whose candidates are reranked.")
    window: Annotated[int, Field(ge=1)] = Field(
        100, description="Candidates re-scored per query (the reranked ranking holds only these).")
    reranker: Dict[str, Any] = Field(
        description="type: onnx-cross-encoder | onnx-bi-encoder | sentence-transformers | "
                    "cohere | callable, plus its options (see README).")
    min_lift: Annotated[float, Field(ge=-1, le=1)] = Field(
        0.01, description="Verdict: the reranker earns its cost when it lifts nDCG@10 over its "
                          "input by at least this much ...")
    p95_budget_ms: Optional[Annotated[float, Field(gt=0)]] = Field(
        None, description="... and its p95 stays within this budget (default: its p95_ms floor).")


RetrieverConfig = Annotated[Union[BM25RetrieverConfig, KnnRetrieverConfig, TemplateRetrieverConfig,
                                  RRFRetrieverConfig, WeightedRetrieverConfig,
                                  LinearRetrieverConfig, RerankRetrieverConfig],
                            Field(discriminator="type")]

FUSION_TYPES = ("rrf", "weighted", "linear")
STAGE_TYPES = FUSION_TYPES + ("rerank",)  # retrievers built on others ('of'), run client-side


# ------------------------------------------------------------------------ other

class EvaluationConfig(_Strict):
    profile: Literal["exp", "trec"] = Field(
        "exp", description="nDCG gain: exp = 2^rel - 1 (design default), trec = rel (trec_eval).")
    ties: Literal["engine", "trec"] = Field(
        "engine", description="engine = keep the engine's order; trec = score desc, docid desc.")
    depth: Annotated[int, Field(ge=1)] = Field(100, description="Hits fetched per query.")
    metrics: List[str] = Field(default_factory=lambda: ["ndcg@10", "mrr@10", "recall@100"],
                               description="Metrics shown in the summary and report.")


class LatencyConfig(_Strict):
    enabled: bool = True
    warmup: Annotated[int, Field(ge=0)] = 5
    repetitions: Union[Annotated[int, Field(ge=1)], Literal["auto"]] = Field(
        "auto", description="Passes over the queries; auto = enough for 20 samples above the "
                            "gated percentile (p95: 400 samples, p99: 2000).")
    max_queries: Optional[Annotated[int, Field(ge=1)]] = None
    verdict: Literal["ci", "point"] = Field(
        "ci", description="ci: fail only when the percentile's lower confidence bound is above "
                          "the ceiling (does not flake on noise); point: compare the estimate.")
    confidence: Annotated[float, Field(gt=0.5, lt=1)] = 0.95
    baseline: Optional[str] = Field(
        None, description="A/B: the retriever timed interleaved (same machine, same job) with "
                          "every retriever that has a p50_ratio/p95_ratio/p99_ratio ceiling.")


class RegressionConfig(_Strict):
    """Paired comparison of every query against a committed baseline (non-inferiority)."""

    baseline: Optional[str] = Field(None, description="Baseline JSON (default: <suite file stem>.baseline.json beside it).")
    max_drop: Dict[str, Annotated[float, Field(ge=0, le=1)]] = Field(
        description="metric -> the largest mean drop tolerated, e.g. {ndcg@10: 0.01}.", min_length=1)
    retrievers: Optional[List[str]] = Field(None, description="Retrievers compared (default: all).")
    strata: bool = Field(False, description="Also one gate per query tag, Holm-corrected across tags.")
    confidence: Annotated[float, Field(gt=0.5, lt=1)] = 0.95
    resamples: Annotated[int, Field(ge=100)] = 10000
    seed: int = 0
    on_fingerprint_mismatch: Literal["floors_only", "error"] = Field(
        "floors_only", description="When queries/qrels/corpus changed since the baseline.")


class UnanswerableConfig(_Strict):
    """Queries with no relevant document in the corpus, scored by whether the retriever abstains."""

    tag: str = Field("unanswerable", description="The query tag marking them.")
    threshold: Dict[str, float] = Field(
        default_factory=dict, description="retriever -> top score below which it abstains "
                                          "(without one, only zero hits count as abstaining).")


FloorValue = Union[float, int]


class SuiteFile(_Strict):
    """Schema of a pytest-retrieval suite file."""

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
    floors: Dict[str, Dict[str, FloorValue]] = Field(
        default_factory=dict,
        description="retriever -> {metric: floor}. Quality metrics pass when value >= floor; "
                    "p50_ms/p95_ms/p99_ms pass when value <= floor.")


def json_schema() -> Dict[str, Any]:
    schema = SuiteFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["properties"]["include"] = {
        "description": "Files merged before this one (this file overrides them).",
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
    return schema


# ------------------------------------------------------------------ loaded suite

@dataclass(frozen=True)
class Floor:
    retriever: str
    metric: str  # canonical metric string, or p50_ms/p95_ms/p99_ms
    op: str  # ">=" or "<="
    threshold: float
    origin: str = ""  # "file:line" where the floor was written
    stratum: Optional[str] = None  # a query tag: the floor holds on that stratum's mean

    @property
    def name(self) -> str:
        return f"{self.metric}[{self.stratum}]" if self.stratum else self.metric

    @property
    def is_latency(self) -> bool:
        return self.metric in LATENCY_KEYS

    @property
    def is_latency_ratio(self) -> bool:
        return self.metric in LATENCY_RATIO_KEYS

    @property
    def is_lift(self) -> bool:
        return self.metric.startswith("lift@")


@dataclass
class Suite:
    """A validated suite: the parsed model plus where things came from."""

    name: str
    path: Path
    model: SuiteFile
    positions: Positions
    floors: List[Floor]
    order: List[str]  # retrievers in dependency order
    metrics: List[str]  # canonical metrics to evaluate (summary + floors)
    regression: List[Tuple[str, str, float]] = field(default_factory=list)  # (retriever, metric, max_drop)
    files: List[str] = field(default_factory=list)  # every file that went into it

    def resolve_path(self, key: KeyPath, value: str) -> Path:
        """A relative path is relative to the file where it was written."""
        p = Path(value).expanduser()
        if p.is_absolute():
            return p
        file, _ = locate(self.positions, key)
        base = Path(file).parent if file else self.path.parent
        return (base / p)

    def fusion(self, name: str, depth: int):
        """The ``fusion.FusionConfig`` of a fusion retriever; window defaults to ``depth``."""
        from .fusion import FusionConfig

        r = self.model.retrievers[name]
        engine = self.model.backend.type
        window = r.window or depth
        try:
            if r.type == "rrf":
                # OpenSearch's rounding on OpenSearch; Elasticsearch's float32 sums elsewhere
                # (embedded included, so a suite ranks alike on embedded and Elasticsearch)
                semantics = r.semantics or ("opensearch" if engine == "opensearch"
                                            else "elasticsearch")
                return FusionConfig(method="rrf", semantics=semantics,
                                    rank_constant=r.rank_constant, window=window)
            weights = tuple(r.weights) if r.weights else None
            if r.type == "weighted":
                return FusionConfig(method="weighted", normalization=r.normalization,
                                    combination=r.combination, weights=weights, window=window)
            return FusionConfig(method="linear", normalization=r.normalizer, weights=weights,
                                window=window)
        except ValueError as exc:
            key = ("retrievers", name)
            for attr in ("weights", "rank_constant", "window", "semantics", "normalization"):
                if attr in str(exc) and key + (attr,) in self.positions:
                    key = key + (attr,)
                    break
            raise self.error(key, str(exc)) from None

    def reranker(self, name: str):
        """The reranker of a ``rerank`` retriever (``rerankers.make_reranker``); relative model
        paths and callables resolve against the folder of the file that names them."""
        from .errors import RetrievalError
        from .rerankers import make_reranker

        key = ("retrievers", name, "reranker")
        file, _ = locate(self.positions, key)
        base = Path(file).parent if file else self.path.parent
        try:
            return make_reranker(self.model.retrievers[name].reranker, base)
        except RetrievalError as exc:
            detail = getattr(exc, "detail", None) or str(exc)
            if getattr(exc, "file", None):
                detail += f" ({exc.file})"
            raise self.error(key, detail) from None

    def bm25_fields(self, name: str) -> Tuple[Tuple[str, float], ...]:
        """``['title^2', 'text']`` or ``{title: 2, text: 1}`` -> ((field, boost), ...)."""
        fields = self.model.retrievers[name].fields
        if isinstance(fields, dict):
            return tuple((f, float(w)) for f, w in fields.items())
        out = []
        for i, text in enumerate(fields):
            field_, _, boost = text.partition("^")
            try:
                value = float(boost) if boost else 1.0
            except ValueError:
                value = -1.0
            if not field_ or value < 0:
                raise self.error(("retrievers", name, "fields", i),
                                 f"bad field {text!r} (expected name or name^boost, boost >= 0)")
            out.append((field_, value))
        if not out:
            raise self.error(("retrievers", name, "fields"), "no fields to search")
        return tuple(out)

    def error(self, key: KeyPath, message: str) -> ConfigError:
        file, line = locate(self.positions, key)
        return ConfigError(message, file=file or str(self.path), key=format_path(key), line=line)


_ALL_KEYS: Optional[List[str]] = None


def _known_keys() -> List[str]:
    global _ALL_KEYS
    if _ALL_KEYS is None:
        keys = set()
        for model in (SuiteFile, JudgmentsConfig, InlineQuery, InlineDocument, ConnectionConfig,
                      IndexConfig, BackendConfig, PrecomputedEmbedderConfig, OnnxEmbedderConfig,
                      CallableEmbedderConfig, BM25RetrieverConfig, KnnRetrieverConfig,
                      TemplateRetrieverConfig, RRFRetrieverConfig, WeightedRetrieverConfig,
                      LinearRetrieverConfig, EvaluationConfig, LatencyConfig, RegressionConfig,
                      UnanswerableConfig):
            keys.update(model.model_fields)
        keys.add("include")
        _ALL_KEYS = sorted(keys)
    return _ALL_KEYS


def _data_path(data: Any, loc: Tuple[Any, ...]) -> KeyPath:
    """Map a pydantic error location onto the data's key path (dropping union tags)."""
    out: List[Any] = []
    cur = data
    for part in loc:
        if isinstance(cur, dict) and part in cur:
            out.append(part)
            cur = cur[part]
        elif isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur):
            out.append(part)
            cur = cur[part]
    return tuple(out)


def _pydantic_error(exc: ValidationError, data: Any, positions: Positions, path: Path) -> ConfigError:
    errors = exc.errors(include_url=False)
    # the most telling problem first: a misspelt key also shows up as a missing one
    order = {"extra_forbidden": 0, "union_tag_invalid": 1, "union_tag_not_found": 2, "missing": 9}
    errors.sort(key=lambda e: order.get(e.get("type", ""), 5))
    err = errors[0]
    loc = tuple(err.get("loc", ()))
    key = _data_path(data, loc)
    etype = err.get("type", "")
    if etype == "extra_forbidden":
        bad = loc[-1] if loc else "?"
        key = _data_path(data, loc)
        close = difflib.get_close_matches(str(bad), _known_keys(), n=1)
        msg = f"unknown key {bad!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
    elif etype == "missing":
        msg = f"missing required key {loc[-1]!r}"
    elif etype == "union_tag_invalid":
        ctx = err.get("ctx", {})
        msg = f"unknown type {ctx.get('tag')!r} (expected one of: {ctx.get('expected_tags')})"
        key = key + ("type",) if isinstance(_get(data, key), dict) and "type" in _get(data, key) else key
    elif etype == "union_tag_not_found":
        msg = "missing 'type' (which kind of retriever/embedder is this?)"
    elif etype == "literal_error":
        msg = f"{err.get('input')!r} is not allowed: {err['msg'].replace('Input should be ', 'expected ')}"
    else:
        msg = f"{err['msg']} (got {err.get('input')!r})" if "input" in err and not isinstance(
            err.get("input"), (dict, list)) else err["msg"]
    more = f" (+{len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    file, line = locate(positions, key)
    return ConfigError(msg + more, file=file or str(path), key=format_path(key) or None, line=line)


def _get(data: Any, key: KeyPath) -> Any:
    for k in key:
        data = data[k]
    return data


def load_suite(path: Path, *, overrides: Tuple[Path, ...] = (),
               cli: Optional[Dict[str, Any]] = None) -> Suite:
    """Load, merge, interpolate and validate a suite file. Raises ``ConfigError``."""
    from .metrics import parse_metric

    path = Path(path)
    data, positions = load_with_includes(path)
    files = sorted({f for f, _ in positions.values()})
    for ov in overrides:
        ov_data, ov_pos = load_with_includes(Path(ov))
        data, positions = deep_merge(data, ov_data, positions, ov_pos)
        files.append(str(ov))
    if cli:
        for dotted, value in cli.items():
            node = data
            keys = dotted.split(".")
            for k in keys[:-1]:
                node = node.setdefault(k, {})
            node[keys[-1]] = value
    try:
        model = SuiteFile.model_validate(data)
    except ValidationError as exc:
        raise _pydantic_error(exc, data, positions, path) from None

    name = model.suite or path.name
    suite = Suite(name=name, path=path, model=model, positions=positions, floors=[], order=[],
                  metrics=[], files=files)
    j = model.judgments
    if not (j.beir or j.qrels or j.inline):
        raise suite.error(("judgments",), "needs one of: beir, qrels (+ queries), inline")
    if j.qrels and not (j.queries or j.beir):
        raise suite.error(("judgments", "qrels"), "qrels given without queries (add judgments.queries)")

    # retriever graph: references and cycles
    retrievers = model.retrievers
    for name_, r in retrievers.items():
        for i, ref in enumerate(getattr(r, "of", []) or []):
            if ref not in retrievers:
                close = difflib.get_close_matches(ref, list(retrievers), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise suite.error(("retrievers", name_, "of", i),
                                  f"unknown retriever {ref!r}{hint}; defined: {', '.join(retrievers)}")
            if ref == name_:
                raise suite.error(("retrievers", name_, "of", i), "a retriever cannot build on itself")
        if len(set(getattr(r, "of", []) or [])) != len(getattr(r, "of", []) or []):
            raise suite.error(("retrievers", name_, "of"), "lists the same retriever twice")
        weights = getattr(r, "weights", None)
        if weights is not None and len(weights) != len(r.of):
            raise suite.error(("retrievers", name_, "weights"),
                              f"{len(weights)} weight(s) for {len(r.of)} retrievers in 'of'")
        if r.type in FUSION_TYPES:
            suite.fusion(name_, model.evaluation.depth)  # validates now, at collection
        if r.type == "rerank":
            suite.reranker(name_)  # validates type and options now, at collection
        if r.type == "bm25":
            suite.bm25_fields(name_)
        if r.type == "knn" and model.embedder is None and model.backend.type == "embedded":
            raise suite.error(("retrievers", name_), "a knn retriever needs an 'embedder' section")
    suite.order = _topological(retrievers, suite)

    # metrics
    metrics: List[str] = []
    for i, m in enumerate(model.evaluation.metrics):
        try:
            metrics.append(str(parse_metric(m)))
        except ValueError as exc:
            raise suite.error(("evaluation", "metrics", i), str(exc)) from None

    # floors
    for r_name, per_metric in model.floors.items():
        if r_name not in retrievers:
            close = difflib.get_close_matches(r_name, list(retrievers), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise suite.error(("floors", r_name), f"floor for unknown retriever {r_name!r}{hint}")
        if not per_metric:
            raise suite.error(("floors", r_name), "no metric floors listed")
        for m, value in per_metric.items():
            key = ("floors", r_name, m)
            if isinstance(value, bool):
                raise suite.error(key, f"floor must be a number, got {value!r}")
            try:
                canon, op, stratum = floor_key(str(m))
            except ValueError as exc:
                raise suite.error(key, str(exc)) from None
            if stratum and (canon in LATENCY_KEYS + LATENCY_RATIO_KEYS or canon.startswith("lift@")
                            or canon == "abstention"):
                raise suite.error(key, "latency and lift floors hold for the whole suite, "
                                       "not per stratum")
            if canon == "abstention":
                if model.unanswerable is None:
                    raise suite.error(key, "an abstention floor needs an 'unanswerable' section "
                                           "(which tag marks unanswerable queries)")
                if not 0.0 <= float(value) <= 1.0:
                    raise suite.error(key, f"abstention is a rate in [0, 1]; got {value!r}")
            elif canon in LATENCY_RATIO_KEYS:
                base = model.latency.baseline
                if not model.latency.enabled:
                    raise suite.error(key, "latency ratio given but latency.enabled is false")
                if base is None:
                    raise suite.error(key, f"{canon} compares with an A/B baseline: name it in "
                                           f"latency.baseline (a retriever of this suite)")
                if base == r_name:
                    raise suite.error(key, f"{r_name!r} is latency.baseline itself: its ratio is 1")
                if value <= 0:
                    raise suite.error(key, f"a latency ratio must be > 0, got {value!r}")
            elif canon in LATENCY_KEYS:
                if value <= 0:
                    raise suite.error(key, f"latency floor must be > 0 ms, got {value!r}")
                if not model.latency.enabled:
                    raise suite.error(key, "latency floor given but latency.enabled is false")
            elif canon.startswith("lift@"):
                if not getattr(retrievers[r_name], "of", None):
                    raise suite.error(key, f"{canon} needs a retriever built on others (with 'of'); "
                                      f"{r_name!r} is a {retrievers[r_name].type} leaf")
                if not -1.0 <= float(value) <= 1.0:
                    raise suite.error(key, f"a lift lies in [-1, 1]; floor {value!r} can never be met")
                inner = canon[len("lift@"):]
                if inner not in metrics:
                    metrics.append(inner)
            else:
                if not 0.0 <= float(value) <= 1.0:
                    raise suite.error(key, f"{canon} lies in [0, 1]; floor {value!r} can never be met"
                                      if value > 1 else f"floor {value!r} is below 0")
                if canon not in metrics:
                    metrics.append(canon)
            file, line = locate(positions, key)
            suite.floors.append(Floor(r_name, canon, op, float(value),
                                      origin=f"{file}:{line}" if file else "", stratum=stratum))
    if model.latency.baseline is not None and model.latency.baseline not in retrievers:
        close = difflib.get_close_matches(model.latency.baseline, list(retrievers), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise suite.error(("latency", "baseline"),
                          f"unknown retriever {model.latency.baseline!r}{hint}")
    if model.unanswerable is not None:
        for i, r_name in enumerate(model.unanswerable.threshold):
            if r_name not in retrievers:
                raise suite.error(("unanswerable", "threshold", r_name), f"unknown retriever {r_name!r}")
    reg = model.regression
    if reg is not None:
        names = reg.retrievers or list(retrievers)
        for i, r_name in enumerate(names):
            if r_name not in retrievers:
                raise suite.error(("regression", "retrievers", i), f"unknown retriever {r_name!r}")
        for m, margin in reg.max_drop.items():
            try:
                canon = str(parse_metric(str(m)))
            except ValueError as exc:
                raise suite.error(("regression", "max_drop", m), str(exc)) from None
            if canon not in metrics:
                metrics.append(canon)
            suite.regression += [(r_name, canon, float(margin)) for r_name in names]
    if not suite.floors and not suite.regression:
        raise suite.error(("floors",), "no floors: a suite must gate at least one retriever metric")
    suite.metrics = metrics
    return suite


def floor_key(key: str) -> Tuple[str, str, Optional[str]]:
    """A floor's metric key -> (canonical key, op, stratum). ``p95_ms`` (<=), ``ndcg@10`` (>=),
    ``lift@ndcg@10`` (>=: the stage's value minus its best input's), ``ndcg@10[multi-hop]``
    (>=, on the queries tagged ``multi-hop`` only)."""
    from .metrics import parse_metric

    stratum = None
    if key.endswith("]") and "[" in key:
        key, _, stratum = key[:-1].partition("[")
        if not stratum.strip():
            raise ValueError("empty stratum in [...]: write metric[tag]")
        stratum = stratum.strip()
    if key in LATENCY_KEYS or key in LATENCY_RATIO_KEYS:
        return key, "<=", stratum
    if key == "abstention":  # share of unanswerable queries the retriever abstained on
        return key, ">=", stratum
    if key.lower().startswith("lift@"):
        return "lift@" + str(parse_metric(key[len("lift@"):])), ">=", stratum
    return str(parse_metric(key)), ">=", stratum


def _topological(retrievers: Dict[str, Any], suite: Suite) -> List[str]:
    order: List[str] = []
    state: Dict[str, int] = {}

    def visit(n: str, chain: List[str]) -> None:
        if state.get(n) == 2:
            return
        if state.get(n) == 1:
            cycle = chain[chain.index(n):] + [n]
            raise suite.error(("retrievers", n, "of"), f"cyclic retrievers: {' -> '.join(cycle)}")
        state[n] = 1
        for ref in getattr(retrievers[n], "of", []) or []:
            visit(ref, chain + [n])
        state[n] = 2
        order.append(n)

    for n in retrievers:
        visit(n, [])
    return order
