"""``pytest-retrieval compare A.json B.json``: two JSON reports side by side, like
``pytest-benchmark compare``. Per suite, retriever and metric: both values, the difference,
the paired test over the queries both share (the regression gate's own statistics), and
won/lost/tied. A row regresses when non-inferiority within its margin is not shown (B's
``regression.max_drop`` for that metric, else ``--max-drop``, else 0.01)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .formats import delta, num, pval, text_table
from .view import SuiteView

DEFAULT_MAX_DROP = 0.01


@dataclass
class Row:
    suite: str
    retriever: str
    metric: str
    a: Optional[float]
    b: Optional[float]
    gated: bool
    max_drop: float
    comparison: Optional[Dict[str, Any]] = None  # significance.PairedResult.as_dict()
    note: str = ""

    @property
    def regressed(self) -> bool:
        return self.gated and self.comparison is not None and bool(self.comparison["regressed"])

    def verdict(self) -> str:
        c = self.comparison
        if c is None:
            return self.note or "not compared"
        if c["regressed"]:
            word = f"REGRESSED (margin {self.max_drop:g})"
            return word if self.gated else word.lower() + ", not gated"
        if c["improved"]:
            return "improved"
        return "ok" if c["significant_drop"] is False else "dropped within the margin"

    def as_dict(self) -> Dict[str, Any]:
        return {
            "suite": self.suite,
            "retriever": self.retriever,
            "metric": self.metric,
            "a": self.a,
            "b": self.b,
            "diff": None if self.a is None or self.b is None else self.b - self.a,
            "gated": self.gated,
            "max_drop": self.max_drop,
            "regressed": self.regressed,
            "verdict": self.verdict(),
            "comparison": self.comparison,
        }


@dataclass
class Comparison:
    names: Tuple[str, str]
    rows: List[Row] = field(default_factory=list)
    latency: List[Tuple[str, str, Optional[float], Optional[float]]] = field(default_factory=list)  # p95
    notes: List[str] = field(default_factory=list)

    @property
    def regressions(self) -> List[Row]:
        return [r for r in self.rows if r.regressed]

    def as_dict(self) -> Dict[str, Any]:
        return {
            "a": self.names[0],
            "b": self.names[1],
            "rows": [r.as_dict() for r in self.rows],
            "latency_p95_ms": [{"suite": s, "retriever": r, "a": a, "b": b} for s, r, a, b in self.latency],
            "regressions": len(self.regressions),
            "notes": self.notes,
        }


def _gated(v: SuiteView) -> Dict[Tuple[str, str], Optional[float]]:
    """(retriever, metric) gated in a report -> its regression margin (None for a floor)."""
    out: Dict[Tuple[str, str], Optional[float]] = {}
    for g in v.s.get("gated", []):
        m = g["metric"]
        if "[" in m or m.endswith(("_ms", "_ratio")) or m.startswith("lift@") or m == "abstention":
            continue
        key = (g["retriever"], m)
        if g.get("kind") == "regression":
            out[key] = g.get("max_drop")
        else:
            out.setdefault(key, None)
    for r in v.s.get("regressions", []):
        out[(r["retriever"], r["metric"])] = r.get("max_drop")
    return out


@dataclass
class _Settings:
    """How ``compare_reports`` compares: the metrics asked for (else the gated ones), the
    margin, the paired test's confidence and resamples, and the reports' names."""

    metrics: Optional[Sequence[str]]
    max_drop: Optional[float]
    confidence: float
    resamples: int
    names: Tuple[str, str]


def compare_reports(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    *,
    metrics: Optional[Sequence[str]] = None,
    max_drop: Optional[float] = None,
    confidence: float = 0.95,
    resamples: int = 10_000,
    names: Tuple[str, str] = ("A", "B"),
) -> Comparison:
    how = _Settings(metrics, max_drop, confidence, resamples, names)
    out = Comparison(names=names)
    suites_a = {s.get("suite"): SuiteView(s) for s in a.get("suites", [])}
    for sb in b.get("suites", []):
        vb = SuiteView(sb)
        va = suites_a.get(vb.name)
        if va is None:
            out.notes.append(f"suite {vb.name}: only in {names[1]}")
        elif va.error or vb.error:
            out.notes.append(f"suite {vb.name}: did not run in {names[0] if va.error else names[1]}")
        else:
            _compare_suite(va, vb, how, out)
    for s in suites_a:
        if s not in {x.get("suite") for x in b.get("suites", [])}:
            out.notes.append(f"suite {s}: only in {names[0]}")
    return out


def _compare_suite(va: SuiteView, vb: SuiteView, how: _Settings, out: Comparison) -> None:
    """One suite that ran in both reports: a row per retriever in both and compared metric."""
    gated = _gated(vb)
    wanted = _wanted(vb, gated, how.metrics)
    for name in vb.names:
        if name not in va.by_name:
            out.notes.append(f"{vb.name}: retriever {name} only in {how.names[1]}")
            continue
        out.rows += [_compare_metric(va, vb, name, m, gated, how) for m in wanted]
        la = (va.by_name[name].get("latency_ms") or {}).get("p95")
        lb = (vb.by_name[name].get("latency_ms") or {}).get("p95")
        if la is not None or lb is not None:
            out.latency.append((vb.name, name, la, lb))
    for name in va.names:
        if name not in vb.by_name:
            out.notes.append(f"{vb.name}: retriever {name} only in {how.names[0]}")


def _wanted(
    vb: SuiteView, gated: Mapping[Tuple[str, str], Any], metrics: Optional[Sequence[str]]
) -> List[str]:
    """The metrics compared: those asked for, else the gated ones, else every metric but judged@k."""
    if metrics:
        return list(metrics)
    wanted: List[str] = []
    for _, m in gated:
        if m not in wanted:
            wanted.append(m)
    return wanted or [m for m in vb.metrics if not m.startswith("judged@")]


def _compare_metric(
    va: SuiteView,
    vb: SuiteView,
    name: str,
    m: str,
    gated: Mapping[Tuple[str, str], Optional[float]],
    how: _Settings,
) -> Row:
    """One retriever's metric in both reports, with the paired test over their shared queries."""
    from ..stats.paired import paired_comparison

    is_gated = bool(how.metrics) or (name, m) in gated
    margin = how.max_drop if how.max_drop is not None else (gated.get((name, m)) or DEFAULT_MAX_DROP)
    row = Row(vb.name, name, m, va.value(name, m), vb.value(name, m), is_gated, float(margin))
    pa, pb = va.per_query(name, m), vb.per_query(name, m)
    if not pa or not pb:
        row.note = "no per-query values"
    elif not set(pa) & set(pb):
        row.note = "no query in common"
    else:
        row.comparison = paired_comparison(
            pa, pb, max_drop=float(margin), confidence=how.confidence, n_resamples=how.resamples, seed=0
        ).as_dict(worst=5)
    return row


