"""What the commands share: printing text that came from outside, tables, and settling the
workspace, its trust and its settings from the common options."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hephaistus.errors import ConfigError


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


def workspace_of(args: argparse.Namespace) -> Any:
    """The workspace the options name (-w), else the git top-level of the current folder."""
    from hephaistus.settings.config import find_workspace
    from hephaistus.workspace import Workspace

    if args.workspace:
        root = Path(args.workspace).expanduser()
        if not root.is_dir():
            raise ConfigError(f"-w/--workspace: '{args.workspace}' is not a folder")
        workspace = Workspace.at(root)
    else:
        workspace = Workspace.at(find_workspace(Path.cwd()))
    from hephaistus.workspace import protected_part

    inside = protected_part(workspace.root.parts)
    if inside:
        raise ConfigError(
            f"{workspace.root} is inside a {inside}/ folder, whose files heph never reads or "
            "writes; run heph in the project folder around it"
        )
    from hephaistus.runtime.gitlocation import settle as locate_repository
    from hephaistus.runtime.programs import settle

    settle(workspace.root)  # heph's own programs come from no folder the workspace holds
    locate_repository(workspace.root)  # once, before the trust decision: see gitlocation.settle
    return workspace


def workspace_and_config(
    args: argparse.Namespace, *, ask: bool = True, notice: bool = True
) -> tuple[Any, Any]:
    """The workspace and its settings. Its files' settings that need trust apply only once
    it is trusted: asked once in a terminal (when `ask`), else left out and said so."""
    from hephaistus.settings.config import load_config
    from hephaistus.workspace import trust, trust_report

    workspace = workspace_of(args)
    decision = trust.decide(
        workspace.root, for_this_run=args.trust, ask=trust_question(args) if ask else None
    )
    trust.enforce(workspace.root, decision)
    if notice and not decision.trusted:
        say(trust_report.notice(decision), sys.stderr)
    flags = {
        "model": args.model,
        "mode": mode_flag(args),
        "base_url": args.base_url,
        "max_steps": args.max_steps,
        "test_cmd": args.test_cmd,
        "verify_after_edits": ("test",) if args.check_after_edits else None,
    }
    config = load_config(workspace.root, flags, trusted=decision.trusted)
    if notice:
        for why in config.ignored:
            say(why, sys.stderr)
        chosen_by = config.source_of("mode")
        if chosen_by.startswith(("pyproject.toml", ".heph.toml")):  # not the person's choice
            from hephaistus.settings.permissions import MEANING

            say(f"heph: {config.mode} mode, set by {chosen_by}: {MEANING[config.mode]}", sys.stderr)
    return workspace, config


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


def workspace_and_model_config(args: argparse.Namespace) -> tuple[Any, Any]:
    """As `_workspace_and_config`, and a model endpoint must be configured (or found). A
    workspace the person may not write in is said so, once, before the task."""
    workspace, config = workspace_and_config(args)
    if read_only(workspace):
        say(
            f"heph: {workspace.root} is read-only for you: heph reads and answers there, but "
            f"cannot write (it keeps its records in {workspace.heph_dir})",
            sys.stderr,
        )
    return workspace, with_endpoint(config)


def read_only(workspace: Any) -> bool:
    """Whether the person may not write in the workspace's folder (its mode, a read-only
    mount)."""
    import os

    return not os.access(workspace.root, os.W_OK)


def with_endpoint(config: Any) -> Any:
    """`config` with its endpoint and model settled (see endpoint.with_endpoint)."""
    from hephaistus.model.endpoint import with_endpoint

    check_base_url(config)
    return with_endpoint(config, lambda line: say(line, sys.stderr))


def check_base_url(config: Any) -> None:
    """A configured endpoint must be an http(s) URL with a host (`127.0.0.1:9` is not): a
    configuration error naming the flag, variable or file it came from."""
    from urllib.parse import urlsplit

    url = config.base_url
    try:
        parts = urlsplit(url or "")
        if not url or (parts.scheme in ("http", "https") and parts.hostname):
            return
    except ValueError:  # "http://[::1:bad"
        pass
    source = config.source_of("base_url")
    where = source if source.startswith(("--", "environment")) else f"base_url in {source}"
    hint = f" (did you mean http://{url}?)" if "://" not in url else ""
    raise ConfigError(
        f"{where}: '{url}' is not an http(s) URL{hint}; an endpoint is written like "
        "http://localhost:8080/v1"
    )


def describe_endpoint(config: Any) -> str:
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
