"""Pure scoring of runs (no I/O).

- ``metrics``: metric names and ``evaluate`` (equal to trec_eval).
- ``parity``: an engine's ranking against the one computed offline.
"""
