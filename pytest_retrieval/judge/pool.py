"""Pooling: the unjudged top-k of every candidate system, out to people and back as qrels.

The TREC recipe: run every retriever of one or more suites (the candidate systems), take
the top ``depth`` (20) of each ranking, and ask people to grade the union of the
(query, document) pairs that have no label yet. :func:`pool_suites` does the retrieval and
the pooling; :func:`write_annotation_file` exports the pairs as CSV or JSONL with an empty
``grade`` column; :func:`import_annotations` reads the filled file back, validates every
grade and merges it with the labels you already have (:func:`merge_qrels`), reporting
conflicts under a policy: ``keep-existing``, ``prefer-new`` or ``error``.

Why not ``SuiteRunner.run()``: it retrieves only the queries that already have judgments
(it exists to evaluate), and pooling is most needed for the queries that have none. So
:func:`retrieve_suite` drives the same building blocks (``load_judgments``,
``make_backend``, ``leaf_spec``, ``fuse_runs``, the suite's embedder) with the same depths
and fusion windows as the gate, over every query of the judgment set; the test suite checks
its rankings against ``SuiteRunner`` on the judged queries. A suite whose qrels file does
not exist yet is read as "nothing judged", so pooling can start from an empty judgment set.

The qrels and queries writers the ``judge`` commands share are in :mod:`.files`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from ..errors import ConfigError
from ..fileio import atomic_write
from ..io.qrels import Qrels, load_qrels
from ..types import Run
from .files import is_formula_shaped, read_csv, read_jsonl, write_csv

PathLike = Union[str, "os.PathLike[str]"]

ANNOTATION_COLUMNS = ("query_id", "query", "doc_id", "title", "text", "grade")
POLICIES = ("keep-existing", "prefer-new", "error")
DEFAULT_GRADE_RANGE = (0, 3)

__all__ = [
    "ANNOTATION_COLUMNS",
    "POLICIES",
    "Annotations",
    "Conflict",
    "ImportResult",
    "MergeResult",
    "Pool",
    "PoolPair",
    "import_annotations",
    "load_labels",
    "merge_qrels",
    "parse_grade_range",
    "pool_runs",
    "pool_suites",
    "read_annotations",
    "read_pairs",
    "read_pooled_pairs",
    "retrieve_suite",
    "write_annotation_file",
]


# ------------------------------------------------------------------- grade values


def parse_grade_range(text: str) -> Tuple[int, int]:
    """``"0-3"``, ``"0..3"`` or ``"0:3"`` -> (0, 3)."""
    for sep in ("..", ":", "-"):
        lo, s, hi = str(text).strip().partition(sep)
        if s and lo.strip() and hi.strip():
            try:
                a, b = int(lo), int(hi)
            except ValueError:
                break
            if a > b:
                break
            return a, b
    raise ValueError(f"grade range {text!r}: expected MIN-MAX such as 0-3")


def _check_grade(value: Any, grade_range: Tuple[int, int], file: str, line: int) -> Optional[int]:
    """A filled grade -> int; blank -> None; anything else a ConfigError (file:line)."""
    lo, hi = grade_range
    if value is None:
        return None
    if isinstance(value, bool):
        raise ConfigError(f"grade {value!r} is not an integer in {lo}..{hi}", file=file, line=line)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
    else:
        text = value
    try:
        f = float(text)
    except (TypeError, ValueError):
        raise ConfigError(f"grade {value!r} is not an integer in {lo}..{hi}", file=file, line=line) from None
    if f != f or not f.is_integer():
        raise ConfigError(f"grade {value!r} is not an integer in {lo}..{hi}", file=file, line=line)
    g = int(f)
    if not lo <= g <= hi:
        raise ConfigError(f"grade {g} is outside the allowed range {lo}..{hi}", file=file, line=line)
    return g


# ------------------------------------------------------------ annotation files


@dataclass
class PoolPair:
    query_id: str
    query: str
    doc_id: str
    title: str = ""
    text: str = ""
    pooled_by: Dict[str, int] = field(default_factory=dict)  # system -> 1-based rank

    @property
    def best_rank(self) -> int:
        return min(self.pooled_by.values()) if self.pooled_by else 0

    def document(self) -> str:
        """Title and text as a judge reads them."""
        return f"{self.title}\n{self.text}" if self.title and self.text else (self.title or self.text)


@dataclass
class Pool:
    pairs: List[PoolPair]
    depth: int
    systems: List[str]
    queries: Dict[str, str]
    candidates: int = 0  # (system, query, doc) entries in the top-depth cuts
    unique: int = 0  # unique (query, doc) pairs among them
    judged: int = 0  # unique pairs that already had a label
    contributed: Dict[str, int] = field(default_factory=dict)  # system -> unjudged pairs it found
    only_found_by: Dict[str, int] = field(default_factory=dict)  # system -> pairs no other found
    missing_text: int = 0
    notes: List[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [
            f"pooled {len(self.queries)} queries x {len(self.systems)} systems at depth "
            f"{self.depth}: {self.unique} unique pairs, {self.judged} already judged, "
            f"{len(self.pairs)} to annotate"
        ]
        for s in self.systems:
            lines.append(
                f"  {s}: {self.contributed.get(s, 0)} unjudged pairs "
                f"({self.only_found_by.get(s, 0)} found by no other system)"
            )
        if self.missing_text:
            lines.append(
                f"  {self.missing_text} pairs have no document text (no corpus loaded; pass --corpus)"
            )
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


def write_annotation_file(pairs: Union[Pool, Iterable[PoolPair]], path: PathLike) -> int:
    """CSV (``.csv``; ``.tsv`` tab-separated) or JSONL (``.jsonl``) with the columns
    ``query_id, query, doc_id, title, text, grade``; ``grade`` is empty for a person to fill."""
    path = Path(path)
    items = list(pairs.pairs if isinstance(pairs, Pool) else pairs)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv", ".jsonl"):
        raise ConfigError("annotation files are .csv, .tsv or .jsonl", file=str(path))

    if suffix in (".csv", ".tsv"):  # opened in spreadsheets: formula cells escaped
        rows = ([p.query_id, p.query, p.doc_id, p.title, p.text, ""] for p in items)
        return write_csv(path, ANNOTATION_COLUMNS, rows, delimiter="\t" if suffix == ".tsv" else ",")

    def write(fh) -> None:
        for p in items:
            record: Dict[str, Any] = {"query_id": p.query_id, "query": p.query, "doc_id": p.doc_id}
            record.update(title=p.title, text=p.text, grade=None)
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")

    atomic_write(path, write)
    return len(items)


_COLUMN_ALIASES = {
    "query_id": ("query_id", "qid", "query-id", "queryid", "topic"),
    "query": ("query", "query_text", "question"),
    "doc_id": ("doc_id", "docid", "corpus_id", "corpus-id", "document_id"),
    "title": ("title", "doc_title"),
    "text": ("text", "doc_text", "document", "passage", "body"),
    "grade": ("grade", "label", "relevance", "score", "rel"),
}


@dataclass
class _Row:
    line: int
    values: Dict[str, Any]


def _rows(path: Path) -> Iterator[_Row]:
    """Rows of an annotation file with the line each starts on (CSV/TSV or JSONL)."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        records: Iterator[Tuple[int, Dict[str, Any]]] = read_jsonl(path)
    elif suffix in (".csv", ".tsv"):
        records = read_csv(path, delimiter=_annotation_delimiter(suffix), width_error=_too_wide)
    else:
        raise ConfigError("annotation files are .csv, .tsv or .jsonl", file=str(path))
    for n, values in records:
        yield _Row(n, values)


