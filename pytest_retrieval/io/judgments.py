"""Judgment sets: queries, graded relevance labels (qrels), optional corpus and tags.

Readers for the formats teams have: BEIR folders (``corpus.jsonl``, ``queries.jsonl``,
``qrels/<split>.tsv`` with its header), TREC qrels (``qid 0 docid grade``), JSONL and
TSV, and inline YAML. Every id is a ``str``. Every malformed line is a ``ConfigError``
naming the file and the line.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Set, Tuple, TypeVar

from ..errors import ConfigError
from ..types import Document, Ranking, Run

Qrels = Dict[str, Dict[str, int]]
V = TypeVar("V")


class IdNormalisationWarning(UserWarning):
    """Ids of two files matched only after normalising (e.g. ``7`` vs ``007``)."""


@dataclass
class JudgmentSet:
    queries: Dict[str, str]  # qid -> text
    qrels: Qrels  # qid -> {doc_id: grade}
    tags: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    corpus: Optional[List[Document]] = None
    sources: Dict[str, str] = field(default_factory=dict)  # role -> file, for messages
    normalised: Dict[str, int] = field(default_factory=dict)  # role -> ids matched only loosely


# --------------------------------------------------------------------------- ids


def as_id(value: object) -> str:
    """Ids are strings: ``1`` (int in YAML/JSON) and ``"1"`` are the same id."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{value!r} is not a valid id")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    if not text:
        raise ValueError("empty id")
    return text


def _canonical(i: str) -> str:
    """A looser key used only to detect near-misses: ``007`` ~ ``7``, ``Q1`` ~ ``q1``."""
    s = i.strip().lower()
    if s.isdigit():
        return str(int(s))
    return s


def reconcile_ids(
    reference: Iterable[str],
    other: Mapping[str, V],
    *,
    reference_name: str,
    other_name: str,
    remapped_out: Optional[List[Tuple[str, str]]] = None,
) -> Dict[str, V]:
    """Re-key ``other`` onto ``reference`` ids; warn for ids that only match loosely (and
    append the (id, matched id) pairs to ``remapped_out`` when given)."""
    ref = set(reference)
    missing = [k for k in other if k not in ref]
    if not missing:
        return dict(other)
    loose: Dict[str, str] = {}
    for r in ref:
        loose.setdefault(_canonical(r), r)
    out: Dict[str, V] = {}
    remapped: List[Tuple[str, str]] = []
    for k, v in other.items():
        if k in ref:
            out[k] = v
            continue
        target = loose.get(_canonical(k))
        if target is not None and target not in other:
            out[target] = v
            remapped.append((k, target))
        else:
            out[k] = v
    if remapped_out is not None:
        remapped_out.extend(remapped)
    if remapped:
        examples = ", ".join(f"{a!r}->{b!r}" for a, b in remapped[:3])
        warnings.warn(
            IdNormalisationWarning(
                f"{len(remapped)} id(s) of {other_name} match {reference_name} only after "
                f"normalising ({examples}); fix the files so ids are identical strings"
            ),
            stacklevel=1,
        )
    return out


# ------------------------------------------------------------------ line readers


MAX_DATA_BYTES = 8 * 1024**3  # a judgments, corpus, run or tags file
MAX_LINE_CHARS = 64 * 1024**2  # one line of such a file


