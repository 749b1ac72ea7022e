"""Paths under the rootdir read as pytest's node ids, in the reports and in the terminal."""

from __future__ import annotations

from pathlib import Path

from pytest_retrieval.reports.paths import relative_text, relative_to_root


def test_a_path_under_the_rootdir_loses_the_rootdir_where_a_path_starts() -> None:
    root = Path("/ci/checkout")
    line = (
        "floor set at /ci/checkout/search/retrieval_shop.yaml:20 (see /ci/checkout2/x, /other/ci/checkout/y)"
    )
    assert relative_text(line, root) == (
        "floor set at search/retrieval_shop.yaml:20 (see /ci/checkout2/x, /other/ci/checkout/y)"
    )
    assert relative_text("no baseline at /ci/checkout/a.baseline.json: floors only", root) == (
        "no baseline at a.baseline.json: floors only"
    )
    assert relative_to_root({"file": "/ci/checkout/a.yaml", "n": [1, "/ci/checkout/b"]}, root) == {
        "file": "a.yaml",
        "n": [1, "b"],
    }


def test_a_rootdir_of_slash_or_none_leaves_the_text_alone() -> None:
    assert relative_text("at /etc/x.yaml", Path("/")) == "at /etc/x.yaml"
    assert relative_text("at /etc/x.yaml", None) == "at /etc/x.yaml"
