"""Rerankers: re-score a retriever's top ``window`` candidates for one query.

A :class:`Reranker` has a stable ``id`` (it changes whenever the scores would change) and one
method, ``rerank(query_text, candidates) -> scores``, where ``candidates`` is a sequence of
``(doc_id, doc_text)`` and the scores come back in the same order (higher = more relevant).
:func:`rerank_ranking` applies one to a :class:`~pytest_retrieval.types.Ranking`, and
:func:`rerank_run` to every query of a :class:`~pytest_retrieval.types.Run`.

Kinds (built from a suite's config dict by :func:`make_reranker`):

``onnx-cross-encoder``     a cross-encoder exported to ONNX (query/document pairs -> logits),
                           run with onnxruntime + tokenizers.
``onnx-bi-encoder``        cosine between query and document embeddings of an ONNX
                           sentence-embedding model (:class:`~pytest_retrieval.models.embedders.OnnxEmbedder`).
``sentence-transformers``  ``sentence_transformers.CrossEncoder`` (optional extra).
``cohere``                 Cohere's hosted ``/v2/rerank``, through the official ``cohere`` SDK.
``callable``               your own ``module:function(query, docs: list[str]) -> scores``.

What :func:`rerank_ranking` returns. Only the reranked window: the top ``window`` candidates,
ordered by the new score (descending), equal new scores kept in their previous order (stable),
carrying the reranker's scores. Candidates below the window are dropped. This is what the
engines do in production (Elasticsearch's ``text_similarity_reranker`` returns at most
``rank_window_size`` hits; OpenSearch's ``rerank`` response processor reorders the hits the
query returned, i.e. ``size``), and it keeps one score scale per ranking (appending the tail
with first-stage scores would mix scales and break ``evaluation.ties: trec``). Consequence:
a metric whose cut-off is deeper than ``window`` (``recall@100`` after reranking the top 20)
sees at most ``window`` documents; :func:`rerank_warnings` says so.

Errors. Bad configuration (unknown keys, missing model files, missing packages, a document
without text, a callable returning the wrong shape) is :class:`ConfigError`; a model or
service that cannot answer (onnxruntime failure, HTTP errors after retries, malformed
responses) is :class:`InfrastructureError`. API keys never appear in a message or ``repr``.

numpy, onnxruntime, tokenizers and sentence-transformers are imported on first use.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import os
import sys
import urllib.parse
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    Union,
    runtime_checkable,
)

from ..errors import ConfigError, InfrastructureError, RetrievalError
from ..types import Ranking, Run
from .embedders import _file_digest, _import_function, _options_tag, _read_json

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = [
    "CallableReranker",
    "CohereReranker",
    "OnnxBiEncoderReranker",
    "OnnxCrossEncoderReranker",
    "Reranker",
    "SentenceTransformersCrossEncoder",
    "make_reranker",
    "rerank_ranking",
    "rerank_run",
    "rerank_warnings",
]

PathLike = Union[str, "os.PathLike[str]"]
Candidate = Tuple[str, str]


@runtime_checkable
class Reranker(Protocol):
    """What the suite runner needs from a reranker.

    ``rerank`` returns one finite float per candidate, in candidate order; higher is better.
    ``id`` must change whenever the scores would change (model file, options)."""

    id: str

    def rerank(self, query_text: str, candidates: Sequence[Candidate]) -> List[float]: ...


# ---- applying a reranker -----------------------------------------------------------------


def _checked_scores(value: Any, n: int, source: str, error: type) -> List[float]:
    """One finite float per candidate, or ``error`` (one line)."""
    try:
        import numpy as np

        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise error(f"{source} returned something that is not a list of numbers ({exc})")
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


def rerank_ranking(
    reranker: Reranker, query_text: str, ranking: Ranking, doc_texts: Mapping[str, str], window: int
) -> Ranking:
    """Rerank the top ``window`` of ``ranking``; return only those, best first.

    Sorted by the reranker's score descending; equal scores keep their previous rank
    (stable). The returned scores are the reranker's. A candidate without an entry in
    ``doc_texts`` is a :class:`ConfigError`; a reranker returning the wrong number of scores,
    or non-finite ones, is an :class:`InfrastructureError`."""
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ConfigError(f"rerank window must be an integer >= 1, got {window!r}")
    head = ranking.top(window)
    if not head.doc_ids:
        return Ranking()
    missing = [d for d in head.doc_ids if d not in doc_texts]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise ConfigError(
            f"reranker {reranker.id!r}: no document text for {len(missing)} candidate(s): {shown}{more}"
        )
    candidates = [(d, doc_texts[d] or "") for d in head.doc_ids]
    scores = _checked_scores(
        reranker.rerank(query_text, candidates),
        len(candidates),
        f"reranker {reranker.id!r}",
        InfrastructureError,
    )
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    return Ranking([head.doc_ids[i] for i in order], [scores[i] for i in order])


def rerank_run(
    reranker: Reranker,
    run: Mapping[str, Ranking],
    query_texts: Mapping[str, str],
    doc_texts: Mapping[str, str],
    window: int,
) -> Run:
    """:func:`rerank_ranking` for every query of ``run`` (same query order). A query without
    text in ``query_texts`` is a :class:`ConfigError`."""
    out: Run = {}
    for qid, ranking in run.items():
        if qid not in query_texts:
            raise ConfigError(f"reranker {reranker.id!r}: no query text for query {qid!r}")
        out[qid] = rerank_ranking(reranker, query_texts[qid], ranking, doc_texts, window)
    return out


MAX_SENSIBLE_WINDOW = 200


def rerank_warnings(window: int, evaluated_k: int) -> List[str]:
    """Advice on a rerank stage: a window shallower than a gated cut-off, or one so deep
    (> 200 candidates) that the model's cost grows for little gain."""
    out = []
    if window < evaluated_k:
        out.append(
            f"rerank window {window} < k {evaluated_k}: a reranked ranking holds only its "
            f"top {window} candidates, so metrics @{evaluated_k} see at most {window} "
            f"documents (raise the window)"
        )
    if window > MAX_SENSIBLE_WINDOW:
        out.append(
            f"rerank window {window} > {MAX_SENSIBLE_WINDOW}: every query pays the model "
            f"on {window} candidates; rerankers rarely gain below the top "
            f"{MAX_SENSIBLE_WINDOW} (measure the lift at a smaller window)"
        )
    return out


