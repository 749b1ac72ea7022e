"""Reading the pinned reference run of ``regression.reference`` from the session's history store
(``--retrieval-history`` / ini ``retrieval_history``: history/store.py), for the reference gates
(gates/reference.py judges it; this is the I/O edge)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Tuple

import pytest

from ..errors import ConfigError, HistoryError

__all__ = ["read_reference"]


def read_reference(config: pytest.Config, suite: Any, result: Any) -> Tuple[Any, str, str]:
    """(the reference's values as a ``Baseline``, the comparison's note, the run id). Every
    problem is a ``ConfigError`` / ``HistoryError`` line: no history configured, no such run,
    a partial run or one of another suite, inputs changed (never a skip that passes).

    The run that pins the reference (tagged with its name, ``--retrieval-history-tag v1``, while
    no stored run has it yet) is compared with itself: its reference gates pass on a difference
    of exactly 0 and say so, so it is stored complete, not partial, and can be the reference."""
    from ..gates.reference import comparable_reference, reference_from_record
    from ..history import is_engine_url, open_store

    ref_cfg = suite.model.regression.reference
    location = config.getoption("retrieval_history", default=None)
    if not location:
        raise ConfigError(
            f"regression.reference run {ref_cfg.run!r}: no run history to read it from; give one with "
            f"--retrieval-history PATH (or ini retrieval_history)",
            file=str(suite.path),
        )
    location = str(location)
    pinning = ref_cfg.run in (config.getoption("retrieval_history_tag", None) or [])
    if not is_engine_url(location) and not Path(location).expanduser().exists():
        if pinning:
            return _itself(suite, result)
        raise ConfigError(
            f"regression.reference run {ref_cfg.run!r}: no run history at {location} (nothing stored yet?)",
            file=str(suite.path),
        )
    store = open_store(location)
    try:
        try:
            run_id = store.resolve(ref_cfg.run)
        except HistoryError:
            if not pinning:
                raise
            store.runs(limit=1)  # the store answers: the run is missing, not the store
            return _itself(suite, result)
        record = store.load(run_id)
    finally:
        store.close()
    values = reference_from_record(record, suite.name, ref=ref_cfg.run, allow_partial=ref_cfg.allow_partial)
    checked, note = comparable_reference(values, result, ref=ref_cfg.run, run_id=run_id)
    return checked, note, run_id


#: the run id shown for a run compared with itself (it is being pinned as the reference)
THIS_RUN = "(this run)"


def _itself(suite: Any, result: Any) -> Tuple[Any, str, str]:
    from ..gates.baseline import baseline_from_result

    ref = suite.reference_run
    note = (
        f"this run is pinned as the reference {ref!r} (--retrieval-history-tag {ref}; no stored run has "
        f"it yet): compared with itself"
    )
    return baseline_from_result(result), note, THIS_RUN
