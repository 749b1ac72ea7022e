"""OpenSearch Search Relevance Workbench (https://github.com/opensearch-project/search-relevance):
judgment lists and query sets, in and out.

A judgment list (``PUT /_plugins/_search_relevance/judgments``, type ``IMPORT_JUDGMENT``):
``{"judgmentRatings": [{"query", "ratings": [{"docId", "rating"}]}]}``; a rating is a float
(sent as a number or text: ESCI's ``"100.000"``, ``"0.9"``). An integral rating is a grade as it
is (ESCI's 0/1/10/100 then go through the suite's ``judgments.grades.map``); any other needs
``--grade-map`` (``0.4:1,0.7:2,1.0:3``), and with a map every rating must be one it names.
A query set (``PUT /_plugins/_search_relevance/query_sets``): ``{"querySetQueries":
[{"queryText", "referenceAnswer"?}]}``: queries only, the reference answers kept beside them.
The same query text listed twice is one query (its ratings merged; a pair rated twice
differently is refused).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

from .model import Builder, ImportOptions, Judgments
from .shapes import items, need, obj

__all__ = ["judgment_list", "query_set", "read", "write", "write_query_set"]


def read(path: Path, opts: ImportOptions) -> Judgments:
    from .files import read_json

    b = Builder(str(path), opts.rating_map)
    root = obj(b, read_json(path), "the file")
    if "judgmentRatings" in root:
        for i, jr in items(b, root, "judgmentRatings"):
            where = f"judgmentRatings[{i}]"
            qid = b.query(need(b, jr, "query", where), f"{where}.query")
            for j, r in items(b, jr, "ratings", where):
                at = f"{where}.ratings[{j}]"
                did = b.ident(need(b, r, "docId", at), f"{at}.docId", "document id")
                b.judge(qid, did, b.grade(need(b, r, "rating", at), f"{at}.rating"), at)
    elif "querySetQueries" in root:
        for i, q in items(b, root, "querySetQueries"):
            where = f"querySetQueries[{i}]"
            qid = b.query(need(b, q, "queryText", where), f"{where}.queryText")
            ref = q.get("referenceAnswer")
            if ref is not None:
                b.out.references[qid] = b.text(ref, f"{where}.referenceAnswer", "referenceAnswer")
    elif "properties" in root:
        raise b.error(
            "an index mapping, not a judgment list ('judgmentRatings') or a query set ('querySetQueries')"
        )
    else:
        raise b.error(
            "not a Search Relevance Workbench file: expected 'judgmentRatings' or 'querySetQueries'"
        )
    return b.done()


def judgment_list(js: Judgments, name: str) -> Dict[str, Any]:
    """The body of ``PUT /_plugins/_search_relevance/judgments`` (every judged query)."""
    ratings: List[Dict[str, Any]] = []
    for qid, docs in js.qrels.items():
        if docs:
            rows = [{"docId": d, "rating": f"{g:.3f}"} for d, g in docs.items()]
            ratings.append({"query": js.queries.get(qid, qid), "ratings": rows})
    return {
        "name": name,
        "description": "exported by pytest-retrieval",
        "type": "IMPORT_JUDGMENT",
        "judgmentRatings": ratings,
    }


def query_set(js: Judgments, name: str) -> Dict[str, Any]:
    """The body of ``PUT /_plugins/_search_relevance/query_sets`` (every query)."""
    queries = []
    for qid, text in js.queries.items():
        q = {"queryText": text}
        if qid in js.references:
            q["referenceAnswer"] = js.references[qid]
        queries.append(q)
    return {
        "name": name,
        "description": "exported by pytest-retrieval",
        "sampling": "manual",
        "querySetQueries": queries,
    }


def _write_json(path: Path, body: Dict[str, Any]) -> None:
    import json

    from ..fileio import atomic_write

    atomic_write(path, lambda fh: fh.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n"))


def write(js: Judgments, path: Path) -> int:
    from ..errors import ConfigError

    missing = [q for q, d in js.qrels.items() if d and q not in js.queries]
    if missing:  # SRW knows a query by its text only
        raise ConfigError(
            f"{len(missing)} judged query(ies) without a text (e.g. {missing[0]!r}): SRW needs it"
        )
    _write_json(path, judgment_list(js, path.stem))
    return sum(len(d) for d in js.qrels.values())


def write_query_set(js: Judgments, path: Path) -> int:
    _write_json(path, query_set(js, path.stem))
    return len(js.queries)
