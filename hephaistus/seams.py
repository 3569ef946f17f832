"""The seams between the parts, as Protocols in one place.

Concrete classes need not inherit from these: the engine takes any Model (the agent takes any
Engine: engine.base, beside the Run it is given), and everything that shows progress to a
person is an EventSink, plugged in from outside; the engine records into any SessionRecorder.
Who is asked about an effect is the runtime policy's Asker (runtime.policy), and what starts a
process its Executor (runtime.executor).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from hephaistus.values import Action, Message, ModelReply, ToolResult, Usage

if TYPE_CHECKING:
    from hephaistus.session import Span
    from hephaistus.steps import StepSchema


class Model(Protocol):
    """A chat model. `on_text` receives the reply so far while it streams (when it does)."""

    name: str

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        on_retry: Callable[[str, float], None] | None = None,
        on_text: Callable[[str], None] | None = None,
        schema: StepSchema | None = None,
    ) -> ModelReply:
        """The model's reply to `messages`, at most `max_tokens` long when given; `on_retry`
        hears why a request is retried and how long until the next try; `schema`, the step's
        schema, for a server that can enforce it."""
        ...


class SessionRecorder(Protocol):
    """Where the engine records a run as it goes (see session.Session)."""

    id: str

    def message(self, message: Message) -> None:
        """A message of the conversation, as sent to or received from the model."""
        ...

    def span(
        self, kind: str, name: str, args: dict[str, Any] | None = None
    ) -> AbstractContextManager[Span]:
        """A timed step (a model request, a tool call), recorded when the block ends."""
        ...

    def record(self, kind: str, name: str, output: Any, **args: Any) -> None:
        """A step that took no time worth measuring, with its output."""
        ...


class EventSink(Protocol):
    """What the engine and the approver report as a run goes; rendering lives behind this."""

    def step_started(self, step: int) -> None:
        """A model request is about to be made, for step `step`."""
        ...

    def reply_progress(self, text_so_far: str) -> None:
        """The reply so far, while it streams."""
        ...

    def model_replied(self, usage: Usage) -> None:
        """The model replied; `usage` is what the reply cost."""
        ...

    def thought(self, text: str) -> None:
        """The model's reasoning for its next action."""
        ...

    def tool_called(self, action: Action) -> None:
        """The model asked for a tool; `action` names it and its arguments."""
        ...

    def tool_finished(self, action: Action, result: ToolResult) -> None:
        """The tool of `action` ran and gave `result`."""
        ...

    def show_diff(self, diff: str) -> None:
        """A change, shown for approval or in a dry run."""
        ...

    def format_error(self, problem: str) -> None:
        """A reply was not a well-formed action; `problem` says what was wrong."""
        ...

    def notice(self, text: str) -> None:
        """A warning or an aside: a retry, a setting in use, something that was not done."""
        ...

    def final(self, message: str) -> None:
        """The run ended with this answer from the model."""
        ...

    def failure(self, message: str) -> None:
        """The run ended without an answer; `message` says why."""
        ...


class NullSink:
    """An EventSink that shows nothing (used by --json and by tests)."""

    def step_started(self, step: int) -> None:
        """Steps are not shown."""

    def reply_progress(self, text_so_far: str) -> None:
        """Partial replies are not shown."""

    def model_replied(self, usage: Usage) -> None:
        """The reply's cost is not shown."""

    def thought(self, text: str) -> None:
        """Thoughts are not shown."""

    def tool_called(self, action: Action) -> None:
        """Tool calls are not shown."""

    def tool_finished(self, action: Action, result: ToolResult) -> None:
        """Tool results are not shown."""

    def show_diff(self, diff: str) -> None:
        """Diffs are not shown."""

    def format_error(self, problem: str) -> None:
        """Malformed replies are not shown."""

    def notice(self, text: str) -> None:
        """Notices are not shown."""

    def final(self, message: str) -> None:
        """The answer is not shown (`--json` prints it instead)."""

    def failure(self, message: str) -> None:
        """Failures are not shown (`--json` reports them instead)."""
