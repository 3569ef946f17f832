"""The Model protocol the engine asks: any chat model with a `complete` (the client in
`model.llm`, the scripted model of `testing`). Concrete classes need not inherit from it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from hephaistus.values import Message, ModelReply

if TYPE_CHECKING:
    from hephaistus.model.steps import StepSchema


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
        plain: bool = False,
    ) -> ModelReply:
        """The model's reply to `messages`, at most `max_tokens` long when given; `on_retry`
        hears why a request is retried and how long until the next try; `schema`, the step's
        schema, for a server that can enforce it; `plain`: a reply in prose, not a step (an
        MCP server's sampling request)."""
        ...
