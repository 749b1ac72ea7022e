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


def test_the_in_place_walk_of_a_decoded_document_matches_the_copying_one() -> None:
    import json

    from pytest_retrieval.reports.paths import relative_in_place

    root = Path("/ci/checkout")
    doc = {
        "file": "/ci/checkout/a.yaml",
        "/ci/checkout/key": "keys stay",
        "n": [1, 2.5, None, True, "/ci/checkout/b", ["x /ci/checkout/c", {"d": "-/ci/checkout/e"}]],
        "text": 'line\n/ci/checkout/f and "/ci/checkout/g" and …/ci/checkout/h and é/ci/checkout/i',
        "per_query": {f"q{i}": {"ndcg@10": i / 7, "id": f"/ci/checkout/{i}"} for i in range(50)},
    }
    decoded = json.loads(json.dumps(doc))
    expected = relative_to_root(decoded, root)
    assert relative_in_place(decoded, root) is decoded
    assert json.dumps(decoded) == json.dumps(expected)
    assert relative_in_place("/ci/checkout/x", root) == "x"
    assert relative_in_place({"a": "/etc/x"}, Path("/")) == {"a": "/etc/x"}


def test_the_text_pass_over_the_json_matches_the_walk_or_declines() -> None:
    import json

    from pytest_retrieval.reports.paths import relative_json

    root = Path("/ci/checkout")
    plain = {
        "file": "/ci/checkout/a.yaml",
        "n": [1, 2.5, None, "/ci/checkout/b", ["x /ci/checkout/c", {"d": "-/ci/checkout/e"}]],
        "text": 'see "/ci/checkout/g" and \\\\/ci/checkout/j, (/ci/checkout2/k',
    }
    text = json.dumps(plain)
    assert json.loads(relative_json(text, root)) == relative_to_root(plain, root)
    # cases the text cannot be sure of: a key, after an escaped newline, after an escaped letter
    for odd in (
        {"/ci/checkout/key": 1},
        {"a": "line\n/ci/checkout/f"},
        {"a": "x…/ci/checkout/h"},
        {"a": "é/ci/checkout/i"},
    ):
        assert relative_json(json.dumps(odd), root) is None
    assert relative_json(json.dumps(plain), Path("/")) == json.dumps(plain)
    assert relative_json(json.dumps(plain), Path("/ci/chéckout")) is None
