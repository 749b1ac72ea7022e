"""Running a suite, in the order the data flows.

- ``plan``: what a run works with: the judgment set, the backend, leaf specs, the stage plan.
- ``shared``: a suite's backend, built once per session for its items and fixtures.
- ``runner``: ``SuiteRunner``: every retriever over the queries, scored (quality pass).
- ``integrity``: checks of the data a run judged (absent documents, self hits, query sets).
- ``latency``: the latency and A/B latency passes.
- ``results``: ``SuiteResult``, what the gates and reports read.
- ``retriever`` / ``queries``: the ``retrieval_retriever`` fixture's ``Retriever`` and ``retrieval_queries``.
- ``export``: the runs of a suite written as TREC run files (``--retrieval-runs``).
"""
