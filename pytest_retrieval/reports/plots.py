"""The HTML report's plots, drawn with matplotlib as inline SVG (optional extra:
``pip install 'pytest-retrieval[html]'``). Each plot reads a :class:`view.SuiteView` only.

``suite_plots(view)`` returns ``[(title, svg or None, caption)]``; a plot that cannot be drawn
says why in its caption instead of failing the report.
"""

from __future__ import annotations

import io
import math
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .view import SuiteView

RED, GREEN, GREY, BLUE = "#c0392b", "#1e8449", "#8a8f98", "#2c6fbb"
PALETTE = ["#2c6fbb", "#e67e22", "#16a085", "#8e44ad", "#c0392b", "#7f8c8d", "#d4ac0d", "#1abc9c"]

_counter = [0]


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.fonttype": "none",  # text stays text: smaller, selectable
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titlesize": 10,
        }
    )
    return plt


def _svg(fig: Any) -> str:
    plt = _plt()
    _counter[0] += 1
    plt.rcParams["svg.hashsalt"] = f"pr{_counter[0]}"  # ids unique across the inline SVGs
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg") :]  # no XML prolog or DOCTYPE inline
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    return re.sub(r"\n\s*", "\n", text)


def _plain_ticks(ax: Any, values: Sequence[float] = ()) -> None:
    """Plain numbers on a log x axis; with ``values`` (the data), at least three labelled ticks
    even when every value sits in one decade (a log axis then labels one tick, or none)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    fmt = FuncFormatter(lambda x, _: f"{x:g}")
    ax.xaxis.set_major_formatter(fmt)
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda x, _: ""))
    ticks = _log_ticks([x for x in values if x > 0])
    if ticks:
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        lo, hi = min(ticks[0], min(values)), max(ticks[-1], max(values))
        ax.set_xlim(lo / 1.15, hi * 1.15)


def _log_ticks(values: Sequence[float]) -> List[float]:
    """Tick values for a log axis over ``values`` when its own ticks would be too few: the
    1-2-5 steps within the range (1-9 steps when those are fewer than three), else three
    rounded values across it; [] when the range spans two decades or more (matplotlib's own
    decades read well)."""
    if not values:
        return []
    lo, hi = min(values), max(values)
    if hi / lo >= 100:
        return []
    for steps in ((1, 2, 5), tuple(range(1, 10))):
        ticks = [
            m * 10.0**e
            for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
            for m in steps
            if lo / 1.1 <= m * 10.0**e <= hi * 1.1
        ]
        if len(ticks) >= 3:
            return ticks
    mid = math.sqrt(lo * hi)
    for digits in (2, 3, 4):
        ticks = sorted({float(f"{x:.{digits}g}") for x in (lo, mid, hi)})
        if len(ticks) >= 3:
            return ticks
    return ticks


def _grid(n: int, per_row: int = 4) -> Tuple[int, int]:
    cols = min(n, per_row)
    return math.ceil(n / cols), cols


def scatter_vs_baseline(v: SuiteView) -> Optional[str]:
    pairs = v.moved_pairs() or [(n, v.headline) for n in v.names if v.base_per_query(n, v.headline)]
    todo = _first_per_retriever(pairs)
    if not todo:
        return None
    plt = _plt()
    rows, cols = _grid(len(todo))
    fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 2.6 * rows), squeeze=False)
    for ax in axes.flat[len(todo) :]:
        ax.set_visible(False)
    for ax, (r, m) in zip(axes.flat, todo):
        _scatter_panel(ax, v, r, m)
    fig.tight_layout()
    return _svg(fig)


def _first_per_retriever(pairs: List[Tuple[str, str]]) -> List[Tuple[str, str]]:
    """Each retriever once, with the first metric named for it."""
    first: Dict[str, Tuple[str, str]] = {}
    for r, m in pairs:
        first.setdefault(r, (r, m))
    return list(first.values())


def _scatter_panel(ax: Any, v: SuiteView, r: str, m: str) -> None:
    """One retriever's queries, the baseline's value against now's."""
    before, now = v.base_per_query(r, m), v.per_query(r, m)
    qs = [q for q in now if q in before]
    xs = [before[q] for q in qs]
    ys = [now[q] for q in qs]
    colors = [RED if y < x else GREEN if y > x else GREY for x, y in zip(xs, ys)]
    ax.plot([0, 1], [0, 1], color="#bbbbbb", lw=1, zorder=0)
    ax.scatter(xs, ys, c=colors, s=14, alpha=0.7, linewidths=0)
    ax.set_title(_scatter_title(r, xs, ys))
    ax.set_xlabel(f"baseline {m}")
    ax.set_ylabel(f"now {m}")
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_aspect("equal")


