"""The CI recipes: valid against the GitHub Actions and GitLab CI schemas (and actionlint), the
pre-commit manifest valid, the gate command they run works as written, and the GitLab job's
MR-note script posts once, then updates its note (against a local fake of the GitLab API)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

from .conftest import need_tool

ROOT = Path(__file__).resolve().parents[2]
GITHUB = ROOT / "examples" / "ci" / "github-actions.yml"
GITLAB = ROOT / "examples" / "ci" / "gitlab-ci.yml"
# the workflows with an engine (issue #36): a service container, and a staging cluster's index
GITHUB_ENGINES = [
    ROOT / "examples" / "ci" / f"github-actions-{name}.yml" for name in ("elasticsearch", "staging")
]
HOOKS = ROOT / ".pre-commit-hooks.yaml"


def _run(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=300, **kw)


def test_workflows_validate_against_their_schemas() -> None:
    exe = Path(sys.executable).with_name("check-jsonschema")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "check_jsonschema"]
    todo = [("vendor.github-workflows", p) for p in [GITHUB, *GITHUB_ENGINES]] + [
        ("vendor.gitlab-ci", GITLAB)
    ]
    for schema, path in todo:
        p = _run(*cmd, "--builtin-schema", schema, str(path))
        assert p.returncode == 0, p.stdout + p.stderr


def test_github_workflow_passes_actionlint() -> None:
    actionlint = need_tool("actionlint", "go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12")
    p = _run(actionlint, "-no-color", str(GITHUB), *map(str, GITHUB_ENGINES))
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_engine_workflows_are_complete_and_in_the_ci_page() -> None:
    """The service container has a health check and the index is loaded before the gate; the
    staging recipe reads its credentials from secrets; the CI page names both."""
    service, staging = (yaml.safe_load(p.read_text()) for p in GITHUB_ENGINES)
    job = service["jobs"]["gates"]
    assert "--health-cmd" in job["services"]["elasticsearch"]["options"]
    names = [step.get("name") for step in job["steps"]]
    assert names.index("Load a small index") < names.index("Retrieval gates")
    env = staging["jobs"]["gates"]["env"]
    assert env["SEARCH_PASSWORD"].startswith("${{ secrets.")
    page = (ROOT / "docs" / "how-to" / "ci.md").read_text()
    for path in GITHUB_ENGINES:
        assert f"examples/ci/{path.name}" in page, path.name


def test_pre_commit_manifest_is_valid() -> None:
    p = _run(sys.executable, "-m", "pre_commit", "validate-manifest", str(HOOKS))
    assert p.returncode == 0, p.stdout + p.stderr
    hooks = yaml.safe_load(HOOKS.read_text())
    assert {h["id"] for h in hooks} == {
        "pytest-retrieval",
        "pytest-retrieval-changed",
        "pytest-retrieval-fast",
    }
    assert all(h["entry"].startswith("python -m pytest ") and "-m retrieval" in h["entry"] for h in hooks)
    # both run in pre-commit's default stage (git commit): no stages restriction (#26)
    assert all("stages" not in h for h in hooks)


SUITE = """\
suite: team
judgments:
  inline:
    - {id: q1, text: "solar panels", relevant: {d1: 1}}
    - {id: q2, text: "river floods", relevant: {d2: 1}}
  documents:
    - {id: d1, text: "solar panels in winter"}
    - {id: d2, text: "river flood defences"}
    - {id: d3, text: "wind farms at sea"}
latency:
  warmup: 0
  repetitions: 1
retrievers:
  bm25: {type: bm25}
floors:
  bm25:
    ndcg@10: 0.5
"""
GOLDEN = """\
from pytest_retrieval import assert_in_top


def test_solar_is_found(retrieval_retriever):
    assert_in_top(retrieval_retriever("retrieval_team.yaml", "bm25").search("solar", k=3), "d1", k=1)


def test_wind_is_first_for_rivers(retrieval_retriever):
    assert_in_top(retrieval_retriever("retrieval_team.yaml", "bm25").search("river", k=3), "d3", k=1)


def test_not_a_retrieval_test():
    raise AssertionError("-m retrieval leaves this one out")
