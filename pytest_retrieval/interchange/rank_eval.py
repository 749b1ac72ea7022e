"""Elasticsearch's (and OpenSearch's) ``_rank_eval`` API: a request's ratings in, a suite out as
a body to paste into Kibana Dev Tools (``GET /<index>/_rank_eval``) or send as it is.

In: ``{"requests": [{"id", "request": {...} | "template_id" + "params", "ratings": [{"_index",
"_id", "rating"}]}], "templates"?, "metric"?}``. The request's ``id`` is the query id; its text
is read where the request says it plainly (a ``match``, ``match_phrase``, ``multi_match``,
``query_string``, ``simple_query_string`` or ``combined_fields`` query, or a template parameter
``query_text``/``query_string``/``query``/``q``/``text``); a request whose text is not there
keeps its ratings and is named (give its text in the queries file). Ratings of several indexes
are one query's judgments by ``_id``; the indexes are named.

Out: :func:`rank_eval_body` (pure): each query a request with its ratings, the retriever's query
as ``request`` (a BM25 retriever's ``match``/``multi_match``, a template retriever's body
filled), or with ``template=True`` one search template and each query's ``params``. The metric
comes from a plugin metric name (``ndcg@10`` -> ``dcg`` with ``normalize``); where
``_rank_eval``'s definitions differ from the plugin's (gain, unrated documents, ERR's maximum
grade), see docs/how-to/interchange-rank-eval.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..errors import ConfigError
from .model import Builder, ImportOptions, Judgments
from .shapes import items, need, obj

__all__ = ["RANK_EVAL_METRICS", "rank_eval_body", "rank_eval_metric", "read", "write"]

_TEXT_QUERIES = ("multi_match", "query_string", "simple_query_string", "combined_fields")
_FIELD_QUERIES = ("match", "match_phrase", "match_bool_prefix")
_TEXT_PARAMS = ("query_text", "query_string", "query", "q", "text")
RANK_EVAL_METRICS = ("precision", "recall", "mrr", "dcg", "ndcg", "err")
TEMPLATE_ID = "pytest_retrieval_query"


def read(path: Path, opts: ImportOptions) -> Judgments:
    from .files import read_json

    b = Builder(str(path), opts.rating_map)
    root = obj(b, read_json(path), "the file")
    params_of = _templates(b, root)
    indexes: Dict[str, int] = {}
    untexted: List[str] = []
    for i, r in items(b, root, "requests"):
        where = f"requests[{i}]"
        qid = b.ident(need(b, r, "id", where), f"{where}.id", "request id")
        text = _request_text(b, r, where, params_of)
        if text is None:
            untexted.append(qid)
        b.query_with_id(qid, text)
        for j, rating in items(b, r, "ratings", where):
            at = f"{where}.ratings[{j}]"
            index = need(b, rating, "_index", at, str, default="")
            indexes[index] = indexes.get(index, 0) + 1
            did = b.ident(need(b, rating, "_id", at), f"{at}._id", "document id")
            b.judge(qid, did, b.grade(need(b, rating, "rating", at), f"{at}.rating"), at)
    if untexted:
        b.note(
            f"{len(untexted)} request(s) without a text read from their query (e.g. {untexted[0]!r}): judgments only"
        )
    if len(indexes) > 1:
        b.note(
            "ratings of several indexes, taken as one by _id: "
            + ", ".join(f"{k or '?'} ({n})" for k, n in indexes.items())
        )
    return b.done()


def _templates(b: Builder, root: Dict[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for i, t in items(b, root, "templates") if "templates" in root else []:
        out[str(need(b, t, "id", f"templates[{i}]"))] = t
    return out


def _request_text(b: Builder, r: Dict[str, Any], where: str, templates: Mapping[str, Any]) -> Optional[str]:
    if "request" in r:
        request = obj(b, r["request"], f"{where}.request")
        query = request.get("query")
        found = _query_text(query) if isinstance(query, dict) else None
        return b.text(found, f"{where}.request.query") if found is not None else None
    template = need(b, r, "template_id", where, str)
    if template not in templates:
        raise b.error(f"template {template!r} is not among the file's templates", f"{where}.template_id")
    params = need(b, r, "params", where, dict, default={})
    for key in _TEXT_PARAMS:
        if isinstance(params.get(key), str):
            return b.text(params[key], f"{where}.params.{key}")
    return None


def _query_text(query: Dict[str, Any]) -> Optional[str]:
    for kind in _TEXT_QUERIES:
        clause = query.get(kind)
        if isinstance(clause, dict) and isinstance(clause.get("query"), str):
            return clause["query"]
    for kind in _FIELD_QUERIES:
        clause = query.get(kind)
        if isinstance(clause, dict) and len(clause) == 1:
            (value,) = clause.values()
            value = value.get("query") if isinstance(value, dict) else value
            if isinstance(value, str):
                return value
    return None


# ------------------------------------------------------------------ export


def rank_eval_metric(name: str, *, relevance_threshold: int = 1, max_grade: int = 3) -> Dict[str, Any]:
    """A plugin metric name (``ndcg@10``, ``precision@5``, ``recall@100``, ``mrr@10``,
    ``dcg@10``, ``err@20``) as ``_rank_eval``'s ``metric`` object."""
    m = re.fullmatch(r"([a-z]+)@([0-9]{1,6})", name.strip().lower())
    if not m or m.group(1) not in RANK_EVAL_METRICS or int(m.group(2)) < 1:
        raise ConfigError(
            f"--metric {name!r}: expected one of {', '.join(RANK_EVAL_METRICS)} with @k, e.g. ndcg@10"
        )
    kind, k = m.group(1), int(m.group(2))
    t = {"relevant_rating_threshold": relevance_threshold}
    return {
        "precision": {"precision": {"k": k, **t, "ignore_unlabeled": False}},
        "recall": {"recall": {"k": k, **t}},
        "mrr": {"mean_reciprocal_rank": {"k": k, **t}},
        "dcg": {"dcg": {"k": k, "normalize": False}},
        "ndcg": {"dcg": {"k": k, "normalize": True}},
        "err": {"expected_reciprocal_rank": {"k": k, "maximum_relevance": max_grade}},
    }[kind]


