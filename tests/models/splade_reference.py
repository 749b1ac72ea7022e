"""An independent reference forward pass of a SPLADE-max BERT masked-language model, in numpy
(float64), for the tests of the ``onnx`` and ``transformers`` sparse encoders on the real model
of ``../shared/models/splade-tiny`` (issue #35).

BERT as in Devlin et al. 2019 and Hugging Face's ``modeling_bert.py``: embeddings (word +
position + token type 0) and LayerNorm; per layer, multi-head self-attention with a residual and
LayerNorm (post-LN), an erf-GELU feed-forward with a residual and LayerNorm; the MLM head: dense,
GELU, LayerNorm, then the decoder tied to the word embeddings plus ``cls.predictions.bias``.
SPLADE-max: per vocabulary entry, the max over tokens of ``log(1 + relu(logit))``. The weights
are read from the ``.safetensors`` file by its published layout (8-byte little-endian header
length, a JSON header of name -> dtype, shape, byte offsets, then the raw data); LayerNorm
parameters may carry the legacy ``gamma``/``beta`` names, as this checkpoint's do."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Dict, List, Sequence

import numpy as np


def load_safetensors(path: Path) -> Dict[str, np.ndarray]:
    raw = Path(path).read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + size])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", info
        start, end = info["data_offsets"]
        data = np.frombuffer(raw[8 + size + start : 8 + size + end], dtype="<f4")
        out[name] = data.reshape(info["shape"]).astype(np.float64)
    return out


def _gelu(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf

    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


class Reference:
    def __init__(self, model_dir: Path):
        config = json.loads((model_dir / "config.json").read_text())
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.w = load_safetensors(model_dir / "model.safetensors")

    def _norm(self, x: np.ndarray, prefix: str) -> np.ndarray:
        w = self.w
        gain = w.get(prefix + ".gamma", w.get(prefix + ".weight"))
        bias = w.get(prefix + ".beta", w.get(prefix + ".bias"))
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * gain + bias

    def _dense(self, x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ self.w[prefix + ".weight"].T + self.w[prefix + ".bias"]

    def logits(self, ids: Sequence[int]) -> np.ndarray:
        w, n = self.w, len(ids)
        h = (
            w["bert.embeddings.word_embeddings.weight"][list(ids)]
            + w["bert.embeddings.position_embeddings.weight"][:n]
            + w["bert.embeddings.token_type_embeddings.weight"][0]
        )
        h = self._norm(h, "bert.embeddings.LayerNorm")
        width = h.shape[1] // self.heads
        for layer in range(self.layers):
            p = f"bert.encoder.layer.{layer}."
            q, k, v = (
                self._dense(h, p + f"attention.self.{name}").reshape(n, self.heads, width).transpose(1, 0, 2)
                for name in ("query", "key", "value")
            )
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(width)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            attended = (scores / scores.sum(-1, keepdims=True)) @ v
            attended = attended.transpose(1, 0, 2).reshape(n, -1)
            h = self._norm(
                self._dense(attended, p + "attention.output.dense") + h, p + "attention.output.LayerNorm"
            )
            inner = _gelu(self._dense(h, p + "intermediate.dense"))
            h = self._norm(self._dense(inner, p + "output.dense") + h, p + "output.LayerNorm")
        t = self._norm(
            _gelu(self._dense(h, "cls.predictions.transform.dense")), "cls.predictions.transform.LayerNorm"
        )
        return t @ w["bert.embeddings.word_embeddings.weight"].T + w["cls.predictions.bias"]

    def splade(self, ids: Sequence[int], terms: List[str]) -> Dict[str, float]:
        weights = np.log1p(np.maximum(self.logits(ids), 0.0)).max(axis=0)
        return {terms[j]: float(weights[j]) for j in np.flatnonzero(weights > 0)}
