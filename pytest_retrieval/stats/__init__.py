"""Statistics over measurements (pure, no I/O).

``distributions`` (normal and Student t without scipy), ``resampling`` (what the bootstraps
share), ``paired`` (the paired tests of the baseline gate), ``strata`` (the gate per
stratum), ``multiple_testing`` (Holm's correction), ``latency`` (the
timing summary, percentile intervals, the A/B ratio), ``power`` (the smallest detectable drop)
and ``abstention`` (unanswerable queries).
"""