def _annotation_delimiter(suffix: str) -> Callable[[str], str]:
    def delimiter(first: str) -> str:
        if suffix == ".tsv":
            return "\t"
        # spreadsheets in some locales save ';'-separated "CSV"
        return ";" if first.count(";") > first.count(",") else ","

    return delimiter


def _too_wide(fields: int, header: int) -> Optional[str]:
    if fields > header:
        return f"{fields} fields but the header has {header} (an unquoted separator in a text?)"
    return None


def _column(values: Dict[str, Any], role: str) -> Tuple[bool, Any]:
    for name in _COLUMN_ALIASES[role]:
        if name in values:
            return True, values[name]
    return False, None


def _req_id(values: Dict[str, Any], role: str, path: Path, line: int) -> str:
    from ..io.ids import as_id

    found, value = _column(values, role)
    what = "query id" if role == "query_id" else "document id"
    if not found:
        raise ConfigError(
            f"missing {what} column (one of: {', '.join(_COLUMN_ALIASES[role])})", file=str(path), line=line
        )
    try:
        return as_id(value)
    except ValueError as exc:
        raise ConfigError(f"bad {what}: {exc}", file=str(path), line=line) from None


@dataclass
class Annotations:
    """A filled annotation file: grades, the blanks that were skipped, where each came from."""

    path: str
    grades: Qrels
    origins: Dict[Tuple[str, str], int]  # (qid, doc) -> line
    blank: List[Tuple[str, str, int]]  # (qid, doc, line) rows without a grade
    rows: int


