"""Hostile values at the run history's surfaces (issue #37): the pytest options
``--retrieval-history``, ``--retrieval-history-tag``, ``--retrieval-history-strict``, their ini keys,
the history file itself (a folder, a FIFO, a device, a corrupt file, a store of a newer schema, a
SQLite file of something else) and ``pytest-retrieval history prune``. Each is one clear line,
bounded in time, never a traceback; a history not written leaves the exit status to the gates."""

from __future__ import annotations

import os
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from pytest_retrieval import cli

from ..ci import needs_fifos
from .conftest import BASE, FLOORS, bounded, one_line

pytestmark = needs_fifos

R = "\u202e"
LONG = "x" * 101

# (arguments, exit codes, fragments of the line; the first fragment picks the line)
OPTION_CASES = [
    (["--retrieval-history=adir"], (4,), ["--retrieval-history adir", "is a directory"]),
    (["--retrieval-history=fifo"], (4,), ["--retrieval-history fifo", "not a regular file"]),
    (["--retrieval-history=/dev/null"], (4,), ["--retrieval-history /dev/null", "not a regular file"]),
    (
        ["--retrieval-history=corrupt.sqlite"],
        (0,),
        ["--retrieval-history corrupt.sqlite", "not a readable", "not written"],
    ),
    (
        ["--retrieval-history=newer.sqlite"],
        (0,),
        ["--retrieval-history newer.sqlite", "newer pytest-retrieval"],
    ),
    (
        ["--retrieval-history=other.sqlite"],
        (0,),
        ["--retrieval-history other.sqlite", "not a pytest-retrieval history"],
    ),
    (
        ["--retrieval-history=corrupt.sqlite", "--retrieval-history-strict"],
        (1,),
        ["ERROR: --retrieval-history corrupt.sqlite", "not written"],
    ),
    (
        ["--retrieval-history=elasticsearch+https://h:9200/Logs"],
        (4,),
        ["--retrieval-history", "expected one index name"],
    ),
    (
        ["--retrieval-history=elasticsearch+https://h:9200/i?x=1"],
        (4,),
        ["--retrieval-history", "unknown URL key 'x'"],
    ),
    (
        ["--retrieval-history=opensearch+https://u:${NO_SUCH_VAR_37}@h/i"],
        (4,),
        ["--retrieval-history", "${NO_SUCH_VAR_37} is not set"],
    ),
    (["--retrieval-history=mysql://h/db"], (4,), ["--retrieval-history", "unknown store 'mysql'"]),
    (["--retrieval-history-tag="], (4,), ["--retrieval-history-tag", "empty tag"]),
    ([f"--retrieval-history-tag=a{R}b"], (4,), ["--retrieval-history-tag", "control or format characters"]),
    ([f"--retrieval-history-tag={LONG}"], (4,), ["--retrieval-history-tag", "at most 100 characters"]),
    (["--retrieval-history-strict=1"], (4,), ["--retrieval-history-strict"]),
    (["--retrieval-stability-against=v1"], (4,), ["--retrieval-stability-against v1", "no run history"]),
    (
        ["--retrieval-history=h.sqlite", "--retrieval-stability-against="],
        (4,),
        ["--retrieval-stability-against", "empty name"],
    ),
    (
        ["--retrieval-history=h.sqlite", f"--retrieval-stability-against=a{R}b"],
        (4,),
        ["--retrieval-stability-against", "control or format characters"],
    ),
    (
        ["--retrieval-history=h.sqlite", f"--retrieval-stability-against={LONG}"],
        (4,),
        ["--retrieval-stability-against", "at most 100 characters"],
    ),
]

