"""Pure scoring of runs (no I/O).

- ``registry``: every measure declared once (names, trec_eval names, cutoff, formula, doc).
- ``metrics``: metric names and ``evaluate`` (equal to trec_eval).
- ``formulas``: each measure's formula, vectorised over every judged hit.
- ``columnar``: runs and qrels as columns, what ``evaluate`` scores.
- ``ann``: exact top k and ``ann_recall@k``.
- ``parity``: an engine's ranking against the one computed offline.
"""