PooledPairs = Set[Tuple[str, str]]


def read_pooled_pairs(paths: Union[PathLike, Sequence[PathLike]]) -> PooledPairs:
    """The (query id, document id) pairs of annotation files as ``judge pool`` wrote them
    (texts not needed): the pooled set ``judge import --pool`` checks ids against."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    pooled: PooledPairs = set()
    for p in paths:
        path = Path(p)
        for row in _rows(path):
            pooled.add(
                (
                    _req_id(row.values, "query_id", path, row.line),
                    _req_id(row.values, "doc_id", path, row.line),
                )
            )
    return pooled


def _check_formula_ids(qid: str, did: str, pooled: Optional[PooledPairs], path: Path, line: int) -> None:
    """An id in a spreadsheet file that a spreadsheet would run as a formula (issue #11
    item 5) is accepted only when ``judge pool`` pooled that very pair: anything else was
    typed, pasted or rewritten by the spreadsheet, and must not become a label."""
    for what, value in (("query id", qid), ("document id", did)):
        if not is_formula_shaped(value) or (pooled is not None and (qid, did) in pooled):
            continue
        where = (
            "is not among the pooled pairs (--pool)"
            if pooled is not None
            else "and no pooled set was given: pass --pool with the file `judge pool` wrote (or its .jsonl twin)"
        )
        raise ConfigError(
            f"{what} {value!r} starts with {value[0]!r} like a spreadsheet formula {where}",
            file=str(path),
            line=line,
        )


def read_annotations(
    path: PathLike,
    *,
    grade_range: Tuple[int, int] = DEFAULT_GRADE_RANGE,
    pooled: Optional[PooledPairs] = None,
    check_formulas: bool = False,
) -> Annotations:
    """Read a filled annotation file. Blank grades are skipped and listed; a grade that is
    not an integer in ``grade_range``, a row without ids and a pair graded twice with
    different grades are ``ConfigError``s naming the file and line (the first bad line,
    with the count and lines of any others). In a CSV/TSV file, an id shaped like a
    spreadsheet formula must be a pair of ``pooled`` when ``pooled`` is given or
    ``check_formulas`` is set, as ``judge import`` does (see :func:`_check_formula_ids`)."""
    path = Path(path)
    spreadsheet = path.suffix.lower() in (".csv", ".tsv") and (check_formulas or pooled is not None)
    grades: Qrels = {}
    origins: Dict[Tuple[str, str], int] = {}
    blank: List[Tuple[str, str, int]] = []
    errors: List[ConfigError] = []
    rows = 0
    saw_grade_column = False
    for row in _rows(path):
        rows += 1
        qid = _req_id(row.values, "query_id", path, row.line)
        did = _req_id(row.values, "doc_id", path, row.line)
        if spreadsheet:
            _check_formula_ids(qid, did, pooled, path, row.line)
        found, value = _column(row.values, "grade")
        saw_grade_column = saw_grade_column or found
        try:
            g = _check_grade(value, grade_range, str(path), row.line)
        except ConfigError as exc:
            errors.append(exc)
            continue
        if g is None:
            blank.append((qid, did, row.line))
            continue
        prev = grades.get(qid, {}).get(did)
        if prev is not None and prev != g:
            errors.append(
                ConfigError(
                    f"({qid!r}, {did!r}) graded {g} here and {prev} on line {origins[(qid, did)]}",
                    file=str(path),
                    line=row.line,
                )
            )
            continue
        grades.setdefault(qid, {})[did] = g
        origins.setdefault((qid, did), row.line)
    if rows and not saw_grade_column:
        raise ConfigError("no 'grade' column: is this a filled annotation file?", file=str(path), line=1)
    if errors:
        first = errors[0]
        if len(errors) > 1:
            more = ", ".join(str(e.line) for e in errors[1:6]) + (", ..." if len(errors) > 6 else "")
            first = ConfigError(
                f"{first.detail} (+{len(errors) - 1} more bad line(s): {more})",
                file=first.file,
                line=first.line,
            )
        raise first
    return Annotations(str(path), grades, origins, blank, rows)


def read_pairs(path: PathLike) -> List[PoolPair]:
    """The (query, document) pairs of an annotation file, with their texts (for a judge)."""
    path = Path(path)
    out: List[PoolPair] = []
    seen: Set[Tuple[str, str]] = set()
    for row in _rows(path):
        qid = _req_id(row.values, "query_id", path, row.line)
        did = _req_id(row.values, "doc_id", path, row.line)
        found_q, query = _column(row.values, "query")
        if not found_q or not isinstance(query, str) or not query.strip():
            raise ConfigError("missing query text ('query' column)", file=str(path), line=row.line)
        _, title = _column(row.values, "title")
        _, text = _column(row.values, "text")
        title = title if isinstance(title, str) else ""
        text = text if isinstance(text, str) else ""
        if not (title.strip() or text.strip()):
            raise ConfigError("missing document text ('title'/'text' columns)", file=str(path), line=row.line)
        if (qid, did) in seen:
            continue
        seen.add((qid, did))
        out.append(PoolPair(qid, query, did, title, text))
    if not out:
        raise ConfigError("no pairs in file", file=str(path))
    return out


# --------------------------------------------------------------------- merging


@dataclass(frozen=True)
class Conflict:
    query_id: str
    doc_id: str
    existing: int
    new: int
    origin: str = ""  # "file:line" of the new label


@dataclass
class MergeResult:
    qrels: Qrels
    added: int
    unchanged: int
    conflicts: List[Conflict]
    policy: str

    def summary(self) -> str:
        s = f"{self.added} new label(s), {self.unchanged} identical to existing"
        if self.conflicts:
            verb = "kept existing" if self.policy == "keep-existing" else "took the new grade"
            s += f", {len(self.conflicts)} conflict(s) ({verb})"
        return s


def merge_qrels(
    existing: Mapping[str, Mapping[str, int]],
    new: Mapping[str, Mapping[str, int]],
    *,
    policy: str = "keep-existing",
    origins: Optional[Mapping[Tuple[str, str], str]] = None,
) -> MergeResult:
    """Merge ``new`` labels into ``existing``. A pair in both with different grades is a
    conflict: ``keep-existing`` keeps the old grade, ``prefer-new`` takes the new one,
    ``error`` raises a ``ConfigError`` naming where the first conflicting new label is."""
    if policy not in POLICIES:
        raise ValueError(f"policy {policy!r}: expected one of {', '.join(POLICIES)}")
    origins = origins or {}
    merged: Qrels = {q: dict(d) for q, d in existing.items()}
    added = unchanged = 0
    conflicts: List[Conflict] = []
    for qid, docs in new.items():
        for did, g in docs.items():
            old = merged.get(qid, {}).get(did)
            if old is None:
                merged.setdefault(qid, {})[did] = int(g)
                added += 1
            elif old == g:
                unchanged += 1
            else:
                conflicts.append(Conflict(qid, did, old, int(g), origins.get((qid, did), "")))
                if policy == "prefer-new":
                    merged[qid][did] = int(g)
    if conflicts and policy == "error":
        c = conflicts[0]
        file, _, line = c.origin.rpartition(":")
        more = f" (+{len(conflicts) - 1} more conflict(s))" if len(conflicts) > 1 else ""
        raise ConfigError(
            f"({c.query_id!r}, {c.doc_id!r}) is graded {c.new} here but {c.existing} in the "
            f"existing qrels{more}; choose --policy keep-existing or prefer-new",
            file=file or None,
            line=int(line) if line.isdigit() else None,
        )
    return MergeResult(merged, added, unchanged, conflicts, policy)


@dataclass
class ImportResult:
    merge: MergeResult
    sources: List[str]
    rows: int
    graded: int
    blank: List[Tuple[str, str, str]]  # (qid, doc, "file:line")

    @property
    def qrels(self) -> Qrels:
        return self.merge.qrels

    def summary(self) -> str:
        lines = [
            f"read {self.rows} row(s) from {', '.join(self.sources)}: {self.graded} graded, "
            f"{len(self.blank)} blank (skipped)",
            self.merge.summary(),
        ]
        for q, d, where in self.blank[:10]:
            lines.append(f"  blank: {where} ({q}, {d})")
        if len(self.blank) > 10:
            lines.append(f"  ... and {len(self.blank) - 10} more blank row(s)")
        for c in self.merge.conflicts[:20]:
            where = f"{c.origin}: " if c.origin else ""
            lines.append(f"  conflict: {where}({c.query_id}, {c.doc_id}) existing {c.existing}, new {c.new}")
        if len(self.merge.conflicts) > 20:
            lines.append(f"  ... and {len(self.merge.conflicts) - 20} more conflict(s)")
        return "\n".join(lines)


def _is_annotation_file(path: Path) -> bool:
    suffix = path.suffix.lower()
    if suffix in (".csv", ".jsonl"):
        return True
    if suffix == ".tsv":
        try:
            with open(path, encoding="utf-8-sig") as fh:
                header = [c.strip().lower() for c in fh.readline().rstrip("\r\n").split("\t")]
        except OSError:
            return False
        return "grade" in header or "doc_id" in header
    return False


def load_labels(
    path: PathLike,
    *,
    grade_range: Tuple[int, int] = DEFAULT_GRADE_RANGE,
    pooled: Optional[PooledPairs] = None,
    check_formulas: bool = False,
) -> Annotations:
    """Labels from a filled annotation file (``.csv``, ``.jsonl``, ``.tsv`` with our header)
    or from a qrels file (TREC, BEIR TSV), e.g. the output of ``judge llm`` or ``judge clicks``."""
    path = Path(path)
    if _is_annotation_file(path):
        return read_annotations(path, grade_range=grade_range, pooled=pooled, check_formulas=check_formulas)
    qrels = load_qrels(path)
    lo, hi = grade_range
    rows = 0
    for q, docs in qrels.items():
        for d, g in docs.items():
            rows += 1
            if not lo <= g <= hi:
                raise ConfigError(
                    f"grade {g} of ({q!r}, {d!r}) is outside the allowed range {lo}..{hi}", file=str(path)
                )
    return Annotations(str(path), qrels, {}, [], rows)


def import_annotations(
    paths: Union[PathLike, Sequence[PathLike]],
    existing: Optional[Mapping[str, Mapping[str, int]]] = None,
    *,
    policy: str = "keep-existing",
    grade_range: Tuple[int, int] = DEFAULT_GRADE_RANGE,
    pooled: Optional[PooledPairs] = None,
) -> ImportResult:
    """Filled annotation files (or qrels files) -> merged qrels, with a report.

    Files are merged in order, each under ``policy`` against everything before it.
    ``pooled``: the pairs ``judge pool`` exported (:func:`read_pooled_pairs`); without it a
    formula-shaped id in a CSV/TSV file is refused."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    merged: Qrels = {q: dict(d) for q, d in (existing or {}).items()}
    added = unchanged = rows = graded = 0
    conflicts: List[Conflict] = []
    blank: List[Tuple[str, str, str]] = []
    for p in paths:
        ann = load_labels(p, grade_range=grade_range, pooled=pooled, check_formulas=True)
        rows += ann.rows
        graded += sum(len(d) for d in ann.grades.values())
        blank.extend((q, d, f"{ann.path}:{n}") for q, d, n in ann.blank)
        origins = {k: f"{ann.path}:{n}" for k, n in ann.origins.items()}
        m = merge_qrels(merged, ann.grades, policy=policy, origins=origins)
        merged = m.qrels
        added += m.added
        unchanged += m.unchanged
        conflicts.extend(m.conflicts)
    return ImportResult(
        MergeResult(merged, added, unchanged, conflicts, policy), [str(p) for p in paths], rows, graded, blank
    )