def check_data_file(path: Path) -> int:
    """The size of ``path``, a regular file of at most ``MAX_DATA_BYTES``; a missing file, a
    directory, a device, FIFO or socket, or a larger file is one ``ConfigError`` naming it."""
    import os
    import stat

    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ConfigError("file not found", file=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    if stat.S_ISDIR(st.st_mode):
        raise ConfigError("is a directory, expected a file", file=str(path))
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError("not a regular file (a device, FIFO or socket), expected a file", file=str(path))
    if st.st_size > MAX_DATA_BYTES:
        raise ConfigError(
            f"file is {st.st_size:,} bytes, over the limit of {MAX_DATA_BYTES:,} bytes", file=str(path)
        )
    return st.st_size


def _lines(path: Path) -> Iterator[Tuple[int, str]]:
    """The non-blank lines of a regular UTF-8 text file (a leading BOM stripped), numbered.
    A device, FIFO or directory, a file over ``MAX_DATA_BYTES`` or a line over
    ``MAX_LINE_CHARS`` is one ``ConfigError`` naming the file (and line)."""
    check_data_file(path)
    n = 0
    try:
        with open(path, encoding="utf-8-sig", newline=None) as fh:
            while True:
                line = fh.readline(MAX_LINE_CHARS + 1)
                if not line:
                    break
                n += 1
                if len(line) > MAX_LINE_CHARS:
                    raise ConfigError(
                        f"line longer than {MAX_LINE_CHARS:,} characters", file=str(path), line=n
                    )
                line = line.rstrip("\n").rstrip("\r")
                if line.strip():
                    yield n, line
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None


def _jsonl(path: Path) -> Iterator[Tuple[int, dict]]:
    for n, line in _lines(path):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"invalid JSON ({exc.msg})", file=str(path), line=n) from None
        if not isinstance(obj, dict):
            raise ConfigError("each line must be a JSON object", file=str(path), line=n)
        yield n, obj


def _pick(obj: dict, names: Tuple[str, ...], path: Path, n: int, what: str):
    for name in names:
        if name in obj:
            return obj[name]
    raise ConfigError(f"missing {what} (one of: {', '.join(names)})", file=str(path), line=n)


def _id(value: object, path: Path, n: int, what: str) -> str:
    try:
        return as_id(value)
    except ValueError as exc:
        raise ConfigError(f"bad {what}: {exc}", file=str(path), line=n) from None


def _grade(value: Any, path: Path, n: int) -> int:
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"relevance grade {value!r} is not a number", file=str(path), line=n) from None
    if f != f or not f.is_integer():
        raise ConfigError(f"relevance grade {value!r} is not an integer", file=str(path), line=n)
    return int(f)


# ------------------------------------------------------------------ grade scale


@dataclass(frozen=True)
class GradeScale:
    """The grades a judgment set may hold, and how raw grades map onto them.

    ``mapping`` (raw grade -> grade) is applied first, to every judgment as it is read;
    grades it does not name are kept. The result must lie in ``low..high``. ``option`` is
    how the user sets the scale (``judgments.grades`` in a suite, ``--grade-map`` on the
    command line), named in every error."""

    low: int = 0
    high: int = 10
    mapping: Optional[Mapping[int, int]] = None
    option: str = "judgments.grades"

    def apply(self, grade: int, *, file: str, line: Optional[int] = None, key: Optional[str] = None) -> int:
        raw = grade
        if self.mapping:
            grade = self.mapping.get(grade, grade)
        if self.low <= grade <= self.high:
            return grade
        mapped = f" (mapped from {raw})" if grade != raw else ""
        if grade < 0 and not self.mapping:
            example = (
                f"{self.option}=-1:0" if self.option.startswith("--") else f"{self.option}.map: {{-1: 0}}"
            )
            problem = (
                f"negative relevance grade {grade}: map it onto the scale with {self.option} (e.g. {example})"
            )
        else:
            where = "map" if self.mapping and grade == raw else "range"
            problem = (
                f"relevance grade {grade}{mapped} outside the allowed range {self.low}..{self.high} "
                f"({self.option}; add it to the {where}"
                + (")" if where == "range" else " or widen the range)")
            )
        raise ConfigError(problem, file=file, line=line, key=key)


