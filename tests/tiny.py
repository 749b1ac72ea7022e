"""A tiny suite (five documents, four judged queries, two BM25 leaves and their RRF) and an
in-process run of it, for tests that need a real ``SuiteResult``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TINY_SUITE = """\
suite: tiny
judgments:
  inline:
    - {id: q1, text: "solar panels efficiency", relevant: {d1: 1, d4: 2, d2: 0}, tags: [energy]}
    - {id: q2, text: "river flood defences", relevant: {d3: 1}}
    - {id: 3, text: "quantum gravity", relevant: {d5: 1}}
    - {id: q4, text: "no relevant doc judged", relevant: {d1: 0}}
  documents:
    - {id: d1, title: "Solar panels", text: "efficiency of solar panels in winter"}
    - {id: d2, title: "Panels", text: "solar efficiency measured"}
    - {id: d3, title: "Floods", text: "river flood defences in cities"}
    - {id: d4, title: "Wind", text: "wind turbines and solar farms"}
    - {id: d5, title: "Physics", text: "loop gravity theories"}
latency:
  warmup: 1
retrievers:
  bm25:
    type: bm25
    fields: [title^2, text]
  text_only:
    type: bm25
    fields: [text]
  rrf:
    type: rrf
    of: [bm25, text_only]
floors:
  bm25:
    ndcg@10: 0.5
    p95_ms: 10000
  rrf:
    recall@10: 0.5
"""

#: The tiny suite with an unjudged document and every gate kind: a stratum, a lift, abstention on two unanswerable
#: queries, latency ceilings and A/B ratios against ``text_only``, and a baseline gate.
RICH_SUITE = (
    TINY_SUITE.replace(
        '    - {id: q4, text: "no relevant doc judged", relevant: {d1: 0}}',
        '    - {id: q4, text: "no relevant doc judged", relevant: {d1: 0}}\n'
        '    - {id: u1, text: "zebra migration patterns", tags: [unanswerable]}\n'
        '    - {id: u2, text: "solar", tags: [unanswerable]}',
    )
    .replace("  documents:\n", "  documents:\n    - {id: d6, title: Cost, text: solar panels cost}\n")
    .replace("latency:\n  warmup: 1\n", "latency:\n  warmup: 1\n  repetitions: 4\n  baseline: text_only\n")
    .replace(
        "floors:\n", "unanswerable:\n  tag: unanswerable\nregression:\n  max_drop: {ndcg@10: 0.0}\nfloors:\n"
    )
    .replace(
        "    p95_ms: 10000\n",
        "    p95_ms: 10000\n    ndcg@10[energy]: 0.99\n    p95_ratio: 1000\n    p50_ratio: 1000\n",
    )
    .replace("    recall@10: 0.5\n", "    recall@10: 0.5\n    lift@ndcg@10: 0.5\n    abstention: 0.9\n")
)


def run_tiny(directory: Path, text: str = TINY_SUITE, **load: Any) -> Any:
    """Write ``text`` as ``retrieval_tiny.yaml`` in ``directory``, load and run it."""
    from pytest_retrieval.config.load import load_suite
    from pytest_retrieval.execution.runner import SuiteRunner

    path = Path(directory) / "retrieval_tiny.yaml"
    path.write_text(text)
    return SuiteRunner(load_suite(path, **load)).run()
