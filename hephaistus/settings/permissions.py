"""Permission modes: one table decides, for each effect a tool has, whether it runs unasked, is
asked about, or is refused. A pure function of (mode, effect, what was approved): no terminal,
no files, so every pair is tested.

A tool declares its effect: `read`, `write` (files in the workspace), `command` (a project
command), `external` (an MCP tool not trusted as read-only), `git` (a commit). An approval the
person gave holds for one effect and one name: approving writes never approves commands, and
approving the command `test` never approves `lint`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

Verdict = Literal["allow", "ask", "deny"]

MODES = ("ask", "edits", "plan", "auto")
EFFECTS = ("read", "write", "command", "external", "git")
DEFAULT_MODE = "ask"
CYCLE = ("ask", "edits", "plan")  # what Shift+Tab steps through in the chat; never to auto
WORKSPACE_MODES = ("ask", "edits", "plan")  # a workspace's own file may not say `auto`
BY_ASKING = ("auto", "edits", "ask", "plan")  # least asking first

TABLE: dict[str, dict[str, Verdict]] = {
    "ask": {"read": "allow", "write": "ask", "command": "ask", "external": "ask", "git": "ask"},
    "edits": {"read": "allow", "write": "allow", "command": "ask", "external": "ask", "git": "ask"},
    "plan": {
        "read": "allow",
        "write": "deny",
        "command": "deny",
        "external": "deny",
        "git": "deny",
    },
    "auto": {
        "read": "allow",
        "write": "allow",
        "command": "allow",
        "external": "allow",
        "git": "allow",
    },
}

MEANING = {
    "ask": "reads freely, asks before each write, command and commit",
    "edits": "writes files unasked, asks before commands and commits",
    "plan": "only reads, and answers with a plan (/go carries it out)",
    "auto": "does everything unasked: writes, commands, commits",
}

ANY_NAME = "*"  # an approval for every name of its effect ("[a]ll commands")
NEVER_BLANKET = ("shell",)  # names an approval for any name never covers
READ_ONLY_IN_PLAN = ("shell",)  # commands plan mode runs, with the workspace read-only


def decide(mode: str, effect: str, name: str = "", approved: Collection[str] = ()) -> Verdict:
    """allow, ask or deny for a call of `effect` (named `name`, for a command) in `mode`; what
    would be asked is allowed when the person approved it for good, or for this run or chat."""
    verdict = TABLE[mode][effect]
    if mode == "plan" and effect == "command" and name in READ_ONLY_IN_PLAN:
        return "allow"  # it runs with the workspace read-only: a way to look, not to change
    if verdict == "ask" and is_approved(effect, name, approved):
        return "allow"
    return verdict


def is_approved(effect: str, name: str, approved: Collection[str]) -> bool:
    """Whether `approved` holds an approval for this effect and name."""
    if approval_key(effect, name) in approved:
        return True
    return name not in NEVER_BLANKET and approval_key(effect, ANY_NAME) in approved


def approval_key(effect: str, name: str = "") -> str:
    """How an approval is kept: "write", "command:test", "command:*"."""
    return f"{effect}:{name}" if name else effect


def describe_approval(key: str) -> str:
    """An approval in words: "writes", "the command `test`", "every project command"."""
    effect, _, name = key.partition(":")
    if not name:
        return {"write": "writes", "git": "commits"}.get(effect, effect)
    if name == ANY_NAME:
        return {"command": "every project command"}.get(effect, f"every {effect}")
    return f"the command `{name}`" if effect == "command" else f"{effect} {name}"


def asks_at_least(mode: str, than: str) -> bool:
    """Whether `mode` asks at least as much as `than` (plan > ask > edits > auto): what a
    workspace's files may set over the person's own mode."""
    return BY_ASKING.index(mode) >= BY_ASKING.index(than)


def next_mode(mode: str) -> str:
    """The mode Shift+Tab moves to: ask → edits → plan → ask (from auto, back to ask)."""
    if mode not in CYCLE:
        return CYCLE[0]
    return CYCLE[(CYCLE.index(mode) + 1) % len(CYCLE)]
