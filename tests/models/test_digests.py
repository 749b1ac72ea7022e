"""Digests of model files and options (models/digests.py)."""

from __future__ import annotations

from pytest_retrieval.models.digests import options_tag


def test_options_tag_omits_defaults():
    assert options_tag(a=None, b="", c=False) == ""
    assert options_tag(a=1) == options_tag(a=1, b=None) != options_tag(a=2)
