"""OpenMetrics text of a JSON report, for GitLab's ``metrics`` report (the merge request widget
shows each metric and its change against the target branch).

Families (all gauges; labels ``suite``, ``file`` (the suite file: its name, or as much of its
path as tells it from the others), ``retriever`` and ``metric``/``percentile``/``gate``)::

    retrieval_quality            aggregate metric value (ndcg@10, recall@100, ...)
    retrieval_latency_ms         latency percentile (p50, p95, p99)
    retrieval_baseline_diff      mean difference against the baseline (gated metrics)
    retrieval_baseline_diff_lower / _upper   its one-sided confidence bounds
    retrieval_gate_passed        1 passed, 0 failed (floors and baseline gates)
    retrieval_unjudged_share     share of the top 10 without a judgment
    retrieval_sparse_cost        a sparse retriever's efficiency facts, label ``fact``:
                                 sparse_doc_nnz, sparse_query_nnz, flops (NaN: not known)
    retrieval_gates              count of gate items by outcome
"""

from __future__ import annotations

import math
from pathlib import PurePath
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from .formats import not_a_number, redact
from .view import SuiteView, gate_name, verdict

_HELP = {
    "retrieval_quality": "Aggregate retrieval metric of a retriever on a suite.",
    "retrieval_latency_ms": "Latency percentile of a retriever, milliseconds.",
    "retrieval_baseline_diff": "Mean per-query difference against the committed baseline.",
    "retrieval_baseline_diff_lower": "One-sided lower confidence bound of the difference.",
    "retrieval_baseline_diff_upper": "One-sided upper confidence bound of the difference.",
    "retrieval_gate_passed": "1 when the gate passed, 0 when it failed.",
    "retrieval_unjudged_share": "Share of the top 10 documents without a relevance judgment.",
    "retrieval_sparse_cost": "Sparse retriever cost: mean non-zero terms per document/query, expected FLOPS.",
    "retrieval_gates": "Gate items by outcome.",
}


def _label(value: Any) -> str:
    """The OpenMetrics escape of a label value (backslash, double quote, newline)."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(x: Any) -> str:
    if x is None or not_a_number(x):  # never a number read from text
        return "NaN"
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(x)


SPARSE_FACTS = ("sparse_doc_nnz", "sparse_query_nnz", "flops")  # as retrievers[].sparse has them

_Families = Dict[str, List[Tuple[Dict[str, Any], Any]]]


def render_openmetrics(doc: Mapping[str, Any]) -> str:
    fams: _Families = {k: [] for k in _HELP}
    suites = doc.get("suites", [])
    for s, file in zip(suites, file_labels([str(s.get("file", "")) for s in suites])):
        v = SuiteView(s)
        suite = {"suite": v.name, "file": file}
        for r in v.retrievers:
            _retriever_samples(fams, v, suite, r)
        for reg in s.get("regressions", []):
            _regression_samples(fams, suite, reg)
        for g in s.get("gates", []):
            _gate_sample(fams, suite, g)
    vd = verdict(doc)
    for outcome, n in (
        ("passed", vd.passed),
        ("failed", vd.failed),
        ("error", vd.errored),
        ("skipped", vd.skipped),
    ):
        fams["retrieval_gates"].append(({"outcome": outcome}, n))
    lines: List[str] = []
    for name, samples in fams.items():
        if samples:
            lines += _family_lines(name, samples)
    lines.append("# EOF")
    return redact("\n".join(lines)) + "\n"


def file_labels(files: Sequence[str]) -> List[str]:
    """Each suite file's ``file`` label: its name, or the shortest end of its path that no other
    file shares (two suites of one name stay two series; the label does not hold the machine's
    checkout folder)."""
    parts = [PurePath(f).parts or ("",) for f in files]
    labels = []
    for mine in parts:
        n = 1
        while n < len(mine) and sum(1 for p in parts if p[-n:] == mine[-n:]) > 1:
            n += 1
        labels.append("/".join(mine[-n:]))
    return labels


def _retriever_samples(fams: _Families, v: SuiteView, suite: Dict[str, str], r: Mapping[str, Any]) -> None:
    """A retriever's quality metrics, latency percentiles and unjudged share."""
    base = {**suite, "retriever": r["name"]}
    for m, x in (r.get("metrics") or {}).items():
        fams["retrieval_quality"].append(({**base, "metric": m}, x))
    for p in ("p50", "p95", "p99"):
        if (r.get("latency_ms") or {}).get(p) is not None:
            fams["retrieval_latency_ms"].append(({**base, "percentile": p}, r["latency_ms"][p]))
    if r["name"] in (v.s.get("unjudged_share") or {}):
        fams["retrieval_unjudged_share"].append((base, v.s["unjudged_share"][r["name"]]))
    facts = r.get("sparse")
    if isinstance(facts, Mapping):
        for fact in SPARSE_FACTS:
            fams["retrieval_sparse_cost"].append(({**base, "fact": fact}, facts.get(fact)))


def _regression_samples(fams: _Families, suite: Dict[str, str], reg: Mapping[str, Any]) -> None:
    """A baseline comparison: the difference, its bounds and whether its gate passed."""
    c = reg["comparison"]
    labels = {**suite, "retriever": reg["retriever"], "metric": reg["metric"]}
    fams["retrieval_baseline_diff"].append((labels, c.get("mean_diff")))
    fams["retrieval_baseline_diff_lower"].append((labels, c.get("ci_low")))
    fams["retrieval_baseline_diff_upper"].append((labels, c.get("ci_high")))
    fams["retrieval_gate_passed"].append(
        ({**labels, "gate": f"baseline:{reg['metric']}"}, 1 if reg.get("passed") else 0)
    )


def _gate_sample(fams: _Families, suite: Dict[str, str], g: Mapping[str, Any]) -> None:
    """A floor or ceiling: whether it passed."""
    labels = {**suite, "retriever": g["retriever"], "metric": g["metric"], "gate": gate_name(g)}
    if g.get("team"):  # a team threshold file's floor: its own series beside the suite's
        labels["team"] = str(g["team"])
    fams["retrieval_gate_passed"].append((labels, 1 if g.get("passed") else 0))


def _family_lines(name: str, samples: List[Tuple[Dict[str, Any], Any]]) -> List[str]:
    """One family: its TYPE and HELP, then a line per label set (the first of a repeated one)."""
    lines = [f"# TYPE {name} gauge", f"# HELP {name} {_HELP[name]}"]
    seen = set()
    for labels, x in samples:
        key = tuple(sorted(labels.items()))
        if key in seen:  # a family may not repeat a label set
            continue
        seen.add(key)
        body = ",".join(f'{k}="{_label(v)}"' for k, v in labels.items())
        lines.append(f"{name}{{{body}}} {_number(x)}")
    return lines
