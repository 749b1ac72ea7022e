"""``judge import --from quepid|rre|srw|rank-eval FILE`` and ``judge export --to ...``: judgments
in from the tools teams keep them in, and out to them (``pytest_retrieval.interchange``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Tuple

from ...errors import ConfigError, RetrievalError
from .console import say

__all__ = ["export_run", "import_run", "register_export"]

# what an import folder may hold; a stale one this import would not write is refused
FOLDER_FILES = ("queries.jsonl", "qrels.tsv", "tags.jsonl", "run.trec", "judges")


def import_run(args: argparse.Namespace) -> int:
    from ...interchange import registry
    from ...interchange.files import write_folder

    if len(args.files) != 1 or args.qrels or args.pool:
        raise RetrievalError(
            "judge import --from FORMAT reads one file and writes a folder (--out); "
            "--qrels and --pool belong to annotation files"
        )
    src = Path(args.files[0])
    out = Path(args.out) if args.out else Path(src.name.split(".")[0] or "judgments")
    _check_folder(out, src)
    js = registry.read(args.source_format, src, _options(args))
    if args.grades:
        _check_range(js, args.grades, src)
    for note in js.notes[:30]:
        say(f"  {note}")
    if len(js.notes) > 30:
        say(f"  ... and {len(js.notes) - 30} more")
    _check_stale(js, out)
    written = write_folder(js, out)
    say(f"read {js.counts()} from {src} ({registry.get(args.source_format).tool})")
    say(f"wrote {', '.join(str(p) for p in written)}")
    return 0


def _options(args: argparse.Namespace) -> Any:
    from ...interchange.model import ImportOptions, parse_rating_map

    rating_map = parse_rating_map(args.grade_map) if args.grade_map else None
    return ImportOptions(rating_map=rating_map, policy=args.policy, skip_placeholders=args.skip_placeholders)


def _check_stale(js: Any, out: Path) -> None:
    """A file of an earlier import this one would not replace would be read beside its own."""
    writes = {"queries.jsonl": True, "qrels.tsv": any(js.qrels.values()), "tags.jsonl": bool(js.tags)}
    writes.update({"run.trec": bool(js.run), "judges": bool(js.judges)})
    for name, written in writes.items():
        if not written and (out / name).exists():
            raise ConfigError(
                f"{name} is left from an earlier import: remove it, or import into an empty folder",
                file=str(out),
            )


def _check_folder(out: Path, src: Path) -> None:
    if out.exists() and not out.is_dir():
        raise RetrievalError(
            f"--out {out}: not a folder (judge import --from writes queries, qrels and tags there)"
        )
    if out.resolve() == src.resolve().parent and src.name in FOLDER_FILES:
        raise RetrievalError(f"--out {out}: would overwrite the file it reads, {src}")


def _check_range(js: Any, grades: Tuple[int, int], src: Path) -> None:
    lo, hi = grades
    for source in [js.qrels, *js.judges.values()]:
        for q, docs in source.items():
            for d, g in docs.items():
                if not lo <= g <= hi:
                    raise ConfigError(
                        f"grade {g} of ({q!r}, {d!r}) is outside --grades {lo}..{hi}", file=str(src)
                    )


# ------------------------------------------------------------------ export


def export_run(args: argparse.Namespace) -> int:
    from ...interchange import quepid, registry, rre, srw
    from ...output_paths import Output
    from ..options import check_output_files

    fmt = registry.get(args.to)
    outputs = [Output("--out", args.out), Output("--query-set", args.query_set)]
    check_output_files(outputs, [("the source", args.source)])
    _check_extension(args.out, fmt.extensions, "--out")
    if args.query_set and args.to != "srw":
        raise RetrievalError("--query-set goes with --to srw")
    js, suite = _source(Path(args.source))
    out = Path(args.out)
    if args.to == "quepid":
        n = quepid.write(js, out)
    elif args.to == "rre":
        n = rre.write(js, out)
    elif args.to == "srw":
        n = srw.write(js, out)
        if args.query_set:
            _check_extension(args.query_set, (".json",), "--query-set")
            srw.write_query_set(js, Path(args.query_set))
    else:
        n = _export_rank_eval(args, js, suite, out)
    say(f"wrote {n} judgment(s) of {len(js.queries)} queries to {out} ({fmt.tool})")
    return 0


def _check_extension(path: str, allowed: Tuple[str, ...], option: str) -> None:
    suffix = Path(path).suffix.lower()
    if suffix not in allowed:
        raise RetrievalError(f"{option} {path}: write a {' or '.join(allowed)} file")


def _source(path: Path) -> Tuple[Any, Any]:
    """The judgments to export: a suite file's (``judgments``), or a folder ``judge import``
    wrote; and the suite (None for a folder)."""
    from ...interchange.files import read_folder
    from ...interchange.model import Judgments

    if path.is_dir():
        return read_folder(path), None
    if path.suffix.lower() not in (".yaml", ".yml"):
        raise RetrievalError(f"{path}: give a suite file (.yaml) or a folder `judge import` wrote")
    from ...config.load import load_suite
    from ...execution.plan import load_judgments

    suite = load_suite(path)
    jset = load_judgments(suite)
    js = Judgments(queries=dict(jset.queries), qrels={q: dict(d) for q, d in jset.qrels.items()})
    js.tags = {q: tuple(t) for q, t in jset.tags.items()}
    return js, suite


def _export_rank_eval(args: argparse.Namespace, js: Any, suite: Any, out: Path) -> int:
    from ...backends.base import BM25Spec
    from ...interchange import rank_eval

    spec, index, threshold = BM25Spec(), args.index, 1
    if suite is not None:
        spec = _retriever_spec(suite, args.retriever)
        index = index or suite.model.backend.index.name
        threshold = suite.model.judgments.relevance_threshold
    if not index:
        raise RetrievalError("--index: name the index the ratings' documents are in (the suite names none)")
    n, _body = rank_eval.write(
        js,
        out,
        spec=spec,
        index=index,
        k=args.k,
        metric=args.metric,
        relevance_threshold=threshold,
        template=args.template,
    )
    return n


def _retriever_spec(suite: Any, wanted: Any) -> Any:
    from ...execution.plan import leaf_spec

    names = [n for n, r in suite.model.retrievers.items() if r.type in ("bm25", "template")]
    name = wanted or (names[0] if names else None)
    if name is None or name not in names:
        raise RetrievalError(
            f"--retriever: name a bm25 or template retriever of the suite ({', '.join(names) or 'none'})"
        )
    return leaf_spec(suite, name)


def register_export(sub: Any) -> None:
    """``judge export``: a suite's (or an import folder's) judgments in a tool's format."""
    from ...interchange.registry import FORMATS

    e = sub.add_parser(
        "export", help="judgments out to Quepid, RRE, Search Relevance Workbench or _rank_eval"
    )
    e.add_argument("source", help="a suite file (its judgments) or a folder `judge import --from` wrote")
    e.add_argument("--to", required=True, choices=list(FORMATS), help="the tool's format")
    e.add_argument(
        "--out",
        required=True,
        help="the file to write: quepid .csv (ratings) or .json (case); rre, srw .json; rank-eval .json "
        "(the body) or .txt (a Kibana Dev Tools request)",
    )
    e.add_argument("--query-set", metavar="FILE", help="srw: also write the query set (.json)")
    e.add_argument(
        "--retriever", help="rank-eval: the suite's bm25 or template retriever (default: the first)"
    )
    e.add_argument("--index", help="rank-eval: the ratings' index (default: the suite's backend.index.name)")
    from ..options import number

    e.add_argument(
        "--k", type=number(int, ge=1, le=10000), default=10, help="rank-eval: the request size (default 10)"
    )
    e.add_argument(
        "--metric", default="ndcg@10", help="rank-eval: precision|recall|mrr|dcg|ndcg|err@k (default ndcg@10)"
    )
    e.add_argument(
        "--template", action="store_true", help="rank-eval: one search template and each query's params"
    )
    e.set_defaults(func=export_run)


def import_arguments(i: Any) -> None:
    """The ``judge import`` options of ``--from``."""
    from ...interchange.registry import FORMATS

    i.add_argument(
        "--from",
        dest="source_format",
        choices=list(FORMATS),
        help="read one file a tool exported (quepid, rre, srw, rank-eval) into --out FOLDER",
    )
    i.add_argument(
        "--grade-map",
        metavar="RATING:GRADE,...",
        help="--from: the tool's ratings onto grades, e.g. 0:0,1:1,10:2,100:3 or 0.4:1,0.7:2,1.0:3 "
        "(with a map, every rating must be one it names)",
    )
    i.add_argument(
        "--skip-placeholders",
        action="store_true",
        help="--from rre: leave out (and name) queries with placeholders other than $query",
    )
