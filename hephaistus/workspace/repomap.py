"""The workspace summary: a file tree with each source file's top-level symbols, ranked and
clipped to a token budget.

Files that matter for the task come first: those the task names by a path or an identifier
(`core.py`, `pkg/core`, `answer()`, `StockLedger`; a rare identifier counts more than one many
files define; plain words such as "list" or "main" count for nothing), those active in the
agent's state, those changed recently in git, then the files those import. Among the rest, and
within each of those groups, a file ranks by how much other code refers to it: a PageRank over
the import graph, so the modules everything builds on come before leaf scripts and tests.

Symbols come from the light scanners in `symbols` (a test file is listed by name alone),
cached per file in `.heph/cache/repomap.json` by size and modification time, with the reference
ranks, so a warm run re-reads nothing that did not change. The result never exceeds the
budget (by the local token estimate) and says what it left out.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from hephaistus import tokens
from hephaistus.textfile import MAX_WHOLE_FILE_BYTES
from hephaistus.workspace import CONTROL, Workspace, symbols

CACHE_VERSION = f"3.{symbols.VERSION}"
MAX_SYMBOLS_PER_FILE = 40
TRAILER_RESERVE = 24  # characters kept for the "left out" line


@dataclass
class Focus:
    """What the summary should put first."""

    task: str = ""
    active: list[str] = field(default_factory=list)  # most recent first


@dataclass
class FileInfo:
    """What the map knows of one file, cached by its size and modification time: its symbols, its
    imports and the names it declares."""

    size: int
    mtime: int
    symbols: list[str]
    imports: list[str]
    names: list[str] = field(default_factory=list)  # the names the symbols declare


class RepoMap:
    """The workspace summary of one workspace, with its cache in `.heph/cache/repomap.json`."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.cache_path = workspace.heph_dir / "cache" / "repomap.json"

    @property
    def _kind(self) -> str:
        return f"repomap {self.workspace.root}"  # this workspace's cache, and no other's

    def render(self, focus: Focus, budget_tokens: int) -> str:
        """The summary for `focus`, within `budget_tokens` by the local estimate."""
        # The same check as every tool's: no file outside (files() drops such links), no secret.
        files = self.workspace.without_secrets(self.workspace.files())
        # A name with a line break or an escape in it would read as two entries, or act on a
        # terminal; the tools refuse such names anyway.
        files = [rel for rel in files if not CONTROL.search(rel)]
        infos, references = self._infos(files)
        ranked = self._rank(files, infos, references, focus)
        chars = tokens.chars_for(budget_tokens)
        text = _render(ranked, infos, chars)
        while text and tokens.estimate(text) > budget_tokens:  # denser text than usual
            chars = int(chars * 0.9)
            text = _render(ranked, infos, chars)
        return text

    # -- symbols, cached -----------------------------------------------------------------
    def _infos(self, files: list[str]) -> tuple[dict[str, FileInfo], dict[str, float]]:
        """Each source file's symbols, and how much other code refers to each (cached)."""
        cache, references = self._load_cache()
        infos: dict[str, FileInfo] = {}
        dirty = False
        for rel in files:
            if symbols.language_of(rel) is None:
                continue
            try:
                stat = os.stat(self.workspace.root / rel)
            except OSError:
                continue
            cached = cache.get(rel)
            if cached and cached[0] == stat.st_size and cached[1] == stat.st_mtime_ns:
                infos[rel] = FileInfo(*cached)
                continue
            infos[rel] = self._scan(rel, stat.st_size, stat.st_mtime_ns)
            dirty = True
        if dirty or len(cache) != len(infos):
            references = reference_ranks(infos)
            self._save_cache(infos, references)
        return infos, references

    def _scan(self, rel: str, size: int, mtime: int) -> FileInfo:
        if size > MAX_WHOLE_FILE_BYTES:
            return FileInfo(size, mtime, [], [])
        try:
            text = (self.workspace.root / rel).read_bytes().decode("utf-8", "replace")
        except OSError:
            return FileInfo(size, mtime, [], [])
        imports = symbols.python_imports(text) if symbols.language_of(rel) == "python" else []
        found = symbols.scan(rel, text)
        names = [symbols.name_of(line) for line in found]
        # A test file is listed by name only: its test names rarely say where code lives, and
        # the model reads the tests it works on. Its names still count when the task says one.
        shown = [] if symbols.is_test_file(rel) else found
        return FileInfo(size, mtime, shown, imports, names)

    def _load_cache(self) -> tuple[dict[str, list], dict[str, float]]:
        from hephaistus.textfile import read_real
        from hephaistus.workspace.provenance import unseal

        try:
            sealed = unseal(self._kind, read_real(self.cache_path))
            data = json.loads(sealed) if sealed is not None else None
        except (OSError, ValueError):
            return {}, {}
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return {}, {}
        files, references = data.get("files"), data.get("references")
        if not isinstance(files, dict) or not isinstance(references, dict):
            return {}, {}
        return files, references

    def _save_cache(self, infos: dict[str, FileInfo], references: dict[str, float]) -> None:
        data = {
            "version": CACHE_VERSION,
            "files": {
                rel: [i.size, i.mtime, i.symbols, i.imports, i.names] for rel, i in infos.items()
            },
            "references": references,
        }
        from hephaistus.textfile import atomic_write
        from hephaistus.workspace.provenance import seal

        encoded = json.dumps(data, separators=(",", ":")).encode("utf-8", "surrogateescape")
        try:  # renamed over the file: a link planted in its place is replaced, never followed
            atomic_write(
                self.cache_path, seal(self._kind, encoded), temp_dir=self.workspace.temp_dir
            )
        except OSError:
            pass  # a cache that cannot be written only costs time

    # -- ranking -------------------------------------------------------------------------
    def _rank(
        self,
        files: list[str],
        infos: dict[str, FileInfo],
        references: dict[str, float],
        focus: Focus,
    ) -> list[str]:
        score: dict[str, float] = {}

        def boost(paths: Iterable[str], points: float) -> None:
            for rel in paths:
                score[rel] = max(score.get(rel, 0), points)

        for rel, points in _mentioned(files, infos, focus.task).items():
            boost([rel], points)
        for position, rel in enumerate(focus.active):
            boost([rel], 80 - min(position, 10))
        uncommitted, committed = self._recent_in_git()
        boost(committed, 30)
        boost(uncommitted, 45)
        # What the files in focus import matters next.
        modules = _module_index(infos)
        in_focus = [rel for rel, points in score.items() if points >= 60 and rel in infos]
        boost(
            (m for rel in in_focus for m in _resolve_imports(rel, infos[rel].imports, modules)), 20
        )
        # Within a group, and for everything else, what other code refers to comes first (up
        # to 10 points, less than any boost), then source before the rest, shallow before deep.
        return sorted(
            set(files),
            key=lambda rel: (
                -(score.get(rel, 0) + references.get(rel, 0)),
                rel not in infos,
                rel.count("/"),
                rel,
            ),
        )

    def _recent_in_git(self) -> tuple[list[str], list[str]]:
        """Files changed and not committed, and files of the last five commits (paths relative
        to the workspace, which may be a subfolder of the repository)."""
        if self.workspace.git_dir() is None:
            return [], []
        from hephaistus.runtime.gitrun import names

        root = self.workspace.root
        uncommitted = names(root, "diff", "--name-only", "--relative", "HEAD")
        committed = names(
            root, "log", "-5", "--name-only", "--relative", "--format=", "--no-renames"
        )
        return uncommitted, committed


