"""Every malformed input is one clear line: the file, the key path or line, the problem."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.io.beir import load_beir
from pytest_retrieval.io.corpus import load_corpus
from pytest_retrieval.io.judgment_set import JudgmentSet, check_overlap
from pytest_retrieval.io.qrels import load_qrels
from pytest_retrieval.io.queries import load_queries
from pytest_retrieval.io.tags import load_tags
from pytest_retrieval.io.trec import load_trec_run

GOOD = """\
suite: t
judgments:
  queries: queries.jsonl
  qrels: qrels.trec
  corpus: corpus.jsonl
retrievers:
  bm25:
    type: bm25
  bm25b:
    type: bm25
    fields: [text]
  rrf:
    type: rrf
    of: [bm25, bm25b]
floors:
  bm25:
    ndcg@10: 0.1
"""


@pytest.fixture
def suite_dir(tmp_path: Path) -> Path:
    (tmp_path / "queries.jsonl").write_text('{"_id": "1", "text": "alpha"}\n')
    (tmp_path / "qrels.trec").write_text("1 0 d1 1\n")
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "text": "alpha beta"}\n')
    return tmp_path


def _suite_error(d: Path, text: str, name: str = "retrieval_t.yaml") -> ConfigError:
    p = d / name
    p.write_text(textwrap.dedent(text))
    with pytest.raises(ConfigError) as ei:
        load_suite(p)
    return ei.value


def _one_line(err: ConfigError, *fragments: str) -> str:
    msg = str(err)
    assert "\n" not in msg, msg
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"
    return msg


def test_good_suite_loads(suite_dir: Path) -> None:
    p = suite_dir / "retrieval_t.yaml"
    p.write_text(GOOD)
    s = load_suite(p)
    assert s.order.index("rrf") > s.order.index("bm25")
    assert [f.metric for f in s.floors] == ["ndcg@10"]


# (description, YAML edit, expected fragments in the one-line message)
YAML_CASES = [
    ("invalid YAML", "suite: t\n  bad: [1,\n", ["retrieval_t.yaml:", "invalid YAML"]),
    ("top-level list", "- a\n- b\n", ["retrieval_t.yaml:1", "YAML mapping"]),
    (
        "misspelt top-level key",
        GOOD.replace("retrievers:", "retreivers:"),
        ["unknown key 'retreivers'", "did you mean 'retrievers'"],
    ),
    (
        "unknown key in a retriever",
        GOOD.replace("    fields: [text]", "    feilds: [text]"),
        ["retrievers.bm25b.feilds", ":11", "unknown key 'feilds'"],
    ),
    (
        "unknown retriever type",
        GOOD.replace("    type: bm25\n  bm25b", "    type: bm52\n  bm25b"),
        ["retrievers.bm25", "unknown type 'bm52'"],
    ),
    (
        "missing retriever type",
        GOOD.replace("  bm25b:\n    type: bm25\n", "  bm25b:\n"),
        ["retrievers.bm25b", "missing 'type'"],
    ),
    (
        "unknown metric",
        GOOD.replace("ndcg@10: 0.1", "ndgc@10: 0.1"),
        ["floors.bm25.ndgc@10", ":17", "unknown metric"],
    ),
    ("k is zero", GOOD.replace("ndcg@10: 0.1", "ndcg@0: 0.1"), ["floors.bm25.ndcg@0"]),
    ("k not a number", GOOD.replace("ndcg@10: 0.1", "ndcg@ten: 0.1"), ["floors.bm25.ndcg@ten"]),
    (
        "floor above 1",
        GOOD.replace("ndcg@10: 0.1", "ndcg@10: 65"),
        ["floors.bm25.ndcg@10", "can never be met"],
    ),
    (
        "floor for unknown retriever",
        GOOD.replace("floors:\n  bm25:", "floors:\n  bm26:"),
        ["floors.bm26", "unknown retriever 'bm26'", "did you mean 'bm25'"],
    ),
    (
        "of references unknown retriever",
        GOOD.replace("of: [bm25, bm25b]", "of: [bm25, dense]"),
        ["retrievers.rrf.of[1]", "unknown retriever 'dense'"],
    ),
    (
        "cyclic retrievers",
        GOOD.replace("of: [bm25, bm25b]", "of: [bm25, rrf2]").replace(
            "floors:", "  rrf2:\n    type: rrf\n    of: [rrf, bm25]\nfloors:"
        ),
        ["cyclic retrievers"],
    ),
    (
        "weights do not sum to 1",
        GOOD.replace(
            "    type: rrf\n    of: [bm25, bm25b]",
            "    type: weighted\n    of: [bm25, bm25b]\n    weights: [0.5, 0.7]",
        ),
        ["retrievers.rrf.weights", "sum to 1"],
    ),
    (
        "weights count mismatch",
        GOOD.replace(
            "    type: rrf\n    of: [bm25, bm25b]",
            "    type: weighted\n    of: [bm25, bm25b]\n    weights: [1.0]",
        ),
        ["retrievers.rrf.weights", "1 weight(s) for 2"],
    ),
    (
        "rank_constant zero",
        GOOD.replace("of: [bm25, bm25b]", "of: [bm25, bm25b]\n    rank_constant: 0"),
        ["retrievers.rrf.rank_constant", "greater than or equal to 1"],
    ),
    (
        "missing judgments",
        GOOD.replace(
            "judgments:\n  queries: queries.jsonl\n  qrels: qrels.trec\n  corpus: corpus.jsonl\n", ""
        ),
        ["missing required key 'judgments'"],
    ),
    (
        "qrels without queries",
        GOOD.replace("  queries: queries.jsonl\n", ""),
        ["judgments.qrels", "without queries"],
    ),
    (
        "unset environment variable",
        GOOD.replace("suite: t", "suite: ${PYTEST_RETRIEVAL_SURELY_UNSET}"),
        ["suite", "PYTEST_RETRIEVAL_SURELY_UNSET is not set"],
    ),
    ("include of a missing file", "include: nope.yaml\n" + GOOD, ["include[0]", "nope.yaml"]),
    ("duplicate key", GOOD.replace("suite: t", "suite: t\nsuite: u"), ["duplicate key 'suite'", ":2"]),
    ("no floors", GOOD.split("floors:")[0], ["floors", "no floors"]),
    ("negative latency floor", GOOD.replace("ndcg@10: 0.1", "p95_ms: -5"), ["floors.bm25.p95_ms", "> 0 ms"]),
    ("wrong value type", GOOD + "evaluation:\n  depth: ten\n", ["evaluation.depth", "integer"]),
    (
        "literal not allowed",
        GOOD + "evaluation:\n  profile: ndcg\n",
        ["evaluation.profile", "'ndcg' is not allowed"],
    ),
    (
        "knn without embedder",
        GOOD.replace("  bm25b:\n    type: bm25\n    fields: [text]", "  bm25b:\n    type: knn"),
        ["retrievers.bm25b", "embedder"],
    ),
    (
        "bad boost",
        GOOD.replace("fields: [text]", "fields: [text^x]"),
        ["retrievers.bm25b.fields[0]", "bad field 'text^x'"],
    ),
    ("empty file", "", ["retrieval_t.yaml", "YAML mapping"]),
]


@pytest.mark.parametrize("text,fragments", [c[1:] for c in YAML_CASES], ids=[c[0] for c in YAML_CASES])
def test_bad_suite_file(suite_dir: Path, text: str, fragments: list) -> None:
    err = _suite_error(suite_dir, text)
    _one_line(err, *fragments)


def test_include_cycle(suite_dir: Path) -> None:
    (suite_dir / "a.yaml").write_text("include: b.yaml\n")
    (suite_dir / "b.yaml").write_text("include: a.yaml\n")
    err = _suite_error(suite_dir, "include: a.yaml\n" + GOOD)
    _one_line(err, "include cycle")


def test_team_override_file_wins_with_its_own_line(suite_dir: Path) -> None:
    (suite_dir / "retrieval_t.yaml").write_text(GOOD)
    team = suite_dir / "team.yaml"
    team.write_text("floors:\n  bm25:\n    ndcg@10: 0.42\n")
    s = load_suite(suite_dir / "retrieval_t.yaml", overrides=(team,))
    (floor,) = s.floors
    assert floor.threshold == 0.42 and floor.origin.endswith("team.yaml:3")


def test_include_then_override(suite_dir: Path) -> None:
    (suite_dir / "base.yaml").write_text(GOOD)
    p = suite_dir / "retrieval_team.yaml"
    p.write_text("include: base.yaml\nfloors:\n  bm25:\n    ndcg@10: 0.3\n    mrr@10: 0.2\n")
    s = load_suite(p)
    assert {(f.metric, f.threshold) for f in s.floors} == {("ndcg@10", 0.3), ("mrr@10", 0.2)}


def test_env_interpolation_with_default(suite_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("PR_TEST_SUITE", "from-env")
    p = suite_dir / "retrieval_t.yaml"
    p.write_text(
        GOOD.replace("suite: t", "suite: ${PR_TEST_SUITE:-x}")
        + "evaluation:\n  depth: ${PR_TEST_DEPTH:-50}\n"
    )
    s = load_suite(p)
    assert s.name == "from-env" and s.model.evaluation.depth == 50


# ------------------------------------------------------------ data files

DATA_CASES = [
    ("qrels with 5 columns", "qrels.trec", "1 0 d1 1 x\n", load_qrels, ["qrels.trec:1", "column"]),
    ("qrels grade not a number", "qrels.trec", "1 0 d1 high\n", load_qrels, ["qrels.trec:1", "'high'"]),
    ("qrels grade not an integer", "qrels.trec", "1 0 d1 1.5\n", load_qrels, ["qrels.trec:1", "integer"]),
    (
        "qrels conflicting grades",
        "qrels.trec",
        "1 0 d1 1\n1 0 d1 2\n",
        load_qrels,
        ["qrels.trec:2", "conflicting grades"],
    ),
    ("qrels empty", "qrels.trec", "\n", load_qrels, ["qrels.trec", "no judgments"]),
    (
        "qrels jsonl missing grade",
        "qrels.jsonl",
        '{"query_id": 1, "doc_id": "d"}\n',
        load_qrels,
        ["qrels.jsonl:1", "missing grade"],
    ),
    (
        "queries invalid JSON",
        "queries.jsonl",
        '{"_id": "1", "text": "a"}\n{"_id": 2, text}\n',
        load_queries,
        ["queries.jsonl:2", "invalid JSON"],
    ),
    (
        "queries missing id",
        "queries.jsonl",
        '{"text": "a"}\n',
        load_queries,
        ["queries.jsonl:1", "missing query id"],
    ),
    (
        "queries duplicate id",
        "queries.jsonl",
        '{"_id": 1, "text": "a"}\n{"_id": "1", "text": "b"}\n',
        load_queries,
        ["queries.jsonl:2", "duplicate query id '1'"],
    ),
    (
        "queries text not a string",
        "queries.jsonl",
        '{"_id": 1, "text": 5}\n',
        load_queries,
        ["queries.jsonl:1", "must be a string"],
    ),
    ("queries tsv one column", "queries.tsv", "1\n", load_queries, ["queries.tsv:1", "query_id<TAB>text"]),
    ("corpus line is a list", "corpus.jsonl", "[1, 2]\n", load_corpus, ["corpus.jsonl:1", "JSON object"]),
    (
        "corpus duplicate id",
        "corpus.jsonl",
        '{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n',
        load_corpus,
        ["corpus.jsonl:2", "duplicate document id"],
    ),
    (
        "corpus without text",
        "corpus.jsonl",
        '{"_id": "a", "n": 3}\n',
        load_corpus,
        ["corpus.jsonl:1", "no text field"],
    ),
    (
        "run wrong columns",
        "run.trec",
        "1 Q0 d1 1 2.0\n",
        load_trec_run,
        ["run.trec:1", "qid Q0 docid rank score tag"],
    ),
    ("run bad rank", "run.trec", "1 Q0 d1 one 2.0 t\n", load_trec_run, ["run.trec:1", "rank 'one'"]),
    ("run bad score", "run.trec", "1 Q0 d1 1 high t\n", load_trec_run, ["run.trec:1", "score 'high'"]),
    ("run NaN score", "run.trec", "1 Q0 d1 1 nan t\n", load_trec_run, ["run.trec:1", "NaN"]),
    (
        "run duplicate document",
        "run.trec",
        "1 Q0 d1 1 2.0 t\n1 Q0 d1 2 1.0 t\n",
        load_trec_run,
        ["run.trec:2", "appears twice"],
    ),
    ("tags bad line", "tags.tsv", "1\ta\tb\n", load_tags, ["tags.tsv:1", "query_id<TAB>tag1,tag2"]),
    (
        "tags jsonl wrong type",
        "tags.jsonl",
        '{"id": 1, "tags": 5}\n',
        load_tags,
        ["tags.jsonl:1", "tags must be"],
    ),
    ("not UTF-8", "queries.jsonl", b"\xff\xfe\x00bad", load_queries, ["queries.jsonl", "UTF-8"]),
]


@pytest.mark.parametrize(
    "name,content,loader,fragments", [c[1:] for c in DATA_CASES], ids=[c[0] for c in DATA_CASES]
)
def test_bad_data_file(tmp_path: Path, name, content, loader, fragments) -> None:
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content)
    with pytest.raises(ConfigError) as ei:
        loader(p)
    _one_line(ei.value, *fragments)


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as ei:
        load_qrels(tmp_path / "nope.tsv")
    _one_line(ei.value, "nope.tsv", "file not found")


def test_beir_missing_split(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td\t1\n")
    with pytest.raises(ConfigError) as ei:
        load_beir(tmp_path, "dev")
    _one_line(ei.value, "dev.tsv", "no qrels for split 'dev'", "have: test")


def test_wrong_split_has_no_overlap(tmp_path: Path) -> None:
    js = JudgmentSet(queries={"1": "a", "2": "b"}, qrels={"900": {"d": 1}, "901": {"d": 1}})
    with pytest.raises(ConfigError) as ei:
        check_overlap(js, where="qrels/dev.tsv")
    _one_line(ei.value, "qrels/dev.tsv", "wrong split")


def test_int_and_str_ids_match_and_near_misses_warn(tmp_path: Path) -> None:
    from pytest_retrieval.io.ids import IdNormalisationWarning, reconcile_ids

    (tmp_path / "q.jsonl").write_text('{"_id": 7, "text": "a"}\n{"_id": "8", "text": "b"}\n')
    (tmp_path / "qrels.trec").write_text("7 0 d 1\n008 0 d 1\n")
    queries = load_queries(tmp_path / "q.jsonl")
    qrels = load_qrels(tmp_path / "qrels.trec")
    assert "7" in queries and "7" in qrels  # int 7 and "7" are the same id
    with pytest.warns(IdNormalisationWarning, match="only after normalising"):
        fixed = reconcile_ids(queries, qrels, reference_name="q.jsonl", other_name="qrels.trec")
    assert set(fixed) == {"7", "8"}


def test_count_of_malformed_cases() -> None:
    # the issue asks for at least 25 malformed inputs, each with a one-line error
    assert len(YAML_CASES) + len(DATA_CASES) + 4 >= 25
