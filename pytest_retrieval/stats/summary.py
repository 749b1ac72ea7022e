"""Statistics over measurements (pure, no I/O): latency percentiles for now."""

from __future__ import annotations

import math
import platform
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default, 'linear' / Hyndman-Fan type 7)."""
    if not values:
        return math.nan
    xs = sorted(values)
    if len(xs) == 1:
        return float(xs[0])
    pos = (len(xs) - 1) * (q / 100.0)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return float(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo))


@dataclass
class LatencySummary:
    """Client wall time per request (ms), and the server's ``took`` where it reports one."""

    samples_ms: List[float]
    server_took_ms: List[float]
    p50: float
    p95: float
    p99: float
    mean: float
    warmup: int
    repetitions: int
    environment: Dict[str, str] = field(default_factory=dict)
    server_p50: Optional[float] = None
    server_p95: Optional[float] = None

    def as_dict(self) -> Dict[str, object]:
        out: Dict[str, object] = {
            "p50": self.p50,
            "p95": self.p95,
            "p99": self.p99,
            "mean": self.mean,
            "n": len(self.samples_ms),
            "warmup": self.warmup,
            "repetitions": self.repetitions,
        }
        if self.server_took_ms:
            out["server_took_p50"] = self.server_p50
            out["server_took_p95"] = self.server_p95
        out["environment"] = self.environment
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}


def environment() -> Dict[str, str]:
    import os

    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "system": platform.system(),
        "cpus": str(os.cpu_count()),
    }


def summarize_latency(
    wall_ms: Sequence[float], took_ms: Sequence[float], *, warmup: int, repetitions: int
) -> LatencySummary:
    wall = list(wall_ms)
    took = list(took_ms)
    return LatencySummary(
        samples_ms=wall,
        server_took_ms=took,
        p50=percentile(wall, 50),
        p95=percentile(wall, 95),
        p99=percentile(wall, 99),
        mean=(sum(wall) / len(wall)) if wall else math.nan,
        warmup=warmup,
        repetitions=repetitions,
        environment=environment(),
        server_p50=percentile(took, 50) if took else None,
        server_p95=percentile(took, 95) if took else None,
    )
