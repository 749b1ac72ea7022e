"""The Quepid case and the ESCI judgment list, imported, run as suites on the embedded engine
(issue #34, "Done when"). Their documents are product ids without texts here, so the test builds
a small corpus for those ids: a document graded g for a query holds that query's text g times
(grade 0: an unrelated filler), so BM25 ranks the better-graded documents first and the gate
checks the imported judgments, ids and grade map end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List

import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.execution.runner import SuiteRunner
from pytest_retrieval.interchange.files import read_folder

from .conftest import cli

SUITE = """\
suite: {name}
judgments:
  queries: {folder}/queries.jsonl
  qrels: {folder}/qrels.tsv
  corpus: corpus.jsonl
  grades: {grades}
latency:
  warmup: 0
  repetitions: 1
retrievers:
  bm25:
    type: bm25
    fields: [text]
floors:
  bm25:
    ndcg@10: 0.8
"""


def corpus_for(folder: Path, out: Path) -> int:
    """A document per judged id: each query it is graded g > 0 for, g times; else a filler."""
    js = read_folder(folder)
    texts: Dict[str, List[str]] = {}
    for qid, docs in js.qrels.items():
        for did, grade in docs.items():
            texts.setdefault(did, []).extend([js.queries[qid]] * min(grade, 3))
    with open(out, "w", encoding="utf-8") as fh:
        for did, parts in texts.items():
            fh.write(json.dumps({"_id": did, "text": " ".join(parts) or f"filler item {did}"}) + "\n")
    return len(texts)


@pytest.mark.parametrize(
    "name, fmt, sample, grades",
    [
        ("quepid_case", "quepid", "quepid/haystack_rating_party_case.json", "{min: 0, max: 3}"),
        # ESCI's 0/1/10/100 (irrelevant, complement, substitute, exact) through judgments.grades
        (
            "esci",
            "srw",
            "opensearch-srw/test_data-esci_esci_us_judgments.json",
            "{map: {10: 2, 100: 3}, max: 3}",
        ),
    ],
)
def test_an_imported_judgment_set_runs_as_a_suite(
    data: Path, tmp_path: Path, name: str, fmt: str, sample: str, grades: str
) -> None:
    assert cli("judge", "import", "--from", fmt, data / sample, "--out", tmp_path / "j") == 0
    n_docs = corpus_for(tmp_path / "j", tmp_path / "corpus.jsonl")
    path = tmp_path / f"retrieval_{name}.yaml"
    path.write_text(SUITE.format(name=name, folder="j", grades=grades))
    result = SuiteRunner(load_suite(path)).run()
    js = read_folder(tmp_path / "j")
    assert result.n_queries("bm25") == sum(1 for d in js.qrels.values() if any(g > 0 for g in d.values()))
    assert result.value("bm25", "ndcg@10") >= 0.8, n_docs


def test_esci_ratings_without_a_map_are_refused_by_the_suite(data: Path, tmp_path: Path) -> None:
    from pytest_retrieval.errors import ConfigError
    from pytest_retrieval.execution.plan import load_judgments

    sample = data / "opensearch-srw/test_data-esci_esci_us_judgments.json"
    assert cli("judge", "import", "--from", "srw", sample, "--out", tmp_path / "j") == 0
    path = tmp_path / "retrieval_esci.yaml"
    path.write_text(
        SUITE.format(name="esci", folder="j", grades="{max: 3}").replace("  corpus: corpus.jsonl\n", "")
    )
    with pytest.raises(ConfigError) as err:
        load_judgments(load_suite(path))
    assert "qrels.tsv:" in str(err.value) and "relevance grade 100 outside the allowed range 0..3" in str(
        err.value
    )
