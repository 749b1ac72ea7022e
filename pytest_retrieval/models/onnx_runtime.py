"""The ONNX plumbing the ONNX embedder and rerankers share: the files of an exported model
folder, its onnxruntime session (with its tokenizer), and the input tensors of a batch.

numpy, onnxruntime and tokenizers are imported on first use."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Tuple

from ..errors import ConfigError, InfrastructureError
from .digests import file_digest, options_tag
from .files import PathLike
from .tokenization import load_tokenizer

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

# The inputs a BERT-like model may declare, all of which onnx_feed can provide.
MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def find_onnx_files(model_dir: Path, prefix: str = "") -> Tuple[Path, Path]:
    """``(model.onnx, tokenizer.json)`` of an exported model folder: ``model.onnx``,
    ``onnx/model.onnx`` or the folder's only ``*.onnx``. Messages start with ``prefix``."""
    if not model_dir.is_dir():
        raise ConfigError(f"{prefix}ONNX model folder not found", file=str(model_dir))
    candidates = [model_dir / "model.onnx", model_dir / "onnx" / "model.onnx"]
    model_path = next((p for p in candidates if p.is_file()), None)
    if model_path is None:
        found = sorted(model_dir.glob("*.onnx"))
        if len(found) != 1:
            raise ConfigError(f"{prefix}no model.onnx in the ONNX model folder", file=str(model_dir))
        model_path = found[0]
    tokenizer_path = model_dir / "tokenizer.json"
    if not tokenizer_path.is_file():
        raise ConfigError(f"{prefix}no tokenizer.json in the ONNX model folder", file=str(model_dir))
    return model_path, tokenizer_path


def load_onnx(
    model_path: Path,
    tokenizer_path: Path,
    max_length: int,
    threads: int,
    what: str,
    truncation: str = "longest_first",
) -> Tuple[Any, Any, int, Tuple[str, ...]]:
    """(tokenizer, onnxruntime session, pad id, input names) of a BERT-like ONNX model, shared
    by the ONNX embedder and the ONNX rerankers. The tokenizer truncates to ``max_length``
    and does not pad (callers pad each batch to its longest text); the session runs on CPU
    with ``threads`` intra-op threads. Every failure is one :class:`ConfigError` line."""
    try:
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"the {what} needs onnxruntime and tokenizers ({exc}); pip install pytest-retrieval[onnx]"
        ) from None
    tokenizer, pad_id = load_tokenizer(tokenizer_path, max_length, truncation)
    session = _cpu_session(model_path, threads)
    inputs = tuple(i.name for i in session.get_inputs())
    _check_inputs(inputs, model_path, what)
    return tokenizer, session, pad_id, inputs


def _cpu_session(model_path: Path, threads: int) -> Any:
    """An onnxruntime session on CPU with ``threads`` intra-op threads, quiet but for errors."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise ConfigError(f"cannot load the ONNX model: {exc}", file=str(model_path)) from None


def _check_inputs(inputs: Sequence[str], model_path: Path, what: str) -> None:
    if "input_ids" not in inputs:
        raise ConfigError(
            f"the {what} has no 'input_ids' input (it has {', '.join(inputs)})", file=str(model_path)
        )
    unknown = [n for n in inputs if n not in MODEL_INPUTS]
    if unknown:
        raise ConfigError(
            f"the {what} needs model inputs it cannot provide: {', '.join(unknown)}", file=str(model_path)
        )


class OnnxModel:
    """An exported BERT-like model folder whose tokenizer and onnxruntime session load on
    first use (:func:`load_onnx`); the ONNX embedder and the ONNX cross-encoder are ones."""

    what = "ONNX model"  # in messages
    model_dir: Path
    model_path: Path
    tokenizer_path: Path
    max_length: int
    threads: int
    _session: Any = None
    _tokenizer: Any = None
    _input_names: Tuple[str, ...] = ()
    _output_name = ""
    _pad_id = 0

    def _find_files(self, model_dir: PathLike, threads: Optional[int], prefix: str = "") -> None:
        self.model_dir = Path(model_dir)
        self.model_path, self.tokenizer_path = find_onnx_files(self.model_dir, prefix)
        self.threads = int(threads) if threads else available_cores()

    def _model_id(self, kind: str, **options: Any) -> str:
        digest = file_digest(self.model_path, self.tokenizer_path)[:12]
        return f"{kind}:{self.model_dir.name}:{digest}{options_tag(**options)}"

    def _pick_output(self, names: Sequence[str]) -> str:
        return names[0]

    def _load(self) -> None:
        if self._session is not None:
            return
        tokenizer, session, self._pad_id, inputs = load_onnx(
            self.model_path, self.tokenizer_path, self.max_length, self.threads, self.what
        )
        self._output_name = self._pick_output([o.name for o in session.get_outputs()])
        self._input_names = inputs
        self._tokenizer = tokenizer
        self._session = session

    def _infer(self, encodings: Sequence[Any], width: int, failed: str) -> Tuple[Any, np.ndarray]:
        """The model's output for one batch (padded to ``width``), and its attention mask;
        a failure is an InfrastructureError starting with ``failed``."""
        feed, mask = onnx_feed(encodings, width, self._pad_id, self._input_names)
        try:
            (output,) = self._session.run([self._output_name], feed)
        except Exception as exc:
            raise InfrastructureError(f"{failed} {self.model_path} failed: {exc}") from exc
        return output, mask


def onnx_feed(
    encodings: Sequence[Any], width: int, pad_id: int, input_names: Sequence[str]
) -> Tuple[Dict[str, np.ndarray], np.ndarray]:
    """The int64 inputs the model declares (``input_ids``, ``attention_mask``,
    ``token_type_ids``) for tokenizer encodings padded to ``width``; and the mask."""
    import numpy as np

    n = len(encodings)
    ids = np.full((n, width), pad_id, dtype=np.int64)
    mask = np.zeros((n, width), dtype=np.int64)
    types = np.zeros((n, width), dtype=np.int64)
    for row, enc in enumerate(encodings):
        length = len(enc.ids)
        ids[row, :length] = enc.ids
        mask[row, :length] = 1
        types[row, :length] = enc.type_ids
    feed = {"input_ids": ids}
    if "attention_mask" in input_names:
        feed["attention_mask"] = mask
    if "token_type_ids" in input_names:
        feed["token_type_ids"] = types
    return feed, mask
