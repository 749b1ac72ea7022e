"""The reference pages of the documentation site, generated from the code when the site is built.

A MkDocs hook (``hooks:`` in mkdocs.yml): ``on_files`` adds three pages that exist only in the
built site, so they can never be stale:

* ``reference/suite-schema.md``: every key of a suite file, from ``config.schema.json_schema()``
  (the schema ``suite.schema.json`` must equal);
* ``reference/pytest-options.md``: every ``--retrieval-*`` option and ini key, from the plugin's
  ``pytest_addoption`` (``pytest_plugin/options.py``);
* ``reference/cli.md``: every ``pytest-retrieval`` command and option, from its argparse parsers
  (``cli/``).

``python scripts/docs_reference.py OUT_DIR`` writes them as files (to read them without a build).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GENERATED = "<!-- Generated from the code by scripts/docs_reference.py when the site is built. -->\n\n"


def _cell(text: Any) -> str:
    """``text`` fit for one table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


# --------------------------------------------------------------------------- the suite schema


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _type_of(node: Dict[str, Any]) -> str:
    """A JSON Schema node as a short Markdown type: links to the sections of referenced models."""
    if "$ref" in node:
        name = _ref_name(node["$ref"])
        return f"[{name}](#{name.lower()})"
    if "const" in node:
        return f"`{node['const']!r}`".replace("'", '"')
    if "enum" in node:
        return " or ".join(f"`{v}`" for v in node["enum"])
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            parts = [_type_of(n) for n in node[key] if n.get("type") != "null"]
            return " or ".join(dict.fromkeys(parts)) or "null"
    kind = node.get("type")
    if kind == "array":
        return f"list of {_type_of(node.get('items', {}))}"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"mapping of name to {_type_of(node['additionalProperties'])}"
    return str(kind or "any")


def _default(node: Dict[str, Any]) -> str:
    if "default" not in node:
        return "required" if node.get("_required") else "-"
    value = node["default"]
    return "-" if value is None else f"`{_cell(value)}`"


def _key_table(model: Dict[str, Any]) -> List[str]:
    required = set(model.get("required", ()))
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for key, node in model.get("properties", {}).items():
        node = dict(node, _required=key in required)
        rows.append(
            f"| `{key}` | {_cell(_type_of(node))} | {_default(node)} | {_cell(node.get('description', ''))} |"
        )
    return rows


