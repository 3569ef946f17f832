"""What a run reports as it goes: the EventSink everything that shows progress to a person
implements (the terminal, `--output jsonl`, an editor over ACP), plugged in from outside, and
the NullSink that shows nothing."""

from __future__ import annotations

from typing import Any, Protocol

from hephaistus.values import Action, ToolResult, Usage


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

    def todos_changed(self, todos: list[Any]) -> None:
        """The model wrote its todo list anew (records.todos.Todo items)."""
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

    def todos_changed(self, todos: list[Any]) -> None:
        """The todo list is not shown (the tool's span records it)."""
