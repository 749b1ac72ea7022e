"""What the pytest hooks of ``pytest_retrieval.plugin`` delegate to: ``options`` (every
``--retrieval-*`` option), ``session`` (the session's suites, one ``state.SuiteState`` each),
``items`` (the YAML collector and its items, ``suite_files`` what it collects), ``coverage``
(which gates got a verdict), ``fixtures`` and ``xdist`` (the hand-over)."""
