"""Quepid (https://github.com/o19s/quepid): the ratings CSV, the case export JSON and the
ratings JSON in; the ratings CSV and the case JSON out. The book and snapshot exports are
:mod:`.quepid_book`. Queries are known by their text (``model.text_query_id``).

The ratings CSV (``GET /api/export/ratings/:case_id.csv``, view ``show.basic.csv.erb``):
``query,docid,rating``; a query without a rating is a row of its one cell; a query text
starting with ``- = + @`` gets a space before it (``make_csv_safe``), taken off here and put
back on export; no line end after the last row. Doc ids are not escaped by Quepid, so one that
a spreadsheet would run as a formula is refused (pass the case JSON instead).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ..judge.files import is_formula_shaped, read_csv
from .model import Builder, ImportOptions, Judgments
from .shapes import items, need, obj

__all__ = [
    "case_json",
    "read",
    "read_case",
    "read_ratings_csv",
    "read_snapshot_csv",
    "write",
    "write_ratings_csv",
]

FORMULA_START = "-=+@"  # what make_csv_safe escapes with a leading space
SCORER = "nDCG@10"  # a scorer every Quepid has; the case JSON import needs one by name


def read(path: Path, opts: ImportOptions) -> Judgments:
    """A Quepid file: ratings or snapshot CSV, or a case, book, snapshot or ratings JSON."""
    from . import quepid_book
    from .files import read_json

    if path.suffix.lower() in (".csv", ".txt"):
        return read_ratings_csv(path, opts)
    data = read_json(path)
    b = Builder(str(path), opts.rating_map)
    root = obj(b, data, "the file")
    if "query_doc_pairs" in root:
        return quepid_book.read_book(b, root, opts.policy)
    if "docs" in root and "scores" in root:
        return quepid_book.read_snapshot(b, root)
    if "queries" in root:
        return read_case(b, root)
    raise b.error(
        "not a Quepid export: expected a case ('queries'), a book ('query_doc_pairs') or a "
        "snapshot ('docs', 'queries', 'scores')"
    )


def read_ratings_csv(path: Path, opts: ImportOptions) -> Judgments:
    """``query,docid,rating`` (a snapshot CSV, ``Query Text,Doc ID,Doc Position``: a run)."""
    b = Builder(str(path), opts.rating_map)
    header_checked = False
    for n, row in read_csv(path, delimiter=lambda _first: ",", width_error=_csv_width):
        if not header_checked:
            header_checked = True
            if "doc position" in row or "query text" in row:
                return read_snapshot_csv(b, path)
            if set(row) - {"query", "docid", "rating"}:
                raise b.error(f"expected Quepid's header 'query,docid,rating', got {','.join(row)!r}", 1)
        _csv_row(b, row, n)
    return b.done()


def _csv_width(fields: int, header: int) -> Optional[str]:
    return f"{fields} cells, Quepid's CSV has at most {header}" if fields > header else None


def quepid_text(b: Builder, cell: Any, line: int) -> str:
    """A query cell as Quepid wrote it: a leading space before ``- = + @`` taken off; an
    unescaped formula (a spreadsheet saved the file) refused."""
    text = cell if isinstance(cell, str) else ""
    if len(text) > 1 and text[0] == " " and text[1] in FORMULA_START:
        return text[1:]
    if is_formula_shaped(text.strip()):
        raise b.error(
            f"query {text.strip()!r} starts with {text.strip()[0]!r} like a spreadsheet formula, without "
            "the space Quepid's export puts before one: was the file saved by a spreadsheet?",
            line,
        )
    return text


def _csv_row(b: Builder, row: Dict[str, str], n: int) -> None:
    qid = b.query(quepid_text(b, row.get("query"), n), n)
    doc, rating = (row.get("docid") or "").strip(), (row.get("rating") or "").strip()
    if not doc and not rating:
        return  # an unrated query: a row of its one cell
    if not doc or not rating:
        raise b.error("a rated row needs both 'docid' and 'rating'", n)
    did = b.ident(doc, n, "document id")
    if is_formula_shaped(did):
        raise b.error(
            f"document id {did!r} starts with {did[0]!r} like a spreadsheet formula (Quepid does not "
            "escape doc ids): import the case JSON export instead",
            n,
        )
    b.judge(qid, did, b.grade(rating, n), n)


def read_snapshot_csv(b: Builder, path: Path) -> Judgments:
    """``Query Text,Doc ID,Doc Position[,fields]`` (optionally after ``Snapshot Name,Snapshot
    Time,Case ID``): the ranking Quepid's snapshot import reads, as a run."""
    rows: Dict[str, List[Tuple[int, str, int]]] = {}
    for n, row in read_csv(path, delimiter=lambda _f: ",", width_error=lambda _a, _b: None):
        for col in ("query text", "doc id", "doc position"):
            if not (row.get(col) or "").strip():
                raise b.error(f"missing {col!r}", n)
        qid = b.query(quepid_text(b, row["query text"], n), n)
        did = b.ident(row["doc id"], n, "document id")
        rows.setdefault(qid, []).append((_position(b, row["doc position"], n), did, n))
    for qid, ranked in rows.items():
        b.out.run[qid] = _in_order(b, ranked)
    b.note("a snapshot CSV holds rankings only: no judgments")
    return b.done()


