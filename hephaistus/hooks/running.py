"""Running one hook: its command in `sh -c`, Claude Code's JSON on stdin, stdout and stderr
kept apart, a timeout that kills its whole process group. A workspace's hook runs in the
sandbox with no network (the API key and the person's files out of its reach); the person's
own run as them, with the environment commands get (no credentials)."""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hephaistus.hooks.definitions import Hook, with_project
from hephaistus.runtime.executor import run_with_input
from hephaistus.runtime.tmp_shown import named_in_tmp

OUTPUT_BYTES = 64 * 1024  # of a hook's stdout and of its stderr, kept


class Sandboxed(Protocol):
    """What runs a workspace's hook contained (runtime.sandbox.Contained)."""

    def command_line(
        self, argv: list[str], *, network: bool | None = None, shown: list[Path] | None = None
    ) -> list[str]:
        """The line that runs `argv` in the sandbox; OSError where there is none."""
        ...


@dataclass(frozen=True)
class HookRun:
    """How one hook ended: its exit code (None: it timed out, or never started), what it
    printed, how long it took, and why it did not run when it did not."""

    exit_code: int | None
    stdout: str
    stderr: str
    seconds: float
    problem: str = ""  # it could not start, or timed out


def run_hook(
    hook: Hook,
    payload: dict[str, Any],
    *,
    root: Path,
    box: Sandboxed,
    env: dict[str, str],
    contained: bool = True,
) -> HookRun:
    """Run `hook` with `payload` on its stdin, in `root`; in the sandbox when `contained`."""
    missing = missing_script(hook.command, root)
    if missing:  # python says so with exit 2, which would block
        return HookRun(None, "", "", 0.0, f"its script {missing} is missing")
    hidden = contained and hidden_script(hook.command, root)
    if hidden:
        return HookRun(None, "", "", 0.0, hidden)
    argv = ["sh", "-c", hook.command]
    if contained:
        # The sandbox's /tmp is its own: what of the host's the person's hook names is shown.
        shown = [] if hook.workspace else named_in_tmp(_words(hook.command), root)
        try:
            argv = box.command_line(argv, network=False, shown=shown)
        except OSError as error:
            return HookRun(None, "", "", 0.0, f"not run: {error}")
    env = {**env, "CLAUDE_PROJECT_DIR": str(root), "HEPH_PROJECT_DIR": str(root)}
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogateescape")
    try:
        ended = run_with_input(argv, data, cwd=root, env=env, timeout=hook.timeout)
    except OSError as error:
        return HookRun(None, "", "", 0.0, f"cannot start sh: {error.strerror or error}")
    out, err = _text(ended.stdout), _text(ended.stderr)
    if ended.exit_code is None:
        return HookRun(None, out, err, ended.seconds, f"timed out after {hook.timeout:g} s")
    script = script_of(hook.command, root) if contained and ended.exit_code == 2 else None
    if script and os.path.basename(script) in err and UNSEEN.search(err):
        # There on the host, not in the sandbox (a folder it hides): the interpreter's exit 2
        # for a file it cannot open is no block.
        unseen = f"its script {script} cannot be seen in the sandbox, where it runs here"
        return HookRun(None, out, err, ended.seconds, unseen)
    return HookRun(ended.exit_code, out, err, ended.seconds)


UNSEEN = re.compile(r"can't open file|No such file or directory")
INTERPRETERS = {"python", "python3", "node", "bash", "sh", "zsh", "ruby", "perl", "bun", "deno"}


def hidden_script(command: str, root: Path) -> str | None:
    """Why a hook's script cannot run in the sandbox: it is in a folder the sandbox hides
    from every command (the workspace's `.heph/`, heph's config and state folders); else
    None."""
    from hephaistus.settings.userdirs import config_dir, state_dir

    script = script_of(command, root)
    if script is None:
        return None
    path = Path(os.path.expanduser(script))
    path = (path if path.is_absolute() else root / path).resolve()
    for folder, named in (
        (root / ".heph", ".heph/"),
        (config_dir(), "heph's config folder"),
        (state_dir(), "heph's state folder"),
    ):
        if path.is_relative_to(folder.resolve()):
            return (
                f"its script {script} is in {named}, which the sandbox hides from commands and "
                "hooks: keep a hook's scripts elsewhere (a workspace's in .claude/hooks/, say)"
            )
    return None


def missing_script(command: str, root: Path) -> str | None:
    """The script a hook's command runs when it does not exist, else None."""
    script = script_of(command, root)
    if script is None:
        return None
    path = Path(os.path.expanduser(script))
    return None if (path if path.is_absolute() else root / path).exists() else script


def script_of(command: str, root: Path) -> str | None:
    """The script a hook's command runs (`python3 .claude/hooks/x.py`, `./check.sh`,
    `"$CLAUDE_PROJECT_DIR"/hooks/x.sh`), or None when it names none."""
    try:
        words = shlex.split(with_project(command, root))
    except ValueError:
        return None
    if not words:
        return None
    script = words[0]
    if os.path.basename(script) in INTERPRETERS or re.fullmatch(r"python3?\.\d+", script):
        if words[1:2] and words[1] in ("-c", "-m", "-e"):
            return None
        script = next((w for w in words[1:] if not w.startswith("-")), "")
    if "/" not in script and not script.endswith((".py", ".sh", ".js", ".ts", ".rb")):
        return None
    return script


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _text(data: bytes) -> str:
    return data[:OUTPUT_BYTES].decode("utf-8", "replace")
