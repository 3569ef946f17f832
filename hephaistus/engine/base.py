"""The Engine protocol, and what every engine takes (Run); what it gives back (Outcome) is in
values."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from hephaistus.engine.runner import Runtime
from hephaistus.eventsink import EventSink
from hephaistus.model.base import Model
from hephaistus.model.compaction import Compactor
from hephaistus.model.steps import StepSchema
from hephaistus.records.session import SessionRecorder
from hephaistus.records.state import AgentState
from hephaistus.tools import Registry
from hephaistus.values import Message, Outcome


class Engine(Protocol):
    """A reasoning architecture: runs one task with what `run` holds, returns how it ended."""

    def run(self, task: str, run: Run) -> Outcome:
        """Work on `task` until it is done, fails or runs out of steps."""
        ...


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
    schema: StepSchema | None = None  # the step's schema, for a server that enforces it
    cut_by_the_window: bool = False  # the last reply ended where the context window did

    @property
    def registry(self) -> Registry:
        return self.runtime.registry
