"""Run records made by hand for the store tests: the shape ``report_document`` writes, with a
``run`` section, small enough to write hundreds of."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Sequence

from pytest_retrieval.history.record import format_time

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def record(
    hour: float = 0,
    *,
    run_id: str = "",
    suite: str = "s",
    branch: str = "main",
    commit: str = "abc123",
    tags: Sequence[str] = (),
    partial: bool = False,
    ndcg: float = 0.5,
    queries: int = 4,
) -> Dict[str, Any]:
    per_query = {
        f"q{i}": {"ndcg@10": ndcg + (i - (queries - 1) / 2) * 0.1, "mrr": 0.6} for i in range(queries)
    }
    return {
        "version": 2,
        "run": {
            "id": run_id or uuid.uuid4().hex,
            "time": format_time(T0 + timedelta(hours=hour)),
            "host": "ci-1",
            "commit": commit,
            "branch": branch,
            "ci": None,
            "ci_job": None,
            "pull_request": None,
            "tags": list(tags),
            "partial": partial,
            "exitstatus": 0,
        },
        "plugin_version": "0",
        "suites": [
            {
                "suite": suite,
                "fingerprint": {"corpus": {"sha256": "c0"}, "query_hashes": {"q0": "x"}},
                "gated": [
                    {"retriever": "bm25", "metric": "ndcg@10", "kind": "floor", "op": ">=", "threshold": 0.1}
                ],
                "gates": [{"retriever": "bm25", "metric": "ndcg@10", "stratum": None, "passed": ndcg >= 0.1}],
                "regressions": [],
                "unjudged_share": {"bm25": 0.25},
                "retrievers": [
                    {
                        "name": "bm25",
                        "metrics": {"ndcg@10": ndcg, "mrr": 0.6},
                        "latency_ms": {"p50": 1.0, "p95": 2.0, "p99": 3.0},
                        "per_query": per_query,
                    }
                ],
            }
        ],
    }