# -------------------------------------------------------------------- pooling


def pool_runs(
    runs: Mapping[str, Run],
    judged: Mapping[str, Mapping[str, int]],
    *,
    depth: int = 20,
    queries: Optional[Mapping[str, str]] = None,
    documents: Optional[Mapping[str, Tuple[str, str]]] = None,
    include_judged: bool = False,
    shuffle: Optional[int] = None,
) -> Pool:
    """Pool the top ``depth`` of every run: the unique (query, doc) pairs without a label in
    ``judged`` (all of them with ``include_judged``, e.g. to measure agreement on pairs that
    people graded). ``runs`` maps system name -> Run. Pairs come query by query (in the order
    of ``queries``, then first appearance), each query's documents by best rank over the
    systems, then doc id; ``shuffle=SEED`` shuffles within each query instead (so annotators
    do not read the systems' order)."""
    if depth < 1:
        raise ValueError(f"pool depth must be >= 1, got {depth}")
    queries = dict(queries or {})
    documents = documents or {}
    order: Dict[str, None] = dict.fromkeys(queries)
    for run in runs.values():
        for q in run:
            order.setdefault(q, None)
    per_query: Dict[str, Dict[str, PoolPair]] = {}
    candidates = 0
    for system, run in runs.items():
        for qid, ranking in run.items():
            for rank, did in enumerate(ranking.doc_ids[:depth], 1):
                candidates += 1
                bucket = per_query.setdefault(qid, {})
                pair = bucket.get(did)
                if pair is None:
                    title, text = documents.get(did, ("", ""))
                    pair = bucket[did] = PoolPair(qid, queries.get(qid, ""), did, title, text)
                prev = pair.pooled_by.get(system)
                if prev is None or rank < prev:
                    pair.pooled_by[system] = rank
    pairs: List[PoolPair] = []
    unique = judged_count = missing = 0
    contributed: Dict[str, int] = {s: 0 for s in runs}
    only: Dict[str, int] = {s: 0 for s in runs}
    rng = random.Random(shuffle) if shuffle is not None else None
    for qid in order:
        bucket = per_query.get(qid, {})
        unique += len(bucket)
        chosen = []
        for pair in bucket.values():
            if did_judged(judged, qid, pair.doc_id):
                judged_count += 1
                if not include_judged:
                    continue
            else:
                for s in pair.pooled_by:
                    contributed[s] += 1
                if len(pair.pooled_by) == 1:
                    only[next(iter(pair.pooled_by))] += 1
            chosen.append(pair)
        chosen.sort(key=lambda p: (p.best_rank, p.doc_id))
        if rng is not None:
            rng.shuffle(chosen)
        for p in chosen:
            if not (p.title or p.text):
                missing += 1
        pairs.extend(chosen)
    return Pool(
        pairs=pairs,
        depth=depth,
        systems=list(runs),
        queries={q: queries.get(q, "") for q in order},
        candidates=candidates,
        unique=unique,
        judged=judged_count,
        contributed=contributed,
        only_found_by=only,
        missing_text=missing,
    )


