"""Hostile files and command lines of ``judge import --from`` / ``judge export --to`` (issue
#34): malformed CSV, JSON of the wrong shape, huge files and zip bombs (read within a bound),
formula cells, one pair graded twice differently, ids with control characters. Each is one clear
line naming the file and the row (a line, or a JSON key path), never a traceback, never a hang."""

from __future__ import annotations

import io
import json
import os
import shlex
import zipfile
from pathlib import Path
from typing import Any, List, Tuple

import pytest

from pytest_retrieval.cli.app import main
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.interchange import files, registry
from pytest_retrieval.interchange.model import ImportOptions, parse_rating_map

from ..ci import needs_fifos
from .conftest import BASE, FLOORS, bounded, one_line

Q = "query,docid,rating\n"


def js(value: Any) -> str:
    return json.dumps(value)


def case(*ratings: Any, text: Any = "shoes") -> str:
    return js({"queries": [{"query_text": text, "ratings": list(ratings)}]})


def srw(*ratings: Any, query: Any = "shoes") -> str:
    return js({"judgmentRatings": [{"query": query, "ratings": list(ratings)}]})


def rre(queries: Any, relevant: Any) -> str:
    return js(
        {
            "topics": [
                {
                    "name": "t",
                    "query_groups": [{"name": "g", "queries": queries, "relevant_documents": relevant}],
                }
            ]
        }
    )


def reqs(*requests: Any) -> str:
    return js({"requests": list(requests)})


OK_Q = [{"placeholders": {"$query": "bass"}}]

