"""Building a sparse encoder from its config: :data:`SparseEncoderConfig` (the union of the
kinds' config models, discriminated by ``type``) and :func:`make_sparse_encoder`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Mapping, Type, Union, get_args

from pydantic import Field
from typing_extensions import Annotated

from ..config_parsing import ModelConfig, parse_config
from ..files import PathLike
from .base import SparseEncoder
from .callables import CallableSparseEncoderConfig
from .onnx import OnnxSparseEncoderConfig
from .precomputed import PrecomputedSparseEncoderConfig
from .transformers_mlm import TransformersSparseEncoderConfig

SparseEncoderConfig = Annotated[
    Union[
        PrecomputedSparseEncoderConfig,
        OnnxSparseEncoderConfig,
        TransformersSparseEncoderConfig,
        CallableSparseEncoderConfig,
    ],
    Field(discriminator="type"),
]
"""A sparse retriever's ``sparse_encoder``: one config model per kind, chosen by ``type``."""

SPARSE_ENCODER_CONFIGS: Dict[str, Type[ModelConfig]] = {
    get_args(cls.model_fields["type"].annotation)[0]: cls
    for cls in get_args(get_args(SparseEncoderConfig)[0])
}

_TYPE_WORDS = {"int": "an integer", "float": "a number", "bool": "true or false", "string": "a string"}


def make_sparse_encoder(
    config: Union[ModelConfig, Mapping[str, Any]], base_dir: PathLike = "."
) -> SparseEncoder:
    """A sparse encoder from its validated config model or a config dict (read strictly);
    relative paths resolve against ``base_dir``. Unknown keys, missing required keys and
    wrongly typed values are :class:`ConfigError`."""
    model = parse_config(
        config,
        "sparse_encoder",
        SPARSE_ENCODER_CONFIGS,
        _TYPE_WORDS,
        "'type' is required (precomputed, onnx, transformers or callable)",
    )
    return model.build(Path(base_dir))
