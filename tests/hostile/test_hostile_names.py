"""A suite name and a retriever name holding '..', a newline, ';', '@someone', '<script>' and a
``${VAR}`` value, through a whole pytest run with every output (issue #28 sections 3 and 6): files
stay inside the runs folder, ``evaluate.sh`` runs nothing else, Markdown notifies nobody, HTML and
Markdown carry no markup, and the verdict is a full run. A value interpolated into a *name* is shown
as the name (names are not credentials; credentials are redacted, tests/hostile/test_secrets*.py)."""

from __future__ import annotations

import json
import os
import stat
import subprocess

pytest_plugins = ["pytester"]

SUITE = """\
suite: "../x;@someone<script>alert(1)</script>${HOSTILE_NAME_PART}\\nrm -rf ~"
judgments:
  inline:
    - {id: q1, text: "solar panels", relevant: {d1: 1}}
    - {id: q2, text: "river floods", relevant: {d2: 1}}
  documents:
    - {id: d1, text: "solar panels in winter"}
    - {id: d2, text: "river flood defences"}
latency:
  warmup: 0
  repetitions: 1
retrievers:
  "..;@someone<script>\\n$(touch PWNED)":
    type: bm25
floors:
  "..;@someone<script>\\n$(touch PWNED)":
    ndcg@10: 0.1
"""


def test_hostile_names_through_every_output(pytester, monkeypatch) -> None:
    monkeypatch.setenv("HOSTILE_NAME_PART", "team;`id`")
    pytester.makefile(".yaml", retrieval_h=SUITE)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--retrieval-runs=runs",
        "--retrieval-markdown=s.md",
        "--retrieval-html=r.html",
        "--retrieval-report=r.json",
        "--retrieval-openmetrics=m.txt",
        "-rA",
        timeout=120,
    )
    out = result.stdout.str()
    assert result.ret == 0, out
    assert "Traceback" not in out and "Retrieval gates passed: 0 failed, 0 errored, 1 passed" in out
    # the terminal keeps a name on one line: its newline is spelled out, never a line of its own
    # that could pass for another gate's (the node id and the summary alike)
    assert not [line for line in out.splitlines() if line.startswith(("$(touch PWNED)", "rm -rf ~"))], out
    assert "PASSED retrieval_h.yaml::..;@someone<script>\\n$(touch PWNED)::ndcg@10" in out, out
    assert "PASS  ..;@someone<script>\\n$(touch PWNED) ndcg@10 = 1.0000" in out, out
    root = pytester.path
    written = [p for p in root.rglob("*") if p.is_file()]
    assert all(p.resolve().is_relative_to(root) for p in written)
    (folder,) = [p for p in (root / "runs").iterdir()]
    assert not folder.name.startswith((".", "-")) and "\n" not in folder.name and ";" not in folder.name
    md, html = (root / "s.md").read_text(), (root / "r.html").read_text()
    assert "@someone" not in md.replace("@&#8203;someone", "") and "<script>alert" not in md
    assert "<script>alert" not in html and "..;@someone<script>" not in html.split('class="qdata"')[0]
    assert json.loads((root / "r.json").read_text())["suites"][0]["suite"].startswith("../x;@someone")
    # evaluate.sh, with a stub pytest-retrieval first on PATH: it runs the stub and nothing else
    stub = root / "bin" / "pytest-retrieval"
    stub.parent.mkdir()
    stub.write_text('#!/bin/sh\necho called >> "$LOG"\n')
    stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{stub.parent}:{os.environ['PATH']}", "LOG": str(root / "log")}
    done = subprocess.run(
        ["sh", str(folder / "evaluate.sh")], cwd=root, env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert (root / "log").read_text().splitlines() == ["called"]
    assert not list(root.rglob("PWNED"))


SPARSE_SUITE = """\
suite: "../sp;@someone<script>${HOSTILE_NAME_PART}"
judgments:
  inline:
    - {id: q1, text: "solar panels", relevant: {d1: 1}}
    - {id: q2, text: "river floods", relevant: {d2: 1}}
  documents:
    - {id: d1, text: "solar panels in winter"}
    - {id: d2, text: "river flood defences"}
latency:
  warmup: 0
  repetitions: 1
retrievers:
  "..;@someone<script>\\n$(touch PWNED)":
    type: sparse
    idf: bm25_plus1
    field: "..;@someone<script>${HOSTILE_NAME_PART}"
    sparse_encoder:
      type: precomputed
      documents: docs.jsonl
      queries: queries.jsonl
floors:
  "..;@someone<script>\\n$(touch PWNED)":
    ndcg@10: 0.1
    flops: 10
"""


def test_hostile_names_of_a_sparse_retriever_through_every_output(pytester, monkeypatch) -> None:
    # the learned sparse retriever (#25): its name and field name through the summary and every
    # output; the name is data, never markup or a shell word, and the run is a full one
    monkeypatch.setenv("HOSTILE_NAME_PART", "team;`id`")
    pytester.makefile(".yaml", retrieval_h=SPARSE_SUITE)
    pytester.makefile(
        ".jsonl",
        docs='{"_id": "d1", "vector": {"solar": 1.0, "panel": 0.5}}\n{"_id": "d2", "vector": {"river": 1.0, "flood": 0.7}}',
        queries='{"_id": "q1", "vector": {"solar": 1.0}}\n{"_id": "q2", "vector": {"river": 1.0, "flood": 1.0}}',
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--retrieval-runs=runs",
        "--retrieval-markdown=s.md",
        "--retrieval-html=r.html",
        "--retrieval-report=r.json",
        "--retrieval-openmetrics=m.txt",
        timeout=120,
    )
    out = result.stdout.str()
    assert result.ret == 0, out
    assert "Traceback" not in out and "Retrieval gates passed: 0 failed, 0 errored, 2 passed" in out
    root = pytester.path
    assert not (root / "PWNED").exists()
    assert all(p.resolve().is_relative_to(root) for p in root.rglob("*") if p.is_file())
    md, html = (root / "s.md").read_text(), (root / "r.html").read_text()
    assert "@someone" not in md.replace("@&#8203;someone", "") and "<script>" not in md
    assert "<script>alert" not in html and "..;@someone<script>" not in html.split('class="qdata"')[0]
    report = json.loads((root / "r.json").read_text())
    assert "1.5 per query" in out and "..;@someone<script>" in json.dumps(report)
