"""The gates' blocks of the suite file's schema (``schema.py`` composes them): the one number rule
of every gate, the ``regression`` block (baseline and reference gates) and the ``stability``
block (ranking stability against the baseline's stored rankings, issue #33)."""

from __future__ import annotations

from typing import Dict, List, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import Annotated

from ..numbers import NUMBER


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# The one number rule for gates (floors, regression max_drop): a finite number written as a
# number. A boolean (YAML's yes/no/on/off), a string (an interpolated ${VAR} included) or
# .nan/.inf is a config error, never a floor of 0, 1 or NaN that always passes.
GateNumber = Annotated[float, Field(strict=True, allow_inf_nan=False)]
FloorValue = GateNumber

Margin = Annotated[float, Field(ge=0, le=1, strict=True, allow_inf_nan=False)]  # max_drop, max_total_drop


class ReferenceConfig(_Strict):
    """A cumulative budget against a pinned run of the history (issue #37; gates/reference.py)."""

    run: str = Field(description="The stored run: a tag, a commit or a run id of --retrieval-history.")
    max_total_drop: Dict[str, Margin] = Field(
        description="metric -> the largest mean drop since the reference run, e.g. {ndcg@10: 0.02}.",
        min_length=1,
    )
    allow_partial: Annotated[bool, Field(strict=True)] = Field(False, description="A partial run may serve.")


class RegressionConfig(_Strict):
    """Paired comparison of every query against a committed baseline (non-inferiority)."""

    baseline: Optional[str] = Field(
        None, description="Baseline JSON (default: <suite file stem>.baseline.json beside it)."
    )
    max_drop: Dict[str, Margin] = Field(
        description="metric -> the largest mean drop tolerated, e.g. {ndcg@10: 0.01}.", min_length=1
    )
    retrievers: Optional[List[str]] = Field(None, description="Retrievers compared (default: all).")
    strata: bool = Field(False, description="Also one gate per query tag, Holm-corrected across tags.")
    confidence: Annotated[float, Field(gt=0.5, lt=1), NUMBER] = 0.95
    resamples: Annotated[int, Field(ge=100), NUMBER] = 10000
    seed: Annotated[int, NUMBER] = 0
    min_compared: Annotated[float, Field(gt=0, le=1, strict=True, allow_inf_nan=False)] = Field(
        0.8,
        description="The share of the baseline's queries that must be unchanged (text and "
        "judgments) for a comparison: below it, or when the queries left out make the gate "
        "blind to max_drop, the comparison is refused.",
    )
    on_fingerprint_mismatch: Literal["floors_only", "error"] = Field(
        "floors_only",
        description="When a comparison is refused (the metric profile changed, or too few "
        "queries are unchanged): skip with the reason (floors only), or an error.",
    )
    reference: Optional[ReferenceConfig] = Field(
        None, description="Also compare with a pinned run of the history: <retriever>::reference:<metric>."
    )


# retriever -> {stability measure: threshold}: a floor for a similarity (rbo@10 >= 0.9), a
# ceiling for a share of changed queries (top1_changed <= 0.05); config/stability.py reads it
StabilityGates = Dict[str, Dict[str, GateNumber]]
