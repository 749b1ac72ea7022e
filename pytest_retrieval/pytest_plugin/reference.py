"""Reading the pinned reference run of ``regression.reference`` from the session's history store
(``--retrieval-history`` / ini ``retrieval_history``: history/store.py), for the reference gates
(gates/reference.py judges it; this is the I/O edge)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Tuple

import pytest

from ..errors import ConfigError

__all__ = ["read_reference"]


def read_reference(config: pytest.Config, suite: Any, result: Any) -> Tuple[Any, str, str]:
    """(the reference's values as a ``Baseline``, the comparison's note, the run id). Every
    problem is a ``ConfigError`` / ``HistoryError`` line: no history configured, no such run,
    a partial run or one of another suite, inputs changed (never a skip that passes)."""
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
    if not is_engine_url(location) and not Path(location).expanduser().exists():
        raise ConfigError(
            f"regression.reference run {ref_cfg.run!r}: no run history at {location} (nothing stored yet?)",
            file=str(suite.path),
        )
    store = open_store(location)
    try:
        run_id = store.resolve(ref_cfg.run)
        record = store.load(run_id)
    finally:
        store.close()
    values = reference_from_record(record, suite.name, ref=ref_cfg.run, allow_partial=ref_cfg.allow_partial)
    checked, note = comparable_reference(values, result, ref=ref_cfg.run, run_id=run_id)
    return checked, note, run_id
