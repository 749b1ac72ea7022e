"""Every real export of ../shared/data/interchange imports (issue #34, "Done when"), with the
figures SOURCE.txt gives for it, and every format's round trip (import, export, import) gives
identical judgments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.interchange import registry
from pytest_retrieval.interchange.files import read_folder
from pytest_retrieval.interchange.model import ImportOptions
from pytest_retrieval.io.trec import load_trec_run

from .conftest import cli

# ImportJudgments.json rates 0.0-1.0 in tenths: mapped onto 0-3
TENTHS = "0.0:0,0.4:1,0.6:1,0.7:2,0.9:3,1.0:3"

# file -> (format, extra import options, queries, judgments, run queries)
SAMPLES: Dict[str, Tuple[str, List[str], int, int, int]] = {
    "quepid/haystack_rating_party_case.json": ("quepid", [], 137, 1679, 0),
    "quepid/DERIVED_haystack_case_basic.csv": ("quepid", [], 137, 1679, 0),
    "quepid/haystack_rating_party_snapshot_no-vector.json.zip": ("quepid", [], 135, 1659, 135),
    "quepid/static_queryset.csv": ("quepid", [], 1, 0, 1),
    "quepid/mock_rre_json.json": ("rre", [], 2, 6, 0),
    # "fender"/"Fender", "jazz"/"Jazz": one query each (ids fold case, as judge clicks' do)
    "rre/ratings_example.rre-core-test.json": ("rre", [], 4, 6, 0),
    "rre/ratings_example.solr-archetype.json": ("rre", ["--skip-placeholders"], 4, 6, 0),
    "opensearch-srw/test_data-esci_esci_us_judgments.json": ("srw", [], 150, 6678, 0),
    "opensearch-srw/test_data-esci_esci_us_queryset.json": ("srw", [], 150, 0, 0),
    "opensearch-srw/test_resources_judgment_ImportJudgments.json": ("srw", ["--grade-map", TENTHS], 4, 40, 0),
    "opensearch-srw/test_resources_queryset_CreateQuerySet.json": ("srw", [], 8, 0, 0),
    "elasticsearch-rank-eval/rank_eval_request.from_10_basic_yml.json": ("rank-eval", [], 2, 4, 0),
    "elasticsearch-rank-eval/rank_eval_templated_request.from_docs.json": ("rank-eval", [], 1, 1, 0),
}
# what is in the folder but is no judgments: provenance, checksums, a README, index mappings
NOT_JUDGMENTS = {"SOURCE.txt", "SHA256SUMS", "test_data-esci_README.md"}
MAPPINGS = (
    "opensearch-srw/main_resources_mappings_judgment.json",
    "opensearch-srw/main_resources_mappings_queryset.json",
)


def test_the_table_covers_every_sample_file(data: Path) -> None:
    files = {str(p.relative_to(data)) for p in data.rglob("*") if p.is_file() and p.name not in NOT_JUDGMENTS}
    assert files == set(SAMPLES) | set(MAPPINGS)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_sample_imports_with_its_figures(data: Path, tmp_path: Path, name: str) -> None:
    fmt, extra, n_queries, n_judgments, n_run = SAMPLES[name]
    out = tmp_path / "j"
    assert cli("judge", "import", "--from", fmt, data / name, "--out", out, *extra) == 0
    js = read_folder(out)
    assert len(js.queries) == n_queries
    assert sum(len(d) for d in js.qrels.values()) == n_judgments
    if n_run:
        assert len(load_trec_run(out / "run.trec")) == n_run
    else:
        assert not (out / "run.trec").exists()


@pytest.mark.parametrize("name", MAPPINGS)
def test_an_index_mapping_is_refused_in_one_line(data: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="an index mapping, not a judgment list"):
        registry.read("srw", data / name)


def test_the_same_query_text_twice_is_one_query(data: Path) -> None:
    # ImportJudgments.json lists "metal frame", "steel", "keyboard", "iphone" twice each
    js = registry.read(
        "srw",
        data / "opensearch-srw/test_resources_judgment_ImportJudgments.json",
        ImportOptions(rating_map={0.0: 0, 0.4: 1, 0.6: 1, 0.7: 2, 0.9: 3, 1.0: 3}),
    )
    assert sorted(js.queries.values()) == ["iphone", "keyboard", "metal frame", "steel"]


def test_query_ids_are_stable_and_documented(data: Path) -> None:
    js = registry.read("quepid", data / "quepid/haystack_rating_party_case.json")
    # judge clicks' rule: q + the first 12 hex digits of SHA-1 of the NFKC, case-folded text
    assert js.queries["q72ae13f85e6b"] == "120v power supply"
    from pytest_retrieval.judge.clicks import stable_query_id

    assert stable_query_id("120V  Power Supply") == "q72ae13f85e6b"
    csv = registry.read("quepid", data / "quepid/DERIVED_haystack_case_basic.csv")
    assert csv.same(js)  # the case JSON and its CSV rendering: one judgment set


# ------------------------------------------------------------------ round trips

# (sample, format, export file name, extra import options)
ROUND_TRIPS = [
    ("quepid/haystack_rating_party_case.json", "quepid", "case.csv", []),
    ("quepid/haystack_rating_party_case.json", "quepid", "case.json", []),
    ("rre/ratings_example.rre-core-test.json", "rre", "ratings.json", []),
    ("quepid/mock_rre_json.json", "rre", "ratings.json", []),
    ("opensearch-srw/test_data-esci_esci_us_judgments.json", "srw", "judgments.json", []),
    (
        "opensearch-srw/test_resources_judgment_ImportJudgments.json",
        "srw",
        "judgments.json",
        ["--grade-map", TENTHS],
    ),
    ("elasticsearch-rank-eval/rank_eval_request.from_10_basic_yml.json", "rank-eval", "body.json", []),
    ("elasticsearch-rank-eval/rank_eval_request.from_10_basic_yml.json", "rank-eval", "devtools.txt", []),
]


@pytest.mark.parametrize(
    "name, fmt, exported, extra", ROUND_TRIPS, ids=[f"{r[1]}-{r[2]}" for r in ROUND_TRIPS]
)
def test_import_export_import_gives_identical_judgments(
    data: Path, tmp_path: Path, name: str, fmt: str, exported: str, extra: List[str]
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert cli("judge", "import", "--from", fmt, data / name, "--out", first, *extra) == 0
    export = ["--index", "foo"] if fmt == "rank-eval" else []
    assert cli("judge", "export", first, "--to", fmt, "--out", tmp_path / exported, *export) == 0
    assert cli("judge", "import", "--from", fmt, tmp_path / exported, "--out", second) == 0
    a, b = read_folder(first), read_folder(second)
    assert a.same(b)
    assert a.qrels and a.queries


def test_a_query_set_round_trips_with_its_reference_answers(tmp_path: Path) -> None:
    qs = tmp_path / "qs.json"
    qs.write_text(
        json.dumps(
            {
                "name": "s",
                "sampling": "manual",
                "querySetQueries": [{"queryText": "a b", "referenceAnswer": "ref"}, {"queryText": "c"}],
            }
        )
    )
    rated = tmp_path / "j.json"
    rated.write_text(
        json.dumps({"judgmentRatings": [{"query": "a b", "ratings": [{"docId": "d1", "rating": 1}]}]})
    )
    assert cli("judge", "import", "--from", "srw", qs, "--out", tmp_path / "f") == 0
    assert (
        cli(
            "judge",
            "export",
            tmp_path / "f",
            "--to",
            "srw",
            "--out",
            tmp_path / "x.json",
            "--query-set",
            tmp_path / "y.json",
        )
        == 0
    )
    assert cli("judge", "import", "--from", "srw", tmp_path / "y.json", "--out", tmp_path / "g") == 0
    a, b = read_folder(tmp_path / "f"), read_folder(tmp_path / "g")
    assert a.same(b) and a.references == b.references and list(a.references.values()) == ["ref"]
