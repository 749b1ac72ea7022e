"""Pooling: the unjudged top-k of every candidate system, the pairs people grade.

The TREC recipe: run every retriever of one or more suites (the candidate systems), take
the top ``depth`` (20) of each ranking, and ask people to grade the union of the
(query, document) pairs that have no label yet. :func:`pool_suites` does the retrieval and
the pooling (:func:`pool_runs` the pooling alone). The pairs go out as an annotation file
and come back graded through :mod:`.annotations`; :mod:`.merge` merges the grades with the
labels you already have.

Why not ``SuiteRunner.run()``: it retrieves only the queries that already have judgments
(it exists to evaluate), and pooling is most needed for the queries that have none. So
:func:`retrieve_suite` drives the same building blocks (``load_judgments``,
``make_backend``, ``leaf_spec``, ``fuse_runs``, the suite's embedder) with the same depths
and fusion windows as the gate, over every query of the judgment set; the test suite checks
its rankings against ``SuiteRunner`` on the judged queries. A suite whose qrels file does
not exist yet is read as "nothing judged", so pooling can start from an empty judgment set.
"""

from __future__ import annotations

import dataclasses
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

from ..io.qrels import Qrels, load_qrels
from ..types import Run

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["Pool", "PoolPair", "documents_of", "labels_of", "pool_runs", "pool_suites", "retrieve_suite"]


@dataclass
class PoolPair:
    query_id: str
    query: str
    doc_id: str
    title: str = ""
    text: str = ""
    pooled_by: Dict[str, int] = field(default_factory=dict)  # system -> 1-based rank

    @property
    def best_rank(self) -> int:
        return min(self.pooled_by.values()) if self.pooled_by else 0

    def document(self) -> str:
        """Title and text as a judge reads them."""
        return f"{self.title}\n{self.text}" if self.title and self.text else (self.title or self.text)


