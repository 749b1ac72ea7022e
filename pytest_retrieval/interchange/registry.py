"""The interchange formats by name (``judge import --from``, ``judge export --to``): one module
per tool, each with ``read(path, options) -> Judgments``; what each export writes is chosen by
``judge export`` (``cli/judge/interchange.py``), which passes the retriever ``_rank_eval`` needs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Tuple

from ..errors import ConfigError
from .model import ImportOptions, Judgments

__all__ = ["FORMATS", "Format", "get", "read"]


@dataclass(frozen=True)
class Format:
    name: str
    tool: str
    module: str  # pytest_retrieval.interchange.<module>
    extensions: Tuple[str, ...]  # what an export may be named, the first advised

    def reader(self) -> Callable[[Path, ImportOptions], Judgments]:
        import importlib

        return importlib.import_module(f"{__package__}.{self.module}").read  # type: ignore[no-any-return]


FORMATS: Dict[str, Format] = {
    f.name: f
    for f in (
        Format("quepid", "Quepid", "quepid", (".csv", ".json")),
        Format("rre", "RRE (Rated Ranking Evaluator)", "rre", (".json",)),
        Format("srw", "OpenSearch Search Relevance Workbench", "srw", (".json",)),
        Format("rank-eval", "Elasticsearch/OpenSearch _rank_eval", "rank_eval", (".json", ".txt")),
    )
}


def get(name: str) -> Format:
    if name not in FORMATS:
        raise ConfigError(f"unknown format {name!r}: expected one of {', '.join(FORMATS)}")
    return FORMATS[name]


def read(name: str, path: Path, options: ImportOptions = ImportOptions()) -> Judgments:
    """``path`` read as the tool ``name`` writes it."""
    return get(name).reader()(Path(path), options)
