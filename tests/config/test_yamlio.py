"""YAML reading with positions: every value's file and line, ``${VAR}`` / ``${VAR:-default}``
interpolation, includes merged before the including file, overrides merged over it, and the
one-line errors (file, key, line) of each mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_retrieval.config.yamlio import (
    deep_merge,
    format_path,
    interpolate,
    load_with_includes,
    load_yaml,
    locate,
)
from pytest_retrieval.errors import ConfigError


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------ positions


def test_every_key_and_item_knows_its_file_and_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.yaml",
        "suite: demo\n"  # 1
        "retrievers:\n"  # 2
        "  bm25:\n"  # 3
        "    type: bm25\n"  # 4
        "    fields:\n"  # 5
        "      - title\n"  # 6
        "      - text\n",  # 7
    )
    data, pos = load_yaml(path)
    assert data == {"suite": "demo", "retrievers": {"bm25": {"type": "bm25", "fields": ["title", "text"]}}}
    f = str(path)
    assert pos[()] == (f, 1)
    assert pos[("suite",)] == (f, 1)
    assert pos[("retrievers", "bm25")] == (f, 4)  # a mapping value starts at its first key
    assert pos[("retrievers", "bm25", "type")] == (f, 4)
    assert pos[("retrievers", "bm25", "fields", 0)] == (f, 6)
    assert pos[("retrievers", "bm25", "fields", 1)] == (f, 7)


def test_locate_takes_the_longest_known_prefix() -> None:
    pos = {(): ("a.yaml", 1), ("floors",): ("a.yaml", 9), ("floors", "bm25"): ("b.yaml", 3)}
    assert locate(pos, ("floors", "bm25", "ndcg@10")) == ("b.yaml", 3)
    assert locate(pos, ("floors", "dense")) == ("a.yaml", 9)
    assert locate(pos, ("judgments",)) == ("a.yaml", 1)
    assert locate({}, ("x",)) == (None, None)


def test_format_path() -> None:
    assert format_path(("retrievers", "rrf", "of", 1)) == "retrievers.rrf.of[1]"
    assert format_path((0, "a")) == "[0].a"
    assert format_path(()) == ""


def test_an_empty_file_is_none(tmp_path: Path) -> None:
    assert load_yaml(write(tmp_path, "e.yaml", "# nothing\n")) == (None, {})


# ------------------------------------------------------------------ interpolation


def test_env_values_and_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RT_HOST", "http://es:9200")
    monkeypatch.setenv("RT_DEPTH", "50")
    monkeypatch.delenv("RT_UNSET", raising=False)
    path = write(
        tmp_path,
        "s.yaml",
        "hosts: ['${RT_HOST}']\n"
        "fallback: ${RT_UNSET:-http://localhost:9200}\n"
        "empty_default: 'x${RT_UNSET:-}y'\n"
        "depth: ${RT_DEPTH}\n"  # interpolated values are text: pydantic coerces "50" for ints
        "quoted: '${RT_DEPTH}'\n"  # quoted: stays a string
        "flag: ${RT_UNSET:-true}\n"
        "both: ${RT_HOST}/${RT_UNSET:-idx}\n",
    )
    data, _ = load_yaml(path)
    assert data == {
        "hosts": ["http://es:9200"],
        "fallback": "http://localhost:9200",
        "empty_default": "xy",
        "depth": "50",
        "quoted": "50",
        "flag": "true",
        "both": "http://es:9200/idx",
    }


def test_an_unset_variable_without_default_names_file_key_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RT_MISSING", raising=False)
    path = write(tmp_path, "s.yaml", "suite: x\nbackend:\n  index:\n    name: ${RT_MISSING}\n")
    with pytest.raises(ConfigError) as e:
        load_yaml(path)
    err = e.value
    assert (err.file, err.key, err.line) == (str(path), "backend.index.name", 4)
    assert "RT_MISSING is not set" in str(err) and "${RT_MISSING:-default}" in str(err)


def test_interpolate_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RT_A", "1")
    assert interpolate("${RT_A}-${RT_B:-2}", file="f", key=(), line=1) == "1-2"
    assert interpolate("no variables, $HOME stays", file="f", key=(), line=1) == "no variables, $HOME stays"


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "text, fragment, line",
    [
        ("a: 1\na: 2\n", "duplicate key 'a'", 2),
        ("base: &b {x: 1}\nother:\n  <<: *b\n", "merge keys (<<) are not supported", 3),
        ("a: [1, 2\nb: 3\n", "invalid YAML", 2),
        ("? [1, 2]\n: x\n", "a mapping key must be a scalar", 1),
    ],
)
def test_yaml_mistakes_are_one_line_with_the_line(
    tmp_path: Path, text: str, fragment: str, line: int
) -> None:
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(ConfigError) as e:
        load_yaml(path)
    assert fragment in str(e.value) and "\n" not in str(e.value)
    assert e.value.line == line and e.value.file == str(path)


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_yaml(tmp_path / "nope.yaml")
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_yaml(latin)


# ------------------------------------------------------------------ merging


def test_deep_merge_overrides_win_and_positions_follow_the_value() -> None:
    base = {"floors": {"bm25": {"ndcg@10": 0.5, "mrr@10": 0.4}}, "fields": ["title", "text"], "k": 1}
    base_pos = {
        (): ("base", 1),
        ("floors",): ("base", 1),
        ("floors", "bm25"): ("base", 2),
        ("floors", "bm25", "ndcg@10"): ("base", 3),
        ("floors", "bm25", "mrr@10"): ("base", 4),
        ("fields",): ("base", 5),
        ("fields", 0): ("base", 5),
        ("fields", 1): ("base", 6),
        ("k",): ("base", 7),
    }
    over = {"floors": {"bm25": {"ndcg@10": 0.6}}, "fields": ["body"]}
    over_pos = {
        (): ("team", 1),
        ("floors",): ("team", 1),
        ("floors", "bm25"): ("team", 2),
        ("floors", "bm25", "ndcg@10"): ("team", 3),
        ("fields",): ("team", 4),
        ("fields", 0): ("team", 4),
    }
    merged, pos = deep_merge(base, over, base_pos, over_pos)
    # mappings merge key by key; a list is replaced whole
    assert merged == {"floors": {"bm25": {"ndcg@10": 0.6, "mrr@10": 0.4}}, "fields": ["body"], "k": 1}
    assert pos[("floors", "bm25", "ndcg@10")] == ("team", 3)
    assert pos[("floors", "bm25", "mrr@10")] == ("base", 4)
    assert pos[("fields", 0)] == ("team", 4) and ("fields", 1) not in pos
    assert pos[("k",)] == ("base", 7)
    assert base["floors"]["bm25"]["ndcg@10"] == 0.5  # inputs untouched


def test_includes_merge_in_order_and_the_including_file_wins(tmp_path: Path) -> None:
    write(
        tmp_path,
        "shared.yaml",
        "evaluation:\n  depth: 50\n  profile: trec\nfloors:\n  bm25:\n    ndcg@10: 0.1\n",
    )
    write(tmp_path, "team.yaml", "evaluation:\n  depth: 70\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    write(sub, "deep.yaml", "include: ../team.yaml\ndescription: from deep\n")  # relative to itself
    main = write(
        tmp_path,
        "suite.yaml",
        "include: [shared.yaml, sub/deep.yaml]\nsuite: demo\nfloors:\n  bm25:\n    ndcg@10: 0.4\n",
    )
    data, pos = load_with_includes(main)
    assert data == {
        "evaluation": {"depth": 70, "profile": "trec"},  # the later include wins over the earlier
        "floors": {"bm25": {"ndcg@10": 0.4}},  # the including file wins over both
        "description": "from deep",
        "suite": "demo",
    }
    assert "include" not in data and not any(k[:1] == ("include",) for k in pos)
    assert pos[("evaluation", "depth")] == (str(tmp_path / "team.yaml"), 2)
    assert pos[("evaluation", "profile")] == (str(tmp_path / "shared.yaml"), 3)
    assert pos[("floors", "bm25", "ndcg@10")] == (str(main), 5)
    assert pos[("description",)] == (str(sub / "deep.yaml"), 2)


def test_a_single_include_string(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", "a: 1\nb: 2\n")
    data, _ = load_with_includes(write(tmp_path, "s.yaml", "include: base.yaml\nb: 3\n"))
    assert data == {"a": 1, "b": 3}


@pytest.mark.parametrize(
    "text, fragment, key",
    [
        ("include: 3\n", "include must be a file path or a list of paths", "include"),
        ("include: [ok.yaml, 3]\n", "include must be a file path or a list of paths", "include"),
        ("include: [missing.yaml]\n", "included file not found: missing.yaml", "include[0]"),
        ("include: [self.yaml]\n", "include cycle: self.yaml -> self.yaml", "include[0]"),
    ],
)
def test_include_mistakes(tmp_path: Path, text: str, fragment: str, key: str) -> None:
    write(tmp_path, "ok.yaml", "a: 1\n")
    path = write(tmp_path, "self.yaml", text)
    with pytest.raises(ConfigError) as e:
        load_with_includes(path)
    assert fragment in str(e.value) and e.value.key == key and e.value.line == 1


def test_a_suite_file_must_be_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="must be a YAML mapping"):
        load_with_includes(write(tmp_path, "list.yaml", "- a\n- b\n"))


# ------------------------------------------------------------------ keyed lists: one merge rule

SUITE_WITH_EXPECTATIONS = """\
judgments:
  inline: [{id: q1, text: solar, relevant: {d1: 1}}]
  documents: [{id: d1, text: solar panels}, {id: d2, text: wind}]
