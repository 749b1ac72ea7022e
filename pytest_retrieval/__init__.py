"""pytest-retrieval: put a retrieval pipeline under a regression gate.

Importing this package must stay cheap: heavy libraries (numpy, bm25s, engine
clients, model runtimes) are imported lazily by the modules that need them.
"""

__version__ = "0.1.0"