def _position(b: Builder, cell: str, n: int) -> int:
    try:
        pos = int(cell.strip())
    except ValueError:
        raise b.error(f"'Doc Position' {cell!r} is not a whole number", n) from None
    if pos < 1:
        raise b.error(f"'Doc Position' {pos} is below 1", n)
    return pos


def _in_order(b: Builder, ranked: List[Tuple[int, str, int]]) -> List[str]:
    ranked.sort()
    seen: Dict[str, int] = {}
    for i, (pos, did, n) in enumerate(ranked):
        if i and ranked[i - 1][0] == pos:
            raise b.error(f"two documents at position {pos} for one query", n)
        if did in seen:
            raise b.error(f"document {did!r} ranked twice for one query", n)
        seen[did] = pos
    return [d for _, d, _ in ranked]


def read_case(b: Builder, root: Dict[str, Any]) -> Judgments:
    """A case export (``/api/export/cases/:id``) or the ratings JSON export
    (``{"queries": [{"query", "ratings": {doc: rating}}]}``): every query, rated or not."""
    for i, q in items(b, root, "queries"):
        where = f"queries[{i}]"
        text = q.get("query_text", q.get("query"))
        qid = b.query(text, f"{where}.query_text")
        ratings = need(b, q, "ratings", where, (list, dict), default=[])
        pairs = ratings.items() if isinstance(ratings, dict) else _case_ratings(b, ratings, where)
        for doc, rating, at in _with_where(pairs, where):
            if rating is None:  # a rating cleared in Quepid
                b.note(f"{at}: a null rating, left out")
                continue
            b.judge(qid, b.ident(doc, f"{at}.doc_id", "document id"), b.grade(rating, f"{at}.rating"), at)
    return b.done()


def _case_ratings(b: Builder, ratings: List[Any], where: str) -> List[Any]:
    out = []
    for j, r in enumerate(ratings):
        r = obj(b, r, f"{where}.ratings[{j}]")
        out.append((need(b, r, "doc_id", f"{where}.ratings[{j}]"), r.get("rating")))
    return out


def _with_where(pairs: Any, where: str) -> List[Any]:
    return [(doc, rating, f"{where}.ratings[{k}]") for k, (doc, rating) in enumerate(pairs)]


# ------------------------------------------------------------------ export


def write(js: Judgments, path: Path) -> int:
    """Quepid's ratings CSV (``.csv``) or a case export JSON (``.json``)."""
    import json

    from ..fileio import atomic_write

    if path.suffix.lower() == ".json":
        body = case_json(js, path.stem)
        atomic_write(path, lambda fh: fh.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n"))
        return sum(len(q["ratings"]) for q in body["queries"])
    text = write_ratings_csv(js)
    atomic_write(path, lambda fh: fh.write(text), newline="")
    return sum(len(d) for d in js.qrels.values())


def write_ratings_csv(js: Judgments) -> str:
    """The ratings CSV as Quepid writes it (``query,docid,rating``, unrated queries alone)."""
    import csv
    import io

    from ..errors import ConfigError

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["query", "docid", "rating"])
    for qid, text in js.queries.items():
        cell = " " + text if text[:1] in FORMULA_START else text
        docs = js.qrels.get(qid, {})
        if not docs:
            w.writerow([cell])
        for did, grade in docs.items():
            if is_formula_shaped(did):
                raise ConfigError(
                    f"document id {did!r} would run as a spreadsheet formula in Quepid's CSV (which "
                    "does not escape doc ids): export to a .json case instead"
                )
            w.writerow([cell, did, grade])
    return buf.getvalue().rstrip("\n")  # Quepid writes no line end after the last row


def case_json(js: Judgments, name: str) -> Dict[str, Any]:
    """A case export Quepid's ``POST /api/import/cases`` reads: its queries and ratings; the
    ``try`` names no real endpoint (set yours in Quepid after the import)."""
    queries = []
    for qid, text in js.queries.items():
        ratings = [{"doc_id": d, "rating": g} for d, g in js.qrels.get(qid, {}).items()]
        queries.append({"query_text": text, "ratings": ratings})
    return {
        "case_name": name,
        "scorer": {"name": SCORER},
        "queries": queries,
        "try": {"query_params": "q=#$query##", "search_endpoint": {"name": "pytest-retrieval export"}},
    }
