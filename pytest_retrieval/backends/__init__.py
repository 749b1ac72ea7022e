"""Backends answer leaf retrievers (BM25, kNN, a raw query template) behind one interface.

Composite stages (hybrid fusion, reranking) are built on top of leaf results by the
suite runner with the pure functions of ``pytest_retrieval.fusion.semantics``, so they behave the
same on every backend.
"""
