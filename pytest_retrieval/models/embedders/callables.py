"""Callable embedder: your own ``module:function`` taking a list of texts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Sequence

from pydantic import Field

from ...backends.guard import call_foreign
from ..config_parsing import ModelConfig
from ..files import PathLike
from ..imports import import_function_pair
from ..outputs import as_matrix
from .base import Embedder

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class CallableEmbedder:
    """Your own function: ``function(texts: list[str]) -> array-like (len(texts), dim)``.

    ``function`` is ``"module:function"`` (``module:Class.method`` works too), imported with
    ``search_path`` (the suite folder) on ``sys.path``; ``query_function`` optionally embeds
    queries differently. Import problems and malformed outputs are :class:`ConfigError`,
    exceptions raised by the function are :class:`InfrastructureError`. The ``id`` includes a
    hash of the function's source file, so editing it invalidates cached vectors; pass
    ``id`` to version it yourself instead."""

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
            function, query_function, path, "callable embedder", id, "callable"
        )

    def _call(self, fn: Callable[..., Any], name: str, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        value = call_foreign(fn, f"callable embedder {name!r}", list(texts))
        return as_matrix(value, len(texts), f"callable embedder {name!r}")

    def embed_queries(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        return self._call(self._query_function, self.query_function_name or self.function_name, texts)

    def embed_documents(self, ids: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        return self._call(self._function, self.function_name, texts)


class CallableEmbedderConfig(ModelConfig):
    type: Literal["callable"]
    aliases = ("python",)
    function: str = Field(description="module:function taking a list of texts")
    query_function: Optional[str] = Field(
        None, description="module:function for queries (default: function)."
    )
    id: Optional[str] = Field(None, description="Version of the function (default: a hash of its file).")

    def build(self, base_dir: Path) -> Embedder:
        return CallableEmbedder(self.function, self.query_function, search_path=base_dir, id=self.id)
