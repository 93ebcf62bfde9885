"""The package's layout rules (docs/design.md, "Layout" and "The dependency rule"): no
import cycle, imports that run one way between layers, few modules at the top level and
none too long to read.

Every import is counted: at module level, inside functions and under ``TYPE_CHECKING``
(a cycle there is still a cycle for a reader), and the lazy imports of the package's
``__init__`` (written as module names in strings).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "dgan"

# Lowest first. A module may import from its own unit and from units of lower layers only.
LAYERS = [
    {"errors", "version"},
    {"config"},
    {"precision", "noise", "records", "datasets", "series", "spectrum"},
    {"tabular", "encoding"},
    {"networks"},
    {"privacy"},
    {"train", "metrics"},
    {"storage"},
    {"sampling", "prepare"},
    {"planning"},
    {"model"},
    {"report"},
    {"cli"},
    {"__main__", "__init__"},
]
MAX_TOP_LEVEL_MODULES = 15
MAX_LINES = 500


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every dgan module ``name`` imports (`from x import y` counts x, and x.y if a module)."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                base = ".".join(anchor[: len(anchor) - node.level + 1] + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value:
            targets = [node.value]  # lazy imports by name ("dgan.model"), not the word "dgan"
        found.update(t for t in targets if t in known and t != name)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def _unit(name: str) -> str:
    parts = name.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def _layer(name: str) -> int:
    unit = _unit(name)
    return next(i for i, layer in enumerate(LAYERS) if unit in layer)


def test_no_import_cycle_inside_the_package():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_imports_run_one_way_between_layers():
    """cli -> model -> (planning, prepare, sampling) -> subpackages -> networks, precision
    -> config -> errors: nothing imports upwards, so no lower layer knows the facade."""
    graph = _graph()
    assert all(any(_unit(m) in layer for layer in LAYERS) for m in graph), "unplaced module"
    upward = [
        f"{module} imports {target}"
        for module, targets in graph.items()
        for target in targets
        if _unit(target) != _unit(module) and _layer(target) >= _layer(module)
    ]
    assert upward == []


def test_the_top_level_is_small_and_no_module_is_too_long():
    top = list(PACKAGE.glob("*.py"))  # modules beside the subpackages
    assert len(top) <= MAX_TOP_LEVEL_MODULES, sorted(p.name for p in top)
    long = {
        _module_name(p): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
