"""Fusion of rankings with Elasticsearch's and OpenSearch's exact semantics (pure, no I/O).

- ``semantics``: ``fuse`` / ``fuse_runs`` and ``FusionConfig`` (RRF, weighted, linear).
- ``replay``: every fusion variant of a sweep on whole matrices, bit-identical to ``fuse_runs``.
"""
