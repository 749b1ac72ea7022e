"""RRE, Rated Ranking Evaluator (https://github.com/SeaseLtd/rated-ranking-evaluator): its
ratings file in and out.

``{"index", "id_field", "corpora_file", "query_placeholder"?, "topics": [{"description"|"name",
"query_groups": [{"name", "template"?, "queries": [{"template"?, "placeholders": {"$query": ...},
"relevant_documents"?}], "relevant_documents"}]}]}`` (rre-core ``Field.java``), or the flat form
Quepid reads and writes (``{"queries": [...]}``, no topics or groups). ``relevant_documents``
comes in two forms, both read: ``{doc: {"gain": N}}`` and ``{"N": [docs]}``. A query's own
``relevant_documents`` replace its group's. Topics and groups become tags (``topic:<name>``,
``group:<name>``). The query's text is its ``$query`` placeholder (or the file's
``query_placeholder``); a query with any other placeholder is a query this plugin cannot run as
RRE does (the template fills them), so it is refused by name, or with ``--skip-placeholders``
left out and named.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .model import Builder, ImportOptions, Judgments
from .shapes import items, need, obj

__all__ = ["read", "rre_json", "write"]

TEMPLATE = "query.json"  # the template file an exported rating names (the team's own query shape)


def read(path: Path, opts: ImportOptions) -> Judgments:
    from .files import read_json

    b = Builder(str(path), opts.rating_map)
    root = obj(b, read_json(path), "the file")
    placeholder = need(b, root, "query_placeholder", "the file", str, default="$query")
    if "topics" in root:
        for t, topic in items(b, root, "topics"):
            name = _name(b, topic, f"topics[{t}]")
            for g, group in items(b, topic, "query_groups", f"topics[{t}]"):
                where = f"topics[{t}].query_groups[{g}]"
                tags = [f"topic:{name}"] if name else []
                gname = _name(b, group, where)
                tags += [f"group:{gname}"] if gname else []
                _group(b, group, where, tags, placeholder, opts.skip_placeholders)
    elif "queries" in root:  # Quepid's flat RRE form
        _group(b, root, "", [], placeholder, opts.skip_placeholders)
    else:
        raise b.error("not an RRE ratings file: expected 'topics' (or Quepid's flat 'queries')")
    return b.done()


def _name(b: Builder, d: Dict[str, Any], where: str) -> str:
    for key in ("name", "description"):
        if d.get(key) is not None:
            return b.text(d[key], f"{where}.{key}", key)
    return ""


def _group(
    b: Builder, group: Dict[str, Any], where: str, tags: List[str], placeholder: str, skip: bool
) -> None:
    shared = group.get("relevant_documents")
    prefix = f"{where}." if where else ""
    for i, q in items(b, group, "queries", where):
        at = f"{prefix}queries[{i}]"
        text = _query_text(b, q, at, placeholder, skip)
        if text is None:
            continue
        qid = b.query(text, f"{at}.placeholders.{placeholder}")
        own = "relevant_documents" in q and q["relevant_documents"] is not None
        ratings, rat_where = (
            (q["relevant_documents"], f"{at}.relevant_documents")
            if own
            else (
                shared,
                f"{prefix}relevant_documents",
            )
        )
        for did, grade, row in _relevant(b, ratings, rat_where):
            b.judge(qid, did, grade, row)
        for tag in tags:
            b.tag(qid, tag)


def _query_text(b: Builder, q: Dict[str, Any], at: str, placeholder: str, skip: bool) -> Optional[str]:
    holders = need(b, q, "placeholders", at, dict)
    others = sorted(str(k) for k in holders if k != placeholder)
    if others:
        what = f"{at}.placeholders"
        if not skip:
            raise b.error(
                f"placeholder(s) {', '.join(others)} besides {placeholder}: the template fills them, which this "
                "plugin cannot; leave such queries out with --skip-placeholders",
                what,
            )
        b.note(f"{what}: left out (placeholder(s) {', '.join(others)} besides {placeholder})")
        return None
    if placeholder not in holders:
        raise b.error(f"no {placeholder} placeholder: the query has no text", f"{at}.placeholders")
    return holders[placeholder]


def _relevant(b: Builder, ratings: Any, where: str) -> Iterator[Tuple[str, int, str]]:
    """(doc, grade, where) of ``relevant_documents`` in either form; none is no judgment."""
    if ratings is None:
        return
    ratings = obj(b, ratings, where)
    for key, value in ratings.items():
        at = f"{where}.{key}"
        if isinstance(value, dict):  # {doc: {"gain": N}}
            gain = need(b, value, "gain", at)
            yield b.ident(key, at, "document id"), b.grade(gain, f"{at}.gain"), at
        elif isinstance(value, list):  # {"N": [docs]}
            grade = b.grade(key, at)
            for j, doc in enumerate(value):
                yield b.ident(doc, f"{at}[{j}]", "document id"), grade, f"{at}[{j}]"
        else:
            raise b.error('expected {doc: {"gain": N}} or {"N": [doc ids]}', at)


# ------------------------------------------------------------------ export


def rre_json(js: Judgments, index: str = "index", by_gain: bool = True) -> Dict[str, Any]:
    """An RRE ratings file, every query with its own ``relevant_documents`` (``{doc: {"gain":
    N}}``, or ``{"N": [docs]}`` with ``by_gain=False``): topics and groups from the ``topic:`` /
    ``group:`` tags (a query without them in ``pytest-retrieval`` / ``queries``), or, when no
    query has such a tag, the flat form Quepid writes (``{"queries": [...]}``)."""
    grouped = any(_tagged(t, "topic:") or _tagged(t, "group:") for t in js.tags.values())
    topics: Dict[str, Dict[str, List[Dict[str, Any]]]] = {}
    for qid, text in js.queries.items():
        tags = js.tags.get(qid, ())
        rel = _relevant_out(js.qrels.get(qid, {}), by_gain)
        entry = {"template": TEMPLATE, "placeholders": {"$query": text}, "relevant_documents": rel}
        topic = _tagged(tags, "topic:") or "pytest-retrieval"
        topics.setdefault(topic, {}).setdefault(_tagged(tags, "group:") or "queries", []).append(entry)
    head: Dict[str, Any] = {"index": index, "id_field": "id"}
    if not grouped:
        return {**head, "queries": [q for groups in topics.values() for qs in groups.values() for q in qs]}
    head["topics"] = [
        {"description": t, "query_groups": [{"name": g, "queries": qs} for g, qs in groups.items()]}
        for t, groups in topics.items()
    ]
    return head


def _relevant_out(docs: Dict[str, int], by_gain: bool) -> Dict[str, Any]:
    if by_gain:
        return {d: {"gain": g} for d, g in docs.items()}
    return {str(g): [d for d, x in docs.items() if x == g] for g in sorted(set(docs.values()))}


def _tagged(tags: Tuple[str, ...], prefix: str) -> str:
    return next((t[len(prefix) :] for t in tags if t.startswith(prefix)), "")


def write(js: Judgments, path: Path) -> int:
    import json

    from ..fileio import atomic_write

    body = rre_json(js)
    atomic_write(path, lambda fh: fh.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n"))
    return sum(len(d) for d in js.qrels.values())
