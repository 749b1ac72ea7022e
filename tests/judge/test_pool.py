"""Pooling over a SciFact suite's retrievers, annotation export and import, merging with
existing labels, validation of filled grades, and a suite that gates on the result."""

from __future__ import annotations

import csv
import json
import os
import textwrap
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

from pytest_retrieval.cli import main as cli_main
from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.execution.runner import SuiteRunner
from pytest_retrieval.io.corpus import load_corpus
from pytest_retrieval.io.qrels import load_qrels
from pytest_retrieval.io.queries import load_queries
from pytest_retrieval.judge.annotations import read_pairs
from pytest_retrieval.judge.files import write_qrels, write_queries
from pytest_retrieval.judge.pool import pool_runs
from pytest_retrieval.types import Ranking
from tests.ci import unavailable

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("PYTEST_RETRIEVAL_SHARED", ROOT.parent / "shared"))
SCIFACT = SHARED / "data" / "scifact"
VECTORS = SCIFACT / "embeddings" / "all-MiniLM-L6-v2"
DEPTH = 20


def _need_scifact() -> None:
    if not (SCIFACT / "corpus.jsonl").is_file() or not (VECTORS / "corpus.npy").is_file():
        unavailable(f"shared SciFact data not found at {SCIFACT}")


def _scifact_suite(root: Path, qrels_name: str = "qrels.txt", floors: str = "{bm25: {ndcg@10: 0.5}}") -> Path:
    return _write(
        root / "retrieval_scifact_small.yaml",
        f"""\
        suite: scifact-small
        judgments:
          queries: queries.jsonl
          qrels: {qrels_name}
          corpus: {root / "corpus.jsonl"}
        embedder:
          type: precomputed
          queries: {VECTORS / "queries.npy"}
          query_ids: {VECTORS / "query_ids.txt"}
          documents: {VECTORS / "corpus.npy"}
          document_ids: {VECTORS / "corpus_ids.txt"}
        latency: {{enabled: false}}
        retrievers:
          bm25: {{type: bm25, fields: [title, text]}}
          dense: {{type: knn, similarity: cosine}}
          rrf: {{type: rrf, of: [bm25, dense], window: 100}}
        floors: {floors}
        """,
    )


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture(scope="module")
def scifact(tmp_path_factory):
    """A small SciFact suite: the first 30 test queries, their test qrels, 2,000 of the
    5,183 abstracts (every judged one among them; fewer documents only to keep the test
    quick), BM25 + kNN (the shared MiniLM vectors) + RRF; pooled once at depth 20."""
    _need_scifact()
    root = tmp_path_factory.mktemp("scifact")
    test_qrels = load_qrels(SCIFACT / "qrels" / "test.tsv")
    all_queries = load_queries(SCIFACT / "queries.jsonl")
    qids = [q for q in all_queries if q in test_qrels][:30]
    judged_docs = {d for q in qids for d in test_qrels[q]}
    with (
        open(SCIFACT / "corpus.jsonl", encoding="utf-8") as src,
        open(root / "corpus.jsonl", "w", encoding="utf-8") as dst,
    ):
        for i, line in enumerate(src):
            if i < 2000 - len(judged_docs) or json.loads(line)["_id"] in judged_docs:
                dst.write(line)
    write_queries({q: all_queries[q] for q in qids}, root / "queries.jsonl")
    write_qrels({q: test_qrels[q] for q in qids}, root / "qrels.txt")
    suite = _scifact_suite(root)
    assert (
        cli_main(
            [
                "judge",
                "pool",
                str(suite),
                "-o",
                str(root / "pool.csv"),
                "-o",
                str(root / "pool.jsonl"),
                "--depth",
                str(DEPTH),
                "--no-progress",
            ]
        )
        == 0
    )
    return root, suite, qids


@pytest.fixture(scope="module")
def scifact_result(scifact):
    """The same suite run by the suite runner the gates use (an independent recomputation)."""
    _, suite, _ = scifact
    return SuiteRunner(load_suite(suite, cli={"latency.enabled": False})).run()


