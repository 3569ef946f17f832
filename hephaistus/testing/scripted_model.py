"""A Model that answers from a queue and records every request it was given."""

from __future__ import annotations

import copy
import json
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hephaistus.values import Message, ModelReply, Usage

if TYPE_CHECKING:
    from hephaistus.model.steps import StepSchema


class ScriptedModel:
    """A Model for tests: gives its queued replies in order, and keeps the messages and reply
    limit of every request."""

    def __init__(self, replies: list[Any] | None = None, name: str = "scripted") -> None:
        self.name = name
        self.replies: deque[Any] = deque(replies or [])
        self.calls: list[list[Message]] = []
        self.max_tokens: list[int | None] = []  # the reply limit each request was sent with

    def enqueue(self, *replies: Any) -> ScriptedModel:
        """Add replies: a str is sent as is, a dict as JSON, an exception is raised."""
        self.replies.extend(replies)
        return self

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        on_retry: Callable[[str, float], None] | None = None,
        on_text: Callable[[str], None] | None = None,
        schema: StepSchema | None = None,
        plain: bool = False,
    ) -> ModelReply:
        """The next queued reply (an exception is raised instead), with usage estimated from the
        text; AssertionError when none is left."""
        self.calls.append(copy.deepcopy(messages))
        self.max_tokens.append(max_tokens)
        if not self.replies:
            raise AssertionError("ScriptedModel has no reply left for this request")
        reply = self.replies.popleft()
        if isinstance(reply, BaseException):
            raise reply
        text = reply if isinstance(reply, str) else json.dumps(reply)
        sent = sum(len(m["content"]) for m in messages)
        return ModelReply(text, Usage(sent // 4, len(text) // 4))

    def assert_used_up(self) -> None:
        """Fail unless every queued reply was asked for."""
        assert not self.replies, f"{len(self.replies)} scripted replies were never requested"
