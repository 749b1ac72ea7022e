"""Issue #32 section 2: one guarded boundary for code and data the plugin does not own. A team's
Python function, a third-party backend package (entry point group ``pytest_retrieval.backends``,
built here as a real distribution in a temporary folder), a model callable, a service's answer,
a run file, a qrels grade, an ``.npz`` matrix: whatever they raise or return that breaks the
contract is one line naming the backend, the query and what was wrong; never a traceback, a
hang, an ended session or a silently scored empty ranking."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Dict, Iterator, List

import numpy as np
import pytest

from pytest_retrieval.backends import registry
from pytest_retrieval.backends.base import ServiceSpec
from pytest_retrieval.backends.guard import GuardedBackend, call_foreign, check_run
from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.execution.runner import run_suite
from pytest_retrieval.io.numeric import external_float
from pytest_retrieval.types import Query, Ranking

from .conftest import bounded, one_line

SUITE = """\
suite: t
judgments:
  inline:
    - {id: q1, text: "solar panels", relevant: {d1: 1}}
    - {id: q2, text: "river floods", relevant: {d2: 1}}
  documents:
    - {id: d1, text: "solar panels in winter"}
    - {id: d2, text: "river flood defences"}
latency: {enabled: false}
"""
SVC = "retrievers:\n  svc: {type: service}\nfloors:\n  svc: {ndcg@10: 0.1}\n"


def python_suite(folder: Path, function: str, extra: str = "") -> Path:
    path = folder / "retrieval_fn.yaml"
    path.write_text(SUITE + f'backend:\n  type: python\n  function: "{function}"\n{extra}' + SVC)
    return path


def error_of(path: Path, kind: type = Exception) -> str:
    with bounded(60), pytest.raises(kind) as info:
        run_suite(path)
    message = str(info.value)
    one_line(message)
    return message


# ---------------------------------------------------------------- a team's Python function

TEAM = """
import asyncio, sys

def exits(text, k, qid):
    sys.exit(3)

async def exits_async(text, k, qid):
    await asyncio.sleep(0)
    raise SystemExit("bye")

def generator_exit(text, k, qid):
    raise GeneratorExit()

def multi_line(text, k, qid):
    raise RuntimeError("first line\\nsecond line \\x1b[31mred\\r")

def huge(text, k, qid):
    return [("d1", 10 ** 400)]

def nan(text, k, qid):
    return [("d1", float("nan"))]

def one(text, k, qid):
    return [("d1", 1.0)]

def short_list(texts, k, qids):
    return [[("d1", 1.0)] for _ in texts[:-1]]

def short_map(texts, k, qids):
    return {q: [("d1", 1.0)] for q in qids[:-1]}
