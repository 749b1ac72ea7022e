"""The one progress bar: tqdm on a terminal (or when asked), a silent stand-in otherwise."""

from __future__ import annotations

import io

import tqdm

from pytest_retrieval import progress
from pytest_retrieval.progress import NoBar, progress_bar


def test_no_bar_without_a_terminal(monkeypatch) -> None:
    monkeypatch.setattr(progress.sys, "stderr", io.StringIO())
    bar = progress_bar(10, "work")
    assert isinstance(bar, NoBar)
    bar.update(3)
    bar.set_postfix(done=3)
    bar.set_description("more work")
    bar.close()
    assert isinstance(progress_bar(10, "work", enabled=False), NoBar)


def test_enabled_bar_writes_to_stderr(monkeypatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(progress.sys, "stderr", err)
    bar = progress_bar(4, "indexing", unit="doc", enabled=True)
    assert isinstance(bar, tqdm.tqdm)
    bar.update(4)
    bar.close()
    assert "indexing" in err.getvalue()
