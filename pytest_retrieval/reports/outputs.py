"""Where the reports go: plugin options, the end-of-session writer, and the ``report`` and
``compare`` commands. Every output is rendered from the JSON report document alone, so
``pytest --retrieval-markdown`` and ``pytest-retrieval report REPORT.json --markdown`` are the
same code. A report that cannot be written is said on the terminal; it never fails the run.

Cheap to import (the plugin imports it at start-up): everything heavy is imported on use.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence


def add_report_options(group: Any) -> None:
    group.addoption(
        "--retrieval-markdown",
        metavar="PATH",
        default=None,
        help="write a Markdown summary (verdict, gated metrics against the baseline, worst-moved "
        "queries with ranking diffs; under 60,000 characters) for a PR comment",
    )
    group.addoption(
        "--retrieval-html",
        metavar="PATH",
        default=None,
        help="write a self-contained HTML report with plots and a per-query table "
        "(plots need matplotlib: pip install 'pytest-retrieval[html]')",
    )
    group.addoption(
        "--retrieval-openmetrics",
        metavar="PATH",
        default=None,
        help="write the metrics as OpenMetrics text (GitLab's metrics report)",
    )
    group.addoption(
        "--retrieval-no-step-summary",
        action="store_true",
        default=False,
        help="do not append the Markdown summary to $GITHUB_STEP_SUMMARY (done when it is set)",
    )


# ------------------------------------------------------------------ the document


def report_document(states: Sequence[Any], session: Any = None) -> Dict[str, Any]:
    """The JSON report as a plain dict (what ``--retrieval-report`` writes)."""
    from .. import __version__
    from .json_report import REPORT_VERSION, finite_only, json_default, suite_report

    doc: Dict[str, Any] = {
        "version": REPORT_VERSION,
        "plugin_version": __version__,
        "suites": [suite_report(s) for s in states],
    }
    if session is not None:
        doc["session"] = _session_info(session)
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
    from ..fileio import atomic_write

    problems: List[str] = []

    def attempt(what: str, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception as exc:  # a report must never crash the run
            line = f"could not write the {what}: {type(exc).__name__}: {exc}"
            problems.append(line)
            say(line)

    md_text: Dict[str, str] = {}

    def md() -> str:
        if "t" not in md_text:
            from .markdown import render_markdown

            kw = {"limit": limit} if limit else {}
            md_text["t"] = render_markdown(doc, full_report=full_report, **kw)
        return md_text["t"]

    def write(path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, lambda fh: fh.write(text), fsync=False)

    if markdown:
        attempt(f"Markdown summary {markdown}", lambda: write(Path(markdown), md()))
    if step_summary:

        def append() -> None:
            with open(step_summary, "a", encoding="utf-8") as fh:
                fh.write(md() + "\n")

        attempt(f"step summary {step_summary}", append)
    if html:

        def html_out() -> None:
            from .html import render_html

            write(Path(html), render_html(doc))

        attempt(f"HTML report {html}", html_out)
    if openmetrics:

        def om() -> None:
            from .openmetrics import render_openmetrics

            write(Path(openmetrics), render_openmetrics(doc))

        attempt(f"OpenMetrics report {openmetrics}", om)
    return problems


def write_outputs(session: Any, states: Sequence[Any]) -> None:
    """End of a pytest session: the JSON report and every requested rendering of it."""
    config = session.config
    opt = lambda name: config.getoption(name, None)  # noqa: E731
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    step = Path(summary) if summary and not opt("retrieval_no_step_summary") and states else None
    paths = {k: opt(f"retrieval_{k}") for k in ("report", "markdown", "html", "openmetrics")}
    if not (any(paths.values()) or step):
        return
    tr = config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str) -> None:
        if tr is not None:
            tr.write_line(f"[retrieval] {line}")
        else:  # pragma: no cover
            print(f"[retrieval] {line}", file=sys.stderr)

    if not opt("retrieval_baseline_update"):  # the rankings and values of the baseline, for diffs
        for state in states:
            if state.result is not None:
                try:
                    state.baseline()
                except Exception:  # noqa: BLE001 - the regression items already reported it
                    pass
    try:
        doc = report_document(states, session)
    except Exception as exc:  # pragma: no cover - defensive
        say(f"could not build the report: {type(exc).__name__}: {exc}")
        return
    if paths["report"]:
        from ..fileio import atomic_write

        text = json.dumps(doc, indent=2, allow_nan=False)
        try:
            atomic_write(Path(paths["report"]), lambda fh: fh.write(text + "\n"), fsync=False)
        except OSError as exc:  # one line and a failed exit, never a traceback that hides the verdict
            say(f"ERROR: --retrieval-report {paths['report']}: not written: {exc.strerror or exc}")
            if session.exitstatus == 0:
                import pytest

                session.exitstatus = pytest.ExitCode.TESTS_FAILED
    hint = None
    if paths["html"]:
        hint = f"the HTML report ({Path(paths['html']).name})"
    elif paths["report"]:
        hint = f"the JSON report ({Path(paths['report']).name})"
    render_outputs(
        doc,
        markdown=paths["markdown"] and Path(paths["markdown"]),
        html=paths["html"] and Path(paths["html"]),
        openmetrics=paths["openmetrics"] and Path(paths["openmetrics"]),
        step_summary=step,
        say=say,
        full_report=hint,
    )


# ------------------------------------------------------------------ commands


def _load(path: str) -> Dict[str, Any]:
    from ..errors import RetrievalError

    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RetrievalError(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RetrievalError(f"{path}: not a JSON report ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("suites"), list):
        raise RetrievalError(f"{path}: not a pytest-retrieval JSON report (no 'suites' list)")
    return doc


def _report(args: Any) -> int:
    doc = _load(args.report)
    if not (args.markdown or args.html or args.openmetrics):
        from .markdown import render_markdown

        sys.stdout.write(render_markdown(doc, limit=args.max_chars))
        return 0
    problems = render_outputs(
        doc,
        markdown=args.markdown and Path(args.markdown),
        html=args.html and Path(args.html),
        openmetrics=args.openmetrics and Path(args.openmetrics),
        say=lambda line: print(f"pytest-retrieval: {line}", file=sys.stderr),
        full_report=f"the JSON report ({Path(args.report).name})",
        limit=args.max_chars,
    )
    return 1 if problems else 0


def _compare(args: Any) -> int:
    from .compare import compare_reports, render_compare_markdown, render_compare_text

    a, b = _load(args.a), _load(args.b)
    cmp = compare_reports(
        a,
        b,
        metrics=args.metric,
        max_drop=args.max_drop,
        confidence=args.confidence,
        resamples=args.resamples,
        names=(Path(args.a).name, Path(args.b).name),
    )
    if args.json:
        print(json.dumps(cmp.as_dict(), indent=2))
    else:
        print(render_compare_text(cmp))
    if args.markdown:
        from ..fileio import atomic_write

        markdown = render_compare_markdown(cmp)
        atomic_write(args.markdown, lambda fh: fh.write(markdown), fsync=False)
    return 1 if args.fail_on_regression and cmp.regressions else 0


def register(sub: Any) -> None:
    """``pytest-retrieval report`` and ``pytest-retrieval compare``."""
    from .markdown import LIMIT

    r = sub.add_parser(
        "report",
        help="render a JSON report (--retrieval-report) as Markdown, HTML or OpenMetrics",
    )
    r.add_argument("report", help="the JSON report")
    r.add_argument(
        "--markdown", metavar="OUT.md", help="the Markdown summary (stdout when no output is named)"
    )
    r.add_argument("--html", metavar="OUT.html", help="the self-contained HTML report")
    r.add_argument("--openmetrics", metavar="OUT.txt", help="OpenMetrics text (GitLab metrics report)")
    r.add_argument("--max-chars", type=int, default=LIMIT, help=f"Markdown size limit (default {LIMIT:,})")
    r.set_defaults(func=_report)

    c = sub.add_parser(
        "compare",
        help="two JSON reports side by side: values, difference, paired test, won/lost/tied",
    )
    c.add_argument("a", help="the reference JSON report (e.g. main)")
    c.add_argument("b", help="the JSON report compared with it (e.g. the pull request)")
    c.add_argument("-m", "--metric", action="append", help="metrics compared (default: the gated ones)")
    c.add_argument(
        "--max-drop",
        type=float,
        default=None,
        help="largest tolerated mean drop (default: B's regression.max_drop, else 0.01)",
    )
    c.add_argument("--confidence", type=float, default=0.95)
    c.add_argument("--resamples", type=int, default=10000)
    c.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a metric regressed beyond its margin (non-inferiority not shown)",
    )
    c.add_argument("--markdown", metavar="OUT.md", help="also write the comparison as Markdown")
    c.add_argument("--json", action="store_true", help="print JSON")
    c.set_defaults(func=_compare)
