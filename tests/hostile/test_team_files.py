"""Hostile team threshold files and ownership keys (issue #36): a hostile value at every key of a
team file (``team:<key>`` surfaces of ``test_surfaces.py``), hostile paths and names in ``teams:``,
owners that would inject Markdown, and floors a later file lowers against ``overrides.may_lower:
false``. Each is one clear line naming the file and the key, never a traceback, never accepted."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError

from ..ci import needs_fifos
from .conftest import BASE, FLOORS, bounded, one_line

# every key path of a team file (config/teams.TeamFile), with a value of the wrong kind and the
# fragment its error names
TEAM_CASES = [
    ("team:team", {"team": {"\u202e": [None]}}, "team"),
    ("team:owner", {"owner": {"\u202e": [None]}}, "owner"),
    ("team:mention", {"mention": [["\u202e"]]}, "mention"),
    ("team:floors", {"floors": [["\u202e"]]}, "floors"),
    ("team:floors.*", {"floors": {"bm25": [["x"]]}}, "floors.bm25"),
    ("team:floors.*.*", {"floors": {"bm25": {"ndcg@10": float("nan")}}}, "floors.bm25.ndcg@10"),
    ("team:regression", {"regression": [["\u202e"]]}, "regression"),
    ("team:regression.max_drop", {"regression": {"max_drop": [["x"]]}}, "regression.max_drop"),
    (
        "team:regression.max_drop.*",
        {"regression": {"max_drop": {"ndcg@10": float("nan")}}},
        "regression.max_drop.ndcg@10",
    ),
    (
        "team:regression.retrievers",
        {"regression": {"max_drop": {"ndcg@10": 0.01}, "retrievers": "bm25"}},
        "regression.retrievers",
    ),
]


def _suite(tmp_path: Path, team: Any, extra: str = "teams: [ranking.yaml]\n") -> Path:
    (tmp_path / "ranking.yaml").write_text(
        yaml.safe_dump(team, allow_unicode=True) if not isinstance(team, str) else team, encoding="utf-8"
    )
    suite = tmp_path / "retrieval_s.yaml"
    suite.write_text(BASE + FLOORS + extra, encoding="utf-8")
    return suite


def _refused(suite: Path, *fragments: str, **kw: Any) -> None:
    with bounded(30), pytest.raises(ConfigError) as info:
        load_suite(suite, **kw)
    one_line(str(info.value), *fragments)


@pytest.mark.parametrize("surface,team,fragment", TEAM_CASES, ids=[c[0] for c in TEAM_CASES])
def test_a_hostile_value_at_every_team_file_key_is_one_clear_line(tmp_path, surface, team, fragment):
    _refused(_suite(tmp_path, team), "ranking.yaml", fragment)


HOSTILE_TEAMS = [
    ("the suite included", "include: retrieval_s.yaml\n", "a team file holds gates only"),
    ("a retrieval key", "backend: {type: embedded}\nfloors: {bm25: {ndcg@10: 0.1}}\n", "gates only"),
    ("no floors", "owner: '@org/x'\n", "gates at least one floor"),
    ("an unknown retriever", "floors: {bm2: {ndcg@10: 0.1}}\n", "unknown retriever 'bm2'"),
    ("a floor never met", "floors: {bm25: {ndcg@10: 1.5}}\n", "can never be met"),
    ("a mention in a name", "owner: '@org/x](https://evil)'\nfloors: {bm25: {ndcg@10: 0.1}}\n", "CODEOWNERS"),
    ("a markdown owner", "owner: '**boss**'\nfloors: {bm25: {ndcg@10: 0.1}}\n", "not a CODEOWNERS name"),
    ("no owners", "owner: []\nfloors: {bm25: {ndcg@10: 0.1}}\n", "names no owner"),
    ("a name of a retriever", "team: rrf\nfloors: {bm25: {ndcg@10: 0.1}}\n", "also a retriever's name"),
    ("a name with a newline", 'team: "a\\nb"\nfloors: {bm25: {ndcg@10: 0.1}}\n', "not a name an item id"),
    ("a right-to-left name", 'team: "a\\u202eb"\nfloors: {bm25: {ndcg@10: 0.1}}\n', "not a name"),
    ("mention as text", "mention: 'yes please'\nfloors: {bm25: {ndcg@10: 0.1}}\n", "mention"),
    ("not a mapping", "- a\n- b\n", "YAML mapping"),
    # regression gates (the suite of these cases has no regression block, then one)
    (
        "regression without the suite's",
        "regression: {max_drop: {ndcg@10: 0.01}}\n",
        "suite has no regression block",
    ),
    ("regression of nothing", "regression: {max_drop: {}}\n", "regression.max_drop"),
    (
        "a baseline setting",
        "regression: {max_drop: {ndcg@10: 0.01}, baseline: x.json}\n",
        "regression.baseline",
    ),
    ("a statistics setting", "regression: {max_drop: {ndcg@10: 0.01}, confidence: 0.6}\n", "confidence"),
    ("a margin past 1", "regression: {max_drop: {ndcg@10: 2}}\n", "regression.max_drop.ndcg@10"),
    ("a margin as text", "regression: {max_drop: {ndcg@10: '0.01'}}\n", "regression.max_drop.ndcg@10"),
]

SUITE_REGRESSION = "regression:\n  max_drop: {ndcg@10: 0.05}\n"
HOSTILE_TEAM_REGRESSION = [
    (
        "an unknown retriever",
        "regression: {max_drop: {ndcg@10: 0.01}, retrievers: [bm2]}\n",
        "unknown retriever",
    ),
    ("an unknown metric", "regression: {max_drop: {ndgc@10: 0.01}}\n", "ndgc@10"),
    ("a metric twice", "regression: {max_drop: {ndcg@10: 0.01, ndcg_cut_10: 0.02}}\n", "same metric"),
    ("a latency metric", "regression: {max_drop: {p95_ms: 0.01}}\n", "p95_ms"),
]


@pytest.mark.parametrize(
    "case,text,fragment", HOSTILE_TEAM_REGRESSION, ids=[c[0] for c in HOSTILE_TEAM_REGRESSION]
)
def test_a_hostile_team_regression_block_is_one_clear_line(tmp_path, case, text, fragment):
    _refused(_suite(tmp_path, text, SUITE_REGRESSION + "teams: [ranking.yaml]\n"), "ranking.yaml", fragment)


@pytest.mark.parametrize("case,text,fragment", HOSTILE_TEAMS, ids=[c[0] for c in HOSTILE_TEAMS])
def test_a_hostile_team_file_is_one_clear_line(tmp_path, case, text, fragment):
    _refused(_suite(tmp_path, text), "ranking.yaml", fragment)


HOSTILE_PATHS = [
    ("missing", "teams: [nope.yaml]\n", "team file not found"),
    ("a folder", "teams: [sub]\n", "not a regular file"),
    ("empty", "teams: ['']\n", "empty"),
    ("a NUL byte", 'teams: ["a\\0b"]\n', "NUL"),
    ("twice", "teams: [ranking.yaml, ./ranking.yaml]\n", "twice"),
    ("the suite itself", "teams: [retrieval_s.yaml]\n", "a team file holds gates only"),
    ("not a list", "teams: ranking.yaml\n", "teams"),
]


@pytest.mark.parametrize("case,extra,fragment", HOSTILE_PATHS, ids=[c[0] for c in HOSTILE_PATHS])
def test_a_hostile_teams_list_is_one_clear_line(tmp_path, case, extra, fragment):
    (tmp_path / "sub").mkdir()
    suite = _suite(tmp_path, "floors: {bm25: {ndcg@10: 0.1}}\n", extra)
    _refused(suite, "retrieval_s.yaml", "teams", fragment)


def test_too_many_team_files_is_one_line(tmp_path):
    suite = _suite(
        tmp_path, "floors: {bm25: {ndcg@10: 0.1}}\n", "teams: [" + ", ".join(["ranking.yaml"] * 101) + "]\n"
    )
    _refused(suite, "retrieval_s.yaml", "teams", "at most 100")


@needs_fifos
def test_a_fifo_team_file_is_refused_without_blocking(tmp_path):
    suite = _suite(tmp_path, "x: 1\n", "teams: [fifo.yaml]\n")
    os.mkfifo(tmp_path / "fifo.yaml")
    _refused(suite, "fifo.yaml", "not a regular file")


# overrides.may_lower: false refuses a later file that lowers a floor (or raises a ceiling),
# naming both files and lines; true (the default) names the value it replaced
PROTECTED = "overrides: {may_lower: false}\n"


def test_an_override_file_lowering_a_protected_floor_names_both_files(tmp_path):
    suite = _suite(tmp_path, "floors: {bm25: {ndcg@10: 0.1}}\n", PROTECTED)
    ov = tmp_path / "ov.yaml"
    ov.write_text("floors:\n  bm25:\n    ndcg@10: 0.05\n", encoding="utf-8")
    _refused(
        suite, "ov.yaml:3", "floors.bm25.ndcg@10", "retrieval_s.yaml:", "may_lower: false", overrides=(ov,)
    )


def test_an_including_file_lowering_a_protected_floor_is_refused(tmp_path):
    _suite(tmp_path, "floors: {bm25: {ndcg@10: 0.1}}\n", PROTECTED)
    team = tmp_path / "retrieval_team.yaml"
    team.write_text("include: retrieval_s.yaml\nfloors:\n  bm25: {ndcg@10: 0.01}\n", encoding="utf-8")
    _refused(team, "retrieval_team.yaml:3", "lowers the floor 0.1", "may_lower")


def test_a_raised_latency_ceiling_counts_as_lowered(tmp_path):
    suite = _suite(
        tmp_path, "floors: {bm25: {ndcg@10: 0.1}}\n", PROTECTED + "floors:\n  bm25: {p95_ms: 50}\n"
    )
    suite.write_text(suite.read_text().replace(FLOORS, ""), encoding="utf-8")
    ov = tmp_path / "ov.yaml"
    ov.write_text("floors: {bm25: {p95_ms: 500}}\n", encoding="utf-8")
    _refused(suite, "ov.yaml:1", "raises the ceiling 50", overrides=(ov,))


def test_a_raised_protected_max_drop_is_refused_and_a_tighter_one_is_not(tmp_path):
    suite = _suite(
        tmp_path,
        "floors: {bm25: {ndcg@10: 0.1}}\n",
        PROTECTED + "regression:\n  max_drop: {ndcg@10: 0.01}\n",
    )
    ov = tmp_path / "ov.yaml"
    ov.write_text("regression:\n  max_drop:\n    ndcg@10: 0.05\n", encoding="utf-8")
    _refused(suite, "ov.yaml:3", "regression.max_drop.ndcg@10", "raises the max_drop 0.01", overrides=(ov,))
    ov.write_text("regression:\n  max_drop:\n    ndcg@10: 0.005\n", encoding="utf-8")
    assert load_suite(suite, overrides=(ov,)).regression


def test_an_override_cannot_unset_the_rule_it_breaks(tmp_path):
    suite = _suite(tmp_path, "floors: {bm25: {ndcg@10: 0.1}}\n", PROTECTED)
    ov = tmp_path / "ov.yaml"
    ov.write_text("overrides: {may_lower: true}\nfloors: {bm25: {ndcg@10: 0.05}}\n", encoding="utf-8")
    _refused(suite, "ov.yaml", "may_lower: false", overrides=(ov,))


# a report read from disk (``pytest-retrieval report``) may hold anything in the ownership
# fields: the renderers never fail on them, and never write a live mention they did not check
HOSTILE_GATE = {
    "retriever": "bm25",
    "metric": "ndcg@10",
    "op": ">=",
    "threshold": 0.1,
    "value": 0.5,
    "passed": False,
    "team": ["\u202e"],
    "owners": 5,
    "mention": "yes",
    "origin": {"a": 1},
    "lowered_from": [1],
}
HOSTILE_ITEM = {
    "retriever": "bm25",
    "gate": "ndcg@10",
    "outcome": "failed",
    "message": "m",
    "team": "t",
    "owners": ["@a](https://evil.example)", "@b"],
    "mention": True,
}


def test_hostile_ownership_fields_of_a_report_render_without_a_traceback():
    from pytest_retrieval.reports.html import render_html
    from pytest_retrieval.reports.markdown import render_markdown
    from pytest_retrieval.reports.terminal import summary_lines

    suite = {
        "suite": "s",
        "file": "retrieval_s.yaml",
        "retrievers": [{"name": "bm25", "metrics": {"ndcg@10": 0.5}}],
        "gates": [HOSTILE_GATE, {**HOSTILE_GATE, "team": "t", "owners": ["@org/x", 3], "mention": True}],
        "items": [HOSTILE_ITEM],
    }
    doc = {"version": 2, "suites": [suite]}
    with bounded(60):
        md = render_markdown(doc)
        lines = summary_lines(doc)
        html = render_html(doc)
    assert "https://evil" not in md.replace("&#8203;", "") or "\\]\\(" in md  # never a live link
    assert "@a](" not in md  # escaped, not a mention with a link
    assert any("FAIL" in line for line in lines) and 'href="https://evil' not in html
