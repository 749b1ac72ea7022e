"""Every ``--retrieval-*`` option of pytest, what some of them change in every suite, and the
check of the output files' paths when pytest starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Optional

import pytest

from .history import add_history_options, check_history_options
from .history_view import add_recent_option
from .ini import add_ini, option_label

__all__ = ["add_options", "check_output_paths", "suite_overrides"]


def add_options(parser: pytest.Parser) -> None:
    g = parser.getgroup("retrieval", "retrieval regression gates (pytest-retrieval)")
    g.addoption(
        "--retrieval-report",
        metavar="PATH",
        default=None,
        help="write a JSON report of every suite (metrics, per-query values, gates)",
    )
    g.addoption(
        "--retrieval-profile",
        choices=("exp", "trec"),
        default=None,
        help="nDCG gain for every suite: exp (2^rel-1, default) or trec (trec_eval, linear)",
    )
    g.addoption(
        "--retrieval-backend",
        choices=("embedded", "elasticsearch", "opensearch"),
        default=None,
        help="run every suite on this backend instead of the file's",
    )
    g.addoption(
        "--retrieval-override",
        metavar="FILE",
        action="append",
        default=[],
        help="a YAML file merged over every suite (e.g. a team's floors); repeatable",
    )
    g.addoption(
        "--retrieval-baseline-update",
        action="store_true",
        default=False,
        help="write each suite's baseline (per-query values, latency, input fingerprint) "
        "instead of comparing against it; review the diff and commit it",
    )
    g.addoption(
        "--retrieval-export-unjudged",
        metavar="PATH",
        default=None,
        help="write every (query, doc) in a retriever's top 10 that has no judgment, as "
        "a JSONL annotation queue (see `pytest-retrieval judge import`)",
    )
    g.addoption(
        "--retrieval-runs",
        metavar="DIR",
        default=None,
        help="write DIR/<suite>/<retriever>.run (TREC runs exactly as scored), qrels.txt and "
        "evaluate.sh (the `pytest-retrieval evaluate` commands that reproduce the numbers)",
    )
    g.addoption(
        "--retrieval-no-latency",
        action="store_true",
        default=False,
        help="skip the latency pass (latency floors are then skipped with that reason)",
    )
    _add_report_options(g)
    _add_rank_eval_option(g)
    add_history_options(g)
    add_recent_option(g)
    add_ini(parser)  # an ini key for each (ini.py)


def _add_rank_eval_option(group: pytest.OptionGroup) -> None:
    """The engine's own ``_rank_eval`` beside the plugin's scoring (``execution/rank_eval.py``)."""
    group.addoption(
        "--retrieval-rank-eval",
        action="store_true",
        default=False,
        help="also run each suite's engine retrievers through the engine's own _rank_eval API and "
        "report where its per-query values disagree with the plugin's (evaluation.rank_eval)",
    )


def _add_report_options(group: pytest.OptionGroup) -> None:
    """The renderings of the JSON report (``reports/outputs.py``)."""
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


def suite_overrides(config: pytest.Config) -> Dict[str, Any]:
    """The settings ``--retrieval-profile``, ``--retrieval-backend`` and ``--retrieval-rank-eval``
    override in every suite."""
    out: Dict[str, Any] = {}
    if config.getoption("retrieval_profile"):
        out["evaluation.profile"] = config.getoption("retrieval_profile")
    if config.getoption("retrieval_backend"):
        out["backend.type"] = config.getoption("retrieval_backend")
    if config.getoption("retrieval_rank_eval"):
        out["evaluation.rank_eval"] = True
    return out


#: the output files of a run and what each writes (output_paths.FORMATS)
_OUTPUTS: Dict[str, Optional[str]] = {
    "retrieval_report": "json",
    "retrieval_export_unjudged": "jsonl",
    "retrieval_markdown": "markdown",
    "retrieval_html": "html",
    "retrieval_openmetrics": "openmetrics",
    "retrieval_runs": None,  # a folder: not one of the files, any name
}


def check_output_paths(config: pytest.Config) -> None:
    """The output files are checked when pytest starts, not after the run (issue #11): none is
    an override file, no two are one file, each extension names what is written (issue #32);
    the JSON report and the unjudged export can be written there."""
    from ..output_paths import Output, OutputPathError, check_outputs

    outputs = [
        Output(option_label(config, o), config.getoption(o, None), kind) for o, kind in _OUTPUTS.items()
    ]
    overrides = [
        (option_label(config, "retrieval_override"), f) for f in config.getoption("retrieval_override") or []
    ]
    try:
        check_outputs(outputs, overrides)
    except OutputPathError as exc:
        raise pytest.UsageError(str(exc)) from None
    for option in ("retrieval_report", "retrieval_export_unjudged"):
        _check_output_path(config.getoption(option, None), option_label(config, option))
    check_history_options(config)


def _check_output_path(value: Optional[str], flag: str) -> None:
    if not value:
        return
    import os

    path = Path(value)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise pytest.UsageError(f"{flag} {value}: is a directory, expected a file path")
    if path.exists() and not path.is_file():
        raise pytest.UsageError(f"{flag} {value}: not a regular file")
    import tempfile

    try:  # the same steps the write takes at the end: the folder, then a file in it
        parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=str(parent))
        os.close(fd)
        os.unlink(probe)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        why = getattr(exc, "strerror", None) or exc
        from ..safe_names import one_line

        raise pytest.UsageError(f"{flag} {one_line(value)}: cannot write there ({why})") from None
