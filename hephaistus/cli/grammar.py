"""The command line's grammar: one declaration per subcommand (its name, the options of
`options` it takes, its own options, its help line, the function that runs it), from which the
usage line, the help's list of commands, each command's parser and the dispatch are made.

Only the standard library is imported: `heph --help` must be instant. A command's module is
imported when it runs.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import NamedTuple

from hephaistus.cli.options import common_options, option_defaults, positive_int
from hephaistus.errors import EXIT_USAGE, ConfigError, HephError

Runner = Callable[[argparse.Namespace], int]


def _no_options(parser: argparse.ArgumentParser) -> None:
    """A subcommand with only the common options."""


def _stray_words(args: argparse.Namespace, stray: list[str]) -> list[str]:
    """The words a subcommand was given that it does not take: most likely a task."""
    return [word for word in stray if not word.startswith("-")]


class Subcommand(NamedTuple):  # not a dataclass: `dataclasses` costs --help 15 ms of imports
    """One subcommand, declared once."""

    name: str
    synopsis: str  # what follows `heph NAME` in the help
    summary: str  # what it does, for the help's list (a line break continues it)
    runner: str  # "module:function" in hephaistus.cli, imported when the command runs
    takes: tuple[str, ...] = ()  # the options of OPTIONS it uses
    options: Callable[[argparse.ArgumentParser], None] = _no_options
    stray_words: Callable[[argparse.Namespace, list[str]], list[str]] = _stray_words

    def run(self, args: argparse.Namespace) -> int:
        """Run the command with its parsed `args`; its exit code."""
        module, _, function = self.runner.partition(":")
        runner: Runner = getattr(importlib.import_module(f"hephaistus.cli.{module}"), function)
        return runner(args)

    def parser(self) -> argparse.ArgumentParser:
        """The parser of this subcommand: the options it takes, and its own."""
        parser = argparse.ArgumentParser(
            prog=f"heph {self.name}", parents=[common_options(self.takes)], allow_abbrev=False
        )
        self.options(parser)
        return parser


# -- the subcommands' own options ------------------------------------------------------------


def _sessions_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=positive_int, default=20, metavar="N")


def _session_ref(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ref", nargs="?", default="last", metavar="ID|last")


def _undo_options(parser: argparse.ArgumentParser) -> None:
    _session_ref(parser)
    parser.add_argument(
        "--force", action="store_true", help="undo even files that changed after heph wrote them"
    )


def _ref_and_words(args: argparse.Namespace, stray: list[str]) -> list[str]:
    """`heph undo the last change`: the reference was a word of a task too."""
    return [args.ref, *stray] if stray else []


def _trust_options(parser: argparse.ArgumentParser) -> None:
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--show", action="store_true", help="show the state, change nothing")
    choice.add_argument("--forget", action="store_true", help="forget the answer given")


def _docs_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="list what lacks a docstring or has a stale one; "
        "exit 1 if anything does (the default)",
    )
    parser.add_argument(
        "--fix", action="store_true", help="ask the model for the missing and stale docstrings"
    )
    parser.add_argument(
        "--staged", action="store_true", help="only the Python files staged for commit"
    )
    parser.add_argument(
        "--max-files",
        type=positive_int,
        metavar="N",
        help="--fix: only the first N files that need docstrings",
    )
    parser.add_argument(
        "--diff", action="store_true", help="--fix: print the changes, write nothing (as --dry-run)"
    )
    parser.add_argument(
        "--jobs", type=positive_int, metavar="N", help="--fix: files asked about at once"
    )
    parser.add_argument("paths", nargs="*", help="files or folders (default: the workspace)")


def _docs_words(args: argparse.Namespace, stray: list[str]) -> list[str]:
    """`heph docs are out of date`: paths of which none exists, with no --check or --fix, are
    words of a task, not files."""
    if stray:
        return _stray_words(args, stray)
    from pathlib import Path

    asked = args.check or args.fix or args.staged
    missing = not asked and args.paths and not any(Path(p).exists() for p in args.paths)
    return list(args.paths) if missing else []


def _mcp_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("list", "tools", "approve", "import", "login", "logout"))
    parser.add_argument("name", nargs="?", metavar="NAME|FILE")


def _hooks_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", default="list", choices=("list", "import"))
    parser.add_argument("file", nargs="?", metavar="FILE")


# The options a command that settles the workspace's trust and settings reads.
SETTLED = ("workspace", "trust")
SUBCOMMANDS = (
    Subcommand(
        "sessions",
        "[--limit N]",
        "list recorded sessions",
        "records:sessions",
        takes=("workspace", "json"),
        options=_sessions_options,
    ),
    Subcommand(
        "replay",
        "[ID|last]",
        "re-render a recorded session, without the model or any tool",
        "records:replay",
        takes=("workspace", "json", "quiet", "verbose"),
        options=_session_ref,
        stray_words=_ref_and_words,
    ),
    Subcommand(
        "undo",
        "[ID|last]",
        "put back the files a session changed (--force: even if edited since)",
        "records:undo",
        takes=("workspace",),
        options=_undo_options,
        stray_words=_ref_and_words,
    ),
    Subcommand(
        "docs",
        "[--check|--fix] [--staged] [PATHS...]",
        "find missing or stale docstrings (--check, offline), or write them",
        "docs:docs",
        takes=(*SETTLED, "model", "base_url", "mode", "dry_run", "json", "verbose"),
        options=_docs_options,
        stray_words=_docs_words,
    ),
    Subcommand(
        "stats",
        "",
        "per model: well-formed replies, edits applied, steps, tokens",
        "records:stats",
        takes=("workspace", "json"),
    ),
    Subcommand(
        "models",
        "",
        "the endpoint's models, the configured one marked",
        "setup:models",
        takes=(*SETTLED, "model", "base_url", "json", "verbose"),
    ),
    Subcommand(
        "init",
        "",
        "draft an AGENTS.md for this workspace (shown as a diff to approve)",
        "setup:init",
        takes=(*SETTLED, "yes", "mode", "dry_run", "test_cmd", "quiet", "verbose"),
    ),
    Subcommand(
        "acp",
        "",
        "let an editor drive heph (Zed, JetBrains, Neovim): the Agent Client Protocol\n"
        "on stdin/stdout",
        "acp:acp",
    ),
    Subcommand(
        "mcp",
        "list | tools NAME | approve NAME | login NAME | logout NAME | import FILE",
        "MCP tool servers: their state and tools as the model sees them; approve a\n"
        "server's changed tools; sign in with OAuth; convert a Claude Code / Cursor .mcp.json",
        "mcp:mcp",
        takes=(*SETTLED, "yes"),
        options=_mcp_options,
    ),
    Subcommand(
        "hooks",
        "[list | import FILE]",
        "the hooks in force here and their state; copy the hooks of a Claude Code\n"
        ".claude/settings.json or a Codex .codex/hooks.json into yours",
        "hooks:hooks",
        takes=SETTLED,
        options=_hooks_options,
    ),
    Subcommand(
        "trust",
        "[--show|--forget]",
        "show the settings this workspace's files hold that need trust\n"
        "(they decide where the key goes and what runs), and trust it",
        "setup:trust",
        takes=("workspace", "yes"),
        options=_trust_options,
    ),
)
BY_NAME = {command.name: command for command in SUBCOMMANDS}


# -- the help -------------------------------------------------------------------------------

SUMMARY_COLUMN = 30
TASK_FORMS = (
    ("heph [OPTIONS] TASK...", "run one task, print the answer, exit"),
    ("heph [OPTIONS]", "interactive chat (in a terminal; /help lists its commands)"),
)
FOOTER = """
exit codes: 0 answered, 1 the agent failed, 2 usage or configuration error,
            3 a write, command or commit was refused, 130 interrupted
