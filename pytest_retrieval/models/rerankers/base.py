"""What a reranker is (:class:`Reranker`), and the checks and score transforms the kinds
share."""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    Any,
    List,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    runtime_checkable,
)

from ...errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

Candidate = Tuple[str, str]


@runtime_checkable
class Reranker(Protocol):
    """What the suite runner needs from a reranker.

    ``rerank`` returns one finite float per candidate, in candidate order; higher is better.
    ``id`` must change whenever the scores would change (model file, options)."""

    @property
    def id(self) -> str: ...

    def rerank(self, query_text: str, candidates: Sequence[Candidate]) -> List[float]: ...


def checked_scores(value: Any, n: int, source: str, error: type) -> List[float]:
    """One finite float per candidate, or ``error`` (one line)."""
    try:
        import numpy as np

        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: an integer too large for a float
        raise error(f"{source} returned something that is not a list of finite numbers ({exc})") from None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1 or arr.shape[0] != n:
        raise error(
            f"{source} returned {tuple(arr.shape)} scores for {n} candidates; "
            f"expected one score per candidate"
        )
    if not np.isfinite(arr).all():
        raise error(f"{source} returned NaN or infinite scores")
    return arr.tolist()


def logits_to_scores(logits: np.ndarray, source: str) -> np.ndarray:
    """One score per pair from a cross-encoder's logits.

    ``(n,)`` or ``(n, 1)``: the logit itself. ``(n, 2)``: ``logit[1] - logit[0]``, the log-odds
    of the "relevant" class (same order as ``softmax(...)[:, 1]``, without saturating at 1.0).
    Anything else is a :class:`ConfigError`."""
    import numpy as np

    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim == 1:
        return logits
    if logits.ndim == 2 and logits.shape[1] == 1:
        return logits[:, 0]
    if logits.ndim == 2 and logits.shape[1] == 2:
        return logits[:, 1] - logits[:, 0]
    raise ConfigError(
        f"{source} returns logits of shape {tuple(logits.shape)}; a reranking "
        f"cross-encoder has 1 output (relevance) or 2 (not relevant, relevant)"
    )


def apply_activation(scores: np.ndarray, activation: str) -> np.ndarray:
    """``sigmoid`` maps scores to (0, 1) (same order); ``none`` keeps them."""
    import numpy as np

    if activation == "sigmoid":
        return 1.0 / (1.0 + np.exp(-scores))
    return scores


ACTIVATIONS = ("none", "sigmoid")


def check_activation(activation: Optional[str], what: str) -> str:
    """The activation in lower case (``none`` when not given); another is a ConfigError."""
    value = "none" if activation is None else str(activation).lower()
    if value not in ACTIVATIONS:
        raise ConfigError(f"{what}: activation must be 'none' or 'sigmoid', got {activation!r}")
    return value
