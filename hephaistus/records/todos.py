"""The task's todo list (the `todo_write` tool): the whole list each time, each item pending,
in progress or completed, at most one in progress. It is kept in the AgentState as lines the
model reads (so "continue" picks it up), shown to the person as it changes, and sent to an
editor as ACP `plan` entries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

STATUSES = ("pending", "in_progress", "completed")
PRIORITIES = ("high", "medium", "low")
MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
MOST_ITEMS = 50
CONTENT_CHARS = 300


@dataclass(frozen=True)
class Todo:
    """One item of the list."""

    content: str
    status: str
    priority: str = "medium"

    def line(self) -> str:
        """The item as the model and the person read it: `[x] write the tests`."""
        return f"{MARKS[self.status]} {self.content}"

    def entry(self) -> dict[str, str]:
        """The item as an ACP plan entry."""
        return {"content": self.content, "status": self.status, "priority": self.priority}


def checked(value: Any) -> list[Todo]:
    """The list `value` holds (the model's JSON); ValueError saying what is wrong with it, in
    words the model can act on."""
    if not isinstance(value, list):
        raise ValueError("'todos' must be a list of {content, status} objects")
    if len(value) > MOST_ITEMS:
        raise ValueError(f"at most {MOST_ITEMS} items; keep the list to the task's steps")
    todos = [_item(n, item) for n, item in enumerate(value)]
    working = [t.content for t in todos if t.status == "in_progress"]
    if len(working) > 1:
        raise ValueError(f"at most one item may be in_progress, not {len(working)}")
    return todos


def _item(n: int, item: Any) -> Todo:
    if not isinstance(item, dict):
        raise ValueError(f"item {n} must be an object with content and status")
    content, status = item.get("content"), item.get("status", "pending")
    priority = item.get("priority", "medium")
    if not isinstance(content, str) or not content.strip():
        raise ValueError(f"item {n} needs a content string")
    if status not in STATUSES:
        raise ValueError(f"item {n}: status must be one of {', '.join(STATUSES)}")
    if priority not in PRIORITIES:
        raise ValueError(f"item {n}: priority must be one of {', '.join(PRIORITIES)}")
    return Todo(" ".join(content.split())[:CONTENT_CHARS], status, priority)


def from_lines(lines: list[str]) -> list[Todo]:
    """The list kept in the AgentState (its lines), read back."""
    statuses = {mark: status for status, mark in MARKS.items()}
    found = []
    for line in lines:
        mark, content = line[:3], line[4:]  # every mark is three characters
        if mark in statuses and content:
            found.append(Todo(content, statuses[mark]))
    return found
