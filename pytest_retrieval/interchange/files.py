"""The file I/O of the interchange formats: a tool's JSON file read whole but bounded (a
``.zip`` holding one JSON file inflated with the same bound), and the folder ``judge import``
writes (``queries.jsonl``, ``qrels.tsv``, ``tags.jsonl``, ``judges/<judge>.tsv``, ``run.trec``)
read back by ``judge export`` and by a suite.

A file larger than :data:`MAX_JSON_BYTES` (counted after decompression), JSON that does not
parse, nests too deeply or names one key twice in an object is one ``ConfigError`` naming the
file: never a traceback, never a read past the bound."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from ..bounds.limits import CHUNK_BYTES, AnswerTooLarge, describe_bytes, read_capped
from ..errors import ConfigError
from ..fileio import atomic_write
from ..io.lines import check_data_file
from ..types import Ranking
from .model import Judgments

__all__ = [
    "MAX_JSON_BYTES",
    "JUDGES_FOLDER",
    "read_folder",
    "read_json",
    "strip_console_line",
    "write_folder",
]

MAX_JSON_BYTES = 512 * 1024**2  # the largest real export here is 5.5 MB (a Quepid snapshot)
JUDGES_FOLDER = "judges"


class _DuplicateKey(ValueError):
    pass


def _no_duplicate_keys(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:  # json.loads keeps the last silently
            raise _DuplicateKey(f"the key {k!r} appears twice in one object")
        out[k] = v
    return out


def _chunks(read: Callable[[int], bytes]) -> Iterator[bytes]:
    while True:
        chunk = read(CHUNK_BYTES)
        if not chunk:
            return
        yield chunk


def read_bytes(path: Path, cap: Optional[int] = None) -> bytes:
    """The bytes of a regular file (a ``.zip``: of the one file it holds), at most ``cap``."""
    cap = MAX_JSON_BYTES if cap is None else cap
    check_data_file(path)
    try:
        if path.suffix.lower() == ".zip":
            return _zip_member(path, cap)
        with open(path, "rb") as fh:
            return read_capped(_chunks(fh.read), cap)
    except AnswerTooLarge:
        raise ConfigError(
            f"larger than {describe_bytes(cap)} (counted after decompression): not read past it",
            file=str(path),
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None


def _zip_member(path: Path, cap: int) -> bytes:
    try:
        with zipfile.ZipFile(path) as zf:
            names = [
                i for i in zf.infolist() if not i.is_dir() and not i.filename.startswith(("__MACOSX/", "."))
            ]
            if len(names) != 1:
                raise ConfigError(
                    f"the zip holds {len(names)} files; expected one (a Quepid export)", file=str(path)
                )
            with zf.open(names[0]) as fh:  # inflated chunk by chunk: a bomb stops at the cap
                return read_capped(_chunks(fh.read), cap)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as exc:
        raise ConfigError(f"not a readable zip file ({exc})", file=str(path)) from None


def strip_console_line(text: str) -> str:
    """A Kibana Dev Tools request (``GET /index/_rank_eval`` then the body) -> the body."""
    first, sep, rest = text.lstrip().partition("\n")
    head = first.split()
    if sep and len(head) == 2 and head[0].upper() in ("GET", "POST") and "_rank_eval" in head[1]:
        return rest
    return text


def read_json(path: Path, cap: Optional[int] = None) -> Any:
    """A JSON file (or a ``.zip`` of one, or a Dev Tools request), parsed, within ``cap``."""
    data = read_bytes(Path(path), cap)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(path)) from None
    try:
        return json.loads(strip_console_line(text), object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})", file=str(path)
        ) from None
    except _DuplicateKey as exc:
        raise ConfigError(f"invalid JSON: {exc}", file=str(path)) from None
    except RecursionError:
        raise ConfigError("invalid JSON: nested too deeply", file=str(path)) from None


# ------------------------------------------------------------------ the folder


def write_folder(js: Judgments, out: Path) -> List[Path]:
    """``js`` as the files a suite reads; returns the paths written."""
    from ..io.trec import write_trec_run
    from ..judge.files import write_qrels
    from ..safe_names import unique_file_names

    out.mkdir(parents=True, exist_ok=True)
    written = [out / "queries.jsonl"]

    def queries(fh: Any) -> None:
        for qid, text in js.queries.items():
            record = {"_id": qid, "text": text}
            if qid in js.references:
                record["reference_answer"] = js.references[qid]
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")

    atomic_write(written[0], queries)
    if any(js.qrels.values()):
        written.append(out / "qrels.tsv")
        write_qrels(js.qrels, written[-1])
    if js.tags:
        written.append(out / "tags.jsonl")
        atomic_write(written[-1], lambda fh: _write_tags(js, fh))
    names = unique_file_names({j: j for j in js.judges}, fallback="judge")
    for judge, grades in js.judges.items():
        (out / JUDGES_FOLDER).mkdir(exist_ok=True)
        written.append(out / JUDGES_FOLDER / f"{names[judge]}.tsv")
        write_qrels(grades, written[-1])
    if js.run:
        written.append(out / "run.trec")
        run = {
            q: Ranking(docs, [float(len(docs) - i) for i in range(len(docs))]) for q, docs in js.run.items()
        }
        atomic_write(written[-1], lambda fh: write_trec_run(run, fh, tag="quepid-snapshot"))
    return written


def _write_tags(js: Judgments, fh: Any) -> None:
    for qid, tags in js.tags.items():
        fh.write(json.dumps({"id": qid, "tags": list(tags)}, ensure_ascii=False) + "\n")


def read_folder(folder: Path) -> Judgments:
    """The folder ``judge import`` wrote, read by the suite's own readers."""
    from ..io.lines import read_jsonl
    from ..io.qrels import load_qrels
    from ..io.queries import load_queries
    from ..io.tags import load_tags

    if not (folder / "queries.jsonl").is_file():
        raise ConfigError("no queries.jsonl: not a folder `judge import` wrote", file=str(folder))
    js = Judgments(queries=load_queries(folder / "queries.jsonl"))
    for _, obj in read_jsonl(folder / "queries.jsonl"):
        ref = obj.get("reference_answer")
        if isinstance(ref, str):
            js.references[str(obj.get("_id"))] = ref
    if (folder / "qrels.tsv").is_file():
        js.qrels = load_qrels(folder / "qrels.tsv")
    if (folder / "tags.jsonl").is_file():
        js.tags = load_tags(folder / "tags.jsonl")
    return js