def _scatter_title(r: str, xs: List[float], ys: List[float]) -> str:
    """The mean difference and how many queries dropped and gained."""
    down = sum(1 for x, y in zip(xs, ys) if y < x)
    up = sum(1 for x, y in zip(xs, ys) if y > x)
    d = (sum(ys) - sum(xs)) / len(xs) if xs else 0.0
    return f"{r}: Δ {d:+.4f} ({down} ▼, {up} ▲)"


def distribution(v: SuiteView) -> Optional[str]:
    import numpy as np

    m = v.headline
    data = [[x for x in v.per_query(n, m).values()] for n in v.names]
    if not any(data):
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * len(v.names) + 1.5), 3.0))
    ax.boxplot(
        data,
        showmeans=True,
        widths=0.5,
        medianprops={"color": "#333333"},
        meanprops={"marker": "D", "markersize": 4},
    )
    rng = np.random.default_rng(0)
    for i, xs in enumerate(data, 1):
        ax.scatter(
            i + rng.uniform(-0.18, 0.18, len(xs)),
            xs,
            s=6,
            alpha=0.35,
            color=PALETTE[(i - 1) % len(PALETTE)],
            linewidths=0,
        )
    ax.set_xticks(range(1, len(v.names) + 1), v.names)
    ax.set_ylabel(f"{m} per query")
    ax.set_title(f"Per-query {m} (box: quartiles, diamond: mean)")
    fig.tight_layout()
    return _svg(fig)


def latency_cdf(v: SuiteView) -> Optional[str]:
    samples = v.s.get("latency_samples_ms") or {}
    if not any(samples.values()):
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    ceilings: Dict[float, List[str]] = {}  # a gated ceiling (ms) -> whose
    for i, (name, xs) in enumerate(samples.items()):
        if not xs:
            continue
        xs = sorted(xs)
        n = len(xs)
        color = PALETTE[i % len(PALETTE)]
        ax.step(xs, [(j + 1) / n for j in range(n)], where="post", color=color, label=name, lw=1.4)
        for q in v.gated_percentiles(name) or [95]:
            value = xs[min(n - 1, max(0, math.ceil(q / 100 * n) - 1))]
            ax.plot([value], [q / 100], marker="o", color=color, ms=5)
            ax.annotate(
                f"p{q} {value:.1f}",
                (value, q / 100),
                textcoords="offset points",
                xytext=(6, -12 - 9 * i),
                fontsize=7,
                color=color,
            )
            ceiling = v.ceiling(name, q)
            if ceiling is not None:
                ax.axvline(ceiling, color=color, ls="--", lw=0.9)
                ceilings.setdefault(ceiling, []).append(f"{name} p{q}")
    ax.set_xscale("log")
    _plain_ticks(ax, [x for xs in samples.values() for x in xs] + list(ceilings))
    _ceiling_labels(ax, ceilings)
    ax.set_xlabel("latency per query (ms, log scale)")
    ax.set_ylabel("share of queries")
    ax.set_ylim(0, 1.02)
    # beside the axes, never over a ceiling's label or a curve
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.set_title("Latency distribution (CDF); dot: the gated percentile")
    fig.tight_layout()
    return _svg(fig)


def _ceiling_labels(ax: Any, ceilings: Dict[float, List[str]]) -> None:
    """One label per ceiling value (the retrievers gated at it), upright beside its line at the
    bottom of the axes, alternating sides when two lines are close."""
    last_x = None
    for n, (value, whose) in enumerate(sorted(ceilings.items())):
        close = last_x is not None and value / last_x < 1.25
        ax.annotate(
            f"ceiling {value:g} ms: {', '.join(whose)}",
            (value, 0.04),
            rotation=90,
            fontsize=7,
            color="#555555",
            xytext=(3 if close and n % 2 else -9, 0),
            textcoords="offset points",
            va="bottom",
        )
        last_x = value


def frontier(v: SuiteView) -> Optional[str]:
    stages = [r for r in v.s.get("stages", []) if r.get("p95_ms") is not None and r.get("value") is not None]
    if len(stages) < 2:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.0, 3.2))
    pts = sorted((r["p95_ms"], r["value"], r["name"]) for r in stages)
    front = _pareto_front(pts)
    ax.plot([x for x, _ in front], [y for _, y in front], color="#bbbbbb", lw=1, zorder=0, label="frontier")
    for x, y, name in pts:
        on = (x, y) in front
        ax.scatter([x], [y], s=36, color=BLUE if on else GREY, zorder=2)
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
    ax.set_xscale("log")
    _plain_ticks(ax, [x for x, _, _ in pts])
    ax.set_xlabel("p95 latency (ms, log scale)")
    ax.set_ylabel(stages[0].get("metric", v.headline))
    ax.set_title("Quality against p95 latency per stage (blue: on the cost/quality frontier)")
    fig.tight_layout()
    return _svg(fig)


