"""The package's imports, read from the source: no module imports one that imports it back,
directly or round a ring of others, and the layers (the package's folders) import one way: each
only the folders its `__init__` names under "May import:", and those names form no ring. The
modules left at the package root are the bottom: any layer may import them, they import none.
Type-only and function-level imports count too: each is an edge a reader must follow."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "hephaistus"


def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules `name` imports (`from package import module` is that module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            source = ".".join([*base, node.module] if node.module else base)
            source = source if node.level else node.module or ""
            inner = [f"{source}.{alias.name}" for alias in node.names]
            targets = [t for t in inner if t in known]
            targets += [source] if len(targets) < len(inner) else []
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target not in (name, "hephaistus"):
                found.add(target)
    return found


def rings(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_module_imports_one_that_imports_it_back():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert rings(graph) == []


def test_a_ring_of_imports_is_found():
    # The check itself: three modules importing one another round a ring, and one aside.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert rings(graph) == [["a", "b", "c"]]


ENTRY = "hephaistus.__main__"  # `python -m hephaistus`: the command line's other door


def layer_of(module: str) -> str:
    """The folder a module lives in (`cli`, `tools`, ...), or "" for a bottom module at the root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()) else ""


def allowed_imports() -> dict[str, set[str]]:
    """What each layer's `__init__` docstring says it may import."""
    allowed = {}
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        said = doc.partition("May import:")[2].split("\n\n")[0]
        allowed[init.parent.name] = set(re.findall(r"`(\w+)`", said))
    return allowed


def crossings(graph: dict[str, set[str]], allowed: dict[str, set[str]]) -> list[str]:
    """Every import from one layer into another that its `__init__` does not allow, and every
    import of a layer from the bottom (a root module), each named module to module."""
    found = []
    for module, targets in sorted(graph.items()):
        if module == ENTRY:
            continue
        source = layer_of(module)
        for target in sorted(targets):
            into = layer_of(target)
            if into and into != source and into not in allowed.get(source, set()):
                found.append(
                    f"{module} -> {target} ({source or 'the bottom'} may not import {into})"
                )
    return found


def test_each_layer_imports_only_the_layers_it_names():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    allowed = allowed_imports()
    assert set(allowed) == {layer_of(name) for name in known} - {""}, "a folder says nothing"
    assert crossings(graph, allowed) == []


def test_the_layers_form_no_ring():
    allowed = allowed_imports()
    assert all(set(names) <= set(allowed) for names in allowed.values()), allowed
    assert rings(allowed) == []


def test_few_modules_are_left_at_the_root():
    root = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(root) <= 12, root


def test_an_upward_import_is_named():
    # The check itself: tools may import runtime, not the other way round.
    allowed = {"tools": {"runtime"}, "runtime": set()}
    graph = {"hephaistus.runtime.a": {"hephaistus.tools.b", "hephaistus.values"}}
    found = crossings(graph, allowed)
    assert found == ["hephaistus.runtime.a -> hephaistus.tools.b (runtime may not import tools)"]
