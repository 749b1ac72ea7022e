"""How a generated hostile value reaches each family of surfaces, the cheap way (issue #32,
section 6): ``load_suite`` on a suite file for a YAML key, ``cli.main`` in-process for a command
option, pytest's own option parsing (``pytester.parseconfigure``) for a pytest option or an ini
key, and the sink a kind's value lands in (the report renderers, ``evaluate.sh``, the http
backend's URL template). Each returns an ``Outcome``; the properties are in
``test_surface_threats.py``."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import posixpath
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional
from urllib.parse import quote, urlsplit

import pytest
import yaml

from pytest_retrieval import cli
from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError

from .conftest import BASE, FLOORS, bounded
from .test_surfaces_yaml import SCHEMA, _build, _kinds, _leaf, _merge

R = "\u202e"
PLANTED = "PYTEST_RETRIEVAL_PLANTED_TOKEN"


@dataclass
class Outcome:
    """What a surface did with a value: refused (and the line that says so) or accepted;
    ``said`` is every text it printed or raised (for secrets), ``rc`` a command's exit code."""

    refused: bool
    line: str = ""
    said: str = ""
    rc: Optional[int] = None
    lines: List[str] = field(default_factory=list)
    hung: bool = False  # the command ran into the time bound (its own error line may hide that)


def secret_forms(token: str) -> List[str]:
    """The token as it may leak: itself, percent-encoded, JSON-escaped, base64 (alone and as a
    Basic credential), and its first and last 12 characters (a snippet cut mid-token)."""
    forms = {
        token,
        quote(token, safe=""),
        json.dumps(token)[1:-1],
        base64.b64encode(token.encode()).decode(),
        base64.b64encode(f"u:{token}".encode()).decode(),
        token[:12],
        token[-12:],
    }
    return sorted(forms)


# --- yaml ------------------------------------------------------------------------------------


def yaml_doc(path: str, value: Any) -> Dict[str, Any]:
    """BASE with ``value`` at ``path`` (a list where the schema wants a list of strings)."""
    kinds = _kinds(_leaf(SCHEMA, path.split(".")))
    if isinstance(value, str) and "array" in kinds and "string" not in kinds:
        value = [value]
    return _merge(yaml.safe_load(BASE + FLOORS), _build(SCHEMA, path.split("."), value, ""))


def run_yaml(folder: Path, path: str, value: Any) -> Outcome:
    suite = folder / "s.yaml"
    suite.write_text(yaml.safe_dump(yaml_doc(path, value), allow_unicode=True), encoding="utf-8")
    with bounded(20):
        try:
            load_suite(suite)
        except ConfigError as exc:
            return Outcome(True, str(exc), str(exc))
    return Outcome(False)  # what a suite holds is no output; its messages are


# --- cli -------------------------------------------------------------------------------------

LLM = "judge llm pairs.csv --out o.csv --provider callable --function judgefn:f --cache c.jsonl"
SYNTH = (
    "judge synth --corpus corpus.jsonl --out sq.jsonl --qrels-out sr.tsv --provider callable "
    "--function synthfn:write --check-function synthfn:grade --cache sc.jsonl"
)
# each command's smallest valid command line, and the file it reads (for an output that would
# overwrite it)
COMMANDS: Dict[str, str] = {
    "": "",
    "evaluate": "evaluate qrels.trec r1.trec",
    "fuse": "fuse r1.trec r2.trec",
    "sweep": "sweep s.yaml",
    "judge clicks": "judge clicks clicks.csv --qrels-out q.txt",
    "judge llm": LLM,
    "judge sample": "judge sample log.csv --out q.jsonl",
    "judge synth": SYNTH,
    "judge pool": "judge pool s.yaml --out p.csv",
    "judge import": "judge import a.csv --qrels q.txt",
    "judge export": "judge export s.yaml --to rre --out x.json",
    "judge agree": "judge agree a.csv b.csv",
    "report": "report r.json --markdown o.md",
    "compare": "compare r.json r.json",
    # the run history (issue #37): h.sqlite holds four runs (make_cli_files); prune deletes runs,
    # so it has a store of its own
    "history list": "history list --store h.sqlite",
    "history trend": "history trend --store h.sqlite",
    "history compare": "history compare 0000 0001 --store h.sqlite",
    "history drift": "history drift --store h.sqlite",
    "history prune": "history prune --keep-last 100 --store hp.sqlite",
}
INPUTS: Dict[str, str] = {
    "evaluate": "qrels.trec",
    "fuse": "r1.trec",
    "sweep": "s.yaml",
    "judge clicks": "clicks.csv",
    "judge llm": "pairs.csv",
    "judge sample": "log.csv",
    "judge synth": "corpus.jsonl",
    "judge pool": "s.yaml",
    "judge import": "a.csv",
    "judge export": "s.yaml",
    "judge agree": "a.csv",
    "report": "r.json",
    "compare": "r.json",
    "history list": "h.sqlite",
    "history trend": "h.sqlite",
    "history compare": "h.sqlite",
    "history drift": "h.sqlite",
    "history prune": "hp.sqlite",
}
# a positional's place among the command's arguments
POSITIONS = {"<qrels>": 0, "<run>": 1, "<a>": 0, "<b>": 1, "<run_a>": 0, "<run_b>": 1}


def command_of(surface: str) -> str:
    *words, _ = surface.split(" ")
    return " ".join(words)


