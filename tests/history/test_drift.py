"""``pytest-retrieval history drift`` (issue #37) on a SQLite history of simulated nightly runs:
silent on an unchanged system, a flagged shift with the fingerprint changes around it named as
candidate causes, a pipeline change ending the stretch tested, and ``--fail`` as a gate."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import pytest

from pytest_retrieval.cli.app import main
from pytest_retrieval.gates.drift import detect_drift, pipeline_stretch
from pytest_retrieval.history import open_store

SEED = 4  # a series of the unchanged system that is not one of the 5% false alarms
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _fingerprint(docs: int = 5183, engine: str = "9.5.0", retrievers: str = "h1") -> Dict[str, Any]:
    return {
        "corpus": {"count": docs, "sha256": f"c{docs}"},
        "engine": {"name": "elasticsearch", "version": engine},
        "retrievers": {"bm25": retrievers},
        "metric_profile": {"profile": "exp"},
        "queries": {"count": 300, "sha256": "q"},
        "qrels": {"count": 339, "queries": 300, "sha256": "r"},
    }


def _id(i: int) -> str:
    return f"{i:02d}" + "ab" * 15


def _record(i: int, value: float, fp: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "version": 2,
        "run": {
            "id": _id(i),
            "time": (T0 + timedelta(days=i)).isoformat().replace("+00:00", "Z"),
            "branch": "main",
            "partial": False,
        },
        "suites": [
            {
                "suite": "scifact",
                "fingerprint": fp,
                "retrievers": [{"name": "bm25", "metrics": {"ndcg@10": value}, "per_query": {}}],
                "gated": [{"retriever": "bm25", "metric": "ndcg@10", "kind": "quality"}],
            }
        ],
    }


def _history(tmp_path: Path, values: List[float], fps: Optional[List[Dict[str, Any]]] = None) -> str:
    path = str(tmp_path / "history.sqlite")
    store = open_store(path)
    try:
        for i, v in enumerate(values):
            store.append(_record(i, v, (fps or [_fingerprint()] * len(values))[i]))
    finally:
        store.close()
    return path


def test_an_unchanged_system_is_not_flagged(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rng = np.random.default_rng(SEED)
    path = _history(tmp_path, list(0.65 + 0.004 * rng.standard_normal(30)))
    assert main(["history", "drift", "--store", path, "--fail"]) == 0
    out = capsys.readouterr().out
    assert "drift over 1 series" in out and "0 flagged" in out
    assert "scifact :: bm25 :: ndcg@10: 30 runs with an unchanged pipeline: no sustained shift" in out


def test_a_shift_is_flagged_with_the_fingerprint_changes_around_it(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    rng = np.random.default_rng(12)
    values = list(0.65 + 0.004 * rng.standard_normal(30))
    values[18:] = [v - 0.02 for v in values[18:]]
    fps = [_fingerprint() if i < 18 else _fingerprint(docs=4990) for i in range(30)]
    fps[25] = _fingerprint(docs=4990, engine="9.5.1")  # later and far from the shift: not a cause
    fps[26:] = [_fingerprint(docs=4990, engine="9.5.1")] * 4
    path = _history(tmp_path, values, fps)
    assert main(["history", "drift", "--store", path]) == 0  # no --fail: information
    assert main(["history", "drift", "--store", path, "--fail"]) == 1
    out = capsys.readouterr().out
    assert "1 flagged" in out and "DRIFT" in out and f"from run {_id(18)[:12]} on" in out
    assert f"run {_id(18)[:12]}: corpus" in out and "5,183 -> 4,990" in out
    assert "9.5.1" not in out  # the engine changed 7 runs later: not named
    assert main(["history", "drift", "--store", path, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (series,) = doc["series"]
    assert series["shift_run"] == _id(18) and series["test"]["flagged"]
    assert series["test"]["shift"] == pytest.approx(np.mean(values[18:]) - np.mean(values[:18]))


def test_a_pipeline_change_ends_the_stretch_tested() -> None:
    fps = {f"r{i}": _fingerprint(retrievers="h1" if i < 10 else "h2") for i in range(25)}
    fps["r12"] = _fingerprint(docs=1, retrievers="h2")  # data changes do not end it
    ids = [f"r{i}" for i in range(25)]
    assert pipeline_stretch(ids, fps) == 10
    series = [(r, 0.5 if i < 10 else 0.4) for i, r in enumerate(ids)]
    finding = detect_drift("s", "bm25", "ndcg@10", series, fps)
    assert finding.runs == ids[10:] and finding.left_before == 10
    assert not finding.flagged  # the drop came with a pipeline change: the baseline gate's business


def test_no_runs_and_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = _history(tmp_path, [0.5] * 3)
    assert main(["history", "drift", "--store", path, "--suite", "nope"]) == 2
    assert "no stored runs of suite 'nope' with no gated metric" in capsys.readouterr().err
    assert main(["history", "drift", "--store", path]) == 0
    assert "too few to test (a sustained shift needs 6 at least)" in capsys.readouterr().out
    for bad in (
        ["--alpha", "1"],
        ["--alpha", "nan"],
        ["--min-segment", "0"],
        ["--permutations", "5"],
        ["--last", "1"],
    ):
        with pytest.raises(SystemExit) as exc:
            main(["history", "drift", "--store", path, *bad])
        assert exc.value.code == 2
    assert main(["history", "drift", "--store", str(tmp_path / "missing.sqlite")]) == 2
    assert "no such store" in capsys.readouterr().err