"""


@pytest.mark.parametrize(
    "function, extra, kind, fragments",
    [
        (
            "team:exits",
            "",
            InfrastructureError,
            ["backend.function 'team:exits' for query 'q1'", "SystemExit: 3"],
        ),
        ("team:exits_async", "", InfrastructureError, ["team:exits_async", "SystemExit: bye"]),
        ("team:generator_exit", "", InfrastructureError, ["raised GeneratorExit"]),
        (
            "team:multi_line",
            "",
            InfrastructureError,
            ["RuntimeError: first line\\nsecond line \\x1b[31mred\\r"],
        ),
        ("team:huge", "", ConfigError, ["for query 'q1'", "a 401-digit integer is too large for a float"]),
        ("team:nan", "", ConfigError, ["for query 'q1'", "has score float nan", "NaN"]),
        (
            "team:one",
            "  batch_function: team:short_list\n",
            ConfigError,
            ["one ranking per query (2", "got 1"],
        ),
        ("team:one", "  batch_function: team:short_map\n", ConfigError, ["no ranking for query 'q2'"]),
    ],
)
def test_a_team_function_that_breaks_the_contract_is_one_line(
    tmp_path: Path, function: str, extra: str, kind: type, fragments: List[str]
) -> None:
    (tmp_path / "team.py").write_text(TEAM)
    message = error_of(python_suite(tmp_path, function, extra), kind)
    one_line(message, *fragments)


def test_ctrl_c_still_stops_the_run() -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        call_foreign(interrupted, "team code")


@pytest.mark.parametrize(
    "source, fragments",
    [
        ("import sys\nsys.exit(4)\n", ["cannot import 'broken'", "SystemExit: 4"]),
        ("raise ValueError('line one\\nline two')\n", ["ValueError: line one\\nline two"]),
    ],
)
def test_a_module_that_raises_at_import_is_one_line(
    tmp_path: Path, source: str, fragments: List[str]
) -> None:
    (tmp_path / "broken.py").write_text(source)
    message = error_of(python_suite(tmp_path, "broken:search"), ConfigError)
    one_line(message, "backend.function", *fragments)


def test_two_suites_naming_the_same_module_each_run_their_own(tmp_path: Path) -> None:
    """``svc:search`` in two folders: today's second suite ran the first one's module and passed."""
    results = {}
    for name, doc in (("a", "d1"), ("b", "d2")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "svc.py").write_text(f"def search(text, k, qid):\n    return [({doc!r}, 1.0)]\n")
        results[name] = run_suite(python_suite(folder, "svc:search"))
    assert {q: r.doc_ids for q, r in results["a"].retrievers["svc"].run.items()} == {
        "q1": ["d1"],
        "q2": ["d1"],
    }
    assert {q: r.doc_ids for q, r in results["b"].retrievers["svc"].run.items()} == {
        "q1": ["d2"],
        "q2": ["d2"],
    }
    assert "svc" not in sys.modules  # the folders' modules never take the plain name


def test_a_package_beside_the_suite_keeps_its_relative_imports(tmp_path: Path) -> None:
    (tmp_path / "teampkg").mkdir()
    (tmp_path / "teampkg" / "__init__.py").write_text("")
    (tmp_path / "teampkg" / "helpers.py").write_text("DOC = 'd2'\n")
    (tmp_path / "teampkg" / "search.py").write_text(
        "from .helpers import DOC\n\ndef search(text, k, qid):\n    return [(DOC, 1.0)]\n"
    )
    result = run_suite(python_suite(tmp_path, "teampkg.search:search"))
    assert result.retrievers["svc"].run["q2"].doc_ids == ["d2"]


@pytest.mark.parametrize("name", ["json", "queue"])
def test_a_module_named_like_the_standard_library_is_said_so(tmp_path: Path, name: str) -> None:
    (tmp_path / f"{name}.py").write_text("def search(text, k, qid):\n    return []\n")
    message = error_of(python_suite(tmp_path, f"{name}:search"), ConfigError)
    one_line(
        message, "backend.function", f"{name}.py beside the suite", f"standard library's module {name!r}"
    )


# ---------------------------------------------------------------- a third-party backend package

BACKEND_MODULE = """
from pytest_retrieval.backends.base import SearchResult
from pytest_retrieval.types import Ranking


class Backend:
    name = "third"

    def __init__(self, connection, index):
        self.mode = index["options"].get("mode", "ok")

    def prepare(self, documents, doc_vectors):
        if self.mode == "exit_in_prepare":
            raise SystemExit(5)

    def search_batch(self, spec, queries, k):
        if self.mode == "short":
            queries = queries[:-1]
        if self.mode == "exit":
            raise SystemExit(3)
        score = {"nan": float("nan"), "huge": 10 ** 400}.get(self.mode, 1.0)
        ids = [7] if self.mode == "int_ids" else ["d1"]
        if self.mode == "pairs":
            return {q.qid: [("d1", 1.0)] for q in queries}
        return {q.qid: Ranking(ids, [score]) for q in queries}

    def search_one(self, spec, query, k):
        return SearchResult(Ranking(["d1"], [1.0]))


