"""Building a reranker from its config: :data:`RerankerConfig` (the union of the kinds'
config models, discriminated by ``type``, as the suite schema uses it) and
:func:`make_reranker`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Mapping, Type, Union, get_args

from pydantic import Field, WrapValidator
from pydantic_core import PydanticCustomError
from typing_extensions import Annotated

from ...errors import ConfigError
from ..config_parsing import ModelConfig, parse_config
from ..files import PathLike
from .base import Reranker
from .callables import CallableRerankerConfig
from .cohere import CohereRerankerConfig
from .onnx_bi_encoder import OnnxBiEncoderRerankerConfig
from .onnx_cross_encoder import OnnxCrossEncoderRerankerConfig
from .sentence_transformers import SentenceTransformersRerankerConfig


def _read(value: Any, handler: Any) -> ModelConfig:
    """A suite's reranker is read as :func:`make_reranker` reads a dict (its messages too)."""
    if not isinstance(value, Mapping) and not isinstance(value, ModelConfig):
        raise PydanticCustomError("dict_type", "Input should be a valid dictionary")
    try:
        return _parse(value)
    except ConfigError as exc:
        raise PydanticCustomError("reranker_config", "{detail}", {"detail": exc.detail}) from None


RerankerConfig = Annotated[
    Union[
        OnnxCrossEncoderRerankerConfig,
        OnnxBiEncoderRerankerConfig,
        SentenceTransformersRerankerConfig,
        CohereRerankerConfig,
        CallableRerankerConfig,
    ],
    Field(discriminator="type"),
    WrapValidator(_read),
]
"""The ``reranker`` of a suite's rerank stage: one config model per kind, chosen by ``type``
(aliases allowed), read strictly as :func:`make_reranker` reads a dict."""

RERANKER_CONFIGS: Dict[str, Type[ModelConfig]] = {
    get_args(cls.model_fields["type"].annotation)[0]: cls for cls in get_args(get_args(RerankerConfig)[0])
}
"""kind -> config model."""

_TYPE_WORDS = {"int": "an integer", "float": "a number", "bool": "true or false", "string": "a string"}


def make_reranker(config: Union[ModelConfig, Mapping[str, Any]], base_dir: PathLike = ".") -> Reranker:
    """Build a reranker from its validated config model, or from a config dict (validated
    here); relative model paths resolve against ``base_dir``.

    ``{"type": "onnx-cross-encoder", "model": DIR}`` (+ ``max_length``, ``batch_size``,
    ``max_batch_tokens``, ``activation`` none|sigmoid, ``threads``);
    ``{"type": "onnx-bi-encoder", "model": DIR}`` (+ ``max_length``, ``batch_size``,
    ``max_batch_tokens``, ``pooling``, ``query_prefix``, ``document_prefix``, ``threads``,
    ``cache_documents``);
    ``{"type": "sentence-transformers", "model": NAME_OR_DIR}`` (+ ``max_length``,
    ``batch_size``, ``device``, ``activation``, ``id``);
    ``{"type": "cohere"}`` (+ ``model``, ``api_key_env`` (default COHERE_API_KEY), ``api_key``,
    ``base_url``, ``timeout``, ``max_retries``, ``max_documents``, ``max_tokens_per_doc``,
    ``id``);
    ``{"type": "callable", "function": "module:function"}`` (+ ``id``).
    The options are the fields of the kinds' config models. Unknown keys, missing required
    keys and wrongly typed values are :class:`ConfigError`."""
    return _parse(config).build(Path(base_dir))


def _parse(config: Any) -> ModelConfig:
    return parse_config(
        config,
        "reranker",
        RERANKER_CONFIGS,
        _TYPE_WORDS,
        f"'type' is required ({', '.join(RERANKER_CONFIGS)})",
    )
