"""Run files read into columns (``io/runfiles.py`` with ``run_reader``, ``run_columns``,
``fingerprints``, ``qrels_columns``): the same numbers as the in-memory engine and trec_eval,
whatever the file's layout, and the line reader's messages for bad files."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import pytrec_eval

from pytest_retrieval.cli import main
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.io.qrels import load_qrels
from pytest_retrieval.io.runfiles import evaluate_files, read_qrels_columns
from pytest_retrieval.measures.columnar import QrelsColumns
from pytest_retrieval.measures.metrics import evaluate

from ..measures.test_metrics_trec_eval import (
    OUR_METRICS,
    PAIRS,
    TREC_MEASURES,
    assert_matches,
    random_case,
    trec_input,
)

METRICS = ["ndcg@10", "map", "mrr", "recall@20", "precision@5", "judged@10", "r-precision"]


def _write(path: Path, qrels, run, *, shuffle=False, sep=" ", eol="\n"):
    """qrels and run files (a query with no judgment at all has no qrels line)."""
    qlines = [f"{q} 0 {d} {g}" for q, j in qrels.items() for d, g in j.items()]
    path.with_suffix(".qrels").write_text("".join(line + "\n" for line in qlines), encoding="utf-8")
    lines = [
        sep.join([q, "Q0", d, str(i), repr(s), "tag"])
        for q, r in run.items()
        for i, (d, s) in enumerate(zip(r.doc_ids, r.scores), 1)
    ]
    if shuffle:
        random.Random(3).shuffle(lines)
    path.write_text("".join(line + eol for line in lines), encoding="utf-8")
    return path.with_suffix(".qrels"), path


def _same(a, b):
    assert a.per_query == b.per_query
    assert a.aggregate == b.aggregate
    assert a.evaluated == b.evaluated and a.no_relevant == b.no_relevant
    assert sorted(a.missing) == sorted(b.missing)


@pytest.mark.parametrize("ties", ["trec", "engine"])
def test_file_equals_in_memory_engine_across_blocks(tmp_path, ties):
    qrels, run = random_case(3, 1500, 3)
    qpath, rpath = _write(tmp_path / "run.trec", qrels, run)
    memory = evaluate(load_qrels(qpath), run, METRICS, ties=ties)
    # small blocks: queries cut across block boundaries are carried to the next block
    files = evaluate_files(qpath, rpath, METRICS, ties=ties, block_bytes=4096)
    _same(files, memory)
    # a query with an empty ranking has no line in the file
    assert files.unjudged_queries == [q for q in memory.unjudged_queries if len(run[q])]


def test_file_matches_trec_eval(tmp_path):
    qrels, run = random_case(8, 2000, 3)
    qpath, rpath = _write(tmp_path / "run.trec", qrels, run)
    ours = evaluate_files(qpath, rpath, OUR_METRICS, gain="linear", ties="trec", block_bytes=1 << 16)
    tq, tr = trec_input(qrels, run)
    trec = pytrec_eval.RelevanceEvaluator(tq, TREC_MEASURES).evaluate(tr)
    assert assert_matches(ours, trec, PAIRS) > 1500 * len(PAIRS)


@pytest.mark.parametrize("ties", ["trec", "engine"])
def test_lines_not_grouped_by_query_are_split_into_parts(tmp_path, ties):
    qrels, run = random_case(4, 1200, 3)
    qpath, rpath = _write(tmp_path / "run.trec", qrels, run, shuffle=True)
    memory = evaluate(load_qrels(qpath), run, METRICS, ties=ties)
    files = evaluate_files(qpath, rpath, METRICS, ties=ties, block_bytes=8192, part_bytes=20_000)
    _same(files, memory)


def test_tabs_runs_of_spaces_and_crlf(tmp_path):
    qrels, run = random_case(5, 600, 3)
    for sep, eol in (("\t", "\n"), ("  ", "\r\n"), (" \t ", "\n")):
        qpath, rpath = _write(tmp_path / "run.trec", qrels, run, sep=sep, eol=eol)
        memory = evaluate(load_qrels(qpath), run, METRICS, ties="trec")
        _same(evaluate_files(qpath, rpath, METRICS, ties="trec", block_bytes=8192), memory)


def test_qrels_fast_reader_equals_the_line_reader(tmp_path):
    qrels, _ = random_case(6, 400, 3)
    path = tmp_path / "q.qrels"
    path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, j in qrels.items() for d, g in j.items())
        + "q1 0 dup 1\nq1 0 dup 1\n",  # a repeated judgment with the same grade is fine
        encoding="utf-8",
    )
    fast = read_qrels_columns(path)
    slow = QrelsColumns.from_qrels(load_qrels(path))
    assert fast.evaluated == slow.evaluated and fast.no_relevant == slow.no_relevant
    assert list(fast.qids) == list(slow.qids)
    assert len(fast.keys) == len(slow.keys)
    beir = tmp_path / "test.tsv"
    beir.write_text(
        "query-id\tcorpus-id\tscore\n"
        + "".join(f"{q}\t{d}\t{g}\n" for q, j in qrels.items() for d, g in j.items())
    )
    assert read_qrels_columns(beir).evaluated == slow.evaluated


@pytest.mark.parametrize(
    "text,expected",
    [
        ("1 Q0 d1 one 2.0 t\n", ["run.trec:1", "rank 'one'"]),
        ("1 Q0 d1 1 high t\n", ["run.trec:1", "score 'high'"]),
        ("1 Q0 d1 1 nan t\n", ["run.trec:1", "NaN"]),
        ("1 Q0 d1 1 2.0 t\n1 Q0 d1 2 1.0 t\n", ["run.trec:2", "appears twice"]),
        ("1 Q0 d1 1 2.0\n", ["run.trec:1", "got 5 column(s)"]),
        ("\n\n", ["run.trec", "no lines"]),
    ],
)
def test_bad_run_files_name_the_line(tmp_path, text, expected):
    (tmp_path / "q.qrels").write_text("1 0 d1 1\n")
    (tmp_path / "run.trec").write_text(text)
    with pytest.raises(ConfigError) as info:
        evaluate_files(tmp_path / "q.qrels", tmp_path / "run.trec", ["map"], ties="engine")
    for part in expected:
        assert part in str(info.value)


def test_trec_ties_ignore_the_rank_column_like_trec_eval(tmp_path):
    # get_trec_results.c reads the rank as a string it never uses; trec_eval orders by score
    (tmp_path / "q.qrels").write_text("1 0 d1 1\n")
    (tmp_path / "run.trec").write_text("1 Q0 d2 first 2.0 t\n1 Q0 d1 second 1.0 t\n")
    ev = evaluate_files(tmp_path / "q.qrels", tmp_path / "run.trec", ["mrr"], ties="trec")
    assert ev.aggregate["mrr"] == 0.5


def test_missing_run_file(tmp_path):
    (tmp_path / "q.qrels").write_text("1 0 d1 1\n")
    with pytest.raises(ConfigError, match="not found"):
        evaluate_files(tmp_path / "q.qrels", tmp_path / "nope.trec", ["map"])


def test_evaluate_command_reads_files_in_columns(tmp_path, capsys):
    qrels, run = random_case(9, 300, 3)
    qpath, rpath = _write(tmp_path / "run.trec", qrels, run)
    # random_case grades some docs -1 (judged non-relevant): the command wants them mapped
    args = ["evaluate", str(qpath), str(rpath), "-m", "map", "--profile", "trec", "--grade-map=-1:0"]
    assert main(args) == 0
    out = capsys.readouterr().out
    in_file = {q: r for q, r in run.items() if len(r.doc_ids)}  # a file holds no empty ranking
    expected = evaluate(qrels, in_file, ["map"], gain="linear", ties="trec", average_over="run").aggregate[
        "map"
    ]
    assert f"map\tall\t{expected:.4f}" in out


def test_grade_map_and_header_columns_in_any_order(tmp_path):
    from pytest_retrieval.io.grades import GradeScale

    path = tmp_path / "q.tsv"
    path.write_text("corpus-id\tannotator\tquery-id\tscore\nd1\tx\tq1\t-1\nd2\tx\tq1\t2\nd3\tx\tq2\t0\n")
    scale = GradeScale(low=0, high=10, mapping={-1: 0}, option="--grade-map")
    fast = read_qrels_columns(path, scale)
    slow = QrelsColumns.from_qrels(load_qrels(path, scale))
    # every query is scored; which are averaged is decided later (measures.aggregate)
    assert fast.evaluated == slow.evaluated == ["q1", "q2"] and fast.no_relevant == slow.no_relevant == ["q2"]
    assert sorted(fast.grades.tolist()) == sorted(slow.grades.tolist()) == [0, 0, 2]
    with pytest.raises(ConfigError, match=r"q.tsv:2.*negative relevance grade -1"):
        read_qrels_columns(path, GradeScale(low=0, high=10, option="--grade-map"))


def test_identical_ids_dropped_and_counted(tmp_path):
    from pytest_retrieval.io.run_reader import RunFileFacts

    (tmp_path / "q.qrels").write_text("q1 0 d1 1\n")
    (tmp_path / "run.trec").write_text("q1 Q0 q1 1 3.0 t\nq1 Q0 d1 2 2.0 t\n")
    facts = RunFileFacts()
    ev = evaluate_files(
        tmp_path / "q.qrels", tmp_path / "run.trec", ["mrr"], ignore_identical_ids=True, facts=facts
    )
    assert ev.aggregate["mrr"] == 1.0 and facts.self_hits_removed == 1
    assert evaluate_files(tmp_path / "q.qrels", tmp_path / "run.trec", ["mrr"]).aggregate["mrr"] == 0.5


def test_no_shared_query_id_is_an_error(tmp_path):
    from pytest_retrieval.errors import RetrievalError

    (tmp_path / "q.qrels").write_text("q1 0 d1 1\n")
    (tmp_path / "run.trec").write_text("x1 Q0 d1 1 3.0 t\n")
    with pytest.raises(RetrievalError, match="share no query id"):
        evaluate_files(tmp_path / "q.qrels", tmp_path / "run.trec", ["mrr"])


def test_byte_order_mark_dropped_and_non_utf8_refused(tmp_path):
    (tmp_path / "q.qrels").write_text("q1 0 d1 1\n")
    run = tmp_path / "run.trec"
    run.write_bytes(b"\xef\xbb\xbfq1 Q0 d2 1 3.0 t\nq1 Q0 d1 2 2.0 t\n")
    assert evaluate_files(tmp_path / "q.qrels", run, ["mrr"]).aggregate["mrr"] == 0.5
    run.write_bytes(b"q1 Q0 d\xe9 1 3.0 t\nq1 Q0 d1 2 2.0 t\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        evaluate_files(tmp_path / "q.qrels", run, ["mrr"])


def test_a_device_is_not_read(tmp_path):
    (tmp_path / "q.qrels").write_text("q1 0 d1 1\n")
    with pytest.raises(ConfigError, match="not a regular file"):
        evaluate_files(tmp_path / "q.qrels", Path("/dev/zero"), ["mrr"])


def _read_both(path: Path):
    from pytest_retrieval.io.runfiles import read_run
    from pytest_retrieval.io.trec import load_trec_run

    fast, slow = read_run(path), load_trec_run(path)
    assert list(fast) == list(slow)
    for q in slow:
        assert fast[q].doc_ids == slow[q].doc_ids and fast[q].scores == slow[q].scores
    return fast


@pytest.mark.parametrize("shuffle,sep,eol", [(False, " ", "\n"), (True, " ", "\n"), (True, "\t", "\r\n")])
def test_read_run_equals_the_line_reader(tmp_path, shuffle, sep, eol):
    _qrels, run = random_case(11, 300, 3)
    _qpath, rpath = _write(tmp_path / "run.trec", _qrels, run, shuffle=shuffle, sep=sep, eol=eol)
    assert len(_read_both(rpath)) == len([q for q in run if len(run[q])])


def test_read_run_orders_by_rank_then_file_order_and_falls_back_on_odd_numbers(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("b Q0 x 2 1.0 t\na Q0 y 1 2.0 t\nb Q0 z 1 0.5 t\nb Q0 w 1 0.25 t\n")
    fast = _read_both(path)
    assert list(fast) == ["b", "a"] and fast["b"].doc_ids == ["z", "w", "x"]
    path.write_text("\ufeffq Q0 x +1 inf t\nq Q0 y 2 1e3 t\n", encoding="utf-8")  # the line reader's numbers
    assert _read_both(path)["q"].doc_ids == ["x", "y"]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("1 Q0 d1 one 2.0 t\n", "run.trec:1: rank 'one'"),
        ("1 Q0 d1 1 2.0 t\n1 Q0 d1 2 1.0 t\n", "run.trec:2: document 'd1' appears twice"),
        ("1 Q0 d1 1 nan t\n", "run.trec:1: score 'nan' is NaN"),
        ("1 Q0 d1 1 1_0 t\n", "run.trec:1: score '1_0' is not a decimal number"),
        ("1 Q0 d1 1 \u0661 t\n", "run.trec:1: score '\u0661' is not a decimal number"),
    ],
)
def test_read_run_errors_are_the_line_readers(tmp_path, text, expected):
    from pytest_retrieval.io.runfiles import read_run

    (tmp_path / "run.trec").write_text(text)
    with pytest.raises(ConfigError) as info:
        read_run(tmp_path / "run.trec")
    assert expected in str(info.value)
