"""`heph hooks`: `list` shows the hooks that would run here (the person's, the workspace's) and
each one's state; `import FILE` copies the hooks of a Claude Code `.claude/settings.json` or a
Codex `.codex/hooks.json` into the person's own `hooks.json` (the only way heph reads them)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from hephaistus.cli.common import opened, say
from hephaistus.errors import ConfigError
from hephaistus.wording import counted


def hooks(args: argparse.Namespace) -> int:
    """Run the `heph hooks` action asked for."""
    if args.action == "import":
        if not args.file:
            raise ConfigError("heph hooks import FILE: name the .claude/settings.json to copy")
        return _import(Path(args.file))
    return _list(args)


def _list(args: argparse.Namespace) -> int:
    from hephaistus.escape import visible
    from hephaistus.hooks.approvals import HookApprovals
    from hephaistus.hooks.definitions import persons_hooks, workspace_hooks
    from hephaistus.hooks.fired import works_on_workspace
    from hephaistus.workspace.trust import vouched

    done = opened(args, ask=False, notice=False)  # the list says each hook's state
    root = done.workspace.root
    lines = []
    for hook in persons_hooks():
        if not vouched(root):
            where = "runs in the sandbox here: you have not trusted this workspace"
        elif works_on_workspace(hook, root):
            where = "runs in the sandbox: it works on the workspace's files"
        else:
            where = "runs as you"
        lines.append(f"{visible(hook.describe())}  ({hook.source}: {where})")
    try:
        theirs = workspace_hooks(root)
    except ConfigError as error:
        theirs = []
        lines.append(f"{error}: not used")
    approvals = HookApprovals(root)
    for hook in theirs:
        if not done.decision.trusted:
            state = "not used: the workspace is not trusted"
        elif approvals.approved(hook):
            state = "runs, in the sandbox"
        else:
            state = "not approved: a run in a terminal asks"
        lines.append(f"{visible(hook.describe())}  ({hook.source}: {state})")
    say("\n".join(lines) if lines else "no hooks (see `hooks` in the README)")
    return 0


def _import(path: Path) -> int:
    from hephaistus.hooks.definitions import USER_FILE, names_project, read_json
    from hephaistus.settings.userdirs import config_dir
    from hephaistus.textfile import atomic_write

    if not path.is_file():
        raise ConfigError(f"{path}: no such file" if not path.exists() else f"{path}: no file")
    found = read_json(path)
    table = found.get("hooks") if isinstance(found, dict) else None
    if not isinstance(table, dict) or not table:
        raise ConfigError(f"{path}: holds no hooks")
    target = config_dir() / USER_FILE
    kept = read_json(target) if target.is_file() else {"hooks": {}}
    if not isinstance(kept, dict) or not isinstance(kept.get("hooks"), dict):
        raise ConfigError(f"{target}: not a hooks file")
    added, projects = 0, 0
    for event, groups in table.items():
        for group in groups if isinstance(groups, list) else [groups]:
            group = _runnable(event, group, path)  # what heph cannot run is said, left out
            if group is None:
                continue
            if group not in kept["hooks"].setdefault(event, []):
                kept["hooks"][event].append(group)
                added += len(group["hooks"])
                projects += sum(names_project(entry["command"]) for entry in group["hooks"])
    others = sorted(set(found) - {"hooks"})
    if others:
        say(f"not copied (heph has no such hook settings): {', '.join(others)}")
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, (json.dumps(kept, indent=2) + "\n").encode())
    say(f"{counted(added, 'hook')} copied from {path} into {target}")
    if projects:
        say(
            f"of these, {counted(projects, 'hook')} {'works' if projects == 1 else 'work'} "
            "on a project's own files "
            "($CLAUDE_PROJECT_DIR): they run in every workspace now, always in its sandbox"
        )
    return 0


def _runnable(event: str, group: Any, path: Path) -> dict[str, Any] | None:
    """`group` with only the hooks heph can run (each left out said); None when none is."""
    from hephaistus.hooks.definitions import parse

    where = f"{path}: hooks.{event}"
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        say(f"left out: {where}: not a matcher group")
        return None
    kept = []
    for entry in group["hooks"]:
        try:
            parse({event: [{**group, "hooks": [entry]}]}, str(path), workspace=False)
        except ConfigError as error:
            say(f"left out: {error}")
            continue
        kept.append(entry)
    return {**group, "hooks": kept} if kept else None
