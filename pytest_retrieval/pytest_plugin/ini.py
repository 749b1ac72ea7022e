"""An ini key for every ``--retrieval-*`` option (issue #26): ``retrieval_report = ...`` in
``[tool.pytest.ini_options]`` (pyproject.toml), ``[pytest]`` (pytest.ini) or ``[tool:pytest]``.

The command line wins: an ini value is used only when its option was not given. Paths in the ini
file are resolved against pytest's rootdir, so ``pytest`` runs the same from a subdirectory (paths
on the command line stay relative to the current folder, as pytest's own ``--junitxml``). A bad
ini value stops pytest with one line naming the key and the ini file, before any suite runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, NoReturn, Tuple, Union

import pytest

__all__ = ["INI_KEYS", "add_ini", "apply_ini", "option_label"]

PATH, PATHS, FLAG = "path", "paths", "flag"
STORE, NAMES, NAME = "store", "names", "name"  # a path or an engine URL; names, one a line; one name
COUNT = "count"  # a whole number of runs, 0 to MAX_COUNT (``history_view.last_runs``)
MAX_COUNT = 1000
# ini key (= the option's dest) -> its kind: a path, a list of paths, a flag or the option's choices
INI_KEYS: Dict[str, Union[str, Tuple[str, ...]]] = {
    "retrieval_report": PATH,
    "retrieval_profile": ("exp", "trec"),
    "retrieval_backend": ("embedded", "elasticsearch", "opensearch"),
    "retrieval_override": PATHS,
    "retrieval_baseline_update": FLAG,
    "retrieval_export_unjudged": PATH,
    "retrieval_runs": PATH,
    "retrieval_no_latency": FLAG,
    "retrieval_rank_eval": FLAG,
    "retrieval_markdown": PATH,
    "retrieval_html": PATH,
    "retrieval_openmetrics": PATH,
    "retrieval_no_step_summary": FLAG,
    "retrieval_history": STORE,
    "retrieval_history_tag": NAMES,
    "retrieval_history_strict": FLAG,
    "retrieval_history_last": COUNT,
    "retrieval_stability_against": NAME,
}
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")
_FROM_INI = pytest.StashKey[Dict[str, str]]()


def _flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def add_ini(parser: pytest.Parser) -> None:
    for key, kind in INI_KEYS.items():
        what = {
            PATH: "a path",
            PATHS: "paths, one a line",
            FLAG: "true or false",
            STORE: "a path or an elasticsearch+https://... / opensearch+https://... URL",
            NAMES: "names, one a line",
            NAME: "a name",
            COUNT: "a whole number",
        }.get(kind if isinstance(kind, str) else "", " or ".join(kind))
        if key == "retrieval_baseline_update":
            what = "false, or always (true is refused: every run would rewrite the baselines)"
        help_text = f"{_flag(key)} for every run: {what} (paths against the rootdir; the command line wins)"
        if kind in (PATHS, NAMES):
            parser.addini(key, help=help_text, type="linelist", default=[])
        else:
            parser.addini(key, help=help_text, type="string", default="")


def apply_ini(config: pytest.Config) -> None:
    """Each option not given on the command line takes its ini value (checked, paths resolved)."""
    from_ini: Dict[str, str] = {}
    for key, kind in INI_KEYS.items():
        if getattr(config.option, key, None) not in (None, False, []):
            continue  # the command line wins
        raw = config.getini(key)
        if raw in ("", []):
            continue
        setattr(config.option, key, _value(config, key, kind, raw))
        from_ini[key] = f"{key} in {_ini_name(config)}"
    config.stash[_FROM_INI] = from_ini


def option_label(config: pytest.Config, key: str) -> str:
    """How an error names the option: ``--retrieval-report``, or the ini key and its file."""
    return config.stash.get(_FROM_INI, {}).get(key, _flag(key))


def _value(config: pytest.Config, key: str, kind: Union[str, Tuple[str, ...]], raw: Any) -> Any:
    if kind == PATHS:
        return [_path(config, key, line) for line in raw]
    if kind == NAMES:
        return [str(line).strip() for line in raw]  # an empty one is refused (history.py), never dropped
    if isinstance(raw, list):  # TOML keeps a list a list; str() of it made the path "['a', 'b']"
        what = "one path" if kind == PATH else "one value"
        _refuse(config, key, ", ".join(map(str, raw)), f"a TOML list; expected {what} (a string)")
    text = str(raw).strip()
    if kind == PATH or (kind == STORE and "://" not in text):
        return _path(config, key, text)
    if kind in (STORE, NAME):
        return text  # a name is checked where the option's is (an empty one refused, never dropped)
    if kind == COUNT:
        if not (text.isdigit() and int(text) <= MAX_COUNT):
            _refuse(config, key, text, f"expected a whole number from 0 to {MAX_COUNT}")
        return int(text)
    if kind == FLAG:
        if key == "retrieval_baseline_update":
            return _baseline_update(config, key, text)
        if text.lower() in _TRUE + _FALSE:
            return text.lower() in _TRUE
        _refuse(config, key, text, "expected true or false")
    if text not in kind:
        _refuse(config, key, text, "expected one of " + ", ".join(kind))
    return text


def _baseline_update(config: pytest.Config, key: str, text: str) -> bool:
    """``true`` in the ini file would make every run (CI's too) rewrite the baselines instead of
    comparing, and exit 0 on a regression: refused. ``always`` is the explicit opt-in (a job
    that only refreshes baselines); the command line's ``--retrieval-baseline-update`` is the
    way for a one-off update."""
    if text.lower() == "always":
        return True
    if text.lower() in _FALSE:
        return False
    if text.lower() in _TRUE:
        _refuse(
            config,
            key,
            text,
            "every run would rewrite the baselines and pass a regression; give "
            "--retrieval-baseline-update on the command line when you mean it (or 'always' to opt in)",
        )
    _refuse(
        config, key, text, "expected false, or 'always' (the opt-in to rewrite the baselines on every run)"
    )


def _path(config: pytest.Config, key: str, text: str) -> str:
    if not text or any(not c.isprintable() for c in text):
        _refuse(config, key, text, "expected a path (no control or format characters)")
    return str(Path(config.rootpath) / Path(text).expanduser())


def _refuse(config: pytest.Config, key: str, text: str, why: str) -> NoReturn:
    shown = text.encode("unicode_escape").decode("ascii")[:80]
    raise pytest.UsageError(f"{key} = {shown!r} in {_ini_name(config)}: {why}")


def _ini_name(config: pytest.Config) -> str:
    inipath = getattr(config, "inipath", None)
    return Path(inipath).name if inipath else "the ini file"
