"""Each tool's quirks (issue #34, section 1): Quepid's CSV (unrated queries as a lone cell, the
space before a leading ``- = + @``), its book (several judges, ``unrateable``, ``judge_later``,
null ratings; ``judge agree`` and the merge rules) and snapshot (a run); RRE's two
``relevant_documents`` forms, topics and groups as tags, a query's own ratings over its group's,
placeholders; SRW's float ratings through a map; ``_rank_eval`` out as a Dev Tools body."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_retrieval.backends.base import BM25Spec, TemplateSpec
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.interchange import quepid, registry
from pytest_retrieval.interchange.files import read_folder
from pytest_retrieval.interchange.model import ImportOptions, Judgments, text_query_id
from pytest_retrieval.interchange.rank_eval import rank_eval_body, rank_eval_metric
from pytest_retrieval.io.trec import load_trec_run

from .conftest import cli


def write(path: Path, content: Any) -> Path:
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


# ------------------------------------------------------------------ Quepid CSV


def test_quepid_csv_reads_lone_cells_and_escaped_formulas(tmp_path: Path) -> None:
    p = write(
        tmp_path / "r.csv", "query,docid,rating\nno ratings yet\n -1 cable,d1,2\n =sum,d2,0\n @home,,\nb,d1,3"
    )
    js = registry.read("quepid", p)
    assert sorted(js.queries.values()) == ["-1 cable", "=sum", "@home", "b", "no ratings yet"]
    assert js.qrels[text_query_id("-1 cable")] == {"d1": 2}
    assert js.qrels[text_query_id("=sum")] == {"d2": 0}
    assert text_query_id("no ratings yet") not in js.qrels


def test_quepid_csv_export_is_what_quepid_writes() -> None:
    js = Judgments(
        queries={"a": "-1 cable", "b": "plain", "c": "unrated"},
        qrels={"a": {"d1": 2}, "b": {"d2": 0, "d3": 1}},
    )
    assert (
        quepid.write_ratings_csv(js) == "query,docid,rating\n -1 cable,d1,2\nplain,d2,0\nplain,d3,1\nunrated"
    )


# ------------------------------------------------------------------ Quepid book

BOOK = {
    "name": "b",
    "scorer": {"name": "nDCG@10"},
    "query_doc_pairs": [
        {
            "query_text": "laptop bag",
            "doc_id": "d1",
            "position": 1,
            "document_fields": "{}",
            "judgements": [
                {"rating": 3.0, "unrateable": False, "judge_later": False, "user_email": "ann@x.org"},
                {"rating": 2.0, "unrateable": False, "judge_later": False, "user_email": "bob@x.org"},
            ],
        },
        {
            "query_text": "laptop bag",
            "doc_id": "d2",
            "judgements": [
                {"rating": 1.0, "unrateable": False, "judge_later": False, "user_email": "ann@x.org"},
                {"rating": 1.0, "unrateable": False, "judge_later": False, "user_email": "bob@x.org"},
            ],
        },
        {
            "query_text": "usb hub",
            "doc_id": "d3",
            "judgements": [
                {"rating": None, "unrateable": True, "judge_later": False, "user_email": "ann@x.org"},
                {"rating": None, "unrateable": False, "judge_later": True, "user_email": "bob@x.org"},
                {"rating": None, "unrateable": False, "judge_later": False, "user_email": "cy@x.org"},
            ],
        },
        {"query_text": "usb hub", "doc_id": "d4", "judgements": [{"rating": 0.0, "user_email": "cy@x.org"}]},
    ],
}


def test_a_book_keeps_each_judge_and_merges_them_by_the_rules(tmp_path: Path, capsys: Any) -> None:
    p = write(tmp_path / "book.json", BOOK)
    assert cli("judge", "import", "--from", "quepid", p, "--out", tmp_path / "f") == 0
    err = capsys.readouterr().err
    assert "1 unrateable, 1 judge_later, 1 null rating" in err
    assert "judges disagree on" in err and "2 then" not in err  # ann's 3, then bob's 2
    js = read_folder(tmp_path / "f")
    bag, hub = text_query_id("laptop bag"), text_query_id("usb hub")
    assert js.qrels == {bag: {"d1": 3, "d2": 1}, hub: {"d4": 0}}  # keep-existing: the first judge
    judges = sorted(p.name for p in (tmp_path / "f" / "judges").iterdir())
    assert len(judges) == 3
    # each judge's file feeds judge agree
    ann, bob = (tmp_path / "f" / "judges" / j for j in judges[:2])
    assert cli("judge", "agree", ann, bob, "--json") == 0
    agreement = json.loads(capsys.readouterr().out)
    assert agreement["n"] == 2
    assert (
        cli("judge", "import", "--from", "quepid", p, "--out", tmp_path / "g", "--policy", "prefer-new") == 0
    )
    assert read_folder(tmp_path / "g").qrels[bag]["d1"] == 2
    assert cli("judge", "import", "--from", "quepid", p, "--out", tmp_path / "h", "--policy", "error") == 2
    assert "is graded 2 here but 3" in capsys.readouterr().err


# ------------------------------------------------------------------ Quepid snapshot


def test_a_snapshot_becomes_a_run_file(tmp_path: Path) -> None:
    snap = {
        "id": 1,
        "name": "s",
        "docs": {"7": [{"id": "d2"}, {"id": "d1"}], "8": [{"id": "d9"}]},
        "queries": [
            {"query_id": 7, "query_text": "red shoes", "ratings": {"d1": 3.0, "d5": 0.0}},
            {"query_id": 8, "query_text": "blue hat", "ratings": {}},
        ],
        "scores": [],
    }
    p = write(tmp_path / "snap.json", snap)
    assert cli("judge", "import", "--from", "quepid", p, "--out", tmp_path / "f") == 0
    run = load_trec_run(tmp_path / "f" / "run.trec")
    assert run[text_query_id("red shoes")].doc_ids == ["d2", "d1"]
    assert run[text_query_id("blue hat")].doc_ids == ["d9"]
    assert read_folder(tmp_path / "f").qrels == {text_query_id("red shoes"): {"d1": 3, "d5": 0}}


# ------------------------------------------------------------------ RRE


def rre(groups: Any, **top: Any) -> Any:
    return {
        "index": "i",
        "id_field": "id",
        **top,
        "topics": [{"description": "Basses", "query_groups": groups}],
    }


def test_rre_both_forms_tags_and_a_query_override(tmp_path: Path) -> None:
    groups = [
        {
            "name": "Brand",
            "queries": [
                {"placeholders": {"$query": "fender"}},
                {"placeholders": {"$query": "Fender jazz"}, "relevant_documents": {"3": ["d9"]}},
            ],
            "relevant_documents": {"d1": {"gain": 3}, "d2": {"gain": 1}},
        },
        {
            "name": "Model",
            "queries": [{"placeholders": {"$query": "jazz"}}],
            "relevant_documents": {"2": ["d1", "d3"]},
        },
    ]
    js = registry.read("rre", write(tmp_path / "r.json", rre(groups)))
    fender, jazz_f, jazz = (text_query_id(t) for t in ("fender", "Fender jazz", "jazz"))
    assert js.qrels == {fender: {"d1": 3, "d2": 1}, jazz_f: {"d9": 3}, jazz: {"d1": 2, "d3": 2}}
    assert js.tags[fender] == ("topic:Basses", "group:Brand") and js.tags[jazz] == (
        "topic:Basses",
        "group:Model",
    )


def test_rre_placeholders_besides_query_are_refused_by_name(tmp_path: Path) -> None:
    groups = [
        {"name": "g", "queries": [{"placeholders": {"$query": "a", "$strings": 4}}], "relevant_documents": {}}
    ]
    p = write(tmp_path / "r.json", rre(groups))
    with pytest.raises(ConfigError) as err:
        registry.read("rre", p)
    assert "topics[0].query_groups[0].queries[0].placeholders" in str(err.value)
    assert "$strings" in str(err.value) and "--skip-placeholders" in str(err.value)
    groups[0]["queries"].append({"placeholders": {"$q": "b"}})
    js = registry.read(
        "rre", write(p, rre(groups, query_placeholder="$q")), ImportOptions(skip_placeholders=True)
    )
    assert list(js.queries.values()) == ["b"]


# ------------------------------------------------------------------ SRW


def test_srw_ratings_map_through_the_grade_map_or_are_one_line(tmp_path: Path) -> None:
    body = {
        "judgmentRatings": [
            {"query": "q", "ratings": [{"docId": "a", "rating": "10.000"}, {"docId": "b", "rating": 0.5}]}
        ]
    }
    p = write(tmp_path / "j.json", body)
    with pytest.raises(ConfigError) as err:
        registry.read("srw", p)
    assert "judgmentRatings[0].ratings[1].rating" in str(err.value) and "--grade-map" in str(err.value)
    js = registry.read("srw", p, ImportOptions(rating_map={10.0: 2, 0.5: 1}))
    assert js.qrels == {text_query_id("q"): {"a": 2, "b": 1}}
    with pytest.raises(
        ConfigError, match=r"ratings\[0\].rating: rating '10.000' is not mapped by --grade-map \(0.5\)"
    ):
        registry.read("srw", p, ImportOptions(rating_map={0.5: 1}))


# ------------------------------------------------------------------ _rank_eval out


def test_rank_eval_body_from_a_bm25_retriever() -> None:
    js = Judgments(queries={"q1": "amsterdam"}, qrels={"q1": {"doc1": 0, "doc2": 2}})
    body = rank_eval_body(js, BM25Spec(fields=(("text", 1.0),)), index="foo", k=5, metric="ndcg@5")
    assert body == {
        "requests": [
            {
                "id": "q1",
                "request": {"query": {"match": {"text": {"query": "amsterdam"}}}, "size": 5},
                "ratings": [
                    {"_index": "foo", "_id": "doc1", "rating": 0},
                    {"_index": "foo", "_id": "doc2", "rating": 2},
                ],
            }
        ],
        "metric": {"dcg": {"k": 5, "normalize": True}},
    }
    templated = rank_eval_body(js, BM25Spec(), index="foo", template=True, metric="err@10")
    assert (
        templated["templates"][0]["template"]["source"]["query"]["multi_match"]["query"] == "{{query_text}}"
    )
    assert templated["requests"][0]["params"] == {"query_text": "amsterdam", "k": 10}
    assert templated["metric"] == {"expected_reciprocal_rank": {"k": 10, "maximum_relevance": 2}}


def test_rank_eval_body_from_a_template_retriever() -> None:
    js = Judgments(queries={"q1": 'say "hi"'}, qrels={"q1": {"d": 1}})
    spec = TemplateSpec(body={"query": {"match": {"body": "{{query_text}}"}}, "size": "{{k}}"})
    body = rank_eval_body(js, spec, index="i", k=3)
    assert body["requests"][0]["request"] == {"query": {"match": {"body": 'say "hi"'}}, "size": 3}


@pytest.mark.parametrize(
    "name, expected",
    [
        ("precision@5", {"precision": {"k": 5, "relevant_rating_threshold": 2, "ignore_unlabeled": False}}),
        ("recall@100", {"recall": {"k": 100, "relevant_rating_threshold": 2}}),
        ("mrr@10", {"mean_reciprocal_rank": {"k": 10, "relevant_rating_threshold": 2}}),
        ("dcg@10", {"dcg": {"k": 10, "normalize": False}}),
    ],
)
def test_rank_eval_metrics(name: str, expected: Any) -> None:
    assert rank_eval_metric(name, relevance_threshold=2) == expected


def test_a_suite_exports_a_dev_tools_request(tmp_path: Path) -> None:
    from ..tiny import TINY_SUITE

    suite = write(tmp_path / "retrieval_tiny.yaml", TINY_SUITE)
    out = tmp_path / "rank_eval.txt"
    assert (
        cli(
            "judge",
            "export",
            suite,
            "--to",
            "rank-eval",
            "--out",
            out,
            "--index",
            "docs",
            "--retriever",
            "text_only",
        )
        == 0
    )
    head, _, body = out.read_text().partition("\n")
    assert head == "GET /docs/_rank_eval"
    parsed = json.loads(body)
    assert parsed["requests"][0]["request"]["query"] == {
        "match": {"text": {"query": "solar panels efficiency"}}
    }
    assert {r["id"] for r in parsed["requests"]} == {"q1", "q2", "3", "q4"}


def test_a_book_round_trips_through_quepid_csv(tmp_path: Path) -> None:
    p = write(tmp_path / "book.json", BOOK)
    assert cli("judge", "import", "--from", "quepid", p, "--out", tmp_path / "f") == 0
    assert cli("judge", "export", tmp_path / "f", "--to", "quepid", "--out", tmp_path / "r.csv") == 0
    assert cli("judge", "import", "--from", "quepid", tmp_path / "r.csv", "--out", tmp_path / "g") == 0
    assert read_folder(tmp_path / "f").same(read_folder(tmp_path / "g"))


def test_a_stale_file_of_an_earlier_import_is_refused(tmp_path: Path, capsys: Any) -> None:
    rated = write(
        tmp_path / "r.json", {"judgmentRatings": [{"query": "a", "ratings": [{"docId": "d", "rating": 1}]}]}
    )
    unrated = write(tmp_path / "q.json", {"querySetQueries": [{"queryText": "a"}]})
    assert cli("judge", "import", "--from", "srw", rated, "--out", tmp_path / "f") == 0
    assert cli("judge", "import", "--from", "srw", rated, "--out", tmp_path / "f") == 0  # the same again
    assert cli("judge", "import", "--from", "srw", unrated, "--out", tmp_path / "f") == 2
    assert "qrels.tsv is left from an earlier import" in capsys.readouterr().err
