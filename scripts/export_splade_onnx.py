"""Export a SPLADE masked-language model (a ``transformers`` folder: config, weights, tokenizer) to
the ONNX folder the ``onnx`` sparse encoder reads: ``model.onnx`` (inputs ``input_ids``,
``attention_mask``, ``token_type_ids``, int64, batch x tokens; output ``logits``, batch x tokens x
vocabulary) beside the model's ``tokenizer.json``.

    python scripts/export_splade_onnx.py MODEL_DIR [--out DIR] [--opset 17] [--force]

Needs torch and transformers (``pip install pytest-retrieval[transformers]``) and onnxruntime
(the export is checked against the torch model's logits before it is kept). The export is done
once: by default into the cache, ``<cache>/onnx/<folder>-<digest of the model files>/``
(``$PYTEST_RETRIEVAL_CACHE_DIR``, else ``~/.cache/pytest-retrieval``), which a rerun finds and
reuses; nothing is written into the model folder. The last line printed is the export folder.

The exporter is ``torch.onnx.export`` (TorchScript, ``dynamo=False``: the dynamo exporter needs
onnxscript), with batch and token axes dynamic, the model in eval mode with eager attention (the
attention mask then enters the graph as the usual additive mask, not a fused kernel).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout, not an installed copy

from pytest_retrieval.models.digests import file_digest  # noqa: E402
from pytest_retrieval.models.embedders.cache import default_cache_dir  # noqa: E402
from pytest_retrieval.models.sparse.transformers_mlm import (  # noqa: E402
    MODEL_FILES,
    TransformersSparseEncoder,
    import_torch_transformers,
)

# the output's largest difference from the torch model's logits that the check accepts
TOLERANCE = 1e-4
PROBES = ["what is the capital of france", "Paris is the capital and most populous city of France."]


def export_dir(model_dir: Path) -> Path:
    """Where the export of ``model_dir`` is cached: named by the digest of its files."""
    files = [model_dir / f for f in MODEL_FILES if (model_dir / f).is_file()]
    return default_cache_dir().parent / "onnx" / f"{model_dir.name}-{file_digest(*files)[:16]}"


def export(model_dir: Path, out: Path, opset: int = 17) -> Path:
    """``model_dir`` exported to ``out/model.onnx`` with its ``tokenizer.json``; checked against
    the torch model, written to a temporary folder and renamed into place."""
    torch, _ = import_torch_transformers()
    tokenizer, model = TransformersSparseEncoder(str(model_dir)).load(attn_implementation="eager")
    tmp = out.with_name(out.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    batch = tokenizer(PROBES, padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    inputs = tuple(batch[n] if n in batch else torch.zeros_like(batch["input_ids"]) for n in names)

    class Logits(torch.nn.Module):  # positional inputs in a fixed order, one named output
        def __init__(self, mlm):
            super().__init__()
            self.mlm = mlm

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.mlm(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).logits

    axes = {n: {0: "batch", 1: "tokens"} for n in names}
    axes["logits"] = {0: "batch", 1: "tokens"}
    with torch.inference_mode():
        torch.onnx.export(
            Logits(model).eval(),
            inputs,
            str(tmp / "model.onnx"),
            input_names=names,
            output_names=["logits"],
            dynamic_axes=axes,
            opset_version=opset,
            dynamo=False,
        )
        want = model(**{n: t for n, t in zip(names, inputs)}).logits.numpy()
    worst = check(tmp / "model.onnx", names, inputs, want)
    shutil.copyfile(model_dir / "tokenizer.json", tmp / "tokenizer.json")
    (tmp / "EXPORT.json").write_text(
        json.dumps(
            {"source": str(model_dir), "torch": torch.__version__, "opset": opset, "max_abs_diff": worst},
            indent=1,
        )
    )
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def check(path: Path, names: List[str], inputs, want) -> float:
    """The largest absolute difference between the export's logits and the torch model's
    (on the probe texts, padded as one batch); above ``TOLERANCE`` the export is refused."""
    import numpy as np
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (got,) = session.run(["logits"], {n: t.numpy().astype(np.int64) for n, t in zip(names, inputs)})
    worst = float(np.abs(got - want).max())
    if not worst <= TOLERANCE:
        raise SystemExit(f"export_splade_onnx: the export's logits differ from torch's by {worst:.2e}")
    return worst


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="the transformers model folder")
    parser.add_argument("--out", type=Path, help="the export folder (default: in the cache)")
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--force", action="store_true", help="export again over a cached export")
    args = parser.parse_args(argv)
    if not (args.model / "config.json").is_file():
        parser.error(f"{args.model}: not a transformers model folder (no config.json)")
    out = args.out or export_dir(args.model)
    if (out / "model.onnx").is_file() and (out / "tokenizer.json").is_file() and not args.force:
        print(f"export_splade_onnx: cached export reused ({out / 'model.onnx'})", file=sys.stderr)
    else:
        export(args.model, out, args.opset)
        print(f"export_splade_onnx: exported and checked ({out / 'EXPORT.json'})", file=sys.stderr)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