# (id, format, file name, content, fragments of the one-line error)
ERRORS: List[Tuple[str, str, str, Any, List[str]]] = [
    # Quepid's ratings CSV
    ("csv: unclosed quote", "quepid", "r.csv", Q + 'a,"d1,2\n', ["r.csv:2", "malformed CSV"]),
    ("csv: text after a quote", "quepid", "r.csv", Q + '"a" b,d1,2\n', ["r.csv:2", "malformed CSV"]),
    ("csv: NUL", "quepid", "r.csv", Q + "a,d\x001,2\n", ["r.csv:2", "NUL"]),
    ("csv: not UTF-8", "quepid", "r.csv", (Q + "caf\xe9,d1,2\n").encode("latin-1"), ["r.csv", "not UTF-8"]),
    ("csv: other header", "quepid", "r.csv", "q,doc,grade\na,d1,2\n", ["r.csv:1", "query,docid,rating"]),
    ("csv: too wide", "quepid", "r.csv", Q + "a,d1,2,x\n", ["r.csv:2", "4 cells"]),
    ("csv: no rating", "quepid", "r.csv", Q + "a,d1,\n", ["r.csv:2", "both 'docid' and 'rating'"]),
    ("csv: formula query", "quepid", "r.csv", Q + "=HYPERLINK(1),d1,2\n", ["r.csv:2", "spreadsheet formula"]),
    ("csv: formula doc id", "quepid", "r.csv", Q + "a,@SUM(A1),2\n", ["r.csv:2", "'@SUM(A1)'", "case JSON"]),
    ("csv: formula rating", "quepid", "r.csv", Q + "a,d1,=1+1\n", ["r.csv:2", "'=1+1'", "not an integer"]),
    ("csv: rating 1.5", "quepid", "r.csv", Q + "a,d1,1.5\n", ["r.csv:2", "'1.5'", "--grade-map"]),
    ("csv: rating 1e3", "quepid", "r.csv", Q + "a,d1,1e3\n", ["r.csv:2", "'1e3'"]),
    (
        "csv: graded twice",
        "quepid",
        "r.csv",
        Q + "a,d1,1\n a,d1,2\n",
        ["r.csv:3", "rated 2 here and 1 at line 2"],
    ),
    (
        "csv: escape in doc id",
        "quepid",
        "r.csv",
        Q + "a,d\x1b[2J,1\n",
        ["r.csv:2", "\\x1b[2J", "control character"],
    ),
    (
        "csv: bidi in query",
        "quepid",
        "r.csv",
        Q + "a\u202eb,d1,1\n",
        ["r.csv:2", "\\u202e", "control character"],
    ),
    ("csv: empty", "quepid", "r.csv", Q, ["r.csv", "no queries and no judgments"]),
    (
        "snapshot csv: position",
        "quepid",
        "s.csv",
        "Query Text,Doc ID,Doc Position\na,d1,x\n",
        ["s.csv:2", "'x'"],
    ),
    (
        "snapshot csv: same position",
        "quepid",
        "s.csv",
        "Query Text,Doc ID,Doc Position\na,d1,1\na,d2,1\n",
        ["s.csv:3", "position 1"],
    ),
    # Quepid's JSON
    ("json: broken", "quepid", "c.json", '{"queries": [', ["c.json", "invalid JSON", "line 1"]),
    ("json: a list", "quepid", "c.json", "[]", ["c.json", "expected an object, got list"]),
    ("json: unknown", "quepid", "c.json", '{"cases": []}', ["c.json", "not a Quepid export"]),
    (
        "json: key twice",
        "quepid",
        "c.json",
        '{"queries": [], "queries": []}',
        ["c.json", "'queries' appears twice"],
    ),
    ("json: deep", "quepid", "c.json", "[" * 100_000 + "]" * 100_000, ["c.json", "nested too deeply"]),
    ("json: queries object", "quepid", "c.json", js({"queries": {}}), ["c.json: queries", "expected a list"]),
    (
        "json: query a number",
        "quepid",
        "c.json",
        js({"queries": [7]}),
        ["c.json: queries[0]", "expected an object"],
    ),
    (
        "json: text missing",
        "quepid",
        "c.json",
        js({"queries": [{"ratings": []}]}),
        ["queries[0].query_text", "must be a string"],
    ),
    (
        "json: rating true",
        "quepid",
        "c.json",
        case({"doc_id": "d", "rating": True}),
        ["queries[0].ratings[0].rating", "boolean"],
    ),
    (
        "json: doc id float",
        "quepid",
        "c.json",
        case({"doc_id": 1.5, "rating": 1}),
        ["queries[0].ratings[0].doc_id", "write the id as a string"],
    ),
    (
        "json: doc id missing",
        "quepid",
        "c.json",
        case({"rating": 1}),
        ["queries[0].ratings[0]", "missing key 'doc_id'"],
    ),
    (
        "json: ratings a string",
        "quepid",
        "c.json",
        js({"queries": [{"query_text": "a", "ratings": "x"}]}),
        ["queries[0].ratings", "expected a list or an object"],
    ),
    (
        "json: graded twice",
        "quepid",
        "c.json",
        case({"doc_id": "d", "rating": 1}, {"doc_id": "d", "rating": 3}),
        ["queries[0].ratings[1]", "rated 3 here and 1 at queries[0].ratings[0]"],
    ),
    (
        "book: flag text",
        "quepid",
        "b.json",
        js(
            {
                "query_doc_pairs": [
                    {"query_text": "a", "doc_id": "d", "judgements": [{"rating": 1, "unrateable": "no"}]}
                ]
            }
        ),
        ["query_doc_pairs[0].judgements[0].unrateable", "true or false"],
    ),
    (
        "book: judge graded twice",
        "quepid",
        "b.json",
        js(
            {
                "query_doc_pairs": [
                    {
                        "query_text": "a",
                        "doc_id": "d",
                        "judgements": [{"rating": 1, "user_email": "x"}, {"rating": 2, "user_email": "x"}],
                    }
                ]
            }
        ),
        ["query_doc_pairs[0].judgements[1]", "rated 2 here and 1"],
    ),
    (
        "snapshot: ranked twice",
        "quepid",
        "s.json",
        js(
            {
                "docs": {"1": [{"id": "d"}, {"id": "d"}]},
                "scores": [],
                "queries": [{"query_id": 1, "query_text": "a"}],
            }
        ),
        ["docs.1[1]", "ranked twice"],
    ),
    # RRE
    ("rre: not rre", "rre", "r.json", js({"query_groups": []}), ["r.json", "not an RRE ratings file"]),
    (
        "rre: placeholders list",
        "rre",
        "r.json",
        rre([{"placeholders": ["bass"]}], {}),
        ["queries[0].placeholders", "expected an object"],
    ),
    (
        "rre: no $query",
        "rre",
        "r.json",
        rre([{"placeholders": {}}], {}),
        ["queries[0].placeholders", "no $query"],
    ),
    (
        "rre: other placeholder",
        "rre",
        "r.json",
        rre([{"placeholders": {"$query": "a", "$size": 4}}], {}),
        ["$size", "--skip-placeholders"],
    ),
    (
        "rre: no gain",
        "rre",
        "r.json",
        rre(OK_Q, {"d1": {"grade": 3}}),
        ["relevant_documents.d1", "missing key 'gain'"],
    ),
    ("rre: grade word", "rre", "r.json", rre(OK_Q, {"high": ["d1"]}), ["relevant_documents.high", "'high'"]),
    ("rre: docs a string", "rre", "r.json", rre(OK_Q, {"d1": 3}), ["relevant_documents.d1", "{doc:"]),
    (
        "rre: both forms disagree",
        "rre",
        "r.json",
        rre(OK_Q, {"3": ["d1"], "d1": {"gain": 1}}),
        ["relevant_documents.d1", "rated 1 here and 3"],
    ),
    # SRW
    (
        "srw: no ratings key",
        "srw",
        "j.json",
        js({"judgments": []}),
        ["j.json", "'judgmentRatings' or 'querySetQueries'"],
    ),
    (
        "srw: rating nan",
        "srw",
        "j.json",
        srw({"docId": "d", "rating": "nan"}),
        ["ratings[0].rating", "'nan'"],
    ),
    (
        "srw: rating 0.5",
        "srw",
        "j.json",
        srw({"docId": "d", "rating": 0.5}),
        ["ratings[0].rating", "--grade-map"],
    ),
    (
        "srw: docId missing",
        "srw",
        "j.json",
        srw({"rating": 1}),
        ["judgmentRatings[0].ratings[0]", "missing key 'docId'"],
    ),
    (
        "srw: blank query",
        "srw",
        "j.json",
        srw({"docId": "d", "rating": 1}, query="  "),
        ["judgmentRatings[0].query", "empty"],
    ),
    (
        "srw: NUL in doc id",
        "srw",
        "j.json",
        srw({"docId": "d\x00", "rating": 1}),
        ["ratings[0].docId", "control character"],
    ),
    (
        "srw: same text rated twice",
        "srw",
        "j.json",
        js(
            {
                "judgmentRatings": [
                    {"query": "a", "ratings": [{"docId": "d", "rating": 1}]},
                    {"query": " a ", "ratings": [{"docId": "d", "rating": 2}]},
                ]
            }
        ),
        ["judgmentRatings[1].ratings[0]", "rated 2 here and 1"],
    ),
    (
        "srw: query set text",
        "srw",
        "q.json",
        js({"querySetQueries": [{"queryText": 3}]}),
        ["querySetQueries[0].queryText", "must be a string"],
    ),
    # _rank_eval
    (
        "rank-eval: requests object",
        "rank-eval",
        "r.json",
        js({"requests": {}}),
        ["r.json: requests", "expected a list"],
    ),
    (
        "rank-eval: id missing",
        "rank-eval",
        "r.json",
        reqs({"request": {}, "ratings": []}),
        ["requests[0]", "missing key 'id'"],
    ),
    (
        "rank-eval: id escape",
        "rank-eval",
        "r.json",
        reqs({"id": "q\x1b[31m", "request": {}, "ratings": []}),
        ["requests[0].id", "control character"],
    ),
    (
        "rank-eval: rating text",
        "rank-eval",
        "r.json",
        reqs({"id": "q", "request": {}, "ratings": [{"_id": "d", "rating": "x"}]}),
        ["ratings[0].rating", "'x'"],
    ),
    (
        "rank-eval: template unknown",
        "rank-eval",
        "r.json",
        reqs({"id": "q", "template_id": "t", "ratings": []}),
        ["requests[0].template_id", "'t'"],
    ),
    (
        "rank-eval: no ratings",
        "rank-eval",
        "r.json",
        reqs({"id": "q", "request": {}}),
        ["requests[0]", "missing key 'ratings'"],
    ),
]


