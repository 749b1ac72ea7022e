"""``transformers`` sparse encoder: a SPLADE masked-language model run with Hugging Face
``transformers`` on ``torch`` (optional: ``pip install pytest-retrieval[transformers]``), pooled
by :func:`.splade.splade_max` (SPLADE-max), as the ONNX sparse encoder pools its export.

torch and transformers are imported, and the model loaded, on first use."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any, List, Literal, Optional, Sequence, Tuple

from pydantic import Field
from typing_extensions import Annotated

from ...backends.guard import exception_text
from ...errors import ConfigError, InfrastructureError
from ...numbers import NUMBER
from ..config_parsing import ModelConfig, PathStr
from ..digests import file_digest, options_tag
from ..files import local_or_hub
from ..tokenization import length_batches
from .base import SparseEncoder, SparseVector
from .splade import as_vectors, splade_max, vocabulary_terms

EXTRA = "pip install pytest-retrieval[transformers]"

# The files of a local model folder whose contents change the vectors (those present are hashed).
MODEL_FILES = (
    "config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json",
    "tokenizer_config.json", "vocab.txt", "special_tokens_map.json",
)  # fmt: skip


def require_torch_transformers() -> None:
    """A :class:`ConfigError` line when torch or transformers is not installed (found without
    importing them: torch takes seconds to import, done on first use)."""
    for name in ("torch", "transformers"):
        if name in sys.modules:
            continue
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ConfigError(
                f"the transformers sparse encoder needs torch and transformers ({name} is missing); {EXTRA}"
            )


def import_torch_transformers() -> Tuple[Any, Any]:
    """``(torch, transformers)``, imported now; either missing is one :class:`ConfigError` line."""
    try:
        torch = importlib.import_module("torch")
        transformers = importlib.import_module("transformers")
    except ImportError as exc:
        raise ConfigError(
            f"the transformers sparse encoder needs torch and transformers ({exc}); {EXTRA}"
        ) from None
    return torch, transformers


class TransformersSparseEncoder:
    """A masked-language model (``AutoModelForMaskedLM``) and its tokenizer (``AutoTokenizer``)
    from a local folder or a hub name: each text's MLM logits become one ``{token: weight}``
    by SPLADE-max. Texts are truncated at ``max_length`` tokens and batched longest first (at
    most ``batch_size`` texts and ``max_batch_tokens`` padded tokens per batch), as the ONNX
    sparse encoder does, so the two give the same vectors for the same model. A checkpoint
    that lacks weights of the model (``transformers`` would initialise them at random) is a
    :class:`ConfigError`. ``id`` hashes a local folder's files; a hub name is its own id (set
    ``id`` to version it)."""

    cacheable = True

    def __init__(
        self,
        model_name_or_path: str,
        max_length: int = 256,
        batch_size: int = 32,
        max_batch_tokens: int = 512,
        threads: Optional[int] = None,
        device: Optional[str] = None,
        query_prefix: str = "",
        document_prefix: str = "",
        id: Optional[str] = None,
    ):
        require_torch_transformers()
        self.model_name_or_path = str(model_name_or_path)
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)
        self.max_batch_tokens = max(1, int(max_batch_tokens))
        self.threads = int(threads) if threads else None
        self.device = device or "cpu"
        self.query_prefix = query_prefix or ""
        self.document_prefix = document_prefix or ""
        self._id = id
        self._model: Any = None
        self._tokenizer: Any = None
        self._terms: List[str] = []

    @property
    def id(self) -> str:
        if self._id is None:
            folder = Path(self.model_name_or_path)
            name = self.model_name_or_path
            if folder.is_dir():
                files = [folder / f for f in MODEL_FILES if (folder / f).is_file()]
                name = f"{folder.name}:{file_digest(*files)[:12]}"
            tag = options_tag(
                max_length=self.max_length,
                query_prefix=self.query_prefix,
                document_prefix=self.document_prefix,
            )
            self._id = f"transformers-sparse:{name}{tag}"
        return self._id

    def load(self, **options: Any) -> Tuple[Any, Any]:
        """(tokenizer, model in eval mode on ``device``), loaded now; ``options`` go to
        ``from_pretrained`` (``scripts/export_splade_onnx.py``: ``attn_implementation``)."""
        _, transformers = import_torch_transformers()
        where = self.model_name_or_path
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(where)
            model, info = transformers.AutoModelForMaskedLM.from_pretrained(
                where, output_loading_info=True, **options
            )
        except Exception as exc:  # noqa: BLE001 - missing files, a hub name offline, a bad config
            raise ConfigError(
                f"cannot load the masked-language model: {exception_text(exc)}", file=where
            ) from None
        missing = sorted(info.get("missing_keys") or ())
        if missing:
            shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
            raise ConfigError(
                f"the checkpoint lacks {len(missing)} weight(s) of the model ({shown}): transformers "
                "would initialise them at random",
                file=where,
            )
        try:
            model = model.to(self.device)
        except Exception as exc:  # noqa: BLE001 - an unknown device name, a device not there
            raise ConfigError(
                f"cannot run the model on device {self.device!r}: {exception_text(exc)}", file=where
            ) from None
        return tokenizer, model.eval()

    def _load(self) -> None:
        if self._model is None:
            self._tokenizer, self._model = self.load()
            self._terms = vocabulary_terms(dict(self._tokenizer.get_vocab()))

    def _encode(self, texts: Sequence[str], prefix: str) -> List[SparseVector]:
        if not texts:
            return []
        self._load()
        ids = self._tokenizer(
            [prefix + (t or "") for t in texts], truncation=True, max_length=self.max_length
        )["input_ids"]
        out: List[SparseVector] = [{} for _ in texts]
        for batch, width in length_batches([len(i) for i in ids], self.batch_size, self.max_batch_tokens):
            logits, mask = self._forward([ids[i] for i in batch], width)
            weights = splade_max(logits, mask, len(self._terms), self.model_name_or_path)
            for i, vector in zip(batch, as_vectors(weights, self._terms)):
                out[i] = vector
        return out

    def _forward(self, rows: List[List[int]], width: int) -> Tuple[Any, Any]:
        """The MLM logits of one batch padded to ``width`` (numpy), and its attention mask."""
        torch, _ = import_torch_transformers()
        pad = self._tokenizer.pad_token_id or 0
        input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, row in enumerate(rows):
            input_ids[r, : len(row)] = torch.tensor(row, dtype=torch.long)
            mask[r, : len(row)] = 1
        threads = torch.get_num_threads()
        try:
            if self.threads:
                torch.set_num_threads(self.threads)
            with torch.inference_mode():
                logits = self._model(
                    input_ids=input_ids.to(self.device),
                    attention_mask=mask.to(self.device),
                    token_type_ids=torch.zeros_like(input_ids).to(self.device),
                ).logits
        except Exception as exc:
            raise InfrastructureError(
                f"transformers sparse encoder {self.model_name_or_path} failed: {exception_text(exc)}"
            ) from exc
        finally:
            torch.set_num_threads(threads)
        return logits.float().cpu().numpy(), mask.numpy()

    def encode_queries(self, ids: Sequence[str], texts: Sequence[str]) -> List[SparseVector]:
        return self._encode(texts, self.query_prefix)

    def encode_documents(self, ids: Sequence[str], texts: Sequence[str]) -> List[SparseVector]:
        return self._encode(texts, self.document_prefix)

    def __repr__(self) -> str:
        return f"TransformersSparseEncoder({self.model_name_or_path!r}, max_length={self.max_length})"


class TransformersSparseEncoderConfig(ModelConfig):
    type: Literal["transformers"]
    model: PathStr = Field(
        description="A masked-language model: a local folder (config, weights, tokenizer) or a hub name."
    )
    max_length: Annotated[int, Field(ge=2), NUMBER] = Field(256, description="Tokens per text.")
    batch_size: Annotated[int, Field(gt=0), NUMBER] = Field(32, description="Texts per batch at most.")
    max_batch_tokens: Annotated[int, Field(gt=0), NUMBER] = Field(
        512, description="Padded tokens per batch at most (the logits hold tokens x vocabulary floats)."
    )
    threads: Optional[Annotated[int, Field(gt=0), NUMBER]] = Field(
        None, description="torch threads while encoding (default: torch's)."
    )
    device: Optional[str] = Field(None, description="cpu (default), cuda, mps...")
    query_prefix: str = Field("", description="Prepended to queries.")
    document_prefix: str = Field("", description="Prepended to documents.")
    id: Optional[str] = Field(
        None, description="Version of the model (default: a hash of a local folder's files)."
    )

    def build(self, base_dir: Path) -> SparseEncoder:
        return TransformersSparseEncoder(local_or_hub(self.model, base_dir), **self.options("model"))
