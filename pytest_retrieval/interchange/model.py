"""What every interchange format reads into and writes from: :class:`Judgments` (queries,
qrels, tags, each judge's own grades, a run), and :class:`Builder`, which every reader fills
so that ids, texts and grades go through one set of checks, each failure one line naming the
file and the row (a CSV line, or the JSON key path such as ``queries[3].ratings[2].rating``).

Queries that a tool identifies by their text (Quepid, RRE, Search Relevance Workbench) get the
stable id ``judge clicks`` gives a query known by its text (:func:`text_query_id`, the one rule:
``q`` and the first 12 hex digits of the SHA-1 of the text after Unicode NFKC, case folding and
whitespace collapsed), so one query has one id whichever source it came from. The same text
arriving twice is one query (``Fender`` and ``fender`` too: the first text seen is kept and the
merge is named); its ratings are merged, a pair graded twice differently refused. The text kept
is NFC with whitespace collapsed. Pure: no I/O.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple

from ..errors import ConfigError
from ..io.grades import grade_of
from ..io.ids import as_id
from ..io.numeric import external_float, value_text

__all__ = [
    "Builder",
    "ImportOptions",
    "Judgments",
    "RatingMap",
    "normalise_text",
    "parse_rating_map",
    "text_query_id",
]

Qrels = Dict[str, Dict[str, int]]
RatingMap = Mapping[float, int]  # a tool's rating (0.9, 100.0) -> a grade


def normalise_text(text: str) -> str:
    """Query text as it identifies a query: NFC, whitespace runs one space, ends stripped."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def text_query_id(text: str) -> str:
    """The stable id of a query known by its text (see the module's docstring)."""
    from ..judge.clicks import stable_query_id

    return stable_query_id(text)


def control_character(text: str) -> Optional[int]:
    """The 1-based position of the first control or format character (``\\x1b``, NUL, a
    bidirectional override ``\\u202e``) of ``text``, or None."""
    for i, ch in enumerate(text):
        if unicodedata.category(ch) in ("Cc", "Cf") and ch not in "\t\n\r":
            return i + 1
    return None


def parse_rating_map(text: str, *, option: str = "--grade-map") -> Dict[float, int]:
    """``"0:0,1:1,10:2,100:3"`` or ``"0.4:1,0.7:2,1.0:3"`` -> {rating: grade}. A rating is a
    decimal read as every number from outside is (``io.numeric.external_float``); a grade is an
    integer as trec_eval reads one."""
    out: Dict[float, int] = {}
    for part in text.split(","):
        raw, sep, new = part.partition(":")
        try:
            if not sep:
                raise ValueError("not 'rating:grade'")
            key, grade = external_float(raw, text=True), grade_of(new.strip())
        except ValueError as exc:
            raise ConfigError(
                f"{option}: {part.strip()!r}: {exc} (e.g. {option}=0:0,1:1,10:2,100:3)"
            ) from None
        if key in out and out[key] != grade:
            raise ConfigError(f"{option}: rating {key:g} is mapped twice")
        out[key] = grade
    return out


@dataclass(frozen=True)
class ImportOptions:
    """How ``judge import`` reads a tool's file: its ratings mapped onto grades
    (``--grade-map``), how a Quepid book's judges merge (``--policy``, the merge rules of
    ``judge import``), and whether RRE queries with placeholders other than the query's are
    left out, each named (``--skip-placeholders``), rather than refused."""

    rating_map: Optional[RatingMap] = None
    policy: str = "keep-existing"
    skip_placeholders: bool = False


@dataclass
class Judgments:
    """Judgments as the plugin keeps them, whatever tool they came from."""

    queries: Dict[str, str] = field(default_factory=dict)
    qrels: Qrels = field(default_factory=dict)
    tags: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    judges: Dict[str, Qrels] = field(default_factory=dict)  # a Quepid book: each judge's grades
    run: Dict[str, List[str]] = field(default_factory=dict)  # a Quepid snapshot: ranked doc ids
    references: Dict[str, str] = field(default_factory=dict)  # SRW's referenceAnswer
    notes: List[str] = field(default_factory=list)  # what was left out, named

    def same(self, other: Judgments) -> bool:
        """Identical judgments: queries, qrels and tags (what a suite reads)."""
        return (self.queries, self.qrels, _tag_sets(self.tags)) == (
            other.queries,
            other.qrels,
            _tag_sets(other.tags),
        )

    def counts(self) -> str:
        labels = sum(len(d) for d in self.qrels.values())
        unrated = sum(1 for q in self.queries if not self.qrels.get(q))
        s = f"{len(self.queries)} quer{'y' if len(self.queries) == 1 else 'ies'}, {labels} judgment(s)"
        return s + (f", {unrated} query(ies) without a judgment" if unrated else "")


