"""Where the reports go at the end of a pytest session: the run files, the JSON report and every
requested rendering of it. Every rendering is made from the JSON report document alone, so
``pytest --retrieval-markdown`` and ``pytest-retrieval report REPORT.json --markdown``
(``cli/report.py``) are the same code.

Every output is written on its own (:class:`OutputWriter`): one that cannot be written is one
line naming its option, path and why, and every other output is still written. A data output
(run files, the JSON report, the baseline, the unjudged queue) not written fails the run; a
rendering (Markdown, HTML, OpenMetrics) not written is said and leaves the exit status alone.

Cheap to import: everything heavy is imported on use.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

# ------------------------------------------------------------------ the document


def report_document(
    states: Sequence[Any],
    session: Any = None,
    gates: Optional[Dict[str, int]] = None,
    run: Optional[Dict[str, Any]] = None,
    root: Optional[Path] = None,
    baselines: Optional[Dict[str, List[str]]] = None,
) -> Dict[str, Any]:
    """The JSON report as a plain dict (what ``--retrieval-report`` writes); ``gates``: the
    session's gate counts (``session.gates``: how many of them ran); ``run``: the session's
    ``run`` section (``history/record.py``: id, time, where it ran, partial), which makes the
    document the run record a history keeps; ``root``: paths under it made relative
    (``paths.relative_to_root``)."""
    from .. import __version__
    from .json_report import REPORT_VERSION, finite_only, json_default, suite_report

    doc: Dict[str, Any] = {"version": REPORT_VERSION}
    if run is not None:
        doc["run"] = dict(run)
    doc.update(plugin_version=__version__, suites=[suite_report(s) for s in states])
    if session is not None:
        doc["session"] = _session_info(session)
        if gates is not None:
            doc["session"]["gates"] = dict(gates)
        if baselines is not None:  # --retrieval-baseline-update: the files written, and not
            doc["session"]["baseline_update"] = {k: list(v) for k, v in baselines.items()}
    try:  # the usual case, every number finite: one pass of the C encoder, no walk of the tree
        text = json.dumps(doc, allow_nan=False, default=json_default)
    except ValueError:  # NaN is not JSON: such a value is null and named here as an error
        doc, non_finite = finite_only(doc)
        if non_finite:
            doc["errors"] = [f"{where}: not a finite number" for where in non_finite]
        text = json.dumps(doc, allow_nan=False, default=json_default)
    # through JSON once: numpy scalars, tuples and NaN come out as the file has them; every
    # registered secret out of every string (the renderings are made from this document)
    return _decoded(text, root)


def _decoded(text: str, root: Optional[Path]) -> Dict[str, Any]:
    """``text`` decoded, redacted, with the paths under ``root`` made relative: on the text when
    that gives the same as on the document (the usual case: no walk of 100,000s of values)."""
    from ..redaction import redact_json_text
    from .paths import relative_in_place, relative_json

    if root is None:
        return redact_json_text(text)
    relative = relative_json(text, root)
    if relative is not None:
        return redact_json_text(relative)
    return relative_in_place(redact_json_text(text), root)


def _session_info(session: Any) -> Dict[str, Any]:
    import pytest

    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    errors = []
    if tr is not None:
        for rep in tr.stats.get("error", []):
            if isinstance(rep, pytest.CollectReport):
                text = (rep.longreprtext or "").strip().splitlines()
                errors.append({"nodeid": rep.nodeid, "message": text[-1] if text else ""})
    return {"exitstatus": int(getattr(session, "exitstatus", 0) or 0), "collection_errors": errors}


class OutputWriter:
    """Runs each output's writer on its own: an exception is one line (``say``), never the end
    of the other outputs; ``failed`` keeps the lines, ``session`` (when given) exits non-zero
    for a data output not written."""

    def __init__(self, say: Callable[[str], None], session: Any = None) -> None:
        self.say = say
        self.session = session
        self.failed: List[str] = []

    def write(self, what: str, write: Callable[[], object], *, data: bool = True) -> bool:
        """``write()``; False (said) when it raised. ``what``: the option and the path."""
        try:
            write()
        except Exception as exc:  # noqa: BLE001 - any writer's failure is this one output's
            line = f"{'ERROR: ' if data else ''}{what}: not written: {_reason(exc)}"
            self.failed.append(line)
            self.say(line)
            if data and self.session is not None and self.session.exitstatus == 0:
                import pytest

                self.session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return False
        return True


def _reason(exc: BaseException) -> str:
    """Why a write failed, on one bounded line (an OSError's text and the path it names)."""
    from ..errors import RetrievalError
    from .formats import clip, redact

    if isinstance(exc, FileExistsError):  # a folder to make is a file already
        text = f"not a folder: {exc.filename}"
    elif isinstance(exc, OSError) and exc.strerror:
        where = exc.filename2 if exc.filename2 is not None else exc.filename
        text = f"{exc.strerror}: {where}" if where is not None else exc.strerror
    elif isinstance(exc, RetrievalError):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}"
    return clip(redact(text), 500)


