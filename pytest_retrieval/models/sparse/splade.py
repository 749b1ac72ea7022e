"""SPLADE-max pooling, shared by the ONNX and the ``transformers`` sparse encoders: a masked
language model's logits (texts, tokens, vocabulary) become one ``{token: weight}`` per text.

The weight of vocabulary entry ``j`` is ``max over tokens i of log(1 + relu(logits[i, j]))`` over
the tokens the attention mask keeps (SPLADE v2/++ "max pooling": Formal et al. 2021, "SPLADE v2",
eq. 2; naver/splade ``models/transformer_rep.py``: ``torch.max(torch.log(1 + torch.relu(out)) *
attention_mask.unsqueeze(-1), dim=1)``); its term is the tokenizer's token ``j``.

numpy is imported on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Sequence

from ...errors import ConfigError
from .base import SparseVector

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


def vocabulary_terms(vocab: Dict[str, int]) -> List[str]:
    """Vocabulary column -> token, from a tokenizer's ``{token: id}``."""
    terms = [""] * (max(vocab.values(), default=-1) + 1)
    for token, column in vocab.items():
        terms[column] = token
    return terms


def splade_max(logits: Any, mask: Any, vocabulary: int, source: str) -> np.ndarray:
    """(texts, vocabulary) weights of a batch's MLM ``logits`` (texts, tokens, vocabulary) and
    its attention ``mask`` (texts, tokens). A last dimension other than the tokenizer's
    ``vocabulary`` size, or NaN logits on a kept token (``max(NaN, 0)`` would drop the term
    silently), is one :class:`ConfigError` naming ``source``.

    ``log(1 + relu(x))`` is monotonic, so the max over tokens is taken on the logits first and
    the function applied to the (texts, vocabulary) maxima only: the same floats (a float
    ``log1p`` is monotonic too), without a pass over every token's logits (5x faster per
    document on 256 tokens x 30,522 terms). NaN survives ``max``, so it is checked after."""
    import numpy as np

    logits = np.asarray(logits, dtype=np.float32)
    if logits.ndim != 3 or logits.shape[2] != vocabulary:
        raise ConfigError(
            f"vocabulary mismatch: the model's output has shape {tuple(logits.shape)}, expected "
            f"(texts, tokens, {vocabulary}) for the tokenizer's {vocabulary} tokens",
            file=source,
        )
    kept = np.asarray(mask, dtype=bool)
    peaks = np.full((logits.shape[0], vocabulary), -np.inf, dtype=np.float32)
    for row, keep in enumerate(kept):
        length = int(keep.sum())
        if not length:
            continue
        tokens = logits[row, :length] if keep[:length].all() else logits[row, keep]  # right padding: a view
        peaks[row] = tokens.max(axis=0)
    if np.isnan(peaks).any():
        raise ConfigError("the model returned NaN logits", file=source)
    return np.log1p(np.maximum(peaks, 0.0))


def as_vectors(weights: np.ndarray, terms: Sequence[str]) -> List[SparseVector]:
    """One ``{term: weight}`` per row of ``weights``, the non-zero columns only."""
    import numpy as np

    out: List[SparseVector] = []
    for row in weights:
        nz = np.flatnonzero(row > 0)
        out.append({terms[j]: float(row[j]) for j in nz.tolist()})
    return out
