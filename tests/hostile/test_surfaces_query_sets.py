"""Hostile values at every option and file of ``judge sample`` and ``judge synth`` (issue #27),
and at ``judge agree --tags/--tag``: each is refused with exit 2 and one clear last line naming
the option or the file, before any request, bounded in time, never a traceback. Hostile query
logs are one line naming the file and the line."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import List

import pytest

from pytest_retrieval import cli
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.judge.sample import SampleSpec, sample_queries

from ..ci import needs_fifos
from .conftest import bounded, one_line

R = "\u202e"  # a right-to-left override
SAMPLE = "judge sample log.csv --out q.jsonl"
SYNTH = (
    "judge synth --corpus corpus.jsonl --out sq.jsonl --qrels-out sr.tsv --provider callable "
    "--function synthfn:write --check-function synthfn:grade --cache sc.jsonl"
)
OPENAI = SYNTH.replace(
    "--provider callable --function synthfn:write --check-function synthfn:grade",
    "--provider openai --model m",
)

# (surface, argv, fragments of the last line of stderr); every case exits 2
CASES = [
    ("judge sample <log>", "judge sample fifo --out q.jsonl", ["fifo", "not a regular file"]),
    ("judge sample --out", "judge sample log.csv --out adir", ["--out adir", "directory"]),
    ("judge sample --tags-out", f"{SAMPLE} --tags-out adir", ["--tags-out adir", "directory"]),
    ("judge sample --size", f"{SAMPLE} --size 0", ["--size", ">= 1"]),
    ("judge sample --method", f"{SAMPLE} --method {R}", ["--method"]),
    ("judge sample --seed", f"{SAMPLE} --seed=-1", ["--seed", ">= 0"]),
    ("judge sample --weight", f"{SAMPLE} --weight {R}", ["--weight"]),
    ("judge sample --pii", f"{SAMPLE} --pii nan", ["--pii"]),
    ("judge sample --min-digits", f"{SAMPLE} --min-digits 2", ["--min-digits", ">= 3"]),
    ("judge sample --stratify", f"{SAMPLE} --stratify {R}", ["--stratify", "format character"]),
    ("judge sample --quota", f"{SAMPLE} --stratify locale --quota de=x", ["--quota", "VALUE=N"]),
    ("judge sample quota without strata", f"{SAMPLE} --quota de=3", ["quotas need a stratify column"]),
    ("judge sample unknown stratum column", f"{SAMPLE} --stratify nosuch", ["log.csv:2", "nosuch"]),
    ("judge sample --min-count", f"{SAMPLE} --min-count nan", ["--min-count", "finite"]),
    ("judge sample --since", f"{SAMPLE} --since yesterday", ["--since", "ISO 8601"]),
    ("judge sample --until", f"{SAMPLE} --until 2026-13-01", ["--until", "ISO 8601"]),
    ("judge sample --keep", f"{SAMPLE} --keep {R}", ["--keep"]),
    ("judge sample --column", f"{SAMPLE} --column {R}", ["--column", "ROLE=NAME"]),
    ("judge sample unknown column role", f"{SAMPLE} --column dwell=x", ["--column", "unknown role"]),
    ("judge sample missing column", f"{SAMPLE} --column query=nosuch", ["log.csv", "'nosuch'"]),
    ("judge sample --no-progress", f"{SAMPLE} --no-progress=1", ["--no-progress"]),
    (
        "judge synth --suite",
        "judge synth --suite fifo --out a.jsonl --qrels-out b.tsv --provider callable --function synthfn:write --check-function synthfn:grade",
        ["fifo", "not a regular file"],
    ),
    ("judge synth --corpus", SYNTH.replace("corpus.jsonl", "adir"), ["adir", "directory"]),
    (
        "judge synth neither corpus nor suite",
        SYNTH.replace("--corpus corpus.jsonl ", ""),
        ["--suite", "--corpus"],
    ),
    ("judge synth --out", SYNTH.replace("sq.jsonl", "adir"), ["--out adir", "directory"]),
    ("judge synth --qrels-out", SYNTH.replace("sr.tsv", "adir"), ["--qrels-out adir", "directory"]),
    ("judge synth --tags-out", f"{SYNTH} --tags-out adir", ["--tags-out adir", "directory"]),
    ("judge synth --provenance", f"{SYNTH} --provenance adir", ["--provenance adir", "directory"]),
    ("judge synth --per-doc", f"{SYNTH} --per-doc 21", ["--per-doc", "<= 20"]),
    ("judge synth --max-docs", f"{SYNTH} --max-docs 0", ["--max-docs", ">= 1"]),
    ("judge synth --max-calls", f"{SYNTH} --max-calls nan", ["--max-calls"]),
    ("judge synth --seed", f"{SYNTH} --seed 1.5", ["--seed", "integer"]),
    ("judge synth --stratify", f"{SYNTH} --stratify ''", ["--stratify", "empty"]),
    ("judge synth --min-words", f"{SYNTH} --min-words=-1", ["--min-words", ">= 0"]),
    ("judge synth --min-grade", f"{SYNTH} --min-grade 4", ["--min-grade", "<= 3"]),
    ("judge synth --grade", f"{SYNTH} --grade 5", ["--grade", "1-3"]),
    ("judge synth --max-verbatim-words", f"{SYNTH} --max-verbatim-words 0", ["--max-verbatim-words", ">= 1"]),
    (
        "judge synth --max-ngram-overlap",
        f"{SYNTH} --max-ngram-overlap 1.5",
        ["--max-ngram-overlap", "[0, 1]"],
    ),
    ("judge synth --dup-cosine", f"{SYNTH} --dup-cosine inf", ["--dup-cosine", "finite"]),
    (
        "judge synth --embedder-model",
        f"{SYNTH} --embedder-model nosuchdir",
        ["--embedder-model", "not a folder"],
    ),
    ("judge synth --provider", f"{SYNTH} --provider {R}", ["--provider"]),
    ("judge synth --model", OPENAI.replace("--model m", "--model ''"), ["--model"]),
    ("judge synth --function", SYNTH.replace("synthfn:write", R), ["module:function"]),
    ("judge synth --base-url", f"{SYNTH} --base-url ftp://x", ["--base-url", "http(s)"]),
    (
        "judge synth --api-key-env",
        f"{OPENAI} --api-key-env PYTEST_RETRIEVAL_UNSET_KEY",
        ["PYTEST_RETRIEVAL_UNSET_KEY", "not set"],
    ),
    ("judge synth --anthropic-version", f"{SYNTH} --anthropic-version {R}", ["--anthropic-version"]),
    ("judge synth --judge-id", f"{SYNTH} --judge-id ''", ["--judge-id", "empty"]),
    (
        "judge synth --prompt-version",
        f"{SYNTH} --prompt-version {R}",
        ["--prompt-version", "format character"],
    ),
    ("judge synth --prompt-file", f"{SYNTH} --prompt-file adir", ["adir", "prompt template"]),
    ("judge synth prompt without {n}", f"{SYNTH} --prompt-file no_n.txt", ["no_n.txt", "{n}"]),
    ("judge synth prompt not UTF-8", f"{SYNTH} --prompt-file latin1.txt", ["latin1.txt", "prompt template"]),
    ("judge synth --cache", SYNTH.replace("sc.jsonl", "adir"), ["adir"]),
    ("judge synth --check-provider", f"{SYNTH} --check-provider {R}", ["--check-provider"]),
    ("judge synth --check-model", f"{SYNTH} --check-provider openai --check-model ''", ["--check-model"]),
    (
        "judge synth --check-function",
        SYNTH.replace("synthfn:grade", "nosuchmodule:f"),
        ["check judge", "nosuchmodule"],
    ),
    ("judge synth --check-base-url", f"{SYNTH} --check-base-url {R}", ["--check-base-url"]),
    (
        "judge synth --check-api-key-env",
        f"{SYNTH} --check-provider openai --check-model m --check-api-key-env PYTEST_RETRIEVAL_UNSET_KEY",
        ["PYTEST_RETRIEVAL_UNSET_KEY", "not set"],
    ),
    ("judge synth --check-judge-id", f"{SYNTH} --check-judge-id ''", ["--check-judge-id", "empty"]),
    ("judge synth --check-prompt-version", f"{OPENAI} --check-prompt-version nope-v9", ["nope-v9"]),
    ("judge synth --check-prompt-file", f"{OPENAI} --check-prompt-file adir", ["adir", "prompt template"]),
    ("judge synth --check-max-tokens", f"{SYNTH} --check-max-tokens 0", ["--check-max-tokens", ">= 1"]),
    ("judge synth --concurrency", f"{SYNTH} --concurrency 0", ["--concurrency", ">= 1"]),
    ("judge synth --rpm", f"{SYNTH} --rpm 0", ["--rpm", "> 0"]),
    ("judge synth --max-retries", f"{SYNTH} --max-retries=-1", ["--max-retries", ">= 0"]),
    ("judge synth --backoff", f"{SYNTH} --backoff nan", ["--backoff", "finite"]),
    ("judge synth --max-backoff", f"{SYNTH} --max-backoff nan", ["--max-backoff", "finite"]),
    ("judge synth --timeout", f"{SYNTH} --timeout -1", ["--timeout", "> 0"]),
    ("judge synth --max-tokens", f"{SYNTH} --max-tokens 0", ["--max-tokens", ">= 1"]),
    ("judge synth --reasoning", f"{SYNTH} --reasoning {R}", ["--reasoning"]),
    ("judge synth --max-doc-chars", f"{SYNTH} --max-doc-chars=-5", ["--max-doc-chars", ">= 1"]),
    ("judge synth --price-input", f"{SYNTH} --price-input nan", ["--price-input", "finite"]),
    ("judge synth --price-output", f"{SYNTH} --price-output -inf", ["--price-output"]),
    ("judge synth --failures", f"{SYNTH} --failures adir", ["--failures adir", "directory"]),
    ("judge synth --dry-run", f"{SYNTH} --dry-run=1", ["--dry-run"]),
    ("judge synth --no-progress", f"{SYNTH} --no-progress=1", ["--no-progress"]),
    (
        "judge agree --tags",
        "judge agree a.csv b.csv --tags fifo --tag synthetic",
        ["fifo", "not a regular file"],
    ),
    ("judge agree --tag", "judge agree a.csv b.csv --tags tags.tsv --tag ''", ["--tag", "empty"]),
    ("judge agree --tag alone", "judge agree a.csv b.csv --tag synthetic", ["--tag and --tags go together"]),
]

H = "query_id,query,doc_id,title,text,grade\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("sets")
    (d / "adir").mkdir()
    os.mkfifo(d / "fifo")
    (d / "log.csv").write_text("query,count,locale\nsolar panels,3,en\nwind power,1,de\n")
    (d / "corpus.jsonl").write_text(
        "".join(
            json.dumps({"_id": f"d{i}", "title": "solar", "text": "panels " * 30}) + "\n" for i in range(3)
        )
    )
    (d / "synthfn.py").write_text(
        "def write(prompt, document):\n    return '[\"how do solar panels work?\"]'\n\n"
        "def grade(query, document):\n    return 3\n"
    )
    (d / "no_n.txt").write_text("Write questions about {document}")
    (d / "latin1.txt").write_bytes("Écrivez {n} questions sur {document}".encode("latin-1"))
    (d / "a.csv").write_text(H + "q1,solar,d1,,t,1\n")
    (d / "b.csv").write_text(H + "q1,solar,d1,,t,1\n")
    (d / "tags.tsv").write_text("q1\tsynthetic\n")
    return d


@needs_fifos
@pytest.mark.parametrize("surface,argv,fragments", CASES, ids=[c[0] for c in CASES])
def test_a_hostile_query_set_command_is_refused_in_one_line(
    files: Path, monkeypatch, capsys, surface: str, argv: str, fragments: List[str]
) -> None:
    monkeypatch.chdir(files)
    monkeypatch.syspath_prepend(str(files))
    monkeypatch.setenv("XDG_CACHE_HOME", str(files / "cache"))
    monkeypatch.delenv("PYTEST_RETRIEVAL_UNSET_KEY", raising=False)
    with bounded(30):
        try:
            rc = cli.main(shlex.split(argv))
        except SystemExit as exc:  # argparse
            rc = exc.code
    out, err = capsys.readouterr()
    assert rc == 2, (rc, out, err)
    assert "Traceback" not in err + out
    one_line(err.strip().splitlines()[-1], *fragments)
    assert not (files / "sq.jsonl").exists() and not (files / "q.jsonl").exists()


# (id, file name, content, fragments of the one-line error)
LOGS = [
    ("negative count", "l.csv", "query,count\nsolar,-1\n", ["l.csv:2", "count '-1'"]),
    ("count 1e3", "l.csv", "query,count\nsolar,1e3\n", ["l.csv:2", "count '1e3'"]),
    ("count inf (JSONL)", "l.jsonl", '{"query": "solar", "count": 1e999}\n', ["l.jsonl:1"]),
    ("count nan", "l.csv", "query,count\nsolar,nan\n", ["l.csv:2", "count 'nan'"]),
    ("count 1.5", "l.csv", "query,count\nsolar,1.5\n", ["l.csv:2", "whole number"]),
    ("count true (JSONL)", "l.jsonl", '{"query": "solar", "count": true}\n', ["l.jsonl:1", "count True"]),
    ("query not a string", "l.jsonl", '{"query": 42}\n', ["l.jsonl:1", "not a string"]),
    ("no query column", "l.csv", "term,count\nsolar,2\n", ["l.csv:2", "no query column"]),
    ("too wide", "l.csv", "query,count\nsolar,2,extra\n", ["l.csv:2", "3 field(s)"]),
    ("NUL", "l.csv", "query\nsol\x00ar\n", ["l.csv:2", "NUL"]),
    ("not UTF-8", "l.csv", b"query\nsol\xe9ar\n", ["l.csv", "not UTF-8"]),
    ("malformed JSON", "l.jsonl", '{"query": "solar"\n', ["l.jsonl:1"]),
    ("JSON not an object", "l.jsonl", "[1, 2]\n", ["l.jsonl:1"]),
    ("header only", "l.csv", "query,count\n", ["l.csv", "no rows"]),
    ("empty", "l.csv", "", ["l.csv", "no rows"]),
    ("unknown extension", "l.parquet", "PAR1", ["l.parquet", ".csv, .tsv or .jsonl"]),
    ("bad timestamp in a window", "t.csv", "query,timestamp\nsolar,yesterday\n", ["t.csv:2", "ISO 8601"]),
    ("no timestamp in a window", "t.csv", "query\nsolar\n", ["t.csv:2", "timestamp"]),
    ("users without a user column", "u.csv", "query\nsolar\n", ["u.csv", "user column"]),
]


@pytest.mark.parametrize("name,fname,content,fragments", LOGS, ids=[c[0] for c in LOGS])
def test_hostile_query_log_is_one_clear_line(
    tmp_path: Path, name: str, fname: str, content, fragments: List[str]
) -> None:
    from pytest_retrieval.judge.sample import parse_time

    path = tmp_path / fname
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    spec = SampleSpec()
    if fname.startswith("t."):
        spec = SampleSpec(since=parse_time("2026-01-01"))
    if fname.startswith("u."):
        spec = SampleSpec(weight="users")
    with bounded(10), pytest.raises(ConfigError) as exc:
        sample_queries(path, spec)
    one_line(str(exc.value), *fragments)
