"""Fusion of rankings with Elasticsearch's and OpenSearch's exact semantics (pure, no I/O).

- ``config``: ``FusionConfig`` (RRF, weighted, linear) and its validation, ``fusion_warnings``.
- ``semantics``: ``fuse`` / ``fuse_runs`` (one query at a time), the engines' rules in one place.
- ``replay``: every fusion variant of a sweep on whole matrices, equal to ``fuse_runs``.
- the arithmetic, written once on arrays and read by both: ``candidates`` (the layout),
  ``scores`` (``FusedScores``), ``normalize``, ``combine``, ``rrf``, ``javafloat``.
"""