def parse_grade_map(text: str, *, option: str = "--grade-map") -> Dict[int, int]:
    """``"-1:0,1:3,2:2"`` -> ``{-1: 0, 1: 3, 2: 2}`` (one ``ConfigError`` line otherwise)."""
    out: Dict[int, int] = {}
    for part in text.split(","):
        raw, sep, new = part.partition(":")
        try:
            if not sep:
                raise ValueError
            a, b = int(raw.strip()), int(new.strip())
        except ValueError:
            raise ConfigError(
                f"{option}: {part.strip()!r} is not 'grade:grade' (e.g. {option}=-1:0,1:3,2:2,3:1)"
            ) from None
        if a in out and out[a] != b:
            raise ConfigError(f"{option}: grade {a} is mapped twice")
        out[a] = b
    return out


def scale_qrels(qrels: Qrels, scale: Optional[GradeScale], *, file: str, key: Optional[str] = None) -> Qrels:
    """``qrels`` with ``scale`` applied (for judgments not read line by line, e.g. inline)."""
    if scale is None:
        return qrels
    return {q: {d: scale.apply(g, file=file, key=key) for d, g in docs.items()} for q, docs in qrels.items()}


# ---------------------------------------------------------------------- queries

_QID_KEYS = ("_id", "id", "qid", "query_id", "query-id")
_DOCID_KEYS = ("doc_id", "docid", "corpus_id", "corpus-id", "_id", "id")


def load_queries(path: Path) -> Dict[str, str]:
    """Queries from JSONL (``{"_id"|"id"|"qid", "text"|"query"}``) or TSV (``qid<TAB>text``)."""
    path = Path(path)
    out: Dict[str, str] = {}
    if path.suffix.lower() in (".tsv", ".txt"):
        for n, line in _lines(path):
            parts = line.split("\t")
            if len(parts) < 2:
                raise ConfigError("expected 'query_id<TAB>text'", file=str(path), line=n)
            if n == 1 and parts[0].lower() in ("query-id", "query_id", "qid", "id"):
                continue
            qid = _id(parts[0], path, n, "query id")
            _no_dup(out, qid, path, n, "query id")
            out[qid] = "\t".join(parts[1:])
    else:
        for n, obj in _jsonl(path):
            qid = _id(_pick(obj, _QID_KEYS, path, n, "query id"), path, n, "query id")
            text = _pick(obj, ("text", "query", "title"), path, n, "query text")
            if not isinstance(text, str):
                raise ConfigError("query text must be a string", file=str(path), line=n)
            _no_dup(out, qid, path, n, "query id")
            out[qid] = text
    if not out:
        raise ConfigError("no queries in file", file=str(path))
    return out


def _no_dup(seen: Mapping[str, object], key: str, path: Path, n: int, what: str) -> None:
    if key in seen:
        raise ConfigError(f"duplicate {what} {key!r}", file=str(path), line=n)


# ------------------------------------------------------------------------ qrels


def load_qrels(path: Path, grades: Optional[GradeScale] = None) -> Qrels:
    """Qrels from TREC (``qid 0 docid grade``), BEIR TSV (with header) or JSONL.

    A file has one format, detected once: JSONL by its extension; otherwise from the first
    line, its separator (a tab: tab-separated, else whitespace) and its column count. A
    header (``query-id<TAB>corpus-id<TAB>score``, extra columns such as ``annotator``
    allowed) names the columns; without one, four columns are TREC (``qid iter docid grade``)
    and three are BEIR rows (``qid docid grade``). A row that does not fit the format (another
    column count) is an error naming its line, never read another way.

    With ``grades``, every grade is mapped and range-checked as it is read (the error names
    the line).
    """
    path = Path(path)
    qrels: Qrels = {}
    if path.suffix.lower() == ".jsonl":
        for n, obj in _jsonl(path):
            qid = _id(_pick(obj, _QID_KEYS[1:] + ("_id",), path, n, "query id"), path, n, "query id")
            did = _id(_pick(obj, _DOCID_KEYS, path, n, "document id"), path, n, "document id")
            grade = _grade(_pick(obj, ("grade", "relevance", "score", "rel"), path, n, "grade"), path, n)
            _add_judgment(qrels, qid, did, _scaled(grade, grades, path, n), path, n)
    else:
        fmt: Optional[_QrelsFormat] = None
        for n, line in _lines(path):
            if fmt is None:
                fmt = _QrelsFormat.detect(line, path, n)
                if fmt.header:
                    continue
            parts = fmt.split(line)
            if len(parts) != fmt.columns:
                raise ConfigError(
                    f"{len(parts)} column(s), but this file is {fmt.describe()} "
                    f"(detected from line {fmt.line})",
                    file=str(path),
                    line=n,
                )
            _add_judgment(
                qrels,
                _id(parts[fmt.qid], path, n, "query id"),
                _id(parts[fmt.did], path, n, "document id"),
                _scaled(_grade(parts[fmt.grade], path, n), grades, path, n),
                path,
                n,
            )
    if not qrels:
        raise ConfigError("no judgments in file", file=str(path))
    return qrels


