"""A suite's stability comparison for the session (issue #33): the baseline's stored rankings
read once, and each retriever's rankings of this run (canary and judged queries) lined up with
them (``gates.stability.compare_rankings``). The edge: the baseline file is read here, the
gates and the report's section are pure."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ..errors import ConfigError
from ..gates.stability import REWRITE_HINT, Compared, compare_rankings

__all__ = ["StabilityInputs"]


class StabilityInputs:
    """The baseline a suite's stability gates read (once), and each retriever's comparison."""

    def __init__(self) -> None:
        self._read: Optional[Tuple[Any, str, Optional[Exception]]] = None  # (baseline, path, error)
        self._compared: Dict[str, Compared] = {}

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
            baseline, path = self.baseline(suite)
            self._compared[retriever] = _compare(baseline, path, result, retriever)
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


def _compare(baseline: Any, path: str, result: Any, retriever: str) -> Compared:
    from ..gates.fingerprint import CANARY_HASHES, compare_fingerprints, fingerprint_from_result, text_hashes

    stored, depth = _stored(baseline, path, result, retriever)
    rr = result.retrievers[retriever]
    current = {q: list(rr.run[q].doc_ids[:depth]) if q in rr.run else [] for q in rr.evaluation.evaluated}
    canary_run = result.canary_runs.get(retriever, {})
    current.update({q: list(canary_run[q].doc_ids[:depth]) if q in canary_run else [] for q in result.canary})
    now_fp = fingerprint_from_result(result)
    old_fp = baseline.fingerprint
    old_texts = _texts(old_fp.get("query_hashes") or {})
    old_texts.update(old_fp.get(CANARY_HASHES) or {})
    new_texts = _texts(now_fp.get("query_hashes") or {})
    new_texts.update(text_hashes(result.canary))
    diff = compare_fingerprints(old_fp, now_fp)
    return compare_rankings(
        stored,
        current,
        canary=set(result.canary),
        old_texts=old_texts,
        new_texts=new_texts,
        depth=depth,
        system=diff.system + diff.invalidating,  # what changed is named; rankings are compared anyway
    )


def _texts(query_hashes: Dict[str, str]) -> Dict[str, str]:
    """``{qid: text hash}`` of a fingerprint's ``query_hashes`` (``text:judgments``)."""
    return {q: str(h).split(":")[0] for q, h in query_hashes.items()}
