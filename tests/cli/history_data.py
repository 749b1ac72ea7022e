"""Run records for the ``history`` tests and benchmark: small, made by hand in the shape the
plugin writes (``history/record.py``: the JSON report with its ``run`` section), so a store
holds any number of them in a second."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Optional, Sequence

START = datetime(2026, 9, 1, 3, 0, tzinfo=timezone.utc)
FINGERPRINT = {"engine": {"name": "embedded", "version": "1"}, "corpus": {"count": 5183, "sha256": "c0"}}


def record(
    i: int,
    value: float,
    *,
    suite: str = "tiny",
    branch: Optional[str] = "main",
    commit: Optional[str] = None,
    exitstatus: int = 0,
    partial: bool = False,
    fingerprint: Optional[Dict[str, Any]] = None,
    tags: Sequence[str] = (),
    queries: int = 20,
    retrievers: Sequence[str] = ("bm25", "rrf"),
) -> Dict[str, Any]:
    """Run ``i`` (a day after run ``i - 1``): each retriever's ndcg@10 is ``value`` (rrf's
    0.05 above) over ``queries`` per-query values spread around it; ndcg@10 of every
    retriever is gated by a floor of 0.3."""
    from pytest_retrieval.history.record import format_time

    entries, gates = [], []
    for k, name in enumerate(retrievers):
        v = value + 0.05 * k
        per_query = {f"q{j}": {"ndcg@10": v + (j % 5 - 2) * 0.02, "recall@100": 0.9} for j in range(queries)}
        entries.append(
            {
                "name": name,
                "metrics": {"ndcg@10": v, "recall@100": 0.9},
                "per_query": per_query,
                "latency_ms": {"p50": 1.0 + k, "p95": 2.0 + k, "p99": 3.0 + k},
            }
        )
        gates.append(
            {
                "retriever": name,
                "metric": "ndcg@10",
                "stratum": None,
                "value": v,
                "op": ">=",
                "threshold": 0.3,
                "passed": v >= 0.3,
            }
        )
    return {
        "version": 2,
        "run": {
            "id": f"{i:04d}" + "ab" * 14,
            "time": format_time(START + timedelta(days=i)),
            "host": "ci",
            "commit": commit or f"{i:04x}" + "c" * 36,
            "branch": branch,
            "ci": "github",
            "ci_job": str(1000 + i),
            "pull_request": None,
            "tags": list(tags),
            "partial": partial,
            "exitstatus": exitstatus,
            "gates": {"total": len(gates), "ran": len(gates) - (1 if partial else 0)},
        },
        "plugin_version": "test",
        "suites": [
            {
                "suite": suite,
                "file": f"retrieval_{suite}.yaml",
                "metrics": ["ndcg@10", "recall@100"],
                "retrievers": entries,
                "gated": [
                    {"retriever": n, "metric": "ndcg@10", "kind": "quality", "op": ">=", "threshold": 0.3}
                    for n in retrievers
                ],
                "gates": gates,
                "regressions": [],
                "items": [],
                "fingerprint": fingerprint or FINGERPRINT,
            }
        ],
    }


def fill(store: Any, values: Sequence[float], **kw: Any) -> None:
    """Append one record per value, run 0 first."""
    for i, v in enumerate(values):
        store.append(record(i, v, **kw))
