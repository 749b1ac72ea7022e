"""What ``pytest-retrieval history`` shows (issue #37, "Look back"), read from a store's
``RunEntry`` and ``MetricPoint`` rows (``store.py``): the runs, one trend series per (suite,
retriever, metric) with a sparkline, the changes of a suite's fingerprint between consecutive
runs, and the last values of every gated metric beside a report's own. Pure: no I/O; the
command (``cli/history/``) and the renderers (``reports/history_page.py``, the Markdown and
HTML reports) write.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .store import MetricPoint, RunEntry

__all__ = [
    "ASCII_LEVELS",
    "BLOCKS",
    "Series",
    "fingerprint_changes",
    "recent_section",
    "recent_values",
    "run_verdict",
    "series_of",
    "sparkline",
    "wants_ascii",
]

#: the sparkline's eight levels (Unicode block elements U+2581..U+2588), lowest first
BLOCKS = "▁▂▃▄▅▆▇█"
#: the same eight levels in ASCII, for a terminal that cannot write the blocks
ASCII_LEVELS = "_.-:=+*#"


def wants_ascii(encoding: Optional[str]) -> bool:
    """True when a stream of ``encoding`` cannot write the block characters (``ascii``,
    ``latin-1``, a Windows code page, none known)."""
    try:
        BLOCKS.encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return True
    return False


def sparkline(values: Sequence[Optional[float]], *, ascii: bool = False) -> str:
    """One character per value, scaled from the lowest (``▁``) to the highest (``█``); a
    missing or non-finite value is a space (a gap, never drawn as a low), a flat series the
    middle level."""
    levels = ASCII_LEVELS if ascii else BLOCKS
    xs = [float(v) if _finite(v) else None for v in values]  # type: ignore[arg-type]
    finite = [v for v in xs if v is not None]
    if not finite:
        return " " * len(values)
    lo, hi = min(finite), max(finite)
    out = []
    for v in xs:
        if v is None:
            out.append(" ")
        elif hi == lo:
            out.append(levels[len(levels) // 2 - 1])
        else:
            out.append(levels[round((v - lo) / (hi - lo) * (len(levels) - 1))])
    return "".join(out)


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def run_verdict(run: RunEntry) -> str:
    """A stored run's verdict in one word: ``passed``, ``failed`` (a gate failed: pytest exit
    1), ``partial`` (some gates got no verdict: never a pass) or ``error (exit N)``."""
    if run.exitstatus == 1:
        return "failed"
    if run.exitstatus not in (0, 5):
        return f"error (exit {run.exitstatus})"
    return "partial" if run.partial else "passed"


@dataclass
class Series:
    """The points of one (suite, retriever, metric), oldest first."""

    suite: str
    retriever: str
    metric: str
    points: List[MetricPoint] = field(default_factory=list)

    gated: bool = False  # some run gated it

    @property
    def values(self) -> List[float]:
        return [p.value for p in self.points]

    def change(self) -> Optional[float]:
        """Last minus first, or None for fewer than two points."""
        return self.points[-1].value - self.points[0].value if len(self.points) > 1 else None


def series_of(points: Iterable[MetricPoint], *, gated_only: bool = False) -> List[Series]:
    """The points grouped into series, in the order each (suite, retriever, metric) first
    appears; ``gated_only``: only the series some run gated (all when none is)."""
    by_key: Dict[Tuple[str, str, str], Series] = {}
    for p in points:
        key = (p.suite, p.retriever, p.metric)
        if key not in by_key:
            by_key[key] = Series(*key)
        by_key[key].points.append(p)
        by_key[key].gated = by_key[key].gated or p.gated
    out = list(by_key.values())
    if gated_only and any(s.gated for s in out):
        out = [s for s in out if s.gated]
    return out


def fingerprint_changes(runs: Sequence[RunEntry], suite: str) -> Dict[str, List[str]]:
    """Run id -> what changed in ``suite``'s fingerprint since the previous run that had one
    (``gates/fingerprint.compare_fingerprints``: the system, the judgments, or what makes
    the two incomparable), for the runs where something did. ``runs``: oldest first."""
    from ..gates.fingerprint import compare_fingerprints

    out: Dict[str, List[str]] = {}
    previous: Optional[Mapping[str, Any]] = None
    for run in runs:
        current = (run.fingerprints or {}).get(suite)
        if not current:
            continue
        if previous is not None:
            diff = compare_fingerprints(previous, current)
            if diff:
                out[run.id] = diff.lines
        previous = current
    return out


def recent_values(
    points: Iterable[MetricPoint], *, exclude_run: Optional[str] = None, last: int = 10
) -> Dict[Tuple[str, str, str], List[MetricPoint]]:
    """(suite, retriever, metric) -> its newest ``last`` stored points (oldest first), for the
    gated series: what the Markdown and HTML reports show beside today's value. The run being
    reported (``exclude_run``) is left out: today's value is the report's own."""
    out: Dict[Tuple[str, str, str], List[MetricPoint]] = {}
    for s in series_of((p for p in points if p.run_id != exclude_run), gated_only=True):
        if s.gated:
            out[(s.suite, s.retriever, s.metric)] = s.points[-last:] if last > 0 else []
    return out


def recent_section(
    points: Iterable[MetricPoint], *, location: str, last: int, exclude_run: Optional[str] = None
) -> Optional[Dict[str, Any]]:
    """The ``history`` section of a report: the newest ``last`` stored values of every gated
    metric, for the Markdown and HTML reports to show beside the run's own; None when the
    store has none."""
    from .record import format_time

    recent = recent_values(points, exclude_run=exclude_run, last=last)
    if not recent:
        return None
    return {
        "store": location,
        "last": last,
        "series": [
            {
                "suite": suite,
                "retriever": retriever,
                "metric": metric,
                "runs": [
                    {"id": p.run_id, "time": format_time(p.time), "value": p.value, "verdict": p.verdict}
                    for p in pts
                ],
            }
            for (suite, retriever, metric), pts in recent.items()
        ],
    }