def did_judged(qrels: Mapping[str, Mapping[str, int]], qid: str, did: str) -> bool:
    return did in qrels.get(qid, {})


def retrieve_suite(
    suite: Any, *, depth: int = 20, progress: Optional[Callable[[str], None]] = None
) -> Tuple[Any, Dict[str, Run]]:
    """Run every retriever of a loaded suite over *every* query of its judgment set (judged
    or not), exactly as the suite runner builds each ranking (same depth, fusion windows,
    embedder, backend). Returns (JudgmentSet, {retriever: Run}); a qrels file that does not
    exist yet is read as no judgments."""
    from ..execution.plan import load_judgments
    from ..execution.runner import SuiteRunner

    say = progress or (lambda msg: None)
    model = suite.model
    j = model.judgments
    loaded = suite
    if j.qrels and not suite.resolve_path(("judgments", "qrels"), j.qrels).exists():
        # nothing judged yet: read queries and corpus only
        jm = j.model_copy(update={"qrels": None})
        loaded = dataclasses.replace(suite, model=model.model_copy(update={"judgments": jm}))
        say(f"{suite.name}: qrels file {j.qrels} does not exist yet; treating every query as unjudged")
    js = load_judgments(loaded)
    runs = SuiteRunner(suite, progress=say).retrieve(js, list(js.queries), min_depth=depth).runs
    return js, runs