retrievers:
  bm25: {type: bm25}
expectations:
  - {query: solar, contains: [d1]}
  - {query: solar, name: no wind, excludes: [d2]}
  - {query_id: q1, first: d1}
"""


def test_a_team_file_adds_or_replaces_expectations_it_never_deletes_them(tmp_path: Path) -> None:
    from pytest_retrieval.config.load import load_suite

    suite = write(tmp_path, "retrieval_s.yaml", SUITE_WITH_EXPECTATIONS)
    team = "expectations:\n  - {query: solar, contains: [d1], k: 3}\n  - {query: wind, contains: [d2]}\n"
    by_override = load_suite(suite, overrides=(write(tmp_path, "team.yaml", team),))
    by_include = load_suite(write(tmp_path, "retrieval_team.yaml", "include: retrieval_s.yaml\n" + team))
    for loaded in (by_override, by_include):
        got = [(e.query, e.name, e.k) for e in loaded.model.expectations]
        # 'solar' (by its query) replaced in place; 'no wind' (by its name) and q1 kept; 'wind' added
        assert got == [("solar", None, 3), ("solar", "no wind", 10), (None, None, 10), ("wind", None, 10)]
        assert loaded.positions[("expectations", 0, "k")][1] == (2 if loaded is by_override else 3)
        assert loaded.positions[("expectations", 1, "excludes")] == (str(suite.resolve()), 8)


def test_a_replaced_expectation_reports_its_mistake_at_the_team_file(tmp_path: Path) -> None:
    from pytest_retrieval.config.load import load_suite

    suite = write(tmp_path, "retrieval_s.yaml", SUITE_WITH_EXPECTATIONS)
    team = write(
        tmp_path,
        "team.yaml",
        "expectations:\n  - {query: wind, first: d2}\n  - {name: no wind, query: solar, k: 0, excludes: [d2]}\n",
    )
    with pytest.raises(ConfigError) as e:
        load_suite(suite, overrides=(team,))
    # the replaced item keeps its place (1) and points at the team file's line
    assert e.value.file == str(team.resolve()) and e.value.line == 3 and e.value.key == "expectations[1].k"
    assert "\n" not in str(e.value)


def test_merge_list_keys_and_positions() -> None:
    from pytest_retrieval.config.yamlio import expectation_key, merge_list

    assert [
        expectation_key(x) for x in ({"name": "n", "query": "q"}, {"query": "q"}, {"query_id": 7}, 3, {})
    ] == [
        "n",
        "q",
        "7",
        None,
        None,
    ]
    base = [{"query": "a"}, {"query": "b"}]
    base_pos = {("e",): ("s", 1), ("e", 0): ("s", 2), ("e", 1): ("s", 3), ("e", 1, "query"): ("s", 3)}
    over = [{"query": "b", "k": 1}, "junk", {"query": "c"}]
    over_pos = {
        ("e",): ("t", 1),
        ("e", 0): ("t", 2),
        ("e", 0, "k"): ("t", 2),
        ("e", 1): ("t", 3),
        ("e", 2): ("t", 4),
    }
    out, pos = merge_list(base, over, base_pos, over_pos, ("e",), expectation_key)
    assert out == [{"query": "a"}, {"query": "b", "k": 1}, "junk", {"query": "c"}]
    assert pos == {
        ("e",): ("t", 1),
        ("e", 0): ("s", 2),
        ("e", 1): ("t", 2),
        ("e", 1, "k"): ("t", 2),
        ("e", 2): ("t", 3),
        ("e", 3): ("t", 4),
    }
    assert base == [{"query": "a"}, {"query": "b"}]  # inputs untouched


def test_includes_that_fan_out_stop_at_the_load_bound(tmp_path: Path) -> None:
    from pytest_retrieval.config.yamlio import MAX_INCLUDE_LOADS

    for level in range(5):  # each file of a level includes the 4 files of the next: 4**5 loads
        for i in range(4):
            inc = f"include: [{', '.join(f'l{level + 1}_{j}.yaml' for j in range(4))}]\n" if level < 4 else ""
            write(tmp_path, f"l{level}_{i}.yaml", inc + f"x{level}: {i}\n")
    top = write(tmp_path, "top.yaml", "include: [l0_0.yaml, l0_1.yaml, l0_2.yaml, l0_3.yaml]\n")
    with pytest.raises(ConfigError) as e:
        load_with_includes(top)
    assert f"includes fan out to more than {MAX_INCLUDE_LOADS} file loads for one suite" in str(e.value)
    assert e.value.key and e.value.key.startswith("include[") and e.value.line == 1
    # a diamond well under the bound loads (each path read, the shared file twice)
    write(tmp_path, "d.yaml", "x: 1\n")
    write(tmp_path, "b.yaml", "include: d.yaml\n")
    write(tmp_path, "c.yaml", "include: d.yaml\n")
    assert load_with_includes(write(tmp_path, "a.yaml", "include: [b.yaml, c.yaml]\n"))[0] == {"x": 1}