def returns_none(connection, index):
    return None


def returns_text(connection, index):
    return "not a backend"


NOT_CALLABLE = 3
"""


@pytest.fixture
def packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator:
    """``install(name, entry_points, modules)``: a distribution in a folder on ``sys.path``, with
    its ``.dist-info`` (METADATA, entry_points.txt) as pip writes it, found by
    ``importlib.metadata``; its modules are forgotten afterwards."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    written: List[str] = []

    def install(name: str, entry_points: Dict[str, str], modules: Dict[str, str]) -> None:
        info = site / f"{name}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
        lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
        (info / "entry_points.txt").write_text(f"[{registry.ENTRY_POINT_GROUP}]\n{lines}")
        for module, source in modules.items():
            (site / f"{module}.py").write_text(source)
            written.append(module)

    yield install
    for module in written:
        sys.modules.pop(module, None)


def third_party_suite(folder: Path, backend: str) -> Path:
    path = folder / "retrieval_third.yaml"
    path.write_text(SUITE + f"backend: {backend}\n" + SVC)
    return path


@pytest.mark.parametrize(
    "entry, options, kind, fragments",
    [
        ("nope_module:Backend", "", ConfigError, ["backend.type", "module 'nope_module' is not installed"]),
        ("third_mod:Absent", "", ConfigError, ["module 'third_mod' has no 'Absent'"]),
        ("third_mod:NOT_CALLABLE", "", ConfigError, ["is a int, not a callable factory"]),
        ("third_exit:Backend", "", ConfigError, ["importing it raised SystemExit: 2"]),
        ("third_mod:returns_none", "", ConfigError, ["backend 'third'", "returned None, not a backend"]),
        ("third_mod:returns_text", "", ConfigError, ["has no prepare, search_batch, search_one method"]),
        (
            "third_mod:Backend",
            "short",
            ConfigError,
            ["backend 'third' search_batch: no ranking for query 'q2'", "of the 2 asked"],
        ),
        ("third_mod:Backend", "nan", ConfigError, ["for query 'q1'", "hit 0 ('d1')", "nan is NaN"]),
        ("third_mod:Backend", "huge", ConfigError, ["a 401-digit integer is too large for a float"]),
        ("third_mod:Backend", "int_ids", ConfigError, ["hit 0 has doc id 7, expected non-empty text"]),
        ("third_mod:Backend", "pairs", ConfigError, ["for query 'q1': expected a Ranking, got list"]),
        ("third_mod:Backend", "exit", InfrastructureError, ["backend 'third' search_batch", "SystemExit: 3"]),
        (
            "third_mod:Backend",
            "exit_in_prepare",
            InfrastructureError,
            ["backend 'third' prepare", "SystemExit: 5"],
        ),
    ],
)
def test_a_third_party_backend_that_breaks_the_contract_is_one_line(
    tmp_path: Path, packages, entry: str, options: str, kind: type, fragments: List[str]
) -> None:
    packages(
        "third_backend",
        {"third": entry},
        {"third_mod": BACKEND_MODULE, "third_exit": "import sys\nsys.exit(2)\n"},
    )
    backend = "{type: third" + (f", options: {{mode: {options}}}" if options else "") + "}"
    message = error_of(third_party_suite(tmp_path, backend), kind)
    one_line(message, *fragments)


def test_a_third_party_backend_that_keeps_the_contract_runs(tmp_path: Path, packages) -> None:
    packages("third_backend", {"third": "third_mod:Backend"}, {"third_mod": BACKEND_MODULE})
    result = run_suite(third_party_suite(tmp_path, "{type: third}"))
    assert result.retrievers["svc"].run["q1"] == Ranking(["d1"], [1.0])


