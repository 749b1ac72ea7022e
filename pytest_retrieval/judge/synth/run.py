"""``judge synth``: documents -> LLM-written questions -> a second judge's check -> a query
set with qrels, tags and provenance.

The steps (each counted, so ``generated == kept + sum(dropped)`` always holds):

1. a seeded, stratified sample of documents (:mod:`.documents`), cut to ``max_calls``;
2. the generator writes ``per_doc`` questions per document (:mod:`.questions`), through
   :func:`~..llm.grading.grade_pairs`: the same SDK judges, answer cache, rate limit and
   retry loop as ``judge llm`` (the prompt rides in the pair's query slot, so the cache key
   covers prompt, N and document); more than ``per_doc`` answers are cut to ``per_doc``;
3. screening without a request: too short (< 3 words), a duplicate of a question already
   kept or of a query of the suite (normalised text), quoting the document verbatim;
4. the check judge grades each remaining (question, source document) 0-3 (a ``judge llm``
   judge: another model, or another prompt); below ``min_grade`` fails, no answer is
   "check not answered" (a rerun asks again: resumable from the cache);
5. with an embedder, questions whose cosine to a kept question (or a suite query) exceeds
   ``dup_cosine`` are duplicates too.

Kept questions become queries (ids ``syn-`` + 12 hex digits of SHA-1 of the normalised
text), qrels (the source document at ``grade``, or the check judge's grade), tags
(``synthetic`` and the document's stratum) and the provenance record.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ...io.tags import SYNTHETIC_TAG
from ..llm.base import Judge
from ..llm.cache import JudgeCache
from ..llm.grading import grade_pairs
from ..llm.pairs import JudgePair
from ..llm.report import GradingReport, Prices
from ..querytext import normalise
from .documents import DocSample, SourceDoc, sample_documents
from .questions import GenerationPrompt, parse_questions, verbatim

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["DROP_REASONS", "SynthResult", "SynthSpec", "synthesize"]

DROP_REASONS = (
    "too short",
    "duplicate text",
    "verbatim",
    "check not answered",
    "failed check",
    "duplicate embedding",
)


@dataclass(frozen=True)
class SynthSpec:
    per_doc: int = 3
    max_docs: int = 100
    max_calls: Optional[int] = None
    seed: int = 0
    stratify: Optional[str] = None
    min_words: int = 20
    min_grade: int = 2
    grade: Optional[int] = None  # qrels grade of the source document; None: the check's grade
    max_verbatim_words: int = 10
    max_ngram_overlap: float = 0.75
    dup_cosine: float = 0.95
    max_doc_chars: int = 4000
    gen_output_tokens: int = 40  # per question, for the estimate

    def __post_init__(self) -> None:
        if self.per_doc < 1 or self.max_docs < 1:
            raise ValueError("per_doc and max_docs must be >= 1")
        if not 0 <= self.min_grade <= 3:
            raise ValueError("min_grade must lie in 0..3")
        if not 0 <= self.max_ngram_overlap <= 1 or not -1 <= self.dup_cosine <= 1:
            raise ValueError("max_ngram_overlap lies in [0, 1], dup_cosine in [-1, 1]")


@dataclass
class Candidate:
    qid: str
    text: str
    doc: SourceDoc
    reason: Optional[str] = None
    detail: str = ""
    check_grade: Optional[int] = None


@dataclass
class SynthResult:
    spec: SynthSpec
    sample: DocSample
    generator: Dict[str, str]
    checker: Dict[str, str]
    left_out_by_budget: int = 0
    planned_calls: int = 0
    estimated_input_tokens: int = 0
    estimated_cost: Optional[float] = None
    dry_run: bool = False
    generation_failed: int = 0  # documents whose questions could not be read or asked
    extra_ignored: int = 0  # questions beyond per_doc in an answer
    candidates: List[Candidate] = field(default_factory=list)
    reports: List[GradingReport] = field(default_factory=list)

    @property
    def generated(self) -> int:
        return len(self.candidates)

    @property
    def kept(self) -> List[Candidate]:
        return [c for c in self.candidates if c.reason is None]

    def dropped(self) -> Dict[str, int]:
        out = {r: 0 for r in DROP_REASONS}
        for c in self.candidates:
            if c.reason is not None:
                out[c.reason] += 1
        return out

    @property
    def complete(self) -> bool:
        return not self.generation_failed and not self.dropped()["check not answered"]

    def estimate_line(self) -> str:
        cost = f", est. ${self.estimated_cost:.2f}" if self.estimated_cost is not None else ""
        return (
            f"estimate: {len(self.sample.docs)} document(s), up to {self.planned_calls} new request(s) "
            f"(generation + check), ~{self.estimated_input_tokens:,} input tokens{cost}"
        )

    def plan(self) -> str:
        """The sample, the budget cut and the estimate (printed before the first request)."""
        lines = [self.sample.summary(self.spec.stratify)]
        if self.left_out_by_budget:
            lines.append(f"  {self.left_out_by_budget} sampled document(s) left out by --max-calls")
        return "\n".join(lines + [self.estimate_line()])

    def summary(self) -> str:
        if self.dry_run:
            return "dry run: nothing asked"
        lines = [f"  {r.summary()}" for r in self.reports]
        dropped = self.dropped()
        lines.append(
            f"{self.generated} question(s) generated: {len(self.kept)} kept, "
            f"{sum(dropped.values())} dropped (" + ", ".join(f"{k}: {v}" for k, v in dropped.items()) + ")"
        )
        if self.extra_ignored:
            lines.append(
                f"  {self.extra_ignored} question(s) beyond {self.spec.per_doc} per document ignored"
            )
        if self.generation_failed:
            lines.append(
                f"  {self.generation_failed} document(s) got no questions (failed; rerun to ask again)"
            )
        return "\n".join(lines)

    def outputs(self) -> Tuple[Dict[str, str], Dict[str, Dict[str, int]], Dict[str, Tuple[str, ...]]]:
        """(queries, qrels, tags) of the kept questions."""
        from ..sample import stratum_tag

        queries, qrels, tags = {}, {}, {}
        for c in self.kept:
            queries[c.qid] = c.text
            grade = self.spec.grade if self.spec.grade is not None else int(c.check_grade or 0)
            qrels[c.qid] = {c.doc.doc_id: grade}
            t = [SYNTHETIC_TAG]
            if self.spec.stratify and c.doc.stratum:
                t.append(stratum_tag(self.spec.stratify, c.doc.stratum))
            tags[c.qid] = tuple(t)
        return queries, qrels, tags


def synthetic_id(text: str) -> str:
    return "syn-" + hashlib.sha1(normalise(text).encode("utf-8")).hexdigest()[:12]


def judge_identity(judge: Judge, prompt_sha: str) -> Dict[str, str]:
    return {"id": judge.id, "prompt_version": judge.prompt_version, "prompt_sha256": prompt_sha}


@dataclass
class Asking:
    """How the judges are asked: the shared cache and ``grade_pairs``' keywords."""

    cache: JudgeCache
    options: Mapping[str, Any] = field(default_factory=dict)
    prices: Optional[Prices] = None


