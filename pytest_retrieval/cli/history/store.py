"""The store a ``history`` command reads: ``--store PATH|URL``, else the ``retrieval_history``
ini key of the pytest configuration in the current folder (``pytest.ini``, ``pyproject.toml``,
``tox.ini``, ``setup.cfg``: pytest's own order), a relative path taken against that file's
folder as the plugin does against the rootdir."""

from __future__ import annotations

import argparse
import configparser
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

from ...errors import HistoryError

__all__ = ["add_store_option", "open_from_args", "store_location"]


def add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="PATH|URL",
        default=None,
        help="the history: a SQLite file or elasticsearch+https://host:9200/index (default: "
        "retrieval_history in the pytest configuration of the current folder)",
    )


def store_location(args: argparse.Namespace, cwd: Optional[Path] = None) -> str:
    """``--store``, else the ini key; one ``HistoryError`` line when neither names a store."""
    if getattr(args, "store", None):
        return str(args.store)
    found = _ini_history(Path.cwd() if cwd is None else cwd)
    if found is None:
        raise HistoryError(
            "history: no store: give --store PATH|URL, or set retrieval_history in the pytest configuration"
        )
    return found


def open_from_args(args: argparse.Namespace, outputs: Sequence[Any] = ()) -> Any:
    """The store of ``args``, once no output (``output_paths.Output`` s: ``trend --html``,
    ``compare --markdown``) is the store's own file: writing it would replace the history."""
    from ...history import is_engine_url, open_store
    from ...output_paths import check_outputs

    location = store_location(args)
    if "://" not in location:
        check_outputs(
            outputs, [("--store" if getattr(args, "store", None) else "retrieval_history", location)]
        )
    if not is_engine_url(location) and "://" not in location and not Path(location).expanduser().exists():
        raise HistoryError(
            f"history {location}: no such store (a SQLite history is made by the first run that writes it)"
        )
    return open_store(location)


def _ini_history(folder: Path) -> Optional[str]:
    """``retrieval_history`` of the first pytest configuration file in ``folder`` that is one."""
    for name, section in (
        ("pytest.ini", "pytest"),
        ("pyproject.toml", None),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ):
        path = folder / name
        if not path.is_file():
            continue
        value = _toml_value(path) if section is None else _cfg_value(path, section)
        if value is _NOT_PYTEST:
            continue
        if not value:
            return None
        text = str(value).strip()
        return text if "://" in text else str(folder / Path(text).expanduser())
    return None


_NOT_PYTEST = object()


def _toml_value(path: Path) -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - pytest itself depends on tomli before 3.11
        import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise HistoryError(f"{path}: cannot read it for retrieval_history ({exc})") from None
    options = data.get("tool", {}).get("pytest", {}).get("ini_options")
    return _NOT_PYTEST if not isinstance(options, dict) else options.get("retrieval_history")


def _cfg_value(path: Path, section: str) -> Any:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (OSError, UnicodeDecodeError, configparser.Error) as exc:
        raise HistoryError(f"{path}: cannot read it for retrieval_history ({exc})") from None
    if not parser.has_section(section):
        return _NOT_PYTEST
    return parser.get(section, "retrieval_history", fallback=None)
