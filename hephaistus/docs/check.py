"""The offline check: public code without a docstring, and docstrings whose documented
parameters no longer match the signature. No model, no network, the same answer every time.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path, PurePosixPath

from hephaistus.settings.config import DocsConfig
from hephaistus.tools.docstrings import documented
from hephaistus.workspace.symbols import is_test_file

PARALLEL_FROM = 200  # files; fewer are faster in one process
MODULE = "<module>"  # the name a module's own docstring goes by
_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))  # try/except* is Python 3.11's


@dataclass(frozen=True)
class Problem:
    """One thing the check found: where it is, what it is (qualified as `Class.method`), and why."""

    path: str
    line: int
    name: str  # qualified: Class.method
    kind: str  # module | class | function | method
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.name}: {self.reason}"

    def to_dict(self) -> dict[str, object]:
        """The problem's fields, as `--json` lists them."""
        return asdict(self)

    @property
    def missing(self) -> bool:
        return self.reason == "missing docstring"

    @property
    def unreadable(self) -> bool:
        return self.kind == "file"


@dataclass(frozen=True)
class Target:
    """A node to document: where it is and what it is. `key` tells apart definitions of the same
    name (`f`, then `f#2` for the fallback `def f` after an optional import)."""

    name: str
    kind: str
    node: ast.AST
    key: str = ""

    @property
    def line(self) -> int:
        return getattr(self.node, "lineno", 1)


def wanted(rel: str, config: DocsConfig) -> bool:
    """Whether the check looks at file `rel`: Python, not a test (unless tests are asked for),
    and matching none of the `ignore` patterns."""
    if not rel.endswith(".py"):
        return False
    if config.skip_tests and is_test_file(rel):
        return False
    return not any(fnmatch.fnmatch(rel, pattern) for pattern in config.ignore)


def check_files(root: Path, files: list[str], config: DocsConfig) -> list[Problem]:
    """Problems in `files` (workspace-relative), in file order; big sets use both cores."""
    jobs = [(str(root), rel, config) for rel in files if wanted(rel, config)]
    if len(jobs) >= PARALLEL_FROM and (os.cpu_count() or 1) > 1:
        with ProcessPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            results = list(pool.map(_check_job, jobs, chunksize=32))
    else:
        results = [_check_job(job) for job in jobs]
    return [problem for found in results for problem in found]


def _check_job(job: tuple[str, str, DocsConfig]) -> list[Problem]:
    root, rel, config = job
    try:
        tree = parse((Path(root) / rel).read_bytes())
    except Unreadable as error:
        return [Problem(rel, error.line, MODULE, "file", str(error))]
    return check_tree(rel, tree, config)


class Unreadable(ValueError):
    """A file that cannot be read or parsed: reported, as ruff does, never passed silently."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.line = line


# Python 3.11's parser keeps its recursion depth in shared state: two threads parsing at once
# (heph docs --fix asks about several files at once) can fail with "AST constructor recursion
# depth mismatch". Parsing is CPU work under the GIL anyway: one at a time costs nothing.
PARSING = threading.Lock()


def parse_tree(source: bytes | str) -> ast.Module:
    """`ast.parse`, one thread at a time (see PARSING)."""
    with PARSING:
        return ast.parse(source)


def parse(source: bytes | str) -> ast.Module:
    """The module's tree, or Unreadable (with its line) when Python cannot parse the source."""
    try:
        return parse_tree(source)
    except SyntaxError as error:
        raise Unreadable(f"cannot parse: {error.msg}", error.lineno or 1) from None
    except ValueError as error:  # null bytes, an undecodable file
        raise Unreadable(f"cannot parse: {error}") from None
    except (MemoryError, RecursionError):  # nesting deeper than the parser's stack
        raise Unreadable("cannot parse: nested too deeply for Python's parser") from None


def check_tree(rel: str, tree: ast.Module, config: DocsConfig) -> list[Problem]:
    """The problems of one parsed file, in source order."""
    problems = []
    for target in targets(rel, tree, config):
        reason = _problem(target, config)
        if reason:
            problems.append(Problem(rel, target.line, target.name, target.kind, reason))
    return problems


