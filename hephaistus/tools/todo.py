"""The `todo_write` tool: the model's plan for the task as a list the person watches being
ticked off (records.todos). It changes no file: its effect is a read's."""

from __future__ import annotations

from hephaistus.records.todos import checked
from hephaistus.tools.context import ToolContext
from hephaistus.values import ToolResult


def todo_write(ctx: ToolContext, todos: object) -> ToolResult:
    """Replace the task's todo list (the whole list each time): for a task of several
    steps, mark one in_progress as you start it and completed when it is done.

    Args:
        ctx: the run's link to the person's screen (given by heph, not by the model)
        todos: the whole list, e.g. [{"content": "Fix the parser", "status": "in_progress"},
            {"content": "Run the tests", "status": "pending"}]; status pending, in_progress
            or completed; at most one in_progress
    """
    try:
        items = checked(todos)
    except ValueError as error:
        return ToolResult(False, f"todo_write: {error}; the list is unchanged")
    if ctx.todos is not None:
        ctx.todos(items)
    done = sum(1 for item in items if item.status == "completed")
    lines = "\n".join(item.line() for item in items) or "(empty)"
    return ToolResult(True, f"todo list updated ({done} of {len(items)} done):\n{lines}")


TOOLS = ((todo_write, "read"),)