# ---- shared helpers ----------------------------------------------------------------------


def _find_onnx_model(model_dir: Path, what: str) -> Path:
    if not model_dir.is_dir():
        raise ConfigError(f"{what}: ONNX model folder not found", file=str(model_dir))
    for candidate in (model_dir / "model.onnx", model_dir / "onnx" / "model.onnx"):
        if candidate.is_file():
            return candidate
    found = sorted(model_dir.glob("*.onnx"))
    if len(found) != 1:
        raise ConfigError(f"{what}: no model.onnx in the ONNX model folder", file=str(model_dir))
    return found[0]


def _logits_to_scores(logits: np.ndarray, source: str) -> np.ndarray:
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


def _apply_activation(scores: np.ndarray, activation: str) -> np.ndarray:
    import numpy as np

    if activation == "sigmoid":
        return 1.0 / (1.0 + np.exp(-scores))
    return scores


_ACTIVATIONS = ("none", "sigmoid")


def _check_activation(activation: Optional[str], what: str) -> str:
    value = "none" if activation is None else str(activation).lower()
    if value not in _ACTIVATIONS:
        raise ConfigError(f"{what}: activation must be 'none' or 'sigmoid', got {activation!r}")
    return value


# ---- ONNX cross-encoder ------------------------------------------------------------------


