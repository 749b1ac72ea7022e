"""The fast variant of benchmarks/history_slide.py (issue #37): a shorter slide of accepted small
drops on the example suite's 100 queries (the regression zoo's mini BEIR folder), judged by the
plugin's own gates with the reference read back from a SQLite history: every per-change gate
passes, the reference gate fails by the step the cumulative loss passes max_total_drop, and
never on the harmless sequence."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import history_slide  # noqa: E402
import zoo_data  # noqa: E402

DATA = ROOT / "example_suite" / "data"


def _shared(tmp_path: Path) -> Path:
    """A BEIR folder ``mini`` from the example suite's data (as tests/test_regression_zoo.py)."""
    folder = tmp_path / "shared" / "mini"
    (folder / "qrels").mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.jsonl"):
        (folder / name).symlink_to(DATA / name)
    (folder / "qrels" / "test.tsv").symlink_to(DATA / "qrels.tsv")
    emb = folder / zoo_data.EMBEDDINGS
    emb.parent.mkdir(parents=True)
    emb.symlink_to(DATA / "vectors")
    return tmp_path / "shared"


def test_a_short_slide_fails_the_reference_gate_and_harmless_changes_never(tmp_path: Path) -> None:
    path = history_slide.suite_folder(tmp_path / "out", "mini", _shared(tmp_path))
    result = history_slide.run_suite(path)
    history = tmp_path / "history.sqlite"
    history_slide.store_reference(result, history)
    reference, run_id = history_slide.read_reference(result, history)
    steps = 8
    harmful = history_slide.judge(
        result, history_slide.slide(result, steps, True), reference, run_id, "harmful"
    )
    harmless = history_slide.judge(
        result, history_slide.slide(result, steps, False), reference, run_id, "harmless"
    )
    history_slide.print_rows(harmful)
    s = history_slide.summary(harmful, harmless)
    print(s)
    assert s["per_change_gates_passed"] and s["step_drops_in_range"]
    assert s["reference_failed_at"] is not None and s["budget_passed_at"] is not None
    assert s["reference_failed_at"] <= s["budget_passed_at"]
    assert s["harmless_reference_failures"] == 0
    assert all(abs(r.total_drop) <= 0.002 + 1e-12 for r in harmless)
