"""Running a suite, in the order the data flows.

- ``plan``: what a run works with: the judgment set, the backend, leaf specs, the stage plan.
- ``shared``: a suite's backend, built once per session for its items and fixtures.
- ``runner``: ``SuiteRunner``: every retriever over the queries, scored (quality pass).
- ``selection``: which queries a run sends (judged, unanswerable, golden).
- ``vectors``: the suite's embedder, and the queries and documents embedded.
- ``passes``: the quality pass over the stage plan, and the exact kNN pass.
- ``scoring``: one retriever's evaluation, abstention and stage windows.
- ``cutoffs``: the ``@k`` of metrics and floors, and the depth a run retrieves to.
- ``integrity``: checks of the data a run judged (absent documents, self hits, query sets).
- ``security``: warnings about how a suite talks to its engine.
- ``latency``: the latency and A/B latency passes.
- ``results``: ``Retrieval`` and ``SuiteResult``, what the gates and reports read.
- ``hits``: ``Hits``, a ranking as a test reads it.
- ``retriever`` / ``queries``: the ``retrieval_retriever`` fixture's ``Retriever`` and ``retrieval_queries``.
- ``export``: the runs of a suite written as TREC run files (``--retrieval-runs``).
"""
