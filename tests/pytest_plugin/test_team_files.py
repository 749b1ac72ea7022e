"""Per-team threshold files in one run (issue #36): two teams' files gate the suite's one
retrieval, each team's floors their own items with their own owners in every report, and every
floor names the file and line it was set at, passed or not."""

from __future__ import annotations

import json
import re

from tests.tiny import TINY_SUITE

pytest_plugins = ["pytester"]

RANKING = "owner: '@org/ranking'\nfloors:\n  rrf:\n    ndcg@10: 0.99\n"  # fails: a team's own failure
RELEVANCE = "owner: '@org/relevance'\nmention: true\nfloors:\n  bm25: {mrr@10: 0.3}\n"


def test_two_team_files_gate_one_run_with_their_own_items_and_owners(pytester) -> None:
    pytester.mkdir("teams")
    (pytester.path / "teams" / "ranking.yaml").write_text(RANKING, encoding="utf-8")
    (pytester.path / "teams" / "relevance.yaml").write_text(RELEVANCE, encoding="utf-8")
    suite = TINY_SUITE + "owner: '@org/search'\nteams: [teams/ranking.yaml, teams/relevance.yaml]\n"
    pytester.makefile(".yaml", retrieval_tiny=suite)
    out = pytester.path / "r.json"
    md = pytester.path / "r.md"
    res = pytester.runpytest(
        "-p", "no:cacheprovider", "-rA", f"--retrieval-report={out}", f"--retrieval-markdown={md}",
        f"--junitxml={pytester.path / 'j.xml'}",
    )  # fmt: skip
    res.assert_outcomes(passed=4, failed=1)
    text = res.stdout.str()
    assert "PASSED retrieval_tiny.yaml::relevance::bm25::mrr@10" in text
    assert "FAILED retrieval_tiny.yaml::ranking::rrf::ndcg@10" in text
    assert "tiny :: ranking :: rrf :: ndcg@10 = " in text and "floor set at teams/ranking.yaml:4" in text
    # every PASS line names where its floor was set, and its owners
    assert "PASS  bm25 ndcg@10 = " in text and "set at retrieval_tiny.yaml:" in text
    assert (
        "PASS  relevance :: bm25 mrr@10 = " in text
        and "set at teams/relevance.yaml:4, owner @org/relevance" in text
    )

    doc = json.loads(out.read_text(encoding="utf-8"))
    (s,) = doc["suites"]  # one suite, one run: the teams read it
    assert s["runs"] == 1
    assert all(g["origin"] for g in s["gates"])
    team_items = {(it.get("team"), it["retriever"], it["gate"]): it for it in s["items"] if it.get("team")}
    assert team_items[("ranking", "rrf", "ndcg@10")]["outcome"] == "failed"
    assert team_items[("ranking", "rrf", "ndcg@10")]["owners"] == ["@org/ranking"]

    summary = md.read_text(encoding="utf-8")
    assert "`ranking::rrf::ndcg@10` (owner `@org/ranking`)" in summary  # code: notifies no one
    assert "**Team `relevance`** (owner @org/relevance)" in summary  # mention: true, a live mention
    assert "teams/ranking.yaml:4" in summary
    junit = (pytester.path / "j.xml").read_text(encoding="utf-8")
    assert 'name="retrieval_team" value="ranking"' in junit
    assert 'name="retrieval_origin" value="teams/ranking.yaml:4"' in junit


TEAM_REGRESSION = "owner: '@org/ranking'\nregression:\n  max_drop: {ndcg@10: 0.01}\n  retrievers: [rrf]\n"


