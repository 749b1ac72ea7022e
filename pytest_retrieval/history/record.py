"""The run record (issue #37): one per pytest session, the JSON report document
(``reports/outputs.report_document``) with a ``run`` section saying where and when it ran.

The ``run`` section: ``id`` (a UUID4 hex, made once per session), ``time`` (UTC, ISO 8601),
``host``, ``commit``, ``branch``, ``ci`` (the CI system), ``ci_job``, ``pull_request`` (from the
usual CI variables, else ``git rev-parse`` in the rootdir with a short timeout; never an error),
``tags`` (``--retrieval-history-tag``), ``partial`` (some gates of the session got no verdict:
``pytest_plugin/coverage.py``; the counts are the report's ``session.gates``) and ``exitstatus``.

:func:`summarize` turns a record into what a store keeps beside it: the ``RunEntry`` and one
``MetricPoint`` per (suite, retriever, metric), each with the 95% interval of its mean
(Student t over the per-query values: ``stats.distributions.mean_interval``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .store import MetricPoint, RunEntry

__all__ = [
    "RUN_KEYS",
    "build_record",
    "ci_facts",
    "format_time",
    "git_facts",
    "new_run_id",
    "parse_time",
    "run_section",
    "summarize",
]

#: the keys of a record's ``run`` section, in the order they are written
RUN_KEYS = (
    "id",
    "time",
    "host",
    "commit",
    "branch",
    "ci",
    "ci_job",
    "pull_request",
    "tags",
    "partial",
    "exitstatus",
)
GIT_TIMEOUT = 2.0  # seconds: a slow or hung git is no commit, never a slow session
_LATENCY = ("p50", "p95", "p99")  # latency_ms keys kept as points, as p50_ms, ... (the floors' names)


def new_run_id() -> str:
    return uuid.uuid4().hex


def format_time(t: datetime) -> str:
    """UTC, microseconds, ``Z``: the same width always, so the text sorts as the time (a naive
    time is UTC)."""
    t = t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    """A record's time (``format_time``, or any ISO 8601 time; naive is UTC)."""
    t = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


# ------------------------------------------------------------------ where it ran


