"""Qrels (graded relevance labels) from TREC (``qid 0 docid grade``), BEIR TSV (with its
header) and JSONL files; the format of a text file is detected once, from its first line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from ..errors import ConfigError
from .grades import GradeScale
from .lines import DOCID_KEYS, QID_KEYS, parse_grade, parse_id, pick, read_jsonl, read_lines

Qrels = Dict[str, Dict[str, int]]


def load_qrels(path: Path, grades: Optional[GradeScale] = None) -> Qrels:
    """Qrels from TREC (``qid 0 docid grade``), BEIR TSV (with header) or JSONL.

    A file has one format, detected once: JSONL by its extension; otherwise from the first
    line, its separator (a tab: tab-separated, else whitespace) and its column count. A
    header (``query-id<TAB>corpus-id<TAB>score``, extra columns such as ``annotator``
    allowed) names the columns; without one, four columns are TREC (``qid iter docid grade``)
    and three are BEIR rows (``qid docid grade``). A row that does not fit the format (another
    column count) is an error naming its line, never read another way. A line starting with
    ``#`` is a comment (trec_eval 10.0).

    With ``grades``, every grade is mapped and range-checked as it is read (the error names
    the line).
    """
    path = Path(path)
    qrels: Qrels = {}
    if path.suffix.lower() == ".jsonl":
        for n, obj in read_jsonl(path):
            qid = parse_id(pick(obj, QID_KEYS[1:] + ("_id",), path, n, "query id"), path, n, "query id")
            did = parse_id(pick(obj, DOCID_KEYS, path, n, "document id"), path, n, "document id")
            grade = parse_grade(pick(obj, ("grade", "relevance", "score", "rel"), path, n, "grade"), path, n)
            _add_judgment(qrels, qid, did, _scaled(grade, grades, path, n), path, n)
    else:
        fmt: Optional[QrelsFormat] = None
        for n, line in read_lines(path):
            if line.startswith("#"):  # a comment line, as trec_eval 10.0's get_qrels.c reads one
                continue
            if fmt is None:
                fmt = QrelsFormat.detect(line, path, n)
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
                parse_id(parts[fmt.qid], path, n, "query id"),
                parse_id(parts[fmt.did], path, n, "document id"),
                _scaled(parse_grade(parts[fmt.grade], path, n), grades, path, n),
                path,
                n,
            )
    if not qrels:
        raise ConfigError("no judgments in file", file=str(path))
    return qrels


def scale_qrels(qrels: Qrels, scale: Optional[GradeScale], *, file: str, key: Optional[str] = None) -> Qrels:
    """``qrels`` with ``scale`` applied (for judgments not read line by line, e.g. inline)."""
    if scale is None:
        return qrels
    return {q: {d: scale.apply(g, file=file, key=key) for d, g in docs.items()} for q, docs in qrels.items()}


_HEADER_QID = ("query-id", "query_id", "qid", "query", "topic", "queryid")
_HEADER_DID = ("corpus-id", "corpus_id", "doc-id", "doc_id", "docid", "docno", "document", "doc")
_HEADER_GRADE = ("score", "relevance", "grade", "rel", "label", "judgment")


@dataclass(frozen=True)
class QrelsFormat:
    """One qrels text file's format, detected from its first line."""

    tab: bool  # tab-separated (else any whitespace)
    columns: int
    qid: int
    did: int
    grade: int
    header: bool
    line: int  # where it was detected

    @classmethod
    def detect(cls, first: str, path: Path, n: int) -> QrelsFormat:
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
