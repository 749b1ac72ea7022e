"""Statistics over measurements (pure, no I/O).

``distributions`` (normal and Student t without scipy), ``resampling`` (what the bootstraps
share), ``paired`` (paired tests and Holm's correction: the baseline gate), ``latency`` (the
timing summary, percentile intervals, the A/B ratio), ``power`` (the smallest detectable drop)
and ``abstention`` (unanswerable queries).
"""
