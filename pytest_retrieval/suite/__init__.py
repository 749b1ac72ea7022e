"""A suite file, from YAML to results, in the order the data flows.

- ``yamlio``: YAML with the file and line of every value, ``${VAR:-default}``, includes.
- ``schema``: the pydantic schema of a suite file (published as ``suite.schema.json``).
- ``load``: ``load_suite`` -> ``Suite`` (merged, validated, floors parsed, retriever graph ordered).
- ``judgments``: readers for queries, qrels, corpus, tags and TREC runs; ``JudgmentSet``.
- ``build``: what a run works with: the judgment set, the backend, leaf specs, the stage plan.
- ``runner``: ``SuiteRunner``: every retriever over the queries, scored (quality pass).
- ``latency``: the latency and A/B latency passes.
- ``result``: ``SuiteResult``, what the gates and reports read.
"""
