"""Learned sparse encoders: turn query and document texts into ``{term: weight}`` vectors for
``type: sparse`` retrievers (issue #25). Three kinds ship, one module each, with its config
model beside it:

``precomputed``  vectors computed elsewhere: JSONL ``{"_id": ..., "vector": {term: weight}}``,
                 or a scipy ``.npz`` CSR matrix + vocabulary file + id file.
``onnx``         a SPLADE-style masked-language-model export, run with onnxruntime.
``transformers`` a SPLADE masked-language model run with transformers on torch (optional extra).
``callable``     your own ``module:function``: ``texts -> list[dict[str, float]]``.

:func:`make_sparse_encoder` builds one; :func:`encode_corpus` encodes a corpus once and caches
it on disk beside the dense vectors. The weights are raw: IDF is the runner's (``sparse``).
"""

from .base import SparseEncoder, SparseVector
from .cache import encode_corpus
from .callables import CallableSparseEncoder, CallableSparseEncoderConfig
from .factory import SPARSE_ENCODER_CONFIGS, SparseEncoderConfig, make_sparse_encoder
from .onnx import OnnxSparseEncoder, OnnxSparseEncoderConfig
from .precomputed import PrecomputedSparseEncoder, PrecomputedSparseEncoderConfig
from .transformers_mlm import TransformersSparseEncoder, TransformersSparseEncoderConfig

# fmt: off
__all__ = [
    "SPARSE_ENCODER_CONFIGS", "CallableSparseEncoder", "CallableSparseEncoderConfig",
    "OnnxSparseEncoder", "OnnxSparseEncoderConfig", "PrecomputedSparseEncoder",
    "PrecomputedSparseEncoderConfig", "SparseEncoder", "SparseEncoderConfig", "SparseVector",
    "TransformersSparseEncoder", "TransformersSparseEncoderConfig", "encode_corpus", "make_sparse_encoder",
]
# fmt: on
