"""What a measure's declaration holds (:class:`Measure`, :class:`Param`) and the words it uses
(:data:`RELEVANCE`, :data:`CUTOFF_RULES`, :data:`AGGREGATES`). The declarations themselves are
in :mod:`.registry` (scored against judgments) and :mod:`.comparison_registry` (two rankings
compared, no judgments)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from .formulas import Formula

__all__ = ["Measure", "Param", "AGGREGATES", "CUTOFF_RULES", "RELEVANCE"]

#: What a measure counts in the judgments.
RELEVANCE: Dict[str, str] = {
    "graded": "the grade, as a gain (grades > 0; the threshold is ignored)",
    "binary": "grade >= `relevance_threshold` is relevant",
    "judged": "any judgment (grade 0 and negative grades included)",
    "preference": (
        "grade >= `relevance_threshold` relevant, a grade from 0 below it judged non-relevant, a "
        "negative grade pooled but unjudged (trec_eval `RELVALUE_UNJUDGED`), a document without "
        "a judgment left out"
    ),
    "retrieved": "every retrieved document, judged or not",
    "reference": "the exact top k of a kNN retriever, not the judgments",
    "comparison": "two rankings of one query (a reference's and this run's), no judgments",
}

#: Whether a measure takes a cutoff ``@k``.
CUTOFF_RULES = ("required", "optional", "none")

#: How the per-query values of a measure make its figure over the queries: trec_eval's
#: ``te_calc_avg_meas_s`` (mean), ``te_calc_avg_meas_s_gm`` (geometric mean of the values
#: floored at ``MIN_GEO_MEAN`` = 0.00001, meas_avg.c / trec_eval.h) and
#: ``te_calc_avg_meas_empty`` (the counts ``num_ret``, ``num_rel_ret``: the sum). The functions
#: are :data:`.formulas.AGGREGATES`; an averaging switch reads ``Measure.aggregate``.
AGGREGATES = ("mean", "geometric", "sum")


@dataclass(frozen=True)
class Param:
    """The one numeric parameter of a measure (``rbp(0.9)``, ``iprec(0.5)``): its name (also
    accepted as ``rbp(p=0.9)``), default (None: required), and the open or closed bounds."""

    name: str
    default: Optional[float]
    low: float
    high: float
    low_open: bool = False
    high_open: bool = False

    def describe(self) -> str:
        lo, hi = "(" if self.low_open else "[", ")" if self.high_open else "]"
        return f"{self.name} in {lo}{_num(self.low)}, {_num(self.high)}{hi}"

    def contains(self, value: float) -> bool:
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below


def _num(x: float) -> str:
    """A parameter as printed in a metric's name: ``0.8``, ``1``, ``inf``."""
    return format(x, ".15g")


@dataclass(frozen=True)
class Measure:
    """One measure.

    ``name``: canonical, lower case (``str(Metric)`` prints it). ``aliases``: other spellings
    (ir_measures, ranx), lower case; names are matched case-insensitively. ``trec_eval``:
    trec_eval's name of the measure over the whole ranking (``recip_rank``), also a
    spelling; ``trec_eval_cut``: trec_eval's name with a cutoff, spelt ``<name>_<k>``
    (``ndcg_cut_10``, ``P_10``). ``cutoff``: one of :data:`CUTOFF_RULES`. ``relevance``: a
    key of :data:`RELEVANCE`. ``formula``: its function in :mod:`.formulas` (None for a
    ``reference`` measure, scored elsewhere). ``scope``: which retrievers it applies to,
    when not all. ``doc``: its definition, one line of markdown. ``param``: its numeric
    parameter (:class:`Param`), passed to the formula as a third argument;
    ``trec_eval_param``: trec_eval's name spelt ``<name>_<param>`` (``iprec_at_recall_0.50``).
    ``ir_measures``, ``ranx``: the measure's name in those tools, a template (see
    :func:`.registry.external_names`). ``aggregate``: one of :data:`AGGREGATES`. ``bounds``:
    the range of its per-query values ((0, 1) for a share; a baseline's values are checked
    against it). A ``comparison`` measure (:mod:`.comparison_registry`) compares two rankings of
    one query and needs no judgments: :attr:`needs_qrels` is False, ``formula`` None, and its
    function is in :data:`.stability.COMPARISONS`.
    """

    name: str
    cutoff: str
    relevance: str
    formula: Optional[Formula]
    doc: str
    aliases: Tuple[str, ...] = ()
    trec_eval: Optional[str] = None
    trec_eval_cut: Optional[str] = None
    scope: str = ""
    param: Optional[Param] = None
    trec_eval_param: Optional[str] = None
    ir_measures: Optional[str] = None
    ranx: Optional[str] = None
    aggregate: str = "mean"
    bounds: Tuple[float, float] = (0.0, 1.0)

    @property
    def needs_qrels(self) -> bool:
        """Whether it is scored on a run against judgments (``evaluate``): not a ``reference``
        measure (the exact kNN top k) nor a ``comparison`` one (two rankings, no judgments)."""
        return self.relevance not in ("reference", "comparison")

    @property
    def compares_rankings(self) -> bool:
        """Whether it compares two rankings of one query (:mod:`.stability`), no judgments."""
        return self.relevance == "comparison"

    @property
    def synopsis(self) -> str:
        """``ndcg[@k]``, ``recall[@k]``, ``r-precision``, ``rbp[(p)][@k]``."""
        param = ""
        if self.param is not None:
            param = f"({self.param.name})" if self.param.default is None else f"[({self.param.name})]"
        return self.name + param + _CUTOFF_SUFFIX[self.cutoff]

    @property
    def condensable(self) -> bool:
        """Whether ``name'`` (judged documents only) means something: not for a measure of
        the judgments themselves."""
        return self.formula is not None and self.relevance != "judged"

    def spellings(self) -> Tuple[str, ...]:
        """The other names it is parsed from (lower case): aliases, then trec_eval's name."""
        trec = (self.trec_eval.lower(),) if self.trec_eval and self.trec_eval.lower() != self.name else ()
        return self.aliases + trec


_CUTOFF_SUFFIX = {"required": "@k", "optional": "[@k]", "none": ""}
