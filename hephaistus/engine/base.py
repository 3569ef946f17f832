"""What every engine takes (Run) and gives back (Outcome); the Engine protocol is in seams."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hephaistus.compaction import Compactor
from hephaistus.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED
from hephaistus.runtime.runtime import Runtime
from hephaistus.seams import EventSink, Message, Model, SessionRecorder
from hephaistus.state import AgentState
from hephaistus.tools import Registry

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


@dataclass
class Run:
    """Everything one task runs with; the engine owns none of it."""

    model: Model
    runtime: Runtime  # runs every tool call: policy, effects, journal
    session: SessionRecorder
    state: AgentState
    sink: EventSink
    messages: list[Message]  # the conversation so far; the engine appends to it
    max_steps: int
    save_state: Callable[[], None]
    compactor: Compactor
    workspace_summary: str = ""
    verify: list[str] = field(default_factory=list)  # commands to run before a final answer
    verify_retries: int = 2
    # The state as last sent to the model (AgentState.rows()), so only changes are sent again.
    sent_state: list[tuple[str, str]] | None = None

    @property
    def registry(self) -> Registry:
        return self.runtime.registry