@dataclass
class Pool:
    pairs: List[PoolPair]
    depth: int
    systems: List[str]
    queries: Dict[str, str]
    candidates: int = 0  # (system, query, doc) entries in the top-depth cuts
    unique: int = 0  # unique (query, doc) pairs among them
    judged: int = 0  # unique pairs that already had a label
    contributed: Dict[str, int] = field(default_factory=dict)  # system -> unjudged pairs it found
    only_found_by: Dict[str, int] = field(default_factory=dict)  # system -> pairs no other found
    missing_text: int = 0
    notes: List[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [
            f"pooled {len(self.queries)} queries x {len(self.systems)} systems at depth "
            f"{self.depth}: {self.unique} unique pairs, {self.judged} already judged, "
            f"{len(self.pairs)} to annotate"
        ]
        for s in self.systems:
            lines.append(
                f"  {s}: {self.contributed.get(s, 0)} unjudged pairs "
                f"({self.only_found_by.get(s, 0)} found by no other system)"
            )
        if self.missing_text:
            lines.append(
                f"  {self.missing_text} pairs have no document text (no corpus loaded; pass --corpus)"
            )
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


def pool_runs(
    runs: Mapping[str, Run],
    judged: Mapping[str, Mapping[str, int]],
    *,
    depth: int = 20,
    queries: Optional[Mapping[str, str]] = None,
    documents: Optional[Mapping[str, Tuple[str, str]]] = None,
    include_judged: bool = False,
    shuffle: Optional[int] = None,
) -> Pool:
    """Pool the top ``depth`` of every run: the unique (query, doc) pairs without a label in
    ``judged`` (all of them with ``include_judged``, e.g. to measure agreement on pairs that
    people graded). ``runs`` maps system name -> Run. Pairs come query by query (in the order
    of ``queries``, then first appearance), each query's documents by best rank over the
    systems, then doc id; ``shuffle=SEED`` shuffles within each query instead (so annotators
    do not read the systems' order)."""
    if depth < 1:
        raise ValueError(f"pool depth must be >= 1, got {depth}")
    queries = dict(queries or {})
    order = _query_order(queries, runs)
    per_query, candidates = _top_pairs(runs, depth, queries, documents or {})
    tally = _Tally({s: 0 for s in runs}, {s: 0 for s in runs})
    rng = random.Random(shuffle) if shuffle is not None else None
    pairs: List[PoolPair] = []
    for qid in order:
        chosen = tally.choose(qid, per_query.get(qid, {}), judged, include_judged)
        chosen.sort(key=lambda p: (p.best_rank, p.doc_id))
        if rng is not None:
            rng.shuffle(chosen)
        pairs.extend(chosen)
    return Pool(
        pairs=pairs,
        depth=depth,
        systems=list(runs),
        queries={q: queries.get(q, "") for q in order},
        candidates=candidates,
        unique=tally.unique,
        judged=tally.judged,
        contributed=tally.contributed,
        only_found_by=tally.only_found_by,
        missing_text=tally.missing_text,
    )


def _query_order(queries: Mapping[str, str], runs: Mapping[str, Run]) -> Dict[str, None]:
    """The queries of ``queries``, then those only the runs have, in first appearance."""
    order: Dict[str, None] = dict.fromkeys(queries)
    for run in runs.values():
        for q in run:
            order.setdefault(q, None)
    return order


def _top_pairs(
    runs: Mapping[str, Run], depth: int, queries: Mapping[str, str], documents: Mapping[str, Tuple[str, str]]
) -> Tuple[Dict[str, Dict[str, PoolPair]], int]:
    """({qid: {doc: pair}} of every run's top ``depth``, each pair with the best rank each
    system gave it; the number of (system, query, doc) entries)."""
    per_query: Dict[str, Dict[str, PoolPair]] = {}
    candidates = 0
    for system, run in runs.items():
        for qid, ranking in run.items():
            for rank, did in enumerate(ranking.doc_ids[:depth], 1):
                candidates += 1
                bucket = per_query.setdefault(qid, {})
                pair = bucket.get(did)
                if pair is None:
                    title, text = documents.get(did, ("", ""))
                    pair = bucket[did] = PoolPair(qid, queries.get(qid, ""), did, title, text)
                prev = pair.pooled_by.get(system)
                if prev is None or rank < prev:
                    pair.pooled_by[system] = rank
    return per_query, candidates


@dataclass
class _Tally:
    """The counts of :class:`Pool` while its pairs are chosen, query by query."""

    contributed: Dict[str, int]  # system -> unjudged pairs it found
    only_found_by: Dict[str, int]  # system -> unjudged pairs no other system found
    unique: int = 0
    judged: int = 0
    missing_text: int = 0

    def choose(
        self,
        qid: str,
        bucket: Mapping[str, PoolPair],
        judged: Mapping[str, Mapping[str, int]],
        include_judged: bool,
    ) -> List[PoolPair]:
        """The pairs of one query to annotate (judged ones only with ``include_judged``)."""
        self.unique += len(bucket)
        chosen = []
        for pair in bucket.values():
            if did_judged(judged, qid, pair.doc_id):
                self.judged += 1
                if not include_judged:
                    continue
            else:
                self._credit(pair)
            chosen.append(pair)
        self.missing_text += sum(1 for p in chosen if not (p.title or p.text))
        return chosen

    def _credit(self, pair: PoolPair) -> None:
        for s in pair.pooled_by:
            self.contributed[s] += 1
        if len(pair.pooled_by) == 1:
            self.only_found_by[next(iter(pair.pooled_by))] += 1


def did_judged(qrels: Mapping[str, Mapping[str, int]], qid: str, did: str) -> bool:
    return did in qrels.get(qid, {})


def retrieve_suite(
    suite: Any, *, depth: int = 20, progress: Optional[Callable[[str], None]] = None
) -> Tuple[Any, Dict[str, Run]]:
    """Run every retriever of a loaded suite over *every* query of its judgment set (judged
    or not), exactly as the suite runner builds each ranking (same depth, fusion windows,
    embedder, backend). Returns (JudgmentSet, {retriever: Run}); a qrels file that does not
    exist yet is read as no judgments."""
    from ..execution.plan import load_judgments
    from ..execution.runner import SuiteRunner

    say = progress or (lambda msg: None)
    model = suite.model
    j = model.judgments
    loaded = suite
    if _qrels_missing(suite):
        # nothing judged yet: read queries and corpus only
        jm = j.model_copy(update={"qrels": None})
        loaded = dataclasses.replace(suite, model=model.model_copy(update={"judgments": jm}))
        say(f"{suite.name}: qrels file {j.qrels} does not exist yet; treating every query as unjudged")
    js = load_judgments(loaded)
    runs = SuiteRunner(suite, progress=say).retrieve(js, list(js.queries), min_depth=depth).runs
    return js, runs


def _qrels_missing(suite: Any) -> bool:
    """The suite names a qrels file that does not exist (yet)."""
    j = suite.model.judgments
    return bool(j.qrels) and not suite.resolve_path(("judgments", "qrels"), j.qrels).exists()


def pool_suites(
    paths: Sequence[PathLike],
    *,
    depth: int = 20,
    retrievers: Optional[Sequence[str]] = None,
    judged: Optional[Sequence[PathLike]] = None,
    corpus: Optional[PathLike] = None,
    include_judged: bool = False,
    shuffle: Optional[int] = None,
    progress: Optional[Callable[[str], None]] = None,
) -> Pool:
    """Run every retriever of each suite (the candidate systems) and pool their top
    ``depth``. Already judged = any label (grade 0 included) in a suite's own qrels or in
    the extra ``judged`` qrels files. ``retrievers`` limits which retrievers are pooled
    (by name; ``suite:retriever`` to pick from one suite). Document texts come from the
    suites' corpora, or from ``corpus`` (JSONL) for suites on an existing index."""
    from ..config.load import load_suite

    if not paths:
        raise ValueError("pool needs at least one suite file")
    say = progress or (lambda msg: None)
    wanted = set(retrievers or ())
    suites = [load_suite(Path(p)) for p in paths]
    _check_retriever_names(wanted, paths, suites)  # before any retrieval
    systems = _Systems(wanted, several_suites=len(paths) > 1)
    for path, suite in zip(paths, suites):
        if _qrels_missing(suite):
            systems.notes.append(
                f"{Path(path).name}: qrels file {suite.model.judgments.qrels} does not exist yet; "
                f"every query counts as unjudged"
            )
        js, suite_runs = retrieve_suite(suite, depth=depth, progress=say)
        systems.add_suite(Path(path), suite, js, suite_runs)
    systems.add_judged(judged or ())
    if corpus is not None:
        systems.add_corpus(Path(corpus))
    systems.note_unknown_queries()
    pool = pool_runs(
        systems.runs,
        systems.judged,
        depth=depth,
        queries=systems.queries,
        documents=systems.documents,
        include_judged=include_judged,
        shuffle=shuffle,
    )
    pool.notes.extend(systems.notes)
    return pool


@dataclass
class _Systems:
    """What :func:`pool_suites` gathers from the suites before pooling: the runs of the
    wanted retrievers (by label), the queries, the labels and the document texts."""

    wanted: Set[str]
    several_suites: bool
    runs: Dict[str, Run] = field(default_factory=dict)
    queries: Dict[str, str] = field(default_factory=dict)
    judged: Qrels = field(default_factory=dict)
    documents: Dict[str, Tuple[str, str]] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)

    def add_suite(self, path: Path, suite: Any, js: Any, suite_runs: Mapping[str, Run]) -> None:
        for q, text in js.queries.items():
            self.queries.setdefault(q, text)
        for q, d in js.qrels.items():
            self.judged.setdefault(q, {}).update(d)
        for doc in js.judged_corpus or []:
            self.documents.setdefault(doc.doc_id, _title_text(doc.fields))
        for name, run in suite_runs.items():
            label = f"{suite.name}:{name}" if self.several_suites else name
            if label in self.runs:  # two suites of the same name
                label = f"{path.name}:{name}"
            if self.wanted and not (
                {name, label, f"{suite.name}:{name}", f"{path.name}:{name}"} & self.wanted
            ):
                continue
            self.runs[label] = run

    def add_judged(self, paths: Sequence[PathLike]) -> None:
        for p in paths:
            for q, d in load_qrels(Path(p)).items():
                self.judged.setdefault(q, {}).update(d)

    def add_corpus(self, path: Path) -> None:
        from ..io.corpus import load_corpus

        for doc in load_corpus(path):
            self.documents.setdefault(doc.doc_id, _title_text(doc.fields))

    def note_unknown_queries(self) -> None:
        unknown_q = sorted(set(self.judged) - set(self.queries))
        if unknown_q:
            self.notes.append(
                f"{len(unknown_q)} judged query id(s) are not in the suites' queries "
                f"(e.g. {', '.join(map(repr, unknown_q[:3]))})"
            )