def cli_argv(surface: str, value: str, flag: bool = False) -> List[str]:
    command = command_of(surface)
    option = surface.split(" ")[-1]
    argv = shlex.split(COMMANDS[command])
    if value == "<input>":
        value = INPUTS[command]
    head = len(command.split()) if command else 0
    if option.startswith("<"):
        argv[head + POSITIONS.get(option, 0)] = value
    elif flag:
        argv.append(f"{option}={value}")
    elif option in argv:
        argv[argv.index(option) + 1] = value
    else:
        argv += [option, value]
    return argv


def make_cli_files(d: Path, report: Path) -> None:
    """The inputs every command line of ``COMMANDS`` names (as ``test_surfaces_cli``'s)."""
    h = "query_id,query,doc_id,title,text,grade\n"
    (d / "qrels.trec").write_text("1 0 d1 1\n1 0 d2 0\n")
    (d / "r1.trec").write_text("1 Q0 d1 1 2.0 a\n1 Q0 d2 2 1.0 a\n")
    (d / "r2.trec").write_text("1 Q0 d2 1 2.0 b\n1 Q0 d1 2 1.0 b\n")
    (d / "s.yaml").write_text(BASE + FLOORS)
    (d / "a.csv").write_text(h + "q1,solar,d1,,t,1\nq2,river,d2,,t,0\n")
    (d / "b.csv").write_text(h + "q1,solar,d1,,t,1\nq2,river,d2,,t,1\n")
    (d / "pairs.csv").write_text(h + "q1,solar,d1,,text,\n")
    (d / "judgefn.py").write_text("def f(query, doc):\n    return 1\n")
    (d / "clicks.csv").write_text(
        "query_id,query,doc_id,position,clicked,dwell\nq1,solar,d1,1,1,40\nq1,solar,d2,2,0,0\n"
    )
    (d / "log.csv").write_text("query,count,locale\nsolar panels,3,en\nwind power,1,de\n")
    (d / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": f"d{i}", "title": "solar", "text": "panels " * 30}) + "\n" for i in range(3)
        )
    )
    (d / "synthfn.py").write_text(
        "def write(prompt, document):\n    return '[\"how do solar panels work?\"]'\n\n"
        "def grade(query, document):\n    return 3\n"
    )
    (d / "r.json").write_bytes(report.read_bytes())
    _make_history(d / "h.sqlite")
    _make_history(d / "hp.sqlite")


def _make_history(path: Path) -> None:
    """A SQLite history of four runs (ids 0000..., 0001..., ...), as the history tests make them."""
    from pytest_retrieval.history import open_store
    from tests.cli.history_data import record

    store = open_store(str(path))
    try:
        for i, v in enumerate([0.5, 0.49, 0.48, 0.47]):
            store.append(record(i, v, tags=(f"t{i}",)))
    finally:
        store.close()


def run_cli(argv: List[str]) -> Outcome:
    import signal

    out, err = io.StringIO(), io.StringIO()
    fired: List[int] = []

    def expire(signum: int, frame: Any) -> None:  # pragma: no cover - only on a hang
        fired.append(signum)
        raise TimeoutError("case took longer than 30s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(30)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = cli.main(argv)
            except SystemExit as exc:  # argparse
                rc = exc.code if isinstance(exc.code, int) else 2
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    said = out.getvalue() + err.getvalue()
    lines = err.getvalue().strip().splitlines()
    return Outcome(rc != 0, lines[-1] if lines else "", said, rc, hung=bool(fired))


# --- pytest options and ini keys ---------------------------------------------------------------


def run_pytest_config(pytester: pytest.Pytester, args: List[str]) -> Outcome:
    """pytest's option parsing and ``pytest_configure`` (the plugin checks its options there)."""
    with bounded(30):
        try:
            config = pytester.parseconfigure(*args)
        except (pytest.UsageError, ConfigError) as exc:
            return Outcome(True, str(exc), str(exc), lines=str(exc).splitlines())
        except SystemExit as exc:  # pragma: no cover - argparse outside pytest's parser
            return Outcome(True, str(exc), str(exc))
    config._ensure_unconfigure()
    return Outcome(False)


def fill_url_outcome(template: str, value: str) -> str:
    from pytest_retrieval.backends.http.template import fill_url

    return fill_url(template, {"query": value, "k": 10, "query_id": "q1"})


def url_stays_put(url: str) -> bool:
    """The filled ``http://h/s/{query}/hits?q={query}`` still asks ``/s/<one segment>/hits``
    with one ``q`` parameter once a server resolves its dot segments (RFC 3986, 5.2.4)."""
    parts = urlsplit(url)
    resolved = posixpath.normpath(parts.path)
    segments = resolved.split("/")
    return (
        len(segments) == 4
        and segments[:2] == ["", "s"]
        and segments[3] == "hits"
        and parts.query.count("=") == 1
        and not parts.fragment
    )


def shell_words_stay_put(value: str) -> bool:
    from pytest_retrieval.safe_names import file_name, shell_comment, shell_line

    if "\x00" in value:
        return True  # refused by shell_line (checked in test_hostile_names.py)
    line = shell_line(["pytest-retrieval", "evaluate", value])
    comment = shell_comment(f"retriever {value}")
    name = file_name(value)
    return (
        shlex.split(line) == ["pytest-retrieval", "evaluate", value]
        and "\n" not in comment
        and "\r" not in comment
        and "/" not in name
        and name not in (".", "..")
        and not name.startswith(("-", "."))
    )


def environ_with(name: str, value: str) -> Dict[str, str]:
    return {**os.environ, name: value}
