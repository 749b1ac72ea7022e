"""Callable sparse encoder: your own ``module:function`` taking a list of texts and returning
one ``{term: weight}`` mapping per text."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, List, Literal, Optional, Sequence

from pydantic import Field

from ...backends.guard import call_foreign
from ...errors import ConfigError
from ..config_parsing import ModelConfig
from ..files import PathLike
from ..imports import import_function_pair
from .base import SparseEncoder, SparseVector


class CallableSparseEncoder:
    """``function(texts: list[str]) -> list[dict[str, float]]`` (``module:function``, imported
    with ``search_path`` on ``sys.path``); ``query_function`` optionally encodes queries. The
    outputs are checked by the runner (weights finite and >= 0, one mapping per text); an
    exception raised by the function is an :class:`InfrastructureError`. The ``id`` includes
    a hash of the function's source file unless ``id`` is given."""

    cacheable = True

    def __init__(
        self,
        function: str,
        query_function: Optional[str] = None,
        search_path: Optional[PathLike] = None,
        id: Optional[str] = None,
    ):
        path = Path(search_path) if search_path is not None else None
        self.function_name = function
        self.query_function_name = query_function
        self._function, self._query_function, self.id = import_function_pair(
            function, query_function, path, "callable sparse encoder", id, "callable-sparse"
        )

    def _call(self, fn: Callable[..., Any], name: str, texts: Sequence[str]) -> List[SparseVector]:
        if not texts:
            return []
        value = call_foreign(fn, f"callable sparse encoder {name!r}", list(texts))
        if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
            raise ConfigError(
                f"callable sparse encoder {name!r} returned {type(value).__name__}; expected a list "
                f"of {{term: weight}} mappings, one per text"
            )
        if len(value) != len(texts):
            raise ConfigError(
                f"callable sparse encoder {name!r} returned {len(value)} vectors for {len(texts)} texts"
            )
        return list(value)

    def encode_queries(self, ids: Sequence[str], texts: Sequence[str]) -> List[SparseVector]:
        return self._call(self._query_function, self.query_function_name or self.function_name, texts)

    def encode_documents(self, ids: Sequence[str], texts: Sequence[str]) -> List[SparseVector]:
        return self._call(self._function, self.function_name, texts)


class CallableSparseEncoderConfig(ModelConfig):
    type: Literal["callable"]
    function: str = Field(
        description="module:function taking a list of texts, returning {term: weight} per text."
    )
    query_function: Optional[str] = Field(
        None, description="module:function for queries (default: function)."
    )
    id: Optional[str] = Field(None, description="Version of the function (default: a hash of its file).")

    def build(self, base_dir: Path) -> SparseEncoder:
        return CallableSparseEncoder(self.function, self.query_function, search_path=base_dir, id=self.id)
