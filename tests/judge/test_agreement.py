"""Agreement between two label sources: kappa (plain, linear, quadratic) checked on
hand-computed cases (and against scikit-learn when it is installed), exact and adjacent
agreement, the confusion matrix, and the backstop recommendation."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from pytest_retrieval.cli import main as cli_main
from pytest_retrieval.judge.agreement import cohen_kappa, compare_qrels


def _pairs_from_matrix(matrix):
    a, b = [], []
    for i, row in enumerate(matrix):
        for j, n in enumerate(row):
            a += [i] * n
            b += [j] * n
    return a, b


def test_binary_kappa_hand_computed() -> None:
    # confusion [[20, 5], [10, 15]], n = 50: p_o = 35/50 = 0.7; marginals rows 25/25,
    # columns 30/20: p_e = (25*30 + 25*20) / 50^2 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4
    a, b = _pairs_from_matrix([[20, 5], [10, 15]])
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    # with two categories every weighting is the same
    assert cohen_kappa(a, b, weights="linear") == pytest.approx(0.4)
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(0.4)


def test_weighted_kappa_hand_computed() -> None:
    # a = 0 1 2, b = 0 2 2 (n = 3); rows 1/1/1, columns 1/0/2
    # plain:     p_o = 2/3, p_e = (1*1 + 1*0 + 1*2)/9 = 1/3            -> (2/3 - 1/3)/(2/3) = 0.5
    # linear:    observed sum |i-j| O/n = 1/3; expected sum |i-j| r_i c_j / n^2 = 9/9 -> 1 - 1/3
    # quadratic: observed 1/3; expected (4*2 + 1*1 + 1*2 + 4*1)/9 = 15/9      -> 1 - 1/5 = 0.8
    a, b = [0, 1, 2], [0, 2, 2]
    assert cohen_kappa(a, b) == pytest.approx(0.5)
    assert cohen_kappa(a, b, weights="linear") == pytest.approx(2 / 3)
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(0.8)


def test_weights_use_grade_values_not_observed_indices() -> None:
    # only grades 0 and 3 observed: a 0 against a 3 is three steps apart, and the
    # intermediate grades count; with linear weights over 0..3 the result equals the
    # computation with labels given explicitly
    a, b = [0, 0, 3, 3, 3], [0, 3, 3, 3, 0]
    assert cohen_kappa(a, b, weights="linear") == pytest.approx(
        cohen_kappa(a, b, weights="linear", labels=[0, 1, 2, 3])
    )
    # unobserved categories never change plain kappa
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa(a, b, labels=[0, 1, 2, 3, 4]))


def test_edge_cases() -> None:
    assert cohen_kappa([1, 2, 3], [1, 2, 3]) == 1.0
    assert math.isnan(cohen_kappa([2, 2, 2], [2, 2, 2]))  # no variation: undefined
    assert cohen_kappa([0, 1], [1, 0]) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 2])
    with pytest.raises(ValueError):
        cohen_kappa([1, 5], [1, 2], labels=[0, 1, 2, 3])
    with pytest.raises(ValueError):
        cohen_kappa([1], [1], weights="cubic")


def test_matches_sklearn_when_installed() -> None:
    import sklearn.metrics as sklearn_metrics

    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(2, 60)
        a = [rng.randint(0, 3) for _ in range(n)]
        b = [min(3, max(0, x + rng.choice([-2, -1, 0, 0, 1]))) for x in a]
        for w in (None, "linear", "quadratic"):
            ours = cohen_kappa(a, b, weights=w, labels=[0, 1, 2, 3])
            theirs = sklearn_metrics.cohen_kappa_score(a, b, weights=w, labels=[0, 1, 2, 3])
            if math.isnan(theirs):
                assert math.isnan(ours)
            else:
                assert ours == pytest.approx(theirs, abs=1e-12)


def test_compare_qrels_on_the_overlap() -> None:
    human = {"q1": {"a": 3, "b": 2, "c": 0, "d": 1}, "q2": {"x": 0, "y": 2}, "q3": {"z": 1}}
    llm = {"q1": {"a": 3, "b": 1, "c": 0, "e": 2}, "q2": {"x": 2, "y": 2}}
    ag = compare_qrels(human, llm, a_name="human", b_name="llm", labels=[0, 1, 2, 3])
    # overlap: (q1,a) 3/3, (q1,b) 2/1, (q1,c) 0/0, (q2,x) 0/2, (q2,y) 2/2
    assert (ag.n, ag.only_a, ag.only_b) == (5, 2, 1)
    assert ag.exact == pytest.approx(3 / 5) and ag.adjacent == pytest.approx(4 / 5)
    assert ag.confusion == [[1, 0, 1, 0], [0, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]]
    assert ag.kappa == pytest.approx(cohen_kappa([3, 2, 0, 0, 2], [3, 1, 0, 2, 2], labels=[0, 1, 2, 3]))
    assert ag.kappa_quadratic == pytest.approx(
        cohen_kappa([3, 2, 0, 0, 2], [3, 1, 0, 2, 2], weights="quadratic")
    )
    lo, hi = ag.ci_linear
    assert -1 <= lo <= ag.kappa_linear <= hi <= 1
    text = ag.format()
    assert "5 pairs graded by both; 2 only in human, 1 only in llm" in text
    assert "weighted kappa, quadratic" in text and "confusion matrix" in text
    # binarized: relevant (>= 1) against not
    b = compare_qrels(human, llm, binarize=1)
    assert b.labels == [0, 1] and b.confusion == [[1, 1], [0, 3]]


def test_recommendation_backstops_low_agreement() -> None:
    rng = random.Random(3)
    human = {"q": {str(i): rng.randint(0, 3) for i in range(200)}}
    noisy = {"q": {d: rng.randint(0, 3) for d in human["q"]}}
    close = {"q": {d: g for d, g in human["q"].items()}}
    for d in list(close["q"])[:20]:
        close["q"][d] = min(3, close["q"][d] + 1)
    low = compare_qrels(human, noisy, a_name="human", b_name="llm")
    assert low.kappa_linear < 0.3
    assert low.recommendation().startswith("RECOMMENDATION: agreement is too low to gate on llm")
    assert "Backstop these labels with human labels" in low.recommendation()
    high = compare_qrels(human, close, a_name="human", b_name="llm")
    assert high.kappa_linear > 0.8 and high.recommendation().startswith("OK:")
    few = compare_qrels({"q": {"a": 1, "b": 0}}, {"q": {"a": 1, "b": 0}})
    assert "Only 2 shared pairs" in few.recommendation()
    none = compare_qrels({"q": {"a": 1}}, {"q": {"b": 1}})
    assert none.n == 0 and "share no graded pair" in none.recommendation()


def test_agree_command(tmp_path: Path, capsys) -> None:
    (tmp_path / "human.csv").write_text(
        "query_id,doc_id,grade\n" + "".join(f"q,{i},{i % 4}\n" for i in range(40))
    )
    (tmp_path / "llm.qrels").write_text("".join(f"q 0 {i} {(i * 7) % 4}\n" for i in range(40)))
    argv = [
        "judge",
        "agree",
        str(tmp_path / "human.csv"),
        str(tmp_path / "llm.qrels"),
        "--names",
        "human,llm",
        "--labels",
        "0-3",
    ]
    assert cli_main(argv) == 0
    out = capsys.readouterr().out
    assert "40 pairs graded by both" in out and "RECOMMENDATION" in out
    assert cli_main(argv + ["--strict"]) == 1
    capsys.readouterr()
    assert cli_main(argv + ["--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["n"] == 40 and d["labels"] == [0, 1, 2, 3] and d["kappa_linear"] < 0.6
    assert d["recommendation"].startswith("RECOMMENDATION")
    same = ["judge", "agree", str(tmp_path / "human.csv"), str(tmp_path / "human.csv"), "--strict"]
    assert cli_main(same) == 0