_HEADER_QID = ("query-id", "query_id", "qid", "query", "topic", "queryid")
_HEADER_DID = ("corpus-id", "corpus_id", "doc-id", "doc_id", "docid", "docno", "document", "doc")
_HEADER_GRADE = ("score", "relevance", "grade", "rel", "label", "judgment")


@dataclass(frozen=True)
class _QrelsFormat:
    """One qrels text file's format, detected from its first line."""

    tab: bool  # tab-separated (else any whitespace)
    columns: int
    qid: int
    did: int
    grade: int
    header: bool
    line: int  # where it was detected

    @classmethod
    def detect(cls, first: str, path: Path, n: int) -> _QrelsFormat:
        tab = "\t" in first
        parts = [p.strip() for p in (first.split("\t") if tab else first.split())]
        names = [p.lower() for p in parts]
        if _is_header(names):

            def col(options: Tuple[str, ...], what: str) -> int:
                for i, name in enumerate(names):
                    if name in options:
                        return i
                raise ConfigError(
                    f"header {first.strip()!r} names no {what} column (one of: {', '.join(options)})",
                    file=str(path),
                    line=n,
                )

            return cls(
                tab,
                len(parts),
                col(_HEADER_QID, "query id"),
                col(_HEADER_DID, "document id"),
                col(_HEADER_GRADE, "grade"),
                True,
                n,
            )
        if len(parts) == 4:
            return cls(tab, 4, 0, 2, 3, False, n)
        if len(parts) == 3:
            return cls(tab, 3, 0, 1, 2, False, n)
        raise ConfigError(
            f"expected 'qid 0 docid grade' (TREC) or 'qid<TAB>docid<TAB>grade' (BEIR), "
            f"got {len(parts)} column(s)",
            file=str(path),
            line=n,
        )

    def split(self, line: str) -> List[str]:
        return line.split("\t") if self.tab else line.split()

    def describe(self) -> str:
        sep = "tab-separated" if self.tab else "whitespace-separated"
        if self.header:
            return f"{sep} with a {self.columns}-column header"
        kind = "TREC 'qid iter docid grade'" if self.columns == 4 else "BEIR 'qid docid grade'"
        return f"{kind} ({sep}, {self.columns} columns)"


def _scaled(grade: int, grades: Optional[GradeScale], path: Path, n: int) -> int:
    return grade if grades is None else grades.apply(grade, file=str(path), line=n)


def _is_header(parts: List[str]) -> bool:
    return (
        parts[0].strip().lower() in _HEADER_QID
        or parts[-1].strip().lower() in _HEADER_GRADE
        or any(p.strip().lower() in ("corpus-id", "corpus_id") for p in parts)
    )


def _add_judgment(qrels: Qrels, qid: str, did: str, grade: int, path: Path, n: int) -> None:
    per_q = qrels.setdefault(qid, {})
    if did in per_q and per_q[did] != grade:
        raise ConfigError(
            f"conflicting grades for ({qid!r}, {did!r}): {per_q[did]} and {grade}", file=str(path), line=n
        )
    per_q[did] = grade


