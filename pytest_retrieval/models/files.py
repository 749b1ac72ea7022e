"""Paths and files of model options: ``~`` and relative paths resolved against the suite's
folder, a local model folder told from a hub model name, and small JSON files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Union

from ..errors import ConfigError

PathLike = Union[str, "os.PathLike[str]"]


def resolve(base: Path, value: PathLike) -> Path:
    """``value`` with ``~`` expanded; relative to ``base`` unless absolute."""
    p = Path(os.path.expanduser(os.fspath(value)))
    return p if p.is_absolute() else base / p


def local_or_hub(model: str, base: Path) -> str:
    """A model folder relative to ``base`` when it exists (or starts with ``.``/``~``),
    else the name as given (a hub model name is passed through)."""
    local = resolve(base, model)
    if model.startswith((".", "~")) or local.exists():
        return str(local)
    return model


def read_json(path: Path) -> Dict[str, Any]:
    """A JSON object file; ``{}`` when absent or not an object."""
    if not path.is_file():
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            value = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read JSON: {exc}", file=str(path)) from None
    return value if isinstance(value, dict) else {}
