"""Every input surface of the package has a hostile case (issue #28, section 6).

The surfaces are enumerated from the code, so a new key or option shows up here by itself:

* ``team``: every key path of a team threshold file's schema, ``team:floors.*.*``.
* ``yaml``: every key path of the suite's JSON Schema (``json_schema()``), walking properties,
  ``$defs``, unions and list items; a map of names (``retrievers.<name>``, ``floors.<retriever>``)
  is written ``*`` (``retrievers.*.reranker.timeout``).
* ``cli``: every option and positional of every ``pytest-retrieval`` subcommand, walked from
  ``build_parser()`` (``judge llm --rpm``, ``evaluate <qrels>``).
* ``pytest``: every ``--retrieval-*`` option the plugin's ``pytest_addoption`` declares (called on a
  recording parser, so no pytest internals are needed).
* ``ini``: every ini key it declares (``retrieval_report`` in ``[tool.pytest.ini_options]``).
* ``file`` and ``format``: the files the plugin and the command read or write, and the output
  formats, listed here from the README (they are not declared in one place in the code).

How a surface "has a case", by text of the hostile table (``tests/hostile/test_*.py`` but this
file), read with ``ast`` as its string constants:

* ``yaml``: the key path appears as a whole in a string (``*`` matches any one name), e.g. the
  fragment ``"floors.bm25.ndcg@10"`` of a ``one_line`` check covers ``floors.*.*``;
* ``cli``: a string starting with the command (``"judge llm "``) holds the option as a word
  (``"judge llm --rpm 0"``), or the surface's own name appears in a string (a case id);
* ``pytest``: the option appears as a word in a string;
* ``ini``: a string sets the key (``retrieval_profile = nan``);
* ``file``/``format``: the explicit ``SURFACE_CASES`` mapping names the test functions covering
  it, and each must exist.

``KNOWN_GAPS`` lists surfaces whose hostile case showed a bug that is not fixed here (a
traceback, a silent pass); the test accepts them, and fails when a listed gap gets a case or is
no longer a surface, so the list stays honest.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path
from typing import Any, Dict, List, Set

from pytest_retrieval.cli.app import build_parser
from pytest_retrieval.config.schema import json_schema
from pytest_retrieval.plugin import pytest_addoption

HERE = Path(__file__).parent

# --- enumeration -------------------------------------------------------------------------------


def team_surfaces() -> Set[str]:
    """Every key path of a team threshold file (``config/teams.TeamFile``), as ``team:<path>``."""
    from pytest_retrieval.config.teams import TeamFile

    return {f"team:{p}" for p in yaml_surfaces(TeamFile.model_json_schema())}


def yaml_surfaces(schema: Any = None) -> Set[str]:
    schema = json_schema() if schema is None else schema
    defs = schema.get("$defs", {})
    out: Set[str] = set()

    def walk(node: Any, path: str, seen: frozenset) -> None:
        if not isinstance(node, dict):
            return
        if "$ref" in node:
            name = node["$ref"].split("/")[-1]
            if (name, path) not in seen:
                walk(defs[name], path, seen | {(name, path)})
        for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            for sub in node.get(key, []):
                walk(sub, path, seen)
        for key, sub in node.get("properties", {}).items():
            p = f"{path}.{key}" if path else key
            out.add(p)
            walk(sub, p, seen)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            p = f"{path}.*" if path else "*"
            out.add(p)
            walk(extra, p, seen)
        walk(node.get("items"), path, seen)

    walk(schema, "", frozenset())
    return out


def cli_surfaces() -> Set[str]:
    out: Set[str] = set()

    def walk(parser: argparse.ArgumentParser, prefix: List[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, prefix + [name])
            elif isinstance(action, argparse._HelpAction):
                continue
            elif action.option_strings:
                out.add(" ".join(prefix + [max(action.option_strings, key=len)]))
            else:
                out.add(" ".join(prefix + [f"<{action.dest}>"]))

    walk(build_parser(), [])
    return out


class _Recorder:
    """Stands for ``pytest.Parser`` and its groups: records every option's name."""

    def __init__(self) -> None:
        self.names: Set[str] = set()
        self.ini: Set[str] = set()

    def getgroup(self, *args: Any, **kwargs: Any) -> _Recorder:
        return self

    def addoption(self, *names: str, **kwargs: Any) -> None:
        self.names.add(max(names, key=len))

    def addini(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.ini.add(name)


def pytest_surfaces() -> Set[str]:
    rec = _Recorder()
    pytest_addoption(rec)  # type: ignore[arg-type]
    return rec.names


def ini_surfaces() -> Set[str]:
    rec = _Recorder()
    pytest_addoption(rec)  # type: ignore[arg-type]
    return rec.ini


# files read or written (docs/how-to/: suite-files, judgments, baselines, reports, query-sets) -> the hostile
# tests covering them
FILE_CASES: Dict[str, List[str]] = {
    "file:suite": [
        "test_suite_yaml.py::test_hostile_suite_file_is_one_clear_line",
        "test_suite_yaml.py::test_a_fifo_is_refused_without_blocking",
    ],
    "file:override": ["test_surfaces_pytest.py::test_hostile_pytest_option"],
    "file:team": [
        "test_team_files.py::test_a_hostile_team_file_is_one_clear_line",
        "test_team_files.py::test_a_fifo_team_file_is_refused_without_blocking",
    ],
    "file:qrels": ["test_data_and_cli.py::test_hostile_data_file_is_one_clear_line"],
    "file:queries": ["test_data_and_cli.py::test_hostile_data_file_is_one_clear_line"],
    "file:corpus": ["test_data_and_cli.py::test_hostile_data_file_is_one_clear_line"],
    "file:tags": ["test_data_and_cli.py::test_hostile_data_file_is_one_clear_line"],
    "file:run": ["test_data_and_cli.py::test_hostile_data_file_is_one_clear_line"],
    "file:beir": ["test_data_and_cli.py::test_beir_with_an_annotator_column_is_read_by_header"],
    "file:baseline": [
        "test_baseline_trust.py::test_a_baseline_that_does_not_add_up_is_one_line",
        "test_outputs.py::test_hostile_output_is_one_line",
    ],
    "file:json-report": [
        "test_tracebacks.py::test_a_tampered_report_is_one_line",
        "test_tracebacks.py::test_a_hostile_json_report_is_one_line",
    ],
    "file:annotations": [
        "test_judge_files.py::test_hostile_judge_file_is_one_clear_line",
        "test_judge_files.py::test_special_judge_files_are_refused_without_reading",
    ],
    "file:click-log": [
        "test_judge_files.py::test_special_judge_files_are_refused_without_reading",
        "test_surfaces_cli.py::test_a_hostile_command_line_is_refused_in_one_line",
    ],
    "file:llm-pairs": ["test_judge_files.py::test_hostile_judge_file_is_one_clear_line"],
    "file:llm-cache": ["test_surfaces_cli.py::test_a_hostile_command_line_is_refused_in_one_line"],
    "file:prompt": ["test_surfaces_cli.py::test_a_hostile_command_line_is_refused_in_one_line"],
    "file:runs-dir": ["test_outputs.py::test_hostile_output_is_one_line"],
    # the run history (docs/how-to/history.md): a SQLite file, or an engine index URL
    "file:history": [
        "test_history.py::test_hostile_history_option",
        "test_history.py::test_a_hostile_history_command_is_one_line",
    ],
    "file:unjudged-queue": ["test_surfaces_pytest.py::test_hostile_pytest_option"],
    # precomputed sparse vectors (docs/how-to/sparse.md): JSONL, .npz, its id file and vocabulary
    "file:sparse-jsonl": [
        "test_sparse_files.py::test_hostile_sparse_jsonl_is_one_clear_line",
        "test_sparse_files.py::test_special_sparse_files_are_refused_without_blocking",
    ],
    "file:sparse-npz": [
        "test_sparse_files.py::test_hostile_sparse_npz_is_one_clear_line",
        "test_sparse_files.py::test_special_sparse_files_are_refused_without_blocking",
    ],
    "file:query-log": [
        "test_surfaces_query_sets.py::test_hostile_query_log_is_one_clear_line",
        "test_surfaces_query_sets.py::test_a_hostile_query_set_command_is_refused_in_one_line",
    ],
    "file:synth-prompt": [
        "test_surfaces_query_sets.py::test_a_hostile_query_set_command_is_refused_in_one_line"
    ],
    "file:synth-outputs": [
        "test_surfaces_query_sets.py::test_a_hostile_query_set_command_is_refused_in_one_line"
    ],
    "file:sample-outputs": [
        "test_surfaces_query_sets.py::test_a_hostile_query_set_command_is_refused_in_one_line"
    ],
    # a tool's judgments (issue #34): judge import --from, judge export --to
    **{
        f"file:{tool}": [
            "test_interchange.py::test_hostile_interchange_file_is_one_clear_line",
            "test_interchange.py::test_special_files_are_refused_without_blocking",
            "test_interchange.py::test_a_hostile_interchange_command_is_one_line",
        ]
        for tool in ("quepid", "rre", "srw", "rank-eval")
    },
}
FORMAT_CASES: Dict[str, List[str]] = {
    "format:terminal": ["test_secrets.py::test_no_secret_in_any_output_of_a_passing_run"],
    "format:json": ["test_tracebacks.py::test_a_hostile_json_report_is_one_line"],
    "format:markdown": ["test_outputs.py::test_hostile_output_is_one_line"],
    "format:html": ["test_outputs.py::test_hostile_output_is_one_line"],
    "format:openmetrics": ["test_outputs.py::test_hostile_output_is_one_line"],
    "format:junit": ["test_secrets.py::test_no_secret_in_any_output_of_a_passing_run"],
    "format:step-summary": ["test_outputs.py::test_hostile_output_is_one_line"],
    "format:run-files": ["test_outputs.py::test_hostile_output_is_one_line"],
    "format:evaluate.sh": ["test_outputs.py::test_hostile_output_is_one_line"],
}
SURFACE_CASES: Dict[str, List[str]] = {**FILE_CASES, **FORMAT_CASES}

# surface -> what its hostile case shows (a bug not fixed in this change)
KNOWN_GAPS: Dict[str, str] = {}  # every surface has a hostile case (add a reason here, never a silence)


def all_surfaces() -> Dict[str, Set[str]]:
    return {
        "yaml": yaml_surfaces(),
        "team": team_surfaces(),
        "cli": cli_surfaces(),
        "pytest": pytest_surfaces(),
        "ini": ini_surfaces(),
        "file": set(FILE_CASES),
        "format": set(FORMAT_CASES),
    }


# --- matching ----------------------------------------------------------------------------------


def _hostile_texts() -> Dict[str, ast.Module]:
    return {
        p.name: ast.parse(p.read_text(encoding="utf-8"))
        for p in sorted(HERE.glob("test_*.py"))
        if p.name != Path(__file__).name
    }


def _strings(trees: Dict[str, ast.Module]) -> List[str]:
    out: List[str] = []
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.append(node.value)
            elif isinstance(node, ast.JoinedStr):  # the literal parts of an f-string
                out.append("".join(v.value for v in node.values if isinstance(v, ast.Constant)))
    return out


def _functions(trees: Dict[str, ast.Module]) -> Set[str]:
    return {
        f"{name}::{node.name}"
        for name, tree in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
    }


def _yaml_pattern(path: str) -> re.Pattern:
    body = r"\.".join(r"[^.\s'\"]+" if part == "*" else re.escape(part) for part in path.split("."))
    return re.compile(rf"(?<![\w.@]){body}(?![\w.@])")


def covered(kind: str, surface: str, strings: List[str], functions: Set[str]) -> bool:
    if kind in ("file", "format"):
        names = SURFACE_CASES[surface]
        return bool(names) and all(n in functions for n in names)
    if kind == "ini":
        return any(re.search(rf"(?<!\w){re.escape(surface)} *=", s) for s in strings)
    if any(surface in s for s in strings):
        return True
    if kind == "yaml":
        pattern = _yaml_pattern(surface)
        return any(pattern.search(s) for s in strings)
    if kind == "pytest":
        return any(surface in s.replace("=", " ").split() for s in strings)
    *command, option = surface.split(" ")
    head = " ".join(command) + " "
    return any(s.startswith(head) and option in s.replace("=", " ").split() for s in strings)


def uncovered() -> Dict[str, List[str]]:
    trees = _hostile_texts()
    strings, functions = _strings(trees), _functions(trees)
    return {
        kind: sorted(s for s in surfaces if not covered(kind, s, strings, functions))
        for kind, surfaces in all_surfaces().items()
    }


def test_surfaces_are_enumerated_from_the_code() -> None:
    surfaces = all_surfaces()
    assert "latency.warmup" in surfaces["yaml"]
    assert "retrievers.*.reranker.timeout" in surfaces["yaml"]
    assert "floors.*.*" in surfaces["yaml"]
    assert "sweep --tune-fraction" in surfaces["cli"]
    assert "judge llm --rpm" in surfaces["cli"]
    assert "--retrieval-runs" in surfaces["pytest"]
    assert "retrieval_override" in surfaces["ini"]


def test_every_surface_has_a_hostile_case() -> None:
    missing = [s for kind in uncovered().values() for s in kind if s not in KNOWN_GAPS]
    assert not missing, f"{len(missing)} surface(s) without a hostile case: " + ", ".join(missing)


def test_known_gaps_stay_honest() -> None:
    everything = {s for kind in all_surfaces().values() for s in kind}
    still_open = {s for kind in uncovered().values() for s in kind}
    gone = sorted(set(KNOWN_GAPS) - everything)
    assert not gone, f"KNOWN_GAPS lists what is no longer a surface: {gone}"
    now_covered = sorted(set(KNOWN_GAPS) - still_open)
    assert not now_covered, f"KNOWN_GAPS lists surfaces that now have a case: {now_covered}"
