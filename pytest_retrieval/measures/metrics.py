"""The metric engine: parse metric names and score a run against judgments.

Hand-written, pure (no I/O) and checked against trec_eval (through pytrec_eval) by
``tests/measures/test_metrics_trec_eval.py``.

The measures (names, aliases, trec_eval names, cutoff rules, formulas) are declared in
:mod:`.registry`, listed in ``docs/metrics.md``; ``ann_recall@k`` is scored against the exact
kNN run, not the judgments (:mod:`.ann`; ``evaluate`` skips it), and the comparison measures
(``rbo@10``, ``top1_changed``: :mod:`.stability`) compare two rankings (``evaluate`` skips them).

Conventions (see :func:`evaluate`):

* Grades are ints: ``> 0`` gains in nDCG, ``0`` is judged non-relevant, negative
  grades are non-relevant (but judged). Binary metrics call a doc relevant when its
  grade is ``>= relevance_threshold`` (trec_eval ``-l``); nDCG ignores the threshold.
* nDCG: DCG@k = sum over the top k of gain(rel_i) / log2(i + 1) (i = 1-based rank),
  gain ``"exp"`` = 2^rel - 1 or ``"linear"`` = rel (trec_eval); IDCG@k from the ideal
  ordering of all judged docs with a grade > 0, cut at k; nDCG = 0 when IDCG = 0.
* A document id repeated inside one ranking counts once, at its first occurrence
  (later copies are dropped and the documents after them move up).
* Cutoffs larger than the ranking are padded with non-relevant docs (P@10 of a
  3-doc ranking divides by 10), as trec_eval does.
"""

from __future__ import annotations

import difflib
import math
import operator
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ..types import Ranking
from .registry import ALIASES, BY_NAME, KNOWN_METRICS, TREC_CUT, TREC_CUT_RE, TREC_PARAM, TREC_PARAM_RE

if TYPE_CHECKING:
    from .columnar import QrelsColumns, RunColumns

__all__ = [
    "Metric",
    "parse_metric",
    "evaluate",
    "evaluate_columns",
    "Evaluation",
    "aggregate_of",
    "is_share",
    "gate_problem",
]


# --------------------------------------------------------------------------- names

_INT_RE = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class Metric:
    """A parsed metric: ``name`` is canonical (``"ndcg"``), ``k`` the cutoff or None,
    ``param`` the measure's parameter (``rbp(0.9)``: 0.9; its default when not given, None
    for a measure without one), ``condensed``: scored on the judged documents only.

    ``str(metric)`` is the canonical spelling used as key everywhere: ``ndcg@10``,
    ``rbp(0.8)@10``, ``ndcg'@10``.
    """

    name: str
    k: Optional[int] = None
    param: Optional[float] = None
    condensed: bool = False

    def __post_init__(self) -> None:
        name = self.name.lower() if isinstance(self.name, str) else self.name
        name = ALIASES.get(name, name)
        if name not in BY_NAME:
            raise ValueError(_unknown_message(str(self.name)))
        object.__setattr__(self, "name", name)
        self._check_param()
        if self.condensed and not BY_NAME[name].condensable:
            raise ValueError(
                f"metric {name!r} cannot be scored on judged documents only ({name}' makes no sense)"
            )
        self._check_cutoff()

    def _check_cutoff(self) -> None:
        name, rule = self.name, BY_NAME[self.name].cutoff
        if self.k is None:
            if rule == "required":
                raise ValueError(f"metric {name!r} needs a cutoff, e.g. {name}@10")
            return
        try:
            if isinstance(self.k, bool):
                raise TypeError
            k = operator.index(self.k)  # int, numpy integer; not float, not str
        except TypeError:
            raise ValueError(
                f"metric {name!r}: the cutoff k must be a positive integer, got {self.k!r}"
            ) from None
        if rule == "none":
            raise ValueError(f"metric {name!r} takes no cutoff (@k), got {name}@{k}")
        if k <= 0:
            raise ValueError(f"metric '{name}@{k}': the cutoff k must be a positive integer, got {k}")
        object.__setattr__(self, "k", k)

    def _check_param(self) -> None:
        name, rule = self.name, BY_NAME[self.name].param
        if rule is None:
            if self.param is not None:
                raise ValueError(f"metric {name!r} takes no parameter, got {name}({self.param!r})")
            return
        value = rule.default if self.param is None else self.param
        if value is None:
            raise ValueError(f"metric {name!r} needs its parameter {rule.name}, e.g. {name}(0.5)")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"metric {name!r}: {rule.name} must be a number, got {value!r}")
        if not rule.contains(float(value)):
            raise ValueError(f"metric {name!r}: {rule.describe()}, got {value!r}")
        object.__setattr__(self, "param", float(value))

    def __str__(self) -> str:
        text = self.name
        if self.param is not None:
            text += f"({format(self.param, '.15g')})"
        if self.condensed:
            text += "'"
        return text if self.k is None else f"{text}@{self.k}"

    def external_names(self, relevance_threshold: int = 1) -> Dict[str, Optional[str]]:
        """Its names in trec_eval, ir_measures and ranx (None where a tool has no such
        measure, and for a condensed metric: trec_eval's ``-J`` flag scores those)."""
        from .registry import external_names

        if self.condensed:
            return {"trec_eval": None, "ir_measures": None, "ranx": None}
        return external_names(self.name, self.k, self.param, relevance_threshold)


