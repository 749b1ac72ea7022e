"""What kind of input each surface is, and so which threats it faces (issue #32, section 6).

``test_surfaces.py`` enumerates the surfaces from the code (every YAML key path of the schema,
every command-line option, every pytest option and ini key) and by hand (the files and formats).
This module declares each surface's *kind*; a kind names the threat classes its surfaces face,
and ``test_surface_threats.py`` generates the cases of each class (Hypothesis, fixed seeds).

The kind is declared, never guessed when the tests run:

* ``yaml``: derived from the schema's type where the type says it all (an integer or a number is
  a ``number``; a boolean or an enumeration a ``choice``; a mapping or a list a ``structure``);
  every key whose type is a string (or a mix) is in ``YAML_KINDS``, written here;
* ``cli``: a flag (``store_true``), a closed choice or a number parser (``integer``, ``number``,
  ``positive``, ``fraction``) is derived from the argparse action; every other option and
  positional is in ``CLI_KINDS``;
* ``pytest``, ``ini``, ``file`` and ``format``: all written here.

A new surface with no declared kind fails ``test_every_surface_declares_its_kind``: it declares
one (and inherits that kind's threats) before it ships.
"""

from __future__ import annotations

import argparse
from typing import Dict, List, Tuple

# kind -> what it is (docs/explanation/security.md lists them)
KINDS: Dict[str, str] = {
    "path": "text that becomes a path the plugin reads",
    "output": "a path the plugin writes",
    "url": "text that becomes a URL or a part of one",
    "shell": "text that becomes a shell word (evaluate.sh)",
    "markup": "text that reaches a Markdown or HTML report",
    "number": "a number",
    "choice": "one of a closed set (a flag, an enumeration)",
    "secret": "a value that may carry a credential",
    "code": "code from a third party (module:function, a model, a backend type)",
    "network": "an expression read out of a network answer",
    "data": "a file of data from a third party",
    "rendering": "an output format (what the plugin writes for people and tools)",
    "text": "plain text",
    "structure": "a mapping or a list of further keys",
}

# threat class -> the property every case of that class asserts
THREATS: Dict[str, str] = {
    "one-line": "bad input is one clear line (exit 2 or a ConfigError), never a traceback",
    "refused": "a value that makes the setting meaningless is refused, never a pass on bad data",
    "no-leak": "a planted secret reaches no output (messages, files, reports)",
    "contained": "a folder, FIFO, device or NUL is refused without blocking; a name never leaves its folder",
    "escaped": "markup is escaped, shell words quoted, URL parts percent-encoded where they land",
}

KIND_THREATS: Dict[str, Tuple[str, ...]] = {
    "path": ("one-line", "contained"),
    "output": ("one-line", "contained"),
    "url": ("one-line", "escaped"),
    "shell": ("one-line", "escaped"),
    "markup": ("one-line", "escaped"),
    "number": ("one-line", "refused"),
    "choice": ("one-line", "refused"),
    "secret": ("one-line", "no-leak"),
    "code": ("one-line", "refused"),
    "network": ("one-line", "refused"),
    "data": ("one-line", "contained"),
    "rendering": ("escaped", "no-leak"),
    "text": ("one-line",),
    "structure": ("one-line",),
}

# --- yaml: the keys whose schema type does not say their kind --------------------------------

