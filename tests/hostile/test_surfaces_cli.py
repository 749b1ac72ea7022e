"""A hostile value at every option and file of the ``pytest-retrieval`` command (issue #28,
section 6): a wrong type, NaN, a right-to-left override, an empty string, a value given to a flag,
a folder, a FIFO or a device where a file is read or written. Each is refused with exit 2 (1 for
a report that is not written) and one clear last line naming the option or the file, bounded in
time, never a traceback. The surfaces whose hostile value is accepted, or hangs, are
``KNOWN_GAPS`` in ``test_surfaces.py`` and have no row here."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from pytest_retrieval import cli

from ..ci import needs_fifos
from .conftest import BASE, bounded, one_line

pytestmark = needs_fifos

R = "\u202e"  # a right-to-left override
LLM = "judge llm pairs.csv --out o.txt --provider callable --function judgefn:f --cache c.jsonl"
CLICKS = "judge clicks clicks.csv --qrels-out q.txt"
POOL = "judge pool s.yaml --out p.csv"
H = "query_id,query,doc_id,title,text,grade\n"

# (surface, argv, exit code, fragments of the last line of stderr)
CASES = [
    ("evaluate <qrels>", "evaluate adir r1.trec", 2, ["adir", "directory"]),
    ("evaluate <run>", "evaluate qrels.trec fifo", 2, ["fifo", "not a regular file"]),
    ("evaluate --metric", f"evaluate qrels.trec r1.trec --metric {R}", 2, ["unknown metric"]),
    ("evaluate --metric rbp(2)", "evaluate qrels.trec r1.trec --metric 'rbp(2)'", 2, ["rbp", "p in (0, 1)"]),
    (
        "evaluate --metric judged'",
        'evaluate qrels.trec r1.trec -m "judged\'@10"',
        2,
        ["judged documents only"],
    ),
    ("evaluate --metric iprec", "evaluate qrels.trec r1.trec -m iprec", 2, ["needs its parameter recall"]),
    ("evaluate --per-query", f"evaluate qrels.trec r1.trec --per-query={R}", 2, ["--per-query"]),
    ("evaluate --profile", f"evaluate qrels.trec r1.trec --profile {R}", 2, ["--profile"]),
    ("evaluate --ties", "evaluate qrels.trec r1.trec --ties ''", 2, ["--ties"]),
    ("evaluate --grade-map", "evaluate qrels.trec r1.trec --grade-map fair=nan", 2, ["--grade-map"]),
    (
        "evaluate --ignore-identical-ids",
        "evaluate qrels.trec r1.trec --ignore-identical-ids=yes",
        2,
        ["--ignore"],
    ),
    ("evaluate --json", "evaluate qrels.trec r1.trec --json=1", 2, ["--json"]),
    ("evaluate --average-over", f"evaluate qrels.trec r1.trec --average-over {R}", 2, ["--average-over"]),
    (
        "evaluate --complete",
        "evaluate qrels.trec r1.trec -c --average-over relevant",
        2,
        ["-c", "contradicts"],
    ),
    ("evaluate --depth", "evaluate qrels.trec r1.trec --depth 0", 2, ["--depth", ">= 1"]),
    ("evaluate --gains", "evaluate qrels.trec r1.trec --gains 1:nan", 2, ["--gains", "finite"]),
    ("--version", "--version=1", 2, ["--version"]),
    ("fuse <runs>", "fuse r1.trec adir", 2, ["adir", "directory"]),
    ("fuse --semantics", f"fuse r1.trec r2.trec --semantics {R}", 2, ["--semantics"]),
    ("fuse --norm", f"fuse r1.trec r2.trec --method linear --weights 1,1 --norm {R}", 2, ["normalization"]),
    ("fuse --combine", "fuse r1.trec r2.trec --combine nan", 2, ["--combine"]),
    ("sweep <suite>", "sweep fifo", 2, ["fifo", "not a regular file"]),
    ("sweep --retriever", f"sweep s.yaml --retriever {R}", 2, ["s.yaml", "no retriever"]),
    ("sweep --tune-split", f"sweep s.yaml --tune-split {R}", 2, ["--tune-split"]),
    ("sweep --objective", "sweep s.yaml --objective ndgc@10", 2, ["ndgc@10"]),
    ("sweep --backend", f"sweep s.yaml --backend {R}", 2, ["--backend"]),
    ("sweep --override", "sweep s.yaml --override adir", 2, ["adir", "directory"]),
    ("sweep --check", "sweep s.yaml --check=no", 2, ["--check"]),
    ("sweep --json", "sweep s.yaml --json=no", 2, ["--json"]),
    ("judge clicks <log>", "judge clicks fifo --qrels-out q.txt", 2, ["fifo"]),
    ("judge clicks --qrels-out", "judge clicks clicks.csv --qrels-out adir", 2, ["adir", "a folder"]),
    ("judge clicks --queries-out", f"{CLICKS} --queries-out adir", 2, ["adir", "a folder"]),
    ("judge clicks --query-texts", f"{CLICKS} --query-texts fifo", 2, ["fifo", "not a regular file"]),
    ("judge clicks --stats-out", f"{CLICKS} --stats-out /dev/null", 2, ["/dev/null", "a device"]),
    ("judge clicks --grades", f"{CLICKS} --grades {R}", 2, ["--grades"]),
    ("judge clicks --click-rate", f"{CLICKS} --click-rate 1.5", 2, ["--click-rate", "[0, 1]"]),
    ("judge clicks --long-click-rate", f"{CLICKS} --long-click-rate nan", 2, ["--long-click-rate"]),
    ("judge clicks --min-impressions", f"{CLICKS} --min-impressions -1", 2, ["min_impressions", ">= 1"]),
    ("judge clicks --positions-from-zero", f"{CLICKS} --positions-from-zero=1", 2, ["--positions-from-zero"]),
    ("judge clicks --column", f"{CLICKS} --column {R}", 2, ["--column", "ROLE=NAME"]),
    ("judge clicks --no-progress", f"{CLICKS} --no-progress=1", 2, ["--no-progress"]),
    ("judge llm <pairs>", LLM.replace("pairs.csv", "adir"), 2, ["adir"]),
    ("judge llm --out", LLM.replace("o.txt", "adir"), 2, ["adir"]),
    ("judge llm --provider", f"judge llm pairs.csv --out o.txt --provider {R}", 2, ["--provider"]),
    (
        "judge llm --model",
        "judge llm pairs.csv --out o.txt --provider openai --model '' --dry-run",
        2,
        ["--model"],
    ),
    (
        "judge llm --function",
        f"judge llm pairs.csv --out o.txt --provider callable --function {R}",
        2,
        ["module:function"],
    ),
    ("judge llm --prompt-file", f"{LLM} --prompt-file adir", 2, ["adir", "prompt template"]),
    ("judge llm --cache", LLM.replace("c.jsonl", "adir"), 2, ["adir"]),
    ("judge llm --rpm", f"{LLM} --rpm 0", 2, ["--rpm", "> 0"]),
    ("judge llm --timeout", f"{LLM} --timeout -1", 2, ["--timeout", "> 0"]),
    ("judge llm --reasoning", f"{LLM} --reasoning {R}", 2, ["--reasoning"]),
    ("judge llm --price-output", f"{LLM} --price-output -inf", 2, ["--price-output"]),
    ("judge llm --dry-run", f"{LLM} --dry-run=1", 2, ["--dry-run"]),
    ("judge llm --no-progress", f"{LLM} --no-progress=1", 2, ["--no-progress"]),
    ("judge pool <suites>", "judge pool fifo --out p.csv", 2, ["fifo", "not a regular file"]),
    ("judge pool --out", "judge pool s.yaml --out adir", 2, ["--out adir"]),
    ("judge pool --retrievers", f"{POOL} --retrievers {R}", 2, ["--retrievers", "no retriever"]),
    ("judge pool --judged", f"{POOL} --judged fifo", 2, ["fifo", "not a regular file"]),
    ("judge pool --corpus", f"{POOL} --corpus adir", 2, ["adir", "directory"]),
    ("judge pool --include-judged", f"{POOL} --include-judged=1", 2, ["--include-judged"]),
    ("judge pool --shuffle", f"{POOL} --shuffle nan", 2, ["--shuffle"]),
    ("judge pool --verbose", f"{POOL} --verbose=1", 2, ["--verbose"]),
    ("judge pool --no-progress", f"{POOL} --no-progress=1", 2, ["--no-progress"]),
    (
        "judge pool --from-diff",
        "judge pool --from-diff r.json --out p.csv",
        2,
        ["--from-diff r.json", "no suite of the report compared rankings"],
    ),
    ("judge pool --from-diff fifo", "judge pool --from-diff fifo --out p.csv", 2, ["fifo"]),
    (
        "judge pool --from-diff and suites",
        "judge pool s.yaml --from-diff r.json --out p.csv",
        2,
        ["one of them"],
    ),
    ("judge pool --queries", "judge pool --from-diff r.json --out p.csv --queries nan", 2, ["--queries"]),
    (
        "judge pool --queries without --from-diff",
        f"{POOL} --queries 3",
        2,
        ["--queries applies to --from-diff"],
    ),
    ("judge import <files>", "judge import fifo --qrels q.txt", 2, ["fifo", "not a regular file"]),
    ("judge import --qrels", "judge import a.csv --qrels adir", 2, ["adir", "directory"]),
    ("judge import --out", "judge import a.csv --qrels q.txt --out adir", 2, ["adir"]),
    ("judge import --policy", f"judge import a.csv --qrels q.txt --policy {R}", 2, ["--policy"]),
    ("judge import --grades", "judge import a.csv --qrels q.txt --grades 3-0", 2, ["--grades", "3-0"]),
    ("judge import --pool", "judge import a.csv --qrels q.txt --pool fifo", 2, ["fifo"]),
    ("judge agree <a>", "judge agree fifo b.csv", 2, ["fifo", "not a regular file"]),
    ("judge agree <b>", "judge agree a.csv adir", 2, ["adir", "directory"]),
    ("judge agree --labels", "judge agree a.csv b.csv --labels nan", 2, ["--labels", "nan"]),
    ("judge agree --strict", "judge agree a.csv b.csv --strict=1", 2, ["--strict"]),
    ("judge agree --json", "judge agree a.csv b.csv --json=1", 2, ["--json"]),
    ("report --markdown", "report r.json --markdown adir", 1, ["--markdown adir", "a folder"]),
    ("report --html", "report r.json --html fifo", 1, ["--html fifo", "a FIFO"]),
    ("report --openmetrics", "report r.json --openmetrics /dev/null", 1, ["--openmetrics", "a device"]),
    ("compare <a>", "compare adir r.json", 2, ["adir", "not a JSON report"]),
    (
        "compare --fail-on-regression",
        "compare r.json r.json --fail-on-regression=1",
        2,
        ["--fail-on-regression"],
    ),
    ("compare --markdown", "compare r.json r.json --markdown adir", 2, ["adir", "a folder"]),
    ("compare --json", "compare r.json r.json --json=1", 2, ["--json"]),
    # gaps closed in the same change: each value is refused before any work
    ("fuse --tag", "fuse r1.trec r2.trec --tag 'a b'", 2, ["--tag", "no white space"]),
    ("judge clicks --long-dwell", f"{CLICKS} --long-dwell nan", 2, ["--long-dwell", "finite"]),
    ("judge clicks --position-bias", f"{CLICKS} --position-bias inf", 2, ["--position-bias", "finite"]),
    ("judge clicks --min-examinations", f"{CLICKS} --min-examinations nan", 2, ["--min-examinations"]),
    ("judge llm --judge-id", f"{LLM} --judge-id ''", 2, ["--judge-id", "empty"]),
    ("judge llm --prompt-version", f"{LLM} --prompt-version ''", 2, ["--prompt-version", "empty"]),
    ("judge llm --max-backoff", f"{LLM} --max-backoff nan", 2, ["--max-backoff", "finite"]),
    ("judge llm --max-doc-chars", f"{LLM} --max-doc-chars=-5", 2, ["--max-doc-chars", ">= 1"]),
    ("judge llm --price-input", f"{LLM} --price-input nan", 2, ["--price-input", "finite"]),
    ("judge llm --failures", f"{LLM} --failures adir", 2, ["--failures adir", "directory"]),
    ("judge llm --base-url", f"{LLM} --base-url {R}", 2, ["--base-url"]),
    (
        "judge llm --api-key-env",
        f"{LLM.replace('callable', 'openai')} --model m --api-key-env PYTEST_RETRIEVAL_UNSET_KEY",
        2,
        ["PYTEST_RETRIEVAL_UNSET_KEY", "not set"],
    ),
    ("judge llm --anthropic-version", f"{LLM} --anthropic-version {R}", 2, ["--anthropic-version"]),
    ("judge pool --scale", f"{POOL} --scale {R}", 2, ["--scale", "format character"]),
    ("judge llm --rpm", f"{LLM} --rpm nan", 2, ["--rpm", "not a finite number"]),
    ("judge llm --timeout", f"{LLM} --timeout inf", 2, ["--timeout", "not a finite number"]),
    ("judge agree --names", "judge agree a.csv b.csv --names ''", 2, ["--names", "empty"]),
    ("judge agree --binarize", "judge agree a.csv b.csv --binarize=-7", 2, ["--binarize", ">= 1"]),
    ("judge agree --min-kappa", "judge agree a.csv b.csv --min-kappa nan", 2, ["--min-kappa", "finite"]),
    ("report --max-chars", "report r.json --max-chars=-1", 2, ["--max-chars", ">= 1"]),
    ("report <report>", "report fifo --markdown o.md", 2, ["fifo", "not a regular file"]),
    ("compare <b>", "compare r.json fifo", 2, ["fifo", "not a regular file"]),
    ("compare --metric", "compare r.json r.json --metric ndgc@10", 2, ["--metric", "unknown metric"]),
    (
        "compare --metric rbp",
        "compare r.json r.json --metric 'rbp(p=x)'",
        2,
        ["--metric", "p must be a number"],
    ),
    ("compare --max-drop", "compare r.json r.json --max-drop nan", 2, ["--max-drop", "finite"]),
    ("compare --confidence", "compare r.json r.json --confidence 1.5", 2, ["--confidence", "< 1"]),
    ("compare --resamples", "compare r.json r.json --resamples 0", 2, ["--resamples", ">= 1"]),
    ("--version", "--version=1", 2, ["--version", "ignored explicit argument"]),
    # history drift (issue #37): h.sqlite is an empty history
    ("history drift --store", "history drift --store adir", 2, ["adir"]),
    (
        "history drift --suite",
        f"history drift --store h.sqlite --suite {R}",
        2,
        ["no stored runs", "\\u202e"],
    ),
    (
        "history drift --retriever",
        f"history drift --store h.sqlite --retriever {R}",
        2,
        ["no stored runs", "\\u202e"],
    ),
    (
        "history drift --branch",
        f"history drift --store h.sqlite --branch {R}",
        2,
        ["no stored runs", "\\u202e"],
    ),
    (
        "history drift --metric",
        f"history drift --store h.sqlite --metric {R}",
        2,
        ["no stored runs", "\\u202e"],
    ),
    ("history drift --last", "history drift --store h.sqlite --last 1", 2, ["--last", ">= 2"]),
    ("history drift --alpha", "history drift --store h.sqlite --alpha nan", 2, ["--alpha", "finite"]),
    (
        "history drift --min-shift",
        "history drift --store h.sqlite --min-shift=-1",
        2,
        ["--min-shift", ">= 0"],
    ),
    (
        "history drift --min-segment",
        "history drift --store h.sqlite --min-segment 0",
        2,
        ["--min-segment", ">= 1"],
    ),
    (
        "history drift --permutations",
        "history drift --store h.sqlite --permutations 5",
        2,
        ["--permutations", ">= 99"],
    ),
    ("history drift --seed", "history drift --store h.sqlite --seed x", 2, ["--seed", "invalid int value"]),
    (
        "history drift --fail",
        "history drift --store h.sqlite --fail=1",
        2,
        ["--fail", "ignored explicit argument"],
    ),
    (
        "history drift --json",
        "history drift --store h.sqlite --json=1",
        2,
        ["--json", "ignored explicit argument"],
    ),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("cli")
    (d / "qrels.trec").write_text("1 0 d1 1\n1 0 d2 0\n")
    (d / "r1.trec").write_text("1 Q0 d1 1 2.0 a\n1 Q0 d2 2 1.0 a\n")
    (d / "r2.trec").write_text("1 Q0 d2 1 2.0 b\n1 Q0 d1 2 1.0 b\n")
    (d / "s.yaml").write_text(BASE + "floors:\n  bm25:\n    ndcg@10: 0.1\n")
    (d / "adir").mkdir()
    from pytest_retrieval.history import open_store

    store = open_store(str(d / "h.sqlite"))  # an empty history (history drift)
    store.runs()
    store.close()
    os.mkfifo(d / "fifo")
    (d / "a.csv").write_text(H + "q1,solar,d1,,t,1\nq2,river,d2,,t,0\n")
    (d / "b.csv").write_text(H + "q1,solar,d1,,t,1\nq2,river,d2,,t,1\n")
    (d / "pairs.csv").write_text(H + "q1,solar,d1,,text,\n")
    (d / "judgefn.py").write_text("def f(query, doc):\n    return 1\n")
    (d / "clicks.csv").write_text(
        "query_id,query,doc_id,position,clicked,dwell\nq1,solar,d1,1,1,40\nq1,solar,d2,2,0,0\n"
    )
    (d / "retrieval_s.yaml").write_text(BASE + "floors:\n  bm25:\n    ndcg@10: 0.1\n")
    run = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--retrieval-report=r.json"]
    subprocess.run(run, cwd=d, capture_output=True, timeout=300, check=False)
    assert (d / "r.json").is_file()
    return d


@pytest.mark.parametrize("surface,argv,code,fragments", CASES, ids=[c[0] for c in CASES])
def test_a_hostile_command_line_is_refused_in_one_line(
    files: Path, monkeypatch, capsys, surface: str, argv: str, code: int, fragments: List[str]
) -> None:
    monkeypatch.chdir(files)
    monkeypatch.syspath_prepend(str(files))  # the callable judge judgefn:f
    monkeypatch.setenv("XDG_CACHE_HOME", str(files / "cache"))
    with bounded(30):
        try:
            rc = cli.main(shlex.split(argv))
        except SystemExit as exc:  # argparse
            rc = exc.code
    out, err = capsys.readouterr()
    assert rc == code, (rc, out, err)
    assert "Traceback" not in err + out
    one_line(err.strip().splitlines()[-1], *fragments)
