"""The workspace summary: a file tree with each source file's top-level symbols, ranked and
clipped to a token budget.

Files that matter for the task come first: those the task mentions, those active in the agent's
state, those changed recently in git, then the files those import. Symbols come from the light
scanners in `symbols`, cached per file in `.heph/cache/repomap.json` by size and modification
time, so a warm run re-reads nothing that did not change. The result never exceeds the budget
(by the local token estimate) and says what it left out.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from hephaistus import symbols, tokens
from hephaistus.textfile import MAX_WHOLE_FILE_BYTES
from hephaistus.workspace import Workspace

CACHE_VERSION = f"1.{symbols.VERSION}"
MAX_SYMBOLS_PER_FILE = 40
TRAILER_RESERVE = 24  # characters kept for the "left out" line


@dataclass
class Focus:
    """What the summary should put first."""

    task: str = ""
    active: list[str] = field(default_factory=list)  # most recent first


@dataclass
class FileInfo:
    size: int
    mtime: int
    symbols: list[str]
    imports: list[str]


class RepoMap:
    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.cache_path = workspace.heph_dir / "cache" / "repomap.json"

    def render(self, focus: Focus, budget_tokens: int) -> str:
        # The same check as every tool's: no file outside (files() drops such links), no secret.
        files = [f for f in self.workspace.files() if not self.workspace.is_secret(f)]
        infos = self._infos(files)
        ranked = self._rank(files, infos, focus)
        chars = tokens.chars_for(budget_tokens)
        text = _render(ranked, infos, chars)
        while text and tokens.estimate(text) > budget_tokens:  # denser text than usual
            chars = int(chars * 0.9)
            text = _render(ranked, infos, chars)
        return text

    # -- symbols, cached -----------------------------------------------------------------
    def _infos(self, files: list[str]) -> dict[str, FileInfo]:
        cache = self._load_cache()
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
            self._save_cache(infos)
        return infos

    def _scan(self, rel: str, size: int, mtime: int) -> FileInfo:
        if size > MAX_WHOLE_FILE_BYTES:
            return FileInfo(size, mtime, [], [])
        try:
            text = (self.workspace.root / rel).read_bytes().decode("utf-8", "replace")
        except OSError:
            return FileInfo(size, mtime, [], [])
        imports = symbols.python_imports(text) if symbols.language_of(rel) == "python" else []
        return FileInfo(size, mtime, symbols.scan(rel, text), imports)

    def _load_cache(self) -> dict[str, list]:
        try:
            data = json.loads(self.cache_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return {}
        files = data.get("files")
        return files if isinstance(files, dict) else {}

    def _save_cache(self, infos: dict[str, FileInfo]) -> None:
        data = {
            "version": CACHE_VERSION,
            "files": {rel: [i.size, i.mtime, i.symbols, i.imports] for rel, i in infos.items()},
        }
        try:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.cache_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
            os.replace(tmp, self.cache_path)
        except OSError:
            pass  # a cache that cannot be written only costs time

    # -- ranking -------------------------------------------------------------------------
    def _rank(self, files: list[str], infos: dict[str, FileInfo], focus: Focus) -> list[str]:
        score: dict[str, float] = {}

        def boost(paths: Iterable[str], points: float) -> None:
            for rel in paths:
                score[rel] = max(score.get(rel, 0), points)

        for rel, points in _mentioned(files, focus.task).items():
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
        present = set(files)
        # Then everything else: source before the rest, shallow files before deep ones.
        return sorted(
            present, key=lambda rel: (-score.get(rel, 0), rel not in infos, rel.count("/"), rel)
        )

    def _recent_in_git(self) -> tuple[list[str], list[str]]:
        """Files changed and not committed, and files of the last five commits (paths relative
        to the workspace, which may be a subfolder of the repository)."""
        if self.workspace.git_dir() is None:
            return [], []
        from hephaistus.repository import names

        root = self.workspace.root
        uncommitted = names(root, "diff", "--name-only", "--relative", "HEAD")
        committed = names(
            root, "log", "-5", "--name-only", "--relative", "--format=", "--no-renames"
        )
        return uncommitted, committed


def _mentioned(files: Iterable[str], task: str) -> dict[str, float]:
    """Files the task names: by path (100), file name (90) or, for 4+ letters, by stem (70)."""
    if not task:
        return {}
    words = set(re.findall(r"[\w./-]+", task))
    stems = {w.lower() for w in re.findall(r"\w{4,}", task)}
    found: dict[str, float] = {}
    for rel in files:
        path = PurePosixPath(rel)
        if rel in words:
            found[rel] = 100
        elif path.name in words:
            found[rel] = 90
        elif path.stem.lower() in stems:
            found[rel] = 70
    return found


def _module_index(infos: dict[str, FileInfo]) -> dict[str, str]:
    """Dotted module names (by every suffix of the path) to Python files."""
    index: dict[str, str] = {}
    for rel in infos:
        if not rel.endswith(".py"):
            continue
        parts = list(PurePosixPath(rel).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        for start in range(len(parts)):
            index.setdefault(".".join(parts[start:]), rel)
    return index


def _resolve_imports(rel: str, imports: list[str], modules: dict[str, str]) -> list[str]:
    found = []
    package = list(PurePosixPath(rel).parent.parts)
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