def render_outputs(
    doc: Dict[str, Any],
    *,
    markdown: Optional[Path] = None,
    html: Optional[Path] = None,
    openmetrics: Optional[Path] = None,
    step_summary: Optional[Path] = None,
    say: Callable[[str], None] = print,
    full_report: Optional[str] = None,
    limit: Optional[int] = None,
    flag: Union[str, Callable[[str], str]] = "--",
    writer: Optional[OutputWriter] = None,
) -> List[str]:
    """Render the requested outputs of ``doc``, each on its own; returns the problems (each
    said with ``say``, naming the option ``flag`` + format, or ``flag(format)``: an ini key)."""
    writer = writer or OutputWriter(say)
    name = flag if callable(flag) else partial("{}{}".format, flag)
    before = len(writer.failed)
    md = _markdown_once(doc, full_report, limit)
    if markdown:
        writer.write(f"{name('markdown')} {markdown}", lambda: _write(Path(markdown), md()), data=False)
    if step_summary:
        writer.write(f"$GITHUB_STEP_SUMMARY {step_summary}", lambda: _append(step_summary, md), data=False)
    if html:
        writer.write(f"{name('html')} {html}", lambda: _write(Path(html), _html(doc)), data=False)
    if openmetrics:
        writer.write(
            f"{name('openmetrics')} {openmetrics}",
            lambda: _write(Path(openmetrics), _openmetrics(doc)),
            data=False,
        )
    return writer.failed[before:]


def _markdown_once(
    doc: Dict[str, Any], full_report: Optional[str], limit: Optional[int]
) -> Callable[[], str]:
    """The Markdown summary, rendered when first asked for (the file and the step summary share it)."""
    text: Dict[str, str] = {}

    def md() -> str:
        if "t" not in text:
            from .markdown import render_markdown

            kw = {"limit": limit} if limit else {}
            text["t"] = render_markdown(doc, full_report=full_report, **kw)
        return text["t"]

    return md


def _html(doc: Dict[str, Any]) -> str:
    from .html import render_html

    return render_html(doc)


def _openmetrics(doc: Dict[str, Any]) -> str:
    from .openmetrics import render_openmetrics

    return render_openmetrics(doc)


def _write(path: Path, text: str) -> None:
    from ..fileio import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda fh: fh.write(text), fsync=False)


def _append(path: Path, render: Callable[[], str]) -> None:
    """Append to the step summary: the file is opened first, then the text rendered into it."""
    from ..fileio import open_regular_for_append

    with open_regular_for_append(path) as fh:
        fh.write(render() + "\n")


def write_outputs(
    session: Any,
    states: Sequence[Any],
    writer: Optional[OutputWriter] = None,
    gates: Optional[Dict[str, int]] = None,
    label: Callable[[str], str] = "--retrieval-{}".format,
    doc: Optional[Dict[str, Any]] = None,
    run: Optional[Callable[[], Dict[str, Any]]] = None,
    recent: Optional[Callable[[OutputWriter, Dict[str, Any]], Optional[Dict[str, Any]]]] = None,
    history: Optional[Callable[[OutputWriter, Dict[str, Any]], None]] = None,
) -> None:
    """End of a pytest session: the run files, the JSON report and every requested rendering.
    ``label(name)`` names an output's option in a problem (default ``--retrieval-<name>``; the
    plugin passes the ini key when the value came from the ini file). ``doc``: the report
    document when the caller made it already (``session_document``); else ``run()`` gives its
    ``run`` section (asked for only when a document is made). ``recent(writer, doc)``: the last
    runs of the gated metrics from the run history (``history`` of the JSON report, Markdown
    and HTML; never in the stored record); ``history(writer, doc)``: the run history's write,
    last (the plugin's ``pytest_plugin/history.write_history``).

    Without the cyclic garbage collector meanwhile (:func:`gc_paused`)."""
    with gc_paused():
        _write_outputs(session, states, writer, gates, label, doc, run, recent, history)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while the report document is built and written:
    the document is 100,000s of new dicts and lists, each batch of which would set it walking
    the whole session's heap again (every hit of every query), to free nothing (the document
    has no cycles); it runs again after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _write_outputs(
    session: Any,
    states: Sequence[Any],
    writer: Optional[OutputWriter],
    gates: Optional[Dict[str, int]],
    label: Callable[[str], str],
    doc: Optional[Dict[str, Any]],
    run: Optional[Callable[[], Dict[str, Any]]],
    recent: Optional[Callable[[OutputWriter, Dict[str, Any]], Optional[Dict[str, Any]]]],
    history: Optional[Callable[[OutputWriter, Dict[str, Any]], None]],
) -> None:
    config = session.config
    writer = writer or OutputWriter(terminal_say(config), session)
    name = label
    runs = config.getoption("retrieval_runs", None)
    if runs:
        write_run_files(writer, [s.result for s in states if s.result is not None], Path(runs), name("runs"))
    step = _step_summary(config, states, gates)
    paths = {
        k: config.getoption(f"retrieval_{k}", None) for k in ("report", "markdown", "html", "openmetrics")
    }
    if not (any(paths.values()) or step or history):
        return
    if doc is None:
        doc = session_document(writer, session, states, gates, run() if run else None)
    if doc is None:
        return
    # the last runs only for a report that shows them (the history write alone needs none)
    shown = _with_recent(writer, doc, recent) if (any(paths.values()) or step) else doc
    if paths["report"]:
        text = json.dumps(shown, indent=2, allow_nan=False) + "\n"
        writer.write(f"{name('report')} {paths['report']}", lambda: _write(Path(paths["report"]), text))
    render_outputs(
        shown,
        markdown=_as_path(paths["markdown"]),
        html=_as_path(paths["html"]),
        openmetrics=_as_path(paths["openmetrics"]),
        step_summary=step,
        full_report=_full_report_hint(paths),
        flag=name,
        writer=writer,
    )
    if history is not None:
        history(writer, doc)


