"""The documentation site builds with ``mkdocs build --strict`` (a broken link, a page missing
from the nav, a stale include or a reference page that cannot be generated fails it), and the
generated reference pages name every option, command and key the code declares."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.docs.snippets import ROOT


def test_the_site_builds_strict(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_MKDOCS_2_WARNING="1")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    for page in (
        "tutorial",
        "reference/cli",
        "reference/suite-schema",
        "reference/pytest-options",
        "metrics",
    ):
        assert (tmp_path / "site" / page / "index.html").is_file(), page
    # the shipped example is included, not copied: the page shows the file as it is
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "scifact-mini" in index and "--8&lt;--" not in index


def _reference() -> dict:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import docs_reference
    finally:
        sys.path.pop(0)
    return {uri: make() for uri, make in docs_reference.PAGES.items()}


def test_the_reference_names_every_option_command_and_key() -> None:
    import argparse

    import pytest

    from pytest_retrieval.cli.app import build_parser
    from pytest_retrieval.config.schema import json_schema

    pages = _reference()
    options_page, cli_page, schema_page = (
        pages["reference/pytest-options.md"],
        pages["reference/cli.md"],
        pages["reference/suite-schema.md"],
    )
    parser = pytest.Parser(_ispytest=True)
    from pytest_retrieval import plugin

    plugin.pytest_addoption(parser)
    for group in parser._groups:
        for option in group.options:
            for name in option.names():
                assert f"`{name}`" in options_page, name
    for key in parser._inidict:
        assert f"`{key}`" in options_page, key

    def walk(p: argparse.ArgumentParser, prog: str):
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield f"{prog} {name}", sub
                    yield from walk(sub, f"{prog} {name}")

    top = build_parser()
    for flag in (f for a in top._actions for f in a.option_strings if f not in ("-h", "--help")):
        assert f"`{flag}`" in cli_page, flag
    for name, sub in walk(top, "pytest-retrieval"):
        assert f"## `{name}`" in cli_page, name
        for action in sub._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}`" in cli_page, (name, flag)
    schema = json_schema()
    for key in schema["properties"]:
        assert f"| `{key}` |" in schema_page, key
    for model in schema["$defs"].values():
        for key in model.get("properties", {}):
            assert f"| `{key}` |" in schema_page, key


def test_the_readme_links_to_files_that_exist() -> None:
    """GitHub renders the README from the repository, not from the site: its relative links
    must name committed files (the generated reference pages exist only in the site)."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = {t for t in re.findall(r"\]\(([^)#\s]+)", readme) if "://" not in t}
    assert targets, "no relative link in the README"
    missing = sorted(t for t in targets if not (ROOT / t).exists())
    assert not missing, missing
