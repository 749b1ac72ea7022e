"""Fusion sweeps: tune a fusion retriever offline from candidates fetched once.

- ``grid``: the variants (``SweepGrid``), the untuned defaults, their labels.
- ``selection``: tuning / evaluation splits, the choice of the best, ``SweepResult``, snippets.
- ``sweep``: ``sweep`` (grid -> replay -> selection), pure.
- ``run``: ``run_sweep`` for a suite (fetch once through its backend) and the OpenSearch check.
"""