# How a task names code: a path (`pkg/core.py`, `core.py`, `pkg/core`) or an identifier: a call
# (`answer()`), CamelCase, snake_case, or anything in backticks (dotted too). Words are cut out
# with one character class and classified with plain string tests, so time stays linear in the
# task's length (a pasted log or blob must not stall the map); longer "words" name no code.
_WORD = re.compile(r"[\w./`()-]+")
_FILE_NAME = re.compile(r"[\w-]+\.[A-Za-z]\w{0,9}")
MAX_WORD = 200


def code_words(task: str) -> tuple[set[str], set[str]]:
    """(paths, identifiers) the task names; the last part of a dotted identifier counts too."""
    paths: set[str] = set()
    names: set[str] = set()
    for word in _WORD.findall(task):
        if len(word) > MAX_WORD:
            continue
        quoted = len(word) > 2 and word[0] == "`" and word.rstrip(".,")[-1] == "`"
        word = word.strip("`.-")
        called = word.endswith("()")
        word = word.strip("()")
        if "/" in word or _FILE_NAME.fullmatch(word):
            paths.add(word.strip("./-"))
        elif quoted or called or _camel_or_snake(word):
            names.add(word)
            names.update(part for part in word.split(".") if part)
    return paths, names


def _camel_or_snake(word: str) -> bool:
    if not word.isidentifier():
        return False
    if "_" in word.strip("_"):
        return True
    return any(
        (a.islower() or a.isdigit()) and b.isupper() for a, b in zip(word, word[1:], strict=False)
    )


def _mentioned(files: Iterable[str], infos: dict[str, FileInfo], task: str) -> dict[str, float]:
    """Files the task names: by path (100), file name or path without suffix (90), or by an
    identifier they declare (60-85: the fewer files declare it, the more it says)."""
    if not task:
        return {}
    paths, names = code_words(task)
    found: dict[str, float] = {}
    for rel in files:
        name, bare = rel.rpartition("/")[2], _without_suffix(rel)
        if rel in paths:
            found[rel] = 100
        elif name in paths or any(bare == p or bare.endswith("/" + p) for p in paths):
            found[rel] = 90
        elif bare.rpartition("/")[2] in names:
            found[rel] = 70
    if names:
        declared: dict[str, list[str]] = {}
        for rel, info in infos.items():
            for name in names.intersection(info.names):
                declared.setdefault(name, []).append(rel)
        for where in declared.values():
            points = 60 + 25 / len(where)
            for rel in where:
                found[rel] = max(found.get(rel, 0), points)
    return found