@pytest.mark.parametrize("fmt, name, content, fragments", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_hostile_interchange_file_is_one_clear_line(
    tmp_path: Path, fmt: str, name: str, content: Any, fragments: List[str]
) -> None:
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with bounded(), pytest.raises(ConfigError) as err:
        registry.read(fmt, p)
    one_line(str(err.value), *fragments)


def test_a_huge_file_is_read_within_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_JSON_BYTES", 64 * 1024)
    p = tmp_path / "j.json"
    p.write_text(srw(*({"docId": f"d{i}", "rating": 1} for i in range(5000))))
    with bounded(), pytest.raises(ConfigError) as err:
        registry.read("srw", p)
    one_line(str(err.value), "j.json", "larger than 64 KiB (65536 bytes)", "not read past it")


def test_a_zip_bomb_stops_at_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_JSON_BYTES", 1024**2)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("snapshot.json", b" " * (200 * 1024**2))  # 200 MB of spaces, 200 KB zipped
    p = tmp_path / "s.json.zip"
    p.write_bytes(buf.getvalue())
    with bounded(), pytest.raises(ConfigError) as err:
        registry.read("quepid", p)
    one_line(str(err.value), "s.json.zip", "after decompression")


def test_a_zip_of_two_files_or_none_is_one_line(tmp_path: Path) -> None:
    p = tmp_path / "s.zip"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("a.json", "{}")
        zf.writestr("b.json", "{}")
    with pytest.raises(ConfigError) as err:
        registry.read("quepid", p)
    one_line(str(err.value), "s.zip", "holds 2 files")
    p.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(ConfigError) as err:
        registry.read("quepid", p)
    one_line(str(err.value), "s.zip", "not a readable zip file")


@needs_fifos
def test_special_files_are_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.json")
    for fmt in registry.FORMATS:
        with bounded(10), pytest.raises(ConfigError) as err:
            registry.read(fmt, tmp_path / "fifo.json")
        one_line(str(err.value), "fifo.json", "not a regular file")
        with pytest.raises(ConfigError) as err:
            registry.read(fmt, tmp_path)
        one_line(str(err.value), "is a directory")


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("a:b", "'a:b'"),
        ("1", "not 'rating:grade'"),
        ("nan:1", "NaN"),
        ("0.5:1,0.5:2", "mapped twice"),
        ("1:1.5", "not an integer"),
    ],
)
def test_a_bad_grade_map_is_one_line(text: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_rating_map(text)
    one_line(str(err.value), "--grade-map", fragment)


def test_a_grade_map_is_applied_to_every_rating(tmp_path: Path) -> None:
    p = tmp_path / "j.json"
    p.write_text(srw({"docId": "a", "rating": "1.0"}, {"docId": "b", "rating": 3}))
    with pytest.raises(ConfigError) as err:
        registry.read("srw", p, ImportOptions(rating_map={1.0: 2}))
    one_line(str(err.value), "ratings[1].rating", "rating 3 is not mapped by --grade-map (1)")


# ------------------------------------------------------------------ the command line


def run(argv: str, cwd: Path, capsys: pytest.CaptureFixture) -> Tuple[int, str]:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with bounded():
            try:
                code = main(shlex.split(argv))
            except SystemExit as exc:  # argparse
                code = int(exc.code or 0)
    finally:
        os.chdir(old)
    err = capsys.readouterr().err.strip().splitlines()
    return code, err[-1] if err else ""


@pytest.fixture()
def cli_dir(tmp_path: Path) -> Path:
    (tmp_path / "s.yaml").write_text(BASE + FLOORS)
    (tmp_path / "j.json").write_text(srw({"docId": "d1", "rating": 1}))
    (tmp_path / "adir").mkdir()
    return tmp_path


R = "\u202e"
CLI_CASES = [
    ("judge import --from srw j.json --qrels q.txt", ["--qrels and --pool belong to annotation files"]),
    ("judge import --from srw j.json k.json", ["reads one file"]),
    ("judge import --from solr j.json", ["--from", "invalid choice"]),
    ("judge import --from srw j.json --grade-map x", ["--grade-map", "'x'"]),
    (f"judge import --from srw j.json --grade-map 1:{R}", ["--grade-map"]),
    (
        "judge import a.csv --qrels q.txt --grade-map 1:2",
        ["--grade-map and --skip-placeholders go with --from"],
    ),
    (
        "judge import a.csv --qrels q.txt --skip-placeholders",
        ["--grade-map and --skip-placeholders go with --from"],
    ),
    (
        "judge import --from srw j.json --skip-placeholders=1",
        ["--skip-placeholders", "ignored explicit argument"],
    ),
    ("judge import --from srw j.json --out s.yaml", ["--out s.yaml", "not a folder"]),
    ("judge import --from srw j.json --grades 0-0", ["grade 1", "outside --grades 0..0"]),
    ("judge export s.yaml --to quepid --out adir", ["adir", "directory"]),
    ("judge export s.yaml --to rre --out s.yaml", ["--out s.yaml", "overwrite the input"]),
    ("judge export s.yaml --to rre --out x.csv", ["--out x.csv", "write a .json file"]),
    ("judge export s.yaml --to excel --out x.json", ["--to", "invalid choice"]),
    ("judge export j.json --to rre --out x.json", ["give a suite file (.yaml) or a folder"]),
    ("judge export adir --to rre --out x.json", ["adir", "no queries.jsonl"]),
    ("judge export s.yaml --to rre --out x.json --query-set y.json", ["--query-set goes with --to srw"]),
    ("judge export s.yaml --to srw --out x.json --query-set x.json", ["one file for two outputs"]),
    ("judge export s.yaml --to srw --out x.json --query-set y.csv", ["--query-set y.csv", ".json"]),
    ("judge export s.yaml --to rank-eval --out x.json", ["--index", "names none"]),
    (
        f"judge export s.yaml --to rank-eval --out x.json --index i --retriever {R}",
        ["--retriever", "bm25, text"],
    ),
    ("judge export s.yaml --to rank-eval --out x.json --index i --retriever rrf", ["--retriever", "bm25"]),
    ("judge export s.yaml --to rank-eval --out x.json --index i --metric map@10", ["--metric 'map@10'"]),
    (f"judge export s.yaml --to rank-eval --out x.json --index i --metric {R}", ["--metric"]),
    ("judge export s.yaml --to rank-eval --out x.json --index i --k 0", ["--k", ">= 1"]),
    (
        "judge export s.yaml --to rank-eval --out x.json --index i --template=1",
        ["--template", "ignored explicit argument"],
    ),
    (f"judge export s.yaml --to rank-eval --out x.json --index {R}", []),  # accepted: written as it is
]


@pytest.mark.parametrize("argv, fragments", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_a_hostile_interchange_command_is_one_line(
    cli_dir: Path, capsys: pytest.CaptureFixture, argv: str, fragments: List[str]
) -> None:
    (cli_dir / "a.csv").write_text("query_id,query,doc_id,title,text,grade\nq1,s,d1,,t,1\n")
    code, last = run(argv, cli_dir, capsys)
    if not fragments:
        assert (
            code == 0
            and json.loads((cli_dir / "x.json").read_text())["requests"][0]["ratings"][0]["_index"] == R
        )
        return
    assert code == 2, last
    one_line(last, *fragments)