# ----------------------------------------------------------------------- corpus


def load_corpus(path: Path) -> List[Document]:
    """Documents from JSONL: ``{"_id"|"id"|"doc_id", "title"?, "text", ...}``.

    Every string field other than the id becomes a searchable field.
    """
    path = Path(path)
    docs: List[Document] = []
    seen: Set[str] = set()
    for n, obj in _jsonl(path):
        did = _id(
            _pick(obj, ("_id", "id", "doc_id", "docid"), path, n, "document id"), path, n, "document id"
        )
        if did in seen:
            raise ConfigError(f"duplicate document id {did!r}", file=str(path), line=n)
        seen.add(did)
        fields = {
            k: v for k, v in obj.items() if isinstance(v, str) and k not in ("_id", "id", "doc_id", "docid")
        }
        if not fields:
            raise ConfigError("document has no text field", file=str(path), line=n)
        docs.append(Document(did, fields))
    if not docs:
        raise ConfigError("no documents in file", file=str(path))
    return docs


# ------------------------------------------------------------------------- tags


def load_tags(path: Path) -> Dict[str, Tuple[str, ...]]:
    """Per-query tags (strata): TSV ``qid<TAB>tag1,tag2`` or JSONL ``{"id", "tags": [...]}``."""
    path = Path(path)
    out: Dict[str, Tuple[str, ...]] = {}
    if path.suffix.lower() == ".jsonl":
        for n, obj in _jsonl(path):
            qid = _id(_pick(obj, _QID_KEYS, path, n, "query id"), path, n, "query id")
            tags = _pick(obj, ("tags", "tag"), path, n, "tags")
            if isinstance(tags, str):
                tags = [tags]
            if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
                raise ConfigError("tags must be a string or a list of strings", file=str(path), line=n)
            out[qid] = tuple(tags)
    else:
        for n, line in _lines(path):
            parts = line.split("\t")
            if len(parts) != 2:
                raise ConfigError("expected 'query_id<TAB>tag1,tag2'", file=str(path), line=n)
            if n == 1 and parts[0].lower() in ("query-id", "query_id", "qid", "id"):
                continue
            qid = _id(parts[0], path, n, "query id")
            out[qid] = tuple(t.strip() for t in parts[1].split(",") if t.strip())
    return out


# ------------------------------------------------------------------------- BEIR


def load_beir(
    folder: Path, split: str = "test", *, with_corpus: bool = True, grades: Optional[GradeScale] = None
) -> JudgmentSet:
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError("BEIR folder not found", file=str(folder))
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        have = sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))
        raise ConfigError(
            f"no qrels for split {split!r} (have: {', '.join(have) or 'none'})", file=str(qrels_path)
        )
    js = JudgmentSet(queries=load_queries(folder / "queries.jsonl"), qrels=load_qrels(qrels_path, grades))
    js.sources.update(queries=str(folder / "queries.jsonl"), qrels=str(qrels_path))
    if with_corpus:
        js.corpus = load_corpus(folder / "corpus.jsonl")
        js.sources["corpus"] = str(folder / "corpus.jsonl")
    return js


# ------------------------------------------------------------------------- runs


