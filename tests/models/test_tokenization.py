"""Length-sorted batches under a text and a token budget (models/tokenization.py)."""

from __future__ import annotations

from pytest_retrieval.models.tokenization import length_batches


def test_length_batches_longest_first_within_both_budgets():
    lengths = [3, 10, 1, 10, 5, 2]
    batches = list(length_batches(lengths, batch_size=3, max_batch_tokens=20))
    assert batches == [([1, 3], 10), ([4, 0, 5], 5), ([2], 1)]
    assert sorted(i for b, _ in batches for i in b) == list(range(len(lengths)))
    # one text longer than the token budget still makes a batch of one
    assert list(length_batches([50], batch_size=8, max_batch_tokens=10)) == [([0], 50)]
    assert list(length_batches([], 8, 10)) == []
