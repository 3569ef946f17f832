"""`heph hooks`: `list` shows the hooks that would run here (the person's, the workspace's) and
each one's state; `import FILE` copies the hooks of a Claude Code `.claude/settings.json` or a
Codex `.codex/hooks.json` into the person's own `hooks.json` (the only way heph reads them)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

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

    done = opened(args, ask=False, notice=False)  # the list says each hook's state
    root = done.workspace.root
    lines = [f"{visible(h.describe())}  ({h.source}: runs, as you)" for h in persons_hooks()]
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
    from hephaistus.hooks.definitions import USER_FILE, parse, read_json
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
            try:  # what heph cannot run is said and left out; the rest is copied
                hooks = parse({event: [group]}, str(path), workspace=False)
            except ConfigError as error:
                say(f"left out: {error}")
                continue
            if group not in kept["hooks"].setdefault(event, []):
                kept["hooks"][event].append(group)
                added += len(hooks)
                projects += sum("CLAUDE_PROJECT_DIR" in hook.command for hook in hooks)
    others = sorted(set(found) - {"hooks"})
    if others:
        say(f"not copied (heph has no such hook settings): {', '.join(others)}")
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, (json.dumps(kept, indent=2) + "\n").encode())
    say(f"{counted(added, 'hook')} copied from {path} into {target}")
    if projects:
        say(
            f"{counted(projects, 'hook')} run a project's own files ($CLAUDE_PROJECT_DIR): now "
            "they run in every workspace, in the sandbox (a workspace's files never run as you)"
        )
    return 0
