"""Per-engine score normalisations of one list, by hand."""

from __future__ import annotations

from pytest_retrieval.fusion.normalize import normalize_elasticsearch, normalize_opensearch

from .helpers import f32


def test_os_min_max_basic_and_floor():
    assert normalize_opensearch([4.0, 3.0, 2.0]) == [1.0, 0.5, f32(0.001)]


def test_os_min_max_constant_list_is_one():
    assert normalize_opensearch([2.5, 2.5, 2.5]) == [1.0, 1.0, 1.0]
    assert normalize_opensearch([7.0]) == [1.0]  # single document


def test_os_min_max_all_zero_list_is_floor_not_one():
    # max starts at Float.MIN_VALUE (2**-149 > 0), so max != min for an all-zero list
    assert normalize_opensearch([0.0, 0.0]) == [f32(0.001), f32(0.001)]


def test_os_min_max_negative_scores_quirk():
    # max = max(Float.MIN_VALUE, -1) = 2**-149 -> (-1 - -2) / (2**-149 + 2) = 0.5 in float
    assert normalize_opensearch([-1.0, -2.0]) == [0.5, f32(0.001)]


def test_os_l2():
    assert normalize_opensearch([3.0, 4.0], "l2") == [f32(0.6), f32(0.8)]
    assert normalize_opensearch([0.0, 0.0], "l2") == [0.0, 0.0]
    assert normalize_opensearch([], "l2") == []


def test_es_minmax_no_floor_and_constant_list():
    assert normalize_elasticsearch([4.0, 3.0, 2.0], "minmax") == [1.0, 0.5, 0.0]
    assert normalize_elasticsearch([2.5, 2.5], "minmax") == [1.0, 1.0]
    assert normalize_elasticsearch([9.0], "minmax") == [1.0]
    assert normalize_elasticsearch([1.0, 1.0 + 1e-7], "minmax") == [1.0, 1.0]  # |max-min| < 1e-6
    assert normalize_elasticsearch([0.0, 0.0], "minmax") == [1.0, 1.0]


def test_es_l2_norm_and_identity():
    assert normalize_elasticsearch([3.0, 4.0], "l2_norm") == [f32(0.6), f32(0.8)]
    assert normalize_elasticsearch([0.0, 0.0], "l2_norm") == [0.0, 0.0]  # norm < 1e-6: raw scores
    assert normalize_elasticsearch([1e-7, 0.0], "l2_norm") == [f32(1e-7), 0.0]
    assert normalize_elasticsearch([1.5, 0.25], "none") == [1.5, 0.25]