def suite_schema_page() -> str:
    from pytest_retrieval.config.schema import json_schema

    schema = json_schema()
    lines = [
        "# Suite file schema",
        "",
        GENERATED.rstrip("\n"),
        "",
        "Every key a suite file (`retrieval_*.yaml`, `*.retrieval.yaml`) may hold, with its type and "
        "default, from the pydantic models in `pytest_retrieval/config/` (the same schema as "
        "`pytest_retrieval/config/suite.schema.json` and `pytest-retrieval schema`; point your "
        "editor's YAML language server at that file). A key that is not listed is an error naming "
        "the file and line. How the keys are used: [Write a suite file](../how-to/suite-files.md).",
        "",
        "## Top level",
        "",
        *_key_table(schema),
    ]
    for name, model in sorted(schema.get("$defs", {}).items()):
        lines += ["", f"## {name}", ""]
        if model.get("description"):
            lines += [" ".join(model["description"].split()), ""]
        if "properties" in model:
            lines += _key_table(model)
        else:
            lines.append(f"Type: {_type_of(model)}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- pytest options


def _pytest_parser() -> Any:
    from _pytest.config.argparsing import Parser

    from pytest_retrieval import plugin

    with warnings.catch_warnings():  # a private pytest class, used to read the declarations
        warnings.simplefilter("ignore")
        parser = Parser()
    plugin.pytest_addoption(parser)
    return parser


def _option_value(attrs: Dict[str, Any]) -> str:
    if attrs.get("choices"):
        return "`" + "` or `".join(map(str, attrs["choices"])) + "`"
    if attrs.get("metavar"):
        return f"`{attrs['metavar']}`"
    return "(flag)"


def pytest_options_page() -> str:
    parser = _pytest_parser()
    lines = [
        "# pytest options and ini keys",
        "",
        GENERATED.rstrip("\n"),
        "",
        "The options the plugin adds to `pytest` (`pytest --help` lists them under "
        "*retrieval regression gates*), from `pytest_retrieval/pytest_plugin/options.py`.",
        "",
        "## Command-line options",
        "",
        "| option | value | default | what it does |",
        "|---|---|---|---|",
    ]
    for group in parser._groups:
        for option in group.options:
            attrs = option.attrs()
            default = attrs.get("default")
            shown = "-" if default in (None, [], False) else f"`{default}`"
            names = ", ".join(f"`{n}`" for n in option.names())
            lines.append(f"| {names} | {_option_value(attrs)} | {shown} | {_cell(attrs.get('help', ''))} |")
    lines += ["", "## ini keys", ""]
    ini = {k: v for k, v in parser._inidict.items()}
    if not ini:
        lines.append("The plugin declares no ini key of its own yet.")
    else:
        lines += [
            "Set in `[tool.pytest.ini_options]` (pyproject.toml), `pytest.ini` or `setup.cfg`, or "
            "with `-o key=value`.",
            "",
            "| key | type | default | what it does |",
            "|---|---|---|---|",
        ]
        for key, spec in sorted(ini.items()):
            help_text, kind, default = (tuple(spec) + (None, None, None))[:3]
            shown = "-" if default in (None, [], "") else f"`{_cell(default)}`"
            lines.append(f"| `{key}` | {kind or 'string'} | {shown} | {_cell(help_text)} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the command line


def _commands(
    parser: argparse.ArgumentParser, prog: str
) -> Iterator[Tuple[str, argparse.ArgumentParser, str]]:
    """Every (sub)command under ``parser``: its full name, its parser and its one-line help."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield f"{prog} {name}", sub, helps.get(name, "")
                yield from _commands(sub, f"{prog} {name}")


def _argument_rows(parser: argparse.ArgumentParser) -> List[str]:
    rows = ["| argument | value | default | meaning |", "|---|---|---|---|"]
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        names = ", ".join(f"`{n}`" for n in action.option_strings) or f"`{action.metavar or action.dest}`"
        if action.choices:
            value = " or ".join(f"`{c}`" for c in action.choices)
        elif action.nargs == 0:
            value = "(flag)"
        else:
            value = f"`{action.metavar or action.dest.upper()}`" if action.option_strings else "positional"
        default = action.default
        shown = (
            "-"
            if default in (None, False, [], argparse.SUPPRESS) or not action.option_strings
            else f"`{default}`"
        )
        rows.append(f"| {names} | {value} | {_cell(shown)} | {_cell(action.help or '')} |")
    return rows


def cli_page() -> str:
    from pytest_retrieval.cli.app import build_parser

    parser = build_parser()
    lines = [
        "# Command line",
        "",
        GENERATED.rstrip("\n"),
        "",
        "`pytest-retrieval` (installed with the package; also `python -m pytest_retrieval.cli`), "
        "from the argparse parsers in `pytest_retrieval/cli/`. Every command prints `--help`. "
        "Exit codes: 0 done, 1 a gate or check failed, 2 a usage or input error (one line, no traceback).",
    ]
    own = [
        a for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
    ]
    if own:  # options of the command itself (e.g. --version)
        lines += ["", "## `pytest-retrieval`", "", *_argument_rows(parser)]
    for name, sub, help_text in _commands(parser, "pytest-retrieval"):
        lines += ["", f"## `{name}`", ""]
        if help_text:
            lines += [_cell(help_text[:1].upper() + help_text[1:]) + ".", ""]
        usage = " ".join(sub.format_usage().split())
        lines += ["```text", usage, "```", ""]
        if any(not isinstance(a, argparse._HelpAction) for a in sub._actions):
            lines += _argument_rows(sub)
    return "\n".join(lines) + "\n"


PAGES = {
    "reference/suite-schema.md": suite_schema_page,
    "reference/pytest-options.md": pytest_options_page,
    "reference/cli.md": cli_page,
}


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: add the generated reference pages to the site."""
    from mkdocs.structure.files import File

    for uri, make in PAGES.items():
        files.append(File.generated(config, uri, content=make()))
    return files


def main(argv: List[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="folder to write the generated pages into")
    args = ap.parse_args(argv)
    for uri, make in PAGES.items():
        path = args.out / uri
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(make(), encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
