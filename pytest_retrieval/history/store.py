"""The history store's contract (issue #37): what every store (``sqlite.py``, the engine index
store) implements and what the views (``pytest-retrieval history``) and the reference gate read.

A store keeps run records (``record.py``: the JSON report document with its ``run`` section).
Appending is create-only: a record's id is never overwritten, so two CI jobs writing at once
both land. Reading never needs the whole record for a trend: ``points`` answers from the
per-(run, suite, retriever, metric) summary the store keeps when it appends a record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, List, Mapping, Optional, Protocol, Sequence

__all__ = ["RunEntry", "MetricPoint", "HistoryStore"]


@dataclass(frozen=True)
class RunEntry:
    """One stored run, without its per-query values."""

    id: str  # the record's run id (record.py: a UUID4 hex, made once per session)
    time: datetime  # UTC, when the session ended
    commit: Optional[str] = None
    branch: Optional[str] = None
    ci_job: Optional[str] = None
    pull_request: Optional[str] = None
    host: Optional[str] = None
    partial: bool = False  # some gates got no verdict: never a reference unless asked
    exitstatus: int = 0
    tags: Sequence[str] = ()
    suites: Sequence[str] = ()  # suite names in the run
    #: per suite name: the suite's fingerprint components (gates/fingerprint.py), as stored, but
    #: for ``query_hashes`` (thousands of them: ``load`` has the whole record)
    fingerprints: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class MetricPoint:
    """One aggregate value of one run: a point of a trend."""

    run_id: str
    time: datetime
    suite: str
    retriever: str
    metric: str  # a measure name as the report writes it (ndcg@10, mrr; p50_ms/p95_ms/p99_ms for latency_ms,
    # the latency floors' own names; unjudged_share@10)
    value: float
    lo: Optional[float] = None  # the confidence band of the mean, when known
    hi: Optional[float] = None
    gated: bool = False  # a floor, baseline or reference gate reads this metric
    verdict: Optional[str] = None  # passed / failed / error / skipped of that gate, if gated


class HistoryStore(Protocol):
    """A place run records are kept. Every method raises ``HistoryError`` (errors.py) with one
    line naming the store (credentials redacted) and what is wrong."""

    #: where the store is, printable: never holds a credential
    location: str

    def append(self, record: Mapping[str, Any]) -> str:
        """Store ``record`` (create-only) and return its run id."""
        ...

    def runs(
        self,
        *,
        suite: Optional[str] = None,
        branch: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        include_partial: bool = True,
        limit: Optional[int] = None,
    ) -> List[RunEntry]:
        """The stored runs, oldest first (the newest ``limit`` when given)."""
        ...

    def points(
        self,
        *,
        suite: Optional[str] = None,
        retriever: Optional[str] = None,
        metric: Optional[str] = None,
        branch: Optional[str] = None,
        since: Optional[datetime] = None,
        include_partial: bool = False,
        limit_runs: Optional[int] = None,
    ) -> List[MetricPoint]:
        """Aggregate values per run, oldest first: what a trend reads."""
        ...

    def load(self, run_id: str) -> Dict[str, Any]:
        """The whole record of a stored run."""
        ...

    def resolve(self, ref: str) -> str:
        """A run id (or a unique prefix of one), a tag, or a commit (or a unique prefix) -> the
        run id; the newest run when a tag or commit names several; an error when none or when a
        prefix is ambiguous."""
        ...

    def prune(self, *, keep_last: Optional[int] = None, before: Optional[datetime] = None) -> int:
        """Delete runs older than ``before`` and all but the newest ``keep_last``; the count."""
        ...

    def close(self) -> None: ...
