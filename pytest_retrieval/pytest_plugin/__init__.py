"""What the pytest hooks of ``pytest_retrieval.plugin`` delegate to: the session state, items,
fixtures, options and the pytest-xdist hand-over."""
