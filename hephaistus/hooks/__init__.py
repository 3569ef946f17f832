"""Hooks: the person's own checks around heph's steps, in the format Claude Code defined (Codex,
Crush and others read it too), so hook scripts written for those work unchanged.

`definitions` reads where hooks are kept, `approvals` is the person's say on a workspace's,
`running` runs one, `fired` runs an event's and puts their answers together, `calls` wraps a
tool call in PreToolUse and PostToolUse.

May import: `settings`, `runtime`, `workspace`, `records`, `tools`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hephaistus.hooks.definitions import Hook

__all__ = ["Hook", "in_force"]

WHEN = {  # an event, as the approval question says it
    "PreToolUse": "before the tool calls it matches",
    "PostToolUse": "after the tool calls it matches",
    "UserPromptSubmit": "at each task you give",
    "Stop": "at each final answer",
    "SessionStart": "as each run or chat starts",
    "SessionEnd": "as each run or chat ends",
    "PreCompact": "before heph compacts the conversation",
    "Notification": "when heph is about to ask you something",
}
POWERS = {  # what an event's hook can decide, as the question says it
    "PreToolUse": "; it can block those calls, change what they do and approve them unasked",
    "PostToolUse": "; it can change files after them and tell the model what to do",
    "UserPromptSubmit": "; it can block your task and add to it",
    "Stop": "; it can send the model back to work",
}


def in_force(
    root: Path, *, trusted: bool, ask: Callable[[str], str] | None
) -> tuple[list[Hook], list[str]]:
    """(the hooks that run here: the person's, then the workspace's that are approved; what to
    tell the person of those that are not). `ask` puts the question of an unapproved workspace
    hook to the person (None: no one may approve one, as with --yes or in an editor)."""
    from hephaistus.errors import ConfigError
    from hephaistus.hooks.approvals import HookApprovals
    from hephaistus.hooks.definitions import WORKSPACE_FILE, persons_hooks, workspace_hooks

    hooks = persons_hooks()  # a mistake in the person's own file is theirs to fix: exit 2
    said: list[str] = []
    try:
        theirs = workspace_hooks(root)
    except ConfigError as error:
        return hooks, [f"{error}; the workspace's hooks are not used"]
    if theirs and not trusted:
        return hooks, [f"not used until you trust this workspace (heph trust): {WORKSPACE_FILE}"]
    approvals = HookApprovals(root)
    for hook in theirs:
        if approvals.approved(hook):
            hooks.append(hook)
        elif ask is None:
            said.append(
                f"skipped a workspace hook you have not approved ({_shown(hook, 200)}): run "
                "heph in a terminal, without --yes or --mode auto, to be asked"
            )
        elif _approved_now(hook, root, ask):
            approvals.approve(hook)
            hooks.append(hook)
        else:
            said.append(f"skipped a workspace hook you declined: {_shown(hook, 200)}")
    return hooks, said


def _approved_now(hook: Hook, root: Path, ask: Callable[[str], str]) -> bool:
    from hephaistus.hooks.approvals import scripts

    files = scripts(root, hook)
    runs = f" (it runs {', '.join(files)})" if files else ""
    can = POWERS.get(hook.event, "")
    question = (
        f"This workspace's {hook.source} has a hook{runs}:\n  {_shown(hook)}\n"
        f"It runs in the sandbox, without network, {WHEN[hook.event]}{can}. Run it? [y/N]: "
    )
    try:
        return ask(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def _shown(hook: Hook, limit: int = 0) -> str:
    """The hook as the person reads it: escaped, a run of spaces counted (it could push the
    rest of a command out of sight), cut only where `limit` says, with a mark."""
    import re

    from hephaistus.escape import visible

    shown = re.sub(r"\s{4,}", lambda m: f" [{len(m[0])} blanks] ", visible(hook.describe()))
    return shown if not limit or len(shown) <= limit else shown[:limit] + " …"
