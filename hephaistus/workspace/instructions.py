"""The project's own instructions for coding agents: `AGENTS.md` (the root's, and those of the
folders on the way to the files in play, nearest first), else `CLAUDE.md` or Aider's
`CONVENTIONS.md` in the same folder; or the files `.heph.toml` names (`instructions = [...]`).

They follow the system prompt, read afresh for every task, bounded in size (what was cut is
said, to the model and with -v). Every file passes the same containment and secret checks as
the tools' paths, so a link cannot bring in a file from outside the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from hephaistus.textfile import NotTextError, decode, read_real
from hephaistus.workspace import PathError, Workspace

FILE_NAMES = ("AGENTS.md", "CLAUDE.md", "CONVENTIONS.md")  # the first one a folder has
LIMIT_CHARS = 12_000  # all files together (about 3,000 tokens)
READ_BYTES = 4 * LIMIT_CHARS + 4  # of one file: more than fits, never a whole huge file


@dataclass(frozen=True)
class Source:
    """One instructions file: its size, how much of it was cut, or why it was not read."""

    path: str
    chars: int = 0  # of the file
    cut: int = 0  # characters left out for the size bound
    problem: str = ""  # why it was not read (a named file only)

    def describe(self) -> str:
        """The file as `-v` and /state name it: its size, what was cut, or why it was not read."""
        if self.problem:
            return f"{self.path} (not read: {self.problem})"
        if self.cut:
            return f"{self.path} ({self.cut:,} of {self.chars:,} characters cut)"
        return f"{self.path} ({self.chars:,} characters)"


@dataclass
class Instructions:
    """The instructions files' text for the system prompt, and the files it came from."""

    text: str = ""  # for the system prompt; empty when there are none
    sources: list[Source] = field(default_factory=list)

    def describe(self) -> str:
        """The files, as `-v` and /state list them; "none" when there are none."""
        return ", ".join(source.describe() for source in self.sources) or "none"


def load(workspace: Workspace, named: tuple[str, ...], in_play: list[str]) -> Instructions:
    """The instructions for a task touching `in_play` (workspace-relative files or folders)."""
    paths = list(named) if named else _found(workspace, in_play)
    sections: list[str] = []
    sources: list[Source] = []
    room = LIMIT_CHARS
    for path in paths:
        try:
            rel, real = workspace.check(path)
            text, size = _head(real, rel)
        except (PathError, OSError, NotTextError) as error:
            if named:  # asked for by name: say why it is missing
                sources.append(Source(path, problem=_reason(error)))
            continue
        text = text.strip()
        size = len(text) if size is None else size
        kept = text[:room]
        cut = size - len(kept)
        if cut:
            kept += f"\n[... {cut:,} more characters of {rel} cut]"
        room -= len(kept)
        sources.append(Source(rel, size, cut))
        sections.append(f"## {rel}\n{kept}")
    if not sections:
        return Instructions("", sources)
    header = "Project instructions (from the project's files; follow them):"
    return Instructions("\n\n".join([header, *sections]), sources)


def _found(workspace: Workspace, in_play: list[str]) -> list[str]:
    """The instruction file of each folder from the files in play up to the root, nearest
    first, each folder once."""
    folders: list[str] = []
    for rel in in_play:
        try:
            real = workspace.resolve(rel)
        except PathError:
            continue
        path = PurePosixPath(workspace.relative(real))
        chain = [path, *path.parents] if real.is_dir() else list(path.parents)
        folders += [str(folder) for folder in chain if str(folder) != "."]
    ordered = sorted(dict.fromkeys(folders), key=lambda f: -f.count("/"))  # deepest first
    found = []
    for folder in [*ordered, "."]:
        for name in FILE_NAMES:
            rel = name if folder == "." else f"{folder}/{name}"
            if (workspace.root / rel).is_file():
                found.append(rel)
                break
    return found


def _head(real: Path, rel: str) -> tuple[str, int | None]:
    """The file's text, as much as could be kept (a huge file is not read whole), and, when it
    was not read whole, its size in bytes."""
    size = real.stat().st_size
    data = read_real(real, READ_BYTES)
    if len(data) >= size:
        return decode(data, rel).text, None
    return decode(_without_cut_character(data), rel).text, size


def _without_cut_character(data: bytes) -> bytes:
    """`data` less the bytes of a character the read cut in two."""
    for cut in range(min(4, len(data)) + 1):
        try:
            data[: len(data) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return data[: len(data) - cut]
    return data  # not UTF-8 at all: decode() says so


def _reason(error: Exception) -> str:
    if isinstance(error, FileNotFoundError):
        return "no such file"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error)