environment: OPENAI_API_KEY, OPENAI_BASE_URL, HEPH_MODEL, HEPH_MAX_STEPS, HEPH_TIMEOUT
"""


def epilog() -> str:
    """The help's list of commands, from the declarations."""
    forms = [*TASK_FORMS]
    forms += [(f"heph {c.name} {c.synopsis}".rstrip(), c.summary) for c in SUBCOMMANDS]
    lines = ["commands:"]
    for form, summary in forms:
        first, *more = summary.split("\n")
        head = f"  {form}"
        if len(head) < SUMMARY_COLUMN - 1:
            lines.append(head.ljust(SUMMARY_COLUMN) + first)
        else:
            lines += [head, " " * SUMMARY_COLUMN + first]
        lines += [" " * SUMMARY_COLUMN + line for line in more]
    return "\n".join(lines) + "\n" + FOOTER


def task_parser() -> argparse.ArgumentParser:
    """The parser of `heph [OPTIONS] [TASK...]`, whose help lists every command."""
    parser = argparse.ArgumentParser(
        prog="heph",
        parents=[common_options()],
        allow_abbrev=False,
        usage=f"heph [OPTIONS] [TASK...] | heph {{{','.join(BY_NAME)}}} ...",
        description="Hephaistus: an AI coding assistant that works inside your project folder.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("task", nargs="*", help="what to do, in plain words")
    return parser


# -- parsing -----------------------------------------------------------------------------------


class UsageExit(HephError):
    """A usage error argparse has already printed."""

    exit_code = EXIT_USAGE

    def __init__(self) -> None:
        super().__init__("")


def split_command(argv: list[str]) -> tuple[Subcommand | None, list[str]]:
    """A first positional word naming a subcommand selects it; `--` makes the rest a task."""
    takes_value = {
        option
        for action in common_options()._actions
        if action.nargs != 0
        for option in action.option_strings
    }
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == "--":
            break
        if word in takes_value:
            index += 2
        elif word.startswith("-"):
            index += 1
        elif word in BY_NAME:
            return BY_NAME[word], argv[:index] + argv[index + 1 :]
        else:
            break
    return None, argv


def parse_subcommand(command: Subcommand, argv: list[str]) -> argparse.Namespace:
    """The subcommand's options, and the defaults of those it does not take. An option it
    does not take is a usage error that names it; words it does not take (`heph init the
    database schema`, `heph docs are out of date`) are most likely a task: an error that says
    how to send one."""
    parser = command.parser()
    try:
        args, stray = parser.parse_known_intermixed_args(argv)
    except SystemExit as exit_:
        if exit_.code in (0, None):
            raise
        raise UsageExit() from None
    options = [word.split("=")[0] for word in stray if word.startswith("-") and word != "-"]
    if options:
        raise ConfigError(
            f"heph {command.name} does not take {', '.join(options)} "
            f"(heph {command.name} --help lists what it takes)"
        )
    words = command.stray_words(args, stray)
    if words:
        given = args.paths if command.name == "docs" else words
        typed = " ".join([command.name, *given])
        raise ConfigError(
            f"heph {command.name} does not take {' '.join(words)!r}; to give heph this as a "
            f"task, write: heph -- {typed}"
        )
    for name, default in option_defaults().items():
        if not hasattr(args, name):
            setattr(args, name, default)
    return args


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """The options of `argv`, in any order among the words; a usage error, which argparse has
    printed, becomes a HephError with the usage exit code."""
    try:
        return parser.parse_intermixed_args(argv)
    except SystemExit as exit_:  # argparse printed the usage error (or --help) already
        if exit_.code in (0, None):
            raise
        raise UsageExit() from None
