"""The run history of a pytest session (issue #37): ``--retrieval-history PATH|URL`` (ini
``retrieval_history``), ``--retrieval-history-tag NAME`` (repeatable), ``--retrieval-history-strict``.

The location and the tags are checked when pytest starts (one line, exit 4). The record (the
JSON report with its ``run`` section, ``history/record.py``) is written once, at the end of the
session, by the controller under pytest-xdist (``session.py``), after every other output. A
write that fails is one line; the exit status follows the gates unless the option
``--retrieval-history-strict`` makes it fail the run.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

import pytest

from .ini import option_label

__all__ = ["TAG_CHARS", "add_history_options", "check_history_options", "run_of", "write_history"]

TAG_CHARS = 100  # a tag is a name (a release, "nightly"), not a document
_RUN = pytest.StashKey[Dict[str, Any]]()


def add_history_options(group: pytest.OptionGroup) -> None:
    group.addoption(
        "--retrieval-history",
        metavar="PATH|URL",
        default=None,
        help="append this run's record to a run history: a SQLite file (made on first use), or "
        "elasticsearch+https://host:9200/index / opensearch+https://... (credentials as ${VAR})",
    )
    group.addoption(
        "--retrieval-history-tag",
        metavar="NAME",
        action="append",
        default=[],
        help="a tag on this run's history record (e.g. a release, to pin it as a reference); repeatable",
    )
    group.addoption(
        "--retrieval-history-strict",
        action="store_true",
        default=False,
        help="a history record that cannot be written fails the run (by default it is said, and "
        "the exit status follows the gates)",
    )
    group.addoption(
        "--retrieval-stability-against",
        metavar="RUN",
        default=None,
        help="the stability gates and report compare with this stored run of --retrieval-history "
        "instead of the baseline: a run id (or a unique prefix), a tag, a commit, or latest",
    )


def check_history_options(config: pytest.Config) -> None:
    """The history location and tags, checked when pytest starts: one line naming the option."""
    tags: List[str] = list(config.getoption("retrieval_history_tag", None) or [])
    for tag in tags:
        problem = _tag_problem(tag)
        if problem:
            label = option_label(config, "retrieval_history_tag")
            shown = str(tag).encode("unicode_escape").decode("ascii")[:80]
            raise pytest.UsageError(f"{label} {shown!r}: {problem}")
    location = config.getoption("retrieval_history", None)
    _check_against(config, location)
    if not location:
        return
    from ..errors import RetrievalError
    from ..history import open_store

    label = option_label(config, "retrieval_history")
    try:
        store = open_store(location)  # checks the URL (scheme, index, ${VAR}s) or the path; opens nothing
    except RetrievalError as exc:
        raise pytest.UsageError(f"{label}: {exc}") from None
    problem = _path_problem(store)
    if problem:
        raise pytest.UsageError(f"{label} {store.location}: {problem}")


def _check_against(config: pytest.Config, location: Any) -> None:
    """``--retrieval-stability-against RUN``: a name (as a tag is), and a history to read it from."""
    against = config.getoption("retrieval_stability_against", None)
    if against is None:
        return
    label = option_label(config, "retrieval_stability_against")
    problem = _tag_problem(against)  # a run is named as a tag is: a short printable name
    if problem:
        shown = str(against).encode("unicode_escape").decode("ascii")[:80]
        problem = problem.replace("a tag is", "a run's name is").replace("an empty tag", "an empty name")
        raise pytest.UsageError(f"{label} {shown!r}: {problem}")
    if not location:
        raise pytest.UsageError(
            f"{label} {against}: no run history to read it from; give "
            "--retrieval-history PATH|URL (or ini retrieval_history)"
        )


def _tag_problem(tag: Any) -> Optional[str]:
    text = str(tag)
    if not text.strip():
        return "expected a name, got an empty tag"
    if len(text) > TAG_CHARS:
        return f"a tag is at most {TAG_CHARS} characters, got {len(text)}"
    if any(not c.isprintable() for c in text):
        return "expected a name (no control or format characters)"
    return None


def _path_problem(store: Any) -> Optional[str]:
    """What makes a SQLite store's path unusable (a folder, a FIFO, a device), before the run."""
    from pathlib import Path

    path = getattr(store, "path", None)
    if path is None:
        return None
    p = Path(path)
    if p.is_dir():
        return "is a directory, expected a SQLite file"
    if p.exists() and not p.is_file():
        return "not a regular file"
    if any(not c.isprintable() for c in str(p)):
        return "expected a path (no control or format characters)"
    return None


def run_of(config: pytest.Config, gates: Optional[Mapping[str, int]], exitstatus: int) -> Dict[str, Any]:
    """The session's ``run`` section: its id, time and where it ran made once (the JSON report and
    the stored record say the same), ``partial`` and ``exitstatus`` as they are now."""
    from ..history.record import run_section

    made = config.stash.get(_RUN, None)
    if made is None:
        made = config.stash[_RUN] = run_section(
            root=config.rootpath, tags=config.getoption("retrieval_history_tag", None) or ()
        )
    counts = dict(gates or {})
    partial = bool(counts) and int(counts.get("ran", 0)) < int(counts.get("total", 0))
    return {**made, "partial": partial, "exitstatus": int(exitstatus)}


def write_history(writer: Any, config: pytest.Config, doc: Mapping[str, Any]) -> None:
    """Append the record ``doc`` (the report document with its ``run`` section) to the history,
    as one output of ``writer`` (``reports/outputs.OutputWriter``): a failure is one line, and
    fails the run only with ``--retrieval-history-strict``."""
    location = config.getoption("retrieval_history", None)
    if not location:
        return
    from ..history import open_store
    from ..history.record import build_record

    strict = bool(config.getoption("retrieval_history_strict", False))
    label = option_label(config, "retrieval_history")
    holder: Dict[str, Any] = {}

    def append() -> None:
        store = holder["store"] = open_store(location)
        try:
            holder["id"] = store.append(build_record(doc, doc.get("run") or {}))
        finally:
            store.close()

    shown = _shown(location)
    if writer.write(f"{label} {shown}", append, data=strict):
        partial = " (partial: not every gate got a verdict)" if (doc.get("run") or {}).get("partial") else ""
        writer.say(f"history: run {holder['id']} written to {holder['store'].location}{partial}")


def _shown(location: str) -> str:
    """The location as a line may show it: an engine URL without its credentials."""
    from ..history import is_engine_url

    if not is_engine_url(location):
        return location
    from ..reports.formats import redact

    return redact(location)
