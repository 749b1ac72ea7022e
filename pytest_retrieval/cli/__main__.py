"""``python -m pytest_retrieval.cli``: the ``pytest-retrieval`` command."""

import sys

from .app import main

sys.exit(main())
