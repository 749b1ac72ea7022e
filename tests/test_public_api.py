"""The package's public API: every name in ``__all__`` resolves, and importing stays cheap."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest_retrieval

EXAMPLE = Path(__file__).resolve().parents[1] / "example_suite" / "retrieval_scifact_mini.yaml"


def test_every_public_name_resolves_and_is_documented():
    for name in pytest_retrieval.__all__:
        value = getattr(pytest_retrieval, name)
        if getattr(value, "__module__", "").startswith("pytest_retrieval"):  # not the Run alias
            assert value.__doc__, f"{name} has no docstring"
    assert "SuiteRunner" in dir(pytest_retrieval)


def test_import_does_not_load_heavy_libraries():
    code = "import sys, pytest_retrieval; print(sorted(m for m in ('numpy', 'bm25s', 'pydantic', 'yaml') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_run_suite_then_evaluate_agree():
    result = pytest_retrieval.run_suite(EXAMPLE)
    rrf = result.retrievers["rrf"]
    again = pytest_retrieval.evaluate(result.judgments.qrels, rrf.run, ["ndcg@10"], ties="engine")
    assert again.aggregate["ndcg@10"] == result.value("rrf", "ndcg@10")


def test_all_matches_the_lazy_table():
    assert sorted(pytest_retrieval.__all__) == sorted([*pytest_retrieval._EXPORTS, "__version__"])


def test_backend_is_a_public_protocol():
    from typing import Protocol

    from pytest_retrieval.backends.embedded.backend import EmbeddedBackend

    assert Protocol in pytest_retrieval.Backend.__mro__
    assert isinstance(EmbeddedBackend(), pytest_retrieval.Backend)
