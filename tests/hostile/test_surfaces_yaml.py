"""A hostile value at every key of the suite file (issue #28, section 6).

Each key path of the schema gets a value of the wrong kind (a mapping holding a right-to-left
override where a scalar is written, a nested list where a mapping is, NaN where anything goes),
set into the small valid suite of ``conftest.BASE`` with the least context the schema needs (a
retriever's ``type``, a list's first element). Loading it is one clear line naming the key, never
a traceback, never accepted. ``YAML_PATHS`` is written out so a new key is a new, uncovered
surface in ``test_surfaces.py`` until a case is listed here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Set

import pytest
import yaml

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.config.schema import json_schema
from pytest_retrieval.errors import ConfigError

from .conftest import BASE, bounded, one_line

YAML_PATHS = [
    "backend",
    "backend.batch",
    "backend.batch.answers",
    "backend.batch.body",
    "backend.batch.size",
    "backend.batch.timeout",
    "backend.batch.url",
    "backend.batch_function",
    "backend.connection",
    "backend.connection.api_key",
    "backend.connection.batch_size",
    "backend.connection.ca_certs",
    "backend.connection.concurrency",
    "backend.connection.hosts",
    "backend.connection.max_retries",
    "backend.connection.password",
    "backend.connection.preference",
    "backend.connection.request_timeout",
    "backend.connection.retry_deadline",
    "backend.connection.retry_on_timeout",
    "backend.connection.search_type",
    "backend.connection.username",
    "backend.connection.verify_certs",
    "backend.function",
    "backend.index",
    "backend.index.id_field",
    "backend.index.mappings",
    "backend.index.name",
    "backend.index.quantization",
    "backend.index.reap_after_hours",
    "backend.index.settings",
    "backend.index.vector_field",
    "backend.max_concurrency",
    "backend.options",
    "backend.request",
    "backend.request.body",
    "backend.request.headers",
    "backend.request.headers.*",
    "backend.request.max_response_bytes",
    "backend.request.max_retries",
    "backend.request.method",
    "backend.request.retry_deadline",
    "backend.request.timeout",
    "backend.request.url",
    "backend.response",
    "backend.response.hits",
    "backend.response.id",
    "backend.response.score",
    "backend.response.took",
    "backend.timeout",
    "backend.type",
    "description",
    "embedder",
    "embedder.batch_size",
    "embedder.device",
    "embedder.document_ids",
    "embedder.document_prefix",
    "embedder.documents",
    "embedder.function",
    "embedder.id",
    "embedder.max_batch_tokens",
    "embedder.max_length",
    "embedder.model",
    "embedder.normalize",
    "embedder.pooling",
    "embedder.queries",
    "embedder.query_function",
    "embedder.query_ids",
    "embedder.query_prefix",
    "embedder.threads",
    "embedder.type",
    "evaluation",
    "evaluation.average_over",
    "evaluation.depth",
    "evaluation.exclude_self_hits",
    "evaluation.metrics",
    "evaluation.profile",
    "evaluation.rank_eval",
    "evaluation.ties",
    "expectations",
    "expectations.above",
    "expectations.contains",
    "expectations.excludes",
    "expectations.first",
    "expectations.k",
    "expectations.min_hits",
    "expectations.name",
    "expectations.query",
    "expectations.query_id",
    "expectations.retrievers",
    "floors",
    "floors.*",
    "floors.*.*",
    "include",
    "judgments",
    "judgments.beir",
    "judgments.canary",
    "judgments.corpus",
    "judgments.documents",
    "judgments.documents.id",
    "judgments.documents.text",
    "judgments.documents.title",
    "judgments.grades",
    "judgments.grades.map",
    "judgments.grades.map.*",
    "judgments.grades.max",
    "judgments.grades.min",
    "judgments.inline",
    "judgments.inline.id",
    "judgments.inline.relevant",
    "judgments.inline.relevant.*",
    "judgments.inline.tags",
    "judgments.inline.text",
    "judgments.max_missing_documents",
    "judgments.missing_documents",
    "judgments.qrels",
    "judgments.queries",
    "judgments.relevance_threshold",
    "judgments.require_all",
    "judgments.split",
    "judgments.tags",
    "latency",
    "latency.baseline",
    "latency.confidence",
    "latency.enabled",
    "latency.max_queries",
    "latency.repetitions",
    "latency.verdict",
    "latency.warmup",
    "mention",
    "overrides",
    "overrides.may_lower",
    "owner",
    "regression",
    "regression.baseline",
    "regression.confidence",
    "regression.max_drop",
    "regression.max_drop.*",
    "regression.min_compared",
    "regression.on_fingerprint_mismatch",
    "regression.reference",
    "regression.reference.allow_partial",
    "regression.reference.max_total_drop",
    "regression.reference.max_total_drop.*",
    "regression.reference.run",
    "regression.resamples",
    "regression.retrievers",
    "regression.seed",
    "regression.strata",
    "retrievers",
    "retrievers.*",
    "retrievers.*.analyzer",
    "retrievers.*.analyzer.*",
    "retrievers.*.b",
    "retrievers.*.body",
    "retrievers.*.combination",
    "retrievers.*.field",
    "retrievers.*.fields",
    "retrievers.*.fields.*",
    "retrievers.*.filter",
    "retrievers.*.k1",
    "retrievers.*.min_lift",
    "retrievers.*.multi_match_type",
    "retrievers.*.normalization",
    "retrievers.*.normalizer",
    "retrievers.*.num_candidates",
    "retrievers.*.of",
    "retrievers.*.p95_budget_ms",
    "retrievers.*.params",
    "retrievers.*.params.*",
    "retrievers.*.pipeline",
    "retrievers.*.rank_constant",
    "retrievers.*.reranker",
    "retrievers.*.reranker.activation",
    "retrievers.*.reranker.api_key",
    "retrievers.*.reranker.api_key_env",
    "retrievers.*.reranker.base_url",
    "retrievers.*.reranker.batch_size",
    "retrievers.*.reranker.cache_documents",
    "retrievers.*.reranker.device",
    "retrievers.*.reranker.document_prefix",
    "retrievers.*.reranker.function",
    "retrievers.*.reranker.id",
    "retrievers.*.reranker.max_batch_tokens",
    "retrievers.*.reranker.max_documents",
    "retrievers.*.reranker.max_length",
    "retrievers.*.reranker.max_retries",
    "retrievers.*.reranker.max_tokens_per_doc",
    "retrievers.*.reranker.model",
    "retrievers.*.reranker.pooling",
    "retrievers.*.reranker.query_prefix",
    "retrievers.*.reranker.threads",
    "retrievers.*.reranker.timeout",
    "retrievers.*.reranker.type",
    "retrievers.*.semantics",
    "retrievers.*.similarity",
    "retrievers.*.stopwords",
    "retrievers.*.idf",
    "retrievers.*.sparse_encoder",
    "retrievers.*.sparse_encoder.batch_size",
    "retrievers.*.sparse_encoder.device",
    "retrievers.*.sparse_encoder.document_ids",
    "retrievers.*.sparse_encoder.document_prefix",
    "retrievers.*.sparse_encoder.documents",
    "retrievers.*.sparse_encoder.function",
    "retrievers.*.sparse_encoder.id",
    "retrievers.*.sparse_encoder.max_batch_tokens",
    "retrievers.*.sparse_encoder.max_length",
    "retrievers.*.sparse_encoder.model",
    "retrievers.*.sparse_encoder.queries",
    "retrievers.*.sparse_encoder.query_function",
    "retrievers.*.sparse_encoder.query_ids",
    "retrievers.*.sparse_encoder.query_prefix",
    "retrievers.*.sparse_encoder.threads",
    "retrievers.*.sparse_encoder.type",
    "retrievers.*.sparse_encoder.vocabulary",
    "retrievers.*.tie_breaker",
    "retrievers.*.type",
    "retrievers.*.weights",
    "retrievers.*.window",
    "stability",
    "stability.*",
    "stability.*.*",
    "suite",
    "teams",
    "unanswerable",
    "unanswerable.tag",
    "unanswerable.threshold",
    "unanswerable.threshold.*",
]

SCHEMA = json_schema()
DEFS = SCHEMA["$defs"]
MISSING = object()
# the name a map's key takes in a case (a retriever of BASE, a metric, a judged document)
NAMES = {
    "retrievers": "hx",
    "floors": "bm25",
    "floors.*": "ndcg@10",
    "judgments.inline.relevant": "d1",
    "regression.max_drop": "ndcg@10",
    "regression.reference.max_total_drop": "ndcg@10",
    "judgments.grades.map": "fair",
    "unanswerable.threshold": "bm25",
    "stability": "bm25",
    "stability.*": "rbo@10",
}
# what a branch needs besides the hostile key to reach that key's check
CONTEXT = {"retrievers.*.reranker": {"model": "m.onnx"}}


def _resolve(node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        node = DEFS[node["$ref"].split("/")[-1]]
    return node


def _branches(node: Any) -> List[Dict[str, Any]]:
    node = _resolve(node)
    out: List[Dict[str, Any]] = []
    for key in ("anyOf", "oneOf"):
        for sub in node.get(key, []):
            out += _branches(sub)
    return out or [node]


def _build(node: Any, parts: List[str], value: Any, prefix: str) -> Any:
    """The least document under ``node`` holding ``value`` at ``parts``."""
    if not parts:
        return value
    for b in _branches(node):
        if "items" in b:
            sub = _build(b["items"], parts, value, prefix)
            if sub is not MISSING:
                return [sub]
        props, head = b.get("properties", {}), parts[0]
        if head in props:
            here = f"{prefix}.{head}".strip(".")
            sub = _build(props[head], parts[1:], value, here)
            if sub is MISSING:
                continue
            out = {**CONTEXT.get(prefix, {}), head: sub}
            kind = _resolve(props.get("type", {}))
            if head != "type" and ("const" in kind or len(kind.get("enum", [])) == 1):
                out = {"type": kind.get("const", (kind.get("enum") or [None])[0]), **out}
            return out
        extra = b.get("additionalProperties")
        if head == "*" and isinstance(extra, dict):
            sub = _build(extra, parts[1:], value, prefix + ".*")
            if sub is not MISSING:
                return {NAMES.get(prefix, "x"): sub}
    return MISSING


def _leaf(node: Any, parts: List[str]) -> Any:
    if not parts:
        return node
    for b in _branches(node):
        if "items" in b:
            found = _leaf(b["items"], parts)
            if found is not None:
                return found
        if parts[0] in b.get("properties", {}):
            return _leaf(b["properties"][parts[0]], parts[1:])
        extra = b.get("additionalProperties")
        if parts[0] == "*" and isinstance(extra, dict):
            return _leaf(extra, parts[1:])
    return None


def _kinds(node: Any) -> Set[str]:
    out: Set[str] = set()
    for b in _branches(node):
        t = b.get("type")
        if isinstance(t, list):
            out |= set(t)
        elif t:
            out.add(t)
        elif "items" in b:
            out.add("array")
        elif "properties" in b or "additionalProperties" in b:
            out.add("object")
        elif "const" in b or "enum" in b:
            out.add("string")
        else:
            out.add("any")
    return out


def hostile_value(path: str) -> Any:
    kinds = _kinds(_leaf(SCHEMA, path.split(".")))
    if not kinds & {"object", "any"}:
        return {"\u202e": [None]}
    if not kinds & {"array", "any"}:
        return [["\u202e"]]
    return float("nan")


def _merge(a: Any, b: Any) -> Any:
    if isinstance(a, dict) and isinstance(b, dict):
        return {**a, **{k: _merge(a[k], v) if k in a else v for k, v in b.items()}}
    if isinstance(a, list) and isinstance(b, list) and a and b:
        return [_merge(a[0], b[0])] + a[1:]
    return b


def where(path: str) -> List[str]:
    """The fragments naming the key in the error: its path with the case's names and ``[0]``."""
    parts, out, prefix = path.split("."), "", ""
    lists = {"judgments.inline", "judgments.documents", "expectations"}
    for part in parts:
        name = NAMES.get(prefix, "x") if part == "*" else part
        out = f"{out}.{name}" if out else name
        prefix = f"{prefix}.{part}" if prefix else part
        if prefix in lists and part != parts[-1]:
            out += "[0]"
    if ".reranker." in path:  # a reranker's own check names the reranker and the key
        return ["retrievers.hx.reranker", parts[-1]]
    if path in ("retrievers.*.fields.*", "retrievers.*.analyzer.*"):  # a union (name or map): it is named
        return [out.rsplit(".", 1)[0]]
    return [out]


