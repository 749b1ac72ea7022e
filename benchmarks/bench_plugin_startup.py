"""What an installed-but-unused pytest-retrieval adds to `pytest --collect-only`.

Runs `pytest --collect-only` on a one-test project, alternating with and without the plugin
(`-p no:retrieval`), N times each in the same run, and prints medians, their difference and ratio.
Budget (issue 2): at most 50 ms added.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N = 15


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        Path(d, "test_a.py").write_text("def test_x():\n    pass\n")
        base = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        times = {"with": [], "without": []}
        for _ in range(N):
            for label, extra in (("with", []), ("without", ["-p", "no:retrieval"])):
                t0 = time.perf_counter()
                subprocess.run(base + extra, cwd=d, check=True, capture_output=True)
                times[label].append(time.perf_counter() - t0)
    w, wo = statistics.median(times["with"]), statistics.median(times["without"])
    print(f"pytest --collect-only, median of {N} interleaved runs each:")
    print(f"  with plugin    {w * 1000:7.1f} ms")
    print(f"  without plugin {wo * 1000:7.1f} ms")
    print(f"  added          {(w - wo) * 1000:7.1f} ms  (ratio with/without = {w / wo:.3f}x; budget 50 ms)")
    code = ("import time, pytest; t = time.perf_counter(); import pytest_retrieval.plugin; "
            "print((time.perf_counter() - t) * 1000)")
    imp = statistics.median(float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                                 text=True, check=True).stdout) for _ in range(N))
    print(f"  import pytest_retrieval.plugin alone (pytest already loaded): {imp:.2f} ms")


if __name__ == "__main__":
    main()
