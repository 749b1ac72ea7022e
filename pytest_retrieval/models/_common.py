"""What the embedders and rerankers share: the base of their config models (and the reading
of a config dict into one, with one-line errors), paths, file digests, importing a
``module:function``, JSON files, model output checks, and the ONNX plumbing (files,
tokenizer + session, length-sorted batches, input tensors).

numpy, onnxruntime, tokenizers and sentence-transformers are imported on first use.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    ClassVar,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
    get_args,
)

from pydantic import BaseModel, BeforeValidator, ConfigDict, PrivateAttr, ValidationError
from typing_extensions import Annotated

from ..errors import ConfigError, InfrastructureError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

PathLike = Union[str, "os.PathLike[str]"]

# ---- config models -----------------------------------------------------------------------


def _fspath(value: Any) -> Any:
    return os.fspath(value) if isinstance(value, os.PathLike) else value


PathStr = Annotated[str, BeforeValidator(_fspath)]
"""A path option: a string in the suite file, a string or ``os.PathLike`` from Python."""


def _is_path(field: Any) -> bool:
    """Whether a model field (its metadata or annotation) is a :data:`PathStr`."""
    parts = list(getattr(field, "metadata", ())) + [getattr(field, "annotation", None)]
    while parts:
        part = parts.pop()
        if getattr(part, "func", None) is _fspath:
            return True
        parts.extend(get_args(part))
    return False


class ModelConfig(BaseModel):
    """One kind of embedder or reranker, as a suite file or a Python dict configures it.

    ``build(base_dir)`` makes the object, relative paths resolving against ``base_dir``.
    :func:`parse_config` reads a config dict the way the factories do (strictly)."""

    model_config = ConfigDict(extra="forbid")
    aliases: ClassVar[Tuple[str, ...]] = ()  # other names of the kind, for make_embedder/make_reranker
    _written: Dict[str, Any] = PrivateAttr(default_factory=dict)

    def build(self, base_dir: Path) -> Any:  # pragma: no cover - every kind overrides it
        raise NotImplementedError

    def as_written(self) -> Dict[str, Any]:
        """The config as it was written (aliases, nulls and all), when read by
        :func:`parse_config`: what baseline fingerprints hash."""
        return dict(self._written) or self.model_dump(mode="json", exclude_unset=True)

    def options(self, *exclude: str) -> Dict[str, Any]:
        """Every option but ``type`` and ``exclude``, as keyword arguments."""
        return {n: getattr(self, n) for n in type(self).model_fields if n != "type" and n not in exclude}


C = TypeVar("C", bound=ModelConfig)


def parse_config(
    config: Any, family: str, configs: Mapping[str, Type[C]], words: Mapping[str, str], type_required: str
) -> C:
    """A config dict as the model of its kind; every problem is one :class:`ConfigError`
    line: ``{family}: ...`` / ``{family} ({kind}): ...``. A model passes through.

    ``type`` is case-insensitive and may be an alias of a kind; a ``null`` option means its
    default; values are not coerced (``"8"`` is not an integer). ``words`` names the types in
    messages (``{"int": "an integer", ...}``); ``type_required`` is the message for a
    missing ``type``."""
    if isinstance(config, tuple(configs.values())):
        return config  # type: ignore[return-value]
    if not isinstance(config, Mapping):
        raise ConfigError(f"{family}: expected a mapping, got {type(config).__name__}")
    raw_type = config.get("type")
    if not isinstance(raw_type, str) or not raw_type:
        raise ConfigError(f"{family}: {type_required}")
    aliases = {alias: kind for kind, cls in configs.items() for alias in cls.aliases}
    kind = aliases.get(raw_type.lower(), raw_type.lower())
    cls = configs.get(kind)
    if cls is None:
        raise ConfigError(f"{family}: unknown type {raw_type!r} (known: {', '.join(configs)})")
    fields = [n for n in cls.model_fields if n != "type"]
    required = [n for n in fields if cls.model_fields[n].is_required()]
    unknown = [k for k in config if k != "type" and k not in fields]
    if unknown:
        allowed = required + [n for n in fields if n not in required]
        raise ConfigError(
            f"{family} ({kind}): unknown key(s) {', '.join(map(repr, unknown))} "
            f"(allowed: {', '.join(allowed)})"
        )
    missing = [k for k in required if config.get(k) in (None, "")]
    if missing:
        raise ConfigError(f"{family} ({kind}): missing {', '.join(map(repr, missing))}")
    data = {k: v for k, v in config.items() if v is not None}
    try:
        model = cls.model_validate({**data, "type": kind}, strict=True)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, cls, f"{family} ({kind})", words)) from None
    model._written = dict(config)
    return model


def _describe(exc: ValidationError, cls: Type[ModelConfig], where: str, words: Mapping[str, str]) -> str:
    err = exc.errors(include_url=False)[0]
    loc = err.get("loc", ())
    msg = str(err.get("msg", "")).replace("Value error, ", "")
    if not loc:
        return msg  # a check across options: the message says it all
    key, etype = loc[0], str(err.get("type", ""))
    base = etype.split("_")[0]
    field = cls.model_fields.get(str(key))
    if etype == "string_type" and _is_path(field):
        return f"{where}: {key!r} must be a path"
    if base in words and etype.endswith(("_type", "_parsing")):
        return f"{where}: {key!r} must be {words[base]}, got {err.get('input')!r}"
    if etype == "value_error":
        return f"{where}: {key!r} {msg}"
    return f"{where}: {key!r}: {msg} (got {err.get('input')!r})"


def resolve(base: Path, value: PathLike) -> Path:
    """``value`` with ``~`` expanded; relative to ``base`` unless absolute."""
    p = Path(os.path.expanduser(os.fspath(value)))
    return p if p.is_absolute() else base / p


def local_or_hub(model: str, base: Path) -> str:
    """A model folder relative to ``base`` when it exists (or starts with ``.``/``~``),
    else the name as given (a hub model name is passed through)."""
    local = resolve(base, model)
    if model.startswith((".", "~")) or local.exists():
        return str(local)
    return model


# ---- files, digests, imports ---------------------------------------------------------------


def file_digest(*paths: Optional[Path]) -> str:
    """sha256 over the contents of the given files (None entries are skipped)."""
    digest = hashlib.sha256()
    for path in paths:
        if path is None:
            continue
        digest.update(path.name.encode() + b"\0")
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def options_tag(**options: Any) -> str:
    """A short, stable tag for options that change the output (omitted when default)."""
    parts = [f"{k}={v}" for k, v in sorted(options.items()) if v not in (None, "", False)]
    if not parts:
        return ""
    return ":" + hashlib.sha256(";".join(parts).encode()).hexdigest()[:10]


def read_json(path: Path) -> Dict[str, Any]:
    """A JSON object file; ``{}`` when absent or not an object."""
    if not path.is_file():
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            value = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read JSON: {exc}", file=str(path)) from None
    return value if isinstance(value, dict) else {}


def import_function(spec: str, search_path: Optional[Path], what: str) -> Callable[..., Any]:
    """``module:function`` (dotted attributes allowed) imported with ``search_path`` (the
    suite's folder) on ``sys.path``; every failure is one :class:`ConfigError` line."""
    module_name, sep, attr = str(spec).partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"{what}: expected 'module:function', got {spec!r}")
    added = False
    if search_path is not None and str(search_path) not in sys.path:
        sys.path.insert(0, str(search_path))
        added = True
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ConfigError(
            f"{what} {spec!r}: cannot import {module_name!r}: {type(exc).__name__}: {exc}"
        ) from None
    finally:
        if added:
            try:
                sys.path.remove(str(search_path))
            except ValueError:  # pragma: no cover
                pass
    target: Any = module
    for part in attr.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ConfigError(f"{what} {spec!r}: {module_name!r} has no {attr!r}")
    if not callable(target):
        raise ConfigError(f"{what} {spec!r}: {attr!r} is not callable")
    return target