def synthesize(
    documents: Sequence[Any],
    generator: Judge,
    checker: Judge,
    prompt: GenerationPrompt,
    asking: Asking,
    spec: SynthSpec = SynthSpec(),
    *,
    existing: Mapping[str, str] = {},
    embedder: Any = None,
    dry_run: bool = False,
    on_plan: Any = None,
) -> SynthResult:
    """Run the steps of the module docstring; ``existing`` are the suite's queries (id ->
    text), which new questions must not duplicate. ``on_plan(result)`` is called with the
    sample and the estimate before the first request (the command prints them)."""
    sample = sample_documents(
        documents, max_docs=spec.max_docs, seed=spec.seed, stratify=spec.stratify, min_words=spec.min_words
    )
    check_sha = hashlib.sha256(getattr(getattr(checker, "prompt", None), "text", "").encode()).hexdigest()
    result = SynthResult(
        spec,
        sample,
        judge_identity(generator, prompt.sha256),
        judge_identity(checker, check_sha),
        dry_run=dry_run,
    )
    gen_pairs = [_generation_pair(d, prompt, spec) for d in sample.docs]
    gen_pairs = _budget(gen_pairs, generator, checker, asking, spec, result)
    asked = {p.doc_id for p in gen_pairs}
    sample.docs = [d for d in sample.docs if d.doc_id in asked]
    _estimate(gen_pairs, generator, checker, asking, spec, result)
    if on_plan is not None:
        on_plan(result)
    if dry_run:
        return result
    gen = grade_pairs(
        gen_pairs, generator, cache=asking.cache, parse=parse_questions, max_doc_chars=None, **asking.options
    )
    result.reports.append(gen)
    _collect(sample.docs, gen, spec, result)
    seen = {normalise(t) for t in existing.values()}
    _screen(result.candidates, seen, spec)
    _check(result, checker, asking, spec)
    if embedder is not None:
        _embedding_duplicates(result.candidates, existing, embedder, spec)
    return result


def _generation_pair(doc: SourceDoc, prompt: GenerationPrompt, spec: SynthSpec) -> JudgePair:
    text = doc.as_text()[: spec.max_doc_chars]
    return JudgePair(doc.doc_id, prompt.render(text, spec.per_doc), doc.doc_id, text)


def _cached(judge: Judge, cache: JudgeCache, query: str, document: str) -> Optional[Dict[str, Any]]:
    return cache.get(JudgeCache.key(judge.id, judge.prompt_version, query, document))


def _calls_for(pair: JudgePair, generator: Judge, checker: Judge, asking: Asking, spec: SynthSpec) -> int:
    """New requests a document costs: its generation unless cached, and one check per
    question (exactly, when the questions are cached; else ``per_doc``)."""
    hit = _cached(generator, asking.cache, pair.query, pair.document)
    if hit is None:
        return 1 + spec.per_doc
    doc = pair.document[: spec.max_doc_chars]
    questions = (hit.get("value") or [])[: spec.per_doc]
    return sum(
        1
        for q in questions
        if _screened(q, pair.document, spec) is None and _cached(checker, asking.cache, q, doc) is None
    )


