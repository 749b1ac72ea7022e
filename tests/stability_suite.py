"""The tiny suite with canary queries and stability gates that the stability tests run through
pytest (issue #33: tests/gates, tests/reports): two judged queries, five documents, three canary
queries in ``canary.jsonl``, bm25 on the titles, gates ``rbo@10: 0.95`` and ``top1_changed: 0``.
Each pytest run of it is a few seconds; ``SEARCH_TEXT_TOO`` moves its rankings."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Sequence, Tuple

#: what changes the suite's rankings (the text is searched too: documents enter the top 10)
SEARCH_TEXT_TOO = ("fields: [title]", "fields: [title, text]")

_SUITE = """\
suite: stable
judgments:
  inline:
    - {id: q1, text: "solar panels efficiency", relevant: {d1: 1}}
    - {id: q2, text: "river flood defences", relevant: {d3: 1}}
  documents:
    - {id: d1, title: "Solar panels", text: "efficiency of solar panels in winter"}
    - {id: d2, title: "Panels", text: "solar efficiency measured"}
    - {id: d3, title: "Floods", text: "river flood defences in cities"}
    - {id: d4, title: WIND_TITLE, text: "wind turbines and solar farms"}
    - {id: d5, title: "Physics", text: "loop gravity theories solar"}
  canary: canary.jsonl
latency:
  enabled: false
retrievers:
  bm25:
    type: bm25
    fields: [title]
stability:
  bm25: {rbo@10: 0.95, top1_changed: 0.0}
"""


def stability_suite(wind_title: str = "Wind") -> str:
    """The suite's YAML, document d4 titled ``wind_title`` (a YAML single-quoted scalar)."""
    return _SUITE.replace("WIND_TITLE", "'" + wind_title.replace("'", "''") + "'")


def canary_rows(first_suffix: str = "") -> List[Dict[str, str]]:
    """The three canary queries; ``first_suffix`` appended to the first one's text."""
    return [
        {"_id": "c1", "text": "solar farms" + first_suffix},
        {"_id": "c2", "text": "wind turbines"},
        {"_id": "c3", "text": "gravity"},
    ]


def write_canary(pytester: Any, rows: Sequence[Dict[str, str]]) -> None:
    (pytester.path / "canary.jsonl").write_text("".join(json.dumps(c) + "\n" for c in rows))


def run_with_report(pytester: Any, *args: str) -> Tuple[Any, Dict[str, Any]]:
    """(pytest's result, the JSON report) of one run in a subprocess."""
    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess("-q", "-rs", f"--retrieval-report={report}", *args)
    return result, json.loads(report.read_text())
