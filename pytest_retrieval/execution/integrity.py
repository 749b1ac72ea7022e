"""Checks that the judgments mean what the numbers will say: the query set lines up with the
qrels, the judged documents exist, and the queries are not documents finding themselves.

Each check returns a small dataclass; the runner applies the suite's policy (report, drop or
refuse) and the reports print ``lines()`` and ``as_dict()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Container, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from ..backends.base import Backend
from ..config.load import Suite
from ..config.yamlio import KeyPath
from ..io.judgment_set import JudgmentSet
from ..io.qrels import Qrels
from ..io.tags import SYNTHETIC_TAG
from .plan import needs_corpus

# ------------------------------------------------------------------ query set


def _absent(ids: Iterable[str], present: Container[str]) -> List[str]:
    """The ids of ``ids`` not in ``present``, in order."""
    return [i for i in ids if i not in present]


@dataclass
class QuerySetCheck:
    """How the queries file and the qrels line up (per suite)."""

    judged: int  # query ids in the qrels
    judged_with_text: int
    queries: int  # query ids with a text
    queries_with_judgments: int
    normalised: int  # qrels ids matched to a query only after normalising (007 ~ 7)
    judged_without_text: List[str] = field(default_factory=list)
    queries_without_judgments: List[str] = field(default_factory=list)
    empty_text: List[str] = field(default_factory=list)  # judged queries whose text is blank
    synthetic: int = 0  # judged queries tagged "synthetic" (``judge synth``)

    @classmethod
    def of(cls, js: JudgmentSet) -> QuerySetCheck:
        judged = list(js.qrels)
        texts = js.queries
        judged_without_text = _absent(judged, texts)
        queries_without_judgments = _absent(texts, js.qrels)
        return cls(
            judged=len(judged),
            judged_with_text=len(judged) - len(judged_without_text),
            queries=len(texts),
            queries_with_judgments=len(texts) - len(queries_without_judgments),
            normalised=js.normalised.get("qrels", 0),
            judged_without_text=judged_without_text,
            queries_without_judgments=queries_without_judgments,
            empty_text=[q for q in judged if q in texts and not texts[q].strip()],
            synthetic=sum(1 for q in judged if SYNTHETIC_TAG in js.tags.get(q, ())),
        )

    @property
    def gaps(self) -> bool:
        return bool(self.judged_without_text or self.queries_without_judgments)

    def line(self) -> str:
        line = (
            f"query set: {self.judged_with_text} of {self.judged} judged queries have a text; "
            f"{self.queries_with_judgments} of {self.queries} queries have judgments; "
            f"{self.normalised} id(s) matched only after normalising"
        )
        if self.synthetic:
            line += f"; {self.synthetic} synthetic, {self.judged - self.synthetic} human"
        return line

    def synthetic_line(self) -> Optional[str]:
        """One line when more than half of the judged queries are synthetic (issue #27: a
        synthetic set is good for comparing retrievers, not for absolute numbers)."""
        if self.synthetic * 2 <= self.judged:
            return None
        return (
            f"mostly synthetic: {self.synthetic} of {self.judged} judged queries are LLM-written "
            f"(tagged '{SYNTHETIC_TAG}'): trust comparisons between retrievers, and backstop the floors "
            f"with human queries (a floor on ndcg@10[human], `judge agree` on a human-labelled subset)"
        )

    def warnings(self) -> List[str]:
        out = []
        if self.judged_without_text:
            out.append(
                f"{len(self.judged_without_text)} judged queries have no text and score 0 "
                f"(e.g. {_ex(self.judged_without_text)}); if the queries file is keyed "
                f"differently from the qrels, the other ids may have the wrong text too "
                f"(judgments.require_all: true makes this an error)"
            )
        if self.queries_without_judgments and self.judged_without_text:
            out.append(
                f"{len(self.queries_without_judgments)} queries have no judgment "
                f"(e.g. {_ex(self.queries_without_judgments)})"
            )
        if self.normalised:
            out.append(
                f"{self.normalised} qrels id(s) matched a query only after normalising "
                f"(e.g. '007' ~ '7'): fix the files so ids are identical strings"
            )
        if self.empty_text:
            out.append(
                f"{len(self.empty_text)} judged queries have an empty text: {_ex(self.empty_text, 10)}"
            )
        return out

    def problem(self, *, unjudged_expected: bool = False) -> Optional[str]:
        """The gap ``judgments.require_all`` refuses (None when there is none).
        ``unjudged_expected``: queries without judgments are no gap (a BEIR ``queries.jsonl``
        holds the queries of every split)."""
        parts = []
        if self.judged_without_text:
            parts.append(
                f"{len(self.judged_without_text)} judged queries without text ({_ex(self.judged_without_text)})"
            )
        if self.queries_without_judgments and not unjudged_expected:
            parts.append(
                f"{len(self.queries_without_judgments)} queries without judgments "
                f"({_ex(self.queries_without_judgments)})"
            )
        if self.normalised:
            parts.append(f"{self.normalised} ids matched only after normalising")
        if self.empty_text:
            parts.append(f"{len(self.empty_text)} empty query texts ({_ex(self.empty_text)})")
        return "; ".join(parts) or None

    def as_dict(self) -> Dict[str, Any]:
        return {
            "judged": self.judged,
            "judged_with_text": self.judged_with_text,
            "queries": self.queries,
            "queries_with_judgments": self.queries_with_judgments,
            "normalised": self.normalised,
            "judged_without_text": self.judged_without_text,
            "queries_without_judgments": self.queries_without_judgments,
            "empty_text": self.empty_text,
            "synthetic": self.synthetic,
        }


# ---------------------------------------------------------------- documents


UNCHECKED = "not checked"  # MissingDocuments.checked_against when the backend cannot tell


@dataclass
class MissingDocuments:
    """Judgments naming documents that are not in the corpus / index."""

    checked_against: str  # "corpus" or "index <name>"
    judgments: int  # judgments checked
    relevant: int  # relevant (grade > 0) judgments checked
    missing: Dict[str, List[str]] = field(default_factory=dict)  # qid -> missing doc ids
    missing_relevant: int = 0
    hopeless: List[str] = field(default_factory=list)  # queries none of whose relevant docs exist
    dropped: bool = False

    @classmethod
    def of(cls, qrels: Qrels, existing: Set[str], checked_against: str) -> MissingDocuments:
        out = cls(checked_against, 0, 0)
        for qid, docs in qrels.items():
            relevant = [d for d, g in docs.items() if g > 0]
            out.judgments += len(docs)
            out.relevant += len(relevant)
            gone = _absent(docs, existing)
            if gone:
                out._add_missing(qid, gone, _absent(relevant, existing), len(relevant))
        return out

    def _add_missing(self, qid: str, gone: List[str], relevant_gone: List[str], relevant: int) -> None:
        self.missing[qid] = gone
        self.missing_relevant += len(relevant_gone)
        if relevant and len(relevant_gone) == relevant:
            self.hopeless.append(qid)

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.missing.values())

    @property
    def share(self) -> float:
        """Share of the relevant judgments whose document is missing."""
        return self.missing_relevant / self.relevant if self.relevant else 0.0

    def affected(self) -> List[str]:
        """Affected queries, those that can never score above 0 first."""
        hopeless = set(self.hopeless)
        return self.hopeless + [q for q in self.missing if q not in hopeless]

    def examples(self, n: int = 10) -> str:
        parts = []
        for q in self.affected()[:n]:
            docs = self.missing[q]
            parts.append(f"{q} ({', '.join(docs[:3])}{', ...' if len(docs) > 3 else ''})")
        more = len(self.missing) - n
        return "; ".join(parts) + (f"; +{more} more queries" if more > 0 else "")

    def too_many(self, limit: float) -> Optional[str]:
        if self.share <= limit:
            return None
        return (
            f"{self.missing_relevant} of {self.relevant} relevant judgments ({self.share:.1%}, "
            f"above the {limit:g} allowed) name documents missing from the {self.checked_against}: "
            f"wrong corpus, index or id scheme? queries: {self.examples()}"
        )

    def drop_from(self, qrels: Qrels) -> Qrels:
        """The qrels without the judgments of missing documents."""
        return {
            q: ({d: g for d, g in docs.items() if d not in self.missing[q]} if q in self.missing else docs)
            for q, docs in qrels.items()
        }

    def line(self) -> Optional[str]:
        if not self.missing:
            return None
        head = (
            f"{self.count} judgments ({self.missing_relevant} relevant, {self.share:.2%}) of "
            f"{len(self.missing)} queries name documents missing from the {self.checked_against}"
        )
        if self.hopeless:
            head += (
                f"; {len(self.hopeless)} queries have no existing relevant document and "
                + ("are left out of the averages" if self.dropped else "score 0")
                + f": {_ex(self.hopeless, 10)}"
            )
        if self.dropped:
            head += " (judgments.missing_documents: drop)"
        else:
            head += " (counted as trec_eval counts them; judgments.missing_documents: drop leaves them out)"
        return head + f"; affected: {self.examples(5)}"

    def as_dict(self) -> Dict[str, Any]:
        return {
            "checked_against": self.checked_against,
            "judgments": self.judgments,
            "relevant": self.relevant,
            "missing": self.count,
            "missing_relevant": self.missing_relevant,
            "share_of_relevant": self.share,
            "policy": "drop" if self.dropped else "count",
            "no_existing_relevant": list(self.hopeless),
            "queries": {q: list(self.missing[q]) for q in self.affected()},
        }


# ----------------------------------------------------------------- self hits


SELF_HIT_HINT_SHARE = 0.10


def find_missing_documents(
    suite: Suite, backend: Backend, js: JudgmentSet, progress: Callable[[str], None]
) -> MissingDocuments:
    """The judged documents absent from the corpus (embedded, throwaway index) or from the
    existing index (batched read-only id lookups); an error above the allowed share."""
    judged = [d for docs in js.qrels.values() for d in docs]
    found = _existing_documents(suite, backend, js, judged, progress, "judged")
    if found is None:  # a backend that cannot tell (a service, a third-party engine): said so
        return MissingDocuments(
            f"{UNCHECKED}: backend {backend.name!r} cannot tell which documents it holds", 0, 0
        )
    existing, where = found
    missing = MissingDocuments.of(js.qrels, existing, where)
    problem = missing.too_many(suite.model.judgments.max_missing_documents)
    if problem:
        raise suite.error(("judgments", "max_missing_documents"), problem)
    return missing


def _existing_documents(
    suite: Suite,
    backend: Backend,
    js: JudgmentSet,
    ids: List[str],
    progress: Callable[[str], None],
    what: str,
) -> Optional[Tuple[Set[str], str]]:
    """(the ids of ``ids`` that exist, where they were looked up): the corpus of an embedded or
    throwaway index, else the existing index; None when the backend cannot tell."""
    if needs_corpus(suite):
        return {
            d.doc_id for d in js.judged_corpus or []
        }, f"corpus ({js.sources.get('corpus', 'judgments.documents')})"
    progress(f"checking {len(set(ids))} {what} document ids against the index")
    found = backend.existing_ids(ids)
    return None if found is None else (found, f"index {suite.model.backend.index.name!r}")


def check_expectation_documents(
    suite: Suite, backend: Backend, js: JudgmentSet, progress: Callable[[str], None]
) -> None:
    """Every document an expectation names exists in the corpus or the index: an ``excludes``
    or the ``b`` of ``above`` naming a document that exists nowhere (a typo, another id scheme)
    always holds, a ``contains`` never does. A ConfigError at the first such id."""
    named = expectation_documents(suite)
    if not named:
        return
    found = _existing_documents(suite, backend, js, [d for _, d in named], progress, "golden")
    if found is None:
        return
    existing, where = found
    gone = [(key, d) for key, d in named if d not in existing]
    if gone:
        key, d = gone[0]
        more = f" (+{len(gone) - 1} more)" if len(gone) > 1 else ""
        raise suite.error(
            key,
            f"document {d!r} is not in the {where}{more}: a check of a document that exists "
            "nowhere cannot be trusted (a typo, or another id scheme?)",
        )


def expectation_documents(suite: Suite) -> List[Tuple[KeyPath, str]]:
    """(key path, doc id) of every document the suite's expectations name."""
    out: List[Tuple[KeyPath, str]] = []
    for i, e in enumerate(suite.model.expectations):
        for field_name in ("contains", "excludes", "above"):
            out += [
                (("expectations", i, field_name, j), str(d))
                for j, d in enumerate(getattr(e, field_name) or ())
            ]
        if e.first is not None:
            out.append((("expectations", i, "first"), str(e.first)))
    return out


