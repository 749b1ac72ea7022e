"""Callable reranker: your own ``module:function(query, docs: list[str]) -> scores``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, List, Literal, Optional, Sequence, Union

from pydantic import Field

from ...backends.guard import call_foreign
from ...errors import ConfigError
from ..config_parsing import ModelConfig
from ..digests import source_digest
from ..files import PathLike
from ..imports import import_function
from .base import Candidate, Reranker, checked_scores


class CallableReranker:
    """Your own function ``function(query: str, docs: list[str]) -> scores`` (one number per
    doc, higher = better), given as ``"module:function"`` and imported with ``search_path``
    (the suite folder) on ``sys.path``. Exceptions it raises are :class:`InfrastructureError`;
    a wrong number of scores or non-finite ones are :class:`ConfigError`. The ``id`` includes a
    hash of the function's source file; pass ``id`` to version it yourself."""

    def __init__(
        self,
        function: Union[str, Callable[..., Any]],
        search_path: Optional[PathLike] = None,
        id: Optional[str] = None,
    ):
        if callable(function):
            self.function_name = getattr(function, "__qualname__", repr(function))
            self._function = function
        else:
            self.function_name = str(function)
            self._function = import_function(
                self.function_name, Path(search_path) if search_path else None, what="callable reranker"
            )
        if id:
            self.id = id
        else:
            digest = source_digest(self._function)
            self.id = f"callable:{self.function_name}" + (f":{digest}" if digest else "")

    def rerank(self, query_text: str, candidates: Sequence[Candidate]) -> List[float]:
        if not candidates:
            return []
        value = call_foreign(
            self._function,
            f"callable reranker {self.function_name!r}",
            query_text,
            [text for _, text in candidates],
        )
        return checked_scores(
            value, len(candidates), f"callable reranker {self.function_name!r}", ConfigError
        )


class CallableRerankerConfig(ModelConfig):
    type: Literal["callable"]
    aliases = ("python",)
    function: str = Field(description="module:function(query, docs: list[str]) -> one score per doc")
    id: Optional[str] = Field(None, description="Version of the function (default: a hash of its file).")

    def build(self, base_dir: Path) -> Reranker:
        return CallableReranker(self.function, search_path=base_dir, id=self.id)