INI_CASES = [
    ('retrieval_history = "adir"', (4,), ["retrieval_history in pyproject.toml", "is a directory"]),
    ('retrieval_history = "a\\u0007b.sqlite"', (4,), ["retrieval_history", "control or format characters"]),
    (
        'retrieval_history = "elasticsearch+https://h/i?password=x"',
        (4,),
        ["retrieval_history in pyproject.toml", "unknown URL key 'password'"],
    ),
    (
        'retrieval_history = "newer.sqlite"',
        (0,),
        ["retrieval_history in pyproject.toml", "newer pytest-retrieval"],
    ),
    ('retrieval_history_tag = [" "]', (4,), ["retrieval_history_tag in pyproject.toml", "empty tag"]),
    (
        'retrieval_history_tag = ["\\u202e"]',
        (4,),
        ["retrieval_history_tag in pyproject.toml", "format characters"],
    ),
    ('retrieval_history_strict = "maybe"', (4,), ["retrieval_history_strict", "expected true or false"]),
    (
        'retrieval_stability_against = "v1"',
        (4,),
        ["retrieval_stability_against in pyproject.toml v1", "no run history"],
    ),
    (
        'retrieval_history = "h.sqlite"\nretrieval_stability_against = " "',
        (4,),
        ["retrieval_stability_against in pyproject.toml", "empty name"],
    ),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("history")
    (d / "retrieval_s.yaml").write_text(BASE + FLOORS)
    (d / "adir").mkdir()
    os.mkfifo(d / "fifo")
    (d / "corrupt.sqlite").write_bytes(b"\x00garbage" * 512)
    conn = sqlite3.connect(str(d / "other.sqlite"))
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    conn = sqlite3.connect(str(d / "newer.sqlite"))
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (999)")
    conn.commit()
    conn.close()
    return d


def _run(project: Path, args: List[str]) -> Tuple[int, str]:
    run = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    env = {**os.environ, "GITHUB_STEP_SUMMARY": ""}
    env.pop("NO_SUCH_VAR_37", None)
    done = subprocess.run(run, cwd=project, capture_output=True, text=True, timeout=120, env=env)
    return done.returncode, done.stderr + done.stdout


def _check(said: str, fragments: List[str]) -> None:
    assert "Traceback" not in said, said
    lines = [x for x in said.splitlines() if fragments[0] in x]
    assert lines, said
    one_line(lines[0][lines[0].index(fragments[0]) :], *fragments)


@pytest.mark.parametrize("args,codes,fragments", OPTION_CASES, ids=[" ".join(c[0]) for c in OPTION_CASES])
def test_hostile_history_option(
    project: Path, args: List[str], codes: Tuple[int, ...], fragments: List[str]
) -> None:
    code, said = _run(project, args)
    assert code in codes, (code, said)
    _check(said, fragments)


@pytest.mark.parametrize("line,codes,fragments", INI_CASES, ids=[c[0] for c in INI_CASES])
def test_hostile_history_ini_value(
    project: Path, line: str, codes: Tuple[int, ...], fragments: List[str]
) -> None:
    (project / "pyproject.toml").write_text(f"[tool.pytest.ini_options]\n{line}\n")
    try:
        code, said = _run(project, [])
    finally:
        (project / "pyproject.toml").unlink()
    assert code in codes, (code, said)
    _check(said, fragments)


CLI_CASES = [
    ("history prune --store", "history prune --store adir --keep-last 1", ["adir", "is a folder"]),
    (
        "history prune --store fifo",
        "history prune --store fifo --keep-last 1",
        ["fifo", "not a regular file"],
    ),
    (
        "history prune --store corrupt",
        "history prune --store corrupt.sqlite --keep-last 1",
        ["not a readable SQLite"],
    ),
    (
        "history prune --store newer",
        "history prune --store newer.sqlite --keep-last 1",
        ["newer pytest-retrieval"],
    ),
    ("history prune --store missing", "history prune --store nope.sqlite --keep-last 1", ["no such store"]),
    (
        "history prune --store url",
        "history prune --store 'elasticsearch+https://h/A' --keep-last 1",
        ["index name"],
    ),
    ("history prune --keep-last", "history prune --store newer.sqlite --keep-last -1", ["--keep-last"]),
    ("history prune --keep-last nan", "history prune --store newer.sqlite --keep-last nan", ["--keep-last"]),
    (
        "history prune --before",
        f"history prune --store newer.sqlite --before {R}",
        ["--before", "not a date"],
    ),
    ("history prune nothing", "history prune --store newer.sqlite", ["--keep-last N, --before DATE"]),
    ("history prune no store", "history prune --keep-last 1", ["no store"]),
]


@pytest.mark.parametrize("surface,argv,fragments", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_a_hostile_history_command_is_one_line(
    project: Path, monkeypatch, capsys, surface: str, argv: str, fragments: List[str]
) -> None:
    monkeypatch.chdir(project)
    with bounded(30):
        try:
            rc = cli.main(shlex.split(argv))
        except SystemExit as exc:  # argparse
            rc = exc.code
    out, err = capsys.readouterr()
    assert rc == 2, (rc, out, err)
    assert "Traceback" not in err + out
    one_line(err.strip().splitlines()[-1], *fragments)