def _tag_sets(tags: Mapping[str, Tuple[str, ...]]) -> Dict[str, frozenset]:
    return {q: frozenset(t) for q, t in tags.items() if t}


class Builder:
    """Collects one file's judgments; every id, text and grade checked as it arrives.

    ``where`` (a JSON key path) or ``line`` (a CSV line) names the row in each error."""

    def __init__(self, file: str, rating_map: Optional[RatingMap] = None, option: str = "--grade-map"):
        self.file = file
        self.rating_map = dict(rating_map) if rating_map else None
        self.option = option
        self.out = Judgments()
        self._texts: Dict[str, str] = {}  # qid -> the text it was made from
        self._merged: Set[Tuple[str, str]] = set()  # (qid, another text of it), named once
        self._origin: Dict[Tuple[Optional[str], str, str], str] = {}  # (judge, qid, doc) -> row

    def error(self, message: str, where: Any = None) -> ConfigError:
        if isinstance(where, int):
            return ConfigError(message, file=self.file, line=where)
        return ConfigError(message, file=self.file, key=where)

    def text(self, value: Any, where: Any, what: str = "query text") -> str:
        """A query text: a non-blank string without control characters, normalised."""
        if not isinstance(value, str):
            raise self.error(f"{what} must be a string, not {value_text(value)}", where)
        text = normalise_text(value)
        if not text:
            raise self.error(f"{what} is empty", where)
        bad = control_character(text)
        if bad is not None:
            raise self.error(f"{what} {text!r} holds a control character (character {bad})", where)
        return text

    def ident(self, value: Any, where: Any, what: str) -> str:
        """A query or document id: as every judgment file's (``io.ids.as_id``), and no control
        character (a terminal escape or a line break in an id forges report lines)."""
        try:
            ident = as_id(value)
        except ValueError as exc:
            raise self.error(f"bad {what}: {exc}", where) from None
        bad = control_character(ident)
        if bad is not None:
            raise self.error(f"{what} {ident!r} holds a control character (character {bad})", where)
        return ident

    def query(self, text: Any, where: Any) -> str:
        """The id of a query known by its text; the same text twice is one query."""
        norm = self.text(text, where)
        qid = text_query_id(norm)
        seen = self._texts.setdefault(qid, norm)
        if seen != norm and (qid, norm) not in self._merged:
            self._merged.add((qid, norm))
            self.note(
                f"{where if isinstance(where, str) else f'line {where}'}: {norm!r} is the query {seen!r} (ids fold case)"
            )
        self.out.queries.setdefault(qid, norm)
        return qid

    def query_with_id(self, qid: str, text: Optional[str]) -> None:
        if text is not None:
            self.out.queries.setdefault(qid, text)

    def grade(self, value: Any, where: Any) -> int:
        """A tool's rating -> a grade: through the rating map when one is given (a rating it
        does not name is an error), else an integer as trec_eval reads one."""
        if self.rating_map is not None:
            try:
                rating = external_float(value, text=True)
            except ValueError as exc:
                raise self.error(f"rating {exc}", where) from None
            if rating not in self.rating_map:
                known = ", ".join(f"{r:g}" for r in sorted(self.rating_map))
                raise self.error(
                    f"rating {value_text(value)} is not mapped by {self.option} ({known})", where
                )
            return self.rating_map[rating]
        try:
            return grade_of(value)
        except ValueError as exc:
            raise self.error(
                f"{exc}; map the tool's ratings onto grades with {self.option} (e.g. {self.option}=0.5:1,1.0:2)",
                where,
            ) from None

    def judge(self, qid: str, did: str, grade: int, where: Any, judge: Optional[str] = None) -> None:
        """One judgment; the same pair graded twice differently (by one judge) is an error."""
        target = self.out.qrels if judge is None else self.out.judges.setdefault(judge, {})
        per_q = target.setdefault(qid, {})
        key = (judge, qid, did)
        if did in per_q and per_q[did] != grade:
            shown = f" at {self._origin[key]}" if key in self._origin else ""
            raise self.error(
                f"({qid!r}, {did!r}) rated {grade} here and {per_q[did]}{shown}: one grade per pair", where
            )
        per_q[did] = grade
        self._origin.setdefault(key, f"line {where}" if isinstance(where, int) else str(where))

    def tag(self, qid: str, tag: str) -> None:
        tags = self.out.tags.get(qid, ())
        if tag not in tags:
            self.out.tags[qid] = tags + (tag,)

    def note(self, message: str) -> None:
        self.out.notes.append(message)

    def done(self) -> Judgments:
        if not self.out.queries and not self.out.qrels:
            raise self.error("no queries and no judgments in the file")
        return self.out
