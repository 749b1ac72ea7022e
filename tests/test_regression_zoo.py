"""benchmarks/regression_zoo.py: the catalogue's edits, the classification of a run, and one
end-to-end run of the zoo on the example suite's data (a tiny BEIR folder)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import regression_zoo  # noqa: E402
import zoo_changes  # noqa: E402
import zoo_data  # noqa: E402
from zoo_outcome import classify, largest_drop, read_items, read_metrics, verdict  # noqa: E402

DATA = ROOT / "example_suite" / "data"


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """A BEIR folder ``mini`` in the layout of ../shared/data, from the example suite's data."""
    folder = tmp_path / "shared" / "mini"
    (folder / "qrels").mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.jsonl"):
        (folder / name).symlink_to(DATA / name)
    (folder / "qrels" / "test.tsv").symlink_to(DATA / "qrels.tsv")
    emb = folder / zoo_data.EMBEDDINGS
    emb.parent.mkdir(parents=True)
    emb.symlink_to(DATA / "vectors")
    return tmp_path / "shared"


@pytest.fixture
def base(tmp_path: Path, shared: Path) -> zoo_data.Case:
    return zoo_data.build_base(tmp_path / "zoo" / "base", "mini", "embedded", shared)


def changed(base: zoo_data.Case, name: str) -> zoo_data.Case:
    change = next(c for c in zoo_changes.HARMFUL + zoo_changes.HARMLESS if c.name == name)
    case = zoo_data.copy_case(base, base.root.parent / "case")
    change.edit(case)
    case.write()
    return case


def test_catalogue_has_30_of_each_kind_per_engine():
    for engine in regression_zoo.ENGINES:
        changes = zoo_changes.catalogue(engine)
        assert sum(c.harmful for c in changes) >= 30
        assert sum(not c.harmful for c in changes) >= 30
    names = [c.name for c in zoo_changes.HARMFUL + zoo_changes.HARMLESS]
    assert len(names) == len(set(names))


def test_base_suites_share_everything_but_queries_and_gates(base: zoo_data.Case):
    gate = yaml.safe_load((base.root / "retrieval_gate.yaml").read_text())
    full = yaml.safe_load((base.root / "retrieval_full.yaml").read_text())
    assert gate["regression"] == {"max_drop": {"ndcg@10": zoo_data.MAX_DROP}}
    assert gate["retrievers"] == full["retrievers"] and "regression" not in full
    assert (base.data / "corpus.jsonl").is_symlink()


def test_stale_index_drops_its_share_seeded(base: zoo_data.Case):
    rows = zoo_data.read_corpus(base)
    left = zoo_data.read_corpus(changed(base, "stale index: 10% docs missing"))
    assert len(left) == len(rows) - int(0.1 * len(rows))
    again = zoo_data.read_corpus(changed(base, "stale index: 10% docs missing"))
    assert [r["_id"] for r in again] == [r["_id"] for r in left]
    unjudged = changed(base, "stale index: 5% unjudged docs missing")
    assert zoo_data.judged_documents(unjudged) <= {r["_id"] for r in zoo_data.read_corpus(unjudged)}


def test_shuffled_corpus_keeps_every_row(base: zoo_data.Case):
    rows = zoo_data.read_corpus(base)
    shuffled = zoo_data.read_corpus(changed(base, "corpus rows shuffled"))
    assert shuffled != rows and sorted(shuffled, key=lambda r: r["_id"]) == sorted(
        rows, key=lambda r: r["_id"]
    )
    assert (base.data / "corpus.jsonl").is_symlink()  # the base is left alone


def test_permuted_vector_rows_keep_each_ids_vector(base: zoo_data.Case):
    before = dict(zip(*reversed(zoo_data.load_vectors(base, "corpus"))))
    matrix, ids = zoo_data.load_vectors(changed(base, "doc vector rows permuted"), "corpus")
    assert ids != list(before)
    assert all(np.array_equal(before[i], row) for i, row in zip(ids, matrix))


def test_vector_edits(base: zoo_data.Case):
    m16, _ = zoo_data.load_vectors(changed(base, "vectors float16"), "queries")
    assert m16.dtype == np.float16
    m32, _ = zoo_data.load_vectors(changed(base, "vectors cut to 32 dims"), "corpus")
    assert m32.shape[1] == 32
    noisy, _ = zoo_data.load_vectors(changed(base, "doc vectors noise 0.1"), "corpus")
    clean, _ = zoo_data.load_vectors(base, "corpus")
    assert np.allclose(np.linalg.norm(noisy, axis=1), 1.0, atol=1e-5) and not np.allclose(noisy, clean)


def test_cosmetic_yaml_reads_as_the_same_suite(base: zoo_data.Case):
    for name in ("YAML keys reordered", "YAML flow style", "YAML comments", "YAML all quoted"):
        case = changed(base, name)
        text = (case.root / "retrieval_gate.yaml").read_text()
        assert yaml.safe_load(text) == base.gate and text != yaml.safe_dump(base.gate, sort_keys=False)
    anchored = (changed(base, "YAML anchor and alias").root / "retrieval_gate.yaml").read_text()
    assert "&inputs" in anchored and "*inputs" in anchored


JUNIT = """<?xml version="1.0"?><testsuites><testsuite>
<testcase classname="retrieval_full.yaml.bm25" name="ndcg@10"><error message="ignored: full suite"/></testcase>
{cases}
</testsuite></testsuites>"""


def junit(tmp_path: Path, *cases: str) -> Path:
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT.format(cases="\n".join(cases)))
    return path


