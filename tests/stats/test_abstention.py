"""abstention.py."""

from __future__ import annotations

import math

import pytest

from pytest_retrieval.stats.abstention import abstention
from pytest_retrieval.types import Ranking


def test_abstention():
    run = {
        "u1": Ranking([], []),  # zero hits: abstained
        "u2": Ranking(["d1", "d2"], [0.2, 0.9]),  # top score 0.9 (max, whatever the order)
        "u3": Ranking(["d3"], [0.3]),
        "a1": Ranking(["d1"], [0.1]),
        "a2": Ranking(["d2"], [5.0]),
    }
    r = abstention(run, ["u1", "u2", "u3", "u4"])  # u4 absent from the run: no hits
    assert r.abstained == {"u1": True, "u2": False, "u3": False, "u4": True}
    assert r.rate == 0.5 and r.answered == ["u2", "u3"]
    assert r.top_scores["u2"] == 0.9 and r.top_scores["u1"] is None
    r = abstention(run, ["u1", "u2", "u3", "u4"], threshold=0.5, answerable_qids=["a1", "a2"])
    assert r.abstained == {"u1": True, "u2": False, "u3": True, "u4": True}
    assert r.rate == 0.75 and r.per_query["u2"] == 0.0 and r.per_query["u3"] == 1.0
    assert r.false_abstained == {"a1": True, "a2": False} and r.false_rate == 0.5
    assert math.isnan(abstention(run, []).rate)
    with pytest.raises(ValueError):
        abstention(run, ["u1"], threshold=math.nan)