_PROVIDER = ("path", "code")  # a model: a file the plugin reads, and code/data it did not write
YAML_KINDS: Dict[str, Tuple[str, ...]] = {
    # read from disk
    "include": ("path",),
    "judgments.beir": ("path",),
    "judgments.corpus": ("path",),
    "judgments.qrels": ("path",),
    "judgments.queries": ("path",),
    "judgments.canary": ("path",),
    "owner": ("text",),  # CODEOWNERS names, checked by pattern (config/ownership.py)
    "retrievers.*.analyzer": ("text",),
    "retrievers.*.analyzer.*": ("text",),
    "judgments.tags": ("path",),
    "backend.connection.ca_certs": ("path",),
    "embedder.documents": ("path",),
    "embedder.document_ids": ("path",),
    "embedder.queries": ("path",),
    "embedder.query_ids": ("path",),
    "retrievers.*.sparse_encoder.documents": ("path",),
    "retrievers.*.sparse_encoder.document_ids": ("path",),
    "retrievers.*.sparse_encoder.queries": ("path",),
    "retrievers.*.sparse_encoder.query_ids": ("path",),
    "retrievers.*.sparse_encoder.vocabulary": ("path",),
    "embedder.model": _PROVIDER,
    "retrievers.*.reranker.model": _PROVIDER,
    "retrievers.*.sparse_encoder.model": _PROVIDER,
    # read, and written by --retrieval-baseline-update
    "regression.baseline": ("path", "output"),
    "latency.baseline": ("path", "output"),
    # credentials, and text that may carry one through ${VAR}
    "backend.connection.api_key": ("secret",),
    "backend.connection.password": ("secret",),
    "backend.connection.username": ("secret",),
    "backend.connection.hosts": ("secret", "url"),
    "backend.request.headers.*": ("secret",),
    "backend.request.url": ("secret", "url"),
    "backend.batch.url": ("secret", "url"),
    "retrievers.*.reranker.api_key": ("secret",),
    "retrievers.*.reranker.base_url": ("secret", "url"),
    "retrievers.*.params.*": ("secret", "url"),
    "retrievers.*.reranker.api_key_env": ("text",),
    # code the plugin calls or loads
    "backend.type": ("code",),
    "backend.function": ("code",),
    "backend.batch_function": ("code",),
    "embedder.function": ("code",),
    "embedder.query_function": ("code",),
    "retrievers.*.reranker.function": ("code",),
    "retrievers.*.sparse_encoder.function": ("code",),
    "retrievers.*.sparse_encoder.query_function": ("code",),
    # JMESPath read out of a service's answer
    "backend.response.hits": ("network",),
    "backend.response.id": ("network",),
    "backend.response.score": ("network",),
    "backend.response.took": ("network",),
    "backend.batch.answers": ("network",),
    # names and texts that reach the reports, file names and evaluate.sh
    "suite": ("markup", "shell"),
    "description": ("text",),  # not in the reports (MARKED_SUITE shows it)
    "retrievers.*": ("structure", "markup", "shell"),
    "expectations.name": ("markup",),
    "expectations.query": ("markup", "url"),
    "expectations.query_id": ("markup",),
    "expectations.first": ("markup",),
    "judgments.inline.id": ("markup",),
    "judgments.inline.text": ("markup", "url"),
    "judgments.documents.id": ("markup",),
    "judgments.documents.text": ("text",),  # not in the reports
    "judgments.documents.title": ("markup",),
    "unanswerable.tag": ("text",),
    # a number or a word
    "latency.max_queries": ("number",),
    "latency.repetitions": ("number",),
    # a run of the history named by id, tag or commit (looked up in the store, never a path)
    "regression.reference.run": ("text",),
    # plain text handed to a library or an engine
    "backend.connection.preference": ("text",),
    "backend.index.name": ("text",),
    "backend.index.vector_field": ("text",),
    "backend.index.id_field": ("text",),
    "retrievers.*.field": ("text",),
    "retrievers.*.pipeline": ("text",),
    "judgments.split": ("text",),
    "embedder.device": ("text",),
    "embedder.id": ("text",),
    "embedder.pooling": ("text",),
    "embedder.document_prefix": ("text",),
    "embedder.query_prefix": ("text",),
    "retrievers.*.reranker.activation": ("text",),
    "retrievers.*.reranker.device": ("text",),
    "retrievers.*.sparse_encoder.device": ("text",),
    "retrievers.*.reranker.id": ("text",),
    "retrievers.*.reranker.pooling": ("text",),
    "retrievers.*.reranker.document_prefix": ("text",),
    "retrievers.*.reranker.query_prefix": ("text",),
    "retrievers.*.sparse_encoder.id": ("text",),
    "retrievers.*.sparse_encoder.document_prefix": ("text",),
    "retrievers.*.sparse_encoder.query_prefix": ("text",),
}


def yaml_kind_from_schema(types: set, enum: bool) -> Tuple[str, ...]:
    """The kind a key's schema type says all of, or ``()`` when it must be declared."""
    types = set(types) - {"null"}
    if types and types <= {"integer", "number"}:
        return ("number",)
    if types == {"boolean"} or (types == {"string"} and enum):
        return ("choice",)
    if types and types <= {"object", "array"}:
        return ("structure",)
    return ()


# --- cli: the options and positionals argparse does not type ----------------------------------

