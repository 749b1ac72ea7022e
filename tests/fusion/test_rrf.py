"""OpenSearch's per-list RRF score (BigDecimal HALF_UP rounding), by hand."""

from __future__ import annotations

from fractions import Fraction

from pytest_retrieval.fusion.rrf import opensearch_rrf_score

from .helpers import f32, f32_exact


def test_rrf_opensearch_rounds_to_ten_decimals_half_up_then_float():
    # 1/82 = 0.01219512195121951... -> 0.0121951220 (HALF_UP at 10 decimals) -> float
    assert opensearch_rrf_score(60, 22) == f32_exact(Fraction("0.0121951220"))
    assert opensearch_rrf_score(60, 22) == 0.012195122428238392
    assert f32(1 / 82) == 0.012195121496915817  # what plain float math (ES) gives
    # 1/120 = 0.008333333333... -> 0.0083333333 (rounded down) -> 0.00833333283662796
    assert opensearch_rrf_score(60, 60) == 0.00833333283662796
    assert f32(1 / 120) == 0.008333333767950535
    # exact half: 1/2048 = 0.00048828125 -> HALF_UP gives ...813, HALF_EVEN would give ...812
    assert opensearch_rrf_score(2000, 48) == f32_exact(Fraction("0.0004882813"))
    assert opensearch_rrf_score(2000, 48) != f32_exact(Fraction("0.0004882812"))
