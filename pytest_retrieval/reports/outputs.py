"""Where the reports go at the end of a pytest session: the JSON report and every requested
rendering of it. Every output is rendered from the JSON report document alone, so
``pytest --retrieval-markdown`` and ``pytest-retrieval report REPORT.json --markdown``
(``cli/report.py``) are the same code. A report that cannot be written is said on the terminal;
it never fails the run.

Cheap to import: everything heavy is imported on use.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

# ------------------------------------------------------------------ the document


def report_document(
    states: Sequence[Any], session: Any = None, gates: Optional[Dict[str, int]] = None
) -> Dict[str, Any]:
    """The JSON report as a plain dict (what ``--retrieval-report`` writes); ``gates``: the
    session's gate counts (``session.gates``: how many of them ran)."""
    from .. import __version__
    from .json_report import REPORT_VERSION, finite_only, json_default, suite_report

    doc: Dict[str, Any] = {
        "version": REPORT_VERSION,
        "plugin_version": __version__,
        "suites": [suite_report(s) for s in states],
    }
    if session is not None:
        doc["session"] = _session_info(session)
        if gates is not None:
            doc["session"]["gates"] = dict(gates)
    doc, non_finite = finite_only(doc)
    if non_finite:  # NaN is not JSON: such a value is null and named here as an error
        doc["errors"] = [f"{where}: not a finite number" for where in non_finite]
    # through JSON once: numpy scalars, tuples and NaN come out as the file has them
    return json.loads(json.dumps(doc, allow_nan=False, default=json_default))


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
) -> List[str]:
    """Render the requested outputs of ``doc``; returns the problems (each said with ``say``)."""
    md = _markdown_once(doc, full_report, limit)
    wanted: List[Tuple[str, Callable[[], None]]] = []
    if markdown:
        wanted.append((f"Markdown summary {markdown}", lambda: _write(Path(markdown), md())))
    if step_summary:
        wanted.append((f"step summary {step_summary}", lambda: _append(step_summary, md)))
    if html:
        wanted.append((f"HTML report {html}", lambda: _write(Path(html), _html(doc))))
    if openmetrics:
        wanted.append(
            (f"OpenMetrics report {openmetrics}", lambda: _write(Path(openmetrics), _openmetrics(doc)))
        )
    problems: List[str] = []
    for what, render in wanted:
        try:
            render()
        except Exception as exc:  # a report must never crash the run
            line = f"could not write the {what}: {type(exc).__name__}: {exc}"
            problems.append(line)
            say(line)
    return problems


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
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(render() + "\n")


def write_outputs(session: Any, states: Sequence[Any], gates: Optional[Dict[str, int]] = None) -> None:
    """End of a pytest session: the JSON report and every requested rendering of it."""
    config = session.config
    step = _step_summary(config, bool(states or (gates and gates.get("total"))))
    paths = {
        k: config.getoption(f"retrieval_{k}", None) for k in ("report", "markdown", "html", "openmetrics")
    }
    if not (any(paths.values()) or step):
        return
    say = _terminal_say(config)
    if not config.getoption(
        "retrieval_baseline_update", None
    ):  # the rankings and values of the baseline, for diffs
        _load_baselines(states)
    try:
        doc = report_document(states, session, gates)
    except Exception as exc:  # pragma: no cover - defensive
        say(f"could not build the report: {type(exc).__name__}: {exc}")
        return
    if paths["report"]:
        _write_json_report(session, doc, paths["report"], say)
    render_outputs(
        doc,
        markdown=_as_path(paths["markdown"]),
        html=_as_path(paths["html"]),
        openmetrics=_as_path(paths["openmetrics"]),
        step_summary=step,
        say=say,
        full_report=_full_report_hint(paths),
    )


def _step_summary(config: Any, suites: bool) -> Optional[Path]:
    """``$GITHUB_STEP_SUMMARY`` when it is set, the session had suites (or gates: a crashed
    xdist worker hands over none) and ``--retrieval-no-step-summary`` is not given."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    return (
        Path(summary)
        if summary and not config.getoption("retrieval_no_step_summary", None) and suites
        else None
    )


def _terminal_say(config: Any) -> Callable[[str], None]:
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


def _write_json_report(session: Any, doc: Dict[str, Any], path: str, say: Callable[[str], None]) -> None:
    from ..fileio import atomic_write

    text = json.dumps(doc, indent=2, allow_nan=False)
    try:
        atomic_write(Path(path), lambda fh: fh.write(text + "\n"), fsync=False)
    except OSError as exc:  # one line and a failed exit, never a traceback that hides the verdict
        say(f"ERROR: --retrieval-report {path}: not written: {exc.strerror or exc}")
        if session.exitstatus == 0:
            import pytest

            session.exitstatus = pytest.ExitCode.TESTS_FAILED


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
