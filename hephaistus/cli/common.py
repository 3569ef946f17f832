"""What the commands share: printing text that came from outside, tables, and settling the
workspace, its trust and its settings from the common options (engine.opening does it)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hephaistus.errors import ConfigError

if TYPE_CHECKING:  # real types in signatures, with nothing heavy imported at start-up
    from hephaistus.engine.opening import Opened
    from hephaistus.settings.config import Config
    from hephaistus.workspace import Workspace


def say(text: str, stream: Any = None) -> None:
    """Print text that came from outside heph (a server, a file, a session): with the
    environment's secrets hidden and control characters spelled out."""
    from hephaistus.escape import safe

    print(safe(text), file=stream or sys.stdout)


def print_table(table: Any) -> None:
    """Print a table on stdout: fitted to a terminal's width, or into a pipe or a file as whole,
    unpadded rows."""
    from hephaistus.ui.render import make_console

    console = make_console(stderr=False)
    if console.is_terminal:
        console.print(table)
        return
    console.width = 10_000  # into a pipe or a file: whole rows, never wrapped, never padded
    with console.capture() as captured:
        console.print(table)
    print("\n".join(line.rstrip() for line in captured.get().splitlines()))


def root_of(args: argparse.Namespace) -> Path:
    """The folder the options name (-w), else the git top-level of the current folder."""
    from hephaistus.settings.config import find_workspace

    if not args.workspace:
        return find_workspace(Path.cwd())
    root = Path(args.workspace).expanduser()
    if not root.is_dir():
        raise ConfigError(f"-w/--workspace: '{args.workspace}' is not a folder")
    return root


def workspace_of(args: argparse.Namespace) -> Workspace:
    """The workspace the options name, settled (see engine.opening.settle): for the commands
    that read heph's records and need no settings."""
    from hephaistus.engine.opening import settle

    return settle(root_of(args))


def opened(args: argparse.Namespace, *, ask: bool = True, notice: bool = True) -> Opened:
    """The workspace the options name, opened (engine.opening): the person asked about trust
    in a terminal (when `ask`), and told on stderr what its trust and settings left out (when
    `notice`)."""
    from hephaistus.engine.opening import open_workspace

    flags = {
        "model": args.model,
        "mode": mode_flag(args),
        "base_url": args.base_url,
        "max_steps": args.max_steps,
        "test_cmd": args.test_cmd,
        "verify_after_edits": ("test",) if args.check_after_edits else None,
    }
    question = trust_question(args) if ask else None
    done = open_workspace(root_of(args), flags, for_this_run=args.trust, ask=question)
    for line in done.said if notice else []:
        say(line, sys.stderr)
    return done


def mode_flag(args: argparse.Namespace) -> str | None:
    """The mode the flags ask for: --mode, or --yes (which is --mode auto)."""
    if args.yes and args.mode not in (None, "auto"):
        raise ConfigError(f"--yes is --mode auto: it cannot go with --mode {args.mode}")
    return "auto" if args.yes else args.mode


def trust_question(args: argparse.Namespace) -> Callable[[str], str] | None:
    """How to ask the person whether to trust the workspace: only where someone can answer
    (a terminal; the question goes to stderr, whatever reads stdout)."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return None
    from hephaistus.ui.approval import ask_on_stderr

    return ask_on_stderr


def opened_for_a_model(args: argparse.Namespace) -> Opened:
    """As `opened`, and a model endpoint must be configured (or found). A workspace the person
    may not write in is said so, once, before the task."""
    done = opened(args)
    if read_only(done.workspace):
        say(
            f"heph: {done.workspace.root} is read-only for you: heph reads and answers there, "
            f"but cannot write (it keeps its records in {done.workspace.heph_dir})",
            sys.stderr,
        )
    done.choose_model(lambda line: say(line, sys.stderr))
    return done


def read_only(workspace: Workspace) -> bool:
    """Whether the person may not write in the workspace's folder (its mode, a read-only
    mount)."""
    import os

    return not os.access(workspace.root, os.W_OK)


def describe_endpoint(config: Config) -> str:
    """The endpoint, the model and the key a run uses, and where each came from (-v)."""
    from hephaistus.model.endpoint import describe

    return describe(config)


def say_foreign_sessions(store: Any) -> None:
    """One line about session files heph did not make here: they are never listed,
    replayed or continued."""
    foreign = store.foreign()
    if foreign:
        from hephaistus.wording import counted

        say(
            f"heph: ignoring {counted(len(foreign), 'session file')} in {store.folder} that heph "
            "did not make on this machine (they came with the workspace's files)",
            sys.stderr,
        )
