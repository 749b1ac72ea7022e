"""Per-team threshold files in one run (issue #36): two teams' files gate the suite's one
retrieval, each team's floors their own items with their own owners in every report, and every
floor names the file and line it was set at, passed or not."""

from __future__ import annotations

import json

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