def test_a_package_declaring_a_built_in_name_is_ignored_by_name(tmp_path: Path, packages) -> None:
    """Decision: warn, and the built-in runs (docs/how-to/custom-backends.md says why)."""
    packages("sneaky_backend", {"embedded": "third_mod:Backend"}, {"third_mod": BACKEND_MODULE})
    with pytest.warns(registry.ShadowedBackendWarning) as caught:
        factory = registry.backend_factory("embedded")
    assert factory is registry.BUILT_IN["embedded"]
    one_line(
        str(caught[0].message), "'embedded' is built in", "'sneaky_backend'", "ignored (the built-in runs)"
    )


def test_a_name_two_packages_declare_differently_is_refused(tmp_path: Path, packages) -> None:
    packages("first_backend", {"twice": "third_mod:Backend"}, {"third_mod": BACKEND_MODULE})
    packages("second_backend", {"twice": "third_mod:returns_none"}, {})
    with pytest.raises(ConfigError) as info:
        registry.backend_factory("twice")
    one_line(str(info.value), "'twice' is declared by more than one", "'first_backend'", "'second_backend'")


def test_the_guard_checks_every_method_of_the_protocol() -> None:
    class Loose:
        def prepare(self, documents, doc_vectors):
            return None

        def search_batch(self, spec, queries, k):
            return {"q1": Ranking(["a", "a"], [1.0, 0.5])}

        def search_one(self, spec, query, k):
            return Ranking(["a"], [1.0])

        def existing_ids(self, ids):
            return [1, 2]

        def describe(self):
            return "v1"

    guarded = GuardedBackend(Loose(), "loose")
    q = [Query("q1", "a")]
    for call, fragment in (
        (lambda: guarded.search_batch(ServiceSpec(), q, 10), "document 'a' is listed twice"),
        (lambda: guarded.search_one(ServiceSpec(), q[0], 10), "expected a SearchResult, got Ranking"),
        (lambda: guarded.existing_ids(["a"]), "every id must be a string"),
        (lambda: guarded.describe(), "describe: expected a mapping, got 'v1'"),
    ):
        with pytest.raises(ConfigError) as info:
            call()
        one_line(str(info.value), "backend 'loose'", fragment)
    assert guarded.exact_knn(None, q, 3) is None and guarded.prepare_sparse is None  # not offered
    with pytest.raises(ConfigError, match="a ranking for query 'q9', which was not asked"):
        check_run({"q1": Ranking(), "q9": Ranking()}, q, 10, "x")


# ---------------------------------------------------------------- numbers from outside