class OnnxCrossEncoderReranker:
    """A cross-encoder exported to ONNX (e.g. ``cross-encoder/ms-marco-MiniLM-L-6-v2`` through
    ``optimum-cli export onnx --task text-classification``), run with onnxruntime + tokenizers.

    ``model_dir`` holds ``model.onnx`` (or ``onnx/model.onnx``) and ``tokenizer.json``. Each
    candidate becomes the pair ``tokenizer.encode(query, doc)`` (the tokenizer's own pair
    template, e.g. ``[CLS] q [SEP] d [SEP]`` with token types 0/1), truncated to
    ``max_length`` tokens with the ``longest_first`` strategy (what Hugging Face tokenizers do
    with ``truncation=True``; default length: ``tokenizer_config.json`` ``model_max_length``
    when <= 8192, else 512). Pairs are sorted by length and batched (``batch_size`` pairs,
    ``max_batch_tokens`` padded tokens). The model's declared inputs among ``input_ids``,
    ``attention_mask`` and ``token_type_ids`` are fed as int64; the output named ``logits``
    (else the first output) gives the score: one logit as is, two logits as
    ``logit[1] - logit[0]``. ``activation="sigmoid"`` maps scores to (0, 1) (same order).
    """

    def __init__(
        self,
        model_dir: PathLike,
        max_length: Optional[int] = None,
        batch_size: int = 32,
        max_batch_tokens: int = 8192,
        activation: Optional[str] = None,
        threads: Optional[int] = None,
    ):
        self.model_dir = Path(model_dir)
        self.model_path = _find_onnx_model(self.model_dir, "onnx cross-encoder")
        self.tokenizer_path = self.model_dir / "tokenizer.json"
        if not self.tokenizer_path.is_file():
            raise ConfigError(
                "onnx cross-encoder: no tokenizer.json in the ONNX model folder", file=str(self.model_dir)
            )
        if max_length is None:
            configured = _read_json(self.model_dir / "tokenizer_config.json").get("model_max_length")
            max_length = (
                int(configured) if isinstance(configured, (int, float)) and 2 <= configured <= 8192 else 512
            )
        if int(max_length) < 2 or int(batch_size) < 1 or int(max_batch_tokens) < 1:
            raise ConfigError(
                "onnx cross-encoder: max_length must be >= 2, batch_size and max_batch_tokens >= 1"
            )
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)
        self.max_batch_tokens = int(max_batch_tokens)
        self.activation = _check_activation(activation, "onnx cross-encoder")
        from .embedders import _available_cores

        self.threads = int(threads) if threads else _available_cores()
        self._id: Optional[str] = None
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: Tuple[str, ...] = ()
        self._output_name = ""
        self._pad_id = 0

    @property
    def id(self) -> str:
        if self._id is None:
            digest = _file_digest(self.model_path, self.tokenizer_path)[:12]
            tag = _options_tag(
                max_length=self.max_length, activation=None if self.activation == "none" else self.activation
            )
            self._id = f"onnx-cross-encoder:{self.model_dir.name}:{digest}{tag}"
        return self._id

    def _load(self) -> None:
        if self._session is not None:
            return
        from .embedders import load_onnx

        tokenizer, session, self._pad_id, inputs = load_onnx(
            self.model_path, self.tokenizer_path, self.max_length, self.threads, "ONNX cross-encoder"
        )
        outputs = [o.name for o in session.get_outputs()]
        self._output_name = "logits" if "logits" in outputs else outputs[0]
        self._input_names = inputs
        self._tokenizer = tokenizer
        self._session = session

    def rerank(self, query_text: str, candidates: Sequence[Candidate]) -> List[float]:
        import numpy as np

        if not candidates:
            return []
        self._load()
        pairs = [(query_text or "", text or "") for _, text in candidates]
        try:
            encodings = self._tokenizer.encode_batch(pairs)
        except Exception as exc:
            raise InfrastructureError(
                f"onnx cross-encoder {self.model_dir.name}: tokenizing failed: {exc}"
            ) from exc
        lengths = [len(e.ids) for e in encodings]
        order = sorted(range(len(pairs)), key=lambda i: -lengths[i])
        scores = np.empty(len(pairs), dtype=np.float64)
        start = 0
        while start < len(order):
            width = max(1, lengths[order[start]])
            size = max(1, min(self.batch_size, self.max_batch_tokens // width))
            batch = order[start : start + size]
            start += size
            scores[batch] = self._run([encodings[i] for i in batch], width)
        return _apply_activation(scores, self.activation).tolist()

    def _run(self, encodings: List[Any], width: int) -> np.ndarray:
        import numpy as np

        n = len(encodings)
        ids = np.full((n, width), self._pad_id, dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        types = np.zeros((n, width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            length = len(enc.ids)
            ids[row, :length] = enc.ids
            mask[row, :length] = 1
            types[row, :length] = enc.type_ids
        feed = {"input_ids": ids}
        if "attention_mask" in self._input_names:
            feed["attention_mask"] = mask
        if "token_type_ids" in self._input_names:
            feed["token_type_ids"] = types
        try:
            (logits,) = self._session.run([self._output_name], feed)
        except Exception as exc:
            raise InfrastructureError(f"ONNX cross-encoder {self.model_path} failed: {exc}") from exc
        scores = _logits_to_scores(logits, f"ONNX cross-encoder {self.model_path}")
        if scores.shape[0] != n:
            raise InfrastructureError(
                f"ONNX cross-encoder {self.model_path} returned {scores.shape[0]} scores for {n} pairs"
            )
        return scores

    def __repr__(self) -> str:
        return f"OnnxCrossEncoderReranker({str(self.model_dir)!r}, max_length={self.max_length})"


# ---- bi-encoder (embedding cosine) -------------------------------------------------------


class EmbedderReranker:
    """Cosine similarity between the query embedding and each candidate's embedding, from any
    :class:`~pytest_retrieval.models.embedders.Embedder`. Document vectors are kept in memory per
    ``(doc_id, text)`` (``cache_documents``), so a document shared by several queries is
    embedded once."""

    def __init__(self, embedder: Any, cache_documents: bool = True):
        self.embedder = embedder
        self.cache_documents = bool(cache_documents)
        self._cache: Dict[Tuple[str, str], Any] = {}

    @property
    def id(self) -> str:
        return f"bi-encoder:{self.embedder.id}"

    def rerank(self, query_text: str, candidates: Sequence[Candidate]) -> List[float]:
        import numpy as np

        from .embedders import _as_matrix, _normalize_rows

        if not candidates:
            return []
        query = _as_matrix(
            self.embedder.embed_queries(["query"], [query_text or ""]), 1, f"embedder {self.embedder.id!r}"
        )
        keys = [(str(d), t or "") for d, t in candidates]
        todo = [k for k in dict.fromkeys(keys) if k not in self._cache]
        fresh: Dict[Tuple[str, str], Any] = {}
        if todo:
            vectors = _as_matrix(
                self.embedder.embed_documents([k[0] for k in todo], [k[1] for k in todo]),
                len(todo),
                f"embedder {self.embedder.id!r}",
            )
            vectors = _normalize_rows(vectors)
            fresh = dict(zip(todo, vectors))
            if self.cache_documents:
                self._cache.update(fresh)
        docs = np.stack([self._cache[k] if k in self._cache else fresh[k] for k in keys])
        if docs.shape[1] != query.shape[1]:
            raise ConfigError(
                f"embedder {self.embedder.id!r}: query vectors have "
                f"{query.shape[1]} dimensions, document vectors {docs.shape[1]}"
            )
        q = _normalize_rows(query)[0]
        return (docs.astype(np.float64) @ q.astype(np.float64)).tolist()

    def clear_cache(self) -> None:
        self._cache.clear()


class OnnxBiEncoderReranker(EmbedderReranker):
    """Cosine between query and document embeddings of an ONNX sentence-embedding model
    (:class:`~pytest_retrieval.models.embedders.OnnxEmbedder`; same options: ``max_length``,
    ``batch_size``, ``max_batch_tokens``, ``pooling``, ``query_prefix``, ``document_prefix``,
    ``threads``). Useful to rerank a cheap first stage with a stronger embedding model without
    indexing its vectors."""

    def __init__(self, model_dir: PathLike, cache_documents: bool = True, **options: Any):
        from .embedders import OnnxEmbedder

        super().__init__(OnnxEmbedder(model_dir, normalize=True, **options), cache_documents=cache_documents)

    @property
    def id(self) -> str:
        return f"onnx-bi-encoder:{self.embedder.id}"

    def __repr__(self) -> str:
        return f"OnnxBiEncoderReranker({str(self.embedder.model_dir)!r})"


# ---- sentence-transformers CrossEncoder --------------------------------------------------


def _st_available() -> bool:
    if "sentence_transformers" in sys.modules:
        return True
    try:
        return importlib.util.find_spec("sentence_transformers") is not None
    except (ImportError, ValueError):
        return False


class SentenceTransformersCrossEncoder:
    """``sentence_transformers.CrossEncoder`` (optional: ``pip install
    pytest-retrieval[sentence-transformers]``), imported and loaded on first use.
    Scores are ``CrossEncoder.predict`` on the (query, doc) pairs; a 2-column output becomes
    ``col1 - col0`` as for the ONNX cross-encoder. ``max_length``, ``device`` and
    ``batch_size`` are passed through. The ``id`` names the model, not its weights: pin a
    revision (or set ``id``) if the model can change under the same name."""

    def __init__(
        self,
        model: str,
        max_length: Optional[int] = None,
        batch_size: int = 32,
        device: Optional[str] = None,
        activation: Optional[str] = None,
        id: Optional[str] = None,
    ):
        if not _st_available():
            raise ConfigError(
                "the sentence-transformers reranker needs the sentence-transformers "
                "package: pip install pytest-retrieval[sentence-transformers]"
            )
        self.model_name_or_path = str(model)
        self.max_length = int(max_length) if max_length else None
        self.batch_size = int(batch_size)
        self.device = device
        self.activation = _check_activation(activation, "sentence-transformers reranker")
        tag = _options_tag(
            max_length=self.max_length, activation=None if self.activation == "none" else self.activation
        )
        self.id = id or f"sentence-transformers-cross-encoder:{self.model_name_or_path}{tag}"
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            try:
                from sentence_transformers import CrossEncoder
            except ImportError as exc:
                raise ConfigError(
                    f"cannot import sentence-transformers ({exc}); pip install "
                    f"pytest-retrieval[sentence-transformers]"
                ) from None
            kwargs: Dict[str, Any] = {}
            if self.max_length:
                kwargs["max_length"] = self.max_length
            if self.device:
                kwargs["device"] = self.device
            try:
                self._model = CrossEncoder(self.model_name_or_path, **kwargs)
            except Exception as exc:
                raise InfrastructureError(
                    f"cannot load sentence-transformers cross-encoder {self.model_name_or_path!r}: {exc}"
                ) from exc
        return self._model

    def rerank(self, query_text: str, candidates: Sequence[Candidate]) -> List[float]:
        import numpy as np

        if not candidates:
            return []
        model = self._load()
        pairs = [(query_text or "", text or "") for _, text in candidates]
        try:
            raw = model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        except Exception as exc:
            raise InfrastructureError(
                f"sentence-transformers cross-encoder {self.model_name_or_path!r} failed: {exc}"
            ) from exc
        scores = _logits_to_scores(
            np.asarray(raw, dtype=np.float64), f"cross-encoder {self.model_name_or_path!r}"
        )
        return _apply_activation(scores, self.activation).tolist()


# ---- Cohere ------------------------------------------------------------------------------

DEFAULT_COHERE_URL = "https://api.cohere.com"


class CohereReranker:
    """Cohere's hosted rerank API through the official ``cohere`` SDK (``ClientV2.rerank``;
    ``pip install pytest-retrieval[cohere]``): ``{"model", "query", "documents": [text, ...],
    "top_n": len(documents)}``; the response's ``results[].index`` / ``relevance_score``
    become the scores, and every document must come back.

    The key is ``api_key`` or the environment variable ``api_key_env`` (default
    ``COHERE_API_KEY``). Requests time out after ``timeout`` seconds. Retries are the SDK's:
    HTTP 408/409/429/5xx and connection errors, ``max_retries`` times, honouring
    ``Retry-After`` / ``retry-after-ms``, else exponential backoff from 1 s. What remains
    (other HTTP errors, a timeout, malformed or incomplete results) is an
    :class:`InfrastructureError` naming the status and a scrubbed excerpt of the body, never
    the key. More than ``max_documents`` candidates go in several requests (Cohere takes up
    to 1,000 per request; scores are per document, so requests can be merged).
    ``max_tokens_per_doc`` is passed through when set."""

    def __init__(
        self,
        model: str = "rerank-english-v3.0",
        api_key: Optional[str] = None,
        api_key_env: str = "COHERE_API_KEY",
        base_url: Optional[str] = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        max_documents: int = 1000,
        max_tokens_per_doc: Optional[int] = None,
        id: Optional[str] = None,
    ):
        key = api_key if api_key else os.environ.get(api_key_env or "", "")
        if not key:
            raise ConfigError(
                f"cohere reranker: no API key (set the environment variable "
                f"{api_key_env or 'COHERE_API_KEY'})"
            )
        base = (base_url or DEFAULT_COHERE_URL).rstrip("/")
        parts = urllib.parse.urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"cohere reranker: base_url must be an http(s) URL, got {base_url!r}")
        if parts.username or parts.password:
            raise ConfigError("cohere reranker: base_url must not carry credentials")
        if timeout <= 0 or max_retries < 0 or max_documents < 1:
            raise ConfigError("cohere reranker: timeout must be > 0, max_retries >= 0, max_documents >= 1")
        self.model = str(model)
        self._api_key = str(key)
        self.api_key_env = api_key_env
        self.base_url = base
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.max_documents = int(max_documents)
        self.max_tokens_per_doc = int(max_tokens_per_doc) if max_tokens_per_doc else None
        where = "" if base == DEFAULT_COHERE_URL else f"@{parts.netloc}"
        tag = _options_tag(max_tokens_per_doc=self.max_tokens_per_doc)
        self.id = id or f"cohere:{self.model}{where}{tag}"
        self._client: Any = None

    def __repr__(self) -> str:
        return f"CohereReranker(model={self.model!r}, base_url={self.base_url!r}, api_key=***)"

    def _scrub(self, text: str) -> str:
        text = str(text)
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text.replace("\n", " ").replace("\r", " ")

    def _sdk(self) -> Any:
        if self._client is None:
            try:
                import cohere
            except ImportError:
                raise ConfigError(
                    "the cohere reranker needs Cohere's SDK: pip install pytest-retrieval[cohere]"
                ) from None
            self._client = cohere.ClientV2(
                api_key=self._api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
            )
        return self._client

    def rerank(self, query_text: str, candidates: Sequence[Candidate]) -> List[float]:
        if not candidates:
            return []
        texts = [text or "" for _, text in candidates]
        scores: List[float] = []
        for start in range(0, len(texts), self.max_documents):
            scores.extend(self._rerank_chunk(query_text or "", texts[start : start + self.max_documents]))
        return scores

    def _rerank_chunk(self, query: str, documents: List[str]) -> List[float]:
        import httpx
        from cohere.core.api_error import ApiError

        client = self._sdk()
        what = f"cohere rerank ({self.model}) at {self.base_url}"
        kwargs: Dict[str, Any] = {
            "model": self.model,
            "query": query,
            "documents": documents,
            "top_n": len(documents),
        }
        if self.max_tokens_per_doc:
            kwargs["max_tokens_per_doc"] = self.max_tokens_per_doc
        try:
            response = client.rerank(**kwargs)
        except ApiError as exc:
            status = exc.status_code
            body = exc.body if isinstance(exc.body, str) else json.dumps(exc.body, default=str)
            if status is not None and 200 <= status < 300:
                raise InfrastructureError(
                    f"{what}: malformed JSON in the response ({self._scrub(body)[:200]})"
                ) from None
            retried = (
                f" after {self.max_retries + 1} attempt(s)"
                if status in (408, 409, 429) or (status or 0) >= 500
                else ""
            )
            hint = f" (check {self.api_key_env or 'the API key'})" if status in (401, 403) else ""
            raise InfrastructureError(
                f"{what}: HTTP {status}{retried}: {self._scrub(body)[:300]}{hint}"
            ) from None
        except httpx.TimeoutException:
            raise InfrastructureError(f"{what}: timed out after {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise InfrastructureError(
                f"{what}: {type(exc).__name__} after "
                f"{self.max_retries + 1} attempt(s): "
                f"{self._scrub(str(exc))[:200]}"
            ) from None
        except Exception as exc:  # the SDK could not read the response
            raise InfrastructureError(
                f"{what}: unreadable response ({type(exc).__name__}: {self._scrub(str(exc))[:200]})"
            ) from None
        # the SDK builds its models without validating them: check what came back
        results = getattr(response, "results", None)
        if not isinstance(results, list):
            raise InfrastructureError(f"cohere rerank ({self.model}): response has no 'results' list")
        scores: List[Optional[float]] = [None] * len(documents)
        for item in results:
            index = getattr(item, "index", None)
            score = getattr(item, "relevance_score", None)
            if (
                isinstance(index, bool)
                or not isinstance(index, int)
                or not 0 <= index < len(documents)
                or isinstance(score, bool)
                or not isinstance(score, (int, float))
                or not math.isfinite(score)
            ):
                raise InfrastructureError(
                    f"cohere rerank ({self.model}): malformed result "
                    f"(index {index!r}, relevance_score {score!r})"
                )
            scores[index] = float(score)
        absent = sum(1 for s in scores if s is None)
        if absent:
            raise InfrastructureError(
                f"cohere rerank ({self.model}): the response scored "
                f"{len(documents) - absent} of {len(documents)} documents"
            )
        return [float(s) for s in scores]  # type: ignore[arg-type]


# ---- callable ----------------------------------------------------------------------------


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
            self._function = _import_function(
                self.function_name, Path(search_path) if search_path else None, what="callable reranker"
            )
        if id:
            self.id = id
        else:
            from .embedders import _source_digest

            digest = _source_digest(self._function)
            self.id = f"callable:{self.function_name}" + (f":{digest}" if digest else "")

    def rerank(self, query_text: str, candidates: Sequence[Candidate]) -> List[float]:
        if not candidates:
            return []
        try:
            value = self._function(query_text, [text for _, text in candidates])
        except RetrievalError:
            raise
        except Exception as exc:
            raise InfrastructureError(
                f"callable reranker {self.function_name!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        return _checked_scores(
            value, len(candidates), f"callable reranker {self.function_name!r}", ConfigError
        )


# ---- factory -----------------------------------------------------------------------------

_KEYS: Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...]]] = {
    # type: (required keys, optional keys)
    "onnx-cross-encoder": (
        ("model",),
        ("max_length", "batch_size", "max_batch_tokens", "activation", "threads"),
    ),
    "onnx-bi-encoder": (
        ("model",),
        (
            "max_length",
            "batch_size",
            "max_batch_tokens",
            "pooling",
            "query_prefix",
            "document_prefix",
            "threads",
            "cache_documents",
        ),
    ),
    "sentence-transformers": (("model",), ("max_length", "batch_size", "device", "activation", "id")),
    "cohere": (
        (),
        (
            "model",
            "api_key",
            "api_key_env",
            "base_url",
            "timeout",
            "max_retries",
            "max_documents",
            "max_tokens_per_doc",
            "id",
        ),
    ),
    "callable": (("function",), ("id",)),
}
_ALIASES = {
    "cross-encoder": "onnx-cross-encoder",
    "onnx_cross_encoder": "onnx-cross-encoder",
    "bi-encoder": "onnx-bi-encoder",
    "onnx_bi_encoder": "onnx-bi-encoder",
    "sentence_transformers": "sentence-transformers",
    "st": "sentence-transformers",
    "python": "callable",
}
_INT_KEYS = (
    "max_length",
    "batch_size",
    "max_batch_tokens",
    "threads",
    "max_retries",
    "max_documents",
    "max_tokens_per_doc",
)
_FLOAT_KEYS = ("timeout",)
_BOOL_KEYS = ("cache_documents",)


def make_reranker(config: Mapping[str, Any], base_dir: PathLike = ".") -> Reranker:
    """Build a reranker from a suite config dict; relative model paths resolve against
    ``base_dir``.

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
    Unknown keys, missing required keys and wrongly typed values are :class:`ConfigError`."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"reranker: expected a mapping, got {type(config).__name__}")
    raw_type = config.get("type")
    if not isinstance(raw_type, str) or not raw_type:
        raise ConfigError(f"reranker: 'type' is required ({', '.join(_KEYS)})")
    kind = _ALIASES.get(raw_type.lower(), raw_type.lower())
    if kind not in _KEYS:
        raise ConfigError(f"reranker: unknown type {raw_type!r} (known: {', '.join(_KEYS)})")
    required, optional = _KEYS[kind]
    unknown = [k for k in config if k != "type" and k not in required and k not in optional]
    if unknown:
        raise ConfigError(
            f"reranker ({kind}): unknown key(s) {', '.join(map(repr, unknown))} "
            f"(allowed: {', '.join(required + optional)})"
        )
    missing = [k for k in required if config.get(k) in (None, "")]
    if missing:
        raise ConfigError(f"reranker ({kind}): missing {', '.join(map(repr, missing))}")
    opts: Dict[str, Any] = {}
    for key, value in config.items():
        if key in ("type", "model", "function") or value is None:
            continue
        if key in _INT_KEYS and (isinstance(value, bool) or not isinstance(value, int)):
            raise ConfigError(f"reranker ({kind}): {key!r} must be an integer, got {value!r}")
        if key in _FLOAT_KEYS and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ConfigError(f"reranker ({kind}): {key!r} must be a number, got {value!r}")
        if key in _BOOL_KEYS and not isinstance(value, bool):
            raise ConfigError(f"reranker ({kind}): {key!r} must be true or false, got {value!r}")
        if (key not in _INT_KEYS + _FLOAT_KEYS + _BOOL_KEYS) and not isinstance(value, str):
            raise ConfigError(f"reranker ({kind}): {key!r} must be a string, got {value!r}")
        opts[key] = value
    base = Path(base_dir)

    def local(value: Any) -> Path:
        p = Path(os.path.expanduser(os.fspath(value)))
        return p if p.is_absolute() else base / p

    if kind == "onnx-cross-encoder":
        return OnnxCrossEncoderReranker(local(config["model"]), **opts)
    if kind == "onnx-bi-encoder":
        return OnnxBiEncoderReranker(local(config["model"]), **opts)
    if kind == "sentence-transformers":
        model = str(config["model"])
        path = local(model)
        if model.startswith((".", "~")) or path.exists():
            model = str(path)  # a local folder; a hub name is passed through
        return SentenceTransformersCrossEncoder(model, **opts)
    if kind == "cohere":
        if "model" in config and config["model"] is not None:
            opts["model"] = str(config["model"])
        return CohereReranker(**opts)
    return CallableReranker(str(config["function"]), search_path=base, **opts)