_NUMBER_PARSERS = {"integer", "number", "positive", "fraction", "int", "_gains", "grade_range", "_grade"}
CLI_KINDS: Dict[str, Tuple[str, ...]] = {
    "evaluate <qrels>": ("path",),
    "evaluate <run>": ("path",),
    "evaluate --metric": ("text",),
    "evaluate --grade-map": ("text",),
    "fuse <runs>": ("path",),
    "fuse --norm": ("choice",),
    "fuse --weights": ("number",),
    "fuse --tag": ("text",),
    "sweep <suite>": ("path",),
    "sweep --retriever": ("text",),
    "sweep --tune-split": ("text",),
    "sweep --objective": ("text",),
    "sweep --rank-constants": ("number",),
    "sweep --windows": ("number",),
    "sweep --override": ("path",),
    "judge clicks <log>": ("path",),
    "judge clicks --qrels-out": ("output",),
    "judge clicks --queries-out": ("output",),
    "judge clicks --query-texts": ("path",),
    "judge clicks --stats-out": ("output",),
    "judge clicks --grades": ("text",),
    "judge clicks --column": ("text",),
    "judge llm <pairs>": ("path",),
    "judge llm --out": ("output",),
    "judge llm --model": ("text",),
    "judge llm --function": ("code",),
    "judge llm --base-url": ("secret",),
    "judge llm --api-key-env": ("text",),
    "judge llm --anthropic-version": ("text",),
    "judge llm --judge-id": ("text",),
    "judge llm --prompt-version": ("text",),
    "judge llm --prompt-file": ("path",),
    "judge llm --cache": ("output",),
    "judge llm --failures": ("output",),
    "judge sample <log>": ("path",),
    "judge sample --out": ("output",),
    "judge sample --tags-out": ("output",),
    "judge sample --stratify": ("text",),
    "judge sample --quota": ("text",),
    "judge sample --since": ("text",),
    "judge sample --until": ("text",),
    "judge sample --column": ("text",),
    "judge synth --suite": ("path",),
    "judge synth --corpus": ("path",),
    "judge synth --out": ("output",),
    "judge synth --qrels-out": ("output",),
    "judge synth --tags-out": ("output",),
    "judge synth --provenance": ("output",),
    "judge synth --stratify": ("text",),
    "judge synth --embedder-model": ("path",),
    "judge synth --model": ("text",),
    "judge synth --function": ("code",),
    "judge synth --base-url": ("secret",),
    "judge synth --api-key-env": ("text",),
    "judge synth --anthropic-version": ("text",),
    "judge synth --judge-id": ("text",),
    "judge synth --prompt-version": ("text",),
    "judge synth --prompt-file": ("path",),
    "judge synth --cache": ("output",),
    "judge synth --check-model": ("text",),
    "judge synth --check-function": ("code",),
    "judge synth --check-base-url": ("secret",),
    "judge synth --check-api-key-env": ("text",),
    "judge synth --check-judge-id": ("text",),
    "judge synth --check-prompt-version": ("text",),
    "judge synth --check-prompt-file": ("path",),
    "judge synth --failures": ("output",),
    "judge pool <suites>": ("path",),
    "judge pool --out": ("output",),
    "judge pool --retrievers": ("text",),
    "judge pool --judged": ("path",),
    "judge pool --from-diff": ("path",),
    "judge pool --corpus": ("path",),
    "judge pool --scale": ("text",),
    "judge import <files>": ("path",),
    "judge import --qrels": ("path",),
    "judge import --out": ("output",),
    "judge import --pool": ("path",),
    "judge import --grade-map": ("text",),
    "judge export <source>": ("path",),
    "judge export --out": ("output",),
    "judge export --query-set": ("output",),
    "judge export --retriever": ("text",),
    "judge export --index": ("text",),
    "judge export --metric": ("text",),
    "judge agree <a>": ("path",),
    "judge agree <b>": ("path",),
    "judge agree --names": ("text",),
    "judge agree --tags": ("path",),
    "judge agree --tag": ("text",),
    "report <report>": ("path",),
    "report --markdown": ("output",),
    "report --html": ("output",),
    "report --openmetrics": ("output",),
    "compare <a>": ("path",),
    "compare <b>": ("path",),
    "compare --metric": ("text",),
    "compare --markdown": ("output",),
    # the run history (issue #37): --store is a SQLite file read (or an engine index URL);
    # names, dates and run references are filters matched against what is stored; the
    # commit URL template is checked by its parser (its escaping in the page: test_history_views)
    **{f"history {c} --store": ("path",) for c in ("list", "trend", "compare", "drift", "prune")},
    **{
        f"history {c} --{o}": ("text",)
        for c in ("list", "trend")
        for o in ("suite", "branch", "since", "until")
    },
    **{f"history drift --{o}": ("text",) for o in ("suite", "branch", "retriever", "metric")},
    "history trend --retriever": ("text",),
    "history trend --metric": ("text",),
    "history trend --commit-url": ("text",),
    "history trend --html": ("output",),
    "history compare <run_a>": ("text",),
    "history compare <run_b>": ("text",),
    "history compare --metric": ("text",),
    "history compare --markdown": ("output",),
    "history prune --before": ("text",),
}


