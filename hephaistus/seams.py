"""The seams between the parts, as Protocols in one place.

Concrete classes need not inherit from these: the engine takes any Model, the agent any Engine,
and everything that shows progress to a person is an EventSink plugged in from outside.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hephaistus.protocol import Action
    from hephaistus.tools import ToolResult

Message = dict[str, str]  # {"role": ..., "content": ...}, the Chat Completions wire shape


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}


@dataclass(frozen=True)
class ModelReply:
    text: str
    usage: Usage
    attempts: int = 1  # how many HTTP requests the reply took (retries included)


class Model(Protocol):
    """A chat model. `on_text` receives the reply so far while it streams (when it does)."""

    name: str

    def complete(
        self,
        messages: list[Message],
        *,
        on_retry: Callable[[str, float], None] | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> ModelReply: ...


class EventSink(Protocol):
    """What the engine reports as it runs; rendering lives behind this."""

    def step_started(self, step: int) -> None: ...  # a model request is about to be made
    def reply_progress(self, text_so_far: str) -> None: ...  # the reply, while it streams
    def model_replied(self, usage: Usage) -> None: ...
    def thought(self, text: str) -> None: ...
    def tool_called(self, action: Action) -> None: ...
    def tool_finished(self, action: Action, result: ToolResult) -> None: ...
    def format_error(self, problem: str) -> None: ...
    def notice(self, text: str) -> None: ...
    def final(self, message: str) -> None: ...


class NullSink:
    """An EventSink that shows nothing (used by --json and by tests)."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return _ignore


def _ignore(*_args: Any, **_kwargs: Any) -> None:
    return None