def test_a_team_files_baseline_gates_compare_with_the_suites_one_baseline(pytester) -> None:
    """A team file's ``regression.max_drop`` gates are the team's own items over the suite's one
    run and one baseline; every baseline verdict (the suite's too) names where its max_drop was
    set in the PASS line, the JSON report, the Markdown and JUnit."""
    pytester.mkdir("teams")
    (pytester.path / "teams" / "ranking.yaml").write_text(TEAM_REGRESSION, encoding="utf-8")
    suite = (
        TINY_SUITE
        + "regression:\n  max_drop: {ndcg@10: 0.05}\n  retrievers: [bm25]\nteams: [teams/ranking.yaml]\n"
    )
    pytester.makefile(".yaml", retrieval_tiny=suite)
    first = pytester.runpytest(
        "-p", "no:cacheprovider", "--retrieval-no-latency", "--retrieval-baseline-update"
    )
    assert (pytester.path / "retrieval_tiny.baseline.json").exists(), first.stdout.str()[-2000:]
    out, md = pytester.path / "r.json", pytester.path / "r.md"
    res = pytester.runpytest(
        "-p", "no:cacheprovider", "-rA", "--retrieval-no-latency", f"--retrieval-report={out}",
        f"--retrieval-markdown={md}", f"--junitxml={pytester.path / 'j.xml'}",
    )  # fmt: skip
    text = res.stdout.str()
    assert "PASSED retrieval_tiny.yaml::ranking::rrf::baseline:ndcg@10" in text, text[-3000:]
    assert "PASSED retrieval_tiny.yaml::bm25::baseline:ndcg@10" in text
    assert "retrieval_tiny.yaml::rrf::baseline:ndcg@10" not in text.replace("::ranking::rrf", "")
    assert "PASS  ranking :: rrf ndcg@10: mean diff +0.0000" in text
    assert "max_drop set at teams/ranking.yaml:3, owner @org/ranking" in text
    assert "PASS  bm25 ndcg@10: mean diff" in text and "max_drop set at retrieval_tiny.yaml:" in text

    (s,) = json.loads(out.read_text(encoding="utf-8"))["suites"]
    assert s["runs"] == 1
    regs = {(r.get("team"), r["retriever"]): r for r in s["regressions"]}
    assert regs[("ranking", "rrf")]["origin"] == "teams/ranking.yaml:3"
    assert (
        regs[("ranking", "rrf")]["owners"] == ["@org/ranking"]
        and regs[("ranking", "rrf")]["max_drop"] == 0.01
    )
    assert regs[(None, "bm25")]["origin"].startswith("retrieval_tiny.yaml:")
    gated = [g for g in s["gated"] if g["kind"] == "regression"]
    assert {(g.get("team"), g["retriever"], g["origin"].split(":")[0]) for g in gated} == {
        (None, "bm25", "retrieval_tiny.yaml"),
        ("ranking", "rrf", "teams/ranking.yaml"),
    }
    item = next(it for it in s["items"] if it.get("team") == "ranking")
    assert item["gate"] == "baseline:ndcg@10" and item["owners"] == ["@org/ranking"]

    summary = md.read_text(encoding="utf-8")
    assert "**Team `ranking`** (owner `@org/ranking`)" in summary
    assert (
        "`rrf::baseline:ndcg@10`" in summary
        and "max_drop 0.01" in summary
        and "teams/ranking.yaml:3" in summary
    )
    junit = (pytester.path / "j.xml").read_text(encoding="utf-8")
    assert 'name="retrieval_origin" value="teams/ranking.yaml:3"' in junit


def test_a_team_baseline_gate_needs_the_suites_regression_block(pytester) -> None:
    pytester.mkdir("teams")
    (pytester.path / "teams" / "ranking.yaml").write_text(TEAM_REGRESSION, encoding="utf-8")
    pytester.makefile(".yaml", retrieval_tiny=TINY_SUITE + "teams: [teams/ranking.yaml]\n")
    res = pytester.runpytest("-p", "no:cacheprovider", "--retrieval-no-latency")
    text = res.stdout.str()
    assert re.search(
        r"ranking\.yaml:\d+: regression: a team's regression gates compare with the suite's baseline", text
    )
    assert "Traceback" not in text