#: the CI systems, in the order they are looked for: (name, the variable that says it is this
#: one, then commit, branch(es), job, pull request: each a list of variables, the first set
#: wins). Sources: each system's documented job variables.
_CI: Tuple[Tuple[str, Tuple[str, ...], Dict[str, Tuple[str, ...]]], ...] = (
    (
        "github",  # on a pull request GITHUB_REF_NAME is "N/merge"; GITHUB_HEAD_REF is the PR's branch
        ("GITHUB_ACTIONS", "GITHUB_SHA"),
        {
            "commit": ("GITHUB_SHA",),
            "branch": ("GITHUB_HEAD_REF", "GITHUB_REF_NAME"),
            "ci_job": ("GITHUB_RUN_ID",),
            "pull_request": ("GITHUB_REF",),  # refs/pull/N/merge
        },
    ),
    (
        "gitlab",
        ("GITLAB_CI", "CI_COMMIT_SHA"),
        {
            "commit": ("CI_COMMIT_SHA",),
            "branch": ("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "CI_COMMIT_REF_NAME"),
            "ci_job": ("CI_JOB_ID",),
            "pull_request": ("CI_MERGE_REQUEST_IID",),
        },
    ),
    (
        "buildkite",
        ("BUILDKITE",),
        {
            "commit": ("BUILDKITE_COMMIT",),
            "branch": ("BUILDKITE_BRANCH",),
            "ci_job": ("BUILDKITE_JOB_ID", "BUILDKITE_BUILD_NUMBER"),
            "pull_request": ("BUILDKITE_PULL_REQUEST",),  # "false" when not a PR
        },
    ),
    (
        "circleci",
        ("CIRCLECI",),
        {
            "commit": ("CIRCLE_SHA1",),
            "branch": ("CIRCLE_BRANCH",),
            "ci_job": ("CIRCLE_BUILD_NUM",),
            "pull_request": ("CIRCLE_PULL_REQUEST",),  # the PR's URL
        },
    ),
    (
        "jenkins",
        ("JENKINS_URL", "JENKINS_HOME"),
        {
            "commit": ("GIT_COMMIT",),
            "branch": ("CHANGE_BRANCH", "BRANCH_NAME", "GIT_BRANCH"),
            "ci_job": ("BUILD_TAG", "BUILD_NUMBER"),
            "pull_request": ("CHANGE_ID",),
        },
    ),
)


def _pr_number(text: Optional[str]) -> Optional[str]:
    """A pull request's number from GitHub's ``refs/pull/N/merge``, CircleCI's PR URL, or as it
    is (GitLab's IID, Jenkins' CHANGE_ID); None for Buildkite's ``false``."""
    if not text or text == "false":
        return None
    parts = text.rstrip("/").split("/")
    if text.startswith("refs/"):
        return parts[2] if len(parts) == 4 and parts[1] == "pull" and parts[2].isdigit() else None
    return parts[-1] if parts[-1].isdigit() else (None if "/" in text else text)


def ci_facts(env: Mapping[str, str]) -> Dict[str, Optional[str]]:
    """``ci``, ``commit``, ``branch``, ``ci_job``, ``pull_request`` from the CI system's own
    variables (GitHub Actions, GitLab CI, Buildkite, CircleCI, Jenkins), each None when not set."""

    def get(names: Sequence[str]) -> Optional[str]:
        return next((v for v in ((env.get(n) or "").strip() for n in names) if v), None)

    for name, markers, variables in _CI:
        if get(markers):
            facts: Dict[str, Optional[str]] = {"ci": name}
            facts.update({key: get(names) for key, names in variables.items()})
            facts["pull_request"] = _pr_number(facts["pull_request"])
            return facts
    return {"ci": None, "commit": None, "branch": None, "ci_job": None, "pull_request": None}


def git_facts(root: Path, timeout: float = GIT_TIMEOUT) -> Dict[str, Optional[str]]:
    """``commit`` and ``branch`` of the git checkout at ``root``; None for what git cannot say
    (no git, not a checkout, a detached head's branch, a git slower than ``timeout``)."""

    def git(*args: str) -> Optional[str]:
        try:
            out = subprocess.run(
                ["git", *args],
                cwd=str(root),
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
            )
        except (OSError, subprocess.SubprocessError, ValueError):
            return None
        text = out.stdout.strip() if out.returncode == 0 else ""
        return text if text and text != "HEAD" else None

    return {"commit": git("rev-parse", "HEAD"), "branch": git("rev-parse", "--abbrev-ref", "HEAD")}


def run_section(
    *,
    root: Path,
    run_id: Optional[str] = None,
    time: Optional[datetime] = None,
    tags: Sequence[str] = (),
    gates: Optional[Mapping[str, int]] = None,
    exitstatus: int = 0,
    env: Optional[Mapping[str, str]] = None,
) -> Dict[str, Any]:
    """The ``run`` section of a record. ``partial``: some gate of the session got no verdict
    (``gates``: ``GateCoverage.as_dict``, ``ran`` < ``total``)."""
    facts = ci_facts(os.environ if env is None else env)
    if not (facts["commit"] and facts["branch"]):
        local = git_facts(root)
        facts["commit"] = facts["commit"] or local["commit"]
        facts["branch"] = facts["branch"] or local["branch"]
    counts = dict(gates or {})
    partial = bool(counts) and int(counts.get("ran", 0)) < int(counts.get("total", 0))
    run = {
        "id": run_id or new_run_id(),
        "time": format_time(time or datetime.now(timezone.utc)),
        "host": socket.gethostname() or None,
        **facts,
        "tags": list(dict.fromkeys(tags)),
        "partial": partial,
        "exitstatus": int(exitstatus),
    }
    return {k: run[k] for k in RUN_KEYS}


def build_record(doc: Mapping[str, Any], run: Mapping[str, Any]) -> Dict[str, Any]:
    """The record: the report document with its ``run`` section (first, for a reader's eye)."""
    return {"version": doc.get("version"), "run": dict(run), **{k: v for k, v in doc.items() if k != "run"}}


# ------------------------------------------------------------------ what a store indexes


def entry_of(record: Mapping[str, Any]) -> RunEntry:
    """The record's ``RunEntry`` (its ``run`` section and suites' fingerprints)."""
    run = record.get("run") or {}
    if not isinstance(run, Mapping) or not run.get("id") or not run.get("time"):
        raise ValueError("not a run record: no run.id and run.time")
    suites = [s for s in record.get("suites") or () if isinstance(s, Mapping)]
    return RunEntry(
        id=str(run["id"]),
        time=parse_time(str(run["time"])),
        commit=run.get("commit"),
        branch=run.get("branch"),
        ci_job=run.get("ci_job"),
        pull_request=run.get("pull_request"),
        host=run.get("host"),
        partial=bool(run.get("partial")),
        exitstatus=int(run.get("exitstatus") or 0),
        tags=tuple(run.get("tags") or ()),
        suites=tuple(str(s.get("suite")) for s in suites),
        # without the per-query hashes (thousands of them): ``load`` has the whole record
        fingerprints={
            str(s.get("suite")): {
                k: v
                for k, v in (s.get("fingerprint") or {}).items()
                if k not in ("query_hashes", "canary_hashes")
            }
            for s in suites
        },
    )


def summarize(record: Mapping[str, Any]) -> Tuple[RunEntry, List[MetricPoint]]:
    """The record's ``RunEntry`` and its points: per suite and retriever, every aggregate
    metric (with the t interval of its mean over the per-query values), the latency
    percentiles (``p50_ms``, ``p95_ms``, ``p99_ms``) and ``unjudged_share@10``; ``gated`` and
    ``verdict`` from the suite's gated metrics and the outcomes of their gates."""
    entry = entry_of(record)
    points: List[MetricPoint] = []
    for suite in record.get("suites") or ():
        if isinstance(suite, Mapping) and isinstance(suite.get("retrievers"), list):
            points.extend(_suite_points(entry, suite))
    return entry, points


def _suite_points(entry: RunEntry, suite: Mapping[str, Any]) -> List[MetricPoint]:
    from ..stats.distributions import mean_interval

    name = str(suite.get("suite"))
    verdicts = _verdicts(suite)
    gated = {
        (g.get("retriever"), g.get("metric")) for g in suite.get("gated") or () if isinstance(g, Mapping)
    }
    share = suite.get("unjudged_share") or {}
    out: List[MetricPoint] = []

    def point(retriever: str, metric: str, value: Any, band: Tuple[Optional[float], Optional[float]]) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            is_gated = (retriever, metric) in gated or (None, metric) in gated
            out.append(
                MetricPoint(
                    run_id=entry.id,
                    time=entry.time,
                    suite=name,
                    retriever=retriever,
                    metric=metric,
                    value=float(value),
                    lo=band[0],
                    hi=band[1],
                    gated=is_gated or (retriever, metric) in verdicts,
                    verdict=verdicts.get((retriever, metric)),
                )
            )

    for r in suite["retrievers"]:
        if not isinstance(r, Mapping):
            continue
        rname = str(r.get("name"))
        per_query = r.get("per_query")
        # plain dict and type checks: typing's Mapping check costs 10x, over 10,000s of values
        rows = [v for v in per_query.values() if type(v) is dict] if type(per_query) is dict else []
        for metric, value in (r.get("metrics") or {}).items():
            values = [x for x in (row.get(metric) for row in rows) if type(x) is float or type(x) is int]
            point(rname, metric, value, mean_interval(values))
        for q in _LATENCY:
            point(rname, f"{q}_ms", (r.get("latency_ms") or {}).get(q), (None, None))
        if isinstance(share, Mapping):
            point(rname, "unjudged_share@10", share.get(rname), (None, None))
    return out


_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


def _verdicts(suite: Mapping[str, Any]) -> Dict[Tuple[str, str], str]:
    """(retriever, metric) -> the worst outcome of the floors and baseline gates that judged it."""
    out: Dict[Tuple[str, str], str] = {}
    for key in ("gates", "regressions", "references"):
        for g in suite.get(key) or ():
            if not isinstance(g, Mapping) or g.get("stratum"):
                continue
            where = (str(g.get("retriever")), str(g.get("metric")))
            verdict = "passed" if g.get("passed") else "failed"
            if _RANK[verdict] >= _RANK.get(out.get(where, "passed"), 0):
                out[where] = verdict
    return out
