"""baseline.py and fingerprint.py: exact round trips, diff-friendly files, fingerprints, one-line errors."""

from __future__ import annotations

import difflib
import json
import math
import os
import struct
from pathlib import Path
from unittest import mock

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.gates.baseline import (
    FORMAT,
    Baseline,
    BaselineMissing,
    baseline_from_result,
    default_baseline_path,
    read_baseline,
    resolve_baseline_path,
    write_baseline,
)
from pytest_retrieval.gates.fingerprint import (
    INVALIDATING,
    compare_fingerprints,
    diff_fingerprints,
    fingerprint,
    fingerprint_from_result,
)
from pytest_retrieval.types import Document

TRICKY = [
    0.1 + 0.2,
    1 / 3,
    2 / 3,
    5e-324,
    2.2250738585072014e-308,
    1e308,
    -0.0,
    0.0,
    1.0,
    0.6309297535714575,
    0.43067655807339306,
    1 - 2**-53,
    123456789.123456789,
]


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


#: the tricky floats a metric can hold (a share: 0 to 1; the others go through a column
#: without a range, ``raw``)
SHARES = [v for v in TRICKY if 0.0 <= v <= 1.0]


def make_baseline(values=None, **kw) -> Baseline:
    values = SHARES if values is None else values
    per_query = {f"q{i}": v for i, v in enumerate(values)}
    retrievers = {
        "bm25": {
            "per_query": {"ndcg@10": per_query, "mrr@10": dict(per_query)},
            "aggregate": {"ndcg@10": math.fsum(values) / len(values), "map": math.nan},
            "latency_ms": {"p50": 0.38, "p95": 0.55, "server_took_p50": None, "n": 400},
            "queries": len(values),
        },
    }
    fields = dict(
        suite="tiny",
        created="2025-01-31T12:00:00Z",
        plugin_version="0.1.0",
        fingerprint=small_fingerprint(
            queries={q: f"text of {q}" for q in per_query},
            qrels={q: {"d1": 1} for q in per_query},
            retrievers={"bm25": {"type": "bm25", "fields": ["title", "text"]}},  # the one with values
        ),
        retrievers=retrievers,
    )
    fields.update(kw)
    return Baseline(**fields)