def pool_suites(
    paths: Sequence[PathLike],
    *,
    depth: int = 20,
    retrievers: Optional[Sequence[str]] = None,
    judged: Optional[Sequence[PathLike]] = None,
    corpus: Optional[PathLike] = None,
    include_judged: bool = False,
    shuffle: Optional[int] = None,
    progress: Optional[Callable[[str], None]] = None,
) -> Pool:
    """Run every retriever of each suite (the candidate systems) and pool their top
    ``depth``. Already judged = any label (grade 0 included) in a suite's own qrels or in
    the extra ``judged`` qrels files. ``retrievers`` limits which retrievers are pooled
    (by name; ``suite:retriever`` to pick from one suite). Document texts come from the
    suites' corpora, or from ``corpus`` (JSONL) for suites on an existing index."""
    from ..config.load import load_suite
    from ..io.corpus import load_corpus

    if not paths:
        raise ValueError("pool needs at least one suite file")
    say = progress or (lambda msg: None)
    runs: Dict[str, Run] = {}
    queries: Dict[str, str] = {}
    judged_qrels: Qrels = {}
    docs: Dict[str, Tuple[str, str]] = {}
    notes: List[str] = []
    wanted = set(retrievers or ())
    suites = [load_suite(Path(p)) for p in paths]
    _check_retriever_names(wanted, paths, suites)  # before any retrieval
    for path, suite in zip(paths, suites):
        j = suite.model.judgments
        if j.qrels and not suite.resolve_path(("judgments", "qrels"), j.qrels).exists():
            notes.append(
                f"{Path(path).name}: qrels file {j.qrels} does not exist yet; every query counts as unjudged"
            )
        js, suite_runs = retrieve_suite(suite, depth=depth, progress=say)
        for q, text in js.queries.items():
            queries.setdefault(q, text)
        for q, d in js.qrels.items():
            judged_qrels.setdefault(q, {}).update(d)
        for doc in js.corpus or []:
            docs.setdefault(doc.doc_id, _title_text(doc.fields))
        for name, run in suite_runs.items():
            label = name if len(paths) == 1 else f"{suite.name}:{name}"
            if label in runs:  # two suites of the same name
                label = f"{Path(path).name}:{name}"
            if wanted and not ({name, label, f"{suite.name}:{name}", f"{Path(path).name}:{name}"} & wanted):
                continue
            runs[label] = run
    for p in judged or ():
        for q, d in load_qrels(Path(p)).items():
            judged_qrels.setdefault(q, {}).update(d)
    if corpus is not None:
        for doc in load_corpus(Path(corpus)):
            docs.setdefault(doc.doc_id, _title_text(doc.fields))
    unknown_q = sorted(set(judged_qrels) - set(queries))
    if unknown_q:
        notes.append(
            f"{len(unknown_q)} judged query id(s) are not in the suites' queries "
            f"(e.g. {', '.join(map(repr, unknown_q[:3]))})"
        )
    pool = pool_runs(
        runs,
        judged_qrels,
        depth=depth,
        queries=queries,
        documents=docs,
        include_judged=include_judged,
        shuffle=shuffle,
    )
    pool.notes.extend(notes)
    return pool


def _check_retriever_names(wanted: Set[str], paths: Sequence[PathLike], suites: Sequence[Any]) -> None:
    """Every name of ``--retrievers`` names a retriever (``name``, ``suite:name`` or
    ``file:name``) of one of the suites."""
    if not wanted:
        return
    known = {n for s in suites for n in s.model.retrievers}
    known |= {f"{s.name}:{n}" for s in suites for n in s.model.retrievers}
    known |= {f"{Path(p).name}:{n}" for p, s in zip(paths, suites) for n in s.model.retrievers}
    if wanted - known:
        names = [Path(p).name for p in paths]
        raise ValueError(
            f"--retrievers: no retriever named {', '.join(sorted(wanted - known))} in {', '.join(names)}"
        )


def _title_text(fields: Mapping[str, str]) -> Tuple[str, str]:
    title = fields.get("title", "") or ""
    text = fields.get("text")
    if text is None:
        text = " ".join(v for k, v in fields.items() if k != "title" and isinstance(v, str))
    return title, text