def _request(spec: Any, qid: str, text: str, k: int) -> Dict[str, Any]:
    from ..backends.base import BM25Spec, TemplateSpec
    from ..backends.search_engine.dsl import bm25_query, render_template
    from ..types import Query

    if isinstance(spec, BM25Spec):
        return {"query": bm25_query(spec, text), "size": k}
    if isinstance(spec, TemplateSpec):
        return render_template(spec.body, Query(qid, text), k)
    raise ConfigError(
        f"a {type(spec).__name__} retriever's query is not text _rank_eval can run: export a bm25 or template retriever"
    )


def _template(spec: Any, k: int) -> Dict[str, Any]:
    import json

    from ..backends.base import BM25Spec, TemplateSpec
    from ..backends.search_engine.dsl import bm25_query

    if isinstance(spec, BM25Spec):
        return {"query": bm25_query(spec, "{{query_text}}"), "size": k}
    if isinstance(spec, TemplateSpec) and isinstance(spec.body, dict):
        if "query_vector" in json.dumps(spec.body):
            raise ConfigError(
                "the template retriever's body needs {{query_vector}}: _rank_eval has no vectors"
            )
        return spec.body
    return _request(spec, "", "", k)  # the same one-line refusal


def rank_eval_body(
    judgments: Judgments,
    spec: Any,
    *,
    index: str,
    k: int = 10,
    metric: str = "ndcg@10",
    relevance_threshold: int = 1,
    template: bool = False,
) -> Dict[str, Any]:
    """A ``_rank_eval`` request body for ``judgments`` with the retriever ``spec`` (a
    ``BM25Spec`` or ``TemplateSpec``): one request per judged query with a text, its ratings
    on ``index``. Pure."""
    grades = [g for d in judgments.qrels.values() for g in d.values()]
    body: Dict[str, Any] = {"requests": []}
    if template:
        body["templates"] = [{"id": TEMPLATE_ID, "template": {"source": _template(spec, k)}}]
    for qid, docs in judgments.qrels.items():
        text = judgments.queries.get(qid)
        if not docs or text is None:
            continue
        entry: Dict[str, Any] = {"id": qid}
        if template:
            entry.update(template_id=TEMPLATE_ID, params={"query_text": text, "k": k})
        else:
            entry["request"] = _request(spec, qid, text, k)
        entry["ratings"] = [{"_index": index, "_id": d, "rating": g} for d, g in docs.items()]
        body["requests"].append(entry)
    body["metric"] = rank_eval_metric(
        metric, relevance_threshold=relevance_threshold, max_grade=max(grades, default=1)
    )
    return body


def console_text(body: Dict[str, Any], index: str) -> str:
    """The body as a Kibana Dev Tools request."""
    import json

    return f"GET /{index}/_rank_eval\n" + json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def write(js: Judgments, path: Path, *, spec: Any, index: str, **kw: Any) -> Tuple[int, Dict[str, Any]]:
    """``.json``: the body; any other extension: a Dev Tools request (``GET /<index>/_rank_eval``
    and the body)."""
    import json

    from ..fileio import atomic_write

    body = rank_eval_body(js, spec, index=index, **kw)
    text = json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    if path.suffix.lower() != ".json":
        text = console_text(body, index)
    atomic_write(path, lambda fh: fh.write(text))
    return len(body["requests"]), body
