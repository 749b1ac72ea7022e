"""The package's version, in one place: ``pyproject.toml`` reads it when the wheel is built
(``[tool.setuptools.dynamic]``), ``pytest-retrieval --version``, the JSON report and the
baselines' fingerprint read it here. Bump it with a CHANGELOG.md entry."""

__version__ = "0.1.0"
