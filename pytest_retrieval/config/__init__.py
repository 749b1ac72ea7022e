"""A suite file, read and validated (the edge where YAML becomes typed objects).

- ``yamlio``: YAML with the file and line of every value, ``${VAR:-default}``, includes.
- ``schema``: the pydantic schema of a suite file (published as ``suite.schema.json``).
- ``load``: ``load_suite`` -> ``Suite`` (merged, validated, floors parsed, retriever graph ordered).
"""