def _unknown_message(text: str, name: Optional[str] = None) -> str:
    """One line: the unknown name, the closest known one, the known ones."""
    candidates = sorted(set(BY_NAME) | set(ALIASES))
    close = difflib.get_close_matches((name or text).lower(), candidates, n=1, cutoff=0.65)
    hint = f" (did you mean {ALIASES.get(close[0], close[0])!r}?)" if close else ""
    return f"unknown metric {text!r}{hint}; known metrics: {KNOWN_METRICS}"


# name, then an optional (param) or (name=param), an optional prime, an optional @cutoff
_SPEC_RE = re.compile(
    r"(?P<name>[^@(')]+)(?:\((?:\s*(?P<pname>[A-Za-z_]+)\s*=)?(?P<param>[^)]*)\))?\s*(?P<prime>')?"
    r"\s*(?:@(?P<k>.*))?",
    re.DOTALL,
)
_CONDENSED_RE = re.compile(r"condensed\((?P<inner>.*)\)", re.IGNORECASE | re.DOTALL)
_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def parse_metric(text: Union[str, Metric]) -> Metric:
    """``"nDCG@10"`` -> ``Metric("ndcg", 10)``. Raises ``ValueError`` (one line).

    ir_measures and trec_eval spellings are aliases printed under the canonical name:
    ``nDCG@10``/``ndcg_cut_10`` -> ``ndcg@10``, ``RR@10`` -> ``mrr@10``, ``recip_rank`` ->
    ``mrr``, ``R@100``/``recall_100`` -> ``recall@100``, ``P@10``/``P_10`` ->
    ``precision@10``, ``AP`` -> ``map``, ``map_cut_10`` -> ``map@10``. The nDCG gain is the
    suite's ``evaluation.profile`` whatever the spelling (ir_measures and trec_eval use
    ``trec``: gain = grade). A parameter in parentheses: ``rbp(0.9)``, ``rbp(p=0.9)@10``;
    trec_eval's ``iprec_at_recall_0.50`` and ir_measures' ``IPrec@0.5`` are ``iprec(0.5)``.
    A prime, ``ndcg'@10``, or ``condensed(ndcg@10)``: judged documents only."""
    if isinstance(text, Metric):
        return text
    if not isinstance(text, str):
        raise ValueError(f"a metric is a string like 'ndcg@10', got {text!r}")
    spec = text.strip()
    wrapped = _CONDENSED_RE.fullmatch(spec)
    if wrapped:
        inner = parse_metric(wrapped.group("inner"))
        if inner.condensed:
            raise ValueError(f"metric {spec!r}: condensed twice")
        return _condensed(inner, spec)
    lower = spec.lower()
    trec = TREC_CUT_RE.fullmatch(lower)
    if trec:
        return Metric(TREC_CUT[trec.group(1)], int(trec.group(2)))
    trec = TREC_PARAM_RE.fullmatch(lower)
    if trec:
        return Metric(TREC_PARAM[trec.group(1)], param=float(trec.group(2)))
    return _parse_spec(spec)


