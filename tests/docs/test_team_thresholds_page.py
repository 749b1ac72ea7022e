"""docs/how-to/team-thresholds.md walked as a reader would: its suite keys added to the shipped
example suite, its two team files written where the page names them, one pytest run; every team's
floors are their own items over the one run, with their owners and origins in the report."""

from __future__ import annotations

import json
import shutil

import yaml

from tests.docs.snippets import ROOT, snippets

PAGE = ROOT / "docs" / "how-to" / "team-thresholds.md"
pytest_plugins = ["pytester"]


def _files() -> dict:
    """The page's YAML blocks by the file their first comment names (``# teams/ranking.yaml``)."""
    out = {}
    for s in snippets(PAGE):
        first = s.code.splitlines()[0]
        if s.lang == "yaml" and first.startswith("# "):
            out[first[2:].split(":")[0].split()[0]] = s.code
    return out


def test_the_page_runs_as_written(pytester) -> None:
    files = _files()
    assert set(files) == {"retrieval_search.yaml", "teams/ranking.yaml", "teams/relevance.yaml"}
    shutil.copytree(ROOT / "example_suite" / "data", pytester.path / "data")
    example = (ROOT / "example_suite" / "retrieval_scifact_mini.yaml").read_text(encoding="utf-8")
    keys = yaml.safe_load(files.pop("retrieval_search.yaml"))
    (pytester.path / "retrieval_search.yaml").write_text(
        example + "\n" + yaml.safe_dump(keys), encoding="utf-8"
    )
    for name, text in files.items():
        (pytester.path / name).parent.mkdir(exist_ok=True)
        (pytester.path / name).write_text(text, encoding="utf-8")
    report = pytester.path / "r.json"
    res = pytester.runpytest(
        "-p", "no:cacheprovider", "-rA", "--retrieval-no-latency", f"--retrieval-report={report}"
    )
    out = res.stdout.str()
    assert "retrieval_search.yaml::ranking::rrf::ndcg@10" in out
    assert "retrieval_search.yaml::relevance::weighted::ndcg@10" in out
    (suite,) = json.loads(report.read_text(encoding="utf-8"))["suites"]
    teams = {g["team"]: g for g in suite["gates"] if g.get("team")}
    assert (
        teams["ranking"]["owners"] == ["@org/ranking"]
        and teams["ranking"]["origin"] == "teams/ranking.yaml:4"
    )
    assert teams["relevance"]["mention"] is True
    assert all(g["origin"] for g in suite["gates"])
