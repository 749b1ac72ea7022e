"""OpenSearch's combination of one document's normalised scores, by hand."""

from __future__ import annotations

from pytest_retrieval.fusion.combine import combine_opensearch

from .helpers import f32


def test_os_combination_missing_documents():
    # scores as the combiner sees them: 0.0 = absent from that sub-query
    assert combine_opensearch([1.0, 0.0], "arithmetic_mean") == 0.5  # missing counts as 0
    assert combine_opensearch([1.0, 0.0], "geometric_mean") == 1.0  # missing skipped
    assert combine_opensearch([1.0, 0.0], "harmonic_mean") == 1.0  # missing skipped
    assert combine_opensearch([0.0, 0.0], "geometric_mean") == 0.0
    assert combine_opensearch([0.0, 0.0], "harmonic_mean") == 0.0
    assert combine_opensearch([0.5, 1.0], "harmonic_mean") == f32(2 / 3)
