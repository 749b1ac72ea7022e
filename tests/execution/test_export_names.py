"""safe_names.py and ``--retrieval-runs``: file names from suite and retriever names are safe and
unique, and ``evaluate.sh`` runs nothing but ``pytest-retrieval evaluate`` whatever the names."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.execution.export import run_folder_names, write_suite_runs
from pytest_retrieval.safe_names import file_name, shell_comment, shell_line, unique_file_names
from tests.hostile.conftest import BASE, FLOORS
from tests.tiny import run_tiny

HOSTILE_SUITE = 'a;b\\ntouch PWNED; rm -rf \\"$HOME\\" `id` $(id)'


@pytest.mark.parametrize(
    "text, stem",
    [
        ("bm25", "bm25"),
        ("rrf-1.v2_x", "rrf-1.v2_x"),
        ("a b", "a_b-"),
        ("..", "unnamed-"),
        (".", "unnamed-"),
        (".hidden", "hidden-"),
        ("-rf", "rf-"),
        ("../../etc/passwd", "etc_passwd-"),
        ("a/b", "a_b-"),
        ("", "unnamed-"),
        ("con", "con-"),
        ("NUL.txt", "NUL.txt-"),
        ("x\ny", "x_y-"),
        ("caf\u00e9", "caf_-"),
        ("name.", "name-"),
    ],
)
def test_file_name_is_one_safe_component(text: str, stem: str) -> None:
    name = file_name(text)
    assert name == stem if not stem.endswith("-") else name.startswith(stem) and len(name) == len(stem) + 8
    assert "/" not in name and name not in (".", "..") and not name.startswith((".", "-"))


def test_file_name_is_bounded_and_names_never_collide() -> None:
    assert len(file_name("x" * 10_000)) <= 80 + 9
    assert file_name("a b") != file_name("a_b") != file_name("a\tb") != file_name("a b")
    names = unique_file_names({k: k for k in ["a_b", "a b", "a\tb", "BM25", "bm25", "Bm25"]})
    assert len({n.lower() for n in names.values()}) == 6 and names["a_b"] == "a_b"


def test_two_suite_files_of_one_name_get_two_folders() -> None:
    class R:
        def __init__(self, path: str) -> None:
            self.suite = type("S", (), {"name": "search", "path": Path(path)})()

    a, b = run_folder_names([R("x/retrieval_a.yaml"), R("y/retrieval_a.yaml")])
    assert a == "search" and b.startswith("search-") and a != b


def test_shell_line_quotes_every_argument_and_comment_stays_one_line() -> None:
    assert shell_line(["echo", "a b", "x;y", "$(id)"]) == "echo 'a b' 'x;y' '$(id)'"
    assert shell_comment("a\nrm -rf /\r") == "# a\\nrm -rf /\\r"
    with pytest.raises(ValueError, match="NUL"):
        shell_line(["a\x00b"])


@pytest.fixture(scope="module")
def hostile_result(tmp_path_factory):
    text = (
        BASE.replace("suite: t", f'suite: "{HOSTILE_SUITE}"')
        .replace("  text:\n    type: bm25", '  "a b":\n    type: bm25')
        .replace("of: [bm25, text]", 'of: [bm25, "a b"]')
        + '  "a_b":\n    type: bm25\n  "..":\n    type: bm25\n  "-rf":\n    type: bm25\n'
        + '  "BM25":\n    type: bm25\n  "$(touch PWNED)":\n    type: bm25\n'
        + FLOORS
    )
    return run_tiny(tmp_path_factory.mktemp("hostile_names"), text)


def test_hostile_names_write_safe_files_and_a_script_that_runs_nothing_else(hostile_result, tmp_path) -> None:
    out = write_suite_runs(hostile_result, tmp_path / "runs")
    assert out.parent == tmp_path / "runs" and out.name.startswith("a_b_touch_PWNED")
    runs = sorted(p.name for p in out.iterdir() if p.suffix == ".run")
    assert len(runs) == len(hostile_result.retrievers) == 8
    assert "bm25.run" in runs and "a_b.run" in runs and not any(r.startswith((".", "-")) for r in runs)
    # a stub pytest-retrieval records its arguments; the script must run it and nothing else
    stub = tmp_path / "bin" / "pytest-retrieval"
    stub.parent.mkdir()
    stub.write_text('#!/bin/sh\nprintf "%s|" "$@" >> "$LOG"\necho >> "$LOG"\n')
    stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "calls.log"
    env = {
        **os.environ,
        "PATH": f"{stub.parent}:{os.environ['PATH']}",
        "LOG": str(log),
        "HOME": str(tmp_path),
    }
    done = subprocess.run(
        ["sh", str(out / "evaluate.sh")], cwd=tmp_path, env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    calls = log.read_text().splitlines()
    assert len(calls) == 8 and all(c.startswith("evaluate|qrels.txt|") for c in calls)
    assert {c.split("|")[2] for c in calls} == set(runs)
    assert not list(tmp_path.rglob("PWNED")) and not list(out.rglob("PWNED"))


def test_a_query_id_a_trec_file_cannot_hold_writes_nothing(tmp_path) -> None:
    result = run_tiny(tmp_path, BASE.replace("{id: q2,", "{id: 'q 2',") + FLOORS)
    with pytest.raises(ConfigError, match="query id 'q 2' contains whitespace"):
        write_suite_runs(result, tmp_path / "runs")
    assert not (tmp_path / "runs").exists()  # every file is checked before the first is written


def test_suite_runs_on_a_suite_with_latency_floors(tmp_path: Path) -> None:
    """The shipped example gates p95_ms: suite_runs leaves the timing pass out without
    calling the file's latency floors invalid (issue #26: it raised a ConfigError)."""
    from pytest_retrieval.execution.export import suite_runs

    root = Path(__file__).resolve().parents[2]
    qrels, runs = suite_runs(root / "example_suite" / "retrieval_scifact_mini.yaml")
    assert set(runs) == {"bm25", "dense", "rrf", "weighted"}
    assert len(qrels.to_dict()) == 100 and all(len(r.to_dict()) == 100 for r in runs.values())