def _cells(r: Row) -> List[str]:
    c = r.comparison or {}
    return [
        r.retriever,
        r.metric,
        num(r.a),
        num(r.b),
        delta(None if r.a is None or r.b is None else r.b - r.a),
        f"[{delta(c.get('ci_low'))}, {delta(c.get('ci_high'))}]" if c else "–",
        f"{c['won']}/{c['lost']}/{c['tied']}" if c else "–",
        pval(c.get("p_randomization")) if c else "–",
        r.verdict(),
    ]


HEAD = ["retriever", "metric", "A", "B", "B − A", "95% bounds", "won/lost/tied", "p", "verdict"]


def render_compare_text(cmp: Comparison) -> str:
    lines = [f"A = {cmp.names[0]} (reference), B = {cmp.names[1]}"]
    for suite in dict.fromkeys(r.suite for r in cmp.rows):
        lines += _suite_text(cmp, suite)
    for n in cmp.notes:
        lines.append(f"note: {n}")
    lines.append("")
    lines.append(_regression_count(len(cmp.regressions)))
    return "\n".join(lines)


def _suite_text(cmp: Comparison, suite: str) -> List[str]:
    """A suite's rows as plain text (ASCII minus signs), then its p95 latencies."""
    rows = [_cells(r) for r in cmp.rows if r.suite == suite]
    rows = [[c.replace("−", "-") for c in row] for row in rows]
    lines = ["", f"suite {suite}"] + ["  " + line for line in text_table(HEAD, rows, left=(0, 1, 8))]
    lat = [(r, x, y) for s, r, x, y in cmp.latency if s == suite]
    if lat:
        lines.append(
            "  p95 latency (informational, measured on two machines or moments): "
            + ", ".join(f"{r} {_ms_or_dash(x)} -> {_ms_or_dash(y)} ms" for r, x, y in lat)
        )
    return lines


def _ms_or_dash(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.1f}"


def _regression_count(n: int) -> str:
    return f"{n} gated regression{'s' if n != 1 else ''}" if n else "no gated regression"


def render_compare_markdown(cmp: Comparison) -> str:
    from .markdown import esc, table

    n = len(cmp.regressions)
    out = [
        f"## {'❌' if n else '✅'} {esc(cmp.names[1])} against {esc(cmp.names[0])}: " + _regression_count(n)
    ]
    for suite in dict.fromkeys(r.suite for r in cmp.rows):
        rows = [[esc(c) for c in _cells(r)] for r in cmp.rows if r.suite == suite]
        out.append(f"### {esc(suite)}")
        out.append(table([esc(h) for h in HEAD], rows, ["l", "l"] + ["r"] * 6 + ["l"]))
    if cmp.notes:
        out.append("\n".join(f"- {esc(x)}" for x in cmp.notes))
    return "\n\n".join(out) + "\n"