def source_digest(fn: Callable[..., Any]) -> str:
    """A short digest of the file defining ``fn`` ("" when there is none)."""
    module = sys.modules.get(getattr(fn, "__module__", "") or "")
    source = getattr(module, "__file__", None)
    if source and os.path.isfile(source):
        return file_digest(Path(source))[:10]
    return ""


def require_sentence_transformers(what: str) -> None:
    """A :class:`ConfigError` when the sentence-transformers package is not installed."""
    if "sentence_transformers" in sys.modules:
        return
    try:
        found = importlib.util.find_spec("sentence_transformers") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ConfigError(
            f"the sentence-transformers {what} needs the sentence-transformers "
            f"package: pip install pytest-retrieval[sentence-transformers]"
        )


def sentence_transformers_class(name: str) -> Any:
    """``sentence_transformers.<name>``, imported now; a failed import is a ConfigError."""
    try:
        module = importlib.import_module("sentence_transformers")
        return getattr(module, name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"cannot import sentence-transformers ({exc}); pip install pytest-retrieval[sentence-transformers]"
        ) from None


# ---- model outputs -------------------------------------------------------------------------


def as_matrix(value: Any, n: int, source: str) -> np.ndarray:
    """Check an embedder's output: numeric, finite, shape (n, dim); return float32 C-order."""
    import numpy as np

    try:
        matrix = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{source} returned something that is not a numeric array ({exc})") from None
    if matrix.ndim != 2 or matrix.shape[0] != n:
        raise ConfigError(
            f"{source} returned an array of shape {tuple(matrix.shape)} for {n} texts; expected ({n}, dim)"
        )
    if not np.isfinite(matrix).all():
        raise ConfigError(f"{source} returned NaN or infinite values")
    return np.ascontiguousarray(matrix)


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (an all-zero row stays zero), float32."""
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


# ---- ONNX ----------------------------------------------------------------------------------


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
        import onnxruntime as ort
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ConfigError(
            f"the {what} needs onnxruntime and tokenizers ({exc}); pip install pytest-retrieval[onnx]"
        ) from None
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
    except Exception as exc:
        raise ConfigError(f"cannot read the tokenizer: {exc}", file=str(tokenizer_path)) from None
    tokenizer.enable_truncation(max_length=max_length, strategy=truncation)
    pad = tokenizer.padding or {}
    pad_id = pad.get("pad_id")
    if pad_id is None:
        pad_id = tokenizer.token_to_id(str(pad.get("pad_token", "[PAD]"))) or 0
    tokenizer.no_padding()
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:
        raise ConfigError(f"cannot load the ONNX model: {exc}", file=str(model_path)) from None
    inputs = tuple(i.name for i in session.get_inputs())
    if "input_ids" not in inputs:
        raise ConfigError(
            f"the {what} has no 'input_ids' input (it has {', '.join(inputs)})", file=str(model_path)
        )
    unknown = [n for n in inputs if n not in ("input_ids", "attention_mask", "token_type_ids")]
    if unknown:
        raise ConfigError(
            f"the {what} needs model inputs it cannot provide: {', '.join(unknown)}", file=str(model_path)
        )
    return tokenizer, session, int(pad_id), inputs


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


def length_batches(
    lengths: Sequence[int], batch_size: int, max_batch_tokens: int
) -> Iterator[Tuple[List[int], int]]:
    """``(indices, padded width)`` batches, longest texts first, each holding at most
    ``batch_size`` texts and ``max_batch_tokens`` padded tokens (at least one text)."""
    # Longest first, and batches bounded by a token budget as well as by batch_size:
    # long documents go 8 at a time, short queries 32 at a time (on 2 CPU cores, 8 x 256
    # tokens ran 1.7x faster per document than 32 x 256).
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    start = 0
    while start < len(order):
        width = max(1, lengths[order[start]])
        size = max(1, min(batch_size, max_batch_tokens // width))
        yield order[start : start + size], width
        start += size


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
