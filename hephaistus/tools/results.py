"""What a tool gives back: its output for the model and the effects it had.

The loop, the agent state and the session record read a call's effects from its ToolResult (the
files it read and changed, the command it ran), never from lists on the side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class FileChange:
    """A write, as shown for approval and as made: the file, its unified diff, whether new."""

    path: str
    diff: str
    created: bool


@dataclass(frozen=True)
class CommandRun:
    """A project command that ran: its name and how it ended (passed, failed: ids, ...)."""

    name: str
    summary: str


@dataclass(frozen=True)
class CommitMade:
    """A commit git_commit made: its full id and the paths in it, as git names them."""

    sha: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class ToolResult:
    """What a tool call gave back: whether it worked, the output the model reads, its effects."""

    ok: bool
    output: str
    diff: str | None = None  # the unified diff of a write, shown to the user and stored
    # The answer to the approval the call asked for (write, skip, decline, refuse), if any.
    decision: str | None = None
    read: tuple[str, ...] = ()  # workspace files the call read
    changed: tuple[FileChange, ...] = ()  # writes the call made
    command: CommandRun | None = None  # the project command the call ran
    commit: CommitMade | None = None  # the commit the call made
    target: str | None = None  # the file the call was about (its failure is an open problem)

    @property
    def refused(self) -> bool:
        """No one could approve what the call needed (no terminal, no --yes): the run ends."""
        return self.decision == "refuse"


def clip(text: str, limit: int, *, keep: Literal["head", "tail"] = "head") -> str:
    """`text` cut to about `limit` bytes of UTF-8, saying how much was cut."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    cut = len(data) - limit
    if keep == "head":
        kept = data[:limit].decode("utf-8", "ignore")
        return f"{kept}\n[... {cut} more bytes cut; the output was {len(data)} bytes]"
    kept = data[-limit:].decode("utf-8", "ignore")
    return f"[... {cut} bytes cut from the start; the output was {len(data)} bytes]\n{kept}"
