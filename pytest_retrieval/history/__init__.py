"""The run history (issue #37): one run record per pytest session, kept in a store (a SQLite
file, or an index in a team's own Elasticsearch or OpenSearch), read back by ``pytest-retrieval
history`` and by the gates that judge a run against a stored reference.

* ``record.py``: the run record (the JSON report plus where and when it ran).
* ``store.py``: the ``HistoryStore`` protocol every store implements, and ``open_store(url)``.
"""
