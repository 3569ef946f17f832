"""The command line's grammar: the options every command takes, and one declaration per
subcommand (its name, its options, its help line, the function that runs it), from which the
usage line, the help's list of commands and the dispatch are made.

Only the standard library is imported: `heph --help` must be instant. A command's module is
imported when it runs.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import NamedTuple

from hephaistus import __version__
from hephaistus.errors import EXIT_USAGE, ConfigError, HephError
from hephaistus.runtime.permissions import MODES

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
    options: Callable[[argparse.ArgumentParser], None] = _no_options
    stray_words: Callable[[argparse.Namespace, list[str]], list[str]] = _stray_words

    def run(self, args: argparse.Namespace) -> int:
        """Run the command with its parsed `args`; its exit code."""
        module, _, function = self.runner.partition(":")
        runner: Runner = getattr(importlib.import_module(f"hephaistus.cli.{module}"), function)
        return runner(args)

    def parser(self) -> argparse.ArgumentParser:
        """The parser of this subcommand: the common options and its own."""
        parser = argparse.ArgumentParser(
            prog=f"heph {self.name}", parents=[common_options()], allow_abbrev=False
        )
        self.options(parser)
        return parser


def positive_int(text: str) -> int:
    """A whole number of at least 1, for argparse."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


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
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--fix", action="store_true")
    parser.add_argument("--staged", action="store_true")
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
    parser.add_argument("paths", nargs="*")


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
    parser.add_argument("action", choices=("list", "tools", "approve", "import"))
    parser.add_argument("name", nargs="?", metavar="NAME|FILE")


SUBCOMMANDS = (
    Subcommand(
        "sessions", "[--limit N]", "list recorded sessions", "records:sessions", _sessions_options
    ),
    Subcommand(
        "replay",
        "[ID|last]",
        "re-render a recorded session, without the model or any tool",
        "records:replay",
        _session_ref,
        _ref_and_words,
    ),
    Subcommand(
        "undo",
        "[ID|last]",
        "put back the files a session changed (--force: even if edited since)",
        "records:undo",
        _undo_options,
        _ref_and_words,
    ),
    Subcommand(
        "docs",
        "[--check|--fix] [--staged] [PATHS...]",
        "find missing or stale docstrings (--check, offline), or write them",
        "docs:docs",
        _docs_options,
        _docs_words,
    ),
    Subcommand(
        "stats", "", "per model: well-formed replies, edits applied, steps, tokens", "records:stats"
    ),
    Subcommand("models", "", "the endpoint's models, the configured one marked", "setup:models"),
    Subcommand(
        "init",
        "",
        "draft an AGENTS.md for this workspace (shown as a diff to approve)",
        "setup:init",
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
        "list | tools NAME | approve NAME | import FILE",
        "MCP tool servers: their state and tools as the model sees them; approve a\n"
        "server's changed tools; convert a Claude Code / Cursor .mcp.json",
        "mcp:mcp",
        _mcp_options,
    ),
    Subcommand(
        "trust",
        "[--show|--forget]",
        "show the settings this workspace's files hold that need trust\n"
        "(they decide where the key goes and what runs), and trust it",
        "setup:trust",
        _trust_options,
    ),
)
BY_NAME = {command.name: command for command in SUBCOMMANDS}


# -- the options of every command --------------------------------------------------------------


def common_options() -> argparse.ArgumentParser:
    """The options every command takes (a parent parser)."""
    # No abbreviations: `--tr` must not mean --trust, nor `--mod` --mode or --model.
    common = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    common.add_argument(
        "-w",
        "--workspace",
        metavar="DIR",
        help="project folder (default: the git top-level, else the current folder)",
    )
    common.add_argument("-m", "--model", help="model name (env HEPH_MODEL)")
    common.add_argument(
        "--base-url", metavar="URL", help="OpenAI-compatible endpoint (env OPENAI_BASE_URL)"
    )
    common.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="= --mode auto: every write, command and commit unasked (never trusts a workspace)",
    )
    common.add_argument(
        "--mode",
        choices=MODES,
        help="ask (default): ask before writes, commands, commits; edits: write unasked; "
        "plan: only read, answer with a plan; auto: do everything unasked",
    )
    common.add_argument(
        "--trust",
        action="store_true",
        help="use this workspace's settings that need trust, for this run only",
    )
    common.add_argument("--dry-run", action="store_true", help="show the diffs, write nothing")
    common.add_argument(
        "--max-steps",
        type=positive_int,
        metavar="N",
        help="model requests allowed per task (env HEPH_MAX_STEPS, default 20)",
    )
    common.add_argument(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the last session's conversation",
    )
    common.add_argument(
        "--test-cmd", metavar="CMD", help="the project's test command for this run (`test`)"
    )
    common.add_argument(
        "--check-after-edits",
        action="store_true",
        help="run `test` after a turn that wrote files, before the answer",
    )
    common.add_argument(
        "--json", action="store_true", help="print one JSON object with the outcome"
    )
    common.add_argument(
        "--output",
        choices=("text", "jsonl"),
        default="text",
        help="jsonl: stream one JSON object per event on stdout as it happens",
    )
    common.add_argument("-q", "--quiet", action="store_true", help="print only the answer")
    common.add_argument("-v", "--verbose", action="store_true", help="show whole observations")
    common.add_argument("--version", action="version", version=f"heph {__version__}")
    return common


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
    """The subcommand's options. Words it does not take (`heph init the database schema`,
    `heph docs are out of date`) are most likely a task: an error that says how to send one."""
    parser = command.parser()
    try:
        args, stray = parser.parse_known_intermixed_args(argv)
    except SystemExit as exit_:
        if exit_.code in (0, None):
            raise
        raise UsageExit() from None
    words = command.stray_words(args, stray)
    if stray and not words:
        return parse(parser, argv)  # an unknown option: argparse says so
    if words:
        given = args.paths if command.name == "docs" else words
        typed = " ".join([command.name, *given])
        raise ConfigError(
            f"heph {command.name} does not take {' '.join(words)!r}; to give heph this as a "
            f"task, write: heph -- {typed}"
        )
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
