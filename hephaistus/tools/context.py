"""What a tool receives: the workspace, the approver, the limits and the run's settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hephaistus.approvals import approve_all
from hephaistus.tools.results import FileChange
from hephaistus.workspace import Workspace

if TYPE_CHECKING:
    from hephaistus.checkpoints import Checkpoints
    from hephaistus.seams import Approver


@dataclass
class ToolContext:
    """What every tool call of a run is given besides its arguments."""

    workspace: Workspace
    approve: Approver = approve_all
    observation_limit: int = 16_000
    allow_secrets: bool = False
    checkpoints: Checkpoints | None = None  # every write is recorded here first, for undo
    commands: dict[str, str] = field(default_factory=dict)  # project commands by name
    command_sources: dict[str, str] = field(default_factory=dict)  # where each came from
    command_timeout: float = 300.0
    pass_env: tuple[str, ...] = ()  # variables (glob patterns) commands may see besides the usual
    search_seconds: float = 5.0  # time budget of one search
    # The writes made so far in this session or chat (the loop adds each result's), for
    # git_commit; `sessions` are the ids of that chat's sessions, whose checkpoints say what
    # each file held before heph first wrote it.
    changed: list[FileChange] = field(default_factory=list)
    sessions: tuple[str, ...] = ()
