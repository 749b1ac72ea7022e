"""What an installed-but-unused pytest-retrieval adds to `pytest --collect-only`.

Runs `pytest --collect-only` on a one-test project with entry-point autoloading off (so other
installed plugins do not add noise), alternating with `-p pytest_retrieval.plugin` and without,
N times each in the same run, and prints min and median of each, their difference and ratio
(the minimum is the least disturbed by other load). Budget (issue 2): at most 50 ms added.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N = 25


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        Path(d, "test_a.py").write_text("def test_x():\n    pass\n")
        base = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
        times = {"with": [], "without": []}
        for _ in range(N):
            for label, extra in (("with", ["-p", "pytest_retrieval.plugin"]), ("without", [])):
                t0 = time.perf_counter()
                subprocess.run(base + extra, cwd=d, check=True, capture_output=True, env=env)
                times[label].append(time.perf_counter() - t0)
    print(f"pytest --collect-only, {N} interleaved runs each:")
    for stat in (min, statistics.median):
        w, wo = stat(times["with"]), stat(times["without"])
        print(
            f"  {stat.__name__:6}  with plugin {w * 1000:7.1f} ms, without {wo * 1000:7.1f} ms, "
            f"added {(w - wo) * 1000:6.1f} ms (ratio {w / wo:.3f}x; budget 50 ms)"
        )
    code = (
        "import time, pytest; t = time.perf_counter(); import pytest_retrieval.plugin; "
        "print((time.perf_counter() - t) * 1000)"
    )
    imp = statistics.median(
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(N)
    )
    print(f"  import pytest_retrieval.plugin alone (pytest already loaded): {imp:.2f} ms")


if __name__ == "__main__":
    main()
