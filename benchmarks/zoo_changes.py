"""The regression zoo's catalogue: seeded harmful and harmless changes to a suite's pipeline.

Each change edits a copy of the base case folder (``zoo_data.Case``): the suite dicts (both
suites alike: the full suite measures what the change costs on every judged query), the
corpus, or the precomputed vectors. Random edits are seeded (``SEED``), so every run of the zoo
applies the same change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import yaml
from zoo_data import Case, judged_documents, load_vectors, read_corpus, save_vectors, seeded, write_corpus

SEED = 20261125
Edit = Callable[[Case], None]


@dataclass(frozen=True)
class Change:
    name: str
    harmful: bool
    edit: Edit
    engines: Optional[Tuple[str, ...]] = None  # None: every engine
    should_refuse: bool = False  # a skip of the baseline items is then the right answer
    added_retrievers: Tuple[str, ...] = ()  # their baseline items have nothing to compare: skipped

    def applies_to(self, engine: str) -> bool:
        return self.engines is None or engine in self.engines


# ----------------------------------------------------------------------------- suite edits


def retriever(name: str, **values: Any) -> Edit:
    """Set keys of one retriever in both suites."""

    def edit(case: Case) -> None:
        for suite in case.both():
            suite["retrievers"][name].update(values)

    return edit


def backend_index(**values: Any) -> Edit:
    def edit(case: Case) -> None:
        for suite in case.both():
            suite["backend"].setdefault("index", {}).update(values)

    return edit


def default_analyzer(analyzer: Dict[str, Any]) -> Edit:
    return backend_index(settings={"analysis": {"analyzer": {"default": analyzer}}})


def yaml_text(render: Callable[[Dict[str, Any]], str]) -> Edit:
    """The gate suite written differently (the same content): the full suite is unchanged."""

    def edit(case: Case) -> None:
        case.texts["retrieval_gate.yaml"] = render(case.gate)

    return edit


def reordered_keys(suite: Dict[str, Any]) -> str:
    return yaml.safe_dump(dict(reversed(list(suite.items()))), sort_keys=True)


def flow_style(suite: Dict[str, Any]) -> str:
    return yaml.safe_dump(suite, sort_keys=False, default_flow_style=True, width=100)


def commented(suite: Dict[str, Any]) -> str:
    lines = yaml.safe_dump(suite, sort_keys=False).splitlines()
    return (
        "# the zoo's gate suite\n"
        + "\n".join(f"{line}  # note" if line.endswith(":") else line for line in lines)
        + "\n"
    )


def quoted(suite: Dict[str, Any]) -> str:
    return yaml.safe_dump(suite, sort_keys=False, default_style='"')


def with_anchor(suite: Dict[str, Any]) -> str:
    text = yaml.safe_dump(suite, sort_keys=False)
    return text.replace("    of:\n    - bm25\n    - dense\n", "    of: &inputs [bm25, dense]\n", 1).replace(
        "    of:\n    - bm25\n    - dense\n", "    of: *inputs\n", 1
    )


def via_include(case: Case) -> None:
    """The retrievers moved into an included file."""
    shared = {"retrievers": case.gate.pop("retrievers")}
    (case.root / "shared_retrievers.yaml").write_text(
        yaml.safe_dump(shared, sort_keys=False), encoding="utf-8"
    )
    case.gate = {"include": ["shared_retrievers.yaml"], **case.gate}


def via_env(case: Case) -> None:
    """The fusion's rank constant and BM25's k1 from ``${VAR:-default}`` (unset: the defaults)."""
    text = yaml.safe_dump(case.gate, sort_keys=False)
    text = text.replace("rank_constant: 60", "rank_constant: ${ZOO_UNSET_RANK:-60}", 1)
    case.texts["retrieval_gate.yaml"] = text


def suite_key(path: Tuple[str, ...], value: Any) -> Edit:
    def edit(case: Case) -> None:
        for suite in case.both():
            node = suite
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = value

    return edit


def added_retriever(case: Case) -> None:
    for suite in case.both():
        suite["retrievers"]["bm25_title"] = {"type": "bm25", "fields": ["title^2", "text"]}
    case.full["floors"]["bm25_title"] = {"ndcg@10": 0.0}


def added_floor(case: Case) -> None:
    case.gate["floors"] = {"rrf": {"recall@100": 0.1}}  # met on both datasets (NFCorpus 0.32)


def explicit_defaults(case: Case) -> None:
    for suite in case.both():
        suite["retrievers"]["bm25"].update(multi_match_type="best_fields", tie_breaker=0.0, k1=1.2, b=0.75)
        suite["retrievers"]["rrf"]["semantics"] = "elasticsearch"


# ----------------------------------------------------------------------------- corpus edits


def corpus_rows(transform: Callable[[List[Dict[str, Any]]], List[Dict[str, Any]]]) -> Edit:
    def edit(case: Case) -> None:
        write_corpus(case, transform(read_corpus(case)))

    return edit


def truncated(chars: int) -> Edit:
    return corpus_rows(lambda rows: [{**r, "text": r["text"][:chars]} for r in rows])


def without_titles(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [{**r, "title": ""} for r in rows]


def shuffled(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    out = list(rows)
    seeded(SEED).shuffle(out)
    return out


def with_metadata(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [{**r, "metadata": {"indexed_by": "zoo"}} for r in rows]


def stale(share: float, judged_too: bool = True) -> Edit:
    """An index missing ``share`` of the documents (a seeded sample): judged ones too, or not."""

    def edit(case: Case) -> None:
        rows = read_corpus(case)
        judged = judged_documents(case)
        pool = [r["_id"] for r in rows if judged_too or r["_id"] not in judged]
        gone = set(
            seeded(SEED).sample(pool, min(len(pool), int(share * len(rows))))
        )  # NFCorpus: few unjudged
        write_corpus(case, [r for r in rows if r["_id"] not in gone])

    return edit


def added_documents(case: Case) -> None:
    """Five new off-topic documents, their vectors the negatives of existing ones."""
    rows = read_corpus(case)
    new = [{"_id": f"zoo-new-{i}", "title": "", "text": f"Release notes {i} of the zoo."} for i in range(5)]
    write_corpus(case, rows + new)
    matrix, ids = load_vectors(case, "corpus")
    save_vectors(case, "corpus", np.vstack([matrix, -matrix[:5]]), ids + [r["_id"] for r in new])


# ----------------------------------------------------------------------------- vector edits


def vectors(which: str, transform: Callable[[np.ndarray, np.random.Generator], np.ndarray]) -> Edit:
    def edit(case: Case) -> None:
        matrix, _ = load_vectors(case, which)
        save_vectors(case, which, transform(matrix.astype(np.float32), np.random.default_rng(SEED)))

    return edit


def noise(sigma: float) -> Callable[[np.ndarray, np.random.Generator], np.ndarray]:
    """Gaussian noise of ``sigma`` per dimension (a unit vector has ~1/sqrt(384) = 0.05 per dim)."""

    def transform(m: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = m + rng.normal(0.0, sigma, m.shape).astype(np.float32)
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)

    return transform


def first_dims(n: int) -> Edit:
    def edit(case: Case) -> None:
        for which in ("corpus", "queries"):
            matrix, _ = load_vectors(case, which)
            save_vectors(case, which, np.ascontiguousarray(matrix[:, :n]))

    return edit


def misaligned(share: float) -> Callable[[np.ndarray, np.random.Generator], np.ndarray]:
    """``share`` of the document vectors swapped among themselves (an id/row mix-up)."""

    def transform(m: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rows = rng.choice(len(m), int(share * len(m)), replace=False)
        out = m.copy()
        out[rows] = m[rng.permutation(rows)]
        return out

    return transform


def zeroed(share: float) -> Callable[[np.ndarray, np.random.Generator], np.ndarray]:
    """``share`` of the document vectors replaced by a constant one (the embedder failed on them)."""

    def transform(m: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = m.copy()
        out[rng.choice(len(m), int(share * len(m)), replace=False)] = 1.0 / np.sqrt(m.shape[1])
        return out

    return transform


def as_dtype(dtype: Any) -> Edit:
    def edit(case: Case) -> None:
        for which in ("corpus", "queries"):
            matrix, _ = load_vectors(case, which)
            save_vectors(case, which, matrix.astype(dtype))

    return edit


def scaled(m: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return m * np.float32(2.0)


def rows_permuted(which: str) -> Edit:
    """Rows and their ids permuted together: the same vectors per id."""

    def edit(case: Case) -> None:
        matrix, ids = load_vectors(case, which)
        order = np.random.default_rng(SEED).permutation(len(ids))
        save_vectors(case, which, matrix[order], [ids[i] for i in order])

    return edit


# ----------------------------------------------------------------------------- the catalogue

ES = ("elasticsearch",)
EMBEDDED = ("embedded",)

HARMFUL: List[Change] = [
    Change("text truncated to 300 chars", True, truncated(300)),
    Change("text truncated to 100 chars", True, truncated(100)),
    Change("titles missing from the index", True, corpus_rows(without_titles)),
    Change("bm25 on text only", True, retriever("bm25", fields=["text"])),
    Change("bm25 on title only", True, retriever("bm25", fields=["title"])),
    Change("field boost title^5", True, retriever("bm25", fields=["title^5", "text"])),
    Change("field boost text^0.2", True, retriever("bm25", fields=["title", "text^0.2"])),
    Change("bm25 most_fields", True, retriever("bm25", multi_match_type="most_fields")),
    Change("bm25 k1 0", True, retriever("bm25", k1=0.0)),
    Change("bm25 k1 5", True, retriever("bm25", k1=5.0)),
    Change("bm25 b 0", True, retriever("bm25", b=0.0)),
    Change("bm25 b 1", True, retriever("bm25", b=1.0)),
    Change(
        "analyzer without lowercase",  # the test servers carry no analysis-common: the standard tokenizer only
        True,
        default_analyzer({"type": "custom", "tokenizer": "standard"}),
        engines=ES,
    ),
    Change(
        "analyzer tokens cut at 3",
        True,
        default_analyzer({"type": "standard", "max_token_length": 3}),
        engines=ES,
    ),
    Change("doc vectors noise 0.05", True, vectors("corpus", noise(0.05))),
    Change("doc vectors noise 0.1", True, vectors("corpus", noise(0.1))),
    Change("query vectors noise 0.05", True, vectors("queries", noise(0.05))),
    Change("vectors cut to 128 dims", True, first_dims(128)),
    Change("vectors cut to 32 dims", True, first_dims(32)),
    Change("10% doc vectors misaligned", True, vectors("corpus", misaligned(0.10))),
    Change("30% doc vectors misaligned", True, vectors("corpus", misaligned(0.30))),
    Change("20% doc vectors constant", True, vectors("corpus", zeroed(0.20))),
    Change("kNN num_candidates 10", True, retriever("dense", num_candidates=10), engines=ES),
    Change("vectors quantised bbq", True, backend_index(quantization="bbq"), engines=ES),
    Change("rrf rank_constant 1", True, retriever("rrf", rank_constant=1)),
    Change("rrf window 10", True, retriever("rrf", window=10)),
    Change("weighted window 5", True, retriever("weighted", window=5)),
    Change("weighted weights 0.9/0.1", True, retriever("weighted", weights=[0.9, 0.1])),
    Change("weighted geometric_mean", True, retriever("weighted", combination="geometric_mean")),
    Change(
        "weighted l2 weights 0.7/0.3", True, retriever("weighted", normalization="l2", weights=[0.7, 0.3])
    ),
    Change("weighted weights 1.0/0.0", True, retriever("weighted", weights=[1.0, 0.0])),
    Change("stale index: 2% docs missing", True, stale(0.02)),
    Change("stale index: 10% docs missing", True, stale(0.10)),
    Change("stale index: 5% unjudged docs missing", True, stale(0.05, judged_too=False)),
]

HARMLESS: List[Change] = [
    Change("corpus rows shuffled", False, corpus_rows(shuffled)),
    Change("corpus rows reversed", False, corpus_rows(lambda rows: rows[::-1])),
    Change("corpus metadata added", False, corpus_rows(with_metadata)),
    Change("5 off-topic docs added", False, added_documents),
    Change("vectors float16", False, as_dtype(np.float16)),
    Change("vectors float64", False, as_dtype(np.float64)),
    Change("doc vectors scaled x2", False, vectors("corpus", scaled)),
    Change("doc vector rows permuted", False, rows_permuted("corpus")),
    Change("query vector rows permuted", False, rows_permuted("queries")),
    Change("similarity dot_product", False, retriever("dense", similarity="dot_product")),
    Change("YAML keys reordered", False, yaml_text(reordered_keys)),
    Change("YAML flow style", False, yaml_text(flow_style)),
    Change("YAML comments", False, yaml_text(commented)),
    Change("YAML all quoted", False, yaml_text(quoted)),
    Change("YAML anchor and alias", False, yaml_text(with_anchor)),
    Change("retrievers in an include", False, via_include),
    Change("rank_constant via ${VAR:-60}", False, via_env),
    Change("defaults written out", False, explicit_defaults),
    Change("fields as {title: 1, text: 1}", False, retriever("bm25", fields={"title": 1.0, "text": 1.0})),
    Change("an added retriever", False, added_retriever, added_retrievers=("bm25_title",)),
    Change("an added floor", False, added_floor),
    Change("latency settings changed", False, suite_key(("latency",), {"warmup": 2, "max_queries": 50})),
    Change("summary metrics changed", False, suite_key(("evaluation", "metrics"), ["ndcg@10", "map"])),
    Change("weighted weights 0.31/0.69", False, retriever("weighted", weights=[0.31, 0.69])),
    Change("weighted weights 0.29/0.71", False, retriever("weighted", weights=[0.29, 0.71])),
    Change("rrf rank_constant 61", False, retriever("rrf", rank_constant=61)),
    Change("rrf rank_constant 55", False, retriever("rrf", rank_constant=55)),
    Change("rrf window 120", False, retriever("rrf", window=120)),
    Change("weighted window 110", False, retriever("weighted", window=110)),
    Change("bm25 k1 1.25", False, retriever("bm25", k1=1.25)),
    Change("bm25 b 0.74", False, retriever("bm25", b=0.74)),
    Change("kNN num_candidates 200", False, retriever("dense", num_candidates=200), engines=ES),
]


def catalogue(engine: str) -> List[Change]:
    """The changes that apply on ``engine``, harmful first."""
    return [c for c in HARMFUL + HARMLESS if c.applies_to(engine)]
