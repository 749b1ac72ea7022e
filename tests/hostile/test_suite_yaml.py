"""Hostile suite files: each is one clear line naming the file and the key (or line), or it
loads exactly as written. Never a traceback, never a floor that always passes, never a hang."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError

from .conftest import BASE, FLOORS, HOSTILE_PASSWORDS, bounded, one_line

F = "floors.bm25.ndcg@10"


def floor(value: str) -> str:
    return BASE + f"floors:\n  bm25:\n    ndcg@10: {value}\n"


def with_floors(block: str) -> str:
    return BASE + "floors:\n" + block


# (id, suite text, fragments of the one-line error)
ERRORS = [
    # --- item 2: a floor is a finite number written as a number
    *[
        (f"floor {v}", floor(v), [F, "finite number"])
        for v in ("no", "yes", "off", "on", "false", "true", "NO", "Off", "y: 1")
        if ":" not in v
    ],
    *[(f"floor {v}", floor(v), [F, "finite number"]) for v in (".nan", ".NaN", ".inf", "-.inf", ".Inf")],
    *[
        (f"floor string {v}", floor(v), [F, "finite number"])
        for v in ("'0.5'", '"0.5"', "high", "0.5x", "''")
    ],
    ("floor null", floor("null"), [F]),
    ("floor tilde", floor("~"), [F]),
    ("floor list", floor("[0.5]"), [F]),
    ("floor mapping", floor("{a: 1}"), [F]),
    ("floor above 1", floor("1.5"), [F, "can never be met"]),
    ("floor below 0", floor("-0.1"), [F, "below 0"]),
    ("floor huge", floor("1.0e400"), [F, "finite number"]),
    ("floor interpolated", floor("${HOSTILE_FLOOR}"), [F, "${HOSTILE_FLOOR}"]),
    (
        "same floor in two cases",
        with_floors("  bm25:\n    ndcg@10: 0.1\n    NDCG@10: 0.9\n"),
        ["NDCG@10", "same floor"],
    ),
    (
        "same stratum floor in two cases",
        with_floors("  bm25:\n    ndcg@10[a]: 0.1\n    NDCG@10[a]: 0.9\n"),
        ["same floor"],
    ),
    ("unknown metric", with_floors("  bm25:\n    ndgc@10: 0.1\n"), ["floors.bm25.ndgc@10"]),
    ("cutoff zero", with_floors("  bm25:\n    ndcg@0: 0.1\n"), ["floors.bm25.ndcg@0"]),
    ("cutoff negative", with_floors("  bm25:\n    ndcg@-1: 0.1\n"), ["floors.bm25.ndcg@-1"]),
    ("empty stratum", with_floors("  bm25:\n    ndcg@10[]: 0.1\n"), ["empty stratum"]),
    ("latency zero", with_floors("  bm25:\n    p95_ms: 0\n"), ["floors.bm25.p95_ms", "> 0 ms"]),
    ("latency negative", with_floors("  bm25:\n    p95_ms: -5\n"), ["floors.bm25.p95_ms"]),
    ("latency nan", with_floors("  bm25:\n    p95_ms: .nan\n"), ["floors.bm25.p95_ms", "finite number"]),
    ("latency boolean", with_floors("  bm25:\n    p95_ms: yes\n"), ["floors.bm25.p95_ms", "booleans"]),
    ("latency inf", with_floors("  bm25:\n    p99_ms: .inf\n"), ["floors.bm25.p99_ms", "finite number"]),
    ("latency per stratum", with_floors("  bm25:\n    p95_ms[a]: 10\n"), ["whole suite"]),
    ("lift on a leaf", with_floors("  bm25:\n    lift@ndcg@10: 0.01\n"), ["leaf"]),
    ("lift above 1", with_floors("  rrf:\n    lift@ndcg@10: 2\n"), ["never be met"]),
    ("abstention without unanswerable", with_floors("  bm25:\n    abstention: 0.5\n"), ["unanswerable"]),
    (
        "floor for unknown retriever",
        with_floors("  bm2:\n    ndcg@10: 0.1\n"),
        ["floors.bm2", "did you mean"],
    ),
    ("empty floor block", with_floors("  bm25: {}\n"), ["floors.bm25", "no metric floors"]),
    ("no floors", BASE, ["no floors"]),
    ("ratio without baseline", with_floors("  bm25:\n    p95_ratio: 1.2\n"), ["latency.baseline"]),
    # regression max_drop: the same number rule
    *[
        (
            f"max_drop {v}",
            BASE + FLOORS + f"regression:\n  max_drop: {{ndcg@10: {v}}}\n",
            ["regression.max_drop.ndcg@10"],
        )
        for v in ("yes", "no", ".nan", ".inf", "-0.1", "2", "'0.1'", "null")
    ],
    (
        "max_drop same metric twice",
        BASE + FLOORS + "regression:\n  max_drop: {ndcg@10: 0.01, NDCG@10: 0.5}\n",
        ["same metric"],
    ),
    # regression.reference (issue #37): the same number rule for max_total_drop, a named run
    *[
        (
            f"max_total_drop {v}",
            BASE
            + FLOORS
            + f"regression:\n  max_drop: {{ndcg@10: 0.01}}\n  reference: {{run: v1, max_total_drop: {{ndcg@10: {v}}}}}\n",
            ["regression.reference.max_total_drop.ndcg@10"],
        )
        for v in ("yes", ".nan", ".inf", "-0.1", "2", "'0.1'", "null")
    ],
    (
        "max_total_drop same metric twice",
        BASE
        + FLOORS
        + "regression:\n  max_drop: {ndcg@10: 0.01}\n  reference: {run: v1, max_total_drop: {ndcg@10: 0.01, NDCG@10: 0.5}}\n",
        ["regression.reference.max_total_drop", "same metric"],
    ),
    (
        "max_total_drop unknown metric",
        BASE
        + FLOORS
        + "regression:\n  max_drop: {ndcg@10: 0.01}\n  reference: {run: v1, max_total_drop: {ndgc@10: 0.01}}\n",
        ["regression.reference.max_total_drop.ndgc@10"],
    ),
    (
        "max_total_drop empty",
        BASE
        + FLOORS
        + "regression:\n  max_drop: {ndcg@10: 0.01}\n  reference: {run: v1, max_total_drop: {}}\n",
        ["regression.reference.max_total_drop"],
    ),
    (
        "reference without max_total_drop",
        BASE + FLOORS + "regression:\n  max_drop: {ndcg@10: 0.01}\n  reference: {run: v1}\n",
        ["regression.reference", "missing required key 'max_total_drop'"],
    ),
    *[
        (
            f"reference run {name}",
            BASE
            + FLOORS
            + f"regression:\n  max_drop: {{ndcg@10: 0.01}}\n  reference: {{run: {v}, max_total_drop: {{ndcg@10: 0.02}}}}\n",
            ["regression.reference.run"],
        )
        for name, v in (
            ("empty", "''"),
            ("blank", "'  '"),
            ("control", '"v1\\u202e"'),
            ("number", "1"),
            ("list", "[v1]"),
        )
    ],
    (
        "reference allow_partial a string",
        BASE
        + FLOORS
        + "regression:\n  max_drop: {ndcg@10: 0.01}\n  reference: {run: v1, allow_partial: 'true', max_total_drop: {ndcg@10: 0.02}}\n",
        ["regression.reference.allow_partial"],
    ),
    (
        "reference unknown key",
        BASE
        + FLOORS
        + "regression:\n  max_drop: {ndcg@10: 0.01}\n  reference: {run: v1, max_drop: {ndcg@10: 0.02}}\n",
        ["regression.reference"],
    ),
    # other numbers of the schema
    ("depth zero", BASE + FLOORS + "evaluation:\n  depth: 0\n", ["evaluation.depth"]),
    ("depth boolean-ish", BASE + FLOORS + "evaluation:\n  depth: ten\n", ["evaluation.depth"]),
    ("depth nan", BASE + FLOORS + "evaluation:\n  depth: .nan\n", ["evaluation.depth"]),
    ("confidence 1", BASE + FLOORS + "latency:\n  confidence: 1\n", ["duplicate key"]),
    (
        "rank constant zero",
        BASE.replace("of: [bm25, text]", "of: [bm25, text]\n    rank_constant: 0") + FLOORS,
        ["retrievers.rrf.rank_constant"],
    ),
    (
        "rank constant string",
        BASE.replace("of: [bm25, text]", "of: [bm25, text]\n    rank_constant: sixty") + FLOORS,
        ["retrievers.rrf.rank_constant"],
    ),
    (
        "window negative",
        BASE.replace("of: [bm25, text]", "of: [bm25, text]\n    window: -1") + FLOORS,
        ["retrievers.rrf.window"],
    ),
    (
        "fusion of itself",
        BASE.replace("of: [bm25, text]", "of: [rrf, text]") + FLOORS,
        ["retrievers.rrf.of[0]"],
    ),
    (
        "fusion of unknown",
        BASE.replace("of: [bm25, text]", "of: [bm24, text]") + FLOORS,
        ["retrievers.rrf.of[0]", "did you mean"],
    ),
    (
        "fusion same twice",
        BASE.replace("of: [bm25, text]", "of: [bm25, bm25]") + FLOORS,
        ["retrievers.rrf.of"],
    ),
    (
        "boost not a number",
        BASE.replace("fields: [text]", "fields: [text^x]") + FLOORS,
        ["retrievers.text.fields[0]"],
    ),
    (
        "boost negative",
        BASE.replace("fields: [text]", "fields: [text^-1]") + FLOORS,
        ["retrievers.text.fields[0]"],
    ),
    (
        "unknown retriever type",
        BASE.replace("type: bm25\n  text", "type: bm26\n  text") + FLOORS,
        ["retrievers.bm25"],
    ),
    ("unknown top-level key", BASE + FLOORS + "florrs: {}\n", ["unknown key 'florrs'", "did you mean"]),
    (
        "request timeout nan",
        BASE + FLOORS + "backend:\n  connection:\n    request_timeout: .nan\n",
        ["backend.connection.request_timeout"],
    ),
    (
        "max retries negative",
        BASE + FLOORS + "backend:\n  connection:\n    max_retries: -1\n",
        ["backend.connection.max_retries"],
    ),
    (
        "hosts not a list",
        BASE + FLOORS + "backend:\n  connection:\n    hosts: {a: 1}\n",
        ["backend.connection.hosts"],
    ),
    (
        "relevance threshold zero",
        BASE.replace("judgments:\n", "judgments:\n  relevance_threshold: 0\n") + FLOORS,
        ["judgments.relevance_threshold"],
    ),
    # YAML structure
    ("invalid YAML", "suite: t\n  bad: [1,\n", ["retrieval_x.yaml", "invalid YAML"]),
    ("tab indentation", "suite: t\n\tjudgments: {}\n", ["invalid YAML"]),
    ("top-level list", "- a\n- b\n", ["YAML mapping"]),
    ("top-level scalar", "just text\n", ["YAML mapping"]),
    ("empty file", "", ["YAML mapping"]),
    ("only a comment", "# nothing\n", ["YAML mapping"]),
    ("duplicate key", BASE + FLOORS + "suite: u\n", ["duplicate key 'suite'"]),
    ("merge key", "a: &x {b: 1}\nc:\n  <<: *x\n", ["merge keys"]),
    ("list as key", "? [a, b]\n: 1\n", ["mapping key must be a scalar"]),
    ("python tag", "suite: !!python/object:os.system {}\n", ["suite", "not supported"]),
    ("custom tag", "suite: !secret x\n", ["suite", "not supported"]),
    ("undefined alias", "suite: *nope\n", ["invalid YAML"]),
    ("recursive alias", "a: &x [1, *x]\n", ["cycle"]),
    ("recursive mapping alias", "a: &x {b: *x}\n", ["cycle"]),
    (
        "alias bomb",
        "a: &a [x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
        ),
        ["alias bomb"],
    ),
    ("deep nesting", "a: " + "[" * 5000 + "]" * 5000 + "\n", ["retrieval_x.yaml"]),
    (
        "unset variable",
        BASE.replace("suite: t", "suite: ${HOSTILE_SURELY_UNSET}") + FLOORS,
        ["suite", "HOSTILE_SURELY_UNSET is not set"],
    ),
    ("include missing", "include: nope.yaml\n" + BASE + FLOORS, ["include[0]", "nope.yaml"]),
    ("include not a path", "include: {a: 1}\n" + BASE + FLOORS, ["include"]),
    ("include itself", "include: retrieval_x.yaml\n" + BASE + FLOORS, ["include cycle"]),
    ("include device", "include: /dev/zero\n" + BASE + FLOORS, ["/dev/zero", "not a regular file"]),
    ("include directory", "include: .\n" + BASE + FLOORS, ["a directory"]),
    ("include a list file", "include: list.yaml\n" + BASE + FLOORS, ["list.yaml", "YAML mapping"]),
    ("NUL byte", "suite: t\x00\n", ["retrieval_x.yaml"]),
    (
        "judgments missing",
        BASE.split("judgments:")[0] + "retrievers:\n  bm25:\n    type: bm25\n" + FLOORS,
        ["judgments"],
    ),
    (
        "qrels without queries",
        BASE.replace("judgments:\n", "judgments:\n  qrels: q.trec\n") + FLOORS,
        ["judgments.qrels", "without queries"],
    ),
    (
        "inline grade not int",
        BASE.replace("{d1: 1}", "{d1: high}") + FLOORS,
        ["judgments.inline[0].relevant.d1"],
    ),
    ("inline id null", BASE.replace("id: q1", "id: null") + FLOORS, ["judgments.inline[0].id"]),
    (
        "inline text missing",
        BASE.replace('text: "solar panels", ', "") + FLOORS,
        ["judgments.inline[0]", "text"],
    ),
]


@pytest.mark.parametrize("text,fragments", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_hostile_suite_file_is_one_clear_line(
    tmp_path: Path, monkeypatch, text: str, fragments: list
) -> None:
    monkeypatch.setenv("HOSTILE_FLOOR", "0.5")
    monkeypatch.delenv("HOSTILE_SURELY_UNSET", raising=False)
    (tmp_path / "list.yaml").write_text("- a\n")
    p = tmp_path / "retrieval_x.yaml"
    p.write_text(text)
    with bounded(30), pytest.raises(ConfigError) as ei:
        load_suite(p)
    one_line(str(ei.value), *fragments)


def test_a_file_over_the_size_limit_is_one_line(tmp_path: Path, monkeypatch) -> None:
    from pytest_retrieval.config import yamlio

    monkeypatch.setattr(yamlio, "MAX_YAML_BYTES", 1000)
    p = tmp_path / "retrieval_x.yaml"
    p.write_text(BASE + FLOORS + "#" * 2000 + "\n")
    with bounded(10), pytest.raises(ConfigError) as ei:
        load_suite(p)
    one_line(str(ei.value), "retrieval_x.yaml", "over the limit")


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    p = tmp_path / "retrieval_x.yaml"
    p.write_text("include: fifo.yaml\n" + BASE + FLOORS)
    with bounded(10), pytest.raises(ConfigError) as ei:
        load_suite(p)
    one_line(str(ei.value), "fifo.yaml", "not a regular file")


# ------------------------------------------------------------------ loads as written


def _conn(password_expr: str) -> str:
    return (
        BASE
        + FLOORS
        + "backend:\n  type: elasticsearch\n  connection:\n    hosts: ['http://127.0.0.1:${HOSTILE_PORT}']\n"
        + f"    username: u\n    password: {password_expr}\n    api_key: {password_expr}\n"
        + "    request_timeout: ${HOSTILE_TIMEOUT}\n    verify_certs: ${HOSTILE_VERIFY}\n"
    )


@pytest.mark.parametrize("i", range(len(HOSTILE_PASSWORDS)), ids=[repr(p) for p in HOSTILE_PASSWORDS])
@pytest.mark.parametrize("quoting", ["plain", "double-quoted"])
def test_an_interpolated_secret_is_the_exact_text(tmp_path: Path, hostile_env, i: int, quoting: str) -> None:
    hostile_env.setenv("HOSTILE_PORT", "19200")
    hostile_env.setenv("HOSTILE_TIMEOUT", "5")
    hostile_env.setenv("HOSTILE_VERIFY", "false")
    expr = f"${{HOSTILE_PW_{i}}}" if quoting == "plain" else f'"${{HOSTILE_PW_{i}}}"'
    p = tmp_path / "retrieval_x.yaml"
    p.write_text(_conn(expr))
    with bounded(10):
        s = load_suite(p)
    c = s.model.backend.connection
    assert c.password.get_secret_value() == HOSTILE_PASSWORDS[i]
    assert c.api_key.get_secret_value() == HOSTILE_PASSWORDS[i]
    assert c.request_timeout == 5.0 and c.verify_certs is False  # numbers/booleans still coerced
    assert c.hosts == ["http://127.0.0.1:19200"]


@pytest.mark.parametrize("i", range(len(HOSTILE_PASSWORDS)), ids=[repr(p) for p in HOSTILE_PASSWORDS])
def test_a_secret_in_a_wrong_place_is_named_not_shown(tmp_path: Path, hostile_env, i: int) -> None:
    """A secret interpolated into a number field: the error names the variable, never the value."""
    p = tmp_path / "retrieval_x.yaml"
    p.write_text(BASE + FLOORS + f"evaluation:\n  depth: ${{HOSTILE_PW_{i}}}\n")
    pw = HOSTILE_PASSWORDS[i]
    try:
        with bounded(10):
            s = load_suite(p)
    except ConfigError as exc:
        msg = str(exc)
        one_line(msg, "evaluation.depth", f"${{HOSTILE_PW_{i}}}")
        if len(pw.strip()) > 3:
            assert pw.strip() not in msg
    else:  # only a password that spells a valid depth loads (e.g. "007", "1e3" does not)
        assert s.model.evaluation.depth == int(pw)


def test_a_bom_at_the_start_of_a_suite_file_is_stripped(tmp_path: Path) -> None:
    p = tmp_path / "retrieval_x.yaml"
    p.write_bytes(b"\xef\xbb\xbf" + (BASE + FLOORS).encode())
    assert load_suite(p).name == "t"
