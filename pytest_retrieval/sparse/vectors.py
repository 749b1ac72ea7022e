"""Checking learned sparse vectors ({term: weight}): every problem is one ConfigError line
naming the source, the id and the term. Terms are text (a callable's token ids are refused,
never turned into the text of a number). Weights must be finite numbers (NaN, infinities and
integers too large for a float refused, ``io.numeric``) and >= 0 (SPLADE's
``log(1 + relu(x))`` never makes a negative one; Elasticsearch's ``sparse_vector`` and
``rank_features`` refuse negative values too). A zero weight is the same as an absent term
and is dropped."""

from __future__ import annotations

import numbers
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import ConfigError
from ..io.numeric import external_float, value_text

Vector = Dict[str, float]


def check_vectors(
    ids: Sequence[str], vectors: Sequence[object], what: str, source: Optional[str] = None
) -> Tuple[List[Vector], int]:
    """(the vectors as {str term: float weight > 0}, how many are empty). ``what`` names the
    side in messages ("document", "query"); ``source`` the file or model."""
    where = f" ({source})" if source else ""
    if len(ids) != len(vectors):
        raise ConfigError(f"{len(vectors)} {what} sparse vectors for {len(ids)} ids{where}")
    out: List[Vector] = []
    empty = 0
    for doc_id, vector in zip(ids, vectors):
        clean = _clean(doc_id, vector, what, where)
        empty += not clean
        out.append(clean)
    return out, empty


def _clean(doc_id: str, vector: object, what: str, where: str) -> Vector:
    if not isinstance(vector, Mapping):
        raise ConfigError(
            f"{what} {doc_id!r}: a sparse vector is a {{term: weight}} mapping, got "
            f"{type(vector).__name__}{where}"
        )
    clean: Vector = {}
    for term, weight in vector.items():
        if not isinstance(term, str):
            raise ConfigError(
                f"{what} {doc_id!r}: term {value_text(term)} is a {type(term).__name__}, not text (a "
                f"token id is not a term: map it through the vocabulary){where}"
            )
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real):
            raise ConfigError(
                f"{what} {doc_id!r}: term {term!r} has weight {value_text(weight)}, not a number{where}"
            )
        try:
            value = external_float(weight)
        except ValueError as exc:
            raise ConfigError(
                f"{what} {doc_id!r}: term {term!r} has a non-finite weight {value_text(weight)} ({exc}){where}"
            ) from None
        if value < 0:
            raise ConfigError(
                f"{what} {doc_id!r}: term {term!r} has a negative weight {value!r} (learned sparse "
                f"weights are >= 0; the engines refuse negative ones too){where}"
            )
        if value > 0:
            clean[term] = value
    return clean


def vocabulary_mismatch(query_vectors: Sequence[Vector], doc_df: Mapping[str, int]) -> Optional[str]:
    """A message when the queries' terms and the documents' do not come from one vocabulary:
    more than half of the non-empty queries have no term that any document has (token ids
    against words, another model's vocabulary...); None otherwise."""
    non_empty = [v for v in query_vectors if v]
    if not non_empty or not doc_df:
        return None
    disjoint = [v for v in non_empty if not any(t in doc_df for t in v)]
    if len(disjoint) * 2 <= len(non_empty):
        return None
    example = next(iter(disjoint[0]))
    doc_example = next(iter(doc_df))
    return (
        f"{len(disjoint)} of {len(non_empty)} queries share no term with any document: the query and "
        f"document vectors use different vocabularies (e.g. query term {example!r}, document term "
        f"{doc_example!r})"
    )