def targets(rel: str, tree: ast.Module, config: DocsConfig) -> list[Target]:
    """The module, its public classes and functions, and their public methods, also those
    inside top-level `if`/`try`/`with` blocks (an optional import's fallback definition)."""
    found = []
    module_name = PurePosixPath(rel).stem
    if not _private(module_name, config) or module_name == "__init__":
        found.append(Target(MODULE, "module", tree))
    for node in _definitions(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not _private(node.name, config) and not _skipped_function(node, config):
                found.append(Target(node.name, "function", node))
        elif isinstance(node, ast.ClassDef) and not _private(node.name, config):
            found.append(Target(node.name, "class", node))
            for item in _definitions(node.body):
                if (
                    isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and _public_method(item.name, config)
                    and not _skipped_function(item, config)
                ):
                    found.append(Target(f"{node.name}.{item.name}", "method", item))
    return _keyed(found)


def _definitions(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of `body`, and those of the blocks of its `if`, `try` and `with`
    statements, in source order."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _definitions([*node.body, *node.orelse])
        elif isinstance(node, _TRY):
            handlers = [statement for handler in node.handlers for statement in handler.body]
            yield from _definitions([*node.body, *handlers, *node.orelse, *node.finalbody])
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            yield from _definitions(node.body)
        else:
            yield node


def _keyed(found: list[Target]) -> list[Target]:
    seen: dict[str, int] = {}
    keyed = []
    for target in found:
        seen[target.name] = seen.get(target.name, 0) + 1
        count = seen[target.name]
        keyed.append(replace(target, key=target.name if count == 1 else f"{target.name}#{count}"))
    return keyed


def signature_params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The parameters a docstring should document: all but `self` and `cls`, with `*args` and
    `**kwargs` by their bare names."""
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if args.vararg:
        names.append(args.vararg.arg)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return [n for n in names if n not in ("self", "cls")]


def _problem(target: Target, config: DocsConfig) -> str | None:
    node = target.node
    docstring = ast.get_docstring(node, clean=True)  # type: ignore[arg-type]
    if isinstance(node, ast.Module):
        # An empty module (say, a bare __init__.py) has nothing to document.
        return "missing docstring" if docstring is None and node.body else None
    if docstring is None:
        if target.kind == "method" and target.name.endswith(".__init__"):
            return None  # the class docstring usually documents the constructor
        return "missing docstring"
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    found = documented(docstring)
    if found is None:
        return None  # no parameter section: nothing to compare
    actual = signature_params(node)
    gone = [name for name in found.params if name not in actual]
    if gone:
        listed = ", ".join(f"'{name}'" for name in gone)
        return f"docstring documents {listed}, not in the signature"
    # Keyword sections (`Keyword Args:`) document what **kwargs takes, so they cover it.
    covered = {*found.params, *found.keywords}
    if found.keywords and node.args.kwarg:
        covered.add(node.args.kwarg.arg)
    undocumented = [name for name in actual if name not in covered]
    if undocumented:
        listed = ", ".join(f"'{name}'" for name in undocumented)
        return f"parameter {listed} not documented"
    return None


def _private(name: str, config: DocsConfig) -> bool:
    return name.startswith("_") and not config.include_private


def _public_method(name: str, config: DocsConfig) -> bool:
    if name == "__init__":
        return True
    if name.startswith("__") and name.endswith("__"):
        return False  # dunder methods document themselves
    return not _private(name, config)


def _skipped_function(node: ast.FunctionDef | ast.AsyncFunctionDef, config: DocsConfig) -> bool:
    decorators = {_decorator_name(d) for d in node.decorator_list}
    if decorators & {"overload", "setter", "deleter"}:
        return True  # a property is documented once, on its getter (as ruff does)
    body = node.body
    if "property" in decorators and len(body) == 1 and isinstance(body[0], ast.Return):
        return True  # a trivial property: its name says it
    if config.min_body_lines:
        first = body[0].lineno
        last = max(getattr(n, "end_lineno", first) or first for n in body)
        return last - first + 1 < config.min_body_lines
    return False


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""