def self_hit_warnings(runs: Mapping[str, Mapping[str, Any]], qids: List[str]) -> List[str]:
    """A hint per retriever whose rank-1 hit is the query's own id for >= 10% of ``qids``."""
    from ..io.beir import self_hit_share

    out = []
    for name, run in runs.items():
        top1, n = self_hit_share(run, qids)
        if n and top1 / n >= SELF_HIT_HINT_SHARE:
            out.append(
                f"{name}: for {top1} of {n} judged queries ({top1 / n:.0%}) the rank-1 hit is the "
                f"query's own id: the queries are documents of the corpus; set "
                f"evaluation.exclude_self_hits: true to score as BEIR does (ignore_identical_ids)"
            )
    return out


def _ex(ids: List[str], n: int = 5) -> str:
    shown = ", ".join(repr(q) for q in ids[:n])
    return shown + (f", +{len(ids) - n} more" if len(ids) > n else "")


def self_judged_warnings(qrels: Qrels) -> List[str]:
    """With self-hits excluded, a query that judges its own id relevant can never retrieve it."""
    own = [q for q, docs in qrels.items() if docs.get(q, 0) > 0]
    if not own:
        return []
    return [
        f"{len(own)} queries judge their own id relevant ({_ex(own)}), but "
        f"evaluation.exclude_self_hits removes that hit: they can never find it"
    ]
