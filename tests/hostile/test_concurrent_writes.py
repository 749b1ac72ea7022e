"""Two processes writing the same report or baseline (issue #11, "concurrent runs writing the
same report or baseline"): every file the product writes goes through
``fileio.atomic_write`` (a temporary file beside it, then ``os.replace``), so a reader
sees one complete file, the old or the new one, and the last writer wins whole. Never a
torn file, never a temporary file left behind."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from pytest_retrieval.gates.baseline import read_baseline, write_baseline

from ..tiny import TINY_SUITE, run_tiny
from .conftest import bounded

WRITER = textwrap.dedent(
    """
    import dataclasses, json, sys
    from pytest_retrieval.fileio import atomic_write
    from pytest_retrieval.gates.baseline import read_baseline, write_baseline

    src, dst, report, writer, rounds = sys.argv[1:6]
    base = read_baseline(src)
    for k in range(int(rounds)):
        write_baseline(dst, dataclasses.replace(base, created=f"{writer}-{k}"))
        text = json.dumps({"writer": writer, "round": k, "pad": [writer * 40] * 20000})
        atomic_write(report, lambda fh: fh.write(text + "\\n"), fsync=False)
    """
)


def _big_baseline(tmp_path: Path) -> Path:
    """The tiny suite's baseline with a large ranking table, so a torn write would show (its
    per-query columns stay what its fingerprint claims: a baseline is checked before it is read)."""
    from pytest_retrieval.gates.baseline import baseline_from_result

    base = baseline_from_result(run_tiny(tmp_path))
    name = next(iter(base.retrievers))
    entry = dict(base.retrievers[name])
    entry["top"] = {**entry.get("top", {}), **{f"q{i}": [f"d{i}", f"e{i}"] for i in range(20_000)}}
    path = tmp_path / "src.baseline.json"
    write_baseline(path, dataclasses.replace(base, retrievers={**base.retrievers, name: entry}))
    return path


def test_two_writers_never_leave_a_torn_report_or_baseline(tmp_path: Path) -> None:
    src = _big_baseline(tmp_path)
    dst, report = tmp_path / "shared.baseline.json", tmp_path / "report.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(src), str(dst), str(report), w, "12"], env=env)
        for w in ("A", "B")
    ]
    reads = 0
    with bounded(240):
        while any(p.poll() is None for p in writers):
            if dst.exists():
                assert read_baseline(dst).created.split("-")[0] in ("A", "B")  # parses whole
                reads += 1
            if report.exists():
                data = json.loads(report.read_text(encoding="utf-8"))
                assert len(data["pad"]) == 20000 and data["pad"][-1] == data["writer"] * 40
            time.sleep(0.001)
    assert [p.returncode for p in writers] == [0, 0]
    assert reads > 0
    final = read_baseline(dst)
    assert final.created in ("A-11", "B-11")
    assert final.retrievers == read_baseline(src).retrievers
    assert json.loads(report.read_text())["round"] == 11
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporaries


def test_two_pytest_runs_writing_the_same_report_and_baseline(tmp_path: Path) -> None:
    """Two whole runs at once with the same --retrieval-report and baseline: both finish, and
    each file is one complete document."""
    (tmp_path / "retrieval_tiny.yaml").write_text(TINY_SUITE)
    report = tmp_path / "report.json"
    args = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--retrieval-report={report}",
        "--retrieval-baseline-update",
        "--retrieval-no-latency",
        "retrieval_tiny.yaml",
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with bounded(300):
        runs = [
            subprocess.Popen(
                args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
            for _ in range(2)
        ]
        outs = [p.communicate(timeout=280)[0] for p in runs]
    assert [p.returncode for p in runs] == [0, 0], outs
    data = json.loads(report.read_text(encoding="utf-8"))
    assert [s["suite"] for s in data["suites"]] == ["tiny"]
    baselines = list(tmp_path.glob("*.baseline.json"))
    assert len(baselines) == 1 and read_baseline(baselines[0]).suite == "tiny"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith((".tmp", ".probe"))]
