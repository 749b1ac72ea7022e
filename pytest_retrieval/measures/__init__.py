"""Pure scoring of runs (no I/O).

- ``metrics``: metric names and ``evaluate`` (equal to trec_eval).
- ``fusion``: ``fuse`` / ``fuse_runs`` with Elasticsearch's and OpenSearch's exact arithmetic.
- ``parity``: an engine's ranking against the one computed offline.
"""
