"""``pytest-retrieval evaluate``'s trec_eval options: -c / --average-over, --depth (-M),
--relevance-threshold 0 (-l0), --gains, run lines with extra columns, ``#`` comment lines in
qrels, --version, and a closed pipe (``| head``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pytest_retrieval import __version__
from pytest_retrieval.cli import main


def _files(tmp: Path):
    q = tmp / "q.txt"
    q.write_text("# a comment line, as trec_eval 10.0 reads one\n1 0 a 1\n2 0 b 0\n3 0 c 1\n")
    r = tmp / "r.txt"
    # extra columns after the tag (trec_eval's test/results.trunc has them)
    r.write_text("1 Q0 a 1 1 t more junk\n2 Q0 b 1 1 t\n1 Q0 x 2 0.5 t\n")
    return str(q), str(r)


def _out(capsys):
    out, err = capsys.readouterr()
    return dict(line.split("\t")[0::2] for line in out.splitlines()), err


def test_average_over_and_complete_as_trec_eval(tmp_path, capsys):
    q, r = _files(tmp_path)
    assert main(["evaluate", q, r, "-m", "map"]) == 0  # trec_eval: num_q 2, map 0.5
    out, err = _out(capsys)
    assert out == {"map": "0.5000", "num_q": "2"}
    assert "1 absent from the run left out (average_over: run" in err
    assert main(["evaluate", q, r, "-m", "map", "-c"]) == 0  # trec_eval -c: num_q 3
    assert _out(capsys)[0] == {"map": "0.3333", "num_q": "3"}
    assert main(["evaluate", q, r, "-m", "map", "--average-over", "relevant"]) == 0
    assert _out(capsys)[0] == {"map": "0.5000", "num_q": "2"}
    assert main(["evaluate", q, r, "-m", "map", "-c", "--average-over", "run"]) == 2
    assert "contradicts" in capsys.readouterr().err


def test_depth_threshold_0_and_gains(tmp_path, capsys):
    q, r = _files(tmp_path)
    (tmp_path / "r2.txt").write_text("1 Q0 x 1 2 t\n1 Q0 a 2 1 t\n2 Q0 b 1 1 t\n")
    r2 = str(tmp_path / "r2.txt")
    assert main(["evaluate", q, r2, "-m", "mrr", "--depth", "1"]) == 0
    assert _out(capsys)[0]["mrr"] == "0.0000"  # a at rank 2 is cut
    assert main(["evaluate", q, r2, "-m", "mrr"]) == 0
    assert _out(capsys)[0]["mrr"] == "0.2500"
    assert main(["evaluate", q, r2, "-m", "mrr", "--relevance-threshold", "0"]) == 0
    assert _out(capsys)[0]["mrr"] == "0.7500"  # b (grade 0) relevant at -l0
    assert main(["evaluate", q, r2, "-m", "ndcg", "--gains", "0:1,1:1", "--profile", "trec"]) == 0
    assert float(_out(capsys)[0]["ndcg"]) > 0.5


def test_version_and_closed_pipe(tmp_path):
    run = [sys.executable, "-m", "pytest_retrieval.cli"]
    env = {"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(run + ["--version"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"pytest-retrieval {__version__}"
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("".join(f"{i} 0 d{i}_0 1\n" for i in range(3000)))
    r.write_text("".join(f"{i} Q0 d{i}_{j} {j + 1} {10 - j} t\n" for i in range(3000) for j in range(5)))
    cmd = " ".join(run + ["evaluate", str(q), str(r), "--per-query", "-m", "map"]) + " | head -1"
    done = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, timeout=120)
    assert done.stdout.count("\n") == 1 and "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_a_comparison_measure_is_refused_in_one_line(tmp_path, capsys):
    # rbo@10 compares two rankings of each query (measures/stability.py), not a run against qrels
    q, r = _files(tmp_path)
    assert main(["evaluate", q, r, "-m", "rbo@10"]) == 2
    err = capsys.readouterr().err
    assert "rbo(0.9)@10" in err and "compares two rankings" in err and len(err.strip().splitlines()) == 1