def _condensed(metric: Metric, spec: str) -> Metric:
    try:
        return Metric(metric.name, metric.k, metric.param, condensed=True)
    except ValueError as exc:
        raise ValueError(f"metric {spec!r}: {exc}") from None


def _parse_spec(spec: str) -> Metric:
    parts = _SPEC_RE.fullmatch(spec)
    base = parts.group("name").strip() if parts else spec.partition("@")[0].strip()
    name = ALIASES.get(base.lower(), base.lower())
    if parts is None or name not in BY_NAME:
        raise ValueError(_unknown_message(spec, base))
    measure = BY_NAME[name]
    param, cutoff = parts.group("param"), parts.group("k")
    if cutoff is not None and measure.cutoff == "none" and measure.param is not None and param is None:
        param, cutoff = cutoff, None  # ir_measures' IPrec@0.5: the level after the @
    value = _param_value(spec, measure, parts.group("pname"), param)
    k: Optional[int] = None
    if cutoff is not None:
        cutoff = cutoff.strip()
        if not _INT_RE.fullmatch(cutoff):
            raise ValueError(f"metric {spec!r}: the cutoff k must be a positive integer, got {cutoff!r}")
        k = int(cutoff)
    return Metric(name, k, value, condensed=parts.group("prime") is not None)


def _param_value(spec: str, measure: Any, pname: Optional[str], param: Optional[str]) -> Optional[float]:
    if param is None:
        return None
    rule = measure.param
    if rule is None:
        raise ValueError(f"metric {spec!r}: {measure.name} takes no parameter")
    if pname is not None and pname.lower() != rule.name:
        raise ValueError(f"metric {spec!r}: {measure.name}'s parameter is {rule.name}, got {pname!r}")
    if not _FLOAT_RE.fullmatch(param.strip()):
        raise ValueError(f"metric {spec!r}: {rule.name} must be a number, got {param.strip()!r}")
    return float(param)


def aggregate_of(metric: Union[str, Metric], values: Iterable[float]) -> float:
    """The figure of a metric over some queries' values: the mean, or the measure's own
    aggregate (``gm_map``: geometric mean; the counts: the sum); NaN without values."""
    from .formulas import AGGREGATES

    return AGGREGATES[BY_NAME[parse_metric(metric).name].aggregate](list(values))


def is_share(metric: Union[str, Metric]) -> bool:
    """Whether the metric's per-query values lie in [0, 1] (not the counts ``num_ret`` ...,
    Kendall's tau or a rank change)."""
    measure = BY_NAME[parse_metric(metric).name]
    return measure.aggregate != "sum" and measure.bounds == (0.0, 1.0)


def gate_problem(metric: Union[str, Metric], regression: bool = False) -> Optional[str]:
    """Why the metric cannot be a floor (or, with ``regression``, a baseline comparison, which
    tests the mean of per-query differences), or None."""
    m = parse_metric(metric)
    how = BY_NAME[m.name].aggregate
    if how == "sum":
        return f"{m} is a count (its figure is the sum over the queries), not a score to gate: list it under evaluation.metrics"
    if how == "geometric" and regression:
        return f"{m}'s figure is a geometric mean; the baseline comparison tests a mean difference: compare map instead"
    return None


# --------------------------------------------------------------------------- result