def reference_ranks(infos: dict[str, FileInfo], rounds: int = 20) -> dict[str, float]:
    """How much other code refers to each file, 0-10: a PageRank over the import graph (a file
    passes its rank to the files it imports), scaled so the most referred-to file has 10.
    Only files that something imports are listed."""
    modules = _module_index(infos)
    edges = {
        rel: sorted(set(_resolve_imports(rel, info.imports, modules)) - {rel})
        for rel, info in infos.items()
        if info.imports
    }
    targets = {target for out in edges.values() for target in out}
    if not targets:
        return {}
    nodes = set(infos)
    damping, base = 0.85, 0.15 / len(nodes)
    rank = dict.fromkeys(nodes, 1 / len(nodes))
    for _ in range(rounds):
        incoming = dict.fromkeys(targets, 0.0)
        for rel, out in edges.items():
            if out:
                share = rank[rel] / len(out)
                for target in out:
                    incoming[target] += share
        rank = {rel: base + damping * incoming.get(rel, 0.0) for rel in nodes}
    top = max(rank[t] for t in targets)
    # Logarithmic, so a file many import does not drown one some import.
    scale = 10 / math.log1p(top / base)
    return {t: round(math.log1p(rank[t] / base) * scale, 3) for t in targets}


def _without_suffix(rel: str) -> str:
    """`pkg/core.py` → `pkg/core` (strings, not Paths: this runs for every file)."""
    folder, _, name = rel.rpartition("/")
    stem, dot, _ = name.rpartition(".")
    if not dot or not stem:  # no suffix, or a dot file such as .env
        return rel
    return f"{folder}/{stem}" if folder else stem


def _module_index(infos: dict[str, FileInfo]) -> dict[str, str]:
    """Dotted module names to Python files: the whole path, and the path below any folder that
    is not a package (`src/pkg/core.py` is `pkg.core`), never a name inside a package (so
    `import operator` is not `pkg/operator.py`)."""
    packages = {rel.rpartition("/")[0] for rel in infos if rel.endswith("/__init__.py")}
    index: dict[str, str] = {}
    for rel in infos:
        if not rel.endswith(".py"):
            continue
        parts = _without_suffix(rel).split("/")
        folders = ["/".join(parts[:start]) for start in range(len(parts))]
        if parts[-1] == "__init__":
            parts.pop()
        for start in range(len(parts)):
            if start == 0 or folders[start] not in packages:
                index.setdefault(".".join(parts[start:]), rel)
    return index


def _resolve_imports(rel: str, imports: list[str], modules: dict[str, str]) -> list[str]:
    found = []
    package = rel.split("/")[:-1]
    for name in imports:
        if name.startswith("."):
            depth = len(name) - len(name.lstrip("."))
            base = package[: len(package) - depth + 1] if depth > 1 else package
            name = ".".join([*base, name.lstrip(".")]).strip(".")
        while name:
            if name in modules:
                found.append(modules[name])
                break
            name = name.rpartition(".")[0]
    return found


def _render(ranked: list[str], infos: dict[str, FileInfo], budget_chars: int) -> str:
    """Files in rank order, with symbols while they fit, then names alone, then a count."""
    if budget_chars <= TRAILER_RESERVE:
        return ""
    room = budget_chars - TRAILER_RESERVE
    lines: list[str] = []
    used = 0
    shown_symbols = 0
    index = 0
    for index, rel in enumerate(ranked):  # noqa: B007 - index is read after the loop
        block = [rel]
        info = infos.get(rel)
        if info and info.symbols:
            block += ["  " + s for s in info.symbols[:MAX_SYMBOLS_PER_FILE]]
        cost = sum(len(line) + 1 for line in block)
        if used + cost > room:
            cost = len(rel) + 1
            block = [rel]
            if used + cost > room:
                break
        lines += block
        used += cost
        shown_symbols += len(block) - 1
    else:
        index = len(ranked)
    total_symbols = sum(len(i.symbols) for i in infos.values())
    left_files, left_symbols = len(ranked) - index, total_symbols - shown_symbols
    if left_files or left_symbols:
        lines.append(f"[… {left_files} files, {left_symbols} symbols left out]")
    text = "\n".join(lines)
    while len(text) > budget_chars and lines:  # the trailer is longer than reserved: make room
        lines.pop(-2 if len(lines) > 1 else -1)
        text = "\n".join(lines)
    return text