@pytest.mark.parametrize("path", YAML_PATHS)
def test_a_hostile_value_at_every_key_is_one_clear_line(tmp_path: Path, path: str) -> None:
    assert _leaf(SCHEMA, path.split(".")) is not None, f"{path} is no longer a key of the schema"
    doc = _merge(yaml.safe_load(BASE), _build(SCHEMA, path.split("."), hostile_value(path), ""))
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with bounded(30), pytest.raises(ConfigError) as info:
        load_suite(suite)
    one_line(str(info.value), "s.yaml", *where(path))


# The metric spellings of the measure registry (a parameter, a prime for judged documents only,
# trec_eval's parameter names), wrong: one line naming the file, the key and what is wrong.
BAD_METRICS = [
    ("rbp(2)", "p in (0, 1)"),
    ("rbp(p=nan)", "p must be a number"),
    ("rbp(q=0.5)@10", "parameter is p"),
    ("iprec", "needs its parameter recall"),
    ("iprec_at_recall_1.50", "recall in [0, 1]"),
    ("ndcg(0.5)@10", "takes no parameter"),
    ("judged'@10", "judged documents only"),
    ("condensed(ndcg'@10)", "condensed twice"),
    ("ndcg'@ten", "positive integer"),
    ("errr@10", "did you mean 'err'"),
]


@pytest.mark.parametrize("metric,fragment", BAD_METRICS, ids=[m for m, _ in BAD_METRICS])
@pytest.mark.parametrize("key", ["evaluation.metrics", "floors"])
def test_a_wrong_metric_spelling_is_one_clear_line(
    tmp_path: Path, key: str, metric: str, fragment: str
) -> None:
    doc = yaml.safe_load(BASE)
    if key == "floors":
        doc["floors"] = {"bm25": {metric: 0.1}}
    else:
        doc["floors"] = {"bm25": {"ndcg@10": 0.1}}
        doc["evaluation"] = {"metrics": ["ndcg@10", metric]}
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    with bounded(30), pytest.raises(ConfigError) as info:
        load_suite(suite)
    one_line(str(info.value), "s.yaml", key, fragment)