def cli_kind_from_action(action: argparse.Action) -> Tuple[str, ...]:
    """The kind an argparse action says all of, or ``()`` when it must be declared."""
    if not action.option_strings:
        return ()
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._VersionAction)):
        return ("choice",)
    if action.choices:
        return ("choice",)
    if getattr(action.type, "__name__", None) in _NUMBER_PARSERS:
        return ("number",)
    return ()


# --- pytest options and ini keys: each declared ----------------------------------------------

PYTEST_KINDS: Dict[str, Tuple[str, ...]] = {
    "--retrieval-backend": ("choice",),
    "--retrieval-profile": ("choice",),
    "--retrieval-baseline-update": ("choice",),
    "--retrieval-no-latency": ("choice",),
    "--retrieval-no-step-summary": ("choice",),
    "--retrieval-rank-eval": ("choice",),
    "--retrieval-override": ("path",),
    "--retrieval-report": ("output",),
    "--retrieval-export-unjudged": ("output",),
    "--retrieval-runs": ("output",),
    "--retrieval-markdown": ("output",),
    "--retrieval-html": ("output",),
    "--retrieval-openmetrics": ("output",),
    "--retrieval-history": ("output",),  # the store a run appends to (and reads the last runs of)
    "--retrieval-history-last": ("number",),
    "--retrieval-history-strict": ("choice",),
    "--retrieval-history-tag": ("text",),
    "--retrieval-stability-against": ("text",),  # a stored run's name (issue #33)
}
INI_KINDS: Dict[str, Tuple[str, ...]] = {
    "retrieval_backend": ("choice",),
    "retrieval_profile": ("choice",),
    "retrieval_baseline_update": ("choice",),
    "retrieval_no_latency": ("choice",),
    "retrieval_no_step_summary": ("choice",),
    "retrieval_rank_eval": ("choice",),
    "retrieval_override": ("path",),
    "retrieval_report": ("output",),
    "retrieval_export_unjudged": ("output",),
    "retrieval_runs": ("output",),
    "retrieval_markdown": ("output",),
    "retrieval_html": ("output",),
    "retrieval_openmetrics": ("output",),
    "retrieval_history": ("output",),
    "retrieval_history_last": ("number",),
    "retrieval_history_strict": ("choice",),
    "retrieval_history_tag": ("text",),
    "retrieval_stability_against": ("text",),
}

# --- files and formats: each declared --------------------------------------------------------

FILE_KINDS: Dict[str, Tuple[str, ...]] = {
    "file:suite": ("data",),
    "file:team": ("data",),
    "file:override": ("data",),
    "file:qrels": ("data",),
    "file:queries": ("data",),
    "file:corpus": ("data",),
    "file:tags": ("data",),
    "file:run": ("data",),
    "file:beir": ("data",),
    "file:baseline": ("data",),
    "file:json-report": ("data",),
    "file:annotations": ("data",),
    "file:click-log": ("data",),
    "file:llm-pairs": ("data",),
    "file:llm-cache": ("data",),
    "file:prompt": ("data",),
    "file:runs-dir": ("data",),
    "file:unjudged-queue": ("data",),
    "file:sparse-jsonl": ("data",),
    "file:sparse-npz": ("data",),
    "file:query-log": ("data",),
    "file:synth-prompt": ("data",),
    "file:synth-outputs": ("data",),
    "file:sample-outputs": ("data",),
    "file:history": ("data",),
    # a tool's judgments (issue #34): judge import --from quepid|rre|srw|rank-eval
    "file:quepid": ("data",),
    "file:rre": ("data",),
    "file:srw": ("data",),
    "file:rank-eval": ("data",),
}
FORMAT_KINDS: Dict[str, Tuple[str, ...]] = {
    f: ("rendering",)
    for f in (
        "format:terminal",
        "format:json",
        "format:markdown",
        "format:html",
        "format:openmetrics",
        "format:junit",
        "format:step-summary",
        "format:run-files",
        "format:evaluate.sh",
    )
}


def threats_of(kinds: Tuple[str, ...]) -> List[str]:
    """The threat classes a surface of these kinds faces, each once, in ``THREATS`` order."""
    faced = {t for k in kinds for t in KIND_THREATS[k]}
    return [t for t in THREATS if t in faced]


def kind_pairs(kinds: Dict[str, Tuple[str, ...]]) -> List[Tuple[str, str, str]]:
    """(surface, kind, threat) for every threat each kind of each surface faces."""
    return [(s, k, t) for s, ks in sorted(kinds.items()) for k in ks for t in KIND_THREATS[k]]