"""


def test_pre_commit_try_repo_runs_the_gates_and_the_golden_queries(tmp_path) -> None:
    """``pre-commit try-repo`` of this repository on a scratch team repository: the hook installs
    the plugin from here, runs in the default stage and runs the suite's gates and the Python
    golden-query tests (one of them fails: so does the hook), not the other tests."""
    team = tmp_path / "team"
    (team / "search").mkdir(parents=True)
    (team / "search" / "retrieval_team.yaml").write_text(SUITE)
    (team / "search" / "test_golden.py").write_text(GOLDEN)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "suite"]):
        subprocess.run([*git, *args], cwd=team, check=True, capture_output=True)
    source = os.environ.get("PYTEST_RETRIEVAL_SOURCE") or str(ROOT)  # the wheel pass runs from a copy
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit"),
        # the hook's virtualenv sees this environment's packages: installing the plugin into it
        # builds only the plugin (no download of numpy, pyarrow, ...)
        "VIRTUALENV_SYSTEM_SITE_PACKAGES": "1",
        "GITHUB_STEP_SUMMARY": "",
    }
    env.pop("PYTHONPATH", None)  # the hook imports the plugin it installed, not a checkout
    p = _run(
        sys.executable, "-m", "pre_commit", "try-repo", source, "pytest-retrieval", "--all-files",
        "--verbose", cwd=team, env=env,
    )  # fmt: skip
    said = p.stdout + p.stderr
    assert p.returncode == 1, said
    assert "retrieval gates (pytest-retrieval)" in said and "Failed" in said, said
    assert "FAILED search/test_golden.py::test_wind_is_first_for_rivers" in said, said
    assert "test_not_a_retrieval_test" not in said, said
    assert "1 failed" in said and "deselected" in said, said


def _gate_command(workflow: dict) -> list:
    steps = workflow["jobs"]["gates"]["steps"]
    (run,) = [s["run"] for s in steps if s.get("name") == "Retrieval gates"]
    return shlex.split(run)


def test_the_gate_command_of_the_recipes_works_as_written(tmp_path) -> None:
    gh = yaml.safe_load(GITHUB.read_text())
    gl = yaml.safe_load(GITLAB.read_text())
    cmd = _gate_command(gh)
    gl_cmd = shlex.split(gl["retrieval-gates"]["script"][1])
    assert gl_cmd == cmd + ["--retrieval-openmetrics=retrieval/metrics.txt"] or set(gl_cmd) >= set(cmd)
    assert gl["retrieval-gates"]["artifacts"]["reports"]["metrics"] == "retrieval/metrics.txt"
    summary = tmp_path / "step_summary.md"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
    args = [str(ROOT / a) if a == "example_suite" else a for a in gl_cmd]
    p = subprocess.run(
        [sys.executable, "-m", *args, "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout[-3000:]
    out = tmp_path / "retrieval"
    for name in ("report.json", "summary.md", "report.html", "metrics.txt", "junit.xml"):
        assert (out / name).stat().st_size > 0, name
    # the example suite: 8 gates and 11 golden-query items
    assert summary.read_text().startswith("## ✅ Retrieval gates passed: 0 failed, 0 errored, 19 passed")


class _FakeGitLab(BaseHTTPRequestHandler):
    notes: list = []
    calls: list = []

    def _reply(self, code: int, body) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n)) if n else None

    def do_GET(self):  # noqa: N802
        self.calls.append(("GET", self.path, self.headers.get("PRIVATE-TOKEN")))
        self._reply(200, self.notes)

    def do_POST(self):  # noqa: N802
        body = self._body()
        self.calls.append(("POST", self.path, self.headers.get("PRIVATE-TOKEN")))
        self.notes.append({"id": 7, "body": body["body"]})
        self._reply(201, self.notes[-1])

    def do_PUT(self):  # noqa: N802
        body = self._body()
        self.calls.append(("PUT", self.path, self.headers.get("PRIVATE-TOKEN")))
        self.notes[0]["body"] = body["body"]
        self._reply(200, self.notes[0])

    def log_message(self, *a):
        pass


def test_gitlab_note_script_posts_then_updates_one_note(tmp_path) -> None:
    script = yaml.safe_load(GITLAB.read_text())["retrieval-gates"]["after_script"][0]
    (tmp_path / "retrieval").mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeGitLab)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {
            **os.environ,
            "CI_API_V4_URL": f"http://127.0.0.1:{server.server_port}/api/v4",
            "CI_PROJECT_ID": "42",
            "CI_MERGE_REQUEST_IID": "5",
            "CI_JOB_ID": "99",
            "CI_JOB_URL": "http://gitlab.invalid/job/99",
            "RETRIEVAL_BOT_TOKEN": "token-abc",
        }
        for text in ("## ❌ first push\n", "## ✅ second push\n"):
            (tmp_path / "retrieval" / "summary.md").write_text(text)
            p = subprocess.run(
                ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
            )
            assert p.returncode == 0, p.stderr
    finally:
        server.shutdown()
    methods = [c[0] for c in _FakeGitLab.calls]
    assert methods == ["GET", "POST", "GET", "PUT"]
    assert all(
        c[1].startswith("/api/v4/projects/42/merge_requests/5/notes") and c[2] == "token-abc"
        for c in _FakeGitLab.calls
    )
    (note,) = _FakeGitLab.notes
    assert note["body"].startswith("<!-- pytest-retrieval summary -->\n## ✅ second push")


def test_the_fast_hook_is_the_changed_hook_without_latency() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load(HOOKS.read_text())}
    fast, changed = hooks["pytest-retrieval-fast"], hooks["pytest-retrieval-changed"]
    assert fast["files"] == changed["files"]
    assert fast["entry"] == changed["entry"] + " --retrieval-no-latency"
    assert 'docs/how-to/ci.md, section "pre-commit"' in HOOKS.read_text()
