"""The `task` tool: a side question handed to a sub-agent (engine.delegation), whose reading
never enters this conversation; only its answer comes back. It changes nothing itself: what
the child does is decided call by call, as the parent's calls are."""

from __future__ import annotations

from hephaistus.tools.context import ToolContext
from hephaistus.values import ToolResult


def task(ctx: ToolContext, description: str, prompt: str, agent: str | None = None) -> ToolResult:
    """Hand a side task to a sub-agent with a fresh context (e.g. "find where the config is
    parsed", "read these files and say which matter"); you get only its final answer.

    Args:
        ctx: the run's link to the sub-agents (given by heph, not by the model)
        description: the task in a few words, shown to the user
        prompt: everything the sub-agent needs to know: it sees nothing of this conversation
        agent: which sub-agent (default explore: reads and searches only)
    """
    if ctx.delegate is None:
        return ToolResult(False, "task: a sub-agent cannot start sub-agents of its own")
    return ctx.delegate(ctx, description, prompt, agent or "")


TOOLS = ((task, "read"),)