def small_fingerprint(**kw):
    args = dict(
        queries={"q1": "solar panels", "q2": "river floods"},
        qrels={"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}},
        corpus=[
            Document("d1", {"title": "Solar", "text": "panels"}),
            Document("d2", {"text": "wind"}),
            Document("d3", {"text": "floods"}),
        ],
        tags={"q1": ("energy",)},
        embedder_id="onnx:minilm:abc",
        engine="opensearch",
        engine_version="2.19.5",
        plugin_version="0.1.0",
        metric_profile={"profile": "exp", "ties": "engine", "relevance_threshold": 1, "depth": 100},
        retrievers={
            "bm25": {"type": "bm25", "fields": ["title", "text"]},
            "rrf": {"type": "rrf", "of": ["bm25", "dense"]},
        },
    )
    args.update(kw)
    return fingerprint(**args)


# =========================================================================== round trip


def test_round_trip_is_bit_exact(tmp_path):
    b = make_baseline(TRICKY)
    raw = b.retrievers["bm25"]["per_query"].pop("mrr@10")  # 1e308 is no share: a column without a range
    b.retrievers["bm25"]["per_query"]["raw"] = raw
    b.retrievers["bm25"]["per_query"]["ndcg@10"] = {q: v for q, v in raw.items() if 0.0 <= v <= 1.0}
    b.retrievers["bm25"]["per_query"]["ndcg@10"].update({q: 0.5 for q, v in raw.items() if not 0 <= v <= 1})
    column = b.retrievers["bm25"]["per_query"]["ndcg@10"]
    b.retrievers["bm25"]["aggregate"]["ndcg@10"] = math.fsum(column.values()) / len(column)
    path = write_baseline(tmp_path / "s.baseline.json", b)
    back = read_baseline(path)
    got = back.per_query("bm25", "raw")
    assert list(got) == list(sorted(got))  # keys come back sorted
    for i, v in enumerate(TRICKY):
        assert bits(got[f"q{i}"]) == bits(float(v)), (i, v, got[f"q{i}"])
    agg = back.retrievers["bm25"]["aggregate"]
    assert bits(agg["ndcg@10"]) == bits(b.retrievers["bm25"]["aggregate"]["ndcg@10"])
    assert math.isnan(agg["map"])  # NaN <-> null
    assert back.retrievers["bm25"]["latency_ms"]["server_took_p50"] is None
    assert (back.suite, back.created, back.plugin_version) == ("tiny", b.created, "0.1.0")
    assert back.fingerprint == b.fingerprint
    assert back.per_query("bm25", "nope") is None and back.per_query("x", "ndcg@10") is None
    # writing what was read gives the very same bytes
    write_baseline(tmp_path / "again.json", back)
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()


def test_file_is_diff_friendly(tmp_path):
    p1 = write_baseline(tmp_path / "a.json", make_baseline())
    text = p1.read_text(encoding="utf-8")
    assert text.endswith("}\n") and "\r" not in text
    data = json.loads(text)
    assert data["format"] == FORMAT and data["version"] == 1
    assert '\n     "q0": 0.30000000000000004,\n' in text  # one query per line, repr float
    assert list(json.loads(text)) == sorted(data)
    p1 = write_baseline(tmp_path / "a.json", make_baseline([0.1, 0.2, 0.3, 0.4]))
    text = p1.read_text(encoding="utf-8")
    p2 = write_baseline(tmp_path / "b.json", make_baseline([0.1, 0.2, 0.3, 0.5]))
    changed = [
        line
        for line in difflib.unified_diff(text.splitlines(), p2.read_text().splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    # q3 in two metrics, the aggregate and the retriever's checksum
    assert len([c for c in changed if c.startswith("-")]) == 4


def test_write_is_atomic_and_keeps_old_file_on_error(tmp_path):
    path = tmp_path / "sub" / "s.baseline.json"
    write_baseline(path, make_baseline())
    before = path.read_bytes()
    bad = make_baseline()
    bad.retrievers["bm25"]["per_query"]["ndcg@10"]["q0"] = math.nan
    with pytest.raises(ValueError, match="per-query values must be finite"):
        write_baseline(path, bad)
    bad = make_baseline()
    bad.retrievers["bm25"]["aggregate"]["ndcg@10"] = math.inf
    with pytest.raises(ValueError, match="infinite"):
        write_baseline(path, bad)
    assert path.read_bytes() == before
    assert sorted(os.listdir(path.parent)) == ["s.baseline.json"]  # no temp files left
    os.chmod(path, 0o640)
    write_baseline(path, make_baseline([0.5, 0.25]))
    assert (path.stat().st_mode & 0o777) == 0o640  # the existing file's mode is kept
    assert read_baseline(path).per_query("bm25", "ndcg@10") == {"q0": 0.5, "q1": 0.25}


# =========================================================================== errors


def one_line_error(path) -> str:
    with pytest.raises(ConfigError) as info:
        read_baseline(path)
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg
    return msg


def test_malformed_files_are_one_line_errors(tmp_path):
    good = write_baseline(tmp_path / "good.json", make_baseline()).read_text()
    cases = {
        "truncated": (good[:200], "not valid JSON"),
        "conflict": (
            good.replace(
                '"suite": "tiny"', '<<<<<<< HEAD\n"suite": "tiny"\n=======\n"suite": "x"\n>>>>>>> branch'
            ),
            "merge conflict",
        ),
        "list": ("[1, 2]", "a baseline is a JSON object"),
        "format": (good.replace(FORMAT, "something-else"), "not a pytest-retrieval baseline"),
        "newer": (good.replace('"version": 1', '"version": 2'), "newer pytest-retrieval (baseline format 2"),
        "oldver": (good.replace('"version": 1', '"version": 0'), "unsupported baseline format"),
        "strver": (good.replace('"version": 1', '"version": "1"'), "must be an integer"),
        "value": (
            good.replace('"q0": 0.30000000000000004', '"q0": "high"', 1),
            "retrievers.bm25.per_query.mrr@10.q0: per-query value must be a finite number",
        ),
        "nullvalue": (
            good.replace('"q0": 0.30000000000000004', '"q0": null', 1),
            "per-query value must be a finite number",
        ),
        "missing": (good.replace('"suite": "tiny",', ""), "missing key 'suite'"),
        "dup": (
            good.replace('"suite": "tiny",', '"suite": "tiny",\n "suite": "tiny",'),
            "duplicate key 'suite'",
        ),
        "binary": (b"\xff\xfe{}", "not UTF-8"),
    }
    for name, (content, expected) in cases.items():
        path = tmp_path / f"{name}.baseline.json"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        msg = one_line_error(path)
        assert expected in msg, (name, msg)
    msg = one_line_error(tmp_path / "truncated.baseline.json")
    assert f"{tmp_path / 'truncated.baseline.json'}:" in msg  # with a line number
    with pytest.raises(BaselineMissing) as info:
        read_baseline(tmp_path / "absent.json")
    assert isinstance(info.value, ConfigError) and "--retrieval-baseline-update" in str(info.value)


# =========================================================================== fingerprint


def test_fingerprint_is_deterministic_and_order_insensitive_where_it_should_be():
    a = small_fingerprint()
    b = small_fingerprint(
        queries={"q2": "river floods", "q1": "solar panels"},
        qrels={"q2": {"d3": 2}, "q1": {"d2": 0, "d1": 1}},
        retrievers={
            "rrf": {"of": ["bm25", "dense"], "type": "rrf"},
            "bm25": {"fields": ["title", "text"], "type": "bm25"},
        },
    )
    assert a == b and diff_fingerprints(a, b) == []
    assert a["queries"]["count"] == 2 and a["qrels"]["count"] == 3 and a["corpus"]["count"] == 3
    # corpus order is part of the input (the embedded engine breaks ties by position)
    c = small_fingerprint(
        corpus=[
            Document("d2", {"text": "wind"}),
            Document("d1", {"title": "Solar", "text": "panels"}),
            Document("d3", {"text": "floods"}),
        ]
    )
    assert c["corpus"] != a["corpus"]
    # mappings work as documents too
    d = small_fingerprint(
        corpus=[
            {"_id": "d1", "title": "Solar", "text": "panels"},
            {"_id": "d2", "text": "wind"},
            {"_id": "d3", "text": "floods"},
        ]
    )
    assert d["corpus"] == a["corpus"]


def test_diff_fingerprints_plain_english():
    old = small_fingerprint()
    new = small_fingerprint(
        qrels={"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 2}},
        engine_version="2.19.6",
        retrievers={"bm25": {"type": "bm25", "fields": ["title^2", "text"]}, "dense": {"type": "knn"}},
        metric_profile={"profile": "trec", "ties": "engine", "relevance_threshold": 1, "depth": 100},
    )
    lines = diff_fingerprints(old, new)
    qrels = (
        f"qrels changed: same 3 judgments, different content (sha256 "
        f"{old['qrels']['sha256'][:8]}… -> {new['qrels']['sha256'][:8]}…)"
    )
    assert lines == [
        "metric settings changed: profile exp -> trec",
        qrels,
        "retriever 'bm25' config changed",
        "retriever 'dense' added (not in the baseline)",
        "retriever 'rrf' removed (only in the baseline)",
        "engine version 2.19.5 -> 2.19.6 (opensearch)",
    ]
    diff = compare_fingerprints(old, new)
    # the metric profile invalidates; a judgment change is resolved query by query
    assert not diff.comparable and diff.invalidating == lines[:1] and diff.judgments == [qrels]
    assert diff.system == lines[2:]
    more = small_fingerprint(
        queries={"q1": "solar panels", "q2": "river floods", "q3": "x"},
        embedder_id="onnx:other",
        engine="elasticsearch",
        engine_version="8.15.0",
        plugin_version="0.2.0",
    )
    lines = diff_fingerprints(old, more)
    assert lines[0].startswith("queries changed: 2 -> 3 queries (sha256 ")
    assert "embedder onnx:minilm:abc -> onnx:other" in lines
    assert "engine opensearch 2.19.5 -> elasticsearch 8.15.0" in lines
    assert "pytest-retrieval version 0.1.0 -> 0.2.0" in lines


def test_system_changes_do_not_invalidate_unless_asked():
    old = small_fingerprint()
    new = small_fingerprint(engine_version="2.19.6", embedder_id="onnx:new")
    diff = compare_fingerprints(old, new)
    assert diff and diff.comparable and len(diff.system) == 2
    strict = compare_fingerprints(old, new, invalidating=INVALIDATING + ("engine",))
    assert not strict.comparable and strict.invalidating == ["engine version 2.19.5 -> 2.19.6 (opensearch)"]


def test_existing_index_fingerprint():
    idx = {"name": "products", "doc_count": 8_800_000, "mapping": {"properties": {}}}
    old = small_fingerprint(corpus=None, index=idx)
    new = small_fingerprint(
        corpus=None, index=dict(idx, doc_count=8_800_123, mapping={"properties": {"t": {}}})
    )
    diff = compare_fingerprints(old, new)
    # the index is the system under test (issue #28): its doc count and mapping are compared
    assert diff.comparable and diff.system[0] == "index doc count 8,800,000 -> 8,800,123"
    assert diff.system[1].startswith("index mapping/settings changed (sha256 ")
    assert diff_fingerprints(old, small_fingerprint(corpus=None))[:2] == [
        "index products -> none",
        "index doc count 8,800,000 -> none",
    ]


def test_baseline_paths(tmp_path):
    suite = tmp_path / "search" / "retrieval_products.yaml"
    assert default_baseline_path(suite) == tmp_path / "search" / "retrieval_products.baseline.json"
    assert default_baseline_path("x/foo.retrieval.yml") == Path("x/foo.retrieval.baseline.json")
    assert resolve_baseline_path(suite) == default_baseline_path(suite)
    assert resolve_baseline_path(suite, "baselines/p.json") == tmp_path / "search" / "baselines" / "p.json"
    assert resolve_baseline_path(suite, tmp_path / "abs.json") == tmp_path / "abs.json"


# =========================================================================== end to end

SUITE = """\
suite: tiny
judgments:
  inline:
    - {id: q1, text: "solar panels efficiency", relevant: {d1: 1, d4: 2, d2: 0}, tags: [energy]}
    - {id: q2, text: "river flood defences", relevant: {d3: 1}}
    - {id: 3, text: "quantum gravity", relevant: {d5: 1}}
  documents:
    - {id: d1, title: "Solar panels", text: "efficiency of solar panels in winter"}
    - {id: d2, title: "Panels", text: "solar efficiency measured"}
    - {id: d3, title: "Floods", text: "river flood defences in cities"}
    - {id: d4, title: "Wind", text: "wind turbines and solar farms"}
    - {id: d5, title: "Physics", text: "loop gravity theories"}
latency:
  warmup: 1
retrievers:
  bm25: {type: bm25, fields: [title^2, text]}
  text_only: {type: bm25, fields: [text]}
floors:
  bm25: {ndcg@10: 0.5}
"""


def test_suite_result_to_baseline_and_back(tmp_path):
    from pytest_retrieval.config.load import load_suite
    from pytest_retrieval.execution.runner import SuiteRunner
    from pytest_retrieval.stats.paired import paired_comparison

    path = tmp_path / "retrieval_tiny.yaml"
    path.write_text(SUITE)
    result = SuiteRunner(load_suite(path)).run()
    fp = fingerprint_from_result(result)
    assert fp["queries"]["count"] == 3 and fp["corpus"]["count"] == 5
    assert fp["metric_profile"] == {
        "profile": "exp",
        "ties": "engine",
        "relevance_threshold": 1,
        "depth": 100,
    }
    assert set(fp["retrievers"]) == {"bm25", "text_only"} and fp["plugin_version"]
    b = baseline_from_result(result, fingerprint=fp)
    out = write_baseline(default_baseline_path(path), b)
    assert out.name == "retrieval_tiny.baseline.json"
    back = read_baseline(out)
    assert back.retrievers["bm25"]["latency_ms"]["p95"] == result.retrievers["bm25"].latency.p95
    assert "samples_ms" not in back.retrievers["bm25"]["latency_ms"]
    for name, rr in result.retrievers.items():
        for metric, values in rr.evaluation.per_query.items():
            assert back.per_query(name, metric) == values
        # judged@10 is written beside every gated metric (reported with each verdict)
        assert back.retrievers[name]["aggregate"] == dict(rr.evaluation.aggregate, **{"judged@10": mock.ANY})
        assert set(back.per_query(name, "judged@10")) == set(rr.evaluation.evaluated)
    # the same run against its own baseline: comparable and non-inferior
    again = SuiteRunner(load_suite(path)).run()
    assert compare_fingerprints(back.fingerprint, fingerprint_from_result(again)).lines == []
    cmp = paired_comparison(
        back.per_query("bm25", "ndcg@10"),
        again.retrievers["bm25"].evaluation.per_query["ndcg@10"],
        max_drop=0.0,
    )
    assert cmp.non_inferior and cmp.n == 3
    # a changed field boost is a system change: still comparable
    path.write_text(SUITE.replace("title^2", "title^3"))
    changed = fingerprint_from_result(SuiteRunner(load_suite(path)).run())
    diff = compare_fingerprints(back.fingerprint, changed)
    assert diff.comparable and diff.system == ["retriever 'bm25' config changed"]


def test_fingerprint_records_the_client():
    base = dict(queries={"1": "q"}, qrels={"1": {"d": 1}}, engine="elasticsearch", engine_version="9.5.0")
    old = fingerprint(**base)
    new = fingerprint(**base, client="elasticsearch-py 9.5.1")
    assert new["client"] == "elasticsearch-py 9.5.1" and "client" not in old
    assert not compare_fingerprints(old, new)  # a baseline from before clients were recorded
    other = fingerprint(**base, client="elasticsearch-py 8.19.3")
    diff = compare_fingerprints(other, new)
    assert diff.comparable and diff.system == [
        "engine client elasticsearch-py 8.19.3 -> elasticsearch-py 9.5.1"
    ]


def test_the_fingerprint_of_a_result_is_taken_once_and_handed_out_as_a_copy(tmp_path, monkeypatch):
    from pytest_retrieval.config.load import load_suite
    from pytest_retrieval.execution.runner import SuiteRunner
    from pytest_retrieval.gates import fingerprint as fp_module

    path = tmp_path / "retrieval_tiny.yaml"
    path.write_text(SUITE)
    result = SuiteRunner(load_suite(path)).run()
    first = fingerprint_from_result(result)
    first["queries"]["count"] = -1  # a caller's change does not reach the kept one
    calls = []
    original = fp_module.fingerprint
    monkeypatch.setattr(fp_module, "fingerprint", lambda **kw: calls.append(1) or original(**kw))
    again = fingerprint_from_result(result)
    assert again["queries"]["count"] == 3 and calls == []
    # what it was taken of changed (another engine version, another plugin version): taken again
    result.backend_info["version"] = "9.9.9"
    changed = fingerprint_from_result(result)
    assert changed["engine"]["version"] == "9.9.9" and len(calls) == 1
    assert fingerprint_from_result(result, plugin_version="0.0.1")["plugin_version"] == "0.0.1"
    assert len(calls) == 2