def _screened(question: str, document: str, spec: SynthSpec) -> Optional[Tuple[str, str]]:
    """(reason, detail) when a question fails a screen that needs no request and no other
    question (too short, verbatim), else None."""
    if len(normalise(question).split()) < 3:
        return "too short", ""
    run, share = verbatim(question, document)
    if run > spec.max_verbatim_words or share > spec.max_ngram_overlap:
        return "verbatim", f"{run} words in a row, {share:.0%} of its 3-grams from the document"
    return None


def _budget(
    pairs: List[JudgePair],
    generator: Judge,
    checker: Judge,
    asking: Asking,
    spec: SynthSpec,
    result: SynthResult,
) -> List[JudgePair]:
    """The documents, in sample order, whose new requests fit ``max_calls``."""
    kept: List[JudgePair] = []
    total = 0
    for p in pairs:
        calls = _calls_for(p, generator, checker, asking, spec)
        if spec.max_calls is not None and total + calls > spec.max_calls:
            result.left_out_by_budget += 1
            continue
        total += calls
        kept.append(p)
    result.planned_calls = total
    return kept


def _estimate(
    pairs: List[JudgePair],
    generator: Judge,
    checker: Judge,
    asking: Asking,
    spec: SynthSpec,
    result: SynthResult,
) -> None:
    """Input tokens (characters / 4) and cost of the planned requests."""
    check_prompt = getattr(checker, "prompt", None)
    chars = out = 0
    for p in pairs:
        if _cached(generator, asking.cache, p.query, p.document) is None:
            chars += len(p.query)
            out += spec.per_doc * spec.gen_output_tokens
            probe = "x" * 80  # a question of typical length
            rendered = (
                check_prompt.render(probe, p.document[: spec.max_doc_chars]) if check_prompt else p.document
            )
            chars += spec.per_doc * len(rendered)
            out += spec.per_doc * int(getattr(checker, "estimated_output_tokens", 2))
    result.estimated_input_tokens = chars // 4
    if asking.prices is not None:
        result.estimated_cost = asking.prices.cost(result.estimated_input_tokens, out)


def _collect(docs: Sequence[SourceDoc], gen: GradingReport, spec: SynthSpec, result: SynthResult) -> None:
    for d in docs:
        questions = gen.grades.get((d.doc_id, d.doc_id))
        if not questions:
            result.generation_failed += 1
            continue
        result.extra_ignored += max(0, len(questions) - spec.per_doc)
        for q in questions[: spec.per_doc]:
            result.candidates.append(Candidate(synthetic_id(q), q, d))


def _screen(cands: Sequence[Candidate], seen: set, spec: SynthSpec) -> None:
    """The reasons found without a request: too short, duplicate text, verbatim."""
    for c in cands:
        key = normalise(c.text)
        if len(key.split()) < 3:
            c.reason = "too short"
            continue
        if key in seen:
            c.reason = "duplicate text"
            continue
        seen.add(key)
        screened = _screened(c.text, c.doc.as_text(), spec)
        if screened is not None:
            c.reason, c.detail = screened


def _check(result: SynthResult, checker: Judge, asking: Asking, spec: SynthSpec) -> None:
    todo = [c for c in result.candidates if c.reason is None]
    pairs = [JudgePair(c.qid, c.text, c.doc.doc_id, c.doc.as_text()) for c in todo]
    if not pairs:
        return
    options = dict(asking.options)
    options["max_doc_chars"] = spec.max_doc_chars
    report = grade_pairs(pairs, checker, cache=asking.cache, **options)
    result.reports.append(report)
    for c in todo:
        g = report.grades.get((c.qid, c.doc.doc_id))
        if g is None:
            c.reason = "check not answered"
        elif g < spec.min_grade:
            c.reason, c.check_grade = "failed check", g
            c.detail = f"graded {g} < {spec.min_grade}"
        else:
            c.check_grade = g


def _embedding_duplicates(
    cands: Sequence[Candidate], existing: Mapping[str, str], embedder: Any, spec: SynthSpec
) -> None:
    """Greedy, in order: a question whose cosine to a kept one (or a suite query) exceeds
    ``dup_cosine`` is a duplicate."""
    import numpy as np

    live = [c for c in cands if c.reason is None]
    if not live:
        return
    texts = list(existing.values()) + [c.text for c in live]
    ids = list(existing) + [c.qid for c in live]
    vecs = np.asarray(embedder.embed_queries(ids, texts), dtype=np.float64)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    kept_rows = list(range(len(existing)))
    for i, c in enumerate(live, start=len(existing)):
        if kept_rows:
            sims = vecs[kept_rows] @ vecs[i]
            j = int(np.argmax(sims))
            if sims[j] > spec.dup_cosine:
                c.reason = "duplicate embedding"
                c.detail = f"cosine {sims[j]:.3f} to {ids[kept_rows[j]]!r}"
                continue
        kept_rows.append(i)