@dataclass
class Evaluation:
    """Scores of one run.

    ``per_query[str(metric)][qid]`` and ``aggregate[str(metric)]`` (over ``evaluated``, the
    arithmetic mean, or the measure's own aggregate, registry ``Measure.aggregate``:
    ``gm_map``'s geometric mean, the counts' sum; unrounded; NaN when no query could be
    evaluated).

    * ``evaluated``: the queries averaged (qrels order), chosen by ``average_over``
      (:mod:`.aggregate`); the only queries in ``per_query`` and the averages.
    * ``missing``: judged queries absent from the run or with no hits (those left out for
      lack of a relevant document excepted); they score 0, and count in the averages unless
      ``average_over`` is ``run`` and they are absent from the run.
    * ``not_in_run``: judged queries absent from the run (left out under ``run``).
    * ``no_relevant``: judged queries without a relevant document (a grade > 0, or >= the
      relevance threshold when it is 0); left out of the averages under ``relevant`` only.
    * ``unjudged_queries``: run queries absent from the qrels; ignored.
    * ``judged``: the number of queries of the qrels.
    """

    metrics: Tuple[Metric, ...]
    per_query: Dict[str, Dict[str, float]]
    aggregate: Dict[str, float]
    evaluated: List[str] = field(default_factory=list)
    missing: List[str] = field(default_factory=list)
    no_relevant: List[str] = field(default_factory=list)
    unjudged_queries: List[str] = field(default_factory=list)
    average_over: str = "relevant"
    not_in_run: List[str] = field(default_factory=list)
    judged: int = 0

    def worst(self, metric: Union[str, Metric], n: int = 5) -> List[Tuple[str, float]]:
        """The ``n`` lowest-scoring queries as ``(qid, value)``, lowest first; ties by qid."""
        key = str(parse_metric(metric))
        if key not in self.per_query:
            raise ValueError(f"metric {key!r} was not evaluated; evaluated: {', '.join(self.per_query)}")
        if n <= 0:
            return []
        items = sorted(self.per_query[key].items(), key=lambda kv: (kv[1], kv[0]))
        return items[:n]


# --------------------------------------------------------------------------- evaluate

_GAINS = ("exp", "linear")
_TIES = ("engine", "trec")


def evaluate(
    qrels: Union[Mapping[str, Mapping[str, int]], QrelsColumns],
    run: Union[Mapping[str, Ranking], RunColumns, Iterable[RunColumns]],
    metrics: Union[str, Metric, Iterable[Union[str, Metric]]],
    *,
    gain: str = "exp",
    ties: str = "engine",
    relevance_threshold: int = 1,
    profile: Optional[str] = None,
    average_over: str = "relevant",
    depth: Optional[int] = None,
    gains: Optional[Mapping[int, float]] = None,
) -> Evaluation:
    """Score ``run`` against ``qrels`` on ``metrics``.

    ``profile`` is the suite's name for the nDCG gain (``evaluation.profile``, ``--profile``):
    ``"exp"`` is ``gain="exp"``, ``"trec"`` is ``gain="linear"`` (trec_eval); give one or the other.

    ``ties="engine"`` keeps each ranking's order as given; ``ties="trec"`` re-orders it
    as trec_eval does: score descending, then document id descending (trec_eval
    ``form_res_rels.c``: ``comp_sim_docno``), scores compared as 32-bit floats as trec_eval
    9.x and pytrec_eval do (see :mod:`~pytest_retrieval.measures.columnar`). ``gain`` and
    ``relevance_threshold`` (0 allowed: trec_eval ``-l0``): see the module docstring.
    ``average_over``: which queries the means are over (``relevant``, ``judged`` = trec_eval
    ``-c``, ``run`` = trec_eval's default; :mod:`.aggregate`). ``depth``: only the first
    ``depth`` documents of each ranking count, after ordering (trec_eval ``-M``). ``gains``:
    per-grade nDCG gains ({grade: gain}; :mod:`.gains`).

    ``qrels`` and ``run`` may also be :class:`~pytest_retrieval.measures.columnar.QrelsColumns`
    and :class:`~pytest_retrieval.measures.columnar.RunColumns` built beforehand (the run
    built against those qrels, with the same ``ties``), or an iterable of ``RunColumns``
    batches (each query in one batch): nothing is converted then.
    """
    gain = _gain_of(profile, gain)
    parsed = [
        m
        for m in _parse_options(metrics, gain, ties, relevance_threshold)
        if BY_NAME[m.name].needs_qrels  # not ann_recall (exact kNN top k), nor rbo@10 (two rankings)
    ]
    options = _Options(gain, ties, relevance_threshold, average_over, depth, gains)
    from .columnar import QrelsColumns, RunColumns

    # Columns (measures/columnar.py): qrels keyed by one document dictionary, the run's
    # judged hits found per ranking at C level, every metric vectorised over all queries.
    qc = qrels if isinstance(qrels, QrelsColumns) else QrelsColumns.from_qrels(qrels)
    batches: Iterable[RunColumns]
    in_run = None
    if isinstance(run, RunColumns):
        batches = [run]
    elif isinstance(run, Mapping):
        positive_only = _positive_only(parsed, options.gains, relevance_threshold)
        batches = [RunColumns.from_run(run, qc, ties=ties, positive_only=positive_only)]
        in_run = [q in run for q in qc.evaluated]  # an empty ranking is in the run (pytrec_eval)
    else:  # batches of columns, each query in one batch (io.run_columns streams a file so)
        batches = run
    return _evaluate_columns(qc, batches, parsed, options, in_run)


