"""Model replies as the protocol has them, for scripting a model (ScriptedModel, ChatServer)."""

from __future__ import annotations

from typing import Any


def act(tool: str, thought: str = "working", **args: Any) -> dict[str, Any]:
    """A reply that calls `tool` with `args`."""
    return {"thought": thought, "action": {"tool": tool, "args": args}}


def final(message: str, thought: str = "done") -> dict[str, Any]:
    """A reply that answers with `message`."""
    return {"thought": thought, "final": {"message": message}}
