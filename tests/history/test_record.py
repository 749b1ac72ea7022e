"""The run record's ``run`` section (issue #37): where it ran, from each CI system's variables or
from git, and what a store indexes of a record (``summarize``)."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_retrieval.history.record import build_record, ci_facts, git_facts, run_section, summarize
from pytest_retrieval.stats.distributions import mean_interval
from tests.ci import unavailable

from .records import record

CASES = [
    (
        "github pull request",
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_SHA": "f" * 40,
            "GITHUB_REF": "refs/pull/42/merge",
            "GITHUB_REF_NAME": "42/merge",
            "GITHUB_HEAD_REF": "feature/x",
            "GITHUB_RUN_ID": "9001",
        },
        {"ci": "github", "commit": "f" * 40, "branch": "feature/x", "ci_job": "9001", "pull_request": "42"},
    ),
    (
        "github push",
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_SHA": "a1",
            "GITHUB_REF": "refs/heads/main",
            "GITHUB_REF_NAME": "main",
        },
        {"ci": "github", "commit": "a1", "branch": "main", "ci_job": None, "pull_request": None},
    ),
    (
        "gitlab merge request",
        {
            "GITLAB_CI": "true",
            "CI_COMMIT_SHA": "b2",
            "CI_COMMIT_REF_NAME": "topic",
            "CI_JOB_ID": "77",
            "CI_MERGE_REQUEST_IID": "5",
        },
        {"ci": "gitlab", "commit": "b2", "branch": "topic", "ci_job": "77", "pull_request": "5"},
    ),
    (
        "jenkins",
        {
            "JENKINS_URL": "http://j/",
            "GIT_COMMIT": "c3",
            "BRANCH_NAME": "PR-3",
            "CHANGE_BRANCH": "fix",
            "BUILD_TAG": "jenkins-x-8",
            "CHANGE_ID": "3",
        },
        {"ci": "jenkins", "commit": "c3", "branch": "fix", "ci_job": "jenkins-x-8", "pull_request": "3"},
    ),
    (
        "buildkite, not a pull request",
        {
            "BUILDKITE": "true",
            "BUILDKITE_COMMIT": "d4",
            "BUILDKITE_BRANCH": "main",
            "BUILDKITE_JOB_ID": "j",
            "BUILDKITE_PULL_REQUEST": "false",
        },
        {"ci": "buildkite", "commit": "d4", "branch": "main", "ci_job": "j", "pull_request": None},
    ),
    (
        "circleci",
        {
            "CIRCLECI": "true",
            "CIRCLE_SHA1": "e5",
            "CIRCLE_BRANCH": "b",
            "CIRCLE_BUILD_NUM": "12",
            "CIRCLE_PULL_REQUEST": "https://github.com/o/r/pull/7",
        },
        {"ci": "circleci", "commit": "e5", "branch": "b", "ci_job": "12", "pull_request": "7"},
    ),
    (
        "no CI",
        {"HOME": "/x"},
        {"ci": None, "commit": None, "branch": None, "ci_job": None, "pull_request": None},
    ),
]


@pytest.mark.parametrize("name,env,expected", CASES, ids=[c[0] for c in CASES])
def test_ci_facts(name: str, env: dict, expected: dict) -> None:
    assert ci_facts(env) == expected


def test_run_section_reads_the_ci_variables_of_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for key, value in CASES[0][1].items():
        monkeypatch.setenv(key, value)
    run = run_section(root=tmp_path, tags=["nightly", "nightly", "v2"], gates={"total": 3, "ran": 3})
    assert run["ci"] == "github" and run["pull_request"] == "42" and run["branch"] == "feature/x"
    assert run["tags"] == ["nightly", "v2"] and run["partial"] is False
    assert len(run["id"]) == 32 and run["time"].endswith("Z") and run["host"]
    assert run_section(root=tmp_path, gates={"total": 3, "ran": 2})["partial"] is True


def test_outside_ci_the_commit_and_branch_come_from_git(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        unavailable("needs git")  # fails under CI=true (tests/ci.py)

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "-q", "-b", "trunk")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    run = run_section(root=tmp_path, env={})
    assert run["commit"] == git("rev-parse", "HEAD") and run["branch"] == "trunk" and run["ci"] is None


def test_no_git_checkout_is_no_commit_never_an_error(tmp_path: Path) -> None:
    assert git_facts(tmp_path / "missing") == {"commit": None, "branch": None}
    assert git_facts(tmp_path, timeout=0.000001)["commit"] is None


def test_summarize_gives_every_metric_with_its_t_interval_and_the_gate_verdict() -> None:
    rec = record(ndcg=0.5, queries=5)
    entry, points = summarize(build_record(rec, rec["run"]))
    assert entry.id == rec["run"]["id"] and entry.suites == ("s",)
    assert "query_hashes" not in entry.fingerprints["s"]  # the record keeps them, the entry does not
    by = {p.metric: p for p in points}
    assert set(by) == {"ndcg@10", "mrr", "p50_ms", "p95_ms", "p99_ms", "unjudged_share@10"}
    ndcg = by["ndcg@10"]
    assert ndcg.gated and ndcg.verdict == "passed" and not by["mrr"].gated and by["mrr"].verdict is None
    values = [v["ndcg@10"] for v in rec["suites"][0]["retrievers"][0]["per_query"].values()]
    assert (ndcg.lo, ndcg.hi) == pytest.approx(mean_interval(values))
    # Student t, 4 degrees of freedom: t(0.975, 4) = 2.776445 (tables)
    sd = math.sqrt(sum((v - 0.5) ** 2 for v in values) / 4)
    assert ndcg.hi - 0.5 == pytest.approx(2.776445 * sd / math.sqrt(5), rel=1e-5)
    assert by["p95_ms"].value == 2.0 and by["p95_ms"].lo is None


def test_a_record_without_a_run_section_is_refused() -> None:
    with pytest.raises(ValueError, match="run.id"):
        summarize({"suites": []})
