"""Team threshold files and where every floor came from (issue #36): ``teams:`` floors stamped
with their team, owners and origin; a floor a later file lowered names the value it replaced."""

from __future__ import annotations

from pathlib import Path

from pytest_retrieval.config.load import load_suite
from tests.tiny import TINY_SUITE


def _write(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / "teams").mkdir(exist_ok=True)
    (tmp_path / "teams" / "ranking.yaml").write_text(
        "owner: '@org/ranking'\nfloors:\n  rrf:\n    ndcg@10: 0.7\n    mrr@10: 0.6\n", encoding="utf-8"
    )
    (tmp_path / "teams" / "relevance.yaml").write_text(
        'team: rel\nowner: ["@org/relevance", ann@example.com]\nmention: true\nfloors:\n  bm25: {ndcg@10: 0.6}\n',
        encoding="utf-8",
    )
    suite = tmp_path / "retrieval_tiny.yaml"
    suite.write_text(
        TINY_SUITE + "owner: '@org/search'\nteams: [teams/ranking.yaml, teams/relevance.yaml]\n" + extra,
        encoding="utf-8",
    )
    return suite


def test_team_floors_carry_their_team_owners_and_origin(tmp_path):
    suite = load_suite(_write(tmp_path))
    assert [t.name for t in suite.teams] == ["ranking", "rel"]
    own = [f for f in suite.floors if not f.team]
    assert {f.owners for f in own} == {("@org/search",)} and all(
        f.origin.endswith(".yaml:" + f.origin.rsplit(":", 1)[1]) for f in own
    )
    ranking = [f for f in suite.floors if f.team == "ranking"]
    assert [(f.retriever, f.metric, f.threshold) for f in ranking] == [
        ("rrf", "ndcg@10", 0.7),
        ("rrf", "mrr@10", 0.6),
    ]
    assert ranking[0].origin == f"{tmp_path / 'teams' / 'ranking.yaml'}:4"
    assert ranking[0].label == "ranking :: rrf :: ndcg@10" and ranking[0].owners == ("@org/ranking",)
    rel = [f for f in suite.floors if f.team == "rel"]
    assert rel[0].owners == ("@org/relevance", "ann@example.com") and rel[0].mention
    assert "mrr@10" in suite.metrics  # a team's metric is evaluated by the one run


def test_a_floor_an_override_lowered_names_the_value_it_replaced(tmp_path):
    ov = tmp_path / "ov.yaml"
    ov.write_text("floors:\n  bm25:\n    ndcg@10: 0.4\n    p95_ms: 5000\n", encoding="utf-8")
    suite = load_suite(_write(tmp_path), overrides=(ov,))
    by = {f.metric: f for f in suite.floors if not f.team and f.retriever == "bm25"}
    assert by["ndcg@10"].origin == f"{ov}:3"
    assert (
        by["ndcg@10"].lowered
        == f"0.5 at {tmp_path / 'retrieval_tiny.yaml'}:{_line(tmp_path, 'ndcg@10: 0.5')}"
    )
    assert by["p95_ms"].lowered == ""  # a ceiling made stricter is not lowered


def test_a_stricter_override_and_team_floors_are_never_lowered(tmp_path):
    ov = tmp_path / "ov.yaml"
    ov.write_text("floors: {bm25: {ndcg@10: 0.9}}\n", encoding="utf-8")
    suite = load_suite(_write(tmp_path, "overrides: {may_lower: false}\n"), overrides=(ov,))
    assert all(not f.lowered for f in suite.floors)  # a team floor below the suite's is its own gate


def _line(tmp_path: Path, text: str) -> int:
    lines = (tmp_path / "retrieval_tiny.yaml").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)