_PROFILE_GAIN = {"exp": "exp", "trec": "linear"}


def _gain_of(profile: Optional[str], gain: str) -> str:
    """The gain ``evaluate`` uses: ``profile`` (the suite's word) when given, else ``gain``."""
    if profile is None:
        return gain
    if profile not in _PROFILE_GAIN:
        raise ValueError(f"profile must be 'exp' or 'trec', got {profile!r}")
    if gain != "exp" and gain != _PROFILE_GAIN[profile]:
        raise ValueError(f"profile={profile!r} and gain={gain!r} disagree: give one of them")
    return _PROFILE_GAIN[profile]


def evaluate_columns(
    qrels: QrelsColumns,
    batches: Iterable[RunColumns],
    metrics: Sequence[Metric],
    *,
    gain: str = "exp",
    ties: str = "engine",
    relevance_threshold: int = 1,
    average_over: str = "relevant",
    depth: Optional[int] = None,
    gains: Optional[Mapping[int, float]] = None,
) -> Evaluation:
    """Score run batches (each query in one batch) against ``qrels``: each metric by its
    formula (:mod:`.formulas`), computed once over every judged hit of the run. See
    :func:`evaluate` for the rules."""
    _parse_options(metrics, gain, ties, relevance_threshold)
    options = _Options(gain, ties, relevance_threshold, average_over, depth, gains)
    return _evaluate_columns(qrels, batches, metrics, options, None)


class _Options:
    """The checked options of one evaluation."""

    def __init__(self, gain, ties, threshold, average_over, depth, gains):
        from .aggregate import check_average_over
        from .gains import GainTable

        self.gain, self.ties, self.threshold = gain, ties, threshold
        self.average_over = check_average_over(average_over)
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
            raise ValueError(f"depth must be an integer >= 1, got {depth!r}")
        self.depth = depth
        self.gains = None if gains is None else GainTable(gains, gain)


def _evaluate_columns(
    qrels: QrelsColumns,
    batches: Iterable[RunColumns],
    metrics: Sequence[Metric],
    o: _Options,
    in_run: Optional[List[bool]],
) -> Evaluation:
    import numpy as np

    from .aggregate import averaged
    from .columnar import gather_judged_hits
    from .formulas import AGGREGATES, JudgedHits

    _check_gains(qrels, metrics, o)
    positive_only = _positive_only(metrics, o.gains, o.threshold)
    found = gather_judged_hits(qrels, batches, trec=o.ties == "trec", positive_only=positive_only)
    scored = qrels.evaluated  # every query of the qrels
    n_q = len(scored)
    hits = _judged_hits(qrels, found, o)
    has_rel = qrels.num_rel(min(o.threshold, 1)) > 0
    present = found.has_hits if in_run is None else found.has_hits | np.asarray(in_run, dtype=bool)
    chosen = np.flatnonzero(averaged(o.average_over, has_rel, present))
    evaluated = [scored[i] for i in chosen.tolist()]
    condensed: Optional[JudgedHits] = None
    per_query: Dict[str, Dict[str, float]] = {}
    aggregate: Dict[str, float] = {}
    for m in metrics:
        measure = BY_NAME[m.name]
        if measure.formula is None:
            raise ValueError(f"{m} is not scored against judgments")
        if m.condensed and condensed is None:
            condensed = hits.condensed()
        on = condensed if m.condensed and condensed is not None else hits
        values = measure.formula(on, m.k) if measure.param is None else measure.formula(on, m.k, m.param)
        as_list = values[chosen].tolist()
        per_query[str(m)] = dict(zip(evaluated, as_list))
        aggregate[str(m)] = AGGREGATES[measure.aggregate](as_list)
    counted = has_rel if o.average_over == "relevant" else np.ones(n_q, dtype=bool)
    return Evaluation(
        metrics=tuple(metrics),
        per_query=per_query,
        aggregate=aggregate,
        evaluated=evaluated,
        missing=[scored[i] for i in np.flatnonzero(counted & ~found.has_hits).tolist()],
        no_relevant=_no_relevant(qrels, scored, has_rel),
        unjudged_queries=found.unjudged,
        average_over=o.average_over,
        not_in_run=[scored[i] for i in np.flatnonzero(~present).tolist()],
        judged=n_q,
    )


