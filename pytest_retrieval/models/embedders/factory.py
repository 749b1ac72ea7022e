"""Building an embedder from its config: :data:`EmbedderConfig` (the union of the kinds'
config models, discriminated by ``type``, as the suite schema uses it) and
:func:`make_embedder`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Mapping, Type, Union, get_args

from pydantic import Field
from typing_extensions import Annotated

from ..config_parsing import ModelConfig, parse_config
from ..files import PathLike
from .base import Embedder
from .callables import CallableEmbedderConfig
from .onnx import OnnxEmbedderConfig
from .precomputed import PrecomputedEmbedderConfig
from .sentence_transformers import SentenceTransformersEmbedderConfig

EmbedderConfig = Annotated[
    Union[
        PrecomputedEmbedderConfig,
        OnnxEmbedderConfig,
        SentenceTransformersEmbedderConfig,
        CallableEmbedderConfig,
    ],
    Field(discriminator="type"),
]
"""The ``embedder`` section of a suite: one config model per kind, chosen by ``type`` (as
written: the suite takes no aliases here, and coerces values as pydantic does; a dict given
to :func:`make_embedder` is read strictly, see :func:`~pytest_retrieval.models.config_parsing.parse_config`)."""

EMBEDDER_CONFIGS: Dict[str, Type[ModelConfig]] = {
    get_args(cls.model_fields["type"].annotation)[0]: cls for cls in get_args(get_args(EmbedderConfig)[0])
}
"""kind -> config model."""

_TYPE_WORDS = {"int": "int", "float": "float", "bool": "bool", "string": "str"}


def make_embedder(config: Union[ModelConfig, Mapping[str, Any]], base_dir: PathLike = ".") -> Embedder:
    """Build an embedder from its validated config model, or from a config dict (validated
    here); relative paths resolve against ``base_dir``.

    ``{"type": "precomputed", "queries": "vectors/queries.npy", "query_ids":
    "vectors/query_ids.txt", "documents": "vectors/corpus.npy", "document_ids":
    "vectors/corpus_ids.txt"}`` (``.jsonl`` files need no id list; either side may be
    left out; optional ``id``);
    ``{"type": "onnx", "model": "models/minilm"}`` plus optional ``max_length``,
    ``batch_size``, ``max_batch_tokens``, ``normalize``, ``pooling`` (``mean``/``cls``),
    ``query_prefix``, ``document_prefix``, ``threads``;
    ``{"type": "sentence-transformers", "model": "name or path"}`` plus optional
    ``normalize``, ``batch_size``, ``query_prefix``, ``document_prefix``, ``device``, ``id``;
    ``{"type": "callable", "function": "module:function"}`` plus optional
    ``query_function``, ``id`` (modules are imported with ``base_dir`` on ``sys.path``).
    The options are the fields of the kinds' config models. Unknown keys, missing required
    keys and wrongly typed values are :class:`ConfigError`."""
    model = parse_config(
        config,
        "embedder",
        EMBEDDER_CONFIGS,
        _TYPE_WORDS,
        "'type' is required (precomputed, onnx, sentence-transformers or callable)",
    )
    return model.build(Path(base_dir))
