"""Clicks to qrels: the grading rule, aggregation over repeated impressions, position-bias
correction, stable query ids, input validation, and a suite that gates on the result."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_retrieval.cli import main as cli_main
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.io.qrels import load_qrels
from pytest_retrieval.io.queries import load_queries
from pytest_retrieval.judge.clicks import ClickGrading, grade_clicks, stable_query_id

pytest_plugins = ["pytester"]

LOG = """\
query,doc_id,clicked,dwell,position
solar panels,d1,1,45,1
solar panels,d1,0,,1
solar panels,d6,1,5,2
solar panels,d2,0,,3
Solar  Panels ,d6,1,40.5,2
river flood,d3,true,31,1
river flood,d4,yes,30,2
river flood,d4,no,,2
"""


def test_plain_rule_long_click_click_impression(tmp_path: Path) -> None:
    log = tmp_path / "clicks.csv"
    log.write_text(LOG)
    res = grade_clicks(log, progress=False)
    solar, river = stable_query_id("solar panels"), stable_query_id("river flood")
    # one query for both spellings, its first spelling kept
    assert res.queries == {solar: "solar panels", river: "river flood"}
    assert res.qrels == {
        solar: {"d1": 2, "d6": 2, "d2": 0},
        river: {"d3": 2, "d4": 1},
    }  # dwell 30 is not "over 30 s"
    st = res.stats[(solar, "d1")]
    assert (st.impressions, st.clicks, st.long_clicks, st.examinations) == (2, 1, 1, 2.0)
    assert res.rows == 8 and res.generated_ids == 2
    assert "grade 0: 1, grade 1: 1, grade 2: 3" in res.summary()


def test_thresholds_and_grades_are_configurable(tmp_path: Path) -> None:
    log = tmp_path / "clicks.csv"
    log.write_text(LOG)
    res = grade_clicks(
        log, ClickGrading(long_dwell=60, grade_click=2, grade_long_click=3, min_impressions=2), progress=False
    )
    solar, river = stable_query_id("solar panels"), stable_query_id("river flood")
    # d6 and d4 were shown twice: kept; the rest once: left unjudged
    assert res.qrels == {solar: {"d1": 2, "d6": 2}, river: {"d4": 2}}
    assert sum(res.dropped.values()) == 2
    # a pair needs half of its impressions clicked to count as clicked
    res = grade_clicks(log, ClickGrading(click_rate=0.5, long_click_rate=0.5), progress=False)
    assert res.qrels[river] == {"d3": 2, "d4": 1}
    res = grade_clicks(log, ClickGrading(click_rate=0.6, long_click_rate=0.6), progress=False)
    # d1: one long click in two impressions (0.5 < 0.6) -> 0; d6: two clicks in two -> 1
    assert res.qrels[solar]["d1"] == 0 and res.qrels[solar]["d6"] == 1


def _bias_log(path: Path) -> Path:
    rows = []

    def add(doc: str, position: int, shown: int, clicks: int, long_clicks: int = 0) -> None:
        for i in range(shown):
            clicked = i < clicks
            dwell = 90 if i < long_clicks else (5 if clicked else None)
            rows.append(
                {
                    "qid": "q1",
                    "query": "heat pumps",
                    "doc": doc,
                    "click": clicked,
                    "dwell_seconds": dwell,
                    "rank": position,
                }
            )

    add("A", 1, 10, 2)  # top slot, 2 clicks in 10
    add("B", 5, 10, 1, 1)  # 5th slot, 1 long click in 10
    add("C", 10, 3, 0)  # 10th slot, never clicked, rarely examined
    add("D", 1, 10, 1)  # top slot, 1 click in 10
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_position_bias_correction(tmp_path: Path) -> None:
    log = _bias_log(tmp_path / "log.jsonl")
    plain = grade_clicks(log, progress=False)
    assert plain.qrels == {"q1": {"A": 1, "B": 2, "C": 0, "D": 1}}
    res = grade_clicks(log, ClickGrading(position_bias=1.0), progress=False)
    # expected examinations with propensity 1/position: A 10, B 10 * 1/5 = 2, C 3 * 1/10,
    # D 10; rates: A 2/10 = 0.2 -> 1, B 1/2 = 0.5 long -> 2, C unclicked with 0.3 < 1
    # expected examinations -> unjudged, D 1/10 = 0.1 < 0.2 -> 0
    assert res.stats[("q1", "B")].examinations == pytest.approx(2.0)
    assert res.stats[("q1", "C")].examinations == pytest.approx(0.3)
    assert res.qrels == {"q1": {"A": 1, "B": 2, "D": 0}}
    assert "position-bias correction (1/position)^1" in res.summary()
    # eta = 0 is "no bias": every position examined
    flat = grade_clicks(
        log, ClickGrading(position_bias=0.0, click_rate=0.0, long_click_rate=0.0), progress=False
    )
    assert flat.qrels == plain.qrels


def test_stable_ids() -> None:
    assert stable_query_id("Solar  PANELS ") == stable_query_id("solar panels")
    assert stable_query_id("solar panels") != stable_query_id("solar panel")
    assert (
        stable_query_id("solar panels") == "q" + __import__("hashlib").sha1(b"solar panels").hexdigest()[:12]
    )


@pytest.mark.parametrize(
    "text,message",
    [
        ("query,doc_id,clicked\nsolar,d1,maybe\n", r"clicks.csv:2: clicked value 'maybe' is not 1/0"),
        ("query,doc_id,clicked,dwell\nsolar,d1,1,-3\n", r"clicks.csv:2: dwell '-3' is negative"),
        ("query,doc_id,clicked,dwell\nsolar,d1,1,long\n", r"clicks.csv:2: dwell 'long' is not a number"),
        ("query,clicked\nsolar,1\n", r"clicks.csv:2: no doc_id column"),
        ("doc_id,clicked\nd1,1\n", r"no query column"),
        ("query,doc_id,clicked\nsolar,d1,1,extra\n", r"clicks.csv:2: 4 field\(s\), the header has 3"),
        ("query,doc_id,clicked,position\nsolar,d1,1,0\n", r"position 0 is below 1 \(positions start at 0\?"),
        ("query,doc_id,clicked\n,d1,1\n", r"clicks.csv:2: row has neither a query id nor a query text"),
    ],
)
def test_bad_rows_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    log = tmp_path / "clicks.csv"
    log.write_text(text)
    with pytest.raises(ConfigError, match=message) as e:
        grade_clicks(log, progress=False)
    assert "\n" not in str(e.value)


def test_ids_without_texts_need_a_queries_file(tmp_path: Path) -> None:
    log = tmp_path / "clicks.jsonl"
    log.write_text(
        '{"query_id": 1, "doc_id": "d1", "clicked": 1}\n{"query_id": 2, "doc_id": "d1", "clicked": 0}\n'
    )
    with pytest.raises(ConfigError, match=r"clicks.jsonl:1: query '1' has no text in the log"):
        grade_clicks(log, progress=False)
    res = grade_clicks(log, query_texts={"1": "one", "2": "two"}, progress=False)
    assert res.queries == {"1": "one", "2": "two"} and res.qrels == {"1": {"d1": 1}, "2": {"d1": 0}}
    with pytest.raises(ConfigError, match=r"clicks.jsonl:2: query '2' has no text"):
        grade_clicks(log, query_texts={"1": "one"}, progress=False)


def test_bias_correction_needs_positions_and_columns_can_be_named(tmp_path: Path) -> None:
    log = tmp_path / "clicks.csv"
    log.write_text("search_term,item,clicked,slot\nsolar,d1,1,1\nsolar,d2,0,\n")
    with pytest.raises(ConfigError, match="no doc_id column"):
        grade_clicks(log, progress=False)
    cols = {"query": "search_term", "doc_id": "item", "position": "slot"}
    with pytest.raises(ConfigError, match=r"clicks.csv:3: position-bias correction needs a position"):
        grade_clicks(log, ClickGrading(position_bias=1.0), columns=cols, progress=False)
    res = grade_clicks(log, columns=cols, progress=False)
    assert list(res.qrels.values()) == [{"d1": 1, "d2": 0}]
    log.write_text("query,doc_id,clicked,position\nsolar,d1,1,0\nsolar,d2,0,1\n")
    res = grade_clicks(log, ClickGrading(position_bias=1.0, position_base=0), progress=False)
    assert res.stats[(stable_query_id("solar"), "d2")].examinations == pytest.approx(0.5)


def test_parquet(tmp_path: Path) -> None:
    path = tmp_path / "clicks.parquet"
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        path.write_bytes(b"PAR1")
        with pytest.raises(ConfigError, match="reading Parquet needs pyarrow"):
            grade_clicks(path, progress=False)
        return
    pq.write_table(
        pa.table(
            {
                "query": ["solar", "solar"],
                "doc_id": ["d1", "d2"],
                "clicked": [True, False],
                "dwell": [40.0, None],
            }
        ),
        str(path),
    )
    res = grade_clicks(path, progress=False)
    assert list(res.qrels.values()) == [{"d1": 2, "d2": 0}]


def test_command_writes_qrels_queries_and_evidence(tmp_path: Path, capsys) -> None:
    log = _bias_log(tmp_path / "log.jsonl")
    argv = [
        "judge",
        "clicks",
        str(log),
        "--qrels-out",
        str(tmp_path / "q.txt"),
        "--queries-out",
        str(tmp_path / "queries.jsonl"),
        "--stats-out",
        str(tmp_path / "ev.tsv"),
        "--position-bias",
        "1",
        "--no-progress",
    ]
    assert cli_main(argv) == 0
    assert load_qrels(tmp_path / "q.txt") == {"q1": {"A": 1, "B": 2, "D": 0}}
    assert load_queries(tmp_path / "queries.jsonl") == {"q1": "heat pumps"}
    ev = (tmp_path / "ev.tsv").read_text().splitlines()
    assert ev[0].startswith("query_id\tdoc_id\timpressions") and len(ev) == 5
    assert "q1\tC\t3\t0\t0\t0.3000" in "\n".join(ev)
    err = capsys.readouterr().err
    assert "left unjudged: 1 pair(s)" in err and "wrote qrels" in err
    # text-only logs need --queries-out (the generated ids mean nothing without it)
    (tmp_path / "t.csv").write_text(LOG)
    assert cli_main(["judge", "clicks", str(tmp_path / "t.csv"), "--qrels-out", str(tmp_path / "t.txt")]) == 2
    assert "--queries-out" in capsys.readouterr().err
    assert (
        cli_main(
            [
                "judge",
                "clicks",
                str(tmp_path / "t.csv"),
                "--qrels-out",
                str(tmp_path / "t.txt"),
                "--grades",
                "0,1",
            ]
        )
        == 2
    )


# ----------------------------------------------------- a suite gates on click labels

CORPUS = [
    {"_id": "d1", "title": "Solar panels", "text": "solar panel efficiency drops in winter"},
    {"_id": "d2", "title": "Wind", "text": "wind turbines offshore and solar"},
    {"_id": "d3", "title": "Floods", "text": "river flood defences for cities"},
    {"_id": "d4", "title": "Flood insurance", "text": "insurance after a river flood"},
    {"_id": "d5", "title": "Gravity", "text": "quantum gravity and loops"},
    {"_id": "d6", "title": "Panels", "text": "solar roofs and panel prices"},
]
SEARCH_LOG = """\
query,doc_id,clicked,dwell,position
solar panel efficiency,d1,1,120,1
solar panel efficiency,d6,1,8,2
solar panel efficiency,d2,0,,3
solar panel efficiency,d1,1,75,1
river flood defences,d3,1,64,1
river flood defences,d4,0,,2
quantum gravity,d5,1,12,1
"""


def test_click_labels_gate_a_suite(pytester) -> None:
    root = pytester.path
    with open(root / "corpus.jsonl", "w") as fh:
        fh.writelines(json.dumps(d) + "\n" for d in CORPUS)
    (root / "search_log.csv").write_text(SEARCH_LOG)
    assert (
        cli_main(
            [
                "judge",
                "clicks",
                str(root / "search_log.csv"),
                "--qrels-out",
                str(root / "qrels.txt"),
                "--queries-out",
                str(root / "queries.jsonl"),
                "--no-progress",
            ]
        )
        == 0
    )
    (root / "retrieval_clicks.yaml").write_text(
        textwrap.dedent("""\
        suite: from-clicks
        judgments: {queries: queries.jsonl, qrels: qrels.txt, corpus: corpus.jsonl}
        latency: {enabled: false}
        retrievers:
          bm25: {type: bm25, fields: [title, text]}
        floors:
          bm25: {ndcg@10: 0.9, precision@3: 0.9}
        """)
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    # bm25 orders each query's documents by their click grade: nDCG@10 = 1 passes; few
    # documents were clicked, so precision@3 = (2/3 + 1/3 + 1/3) / 3 fails
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "PASS  bm25 ndcg@10 = 1.0000" in out
    assert "from-clicks :: bm25 :: precision@3 = 0.4444, below the floor" in out
