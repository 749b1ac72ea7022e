"""Comparing an engine's ranking with the one computed offline (pure, no I/O).

Used by the sweep's OpenSearch check mode and by the engine parity tests: the server's top
``k`` against the client's fused ranking. Scores must agree position by position within a
tolerance (the engines compute in float32; OpenSearch's RRF rounds to 10 decimals).
Documents must agree position by position, except inside a group of equal client scores,
which is compared as a set: the engines order ties by Lucene doc id, which a
:class:`~pytest_retrieval.types.Ranking` does not carry (``TopDocs.merge`` tie-break on shard
and doc index). A tie group crossing position ``k`` only needs the server's members to be
among the client's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..types import Ranking

SCORE_TOLERANCE = 1e-6


@dataclass
class TopComparison:
    max_score_diff: float = 0.0
    tie_groups: int = 0  # groups of equal scores inside the top k
    tie_groups_reordered: int = 0  # of those, groups the server ordered differently
    mismatch: Optional[str] = None  # why the rankings differ, or None when they agree


def compare_top(
    server: Ranking, client: Ranking, k: int, score_tolerance: float = SCORE_TOLERANCE
) -> TopComparison:
    """The server's top ``k`` against the client's ranking (uncut); see the module doc."""
    out = TopComparison()
    n = min(k, len(client))
    if len(server) != n:
        out.mismatch = f"server returned {len(server)} hits, the offline ranking has {n}"
        return out
    diffs = [abs(a - b) for a, b in zip(server.scores, client.scores[:n])]
    out.max_score_diff = max(diffs, default=0.0)
    if out.max_score_diff > score_tolerance:
        rank = diffs.index(out.max_score_diff) + 1
        out.mismatch = (
            f"score differs by {out.max_score_diff:.3g} at rank {rank}: server "
            f"{server.pairs()} offline {client.top(n).pairs()}"
        )
        return out
    i = 0
    while i < n:
        j = i
        while j < len(client) and client.scores[j] == client.scores[i]:
            j += 1
        group = set(client.doc_ids[i:j])
        end = min(j, n)
        got = server.doc_ids[i:end]
        if not (set(got) <= group and len(set(got)) == end - i):
            out.mismatch = (
                f"ranks {i + 1}-{end}: server {got}, offline {client.doc_ids[i:end]} "
                f"(tied group {sorted(group)})"
            )
            return out
        if j - i > 1:
            out.tie_groups += 1
            out.tie_groups_reordered += got != client.doc_ids[i:end]
        i = j
    return out
