"""strata.py: one paired comparison per stratum, Holm-corrected across strata."""

from __future__ import annotations

import numpy as np

from pytest_retrieval.stats.multiple_testing import holm
from pytest_retrieval.stats.strata import strata_from_tags, stratified_comparison

from .values import as_map, ndcg_like


def test_stratified_comparison_holm_and_single_stratum():
    rng = np.random.default_rng(6)
    b = as_map(ndcg_like(rng, 240))
    c = dict(b)
    tags = {
        q: (("hard",) if i % 3 == 0 else ("easy",)) + (("long",) if i % 2 else ()) for i, q in enumerate(b)
    }
    strata = strata_from_tags(tags)
    assert sorted(strata) == ["easy", "hard", "long"] and len(strata["hard"]) == 80
    for i, q in enumerate(b):  # the hard stratum loses 0.1 on half its queries
        if i % 3 == 0 and i % 2 == 0:
            c[q] = b[q] - 0.1
    out = stratified_comparison(b, c, strata, max_drop=0.01, n_resamples=4000)
    assert not out["hard"].passed and out["easy"].passed
    raw = {k: v.result.p_noninferiority for k, v in out.items()}
    for k, (adj, _) in holm(raw, 0.05).items():
        assert out[k].p_adjusted == adj
    assert "Holm-adjusted" in out["hard"].describe("hard")
    # one stratum: Holm changes nothing, the verdict is the CI verdict
    for margin in (0.0, 0.02, 0.05, 0.08):
        one = stratified_comparison(b, c, {"hard": strata["hard"]}, max_drop=margin, n_resamples=4000)["hard"]
        assert one.passed == one.result.non_inferior
    # per-stratum margins, and an empty stratum is an error entry outside the family
    out = stratified_comparison(
        b, c, {"hard": strata["hard"], "none": ["zz"]}, max_drop={"hard": 0.2, "none": 0.01}, n_resamples=1000
    )
    assert out["hard"].passed and out["hard"].p_adjusted == out["hard"].result.p_noninferiority
    assert out["none"].result is None and not out["none"].passed and "none" in out["none"].error
