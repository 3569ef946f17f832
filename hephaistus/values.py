"""What a tool gives back: its output for the model and the effects it had, or an effect it
has prepared (a Proposal) for the runtime to allow, ask about or refuse.

The loop, the agent state, the journal and the session record read a call's effects from its
ToolResult (the files it read and changed, the command it ran, the commit it made).
"""

from __future__ import annotations

from collections.abc import Callable
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
class CommandRequest:
    """A project command about to run, as the person is asked about it."""

    name: str  # the project command's name, e.g. test
    command_line: str  # as it will run, for the person to read
    source: str = ""  # where the command came from: "configured in .heph.toml", "detected: ..."


@dataclass(frozen=True)
class CommitRequest:
    """A commit about to be made of `paths` (named from the top of the repository)."""

    paths: tuple[str, ...]
    message: str


Request = FileChange | CommandRequest | CommitRequest  # what the person is asked about


@dataclass(frozen=True)
class Proposal:
    """An effect a tool has prepared and not had yet (a write, a command, a commit): the runtime
    allows it, asks about it or refuses it, and only then carries it out."""

    effect: str  # write | command | git | external (see runtime.permissions)
    request: Request  # what the person is shown and asked about
    carry_out: Callable[[], ToolResult]  # has the effect; never asks anyone
    untouched: str  # what stays as it was when it is not carried out: "app.py was not changed"
    name: str = ""  # the name an approval is for besides the effect: the command's
    target: str | None = None  # the file it is about
    diff: str | None = None  # a write's unified diff


@dataclass(frozen=True)
class ToolResult:
    """What a tool call gave back: whether it worked, the output the model reads, its effects."""

    ok: bool
    output: str
    diff: str | None = None  # the unified diff of a write, shown to the user and stored
    # What was decided about the call's effect, if it had one: allow (carried out), skip (a dry
    # run: shown, not done), decline (the person said no), refuse (no one could be asked: the
    # run ends), deny (the mode does not allow it).
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
