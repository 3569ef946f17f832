"""What a tool receives (ToolContext) and what it returns (ToolResult)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from hephaistus.workspace import Workspace

if TYPE_CHECKING:
    from hephaistus.checkpoints import Checkpoints


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    output: str
    diff: str | None = None  # the unified diff of a write, shown to the user and stored
    refused: bool = False  # a write the user (or the lack of a terminal) did not approve


@dataclass(frozen=True)
class FileChange:
    """A write a tool wants to make, as shown for approval."""

    path: str
    diff: str
    created: bool


Decision = Literal["write", "skip", "decline", "refuse"]
# "write": go ahead; "skip": dry run, show but do not write; "decline": the user said no and the
# model may try something else; "refuse": no one could approve it, so the run ends (exit 3).
Approver = Callable[[FileChange], Decision]
# (command name, the command line as shown) → "write" means: run it.
CommandApprover = Callable[[str, str], Decision]


def approve_all(change: FileChange) -> Decision:
    return "write"


def approve_any_command(name: str, shown: str) -> Decision:
    return "write"


@dataclass
class ToolContext:
    workspace: Workspace
    approve: Approver = approve_all
    observation_limit: int = 16_000
    allow_secrets: bool = False
    checkpoints: Checkpoints | None = None  # every write is recorded here first, for undo
    commands: dict[str, str] = field(default_factory=dict)  # project commands by name
    command_timeout: float = 300.0
    approve_command: CommandApprover = approve_any_command
    pass_env: tuple[str, ...] = ()  # variables (glob patterns) commands may see besides the usual
    search_seconds: float = 5.0  # time budget of one search
    command_results: dict[str, str] = field(default_factory=dict)  # name → passed / failed …
    # What the tools did this run, most recent last; AgentState and sessions read it.
    changed: list[FileChange] = field(default_factory=list)
    read: list[str] = field(default_factory=list)


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
