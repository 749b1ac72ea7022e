"""The last runs of the run history beside a report's values (issue #37, "Look back"): with a
history configured (``--retrieval-history``), the Markdown and HTML reports (and the JSON
report's ``history`` section) show the newest ``--retrieval-history-last N`` stored values
(default 10; 0: none) of every gated metric, read before this run's record is written. A
history that cannot be read is one line; the reports are written without it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

import pytest

from .ini import MAX_COUNT, option_label

__all__ = ["DEFAULT_LAST", "MAX_LAST", "add_recent_option", "last_runs", "recent_history"]

DEFAULT_LAST = 10
MAX_LAST = MAX_COUNT  # a report's column, not a history dump (``pytest-retrieval history`` is that)


def last_runs(text: Any) -> int:
    """A whole number of runs from 0 (none shown) to ``MAX_LAST``."""
    try:
        n = int(str(text).strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of runs, got {str(text)[:40]!r}") from None
    if not 0 <= n <= MAX_LAST:
        raise argparse.ArgumentTypeError(f"expected 0 to {MAX_LAST} runs, got {n}")
    return n


def add_recent_option(group: pytest.OptionGroup) -> None:
    group.addoption(
        "--retrieval-history-last",
        metavar="N",
        type=last_runs,
        default=None,
        help=f"with --retrieval-history: the Markdown and HTML reports show the last N stored runs of "
        f"every gated metric beside this run's (default {DEFAULT_LAST}; 0: none)",
    )


def recent_history(writer: Any, config: pytest.Config, doc: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The report's ``history`` section (``history/views.recent_section``), or None: no history
    configured, none of its runs yet, N is 0, or the store could not be read (said)."""
    location = config.getoption("retrieval_history", None)
    last = config.getoption("retrieval_history_last", None)
    last = DEFAULT_LAST if last is None else int(last)
    if not location or last == 0:
        return None
    from ..history import is_engine_url, open_store

    if not is_engine_url(location) and "://" not in location and not Path(location).exists():
        return None  # the first run writes it: nothing to look back on
    holder: Dict[str, Any] = {}
    run_id = (doc.get("run") or {}).get("id")
    suites = [s["suite"] for s in doc.get("suites") or () if isinstance(s, Mapping) and "retrievers" in s]

    def read() -> None:
        from ..history.views import recent_section

        store = open_store(location)
        try:
            points: List[Any] = []
            for suite in dict.fromkeys(suites):
                points += store.points(suite=suite, limit_runs=last)
            holder["section"] = recent_section(points, location=store.location, last=last, exclude_run=run_id)
        finally:
            store.close()

    label = option_label(config, "retrieval_history")
    writer.write(f"{label}: the last runs for the reports", read, data=False)
    return holder.get("section")