def _csv_rows(path: Path) -> List[Dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_pool_exports_exactly_the_unjudged_pairs(scifact, scifact_result) -> None:
    root, suite, qids = scifact
    result = scifact_result
    assert set(result.retrievers) == {"bm25", "dense", "rrf"}
    qrels = load_qrels(root / "qrels.txt")
    expected: Set[Tuple[str, str]] = set()
    for r in result.retrievers.values():
        for qid, ranking in r.run.items():
            expected.update((qid, d) for d in ranking.doc_ids[:DEPTH] if d not in qrels.get(qid, {}))
    assert len(expected) > 500  # the pool is not trivially small

    rows = _csv_rows(root / "pool.csv")
    got = [(r["query_id"], r["doc_id"]) for r in rows]
    assert len(got) == len(set(got))  # unique pairs
    assert set(got) == expected
    jsonl = [json.loads(l) for l in (root / "pool.jsonl").read_text().splitlines()]
    assert [(o["query_id"], o["doc_id"]) for o in jsonl] == got
    assert list(rows[0]) == ["query_id", "query", "doc_id", "title", "text", "grade"]
    assert all(r["grade"] == "" for r in rows) and all(o["grade"] is None for o in jsonl)
    # query and document texts as the annotator needs them
    queries = load_queries(root / "queries.jsonl")
    corpus = {d.doc_id: d.fields for d in load_corpus(SCIFACT / "corpus.jsonl")}
    for r in rows[::50]:
        assert r["query"] == queries[r["query_id"]]
        assert r["title"] == corpus[r["doc_id"]]["title"]
        assert r["text"] == corpus[r["doc_id"]]["text"]
    # grouped by query, in the queries file's order
    order = [q for q in dict.fromkeys(r["query_id"] for r in rows)]
    assert order == [q for q in qids if q in order]


def test_pool_depth_and_retriever_selection_and_include_judged(
    scifact, scifact_result, tmp_path, capsys
) -> None:
    root, suite, qids = scifact
    assert (
        cli_main(
            [
                "judge",
                "pool",
                str(suite),
                "-o",
                str(tmp_path / "p.jsonl"),
                "--depth",
                "3",
                "--retrievers",
                "bm25",
                "--include-judged",
            ]
        )
        == 0
    )
    result = scifact_result
    expected = {(q, d) for q, rk in result.retrievers["bm25"].run.items() for d in rk.doc_ids[:3]}
    got = {(p.query_id, p.doc_id) for p in read_pairs(tmp_path / "p.jsonl")}
    assert got == expected
    capsys.readouterr()
    assert (
        cli_main(["judge", "pool", str(suite), "-o", str(tmp_path / "p.jsonl"), "--retrievers", "bm42"]) == 2
    )
    assert "no retriever named bm42" in capsys.readouterr().err


def _fill(path: Path, out: Path, blank_every: int = 7) -> Dict[str, Dict[str, int]]:
    """A person grades the pool: every row but every 7th, grade = doc id mod 4."""
    rows = _csv_rows(path)
    filled: Dict[str, Dict[str, int]] = {}
    with open(out, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for i, r in enumerate(rows):
            if i % blank_every != 3:
                r["grade"] = str(int(r["doc_id"]) % 4)
                filled.setdefault(r["query_id"], {})[r["doc_id"]] = int(r["grade"])
            w.writerow(r)
    return filled


def test_import_filled_file_yields_merged_qrels_and_gates(scifact, tmp_path, capsys) -> None:
    root, suite, qids = scifact
    existing = load_qrels(root / "qrels.txt")
    filled_path = tmp_path / "filled.csv"
    filled = _fill(root / "pool.csv", filled_path)
    n_rows = len(_csv_rows(filled_path))
    first_extra = filled_path.read_text(encoding="utf-8").count("\n") + 1  # physical line
    # the annotator also re-graded two judged pairs differently: conflicts
    q0 = qids[0]
    d0, d1 = list(existing[q0])[:1] + [list(existing[qids[1]])[0]]
    with open(filled_path, "a", encoding="utf-8") as fh:
        fh.write(f"{q0},x,{d0},t,x,0\n{qids[1]},x,{d1},t,x,3\n")
    merged_path = tmp_path / "merged.txt"
    assert (
        cli_main(
            [
                "judge",
                "import",
                str(filled_path),
                "--qrels",
                str(root / "qrels.txt"),
                "--out",
                str(merged_path),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    n_blank = n_rows - sum(len(d) for d in filled.values())
    assert f"{n_blank} blank (skipped)" in err
    assert f"{sum(len(d) for d in filled.values())} new label(s)" in err
    assert "2 conflict(s) (kept existing)" in err
    assert f"conflict: {filled_path}:{first_extra}: ({q0}, {d0}) existing 1, new 0" in err

    merged = load_qrels(merged_path)
    want = {q: dict(d) for q, d in existing.items()}
    for q, docs in filled.items():
        for d, g in docs.items():
            want.setdefault(q, {})[d] = g
    assert merged == want
    assert load_qrels(root / "qrels.txt") == existing  # --out elsewhere: input untouched

    # prefer-new takes the re-grades; error refuses, naming the file and line
    assert (
        cli_main(
            [
                "judge",
                "import",
                str(filled_path),
                "--qrels",
                str(root / "qrels.txt"),
                "--out",
                str(tmp_path / "new.txt"),
                "--policy",
                "prefer-new",
            ]
        )
        == 0
    )
    assert load_qrels(tmp_path / "new.txt")[q0][d0] == 0
    capsys.readouterr()
    assert (
        cli_main(
            [
                "judge",
                "import",
                str(filled_path),
                "--qrels",
                str(root / "qrels.txt"),
                "--out",
                str(tmp_path / "no.txt"),
                "--policy",
                "error",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"pytest-retrieval: error: {filled_path}:{first_extra}: ")
    assert "(+1 more conflict(s))" in err[-1] and not (tmp_path / "no.txt").exists()

    # a suite loads the merged judgment set and gates on it
    gate_root = tmp_path / "gate"
    gate_root.mkdir()
    for name in ("queries.jsonl", "corpus.jsonl"):
        (gate_root / name).write_text((root / name).read_text(encoding="utf-8"), encoding="utf-8")
    (gate_root / "qrels.txt").write_text(merged_path.read_text())
    gsuite = _scifact_suite(gate_root, floors="{bm25: {ndcg@10: 0.2}, dense: {ndcg@10: 0.99}}")
    result = SuiteRunner(load_suite(gsuite)).run()
    assert result.judgments.qrels == want
    from pytest_retrieval.gates.verdicts import compare

    verdicts = {
        f.retriever: compare(result.value(f.retriever, f.metric), f.op, f.threshold)
        for f in result.suite.floors
    }
    assert verdicts == {"bm25": True, "dense": False}
    # the pool filled the holes: bm25's top 20 is judged but for the rows left blank
    from pytest_retrieval.measures.metrics import evaluate

    run = {q: rk.top(DEPTH) for q, rk in result.retrievers["bm25"].run.items()}
    assert evaluate(existing, run, ["judged@20"]).aggregate["judged@20"] < 0.1
    assert evaluate(merged, run, ["judged@20"]).aggregate["judged@20"] > 0.8


# ------------------------------------------------------ from an empty judgment set

CORPUS = [
    {"_id": "d1", "title": "Solar panels", "text": "solar panel efficiency drops in winter"},
    {"_id": "d2", "title": "Wind", "text": "wind turbines offshore and solar"},
    {"_id": "d3", "title": "Floods", "text": "river flood defences for cities"},
    {"_id": "d4", "title": "Flood insurance", "text": "insurance after a river flood"},
    {"_id": "d5", "title": "Gravity", "text": "quantum gravity and loops"},
    {"_id": "d6", "title": "Panels", "text": "solar roofs and panel prices"},
]
QUERIES = [
    {"_id": "q1", "text": "solar panel efficiency"},
    {"_id": "q2", "text": "river flood defences"},
    {"_id": "q3", "text": "quantum gravity"},
]
# what a person decides for each pooled pair
HUMAN = {("q1", "d1"): 3, ("q1", "d6"): 1, ("q1", "d2"): 0, ("q2", "d3"): 2, ("q2", "d4"): 1, ("q3", "d5"): 3}


def test_from_empty_judgment_set_to_a_first_gate(pytester) -> None:
    root = pytester.path
    (root / "data").mkdir()
    with open(root / "data" / "corpus.jsonl", "w") as fh:
        fh.writelines(json.dumps(d) + "\n" for d in CORPUS)
    with open(root / "data" / "queries.jsonl", "w") as fh:
        fh.writelines(json.dumps(q) + "\n" for q in QUERIES)
    suite = _write(
        root / "retrieval_first.yaml",
        """\
        suite: first
        judgments: {queries: data/queries.jsonl, qrels: data/qrels.txt, corpus: data/corpus.jsonl}
        latency: {enabled: false}
        retrievers:
          bm25: {type: bm25, fields: [title, text]}
          text_only: {type: bm25, fields: [text]}
        floors:
          bm25: {ndcg@10: 0.9}
          text_only: {mrr@10: 0.99, recall@1: 0.99}
        """,
    )
    assert not (root / "data" / "qrels.txt").exists()
    pool = root / "pool.csv"
    assert cli_main(["judge", "pool", str(suite), "-o", str(pool), "--depth", "10"]) == 0
    rows = _csv_rows(pool)
    assert {(r["query_id"], r["doc_id"]) for r in rows} == set(HUMAN)
    with open(pool, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            r["grade"] = HUMAN[(r["query_id"], r["doc_id"])]
            w.writerow(r)
    assert cli_main(["judge", "import", str(pool), "--qrels", str(root / "data" / "qrels.txt")]) == 0
    assert load_qrels(root / "data" / "qrels.txt") == {
        "q1": {"d1": 3, "d6": 1, "d2": 0},
        "q2": {"d3": 2, "d4": 1},
        "q3": {"d5": 3},
    }
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    # bm25 ranks by grade for every query (nDCG@10 = 1) and text_only ranks a relevant
    # document first everywhere (MRR = 1): both pass; q1 and q2 have two relevant documents
    # each, so recall@1 = 2/3 fails its floor
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "PASS  bm25 ndcg@10" in out and "text_only :: recall@1" in out


def test_several_suites_are_several_candidate_systems(tmp_path, capsys) -> None:
    with open(tmp_path / "corpus.jsonl", "w") as fh:
        fh.writelines(json.dumps(d) + "\n" for d in CORPUS)
    with open(tmp_path / "queries.jsonl", "w") as fh:
        fh.writelines(json.dumps(q) + "\n" for q in QUERIES)
    (tmp_path / "qrels.txt").write_text("q1 0 d1 3\n")
    (tmp_path / "round1.txt").write_text("q2 0 d3 2\n")
    paths = []
    for name, fields in (("titles", "[title]"), ("texts", "[text]")):
        paths.append(
            _write(
                tmp_path / f"retrieval_{name}.yaml",
                f"""\
            suite: {name}
            judgments: {{queries: queries.jsonl, qrels: qrels.txt, corpus: corpus.jsonl}}
            latency: {{enabled: false}}
            retrievers:
              bm25: {{type: bm25, fields: {fields}}}
            floors:
              bm25: {{ndcg@10: 0.1}}
            """,
            )
        )
    out = tmp_path / "pool.jsonl"
    assert (
        cli_main(
            ["judge", "pool", *map(str, paths), "-o", str(out), "--judged", str(tmp_path / "round1.txt")]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "3 queries x 2 systems" in err and "titles:bm25:" in err and "texts:bm25:" in err
    got = {(p.query_id, p.doc_id) for p in read_pairs(out)}
    # the union of both systems' top 20, minus what the suites' qrels and round 1 judged
    # (q1, d1) is judged in the suites' qrels, (q2, d3) in round 1
    assert got == {("q1", "d6"), ("q1", "d2"), ("q2", "d4"), ("q3", "d5")}
    assert cli_main(["judge", "pool", *map(str, paths), "-o", str(out), "--retrievers", "texts:bm25"]) == 0
    assert "1 systems" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["q.txt", "q.tsv", "q.jsonl"])
def test_written_qrels_read_back(tmp_path, name) -> None:
    qrels = {"q1": {"d1": 3, "d2": 0}, "7": {"d 9" if name != "q.txt" else "d9": 1}}
    write_qrels(qrels, tmp_path / name)
    assert load_qrels(tmp_path / name) == qrels


def test_trec_qrels_refuse_ids_with_spaces(tmp_path) -> None:
    with pytest.raises(ConfigError, match="contains whitespace"):
        write_qrels({"q1": {"doc 1": 1}}, tmp_path / "q.txt")


def test_pool_runs_is_pure_and_ordered() -> None:
    runs = {
        "a": {"q1": Ranking(["d1", "d2", "d3"], [3, 2, 1])},
        "b": {"q1": Ranking(["d3", "d4", "d1"], [3, 2, 1]), "q2": Ranking(["d9"], [1])},
    }
    pool = pool_runs(runs, {"q1": {"d2": 0}}, depth=2, queries={"q2": "two", "q1": "one"})
    assert [(p.query_id, p.doc_id) for p in pool.pairs] == [
        ("q2", "d9"),
        ("q1", "d1"),
        ("q1", "d3"),
        ("q1", "d4"),
    ]
    assert pool.pairs[2].pooled_by == {"b": 1} and pool.judged == 1 and pool.unique == 5
    assert pool.contributed == {"a": 1, "b": 3} and pool.only_found_by == {"a": 1, "b": 3}
    shuffled = pool_runs(runs, {}, depth=3, shuffle=1)
    assert sorted((p.query_id, p.doc_id) for p in shuffled.pairs) == sorted(
        (p.query_id, p.doc_id) for p in pool_runs(runs, {}, depth=3).pairs
    )
