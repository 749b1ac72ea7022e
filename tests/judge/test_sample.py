"""``judge sample``: normalisation, de-duplication, the PII guard and the sampling methods on
real query text (NFCorpus, SciFact) and a generated query log; the same seed gives the same
sample, whatever the order of the log's rows."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from pytest_retrieval.cli import main as cli_main
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.io.queries import load_queries
from pytest_retrieval.io.tags import load_tags
from pytest_retrieval.judge.querytext import find_pii, mask_pii, normalise
from pytest_retrieval.judge.sample import SampleSpec, sample_queries, write_sample

from .querylog import real_queries, write_log


@pytest.fixture(scope="module")
def base(shared_dir: Path):
    return sorted(set(real_queries(shared_dir, "nfcorpus")))[:400]


@pytest.fixture(scope="module")
def log(tmp_path_factory, base) -> Path:
    path = tmp_path_factory.mktemp("log") / "log.csv"
    write_log(path, base, 20_000, seed=1)
    return path


# ------------------------------------------------------------ text rules on real text


def test_real_queries_have_no_pii(shared_dir: Path) -> None:
    for name in ("scifact", "nfcorpus"):
        hits = [q for q in real_queries(shared_dir, name) if find_pii(q)]
        assert hits == [], (name, hits[:3])  # rs10818488 (a SNP id) is not a digit run


def test_pii_found_in_real_documents(shared_dir: Path) -> None:
    docs = {}
    with open(shared_dir / "data" / "scifact" / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            docs[d["_id"]] = d["text"]
    spans = [(k, t[a:b]) for t in docs.values() for k, a, b in find_pii(t)]
    found = Counter(k for k, _ in spans)
    texts = " | ".join(s for _, s in spans)
    assert "aaronquinlan@gmail.com" in texts and "+31-20-5665-633" in texts and "(212) 717-3298" in texts
    assert found["email"] == 11
    # confidence intervals and page ranges are not phone numbers
    assert "0.27-1.04" not in texts and "12442-12448" not in texts


@pytest.mark.parametrize(
    "text,masked,kinds",
    [
        ("mail jane.doe@example.org now", "mail [email] now", {"email": 1}),
        ("call +1 (415) 555-2671", "call [phone]", {"phone": 1}),
        ("call 0044 20 7946 0958 or 415.555.2671", "call [phone] or [phone]", {"phone": 2}),
        ("order 88812345 late", "order [number] late", {"digits": 1}),
        ("iphone 15 pro 256gb", "iphone 15 pro 256gb", {}),
        ("covid-19 2020-2021 cases", "covid-19 2020-2021 cases", {}),
        ("hr 0.53 (0.27-1.04)", "hr 0.53 (0.27-1.04)", {}),
    ],
)
def test_mask_pii(text: str, masked: str, kinds: dict) -> None:
    assert mask_pii(text) == (masked, kinds)


def test_normalise_merges_near_identical_real_queries(shared_dir: Path) -> None:
    qs = real_queries(shared_dir, "nfcorpus")
    assert normalise("Treating Parkinson’s Disease With Diet") == normalise(
        "Treating Parkinson's Disease With Diet"
    )
    assert normalise("ＳＯＬＡＲ  panels?") == "solar panels"
    assert normalise("Straße") == normalise("STRASSE")
    assert len({normalise(q) for q in qs}) < len(set(qs))


# ------------------------------------------------------------ sampling


def test_same_seed_same_sample_whatever_the_row_order(log: Path, tmp_path: Path) -> None:
    spec = SampleSpec(size=50, method="pps", seed=7)
    a = sample_queries(log, spec)
    b = sample_queries(log, spec)
    assert list(a.queries.items()) == list(b.queries.items())
    lines = log.read_text(encoding="utf-8").splitlines()
    shuffled = lines[1:]
    random.Random(3).shuffle(shuffled)
    other = tmp_path / "shuffled.csv"
    other.write_text("\n".join([lines[0]] + shuffled) + "\n", encoding="utf-8")
    assert list(sample_queries(other, spec).queries.items()) == list(a.queries.items())
    assert sample_queries(log, SampleSpec(size=50, method="pps", seed=8)).queries != a.queries


def test_methods(log: Path, base) -> None:
    top = sample_queries(log, SampleSpec(size=10, method="top-n"))
    assert list(top.queries.values())[0] in (base[0], base[0].lower() + "?")  # the Zipf head
    weights = list(top.weights.values())
    assert weights == sorted(weights, reverse=True)
    # pps: the head is (almost) always in, and the tail is still represented
    head_hits = tail = 0
    for seed in range(6):
        s = sample_queries(log, SampleSpec(size=40, method="pps", seed=seed))
        head_hits += any(normalise(t) == normalise(base[0]) for t in s.queries.values())
        tail += sum(1 for w in s.weights.values() if w <= 10)
    assert head_hits == 6 and tail > 0
    uniform = sample_queries(log, SampleSpec(size=40, method="random", seed=1))
    pps = sample_queries(log, SampleSpec(size=40, method="pps", seed=1))
    assert sum(pps.weights.values()) > 2 * sum(uniform.weights.values())


def test_dedupe_and_pii_counts(log: Path, base) -> None:
    s = sample_queries(log, SampleSpec(size=5000, method="random"))
    assert s.distinct <= len(base) + 3 * len(base)  # spellings folded into their query
    assert s.merged_spellings > len(base)
    assert {normalise(t) for t in s.queries.values()} == {normalise(t) for t in s.queries.values()}
    assert len({normalise(t) for t in s.queries.values()}) == len(s.queries)
    assert set(s.pii_queries) == {"email", "phone", "digits"} and s.pii_dropped == sum(s.pii_queries.values())
    assert not any(find_pii(t) for t in s.queries.values())
    m = sample_queries(log, SampleSpec(size=5000, method="random", pii="mask"))
    assert m.pii_masked == s.pii_dropped and any("[email]" in t for t in m.queries.values())
    assert "dropped" in s.summary() and "email:" in s.summary()


def test_strata_quotas_and_proportions(log: Path) -> None:
    s = sample_queries(log, SampleSpec(size=30, stratify="locale", quotas={"de": 20, "en": 5, "xx": 3}))
    assert s.strata["de"][1:] == (20, 20) and s.strata["en"][1:] == (5, 5) and s.strata["xx"] == (0, 3, 0)
    assert s.strata["fr"][1:] == (0, 0)
    assert Counter(t[1] for t in s.tags.values()) == {"locale:de": 20, "locale:en": 5}
    assert all(t[0] == "human" for t in s.tags.values())
    assert "3 short" in s.summary()
    p = sample_queries(log, SampleSpec(size=30, stratify="locale"))
    assert sum(taken for _, _, taken in p.strata.values()) == 30


def test_weight_by_users_window_and_outputs(log: Path, tmp_path: Path) -> None:
    from pytest_retrieval.judge.sample import parse_time

    s = sample_queries(
        log,
        SampleSpec(size=20, weight="users", since=parse_time("2026-10-10"), until=parse_time("2026-10-20")),
    )
    assert 0 < s.rows_out_of_window < s.rows
    assert max(s.weights.values()) <= 500
    write_sample(s, tmp_path / "q.jsonl", tmp_path / "tags.tsv")
    assert load_queries(tmp_path / "q.jsonl") == s.queries
    assert load_tags(tmp_path / "tags.tsv") == s.tags


def test_jsonl_log_and_named_columns(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    rows = [
        {"search_term": "Solar Panels", "n": 3},
        {"search_term": "solar panels!", "n": 2},
        {"search_term": "wind", "n": 1},
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = sample_queries(
        log, SampleSpec(size=5, method="top-n"), columns={"query": "search_term", "count": "n"}
    )
    assert list(s.queries.values()) == ["Solar Panels", "wind"] and list(s.weights.values()) == [5.0, 1.0]


def test_bad_logs_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "log.csv"
    bad.write_text("query,count\nsolar,2\nwind,-1\n")
    with pytest.raises(ConfigError, match=r"log.csv:3.*count '-1'"):
        sample_queries(bad, SampleSpec())
    bad.write_text("term,count\nsolar,2\n")
    with pytest.raises(ConfigError, match="no query column"):
        sample_queries(bad, SampleSpec())


def test_cli(log: Path, tmp_path: Path) -> None:
    out, tags = tmp_path / "q.tsv", tmp_path / "t.jsonl"
    argv = [
        "judge",
        "sample",
        str(log),
        "--out",
        str(out),
        "--tags-out",
        str(tags),
        "-n",
        "25",
        "--seed",
        "3",
    ]
    assert cli_main(argv + ["--stratify", "locale", "--no-progress"]) == 0
    first = out.read_text()
    assert cli_main(argv + ["--stratify", "locale"]) == 0
    assert out.read_text() == first and len(load_queries(out)) == 25
    assert all("human" in t for t in load_tags(tags).values())
