"""The package's structural figures, measured from its source (run by ``scripts/test``).

    python scripts/architecture_check.py            # print the figures; exit 1 when one is over its limit
    python scripts/architecture_check.py --report   # print them and always exit 0

What it measures, over ``pytest_retrieval/`` (tests, scripts and benchmarks are not counted):

- import cycles between modules: every ``import``/``from ... import`` of a package module, at any
  depth of the file (a function-level import is still a dependency), except under
  ``if TYPE_CHECKING:``; a cycle is a strongly connected component of more than one module;
- private imports across modules: ``from .x import _name`` where ``x`` is another module;
- sizes: modules over 600 lines, functions over 60 lines, classes over 300 lines;
- mypy mode: ``check_untyped_defs = true`` in ``pyproject.toml``, and ``py.typed`` shipped;
- complexity: radon's cyclomatic-complexity blocks rated C or worse, per 1,000 lines of code.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pytest_retrieval"
LIMITS = {"module_lines": 600, "function_lines": 60, "class_lines": 300, "c_blocks_per_kloc": 2.0}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(modules: dict[str, Path]) -> tuple[dict[str, set[str]], list[str]]:
    """Module -> the package modules it imports; and the private names imported across modules."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    private: list[str] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [(alias.name, None) for alias in node.names]
            else:
                source = _resolve(name, is_package, node)
                targets = []
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    if submodule in modules:
                        targets.append((submodule, None))
                    else:
                        targets.append((source, alias.name))
            for target, imported in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if not target or target == name:
                    continue
                graph[name].add(target)
                if imported and imported.startswith("_") and not imported.startswith("__"):
                    private.append(f"{name} imports {target}.{imported}")
    return graph, private


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10_000)

    def strongconnect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return found


def sizes(modules: dict[str, Path]) -> dict[str, list[str]]:
    over: dict[str, list[str]] = {"modules": [], "functions": [], "classes": []}
    for name, path in modules.items():
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > LIMITS["module_lines"]:
            over["modules"].append(f"{name}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1 if hasattr(node, "lineno") else 0
            if (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and length > LIMITS["function_lines"]
            ):
                over["functions"].append(f"{name}.{node.name}: {length} lines")
            elif isinstance(node, ast.ClassDef) and length > LIMITS["class_lines"]:
                over["classes"].append(f"{name}.{node.name}: {length} lines")
    return over


def complexity(paths: list[Path]) -> tuple[list[str], int]:
    from radon.complexity import cc_rank, cc_visit
    from radon.raw import analyze

    rated: list[str] = []
    sloc = 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        sloc += analyze(text).sloc
        for block in cc_visit(text):
            rank = cc_rank(block.complexity)
            if rank >= "C":
                rated.append(
                    f"{path.relative_to(ROOT)}:{block.lineno} {block.name} {rank} ({block.complexity})"
                )
    return rated, sloc


def mypy_mode() -> list[str]:
    problems = []
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    if not config.get("tool", {}).get("mypy", {}).get("check_untyped_defs"):
        problems.append("pyproject.toml: [tool.mypy] check_untyped_defs is not true")
    if not (PACKAGE / "py.typed").exists():
        problems.append("pytest_retrieval/py.typed is missing")
    return problems


def main(argv: list[str]) -> int:
    paths = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
    modules = {module_name(p): p for p in paths}
    graph, private = import_graph(modules)
    found_cycles = cycles(graph)
    over = sizes(modules)
    rated, sloc = complexity(paths)
    per_kloc = 1000 * len(rated) / max(sloc, 1)
    mode = mypy_mode()

    print(f"architecture: {len(modules)} modules, {sloc} lines of code")
    print(f"  import cycles: {len(found_cycles)}")
    for component in found_cycles:
        print("    " + " <-> ".join(component))
    print(f"  private imports across modules: {len(private)}")
    for line in private:
        print("    " + line)
    for kind, limit in (
        ("modules", "module_lines"),
        ("functions", "function_lines"),
        ("classes", "class_lines"),
    ):
        print(f"  {kind} over {LIMITS[limit]} lines: {len(over[kind])}")
        for line in over[kind]:
            print("    " + line)
    print(f"  radon blocks rated C or worse: {len(rated)} ({per_kloc:.1f} per 1,000 lines; limit 2)")
    for line in rated:
        print("    " + line)
    print(f"  mypy mode / py.typed: {'ok' if not mode else '; '.join(mode)}")

    failed = (
        bool(found_cycles or private or any(over.values()) or mode) or per_kloc > LIMITS["c_blocks_per_kloc"]
    )
    if failed and "--report" not in argv:
        print("architecture: over a limit (see above)")
        return 1
    print("architecture: " + ("over a limit (see above)" if failed else "every figure within its limit"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
