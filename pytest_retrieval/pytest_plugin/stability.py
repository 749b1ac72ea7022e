"""A suite's stability comparison for the session (issue #33): the stored rankings read once (the
baseline's, or with ``--retrieval-stability-against RUN`` a stored run's of the history:
:mod:`.stability_run`), and each retriever's rankings of this run (canary and judged queries)
lined up with them (``gates.stability.compare_rankings``). The edge: the baseline file and the
history are read here, the gates and the report's section are pure."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ..errors import ConfigError
from ..gates.stability import REWRITE_HINT, Compared
from .stability_run import compare_with_run, line_up, read_stored_run, run_label

__all__ = ["StabilityInputs"]


class StabilityInputs:
    """The rankings a suite's stability gates compare with (read once: the baseline's, or
    ``against`` a stored run of the ``history`` store), and each retriever's comparison."""

    def __init__(self, against: Optional[str] = None, history: Optional[str] = None) -> None:
        self.against, self.history = against, history
        self._read: Optional[Tuple[Any, str, Optional[Exception]]] = None  # (baseline, path, error)
        self._run: Optional[Tuple[Any, Optional[Exception]]] = None  # (StoredRankings, error)
        self._compared: Dict[str, Compared] = {}

    def fresh(self) -> StabilityInputs:
        """Inputs to read again with the same settings (the xdist controller's copy)."""
        return StabilityInputs(self.against, self.history)

    def reference(self, suite: Any) -> str:
        """What the rankings are compared with (``the baseline``, ``stored run 3f2a... (v1)``),
        read once; the error of reading it (``BaselineMissing``, ``ConfigError``,
        ``HistoryError``) each time it is asked."""
        if self.against is None:
            self.baseline(suite)
            return "the baseline"
        return run_label(self.stored_run(suite), self.against)

    def stored_run(self, suite: Any) -> Any:
        """The stored run's rankings of the suite (``history.rankings.StoredRankings``)."""
        if self._run is None:
            try:
                self._run = (read_stored_run(str(self.history or ""), str(self.against), suite), None)
            except Exception as exc:  # noqa: BLE001 - said by each item and the report, never a pass
                self._run = (None, exc)
        stored, error = self._run
        if error is not None:
            raise error
        return stored

    def baseline(self, suite: Any) -> Tuple[Any, str]:
        """(the baseline, its path); ``BaselineMissing`` without one, ``ConfigError`` for a
        baseline that does not add up (the same error each time it is asked)."""
        if self._read is None:
            from ..gates.baseline import baseline_path, read_baseline

            where = baseline_path(suite)
            try:
                self._read = (read_baseline(where), str(where), None)
            except ConfigError as exc:
                self._read = (None, str(where), exc)
        baseline, path, error = self._read
        if error is not None:
            raise error
        return baseline, path

    def compared(self, suite: Any, result: Any, retriever: str) -> Compared:
        """This run's rankings of ``retriever`` lined up with the baseline's; ``ConfigError``
        when the baseline has none of them to compare with."""
        if retriever not in self._compared:
            if self.against is not None:
                stored = self.stored_run(suite)
                self._compared[retriever] = compare_with_run(stored, self.against, result, retriever)
            else:
                baseline, path = self.baseline(suite)
                stored_tops, depth = _stored(baseline, path, result, retriever)
                self._compared[retriever] = line_up(
                    stored_tops, depth, baseline.fingerprint, result, retriever
                )
        return self._compared[retriever]


def _stored(baseline: Any, path: str, result: Any, retriever: str) -> Tuple[Dict[str, List[str]], int]:
    """The baseline's rankings of ``retriever`` (judged and canary queries) and their depth."""
    entry = baseline.retrievers.get(retriever)
    name = Path(path).name
    if entry is None:
        raise ConfigError(
            f"{name} has no rankings of retriever {retriever!r} (added since?); {REWRITE_HINT}", file=path
        )
    top, canary = entry.get("top"), entry.get("canary")
    if not top and not canary:
        raise ConfigError(
            f"{name} stores no rankings of {retriever!r} (written by an older pytest-retrieval); {REWRITE_HINT}",
            file=path,
        )
    if result.canary and canary is None:
        raise ConfigError(
            f"{name} has no rankings of the canary queries (written before judgments.canary was set); {REWRITE_HINT}",
            file=path,
        )
    depth = baseline.top_depth(retriever)
    if depth is None:
        raise ConfigError(
            f"{name}: the rankings of {retriever!r} have no recorded depth (written before the stability "
            f"measures); {REWRITE_HINT}",
            file=path,
        )
    return {**(top or {}), **(canary or {})}, int(depth)
