"""The nouns the parts pass each other, in one bottom module that imports none of them: the
conversation's messages, the model's replies (an Action or a Final) and what they cost, how a
task ended (Outcome); and what a tool gives back: its output for the model and the effects it
had, or an effect it has prepared (a Proposal) for the runtime to allow, ask about or refuse.

The loop, the agent state, the journal and the session record read a call's effects from its
ToolResult (the files it read and changed, the command it ran, the commit it made).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from hephaistus.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED

# -- the conversation: messages, the model's replies, what they cost, how a task ended --

Message = dict[str, str]  # {"role": ..., "content": ...}, the Chat Completions wire shape


@dataclass(frozen=True)
class Usage:
    """The tokens one reply (or a sum of replies) cost: sent in the prompt, and generated."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False  # the server sent no counts: these are heph's estimate

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.estimated or other.estimated,
        )

    def to_dict(self) -> dict[str, Any]:
        """The counts as a session file and `--json` write them; `estimated` only when true."""
        counts: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }
        return {**counts, "estimated": True} if self.estimated else counts


@dataclass(frozen=True)
class ModelReply:
    """One reply of a chat model: its text, what it cost, and how it came."""

    text: str
    usage: Usage
    attempts: int = 1  # how many HTTP requests the reply took (retries included)
    cut_off: bool = False  # the reply stopped at the reply limit (finish_reason "length")
    constrained: bool = False  # the request carried the step's schema (see steps)


@dataclass(frozen=True)
class Action:
    """A reply that asks for one tool call: the tool, its arguments, and the model's thought and
    reason for it."""

    thought: str
    tool: str
    args: dict[str, Any]
    reason: str = ""

    @property
    def key(self) -> str:
        """Identity of the call, for loop detection."""
        return self.tool + json.dumps(self.args, sort_keys=True)


@dataclass(frozen=True)
class Final:
    """A reply that ends the task: the answer for the person, and the model's last thought."""

    thought: str
    message: str


Reply = Action | Final


EXIT_CODES = {
    "answered": EXIT_OK,
    "failed": EXIT_FAILED,
    "refused": EXIT_REFUSED,
    "interrupted": EXIT_INTERRUPTED,
}


@dataclass(frozen=True)
class Outcome:
    """How a task ended, and the message that says so; the status decides the exit code."""

    status: str  # answered | failed | refused | interrupted
    message: str

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]


# -- tools: what they change, propose and return ------------------------------------


@dataclass(frozen=True)
class FileChange:
    """A write, as shown for approval and as made: the file, its unified diff, whether new,
    deleted, or moved here from another path."""

    path: str
    diff: str
    created: bool
    deleted: bool = False
    moved_from: str | None = None  # a move: the file's old path (deleted in the same call)
    # The whole text before and after, where the writing tool knew them (an editor shows the
    # change from them: ACP's diff content).
    old_text: str | None = field(default=None, repr=False, compare=False)
    new_text: str | None = field(default=None, repr=False, compare=False)

    def describe(self) -> str:
        """What the write does, in words: "create a.py", "move a.py to b.py"."""
        if self.moved_from:
            return f"move {self.moved_from} to {self.path}"
        verb = "delete" if self.deleted else "create" if self.created else "change"
        return f"{verb} {self.path}"


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


@dataclass(frozen=True)
class ToolCallRequest:
    """A call of a third-party (MCP) tool about to be made: the server, the tool, and the
    arguments exactly as they will be sent (JSON)."""

    server: str
    tool: str
    arguments: str

    def describe(self) -> str:
        """What the call does, in words."""
        return f"call {self.tool} of the MCP server {self.server} with {self.arguments}"


Request = FileChange | CommandRequest | CommitRequest | ToolCallRequest  # what is asked about


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


def clip(text: str, limit: int, *, keep: Literal["head", "tail"] = "head", total: int = 0) -> str:
    """`text` cut to about `limit` bytes of UTF-8, saying how much was cut; `total`: the
    size of the whole it is the end of, when more came before it (a command's output)."""
    data = text.encode("utf-8")
    whole = max(total, len(data))
    if whole <= limit:
        return text
    if keep == "head":
        kept = data[:limit].decode("utf-8", "ignore")
        return f"{kept}\n[... {whole - limit} more bytes cut; the output was {whole} bytes]"
    end = data[-limit:]
    cut = whole - len(end)
    kept = end.decode("utf-8", "ignore")
    return f"[... {cut} bytes cut from the start; the output was {whole} bytes]\n{kept}"
