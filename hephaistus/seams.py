"""The seams between the parts, as Protocols in one place.

Concrete classes need not inherit from these: the engine takes any Model, the agent any Engine,
everything that shows progress to a person is an EventSink and everything that answers an
approval request an Approver, plugged in from outside; the engine records into any
SessionRecorder.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hephaistus.approvals import Decision, Request
    from hephaistus.engine.base import Outcome, Run
    from hephaistus.protocol import Action
    from hephaistus.session import Span
    from hephaistus.tools.results import ToolResult

Message = dict[str, str]  # {"role": ..., "content": ...}, the Chat Completions wire shape


@dataclass(frozen=True)
class Usage:
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
        counts: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }
        return {**counts, "estimated": True} if self.estimated else counts


@dataclass(frozen=True)
class ModelReply:
    text: str
    usage: Usage
    attempts: int = 1  # how many HTTP requests the reply took (retries included)
    cut_off: bool = False  # the reply stopped at the reply limit (finish_reason "length")


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
    ) -> ModelReply: ...


class Engine(Protocol):
    """A reasoning architecture: runs one task with what `run` holds, returns how it ended."""

    def run(self, task: str, run: Run) -> Outcome: ...


class Approver(Protocol):
    """Answers a request to write a file, run a project command or commit."""

    def __call__(self, request: Request) -> Decision: ...


class SessionRecorder(Protocol):
    """Where the engine records a run as it goes (see session.Session)."""

    id: str

    def message(self, message: Message) -> None: ...
    def span(
        self, kind: str, name: str, args: dict[str, Any] | None = None
    ) -> AbstractContextManager[Span]: ...
    def record(self, kind: str, name: str, output: Any, **args: Any) -> None: ...


class EventSink(Protocol):
    """What the engine and the approver report as a run goes; rendering lives behind this."""

    def step_started(self, step: int) -> None: ...  # a model request is about to be made
    def reply_progress(self, text_so_far: str) -> None: ...  # the reply, while it streams
    def model_replied(self, usage: Usage) -> None: ...
    def thought(self, text: str) -> None: ...
    def tool_called(self, action: Action) -> None: ...
    def tool_finished(self, action: Action, result: ToolResult) -> None: ...
    def show_diff(self, diff: str) -> None: ...  # a change shown for approval or a dry run
    def format_error(self, problem: str) -> None: ...
    def notice(self, text: str) -> None: ...
    def final(self, message: str) -> None: ...
    def failure(self, message: str) -> None: ...


class NullSink:
    """An EventSink that shows nothing (used by --json and by tests)."""

    def step_started(self, step: int) -> None:
        pass

    def reply_progress(self, text_so_far: str) -> None:
        pass

    def model_replied(self, usage: Usage) -> None:
        pass

    def thought(self, text: str) -> None:
        pass

    def tool_called(self, action: Action) -> None:
        pass

    def tool_finished(self, action: Action, result: ToolResult) -> None:
        pass

    def show_diff(self, diff: str) -> None:
        pass

    def format_error(self, problem: str) -> None:
        pass

    def notice(self, text: str) -> None:
        pass

    def final(self, message: str) -> None:
        pass

    def failure(self, message: str) -> None:
        pass
