"""Judgments in and out of the tools teams already keep them in (issue #34): Quepid, RRE,
OpenSearch's Search Relevance Workbench and ``_rank_eval``.

``model`` (what every format reads into, with the one set of checks), ``shapes`` (a tool's JSON
shape checked), ``files`` (bounded reading, the folder ``judge import`` writes), one module per
tool (``quepid``, ``quepid_book``, ``rre``, ``srw``, ``rank_eval``) and ``registry`` (the formats
by name). ``rank_eval.rank_eval_body`` turns a suite's judgments and retriever into a
``_rank_eval`` body.
"""