@pytest.mark.parametrize(
    "value, fragment",
    [
        (10**400, "a 401-digit integer is too large for a float"),
        # repr() itself raises past 4,300 digits
        pytest.param(-(10**5000), "a 5001-digit integer is too large", id="5001-digits"),
        (float("nan"), "nan is NaN"),
        (float("inf"), "inf is infinite"),
        (True, "is a boolean"),
        (np.bool_(False), "is a boolean"),
        ("1.0", "'1.0' is not a number"),
        ([1], "list [1] is not a number"),
    ],
)
def test_the_one_number_reader_refuses_by_reason(value, fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        external_float(value)
    one_line(str(info.value), fragment)


def test_the_number_reader_reads_text_as_trec_eval_would() -> None:
    assert external_float("2.5e-3", text=True) == 0.0025
    assert external_float(np.float32(1.5)) == 1.5 and external_float(np.int64(3)) == 3.0
    assert external_float("1e400", text=True, infinite=True) == float("inf")  # a run file (atof)
    for text, fragment in (("1_0", "not a decimal"), ("\u0661", "not a decimal"), ("9" * 400, "400-digit")):
        with pytest.raises(ValueError, match=fragment):
            external_float(text, text=True)


@pytest.fixture
def service() -> Iterator:
    from ..backends.http.service import SearchService
    from ..backends.http.test_backend import DOCS

    with SearchService(DOCS) as s:
        yield s


@pytest.mark.parametrize(
    "answer, took, fragment",
    [
        ({"results": [{"doc": {"id": "d1"}, "score": 10**400}]}, None, "a 401-digit integer is too large"),
        ({"took": 10**400, "results": []}, "took", "not a finite number of milliseconds"),
    ],
)
def test_a_400_digit_number_in_a_service_answer_is_one_line(service, answer, took, fragment: str) -> None:
    from ..backends.http.test_backend import backend, failure

    service.always = ("json", answer)
    message = failure(backend(service, took=took))
    one_line(message, "(query 'q1')", fragment)


def test_a_grade_whose_exp_gain_overflows_is_refused_by_name(tmp_path: Path, capsys) -> None:
    """2^1100 - 1 is no float: nDCG was NaN, and the command exited 0."""
    from pytest_retrieval.cli.app import main

    (tmp_path / "q.qrels").write_text("q1 0 d1 1100\nq1 0 d2 1\n")
    (tmp_path / "r.trec").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    assert main(["evaluate", str(tmp_path / "q.qrels"), str(tmp_path / "r.trec"), "-m", "ndcg@10"]) != 0
    err = capsys.readouterr().err
    one_line(err, "relevance grade 1100 gains 2^1100 - 1 under the exp profile", "trec profile")
    assert main(["evaluate", "--profile", "trec", str(tmp_path / "q.qrels"), str(tmp_path / "r.trec")]) == 0

    path = tmp_path / "s.yaml"
    path.write_text(
        SUITE.replace("judgments:\n", "judgments:\n  grades: {max: 2000}\n").replace("{d1: 1}", "{d1: 1100}")
        + "retrievers:\n  b: {type: bm25}\nfloors:\n  b: {ndcg@10: 0.1}\n"
    )
    one_line(error_of(path, ConfigError), "judgments.grades", "relevance grade 1100 gains 2^1100 - 1")


# ---------------------------------------------------------------- sparse vectors and models


def _npz(path: Path, **arrays) -> Path:
    base = {
        "format": np.array(b"csr"),
        "shape": np.array([2, 3]),
        "data": np.array([1.0, 2.0, 3.0]),
        "indices": np.array([0, 2, 1], dtype=np.int32),
        "indptr": np.array([0, 2, 3], dtype=np.int32),
    }
    base.update(arrays)
    np.savez(path, **base)
    return path


@pytest.mark.parametrize(
    "arrays, fragment",
    [
        ({"indices": np.array([0, 7, 1], dtype=np.int32)}, "'indices' holds 7, outside the matrix's 0..2"),
        ({"indices": np.array([0, -1, 1], dtype=np.int32)}, "'indices' holds -1"),
        ({"indptr": np.array([0, 3, 2], dtype=np.int32)}, "'indptr' decreases at entry 2 (3 -> 2)"),
        ({"indptr": np.array([0, 3], dtype=np.int32)}, "'indptr' has 2 entries for 2 rows"),
        ({"indptr": np.array([1, 2, 3], dtype=np.int32)}, "'indptr' starts at 1"),
        ({"indptr": np.array([0, 2, 2], dtype=np.int32)}, "'indptr' ends at 2 but 'data' holds 3"),
        ({"shape": np.array([2, 3, 1])}, "'shape' is [2, 3, 1]"),
        ({"data": np.array([1.0, np.nan, 3.0])}, "'data' holds nan"),
        ({"data": np.array(["a", "b", "c"])}, "not numbers"),
        ({"shape": np.array([3, 3])}, "'indptr' has 3 entries for 3 rows"),
    ],
)
def test_a_corrupt_npz_is_one_line_per_defect(tmp_path: Path, arrays, fragment: str) -> None:
    from pytest_retrieval.models.sparse.precomputed import load_csr

    path = _npz(tmp_path / "docs.npz", **arrays)
    with pytest.raises(ConfigError) as info:
        load_csr(path)
    one_line(str(info.value), "docs.npz", fragment)


def _sparse_files(tmp_path: Path, vocabulary: str, name: str = "vocab.txt", ids: str = "d1\nd2\n") -> Path:
    _npz(tmp_path / "docs.npz")
    (tmp_path / name).write_text(vocabulary)
    (tmp_path / "ids.txt").write_text(ids)
    return tmp_path


@pytest.mark.parametrize(
    "vocabulary, name, ids, fragment",
    [
        ("a\nb\na\n", "vocab.txt", "d1\nd2\n", "term 'a' names columns 0 and 2"),
        ("a\n\nb\nc\n", "vocab.txt", "d1\nd2\n", "vocab.txt:2: line 2 is blank"),
        (json.dumps({"a": 0, "b": 2, "c": 3}), "vocab.json", "d1\nd2\n", "column 1 has no term"),
        (json.dumps({"a": 0, "b": 0, "c": 2}), "vocab.json", "d1\nd2\n", "both name column 0"),
        ("a\nb\nc\nd\n", "vocab.txt", "d1\nd2\n", "the matrix has 3 columns but"),
        ("a\nb\nc\n", "vocab.txt", "d1\n\nd2\n", "ids.txt:2: line 2 is blank"),
        ("a\nb\nc\n", "vocab.txt", "d1\nd2\nd3\n", "2 matrix rows but 3 ids"),
    ],
)
def test_a_vocabulary_or_ids_that_do_not_fit_the_matrix_is_one_line(
    tmp_path: Path, vocabulary: str, name: str, ids: str, fragment: str
) -> None:
    from pytest_retrieval.models.sparse.precomputed import PrecomputedSparseEncoder

    folder = _sparse_files(tmp_path, vocabulary, name, ids)
    encoder = PrecomputedSparseEncoder(
        documents=folder / "docs.npz", document_ids=folder / "ids.txt", vocabulary=folder / name
    )
    with pytest.raises(ConfigError) as info:
        encoder.encode_documents(["d1"], ["x"])
    one_line(str(info.value), fragment)


@pytest.mark.parametrize(
    "vector, fragment",
    [
        ({"solar": float("nan")}, "nan is NaN"),
        ({"solar": 10**400}, "a 401-digit integer is too large for a float"),
        ({101: 0.5}, "term 101 is a int, not text"),
        ({b"solar": 0.5}, "is a bytes, not text"),
    ],
)
def test_a_sparse_vector_from_a_model_is_checked(vector, fragment: str) -> None:
    from pytest_retrieval.sparse import check_vectors

    with pytest.raises(ConfigError) as info:
        check_vectors(["d1"], [vector], "document", "callable-sparse:enc")
    one_line(str(info.value), "document 'd1'", fragment)


def test_nan_logits_of_an_onnx_sparse_model_are_an_error(tmp_path: Path) -> None:
    # the SPLADE pooling shared by the onnx and transformers encoders checks the logits
    from pytest_retrieval.models.sparse.splade import splade_max

    logits = np.array([[[np.nan, 1.0]]], dtype=np.float32)
    with pytest.raises(ConfigError) as info:
        splade_max(logits, np.ones((1, 1), dtype=np.int64), 2, str(tmp_path / "model.onnx"))
    one_line(str(info.value), "model.onnx", "NaN logits")


def test_a_callable_sparse_encoder_that_exits_is_one_line(tmp_path: Path) -> None:
    from pytest_retrieval.models.sparse.callables import CallableSparseEncoder

    (tmp_path / "enc.py").write_text(
        textwrap.dedent(
            """\
            import sys
            def encode(texts):
                sys.exit("model gone")
            """
        )
    )
    encoder = CallableSparseEncoder("enc:encode", search_path=tmp_path)
    with pytest.raises(InfrastructureError) as info:
        encoder.encode_documents(["d1"], ["text"])
    one_line(str(info.value), "callable sparse encoder 'enc:encode' raised SystemExit: model gone")
