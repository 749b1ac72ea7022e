"""``judge synth`` against a scripted fake LLM server (never a live API) on SciFact and
NFCorpus documents: every drop reason is exercised, the counts per reason add up to the
questions generated, the output is a suite-ready query set, the budget and the dry run ask
nothing they should not, and a rerun resumes from the cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import pytest

from pytest_retrieval.cli import main as cli_main
from pytest_retrieval.io.corpus import load_corpus
from pytest_retrieval.io.qrels import load_qrels
from pytest_retrieval.io.queries import load_queries
from pytest_retrieval.io.tags import load_tags
from pytest_retrieval.judge.llm import JudgeCache, OpenAICompatibleJudge, RetryPolicy
from pytest_retrieval.judge.synth import (
    DROP_REASONS,
    Asking,
    SynthSpec,
    Verbatim,
    generation_prompt,
    parse_questions,
    sample_documents,
    synthesize,
    verbatim,
)

from .fake_synth import FakeSynthLLM


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def fake():
    server = FakeSynthLLM()
    yield server
    server.close()


@pytest.fixture(scope="module")
def scifact_docs(scifact_dir: Path):
    return load_corpus(scifact_dir / "corpus.jsonl")


def _cli(fake: FakeSynthLLM, tmp: Path, corpus: Path, *extra: str) -> List[str]:
    return [
        "judge", "synth", "--corpus", str(corpus),
        "--out", str(tmp / "queries.jsonl"), "--qrels-out", str(tmp / "qrels.tsv"),
        "--tags-out", str(tmp / "tags.tsv"), "--provenance", str(tmp / "provenance.json"),
        "--provider", "openai", "--model", "fake-writer", "--base-url", fake.url + "/v1",
        "--cache", str(tmp / "cache.jsonl"), "--max-retries", "0", "--no-progress", *extra,
    ]  # fmt: skip


# ---------------------------------------------------------------- pieces on real text


def test_parse_questions() -> None:
    assert parse_questions('["a b c?", "d e f?"]') == ["a b c?", "d e f?"]
    assert parse_questions('```json\n["a  b?"]\n```') == ["a b?"]
    assert parse_questions("1. What is x?\n2) Why y?\n- How z?") == ["What is x?", "Why y?", "How z?"]
    assert parse_questions('["why\\u202e is\\nthe sky\\u0000 blue?"]') == ["why is the sky blue?"]
    for bad in ("", "   ", "[]", '[""]', '["\\u200b\\u0000"]'):
        with pytest.raises(ValueError):
            parse_questions(bad)


def test_verbatim_on_scifact(scifact_docs) -> None:
    doc = next(d for d in scifact_docs if len(d.fields["text"].split()) > 60)
    text = doc.fields["text"]
    copied = " ".join(text.split()[5:19]) + "?"
    run, share = verbatim(copied, text)
    assert run >= 12 and share == 1.0
    run, share = verbatim("What changes in brain tissue of newborn infants?", "Solar panels in winter")
    assert (run, share) == (1, 0.0)  # "in"


def test_document_sample_is_seeded_and_stratified(scifact_docs) -> None:
    a = sample_documents(scifact_docs, max_docs=30, seed=3, stratify="length")
    b = sample_documents(list(reversed(scifact_docs)), max_docs=30, seed=3, stratify="length")
    assert [d.doc_id for d in a.docs] == [d.doc_id for d in b.docs]
    assert {k: t for k, (_, t) in a.strata.items()} == {"long": 10, "medium": 10, "short": 10}
    assert [d.doc_id for d in sample_documents(scifact_docs, max_docs=30, seed=4).docs] != [
        d.doc_id for d in a.docs
    ]
    assert a.too_short == 0
    fussy = sample_documents(scifact_docs, max_docs=30, min_words=300)
    assert fussy.too_short == sum(
        1 for d in scifact_docs if len((d.fields["title"] + " " + d.fields["text"]).split()) < 300
    )


def test_generation_prompt() -> None:
    p = generation_prompt()
    assert p.version == "synth-questions-v1" and "{document}" in p.text
    assert "3 strings" in p.render("doc {n} {document}", 3) and "doc {n} {document}" in p.render(
        "doc {n} {document}", 3
    )
    custom = generation_prompt("Write {n} about {document}")
    assert custom.version.startswith("custom-")
    with pytest.raises(ValueError, match=r"\{n\}"):
        generation_prompt("Write about {document}")


# ---------------------------------------------------------------- the whole run


def test_synth_on_scifact_counts_add_up_and_the_set_is_suite_ready(
    fake, tmp_path, scifact_dir, capsys
) -> None:
    corpus = scifact_dir / "corpus.jsonl"
    argv = _cli(fake, tmp_path, corpus, "--per-doc", "6", "--max-docs", "20", "--stratify", "length",
                "--price-input", "3", "--price-output", "15")  # fmt: skip
    rc = cli_main(argv)
    err = capsys.readouterr().err
    assert rc == 1  # the "zzfail" questions were not checked: a rerun asks them again
    assert err.index("estimate:") < err.index("20 pairs: 0 cached, 20 new")
    prov = json.loads((tmp_path / "provenance.json").read_text())
    counts = prov["counts"]
    assert counts["generated"] == 20 * 6
    assert counts["kept"] + sum(counts["dropped"].values()) == counts["generated"]
    assert set(counts["dropped"]) == set(DROP_REASONS)
    dropped = counts["dropped"]
    assert dropped["too short"] == 20 and dropped["verbatim"] == 20 and dropped["duplicate text"] == 19
    assert dropped["check not answered"] == 20 and dropped["failed check"] == 4  # every 5th document
    assert dropped["duplicate embedding"] == 0  # no embedder configured
    assert counts["kept"] == 37 and len(prov["dropped"]) == 120 - 37
    assert prov["generator"]["id"] == "openai:fake-writer" and len(prov["generator"]["prompt_sha256"]) == 64
    assert prov["checker"]["prompt_version"] == "umbrela-int-v1" and prov["seed"] == 0
    queries = load_queries(tmp_path / "queries.jsonl")
    qrels = load_qrels(tmp_path / "qrels.tsv")
    tags = load_tags(tmp_path / "tags.tsv")
    assert len(queries) == 37 and set(qrels) == set(queries) == set(tags)
    assert all(t[0] == "synthetic" and t[1].startswith("length:") for t in tags.values())
    doc_ids = {d["_id"] for d in map(json.loads, corpus.read_text().splitlines())}
    assert all(len(d) == 1 and set(d) <= doc_ids and set(d.values()) == {3} for d in qrels.values())
    assert f"{counts['kept']} kept" in err
    # a suite gates on it: the qrels' documents are in the corpus, and every query has a text
    suite = tmp_path / "retrieval_synth.yaml"
    suite.write_text(
        f"suite: synth\njudgments:\n  queries: queries.jsonl\n  qrels: qrels.tsv\n  tags: tags.tsv\n"
        f"  corpus: {corpus}\nlatency:\n  enabled: false\nretrievers:\n  bm25: {{type: bm25}}\n"
        f"floors:\n  bm25: {{ndcg@10: 0.1}}\n"
    )
    from pytest_retrieval import run_suite

    result = run_suite(str(suite))
    assert len(result.retrievers["bm25"].evaluation.evaluated) == 37
    assert result.value("bm25", "ndcg@10") > 0.5  # titles' words: bm25 finds the source documents

    # the rerun resumes: only the unanswered checks are asked again, nothing else
    before = (fake.generations, fake.checks)
    cli_main(argv)
    assert fake.generations == before[0] and fake.checks == before[1] + 20


def test_embedding_duplicates_with_minilm(fake, tmp_path, scifact_docs, shared_dir) -> None:
    from pytest_retrieval.models.embedders.factory import make_embedder

    embedder = make_embedder({"type": "onnx", "model": str(shared_dir / "models" / "all-MiniLM-L6-v2-onnx")})
    gen = OpenAICompatibleJudge(
        "w", base_url=fake.url + "/v1", prompt=Verbatim("synth-questions-v1", "{query}"), max_tokens=512
    )
    chk = OpenAICompatibleJudge("c", base_url=fake.url + "/v1")
    asking = Asking(
        JudgeCache(tmp_path / "c.jsonl"), {"progress": False, "retry": RetryPolicy(max_retries=0)}
    )
    asked_at_plan = []
    r = synthesize(
        scifact_docs, gen, chk, generation_prompt(), asking, SynthSpec(per_doc=6, max_docs=10, seed=1),
        embedder=embedder, on_plan=lambda result: asked_at_plan.append(fake.total),
    )  # fmt: skip
    assert asked_at_plan == [0]  # the estimate comes before the first request
    dropped = r.dropped()
    assert dropped["duplicate embedding"] >= 8  # "What is known about the T?" ~ "What is known about T?"
    assert len(r.kept) + sum(dropped.values()) == r.generated == 60


def test_suite_queries_are_not_duplicated_and_nfcorpus_by_field(fake, tmp_path, shared_dir) -> None:
    corpus = tmp_path / "corpus.jsonl"
    rows = [
        json.loads(x)
        for x in (shared_dir / "data" / "nfcorpus" / "corpus.jsonl").read_text().splitlines()[:300]
    ]
    for i, r in enumerate(rows):
        r["source"] = ["pubmed", "blog"][i % 2]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    docs = load_corpus(corpus)
    gen = OpenAICompatibleJudge(
        "w", base_url=fake.url + "/v1", prompt=Verbatim("synth-questions-v1", "{query}"), max_tokens=512
    )
    chk = OpenAICompatibleJudge("c", base_url=fake.url + "/v1")
    asking = Asking(
        JudgeCache(tmp_path / "c.jsonl"), {"progress": False, "retry": RetryPolicy(max_retries=0)}
    )
    existing = {"h1": "What is the main finding reported here?"}
    r = synthesize(
        docs,
        gen,
        chk,
        generation_prompt(),
        asking,
        SynthSpec(per_doc=3, max_docs=8, stratify="source"),
        existing=existing,
    )
    assert r.dropped()["duplicate text"] == 8  # the suite already has that question
    assert {k: t for k, (_, t) in r.sample.strata.items()} == {"blog": 4, "pubmed": 4}


def test_budget_dry_run_and_resume(fake, tmp_path, scifact_dir, capsys) -> None:
    corpus = scifact_dir / "corpus.jsonl"
    argv = _cli(fake, tmp_path, corpus, "--per-doc", "2", "--max-docs", "10", "--price-input", "3")
    assert cli_main(argv + ["--dry-run"]) == 0
    err = capsys.readouterr().err
    assert fake.total == 0 and "est. $" in err and "dry run: nothing asked" in err
    assert not (tmp_path / "queries.jsonl").exists()
    assert cli_main(argv + ["--max-calls", "7"]) == 0
    err = capsys.readouterr().err
    assert "8 sampled document(s) left out by --max-calls" in err
    assert fake.total <= 7 and fake.generations == 2
    before = fake.total
    assert cli_main(argv + ["--max-calls", "7"]) == 0  # cached documents cost nothing
    assert fake.total - before <= 7 and fake.generations == 4


def test_a_generation_failure_is_counted_and_healed_by_a_rerun(tmp_path, scifact_dir, capsys) -> None:
    fake = FakeSynthLLM(broken_gen=100)
    try:
        argv = _cli(fake, tmp_path, scifact_dir / "corpus.jsonl", "--per-doc", "1", "--max-docs", "12")
        assert cli_main(argv) == 1
        assert "document(s) got no questions" in capsys.readouterr().err
        prov = json.loads((tmp_path / "provenance.json").read_text())
        assert prov["documents"]["generation_failed"] >= 1
        fake.broken_gen = 0
        assert cli_main(argv) == 0
        prov = json.loads((tmp_path / "provenance.json").read_text())
        assert prov["documents"]["generation_failed"] == 0
    finally:
        fake.close()


def test_same_judge_twice_is_refused(tmp_path, scifact_dir, capsys) -> None:
    (tmp_path / "gen.txt").write_text("Write {n} questions about {document}")
    (tmp_path / "chk.txt").write_text("Grade 0-3: {query} / {document}")
    argv = ["judge", "synth", "--corpus", str(scifact_dir / "corpus.jsonl"), "--out", str(tmp_path / "q.jsonl"),
            "--qrels-out", str(tmp_path / "r.tsv"), "--provider", "openai", "--model", "m",
            "--prompt-file", str(tmp_path / "gen.txt"), "--prompt-version", "mine",
            "--check-prompt-file", str(tmp_path / "chk.txt"), "--check-prompt-version", "mine", "--dry-run"]  # fmt: skip
    assert cli_main(argv) == 2
    assert "must differ" in capsys.readouterr().err


def test_summary_counts_synthetic_queries_and_says_when_they_are_most(tmp_path) -> None:
    from pytest_retrieval.execution.integrity import QuerySetCheck
    from pytest_retrieval.io.judgment_set import JudgmentSet

    qrels = {f"q{i}": {"d1": 1} for i in range(5)}
    queries = {q: "text" for q in qrels}
    mostly = JudgmentSet(queries=queries, qrels=qrels, tags={f"q{i}": ("synthetic",) for i in range(3)})
    check = QuerySetCheck.of(mostly)
    assert check.line().endswith("; 3 synthetic, 2 human") and check.as_dict()["synthetic"] == 3
    line = check.synthetic_line()
    assert (
        line is not None and line.startswith("mostly synthetic: 3 of 5 judged queries") and "\n" not in line
    )
    half = JudgmentSet(queries=queries, qrels=qrels, tags={f"q{i}": ("synthetic",) for i in range(2)})
    assert QuerySetCheck.of(half).synthetic_line() is None
    none = QuerySetCheck.of(JudgmentSet(queries=queries, qrels=qrels))
    assert "synthetic" not in none.line() and none.synthetic_line() is None


def test_agree_on_the_synthetic_queries_only(tmp_path, capsys) -> None:
    (tmp_path / "human.csv").write_text(
        "query_id,query,doc_id,title,text,grade\n"
        "syn-1,a,d1,,t,2\nsyn-2,b,d2,,t,0\nsyn-3,c,d3,,t,3\nh1,d,d4,,t,1\n"
    )
    (tmp_path / "synthetic.tsv").write_text(
        "query-id\tcorpus-id\tscore\nsyn-1\td1\t3\nsyn-2\td2\t2\nsyn-3\td3\t3\nh1\td4\t1\n"
    )
    (tmp_path / "tags.tsv").write_text("syn-1\tsynthetic\nsyn-2\tsynthetic\nsyn-3\tsynthetic\nh1\thuman\n")
    argv = [
        "judge",
        "agree",
        str(tmp_path / "human.csv"),
        str(tmp_path / "synthetic.tsv"),
        "--names",
        "human,synthetic",
    ]
    assert cli_main(argv + ["--tags", str(tmp_path / "tags.tsv"), "--tag", "synthetic"]) == 0
    out = capsys.readouterr().out
    assert "on the 3 queries tagged 'synthetic'" in out and "3 pairs graded by both" in out
    assert "Cohen's kappa" in out
    assert cli_main(argv + ["--tags", str(tmp_path / "tags.tsv"), "--tag", "synthetic", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["n"] == 3 and d["tag"] == "synthetic"
    assert cli_main(argv) == 0 and "4 pairs graded by both" in capsys.readouterr().out


def test_non_grade_answers_are_cached_and_resumed(tmp_path, fake) -> None:
    from pytest_retrieval.judge.llm import JudgePair, grade_pairs

    gen = OpenAICompatibleJudge(
        "w", base_url=fake.url + "/v1", prompt=Verbatim("synth-questions-v1", "{query}"), max_tokens=512
    )
    prompt = generation_prompt().render("Solar panels\nSolar panels convert light to power in winter.", 2)
    pairs = [JudgePair("d1", prompt, "d1", "doc")]
    cache = tmp_path / "c.jsonl"
    r1 = grade_pairs(pairs, gen, cache=cache, parse=parse_questions, max_doc_chars=None, progress=False)
    assert r1.new == 1 and isinstance(r1.grades[("d1", "d1")], list)
    record = json.loads(cache.read_text().splitlines()[0])
    assert record["grade"] is None and record["value"] == r1.grades[("d1", "d1")]
    r2 = grade_pairs(pairs, gen, cache=cache, parse=parse_questions, max_doc_chars=None, progress=False)
    assert r2.cached == 1 and fake.generations == 1 and r2.grades == r1.grades
    # a grading judge never takes a questions answer for a grade: the keys differ by prompt version
    assert len(JudgeCache(cache)) == 1


def test_synth_from_a_suite_skips_its_queries_and_uses_its_corpus(
    fake, tmp_path, scifact_dir, capsys
) -> None:
    home = tmp_path / "suite"
    home.mkdir()
    lines = (scifact_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:200]
    (home / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (home / "queries.jsonl").write_text(
        json.dumps({"_id": "h1", "text": "what is the MAIN finding reported here"}) + "\n"
    )
    suite = home / "retrieval_s.yaml"
    head = (
        "suite: s\njudgments:\n  queries: queries.jsonl\n  qrels: qrels.tsv\n"  # qrels.tsv does not exist yet
    )
    tail = "retrievers:\n  bm25: {type: bm25}\nfloors:\n  bm25: {ndcg@10: 0.1}\n"
    suite.write_text(head + "  corpus: corpus.jsonl\n" + tail)
    argv = _cli(fake, tmp_path, home / "corpus.jsonl", "--per-doc", "3", "--max-docs", "5")
    argv[argv.index("--corpus") : argv.index("--corpus") + 2] = ["--suite", str(suite)]
    assert cli_main(argv) == 0
    prov = json.loads((tmp_path / "provenance.json").read_text())
    assert prov["counts"]["dropped"]["duplicate text"] == 5  # the suite already asks it
    assert prov["documents"]["corpus"] == 200
    suite.write_text(head + tail)
    assert cli_main(argv) == 2
    assert "no corpus" in capsys.readouterr().err