def _judged_hits(qrels: QrelsColumns, found: Any, o: _Options) -> Any:
    """What the formulas read: the judged hits (cut at ``depth``), R, the ideal rankings."""
    import numpy as np

    from .formulas import JudgedHits
    from .gains import ideal_by_gain

    q, r, g, n_ret = found.q, found.r, found.g, found.n_ret
    if o.depth is not None:  # trec_eval -M: the rest of each (ordered) ranking is discarded
        keep = r < o.depth
        q, r, g = q[keep], r[keep], g[keep]
        n_ret = np.minimum(n_ret, o.depth)
    return JudgedHits(
        q,
        r,
        g,
        n_q=len(qrels.evaluated),
        num_rel=qrels.num_rel(o.threshold),
        threshold=o.threshold,
        ideal=qrels.ideal() if o.gains is None else ideal_by_gain(qrels, o.gains),
        gain=o.gain if o.gains is None else o.gains,
        n_ret=n_ret,
        num_nonrel=qrels.num_nonrel(o.threshold),
        max_grade=qrels.max_grade(),
    )


def _check_gains(qrels: QrelsColumns, metrics: Sequence[Metric], o: _Options) -> None:
    """A grade whose gain overflows a float is refused by name (nDCG would be NaN)."""
    from .gains import gain_overflow

    why = gain_overflow(
        qrels.grades,
        qrels.judged_q,
        o.gain if o.gains is None else o.gains,
        any(m.name == "err" for m in metrics),
    )
    if why:
        raise ValueError(why)


def _no_relevant(qrels: QrelsColumns, scored: List[str], has_rel: Any) -> List[str]:
    """The queries without a relevant judgment in qrels order (one with no judgment at all,
    possible in memory only, is listed but not scored)."""
    import numpy as np

    without = {scored[i] for i in np.flatnonzero(~has_rel).tolist()}
    return [q for q in qrels.qids if q in without or q not in qrels.eval_index]


def _positive_only(metrics: Iterable[Metric], gains: Any = None, threshold: int = 1) -> bool:
    """Whether only the docs graded > 0 need finding in the run: no metric counts every
    judgment (judged@k, bpref, infAP, a condensed metric), grade 0 is not relevant
    (threshold 0) and gains nothing."""
    if threshold < 1 or (gains is not None and gains.table.get(0, 0.0) != 0.0):
        return False
    return not any(m.condensed or BY_NAME[m.name].relevance in ("judged", "preference") for m in metrics)


def _parse_options(
    metrics: Union[str, Metric, Iterable[Union[str, Metric]]], gain: str, ties: str, relevance_threshold: int
) -> List[Metric]:
    """The metrics parsed (repeats dropped); ``ValueError`` for a bad metric or option."""
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    parsed: List[Metric] = []
    for m in metrics:
        m = parse_metric(m)
        if m not in parsed:
            parsed.append(m)
    if not parsed:
        raise ValueError("no metrics to evaluate")
    if gain not in _GAINS:
        raise ValueError(f"gain must be one of {', '.join(_GAINS)}; got {gain!r}")
    if ties not in _TIES:
        raise ValueError(f"ties must be one of {', '.join(_TIES)}; got {ties!r}")
    if (
        isinstance(relevance_threshold, bool)
        or not isinstance(relevance_threshold, int)
        or relevance_threshold < 0
    ):
        raise ValueError(f"relevance_threshold must be an integer >= 0, got {relevance_threshold!r}")
    return parsed