def load_trec_run(path: Path) -> Run:
    """TREC run file: ``qid Q0 docid rank score tag``, ordered by score as trec_eval does it
    later; here we keep the file's order per query, sorted by the rank column."""
    path = Path(path)
    rows: Dict[str, List[Tuple[int, int, str, float]]] = {}
    for n, line in _lines(path):
        parts = line.split()
        if len(parts) != 6:
            raise ConfigError(
                f"expected 'qid Q0 docid rank score tag', got {len(parts)} column(s)", file=str(path), line=n
            )
        qid, _q0, did, rank, score, _tag = parts
        try:
            r = int(rank)
        except ValueError:
            raise ConfigError(f"rank {rank!r} is not an integer", file=str(path), line=n) from None
        try:
            s = float(score)
        except ValueError:
            raise ConfigError(f"score {score!r} is not a number", file=str(path), line=n) from None
        if s != s:
            raise ConfigError("score is NaN", file=str(path), line=n)
        rows.setdefault(qid, []).append((r, n, did, s))
    if not rows:
        raise ConfigError("no lines in run file", file=str(path))
    run: Run = {}
    for qid, items in rows.items():
        items.sort(key=lambda t: (t[0], t[1]))
        seen: Set[str] = set()
        for _r, n, did, _s in items:
            if did in seen:
                raise ConfigError(f"document {did!r} appears twice for query {qid!r}", file=str(path), line=n)
            seen.add(did)
        run[qid] = Ranking([t[2] for t in items], [t[3] for t in items])
    return run


def write_trec_run(run: Mapping[str, Ranking], out, tag: str = "pytest-retrieval") -> None:
    """Write ``run`` to the text stream ``out`` as a TREC run (``qid Q0 docid rank score tag``),
    scores with full precision (``repr``), ranks in the run's order."""
    for qid, ranking in run.items():
        for i, (did, s) in enumerate(zip(ranking.doc_ids, ranking.scores), 1):
            out.write(f"{qid} Q0 {did} {i} {s!r} {tag}\n")


# --------------------------------------------------------------------- overlap


@dataclass
class Overlap:
    queries: int
    qrels: int
    both: int
    run: Optional[int] = None
    qrels_without_query: List[str] = field(default_factory=list)

    def describe(self) -> str:
        s = (
            f"{self.queries} queries, {self.qrels} judged, {self.both} with both a text "
            f"and a relevant judgment"
        )
        if self.run is not None:
            s += f"; {self.run} sent to every retriever"
        return s


def check_overlap(js: JudgmentSet, *, where: str) -> Overlap:
    """Refuse a judgment set whose queries and qrels share no id (the wrong-split mistake)."""
    relevant = {q for q, d in js.qrels.items() if any(g > 0 for g in d.values())}
    both = relevant & set(js.queries)
    ov = Overlap(
        queries=len(js.queries),
        qrels=len(js.qrels),
        both=len(both),
        qrels_without_query=sorted(set(js.qrels) - set(js.queries)),
    )
    if not both:
        q_ex = ", ".join(repr(q) for q in list(js.queries)[:3])
        r_ex = ", ".join(repr(q) for q in list(js.qrels)[:3])
        raise ConfigError(
            f"no query id has both a text and a relevant judgment ({len(js.queries)} queries "
            f"e.g. {q_ex}; {len(js.qrels)} judged e.g. {r_ex}): wrong split or wrong file?",
            file=where,
        )
    return ov


# -------------------------------------------------------------------- self hits


def without_self_hits(run: Mapping[str, Ranking], k: Optional[int] = None) -> Tuple[Run, int]:
    """``run`` without any hit whose doc id equals its query id (BEIR's
    ``ignore_identical_ids``), each ranking cut at ``k`` after the removal; and how many
    hits were removed."""
    out: Run = {}
    removed = 0
    for qid, ranking in run.items():
        if qid in ranking.doc_ids:
            keep = [(d, s) for d, s in zip(ranking.doc_ids, ranking.scores) if d != qid]
            removed += len(ranking.doc_ids) - len(keep)
            ranking = Ranking([d for d, _ in keep], [s for _, s in keep])
        out[qid] = ranking if k is None or len(ranking) <= k else ranking.top(k)
    return out, removed


def self_hit_share(run: Mapping[str, Ranking], qids: Iterable[str]) -> Tuple[int, int]:
    """(how many of ``qids`` have their own id as the rank-1 hit, how many ``qids``)."""
    qids = list(qids)
    top1 = sum(1 for q in qids if (r := run.get(q)) is not None and r.doc_ids and r.doc_ids[0] == q)
    return top1, len(qids)
