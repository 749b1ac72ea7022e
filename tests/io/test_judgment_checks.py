"""Judgments you can trust (issue 12): grade scales, metric aliases, judged documents that
must exist, query-set integrity, self-hit exclusion and run files out."""

from __future__ import annotations

import json
import math
import random
import textwrap
import warnings
from pathlib import Path
from typing import Dict, List

import pytest
import pytrec_eval  # a test extra: a broken install fails, never skips

from pytest_retrieval.cli import main as cli_main
from pytest_retrieval.config.load import load_suite
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.execution.runner import SuiteRunner
from pytest_retrieval.io.grades import GradeScale, parse_grade_map
from pytest_retrieval.io.qrels import load_qrels
from pytest_retrieval.measures.metrics import evaluate, parse_metric

# ------------------------------------------------------------------ collections

WORDS = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
    "sigma tau upsilon phi chi psi omega apple banana cherry grape lemon mango melon olive peach "
    "pear plum"
).split()


def _docs(n: int, seed: int = 0) -> List[Dict[str, str]]:
    rng = random.Random(seed)
    return [{"_id": f"d{i}", "text": " ".join(rng.choice(WORDS) for _ in range(8))} for i in range(n)]


def _write_jsonl(path: Path, rows: List[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _suite(tmp_path: Path, body: str, name: str = "retrieval_t.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(body), encoding="utf-8")
    return p


def _run(path: Path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SuiteRunner(load_suite(path, **kw)).run()


def _collection(tmp_path: Path, n_docs: int = 60, n_queries: int = 12, seed: int = 1):
    """Documents d0.., queries q0.. whose text is a document's text, each judging 3 docs."""
    docs = _docs(n_docs, seed)
    rng = random.Random(seed)
    queries, qrels = [], []
    for i in range(n_queries):
        target = rng.randrange(n_docs)
        queries.append({"_id": f"q{i}", "text": docs[target]["text"]})
        for j, d in enumerate(rng.sample(range(n_docs), 3)):
            qrels.append((f"q{i}", f"d{d}", 2 if j == 0 else 1))
        qrels.append((f"q{i}", f"d{target}", 1))
    _write_jsonl(tmp_path / "corpus.jsonl", docs)
    _write_jsonl(tmp_path / "queries.jsonl", queries)
    seen = set()
    lines = []
    for q, d, g in qrels:
        if (q, d) not in seen:
            seen.add((q, d))
            lines.append(f"{q} 0 {d} {g}\n")
    (tmp_path / "qrels.txt").write_text("".join(lines))
    return docs, queries


SUITE = """
suite: t
judgments:
  queries: queries.jsonl
  qrels: qrels.txt
  corpus: corpus.jsonl
{extra_judgments}
evaluation:
  profile: trec
  metrics: [ndcg@10, mrr@10, recall@20, map]
{extra_evaluation}
latency: {{enabled: false}}
retrievers:
  bm25: {{type: bm25, fields: [text]}}
floors:
  bm25: {{ndcg@10: 0.0}}
"""


def _suite_text(extra_judgments: str = "", extra_evaluation: str = "") -> str:
    return SUITE.format(extra_judgments=extra_judgments, extra_evaluation=extra_evaluation)


def _trec_eval(qrels, run_dict, measures=("ndcg_cut_10", "recip_rank", "recall_20", "map")):
    ev = pytrec_eval.RelevanceEvaluator(
        qrels,
        set(m.split("_")[0] if m.startswith("recall") else m for m in measures) | {"ndcg_cut", "recall"},
    )
    return ev.evaluate(run_dict)


# ------------------------------------------------------------------ item 6: names


@pytest.mark.parametrize(
    "spelling, canonical",
    [
        ("nDCG@10", "ndcg@10"),
        ("ndcg_cut_10", "ndcg@10"),
        ("RR@10", "mrr@10"),
        ("recip_rank", "mrr"),
        ("R@100", "recall@100"),
        ("recall_100", "recall@100"),
        ("P@10", "precision@10"),
        ("P_10", "precision@10"),
        ("AP", "map"),
        ("map_cut_100", "map@100"),
        ("AP@100", "map@100"),
        ("Rprec", "r-precision"),
        ("success_5", "hit@5"),
    ],
)
def test_metric_aliases_print_under_one_canonical_name(spelling, canonical) -> None:
    assert str(parse_metric(spelling)) == canonical


def test_alias_floors_and_metrics_in_a_suite_are_canonical(tmp_path: Path) -> None:
    _collection(tmp_path)
    text = _suite_text().replace("[ndcg@10, mrr@10, recall@20, map]", "[nDCG@10, RR@10, R@20, AP]")
    text = text.replace("{ndcg@10: 0.0}", "{ndcg_cut_10: 0.0, P_10: 0.0}")
    s = load_suite(_suite(tmp_path, text))
    assert s.metrics[:4] == ["ndcg@10", "mrr@10", "recall@20", "map"]
    assert {f.metric for f in s.floors} == {"ndcg@10", "precision@10"}


# ------------------------------------------------------------------ item 2: grades


def test_negative_grade_without_a_map_names_file_line_and_option(tmp_path: Path) -> None:
    p = tmp_path / "q.txt"
    p.write_text("1 0 a 1\n1 0 b -1\n")
    with pytest.raises(ConfigError) as exc:
        load_qrels(p, GradeScale())
    msg = str(exc.value)
    assert f"{p}:2" in msg and "judgments.grades" in msg and "-1" in msg and "\n" not in msg


def test_grade_above_the_range_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "q.txt"
    p.write_text("1 0 a 11\n")
    with pytest.raises(ConfigError, match=r"q.txt:1: relevance grade 11 outside the allowed range 0..10"):
        load_qrels(p, GradeScale())


def test_minus_one_and_inverted_grades_mapped_equal_hand_converted_qrels(tmp_path: Path) -> None:
    """Grades -1 (judged non-relevant) and an inverted scale 1 = best, mapped on load, score
    exactly as the hand-converted qrels do under trec_eval."""
    _collection(tmp_path)
    raw = [l.split() for l in (tmp_path / "qrels.txt").read_text().splitlines()]
    inverted = {2: 1, 1: 2}  # the file says 1 = most relevant
    lines, converted = [], {}
    for i, (q, _, d, g) in enumerate(raw):
        g = int(g)
        file_grade = -1 if i % 4 == 3 else inverted[g]  # some judged-non-relevant rows
        lines.append(f"{q} 0 {d} {file_grade}\n")
        converted.setdefault(q, {})[d] = 0 if file_grade == -1 else {1: 2, 2: 1}[file_grade]
    (tmp_path / "qrels.txt").write_text("".join(lines))

    with pytest.raises(ConfigError, match=r"qrels.txt:4: .*negative relevance grade -1.*judgments.grades"):
        _run(_suite(tmp_path, _suite_text()))

    mapped = _suite_text("  grades: {map: {-1: 0, 1: 2, 2: 1}}")
    result = _run(_suite(tmp_path, mapped))
    assert result.judgments.qrels == converted
    run = result.retrievers["bm25"].run
    run_dict = {q: dict(zip(r.doc_ids[:100], r.scores[:100])) for q, r in run.items()}
    ours = evaluate(converted, run, ["ndcg@10", "map"], gain="linear", ties="trec")
    ref = pytrec_eval.RelevanceEvaluator(converted, {"ndcg_cut", "map"}).evaluate(run_dict)
    for q in ours.evaluated:
        assert ours.per_query["ndcg@10"][q] == pytest.approx(ref[q]["ndcg_cut_10"], abs=1e-12)
        assert result.retrievers["bm25"].evaluation.per_query["ndcg@10"][q] == pytest.approx(
            ref[q]["ndcg_cut_10"], abs=1e-12
        )


def test_inline_negative_grade_names_the_key(tmp_path: Path) -> None:
    p = _suite(
        tmp_path,
        """
        judgments:
          inline:
            - {id: q1, text: alpha, relevant: {d1: -1, d2: 1}}
          documents:
            - {id: d1, text: alpha}
            - {id: d2, text: beta}
        latency: {enabled: false}
        retrievers: {bm25: {type: bm25, fields: [text]}}
        floors: {bm25: {ndcg@10: 0.0}}
        """,
    )
    with pytest.raises(ConfigError, match=r"judgments.inline.*negative relevance grade -1"):
        _run(p)


def test_evaluate_grade_map(tmp_path: Path, capsys) -> None:
    (tmp_path / "qrels.txt").write_text("1 0 a -1\n1 0 b 1\n1 0 c 3\n")
    (tmp_path / "run.txt").write_text("1 Q0 a 1 3.0 t\n1 Q0 b 2 2.0 t\n1 Q0 c 3 1.0 t\n")
    args = [str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "-m", "nDCG@10", "--profile", "trec"]
    assert cli_main(["evaluate", *args]) == 2
    err = capsys.readouterr().err
    assert "qrels.txt:1" in err and "--grade-map" in err and len(err.strip().splitlines()) == 1
    assert cli_main(["evaluate", *args, "--grade-map=-1:0,1:3,3:1", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["aggregate"]["ndcg@10"]
    ref = pytrec_eval.RelevanceEvaluator({"1": {"a": 0, "b": 3, "c": 1}}, {"ndcg_cut"}).evaluate(
        {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    )["1"]["ndcg_cut_10"]
    assert got == pytest.approx(ref, abs=1e-12)
    with pytest.raises(ConfigError, match="--grade-map: 'x' is not 'grade:grade'"):
        parse_grade_map("x")


# ------------------------------------------------------------------ item 3: missing documents


def _break_ids(tmp_path: Path, every: int) -> List[str]:
    """Rename every ``every``-th judged document to an id the corpus does not have."""
    lines = (tmp_path / "qrels.txt").read_text().splitlines()
    out, broken = [], []
    for i, line in enumerate(lines):
        q, z, d, g = line.split()
        if i % every == 0:
            d = "nope-" + d
            broken.append(q)
        out.append(f"{q} {z} {d} {g}\n")
    (tmp_path / "qrels.txt").write_text("".join(out))
    return broken


def test_missing_documents_over_the_limit_refuse_the_suite(tmp_path: Path) -> None:
    _collection(tmp_path)
    _break_ids(tmp_path, 5)
    with pytest.raises(ConfigError) as exc:
        _run(_suite(tmp_path, _suite_text()))
    msg = str(exc.value)
    assert "judgments.max_missing_documents" in msg and "missing from the corpus" in msg
    assert "nope-d" in msg and "\n" not in msg


def test_all_ids_wrong_names_the_cause(tmp_path: Path) -> None:
    _collection(tmp_path)
    _break_ids(tmp_path, 1)
    with pytest.raises(ConfigError, match=r"100.0%.*wrong corpus, index or id scheme"):
        _run(_suite(tmp_path, _suite_text()))


def test_missing_documents_counted_as_trec_eval_or_dropped(tmp_path: Path) -> None:
    _collection(tmp_path)
    # one query loses every relevant document; another loses one of its documents
    lines = (tmp_path / "qrels.txt").read_text().splitlines()
    out = []
    for line in lines:
        q, z, d, g = line.split()
        if q == "q3" or (q == "q5" and not out[-1].startswith("q5")):
            d = "gone-" + d
        out.append(f"{q} {z} {d} {g}")
    (tmp_path / "qrels.txt").write_text("\n".join(out) + "\n")
    allowed = "  max_missing_documents: 0.5"

    counted = _run(_suite(tmp_path, _suite_text(allowed)))
    md = counted.missing_documents
    assert md.hopeless == ["q3"] and set(md.missing) == {"q3", "q5"} and md.affected()[0] == "q3"
    ev = counted.retrievers["bm25"].evaluation
    assert "q3" in ev.evaluated and ev.per_query["ndcg@10"]["q3"] == 0.0
    # exactly trec_eval on the file as it is
    qrels = {}
    for line in out:
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    run = counted.retrievers["bm25"].run
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut"}).evaluate(
        {q: dict(zip(r.doc_ids[:100], r.scores[:100])) for q, r in run.items()}
    )
    assert ev.aggregate["ndcg@10"] == pytest.approx(
        math.fsum(v["ndcg_cut_10"] for v in ref.values()) / len(ref), abs=1e-12
    )
    lines_ = counted.check_lines()
    assert any("missing documents:" in l and "'q3'" in l and "score 0" in l for l in lines_)
    report = counted.checks_dict()["missing_documents"]
    assert report["no_existing_relevant"] == ["q3"] and list(report["queries"])[0] == "q3"

    dropped = _run(_suite(tmp_path, _suite_text(allowed + "\n  missing_documents: drop")))
    ev2 = dropped.retrievers["bm25"].evaluation
    assert "q3" not in ev2.evaluated and "q3" in ev2.no_relevant
    assert not any(d.startswith("gone-") for docs in dropped.judgments.qrels.values() for d in docs)
    assert any("left out of the averages" in l for l in dropped.check_lines())


# ------------------------------------------------------------------ item 4: query set


def test_partly_overlapping_query_file_is_reported_and_refused_on_request(tmp_path: Path) -> None:
    _, queries = _collection(tmp_path, n_queries=12)
    # positional keys 0..11 vs the qrels' own q0..q11 would not overlap at all; keyed 1..12
    # against qrels q0..q11 shifted by one they overlap on all but one id
    shifted = [{"_id": f"q{i + 1}", "text": q["text"]} for i, q in enumerate(queries)]
    shifted[4]["text"] = "   "
    _write_jsonl(tmp_path / "queries.jsonl", shifted)
    result = _run(_suite(tmp_path, _suite_text()))
    qs = result.query_set
    assert (qs.judged, qs.judged_with_text, qs.queries, qs.queries_with_judgments) == (12, 11, 12, 11)
    assert qs.judged_without_text == ["q0"] and qs.queries_without_judgments == ["q12"]
    assert qs.empty_text == ["q5"]
    assert "11 of 12 judged queries have a text" in result.check_lines()[0]
    joined = " ".join(result.warnings)
    assert "judgments.require_all" in joined and "empty text: 'q5'" in joined
    with pytest.raises(ConfigError, match=r"judgments.require_all: 1 judged queries without text \('q0'\)"):
        _run(_suite(tmp_path, _suite_text("  require_all: true")))


def test_ids_matched_after_normalising_are_counted(tmp_path: Path) -> None:
    _collection(tmp_path, n_queries=4)
    text = (tmp_path / "qrels.txt").read_text().replace("q1 ", "Q1 ")
    (tmp_path / "qrels.txt").write_text(text)
    result = _run(_suite(tmp_path, _suite_text()))
    assert result.query_set.normalised == 1
    assert "1 id(s) matched only after normalising" in result.check_lines()[0]


# ------------------------------------------------------------------ item 1: self hits


def _self_collection(tmp_path: Path, n_docs: int = 80, n_queries: int = 20, seed: int = 3):
    """Queries that are documents: query id == the id of a document with the same text."""
    docs = _docs(n_docs, seed)
    rng = random.Random(seed)
    qids = rng.sample(range(n_docs), n_queries)
    queries = [{"_id": f"d{i}", "text": docs[i]["text"]} for i in qids]
    lines = []
    for i in qids:
        others = [j for j in rng.sample(range(n_docs), 4) if j != i][:3]
        lines += [f"d{i} 0 d{j} {1 + (k == 0)}\n" for k, j in enumerate(others)]
    _write_jsonl(tmp_path / "corpus.jsonl", docs)
    _write_jsonl(tmp_path / "queries.jsonl", queries)
    (tmp_path / "qrels.txt").write_text("".join(lines))


def test_self_hits_excluded_match_an_independent_computation(tmp_path: Path) -> None:
    _self_collection(tmp_path)
    text = _suite_text().replace("profile: trec", "profile: trec\n  ties: trec\n  depth: 20")
    plain = _run(_suite(tmp_path, text))
    # the hint: rank 1 is the query itself for (nearly) every query
    assert any("exclude_self_hits" in w and "rank-1 hit is the query's own id" in w for w in plain.warnings)

    excluded = _run(_suite(tmp_path, text.replace("depth: 20", "depth: 20\n  exclude_self_hits: true")))
    assert not any("exclude_self_hits: true to score" in w for w in excluded.warnings)
    run = excluded.retrievers["bm25"].run
    assert all(q not in r.doc_ids for q, r in run.items())
    assert all(len(r) == 20 for r in run.values())  # still k hits after removing the query

    # independently: the unfiltered ranking one deeper, filtered by hand, scored by trec_eval
    from pytest_retrieval.backends.base import BM25Spec
    from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
    from pytest_retrieval.io.corpus import load_corpus
    from pytest_retrieval.io.qrels import load_qrels
    from pytest_retrieval.io.queries import load_queries
    from pytest_retrieval.types import Query

    b = EmbeddedBackend()
    b.prepare(load_corpus(tmp_path / "corpus.jsonl"), None)
    qs = load_queries(tmp_path / "queries.jsonl")
    raw = b.search_batch(BM25Spec(fields=(("text", 1.0),)), [Query(q, t) for q, t in qs.items()], 21)
    manual = {q: {d: s for d, s in zip(r.doc_ids, r.scores) if d != q} for q, r in raw.items()}
    manual = {q: dict(list(v.items())[:20]) for q, v in manual.items()}
    qrels = load_qrels(tmp_path / "qrels.txt")
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut", "recip_rank"}).evaluate(manual)
    ev = excluded.retrievers["bm25"].evaluation
    for q in ev.evaluated:
        assert ev.per_query["ndcg@10"][q] == pytest.approx(ref[q]["ndcg_cut_10"], abs=1e-12)
    ref_mean = math.fsum(v["ndcg_cut_10"] for v in ref.values()) / len(ref)
    assert ev.aggregate["ndcg@10"] == pytest.approx(ref_mean, abs=1e-12)
    assert plain.retrievers["bm25"].evaluation.aggregate["ndcg@10"] < ev.aggregate["ndcg@10"]


def test_a_query_judging_itself_relevant_is_named_when_self_hits_are_excluded(tmp_path: Path) -> None:
    _self_collection(tmp_path, n_queries=5)
    first = (tmp_path / "qrels.txt").read_text().split()[0]
    with open(tmp_path / "qrels.txt", "a") as fh:
        fh.write(f"{first} 0 {first} 1\n")
    text = _suite_text("", "  exclude_self_hits: true")
    result = _run(_suite(tmp_path, text))
    assert any(f"judge their own id relevant ('{first}')" in w for w in result.warnings)


def test_evaluate_ignore_identical_ids(tmp_path: Path, capsys) -> None:
    (tmp_path / "qrels.txt").write_text("a 0 b 1\n")
    (tmp_path / "run.txt").write_text("a Q0 a 1 3.0 t\na Q0 b 2 2.0 t\n")
    base = ["evaluate", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "-m", "RR@10", "--json"]
    assert cli_main(base) == 0
    assert json.loads(capsys.readouterr().out)["aggregate"]["mrr@10"] == 0.5
    assert cli_main(base + ["--ignore-identical-ids"]) == 0
    assert json.loads(capsys.readouterr().out)["aggregate"]["mrr@10"] == 1.0


# ------------------------------------------------------------------ item 5: runs out


@pytest.mark.parametrize("ties, profile", [("engine", "exp"), ("trec", "trec")])
def test_run_files_reproduce_the_suite(tmp_path: Path, capsys, ties: str, profile: str) -> None:
    from pytest_retrieval.execution.export import evaluate_command, write_suite_runs

    _collection(tmp_path, n_queries=15)
    text = _suite_text(
        "  relevance_threshold: 2\n  grades: {max: 3}",
        f"  ties: {ties}\n  depth: 30\n  exclude_self_hits: true",
    )
    text = text.replace("profile: trec", f"profile: {profile}")
    text = text.replace(
        "bm25: {type: bm25, fields: [text]}",
        "bm25: {type: bm25, fields: [text]}\n  bm25b: {type: bm25, fields: [text], k1: 0.5}\n"
        "  rrf: {type: rrf, of: [bm25, bm25b], window: 40}",
    )
    result = _run(_suite(tmp_path, text))
    out = write_suite_runs(result, tmp_path / "runs")
    assert sorted(p.name for p in out.iterdir()) == [
        "bm25.run",
        "bm25b.run",
        "evaluate.sh",
        "qrels.txt",
        "rrf.run",
    ]
    for name, r in result.retrievers.items():
        args = evaluate_command(result, str(out / "qrels.txt"), str(out / f"{name}.run"))[1:]
        assert cli_main(args + ["--json", "--per-query"]) == 0
        got = json.loads(capsys.readouterr().out)
        for m, v in r.evaluation.aggregate.items():
            assert abs(got["aggregate"][m] - v) <= 1e-12, (name, m)
        for q, values in got["per_query"].items():
            for m, v in values.items():
                assert abs(r.evaluation.per_query[m][q] - v) <= 1e-12


def test_python_api_converts_to_ranx_and_ir_measures(tmp_path: Path) -> None:
    from pytest_retrieval.execution.export import suite_runs

    _collection(tmp_path, n_queries=10)
    path = _suite(tmp_path, _suite_text("", "  ties: trec"))
    qrels, runs = suite_runs(path)
    result = _run(path)
    ours = result.retrievers["bm25"].evaluation.aggregate
    assert qrels.to_dict() == result.judgments.qrels
    assert set(runs) == {"bm25"}

    import ranx  # noqa: F401  (a test extra: a broken install fails, never skips)

    # ranx orders tied scores its own way (BM25 over this vocabulary ties a lot), so the
    # check is the conversion itself; the numbers are checked through ir_measures below
    rq, rr = qrels.to_ranx(), runs["bm25"].to_ranx()
    assert {q: {d: int(g) for d, g in v.items()} for q, v in rq.to_dict().items()} == {
        q: v for q, v in qrels.to_dict().items() if v
    }
    assert rr.name == "bm25"
    assert {q: {d: float(s) for d, s in v.items()} for q, v in rr.to_dict().items()} == runs["bm25"].to_dict()

    import ir_measures  # a test extra: a broken install fails, never skips

    agg = ir_measures.calc_aggregate(
        [ir_measures.nDCG @ 10, ir_measures.AP, ir_measures.RR @ 10],
        qrels.to_ir_measures(),
        runs["bm25"].to_ir_measures(),
    )
    assert agg[ir_measures.nDCG @ 10] == pytest.approx(ours["ndcg@10"], abs=1e-12)
    assert agg[ir_measures.AP] == pytest.approx(ours["map"], abs=1e-12)
    assert agg[ir_measures.RR @ 10] == pytest.approx(ours["mrr@10"], abs=1e-12)


def test_plugin_option_writes_run_files(pytester: pytest.Pytester, tmp_path: Path) -> None:
    _collection(pytester.path)
    (pytester.path / "retrieval_t.yaml").write_text(textwrap.dedent(_suite_text()))
    res = pytester.runpytest(
        "-p", "no:cacheprovider", "--retrieval-runs", "runs", "--retrieval-report", "r.json"
    )
    res.assert_outcomes(passed=1)
    assert (pytester.path / "runs" / "t" / "bm25.run").is_file()
    report = json.loads((pytester.path / "r.json").read_text())
    checks = report["suites"][0]["judgment_checks"]
    assert checks["query_set"]["judged_with_text"] == 12
    assert checks["missing_documents"]["missing"] == 0
    res.stdout.fnmatch_lines(
        ["*query set: 12 of 12 judged queries have a text*", "*documents: all * judged documents exist*"]
    )


pytest_plugins = ["pytester"]


def test_require_all_on_a_beir_folder_expects_queries_of_other_splits(tmp_path: Path) -> None:
    _collection(tmp_path, n_queries=4)
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    for f in ("corpus.jsonl", "queries.jsonl"):
        (beir / f).write_text((tmp_path / f).read_text())
    with open(beir / "queries.jsonl", "a") as fh:
        fh.write(json.dumps({"_id": "train-1", "text": "alpha"}) + "\n")
    rows = [l.split() for l in (tmp_path / "qrels.txt").read_text().splitlines()]
    (beir / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, _, d, g in rows)
    )
    text = _suite_text("  require_all: true").replace(
        "  queries: queries.jsonl\n  qrels: qrels.txt\n  corpus: corpus.jsonl", "  beir: beir"
    )
    result = _run(_suite(tmp_path, text))
    assert result.query_set.queries_without_judgments == ["train-1"]
