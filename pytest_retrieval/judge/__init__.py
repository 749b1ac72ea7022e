"""Judgment authoring: where the labels of a judgment set come from, and whether to trust them.

* :mod:`.clicks`: a click log -> graded qrels and a queries file (optional position-bias
  correction).
* :mod:`.llm`: an LLM judge grades (query, document) pairs 0-3 with a versioned prompt,
  strict parsing, a resumable disk cache, a thread pool, a rate limit and retries (a
  package: prompts, parsing, judges, cache, rate limit and orchestration apart).
* :mod:`.sample`: a query set from a query log (random, top-n or PPS, seeded), with the
  normalisation, de-duplication and PII guard of :mod:`.querytext`, and strata with quotas.
* :mod:`.synth`: LLM-written questions for a seeded, stratified sample of documents, checked
  by a second judge, with every drop counted (through :mod:`.llm`'s judges, cache and
  retry loop).
* :mod:`.pool`: the unjudged top-k of every retriever of one or more suites, for people
  to grade.
* :mod:`.annotations`: the pooled pairs exported as annotation files, and the filled files
  read back with every grade validated.
* :mod:`.merge`: filled annotation files imported into qrels, with conflict reporting.
* :mod:`.files`: the one CSV/JSONL row reader of annotation files and click logs, and
  the qrels and queries writers.
* :mod:`.agreement`: kappa (plain, linear and quadratic weighted), exact and adjacent
  agreement and the confusion matrix between two label sources.
* ``pytest_retrieval.cli.judge``: ``pytest-retrieval judge clicks|llm|sample|synth|pool|import|agree``.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> submodule; imported on first use, so ``pytest-retrieval --help`` and the other
# commands do not pay for the LLM SDKs, threads and the judgment readers
_EXPORTS = {
    "Agreement": "agreement",
    "cohen_kappa": "agreement",
    "compare_qrels": "agreement",
    "ClickGrading": "clicks",
    "ClickJudgments": "clicks",
    "grade_clicks": "clicks",
    "stable_query_id": "clicks",
    "write_click_judgments": "clicks",
    "AnthropicJudge": "llm",
    "CallableJudge": "llm",
    "GradingReport": "llm",
    "Judge": "llm",
    "JudgeCache": "llm",
    "JudgePair": "llm",
    "OpenAICompatibleJudge": "llm",
    "Prices": "llm",
    "RetryPolicy": "llm",
    "grade_pairs": "llm",
    "make_judge": "llm",
    "parse_grade": "llm",
    "prompt_template": "llm",
    "Pool": "pool",
    "PoolPair": "pool",
    "pool_runs": "pool",
    "pool_suites": "pool",
    "SampleSpec": "sample",
    "sample_queries": "sample",
    "SynthSpec": "synth",
    "synthesize": "synth",
    "write_synth": "synth",
    "read_annotations": "annotations",
    "read_pairs": "annotations",
    "write_annotation_file": "annotations",
    "import_annotations": "merge",
    "merge_qrels": "merge",
    "write_qrels": "files",
    "write_queries": "files",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_EXPORTS))