def session_document(
    writer: OutputWriter,
    session: Any,
    states: Sequence[Any],
    gates: Optional[Dict[str, int]],
    run: Optional[Dict[str, Any]] = None,
    baselines: Optional[Dict[str, List[str]]] = None,
) -> Optional[Dict[str, Any]]:
    """The report document (with the baselines' rankings and values, for diffs), or None (said);
    ``baselines``: a baseline update's files, ``{"written": [...], "not_written": [...]}``."""
    if not session.config.getoption("retrieval_baseline_update", None):
        _load_baselines(states)
    doc: Dict[str, Any] = {}
    root = session.config.rootpath
    with gc_paused():
        built = writer.write(
            "the report document",
            lambda: doc.update(report_document(states, session, gates, run, root, baselines)),
        )
    return doc if built else None


def _with_recent(
    writer: OutputWriter,
    doc: Dict[str, Any],
    recent: Optional[Callable[[OutputWriter, Dict[str, Any]], Optional[Dict[str, Any]]]],
) -> Dict[str, Any]:
    """``doc`` with its ``history`` section (the last runs of its gated metrics) when a run
    history is configured and could be read; ``doc`` itself otherwise."""
    section = recent(writer, doc) if recent is not None else None
    return {**doc, "history": section} if section else doc


def write_run_files(
    writer: OutputWriter, results: Sequence[Any], folder: Path, flag: str = "--retrieval-runs"
) -> None:
    """``--retrieval-runs``: each suite's folder on its own (one that cannot be written is one
    line; the other suites' are written)."""
    from ..execution.export import run_folder_names, write_suite_runs

    for result, name in zip(results, run_folder_names(results)):
        writer.write(
            f"{flag} {folder} ({Path(result.suite.path).name})",
            partial(write_suite_runs, result, folder, name),
        )


def _step_summary(config: Any, states: Sequence[Any], gates: Optional[Dict[str, int]]) -> Optional[Path]:
    """``$GITHUB_STEP_SUMMARY`` when it is set, the session had suites (or gates: a crashed
    xdist worker hands over none) and ``--retrieval-no-step-summary`` is not given."""
    suites = bool(states or (gates and gates.get("total")))
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    return (
        Path(summary)
        if summary and not config.getoption("retrieval_no_step_summary", None) and suites
        else None
    )


def terminal_say(config: Any) -> Callable[[str], None]:
    tr = config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str) -> None:
        if tr is not None:
            tr.write_line(f"[retrieval] {line}")
        else:  # pragma: no cover
            print(f"[retrieval] {line}", file=sys.stderr)

    return say


def _load_baselines(states: Sequence[Any]) -> None:
    for state in states:
        if state.result is not None:
            try:
                state.baseline()
            except Exception:  # noqa: BLE001 - the regression items already reported it
                pass


def _as_path(value: Optional[str]) -> Any:
    """``value`` as a Path, or as it is when empty (no output)."""
    return value and Path(value)


def _full_report_hint(paths: Dict[str, Optional[str]]) -> Optional[str]:
    """Where the Markdown summary points for the whole report: the HTML one, else the JSON one."""
    if paths["html"]:
        return f"the HTML report ({Path(paths['html']).name})"
    if paths["report"]:
        return f"the JSON report ({Path(paths['report']).name})"
    return None