def _pareto_front(pts: List[Tuple[float, float, str]]) -> List[Tuple[float, float]]:
    """The points (sorted by latency) that beat the quality of every faster one."""
    best, front = -math.inf, []
    for x, y, _ in pts:
        if y > best:
            best = y
            front.append((x, y))
    return front


def _ci(xs: List[float], seed: int = 0, resamples: int = 2000) -> Tuple[float, float, float]:
    import numpy as np

    a = np.asarray(xs, dtype=float)
    mean = float(a.mean())
    if len(a) < 2:
        return mean, mean, mean
    rng = np.random.default_rng(seed)
    boots = a[rng.integers(0, len(a), size=(resamples, len(a)))].mean(axis=1)
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return mean, float(lo), float(hi)


def strata(v: SuiteView) -> Optional[str]:
    tags = v.tags()
    if not tags:
        return None
    m = v.headline
    plt = _plt()
    n_r = len(v.names)
    fig, ax = plt.subplots(figsize=(6.5, 0.5 + 0.28 * len(tags) * (n_r + 1)))
    yticks, ylabels = [], []
    y = 0.0
    for tag, qids in tags.items():
        for i, name in enumerate(v.names):
            if _stratum_point(ax, v, name, m, qids, y, i, label=tag == next(iter(tags))):
                y += 1
        yticks.append(y - (n_r + 1) / 2)
        ylabels.append(f"{tag} ({len(qids)})")
        y += 1
    ax.set_yticks(yticks, ylabels)
    ax.invert_yaxis()
    ax.set_xlabel(f"mean {m} with 95% bootstrap interval (|: baseline)")
    ax.set_title(f"{m} per stratum (query tag)")
    ax.legend(frameon=False, fontsize=8, loc="best")
    fig.tight_layout()
    return _svg(fig)


def _stratum_point(
    ax: Any, v: SuiteView, name: str, m: str, qids: List[str], y: float, i: int, label: bool
) -> bool:
    """A retriever's mean on a stratum at height ``y``, with its interval and the baseline's
    mean; False (nothing drawn) when the retriever has no value on the stratum."""
    xs = [x for q, x in v.per_query(name, m).items() if q in set(qids)]
    if not xs:
        return False
    mean, lo, hi = _ci(xs)
    ax.errorbar(
        [mean],
        [y],
        xerr=[[mean - lo], [hi - mean]],
        fmt="o",
        color=PALETTE[i % len(PALETTE)],
        ms=4,
        capsize=2,
        label=name if label else None,
    )
    base = v.base_per_query(name, m)
    bx = [base[q] for q in qids if q in base]
    if bx:
        ax.plot([sum(bx) / len(bx)], [y], marker="|", ms=10, color="#555555")
    return True


def judged(v: SuiteView) -> Optional[str]:
    if not v.rankings:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.0, 3.0))
    ks = list(range(1, 11))
    for i, name in enumerate(v.names):
        ys = v.judged_at(name, 10)
        ax.plot(ks, ys, marker="o", ms=3, color=PALETTE[i % len(PALETTE)], label=name)
    ax.set_xticks(ks)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("k")
    ax.set_ylabel("judged share of the top k")
    ax.set_title("judged@k: how much of each ranking has a judgment")
    ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return _svg(fig)


PLOTS: List[Tuple[str, Callable[[SuiteView], Optional[str]], str, str]] = [
    (
        "Now against the baseline",
        scatter_vs_baseline,
        "One point per query; red: worse than the baseline, green: better, on the diagonal: unchanged.",
        "no baseline to compare with",
    ),
    ("Per-query distribution", distribution, "Every query's value per retriever.", "no per-query values"),
    (
        "Latency",
        latency_cdf,
        "Share of queries answered within a latency; dashed: a gated ceiling.",
        "no latency was measured",
    ),
    (
        "Cost and quality",
        frontier,
        "Each stage's quality against its p95 latency.",
        "fewer than two stages with a latency",
    ),
    ("Strata", strata, "Per query tag: the mean with its 95% bootstrap interval.", "no query tags"),
    (
        "Judged coverage",
        judged,
        "Unjudged documents count as non-relevant: a low share means the metric may understate a retriever.",
        "no rankings in the report",
    ),
]


def suite_plots(v: SuiteView) -> List[Tuple[str, Optional[str], str]]:
    """Raises ImportError without matplotlib (the caller says how to get the plots)."""
    _plt()
    out = []
    for title, fn, caption, missing in PLOTS:
        try:
            svg = fn(v)
            out.append((title, svg, caption if svg else f"Not drawn: {missing}."))
        except Exception as exc:  # one plot never sinks the report
            out.append((title, None, f"Not drawn: {type(exc).__name__}: {exc}"))
    return out
