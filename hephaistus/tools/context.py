"""What a tool receives: the workspace, the limits, the run's settings, its journal of effects and
the executor that starts its processes. Nothing in it approves anything: that is the runtime's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from hephaistus.runtime.executor import Executor, LocalExecutor
from hephaistus.runtime.journal import Journal
from hephaistus.workspace import Workspace

if TYPE_CHECKING:
    from hephaistus.records.checkpoints import Checkpoints
    from hephaistus.records.snapshots import Snapshots
    from hephaistus.records.todos import Todo
    from hephaistus.textfile import TextFile
    from hephaistus.values import ToolResult
    from hephaistus.workspace.skills import Skill


Buffer = Callable[[Path], "str | None"]  # a file's text in an editor, by its real path


@dataclass
class ToolContext:
    """What every tool call of a run is given besides its arguments."""

    workspace: Workspace
    observation_limit: int = 16_000
    allow_secrets: bool = False
    checkpoints: Checkpoints | None = None  # every write is recorded here first, for undo
    commands: dict[str, str] = field(default_factory=dict)  # project commands by name
    command_sources: dict[str, str] = field(default_factory=dict)  # where each came from
    command_timeout: float = 300.0
    pass_env: tuple[str, ...] = ()  # variables (glob patterns) commands may see besides the usual
    search_seconds: float = 5.0  # time budget of one search
    executor: Executor = field(default_factory=LocalExecutor)  # starts every command
    # What this session or chat did so far (the runtime notes each call's effects), for
    # git_commit and git_status; `sessions` are the ids of that chat's sessions, whose
    # checkpoints say what each file held before heph first wrote it.
    journal: Journal = field(default_factory=Journal)
    # Pictures of the workspace around each command, so what it changes can be undone.
    snapshots: Snapshots | None = None
    read_only: bool = False  # the workspace, for what commands run (plan mode's shell)
    sessions: tuple[str, ...] = ()
    # An editor's text of a file (ACP's fs/read_text_file), unsaved changes and all; None
    # where it has none. Reads and edits take it over the disk's.
    buffer: Buffer | None = None
    skills: dict[str, Skill] = field(default_factory=dict)  # what the `skill` tool loads
    todos: Callable[[list[Todo]], None] | None = None  # hears each new todo list
    # Runs a sub-agent (engine.delegation): (this context, description, prompt, agent).
    delegate: Callable[[ToolContext, str, str, str], ToolResult] | None = None


def as_buffered(ctx: ToolContext, real: Path, found: TextFile) -> TextFile:
    """`found` (the file as read from disk) with the editor's text of it where the editor has
    one: what a read shows and an edit matches against. The disk's digest stays: a write
    must still find the disk as it was read."""
    if ctx.buffer is None:
        return found
    text = ctx.buffer(real)
    if text is None:
        return found
    return replace(found, text=text.replace("\r\n", "\n"))
