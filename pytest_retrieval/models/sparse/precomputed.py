"""Precomputed sparse vectors: computed elsewhere, read from JSONL or from a scipy ``.npz`` CSR
matrix with a vocabulary file and an id file (the layout teams cache encoded corpora in)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Sequence

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from ...errors import ConfigError
from ..config_parsing import ModelConfig, PathStr
from ..digests import file_digest
from ..files import resolve
from .base import SparseEncoder, SparseVector

NO_SIDE = "precomputed sparse encoder: give 'queries' and/or 'documents' vectors"


def read_lines(path: Path, what: str = "line") -> List[str]:
    """The lines of a regular UTF-8 text file, stripped, line i for row or column i: a blank
    line between two others is refused (it would shift every later row or column by one);
    blank lines at the end are ignored (``io.lines``: a FIFO, a folder or undecodable bytes
    are one ConfigError)."""
    from ...io.lines import read_lines as lines

    out: List[str] = []
    for n, line in lines(path):
        if n != len(out) + 1:
            raise ConfigError(
                f"line {len(out) + 1} is blank: every line is one {what} (a blank one would shift the "
                "rest by one)",
                file=str(path),
                line=len(out) + 1,
            )
        out.append(line.strip())
    return out


def read_vocabulary(path: Path) -> List[str]:
    """Column -> term: one term per line (line i is column i), or a JSON ``{term: column}``
    object (a tokenizer's ``vocab.json``) or list; every term once, every column one term."""
    terms = _vocabulary(path)
    seen: Dict[str, int] = {}
    for column, term in enumerate(terms):
        if term in seen:
            raise ConfigError(
                f"term {term!r} names columns {seen[term]} and {column}: a vocabulary holds each term once",
                file=str(path),
            )
        seen[term] = column
    return terms


def _vocabulary(path: Path) -> List[str]:
    if path.suffix.lower() != ".json":
        return read_lines(path, "column's term")
    from ...io.lines import check_data_file

    check_data_file(path)
    try:
        with open(path, encoding="utf-8-sig") as fh:
            value = json.load(fh)
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ConfigError(f"cannot read the vocabulary: {exc}", file=str(path)) from None
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return value
    if isinstance(value, dict) and all(
        isinstance(c, int) and not isinstance(c, bool) for c in value.values()
    ):
        return _columns(value, path)
    raise ConfigError("a JSON vocabulary is a list of terms or a {term: column} object", file=str(path))


def _columns(value: Dict[str, int], path: Path) -> List[str]:
    """A ``{term: column}`` vocabulary as column -> term."""
    if any(column < 0 for column in value.values()):
        term = next(t for t, c in value.items() if c < 0)
        raise ConfigError(f"vocabulary column of {term!r} is negative", file=str(path))
    width = max(value.values(), default=-1) + 1
    by_column: Dict[int, str] = {}
    for term, column in value.items():
        if column in by_column:
            raise ConfigError(
                f"terms {by_column[column]!r} and {term!r} both name column {column}", file=str(path)
            )
        by_column[column] = term
    if width > len(value):
        gap = next(c for c in range(width) if c not in by_column)
        raise ConfigError(
            f"column {gap} has no term (the columns are 0..{width - 1}, without gaps)", file=str(path)
        )
    terms = [""] * width
    for term, column in value.items():
        terms[column] = term
    return terms


def _unique_ids(ids: List[str], where: str) -> Dict[str, int]:
    row: Dict[str, int] = {}
    for i, doc_id in enumerate(ids):
        if doc_id in row:
            raise ConfigError(f"duplicate id {doc_id!r}", file=where, line=i + 1)
        row[doc_id] = i
    return row


class SparseFile:
    """One side (queries or documents) of precomputed sparse vectors, loaded on first use."""

    def __init__(self, what: str, vectors: Path, ids: Optional[Path], vocabulary: Optional[Path]):
        self.what = what
        self.path = vectors
        self.ids_path = ids
        self.vocabulary = vocabulary
        self._vectors: Optional[List[Any]] = None
        self._row: Dict[str, int] = {}

    def load(self) -> List[Any]:
        if self._vectors is None:
            if not self.path.is_file():
                raise ConfigError(f"precomputed {self.what} sparse vectors not found", file=str(self.path))
            if self.path.suffix.lower() == ".npz":
                self._vectors, self._row = self._load_npz()
            else:
                self._vectors, self._row = self._load_jsonl()
        return self._vectors

    def ids(self) -> List[str]:
        self.load()
        return list(self._row)

    def _load_jsonl(self) -> Any:
        from ...io.lines import parse_id, pick, read_jsonl

        where = str(self.path)
        ids: List[str] = []
        vectors: List[Any] = []
        for lineno, obj in read_jsonl(self.path):
            doc_id = parse_id(pick(obj, ("_id", "id"), self.path, lineno, "id"), self.path, lineno, "id")
            vector = obj.get("vector")
            if not isinstance(vector, dict):
                raise ConfigError('"vector" must be a {"term": weight} object', file=where, line=lineno)
            ids.append(doc_id)
            vectors.append(vector)
        return vectors, _unique_ids(ids, where)

    def _load_npz(self) -> Any:
        where = str(self.path)
        if self.ids_path is None or self.vocabulary is None:
            raise ConfigError(
                f"an .npz {self.what} matrix needs its id file "
                f"('{'query' if self.what == 'query' else 'document'}_ids', one id per row) and "
                f"'vocabulary' (one term per column)",
                file=where,
            )
        from ...io.lines import check_data_file

        check_data_file(self.path)
        matrix = load_csr(self.path)
        ids = read_lines(self.ids_path, "row's id")
        terms = read_vocabulary(self.vocabulary)
        if matrix.shape[0] != len(ids):
            raise ConfigError(
                f"{matrix.shape[0]} matrix rows but {len(ids)} ids in {self.ids_path}", file=where
            )
        if matrix.shape[1] != len(terms):
            raise ConfigError(
                f"vocabulary mismatch: the matrix has {matrix.shape[1]} columns but {self.vocabulary} "
                f"names {len(terms)} terms",
                file=where,
            )
        vectors = [
            {terms[c]: float(w) for c, w in zip(matrix.indices[a:b], matrix.data[a:b])}
            for a, b in zip(matrix.indptr[:-1], matrix.indptr[1:])
        ]
        return vectors, _unique_ids(ids, str(self.ids_path))

    def lookup(self, ids: Sequence[str]) -> List[Any]:
        vectors = self.load()
        missing = [str(i) for i in ids if str(i) not in self._row]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise ConfigError(
                f"no {self.what} sparse vector for {len(missing)} of {len(ids)} id(s): {shown}{more}",
                file=str(self.path),
            )
        return [vectors[self._row[str(i)]] for i in ids]


def load_csr(path: Path) -> Any:
    """A scipy CSR matrix saved with ``scipy.sparse.save_npz``."""
    try:
        import scipy.sparse as sp
    except ImportError:
        raise ConfigError(
            "reading .npz sparse vectors needs scipy: pip install pytest-retrieval[sparse]"
        ) from None
    from .npz_checks import check_npz

    check_npz(path)  # the arrays' shapes and bounds, before scipy builds on them
    try:
        matrix = sp.load_npz(path)
    except Exception as exc:
        raise ConfigError(f"not a scipy sparse .npz matrix: {exc}", file=str(path)) from None
    matrix = sp.csr_matrix(matrix)
    matrix.sum_duplicates()
    return matrix


class PrecomputedSparseEncoder:
    """Sparse vectors computed outside the test run, looked up by id; an id without a vector
    is a :class:`ConfigError` naming the file and the first missing ids. Not cached again."""

    cacheable = False

    def __init__(
        self,
        queries: Optional[Path] = None,
        query_ids: Optional[Path] = None,
        documents: Optional[Path] = None,
        document_ids: Optional[Path] = None,
        vocabulary: Optional[Path] = None,
        id: Optional[str] = None,
    ):
        if queries is None and documents is None:
            raise ConfigError(NO_SIDE)
        self.queries = SparseFile("query", queries, query_ids, vocabulary) if queries is not None else None
        self.documents = (
            SparseFile("document", documents, document_ids, vocabulary) if documents is not None else None
        )
        self._id = id

    @property
    def id(self) -> str:
        from ...io.lines import check_data_file

        if self._id is None:
            files = []
            for side in (self.documents, self.queries):
                if side is not None:
                    for path in (side.path, side.ids_path, side.vocabulary):
                        if path is not None:
                            check_data_file(path)  # missing, a folder or a FIFO: one line
                        files.append(path)
            self._id = "precomputed-sparse:" + file_digest(*files)[:16]
        return self._id

    def _side(self, which: str) -> SparseFile:
        side = self.queries if which == "query" else self.documents
        if side is None:
            key = "queries" if which == "query" else "documents"
            raise ConfigError(f"precomputed sparse encoder has no {which} vectors (set '{key}')")
        return side

    def encode_queries(self, ids: Sequence[str], texts: Sequence[str]) -> List[SparseVector]:
        return self._side("query").lookup(ids)

    def encode_documents(self, ids: Sequence[str], texts: Sequence[str]) -> List[SparseVector]:
        return self._side("document").lookup(ids)

    def all_documents(self) -> Optional[Any]:
        """(ids, vectors) of every document vector in the file (None without one): the
        documents' statistics when the index exists already and no corpus is read."""
        if self.documents is None:
            return None
        return self.documents.ids(), self.documents.load()


class PrecomputedSparseEncoderConfig(ModelConfig):
    type: Literal["precomputed"]
    queries: Optional[PathStr] = Field(
        None, description="Query vectors: .jsonl ({_id, vector}) or .npz (CSR)."
    )
    query_ids: Optional[PathStr] = Field(None, description="Query ids of the .npz rows, one per line.")
    documents: Optional[PathStr] = Field(
        None, description="Document vectors: .jsonl ({_id, vector}) or .npz (CSR)."
    )
    document_ids: Optional[PathStr] = Field(None, description="Document ids of the .npz rows, one per line.")
    vocabulary: Optional[PathStr] = Field(
        None, description="The .npz columns' terms: one per line, or a JSON {term: column} object."
    )
    id: Optional[str] = Field(None, description="Version of the vectors (default: a hash of the files).")

    @model_validator(mode="after")
    def _one_side(self) -> PrecomputedSparseEncoderConfig:
        if self.queries is None and self.documents is None:
            raise PydanticCustomError("precomputed_side", NO_SIDE)
        return self

    def build(self, base_dir: Path) -> SparseEncoder:
        def path(value: Optional[str]) -> Optional[Path]:
            return None if value is None else resolve(base_dir, value)

        return PrecomputedSparseEncoder(
            queries=path(self.queries),
            query_ids=path(self.query_ids),
            documents=path(self.documents),
            document_ids=path(self.document_ids),
            vocabulary=path(self.vocabulary),
            id=self.id,
        )
