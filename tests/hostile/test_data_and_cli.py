"""Hostile judgment, run and tag files, and hostile command-line options: one clear line
naming the file and line (or the option), exit status 2 for the command, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_retrieval import cli
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.io.corpus import load_corpus
from pytest_retrieval.io.qrels import load_qrels
from pytest_retrieval.io.queries import load_queries
from pytest_retrieval.io.tags import load_tags
from pytest_retrieval.io.trec import load_trec_run

from .conftest import bounded, one_line

BOM = "\ufeff"

# (id, file name, bytes or text, loader, fragments of the one-line error)
DATA_ERRORS = [
    ("qrels 5 columns", "q.trec", "1 0 d1 1 x\n", load_qrels, ["q.trec:1", "column"]),
    ("qrels 2 columns", "q.trec", "1 d1\n", load_qrels, ["q.trec:1", "column"]),
    ("qrels 1 column", "q.trec", "1\n", load_qrels, ["q.trec:1"]),
    ("qrels grade word", "q.trec", "1 0 d1 high\n", load_qrels, ["q.trec:1", "'high'"]),
    ("qrels grade fraction", "q.trec", "1 0 d1 1.5\n", load_qrels, ["q.trec:1", "integer"]),
    ("qrels grade nan", "q.trec", "1 0 d1 nan\n", load_qrels, ["q.trec:1", "integer"]),
    ("qrels grade inf", "q.trec", "1 0 d1 inf\n", load_qrels, ["q.trec:1"]),
    ("qrels conflicting grades", "q.trec", "1 0 d1 1\n1 0 d1 2\n", load_qrels, ["q.trec:2", "conflicting"]),
    (
        "qrels BEIR row with an extra column",
        "q.tsv",
        "query-id\tcorpus-id\tscore\n1\td1\t1\n1\td2\t2\textra\n",
        load_qrels,
        ["q.tsv:3", "4 column(s)", "3-column header"],
    ),
    (
        "qrels BEIR row missing a column",
        "q.tsv",
        "query-id\tcorpus-id\tscore\n1\td1\n",
        load_qrels,
        ["q.tsv:2", "2 column(s)"],
    ),
    (
        "qrels TREC then a BEIR row",
        "q.trec",
        "1 0 d1 1\n1\td2\t1\n",
        load_qrels,
        ["q.trec:2", "3 column(s)", "TREC"],
    ),
    ("qrels BEIR rows then TREC", "q.tsv", "1\td1\t1\n1 0 d2 1\n", load_qrels, ["q.tsv:2", "1 column(s)"]),
    ("qrels tab TREC then spaces", "q.trec", "1\t0\td1\t1\n1 0 d2 1\n", load_qrels, ["q.trec:2"]),
    (
        "qrels header without a grade column",
        "q.tsv",
        "query-id\tcorpus-id\tannotator\n1\td1\ta\n",
        load_qrels,
        ["q.tsv:1", "no grade column"],
    ),
    (
        "qrels header without a doc column",
        "q.tsv",
        "query-id\tscore\n1\t1\n",
        load_qrels,
        ["q.tsv:1", "no document id column"],
    ),
    ("qrels empty", "q.trec", "", load_qrels, ["q.trec", "no judgments"]),
    ("qrels only blank lines", "q.trec", "\n \n\t\n", load_qrels, ["q.trec", "no judgments"]),
    ("qrels only a header", "q.tsv", "query-id\tcorpus-id\tscore\n", load_qrels, ["q.tsv", "no judgments"]),
    ("qrels not UTF-8", "q.trec", b"1 0 d\xff 1\n", load_qrels, ["q.trec", "UTF-8"]),
    ("qrels UTF-16", "q.trec", "1 0 d1 1\n".encode("utf-16"), load_qrels, ["q.trec", "UTF-8"]),
    ("qrels jsonl not an object", "q.jsonl", "[1, 2]\n", load_qrels, ["q.jsonl:1", "JSON object"]),
    ("qrels jsonl invalid", "q.jsonl", "{nope\n", load_qrels, ["q.jsonl:1", "invalid JSON"]),
    (
        "qrels jsonl no grade",
        "q.jsonl",
        '{"query_id": "1", "doc_id": "d1"}\n',
        load_qrels,
        ["q.jsonl:1", "grade"],
    ),
    (
        "qrels jsonl id null",
        "q.jsonl",
        '{"query_id": null, "doc_id": "d1", "grade": 1}\n',
        load_qrels,
        ["q.jsonl:1", "query id"],
    ),
    (
        "qrels jsonl id true",
        "q.jsonl",
        '{"query_id": true, "doc_id": "d1", "grade": 1}\n',
        load_qrels,
        ["q.jsonl:1"],
    ),
    (
        "qrels jsonl grade string",
        "q.jsonl",
        '{"query_id": "1", "doc_id": "d1", "grade": "x"}\n',
        load_qrels,
        ["q.jsonl:1"],
    ),
    (
        "qrels jsonl grade NaN",
        "q.jsonl",
        '{"query_id": "1", "doc_id": "d1", "grade": NaN}\n',
        load_qrels,
        ["q.jsonl:1"],
    ),
    ("queries missing text", "qs.jsonl", '{"_id": "1"}\n', load_queries, ["qs.jsonl:1", "query text"]),
    (
        "queries text a number",
        "qs.jsonl",
        '{"_id": "1", "text": 5}\n',
        load_queries,
        ["qs.jsonl:1", "string"],
    ),
    (
        "queries duplicate id",
        "qs.jsonl",
        '{"_id": "1", "text": "a"}\n{"_id": 1, "text": "b"}\n',
        load_queries,
        ["qs.jsonl:2", "duplicate"],
    ),
    ("queries empty id", "qs.jsonl", '{"_id": " ", "text": "a"}\n', load_queries, ["qs.jsonl:1", "empty id"]),
    ("queries TSV without a tab", "qs.tsv", "1 text\n", load_queries, ["qs.tsv:1"]),
    ("queries empty", "qs.jsonl", "", load_queries, ["qs.jsonl", "no queries"]),
    ("queries a JSON list", "qs.jsonl", '["a"]\n', load_queries, ["qs.jsonl:1"]),
    (
        "corpus duplicate id",
        "c.jsonl",
        '{"_id": "d", "text": "a"}\n{"_id": "d", "text": "b"}\n',
        load_corpus,
        ["c.jsonl:2", "duplicate"],
    ),
    ("corpus no text", "c.jsonl", '{"_id": "d", "n": 1}\n', load_corpus, ["c.jsonl:1", "no text"]),
    ("corpus no id", "c.jsonl", '{"text": "a"}\n', load_corpus, ["c.jsonl:1", "document id"]),
    (
        "corpus truncated line",
        "c.jsonl",
        '{"_id": "d", "text": "a"',
        load_corpus,
        ["c.jsonl:1", "invalid JSON"],
    ),
    ("run 5 columns", "r.trec", "1 Q0 d1 1 2.0\n", load_trec_run, ["r.trec:1", "column"]),
    ("run rank not an integer", "r.trec", "1 Q0 d1 x 2.0 t\n", load_trec_run, ["r.trec:1", "rank"]),
    ("run score a word", "r.trec", "1 Q0 d1 1 high t\n", load_trec_run, ["r.trec:1", "score"]),
    ("run score nan", "r.trec", "1 Q0 d1 1 nan t\n", load_trec_run, ["r.trec:1", "NaN"]),
    ("run document twice", "r.trec", "1 Q0 d1 1 2 t\n1 Q0 d1 2 1 t\n", load_trec_run, ["r.trec:2", "twice"]),
    ("run empty", "r.trec", "", load_trec_run, ["r.trec", "no lines"]),
    ("tags 3 columns", "t.tsv", "1\ta\tb\n", load_tags, ["t.tsv:1"]),
    ("tags jsonl not a list", "t.jsonl", '{"id": "1", "tags": 5}\n', load_tags, ["t.jsonl:1", "tags"]),
]


@pytest.mark.parametrize(
    "name,content,loader,fragments", [c[1:] for c in DATA_ERRORS], ids=[c[0] for c in DATA_ERRORS]
)
def test_hostile_data_file_is_one_clear_line(tmp_path: Path, name, content, loader, fragments) -> None:
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode())
    with bounded(20), pytest.raises(ConfigError) as ei:
        loader(p)
    one_line(str(ei.value), *fragments)


SPECIAL = [
    ("device /dev/zero", "/dev/zero", "not a regular file"),
    ("device /dev/urandom", "/dev/urandom", "not a regular file"),
    ("a directory", "DIR", "directory"),
    ("a FIFO", "FIFO", "not a regular file"),
    ("missing", "MISSING", "not found"),
]


@pytest.mark.parametrize("loader", [load_qrels, load_queries, load_trec_run, load_corpus, load_tags])
@pytest.mark.parametrize("where,fragment", [c[1:] for c in SPECIAL], ids=[c[0] for c in SPECIAL])
def test_special_files_are_refused_without_reading(tmp_path: Path, loader, where, fragment) -> None:
    if where == "DIR":
        path = tmp_path
    elif where == "FIFO":
        path = tmp_path / "fifo"
        os.mkfifo(path)
    elif where == "MISSING":
        path = tmp_path / "nope.trec"
    else:
        path = Path(where)
    with bounded(10), pytest.raises(ConfigError) as ei:
        loader(path)
    one_line(str(ei.value), str(path), fragment)


def test_size_limit_is_one_line(tmp_path: Path, monkeypatch) -> None:
    from pytest_retrieval.io import lines

    monkeypatch.setattr(lines, "MAX_DATA_BYTES", 100)
    p = tmp_path / "q.trec"
    p.write_text("1 0 d1 1\n" * 50)
    with pytest.raises(ConfigError) as ei:
        load_qrels(p)
    one_line(str(ei.value), "q.trec", "over the limit")


def test_line_limit_is_one_line(tmp_path: Path, monkeypatch) -> None:
    from pytest_retrieval.io import lines

    monkeypatch.setattr(lines, "MAX_LINE_CHARS", 100)
    p = tmp_path / "q.trec"
    p.write_text("1 0 d1 1\n" + "x" * 500 + "\n")
    with pytest.raises(ConfigError) as ei:
        load_qrels(p)
    one_line(str(ei.value), "q.trec:2", "longer than")


# ------------------------------------------------------------- read as written (warnings/ok)


def test_beir_with_an_annotator_column_is_read_by_header(tmp_path: Path) -> None:
    p = tmp_path / "q.tsv"
    p.write_text("query-id\tcorpus-id\tscore\tannotator\n1\td1\t2\tann\n1\td2\t0\tbob\n2\t7\t1\tann\n")
    assert load_qrels(p) == {"1": {"d1": 2, "d2": 0}, "2": {"7": 1}}


def test_header_columns_in_another_order(tmp_path: Path) -> None:
    p = tmp_path / "q.tsv"
    p.write_text("score\tcorpus-id\tquery-id\n1\td1\tq\n")
    assert load_qrels(p) == {"q": {"d1": 1}}


@pytest.mark.parametrize(
    "loader,name,text,expected",
    [
        (load_qrels, "q.trec", "1 0 d1 1\n", {"1": {"d1": 1}}),
        (load_qrels, "q.tsv", "query-id\tcorpus-id\tscore\n1\td1\t1\n", {"1": {"d1": 1}}),
        (load_qrels, "q.jsonl", '{"query_id": "1", "doc_id": "d1", "grade": 1}\n', {"1": {"d1": 1}}),
        (load_queries, "qs.jsonl", '{"_id": "1", "text": "a"}\n', {"1": "a"}),
        (load_queries, "qs.tsv", "1\ta\n", {"1": "a"}),
        (load_tags, "t.tsv", "1\ta,b\n", {"1": ("a", "b")}),
    ],
    ids=["trec", "beir", "qrels-jsonl", "queries-jsonl", "queries-tsv", "tags"],
)
def test_a_bom_is_stripped(tmp_path: Path, loader, name, text, expected) -> None:
    p = tmp_path / name
    p.write_text(BOM + text, encoding="utf-8")
    assert loader(p) == expected


def test_a_bom_in_a_run_is_stripped(tmp_path: Path) -> None:
    p = tmp_path / "r.trec"
    p.write_text(BOM + "1 Q0 d1 1 2.0 t\n", encoding="utf-8")
    assert list(load_trec_run(p)) == ["1"]


# ------------------------------------------------------------------- command line


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "qrels.trec").write_text("1 0 d1 1\n1 0 d2 0\n")
    (tmp_path / "zero.trec").write_text("1 0 d1 0\n1 0 d2 0\n")
    (tmp_path / "r1.trec").write_text("1 Q0 d1 1 2.0 a\n1 Q0 d2 2 1.0 a\n")
    (tmp_path / "r2.trec").write_text("1 Q0 d2 1 2.0 b\n1 Q0 d1 2 1.0 b\n")
    (tmp_path / "other.trec").write_text("x Q0 d1 1 2.0 a\n")
    (tmp_path / "mixed.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n1\td2\t1\tx\n")
    (tmp_path / "s.yaml").write_text("suite: s\n")
    return tmp_path


# (id, argv, fragments of the one-line error on stderr)
CLI_ERRORS = [
    ("fuse rank-constant 0", "fuse r1.trec r2.trec --rank-constant 0", ["--rank-constant", ">= 1"]),
    ("fuse rank-constant -1", "fuse r1.trec r2.trec --rank-constant -1", ["--rank-constant", ">= 1"]),
    ("fuse rank-constant word", "fuse r1.trec r2.trec --rank-constant sixty", ["--rank-constant", "integer"]),
    ("fuse rank-constant fraction", "fuse r1.trec r2.trec --rank-constant 1.5", ["--rank-constant"]),
    ("fuse rank-constant nan", "fuse r1.trec r2.trec --rank-constant nan", ["--rank-constant"]),
    (
        "fuse rank-constant for weighted",
        "fuse r1.trec r2.trec --method weighted --rank-constant 5",
        ["--rank-constant", "rrf only"],
    ),
    ("fuse window 0", "fuse r1.trec r2.trec --window 0", ["--window", ">= 1"]),
    ("fuse window -5", "fuse r1.trec r2.trec --window -5", ["--window", ">= 1"]),
    ("fuse window inf", "fuse r1.trec r2.trec --window inf", ["--window"]),
    ("fuse k 0", "fuse r1.trec r2.trec -k 0", ["-k", ">= 1"]),
    ("fuse k -1", "fuse r1.trec r2.trec -k -1", ["-k", ">= 1"]),
    ("fuse weights -1,1", "fuse r1.trec r2.trec --method weighted --weights -1,1", ["--weights", ">= 0"]),
    ("fuse weights nan", "fuse r1.trec r2.trec --method linear --weights nan,1", ["--weights", "finite"]),
    ("fuse weights inf", "fuse r1.trec r2.trec --method linear --weights 1,inf", ["--weights", "finite"]),
    ("fuse weights empty item", "fuse r1.trec r2.trec --method linear --weights 0.5,,0.5", ["--weights"]),
    ("fuse weights word", "fuse r1.trec r2.trec --method linear --weights a,b", ["--weights"]),
    (
        "fuse weights count",
        "fuse r1.trec r2.trec --method linear --weights 1",
        ["--weights", "1 weight(s) for 2 runs"],
    ),
    ("fuse weights for rrf", "fuse r1.trec r2.trec --weights 0.5,0.5", ["weights"]),
    ("fuse one run", "fuse r1.trec", ["at least two"]),
    ("fuse missing run", "fuse r1.trec nope.trec", ["nope.trec", "not found"]),
    ("fuse device run", "fuse r1.trec /dev/zero", ["/dev/zero", "not a regular file"]),
    ("fuse unknown method", "fuse r1.trec r2.trec --method magic", ["--method"]),
    (
        "evaluate threshold -1",
        "evaluate qrels.trec r1.trec --relevance-threshold -1",
        ["--relevance-threshold"],
    ),
    (
        "evaluate threshold word",
        "evaluate qrels.trec r1.trec --relevance-threshold one",
        ["--relevance-threshold"],
    ),
    ("evaluate no shared id", "evaluate qrels.trec other.trec", ["share no query id"]),
    (
        "evaluate all grades zero json",
        "evaluate zero.trec r1.trec --json --average-over relevant",
        ["no query to average over", "without a relevant document"],
    ),
    ("evaluate mixed qrels", "evaluate mixed.tsv r1.trec", ["mixed.tsv:3", "column"]),
    ("evaluate unknown metric", "evaluate qrels.trec r1.trec -m ndgc@10", ["ndgc@10"]),
    ("evaluate gains word", "evaluate qrels.trec r1.trec --gains 1=three", ["--gains", "GRADE:GAIN"]),
    ("evaluate gains negative grade", "evaluate qrels.trec r1.trec --gains=-1:2", ["--gains", "negative"]),
    ("evaluate gains twice", "evaluate qrels.trec r1.trec --gains 1:2,1:3", ["--gains", "twice"]),
    ("evaluate depth word", "evaluate qrels.trec r1.trec --depth ten", ["--depth"]),
    ("evaluate average over typo", "evaluate qrels.trec r1.trec --average-over all", ["--average-over"]),
    ("evaluate device qrels", "evaluate /dev/zero r1.trec", ["/dev/zero", "not a regular file"]),
    ("evaluate directory run", "evaluate qrels.trec .", ["directory"]),
    ("sweep tune-fraction 0", "sweep s.yaml --tune-fraction 0", ["--tune-fraction", "> 0"]),
    ("sweep tune-fraction 1", "sweep s.yaml --tune-fraction 1", ["--tune-fraction", "< 1"]),
    ("sweep tune-fraction nan", "sweep s.yaml --tune-fraction nan", ["--tune-fraction", "finite"]),
    ("sweep weight-step 0", "sweep s.yaml --weight-step 0", ["--weight-step"]),
    ("sweep weight-step 2", "sweep s.yaml --weight-step 2", ["--weight-step", "<= 1"]),
    ("sweep rank-constants 0", "sweep s.yaml --rank-constants 0,5", ["--rank-constants", ">= 1"]),
    ("sweep rank-constants word", "sweep s.yaml --rank-constants a", ["--rank-constants"]),
    ("sweep windows -1", "sweep s.yaml --windows -1", ["--windows", ">= 1"]),
    ("sweep check-variants 0", "sweep s.yaml --check-variants 0", ["--check-variants"]),
    ("sweep top 0", "sweep s.yaml --top 0", ["--top"]),
    ("sweep seed word", "sweep s.yaml --seed x", ["--seed"]),
    ("judge pool depth 0", "judge pool s.yaml --depth 0", ["--depth", ">= 1"]),
    ("judge pool depth -3", "judge pool s.yaml --depth -3", ["--depth"]),
    ("judge llm concurrency 0", "judge llm --concurrency 0", ["--concurrency", ">= 1"]),
    ("judge llm max-retries -1", "judge llm --max-retries -1", ["--max-retries"]),
    ("judge llm backoff nan", "judge llm --backoff nan", ["--backoff", "finite"]),
    ("judge llm max-tokens 0", "judge llm --max-tokens 0", ["--max-tokens"]),
]


@pytest.mark.parametrize("argv,fragments", [c[1:] for c in CLI_ERRORS], ids=[c[0] for c in CLI_ERRORS])
def test_hostile_command_line_is_one_line_and_exit_2(
    files: Path, monkeypatch, capsys, argv, fragments
) -> None:
    monkeypatch.chdir(files)
    with bounded(30):
        try:
            rc = cli.main(argv.split())
        except SystemExit as exc:  # argparse
            rc = exc.code
    out, err = capsys.readouterr()
    assert rc == 2, (rc, out, err)
    assert "NaN" not in out
    one_line(err, *fragments)


def test_fuse_rank_constant_default_is_60_and_given_value_is_used(files: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(files)
    assert cli.main(["fuse", "r1.trec", "r2.trec"]) == 0
    default = capsys.readouterr().out
    assert cli.main(["fuse", "r1.trec", "r2.trec", "--rank-constant", "60"]) == 0
    assert capsys.readouterr().out == default
    assert cli.main(["fuse", "r1.trec", "r2.trec", "--rank-constant", "1"]) == 0
    assert capsys.readouterr().out != default


def test_negative_weights_value_is_read_as_a_value(files: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(files)
    assert cli.main(["fuse", "r1.trec", "r2.trec", "--method", "linear", "--weights", "0.5,0.5"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        cli.main(["fuse", "r1.trec", "r2.trec", "--method", "linear", "--weights", "-0.5,1"])
    assert "expected one argument" not in capsys.readouterr().err


def test_evaluate_json_is_strict_json(files: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(files)
    assert cli.main(["evaluate", "qrels.trec", "r1.trec", "--json", "--per-query"]) == 0
    out = capsys.readouterr().out
    json.loads(out, parse_constant=lambda c: pytest.fail(f"bare {c} in JSON"))


def test_an_alias_bomb_is_bounded_in_a_subprocess(tmp_path: Path) -> None:
    """Run with a 1 GiB address-space limit and a time limit: refused in well under both."""
    levels = "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(12)
    )
    (tmp_path / "retrieval_bomb.yaml").write_text(
        "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + levels
    )
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
        "from pytest_retrieval.config.load import load_suite; from pytest_retrieval.errors import ConfigError\n"
        "try:\n    load_suite(sys.argv[1])\nexcept ConfigError as e:\n    print(e)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "retrieval_bomb.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    one_line(proc.stdout, "retrieval_bomb.yaml", "alias bomb")


def test_qrels_with_no_relevant_grade_are_averaged_as_trec_eval_or_at_threshold_0(
    files: Path, monkeypatch, capsys
) -> None:
    # trec_eval averages a judged query without a relevant document in as 0 (default --average-over
    # run); with --relevance-threshold 0 (trec_eval -l0) its grade-0 documents are relevant
    monkeypatch.chdir(files)
    assert cli.main(["evaluate", "zero.trec", "r1.trec", "-m", "map"]) == 0
    out, err = capsys.readouterr()
    assert "map\tall\t0.0000" in out and "num_q\tall\t1" in out
    assert "1 judged without a relevant document averaged in (as 0)" in err
    assert cli.main(["evaluate", "zero.trec", "r1.trec", "-m", "mrr", "--relevance-threshold", "0"]) == 0
    out, _ = capsys.readouterr()
    assert "mrr\tall\t0.0000" not in out and "num_q\tall\t1" in out