def _check_retriever_names(wanted: Set[str], paths: Sequence[PathLike], suites: Sequence[Any]) -> None:
    """Every name of ``--retrievers`` names a retriever (``name``, ``suite:name`` or
    ``file:name``) of one of the suites."""
    if not wanted:
        return
    known = {n for s in suites for n in s.model.retrievers}
    known |= {f"{s.name}:{n}" for s in suites for n in s.model.retrievers}
    known |= {f"{Path(p).name}:{n}" for p, s in zip(paths, suites) for n in s.model.retrievers}
    if wanted - known:
        names = [Path(p).name for p in paths]
        raise ValueError(
            f"--retrievers: no retriever named {', '.join(sorted(wanted - known))} in {', '.join(names)}"
        )


def documents_of(path: PathLike) -> Dict[str, Tuple[str, str]]:
    """doc id -> (title, text) of a corpus JSONL (``--corpus``)."""
    from ..io.corpus import load_corpus

    return {doc.doc_id: _title_text(doc.fields) for doc in load_corpus(Path(path))}


def labels_of(paths: Sequence[PathLike]) -> Dict[str, Dict[str, int]]:
    """The labels of qrels files (``--judged``), merged."""
    out: Dict[str, Dict[str, int]] = {}
    for p in paths:
        for q, d in load_qrels(Path(p)).items():
            out.setdefault(q, {}).update(d)
    return out


def _title_text(fields: Mapping[str, str]) -> Tuple[str, str]:
    title = fields.get("title", "") or ""
    text = fields.get("text")
    if text is None:
        text = " ".join(v for k, v in fields.items() if k != "title" and isinstance(v, str))
    return title, text