def case_xml(retriever: str, child: str = "") -> str:
    return f'<testcase classname="retrieval_gate.yaml.{retriever}" name="baseline:ndcg@10">{child}</testcase>'


CORPUS_SKIP = '<skipped message="the inputs changed since the baseline (corpus changed: ...)"/>'


@pytest.mark.parametrize(
    "cases, outcome",
    [
        ([case_xml("bm25"), case_xml("rrf")], "passed"),
        ([case_xml("bm25", '<failure message="FAIL, regressed"/>'), case_xml("rrf")], "failed"),
        ([case_xml("bm25", '<failure message="x"/>'), case_xml("rrf", '<error message="y"/>')], "error"),
        ([case_xml("bm25", CORPUS_SKIP), case_xml("rrf", CORPUS_SKIP)], "skipped"),
        ([case_xml("bm25", CORPUS_SKIP), case_xml("rrf", '<failure message="x"/>')], "failed"),
        ([], "error"),
    ],
)
def test_classify_reads_only_the_gate_suite(tmp_path: Path, cases, outcome):
    assert classify(read_items(junit(tmp_path, *cases))).outcome == outcome


def test_skip_of_an_added_retrievers_baseline_is_expected(tmp_path: Path):
    items = read_items(junit(tmp_path, case_xml("bm25"), case_xml("new", '<skipped message="no baseline"/>')))
    assert classify(items, added_retrievers=("new",)).outcome == "passed"
    assert classify(items).outcome == "skipped"


def test_no_junit_is_an_error(tmp_path: Path):
    assert classify(read_items(tmp_path / "absent.xml")).outcome == "error"


@pytest.mark.parametrize(
    "outcome, harmful, should_refuse, expected",
    [
        ("failed", True, False, "caught"),
        ("error", True, False, "caught"),
        ("passed", True, False, "missed"),
        ("failed", False, False, "flagged"),
        ("passed", False, False, "ok"),
        ("skipped", True, False, "silent"),
        ("skipped", False, False, "silent"),
        ("skipped", True, True, "refused"),
    ],
)
def test_verdict(outcome, harmful, should_refuse, expected):
    assert verdict(outcome, harmful, should_refuse) == expected


def test_metrics_and_largest_drop(tmp_path: Path):
    report = tmp_path / "r.json"
    suites = [
        {"file": "/x/retrieval_full.yaml", "retrievers": [{"name": "bm25", "metrics": {"ndcg@10": 0.5}}]}
    ]
    report.write_text(json.dumps({"suites": suites}))
    assert read_metrics(report) == {"retrieval_full.yaml": {"bm25": 0.5}}
    assert read_metrics(tmp_path / "absent.json") == {}
    assert largest_drop({"a": 0.5, "b": 0.6}, {"a": 0.45, "b": 0.61}) == ("a", pytest.approx(0.05))
    assert largest_drop({"a": 0.5}, {}) == (None, None)


def test_summary_names_what_costs_twice_max_drop_and_was_missed():
    row = regression_zoo.Row("d", "e", "big", True, "passed", "missed", 0.05, "bm25", 0.04, 1.0, "")
    small = regression_zoo.Row("d", "e", "small", True, "passed", "missed", 0.001, "bm25", 0.0, 1.0, "")
    silent = regression_zoo.Row("d", "e", "order", False, "skipped", "silent", 0.0, "bm25", 0.0, 1.0, "")
    line, rbo = regression_zoo.summary([row, small, silent])
    assert rbo.startswith("  rbo@10: not measured")  # rows without a stability section
    assert "caught 0/2" in line and "flagged 0/1" in line and "silent 1" in line
    assert "0/1 caught (not: big)" in line


def test_summarize_reads_saved_rows(tmp_path: Path, capsys):
    row = regression_zoo.Row("d", "e", "big", True, "failed", "caught", 0.05, "bm25", 0.04, 1.0, "")
    saved = tmp_path / "rows.json"
    saved.write_text(json.dumps([regression_zoo.asdict(row)]))
    assert regression_zoo.main(["--summarize", str(saved)]) == 0
    assert "d on e: harmful caught 1/1" in capsys.readouterr().out


def test_only_takes_the_first_n_of_each_kind():
    picked = regression_zoo.selected(2, "embedded")
    assert [c.harmful for c in picked] == [True, True, False, False]
    turns = regression_zoo.selected(None, "elasticsearch", interleave=True)
    assert [c.harmful for c in turns[:4]] == [True, False, True, False]
    assert sorted(c.name for c in turns) == sorted(c.name for c in zoo_changes.catalogue("elasticsearch"))


def test_end_to_end_on_the_example_data(tmp_path: Path, shared: Path, capsys):
    """The zoo's own loop on 671 documents: a harmful change caught, a cosmetic one passing,
    a corpus reorder classified (silent while a corpus change skips the baseline items)."""
    names = ("bm25 on title only", "YAML keys reordered", "corpus rows reversed")
    changes = [c for c in zoo_changes.HARMFUL + zoo_changes.HARMLESS if c.name in names]
    rows = {
        r.change: r for r in regression_zoo.run_setup(tmp_path / "out", "mini", "embedded", changes, shared)
    }
    assert rows["bm25 on title only"].verdict == "caught" and rows["bm25 on title only"].cost > 0.02
    cosmetic = rows["YAML keys reordered"]  # harmless: no full-set run, the gate queries' drop only
    assert cosmetic.verdict == "ok" and cosmetic.cost is None and cosmetic.gate_drop == 0.0
    assert rows["corpus rows reversed"].verdict in ("silent", "ok")
    assert "mini on embedded: baseline written" in capsys.readouterr().out
