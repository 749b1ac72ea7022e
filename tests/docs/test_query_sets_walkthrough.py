"""docs/how-to/query-sets.md runs as written: every command of its ``bash`` blocks, in order,
on a folder holding only a SciFact corpus and a generated query log, with a scripted fake
LLM behind ``OPENAI_BASE_URL`` (never a live API). The one step a person does, grading the
pooled pairs, is done by a rule here. It ends with the suite's first gate passing."""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

from pytest_retrieval.cli import main as cli_main

from ..judge.fake_synth import FakeSynthLLM
from ..judge.querylog import real_queries, write_log

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "how-to" / "query-sets.md"


def blocks(text: str) -> List[Tuple[str, str]]:
    """(language, body) of every fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"```(\w*)\n(.*?)```", text, re.S)]


def grade_like_a_person(pool: Path, synthetic_qrels: Path) -> int:
    """Fill the grade column: a question its source document answers is 2 (0 for the ones
    the fake writes "unrelated"), any other document 1 when it shares a long word with the
    query, else 0."""
    claimed = set()
    for line in synthetic_qrels.read_text().splitlines()[1:]:
        q, d, _ = line.split("\t")
        claimed.add((q, d))
    with open(pool, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        words = {w for w in re.findall(r"[a-z]{5,}", r["query"].lower())}
        if (r["query_id"], r["doc_id"]) in claimed:
            r["grade"] = "0" if "unrelated" in r["query"] else "2"
        else:
            r["grade"] = (
                "1" if words & set(re.findall(r"[a-z]{5,}", (r["title"] + " " + r["text"]).lower())) else "0"
            )
    with open(pool, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return len(rows)


def test_the_walkthrough_runs(tmp_path: Path, shared_dir: Path, monkeypatch, capsys) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "judgments").mkdir()
    corpus = (shared_dir / "data" / "scifact" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:300]
    (tmp_path / "judgments" / "corpus.jsonl").write_text("\n".join(corpus) + "\n", encoding="utf-8")
    write_log(
        tmp_path / "logs" / "queries.csv",
        sorted(set(real_queries(shared_dir, "scifact")))[:300],
        5000,
        seed=2,
    )
    fake = FakeSynthLLM(failing_checks=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))  # the answer cache of this run only
    monkeypatch.delenv("PYTEST_RETRIEVAL_CACHE_DIR", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-walkthrough-test")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    ran: List[str] = []
    try:
        for lang, body in blocks(DOC.read_text(encoding="utf-8")):
            if lang == "yaml":
                (tmp_path / "retrieval_search.yaml").write_text(body, encoding="utf-8")
            if lang != "bash":
                continue
            for line in body.strip().splitlines():
                ran.append(_run(line, tmp_path, capsys))
                if " judge pool " in line:
                    assert (
                        grade_like_a_person(
                            tmp_path / "annotate" / "pool.csv", tmp_path / "judgments" / "synthetic-qrels.tsv"
                        )
                        > 40
                    )
    finally:
        fake.close()
    assert any(r.startswith("pytest-retrieval judge synth") for r in ran) and ran[-1].startswith("pytest ")
    assert fake.generations == 30  # the dry run asked nothing
    assert (tmp_path / "user-cache" / "pytest-retrieval" / "judge" / "llm-cache.jsonl").is_file()
    prov = json.loads((tmp_path / "judgments" / "synthetic.json").read_text())
    assert (
        prov["counts"]["kept"] + sum(prov["counts"]["dropped"].values()) == prov["counts"]["generated"] == 90
    )


def _run(line: str, cwd: Path, capsys) -> str:
    argv = shlex.split(line)
    if argv[0] == "pytest-retrieval":
        rc = cli_main(argv[1:])
        out, err = capsys.readouterr()
        assert rc == 0, (line, out, err)
        if " judge agree " in f" {line} ":
            assert "Cohen's kappa" in out and "on the " in out and "tagged 'synthetic'" in out
        if "--dry-run" in argv:
            assert "estimate:" in err and "est. $" in err
        return line
    if argv[0] == "pytest":
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv[1:]],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
        assert re.search(r"query set: .*; \d+ synthetic, \d+ human", proc.stdout), proc.stdout[-3000:]
        return line
    # plain shell (cat, cp)
    proc = subprocess.run(["bash", "-c", line], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, (line, proc.stderr)
    return line
