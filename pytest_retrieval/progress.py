"""One progress bar for long loops: tqdm on a terminal, silence everywhere else."""

from __future__ import annotations

import sys
from typing import Any, Optional

__all__ = ["NoBar", "progress_bar"]


def progress_bar(total: Optional[int], desc: str, unit: str = "it", enabled: Optional[bool] = None) -> Any:
    """A tqdm bar on stderr when tqdm is installed and stderr is a terminal (or
    ``enabled=True``); otherwise a silent :class:`NoBar` with the same few methods."""
    if enabled is None:
        enabled = bool(getattr(sys.stderr, "isatty", lambda: False)())
    if enabled:
        try:
            from tqdm import tqdm
        except ImportError:
            pass
        else:
            return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False, dynamic_ncols=True)
    return NoBar()


class NoBar:
    """The bar when there is none to show: every method does nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        pass

    def set_description(self, *args: Any, **kwargs: Any) -> None:
        pass

    def close(self) -> None:
        pass
