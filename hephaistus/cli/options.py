"""The options of the commands: each declared once, by its name (argparse's `dest`), with its
flags and argparse's settings. A task takes all of them; a subcommand those its declaration in
`grammar` names (DESIGN: each subcommand takes only the options it uses).

Only the standard library is imported: `heph --help` must be instant.
"""

from __future__ import annotations

import argparse
from typing import Any

from hephaistus import __version__
from hephaistus.settings.permissions import MODES


def command_line(text: str) -> str:
    """A command line with something to run, for argparse (an empty one would be ignored)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("give a command to run, as --test-cmd 'pytest -q'")
    return text


def positive_int(text: str) -> int:
    """A whole number of at least 1, for argparse."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


# Each option by its name (argparse's dest): its flags and argparse's settings. A task takes all
# of them; a subcommand those its declaration names.
OPTIONS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "workspace": (
        ("-w", "--workspace"),
        {
            "metavar": "DIR",
            "help": "project folder (default: the git top-level, else the current folder)",
        },
    ),
    "model": (("-m", "--model"), {"help": "model name (env HEPH_MODEL)"}),
    "base_url": (
        ("--base-url",),
        {"metavar": "URL", "help": "OpenAI-compatible endpoint (env OPENAI_BASE_URL)"},
    ),
    "yes": (
        ("-y", "--yes"),
        {
            "action": "store_true",
            "help": "= --mode auto: every write, command and commit unasked (never trusts a "
            "workspace)",
        },
    ),
    "mode": (
        ("--mode",),
        {
            "choices": MODES,
            "help": "ask (default): ask before writes, commands, commits; edits: write unasked; "
            "plan: only read, answer with a plan; auto: do everything unasked",
        },
    ),
    "trust": (
        ("--trust",),
        {
            "action": "store_true",
            "help": "use this workspace's settings that need trust, for this run only",
        },
    ),
    "dry_run": (("--dry-run",), {"action": "store_true", "help": "show the diffs, write nothing"}),
    "max_steps": (
        ("--max-steps",),
        {
            "type": positive_int,
            "metavar": "N",
            "help": "model requests allowed per task (env HEPH_MAX_STEPS, default 20)",
        },
    ),
    "continue_": (
        ("-c", "--continue"),
        {"action": "store_true", "help": "continue the last session's conversation"},
    ),
    "test_cmd": (
        ("--test-cmd",),
        {
            "type": command_line,
            "metavar": "CMD",
            "help": "the project's test command for this run (`test`)",
        },
    ),
    "check_after_edits": (
        ("--check-after-edits",),
        {
            "action": "store_true",
            "help": "run `test` after a turn that wrote files, before the answer",
        },
    ),
    "json": (
        ("--json",),
        {"action": "store_true", "help": "print one JSON object with the outcome"},
    ),
    "output": (
        ("--output",),
        {
            "choices": ("text", "jsonl"),
            "default": "text",
            "help": "jsonl: stream one JSON object per event on stdout as it happens",
        },
    ),
    "quiet": (("-q", "--quiet"), {"action": "store_true", "help": "print only the answer"}),
    "verbose": (("-v", "--verbose"), {"action": "store_true", "help": "show whole observations"}),
}


def common_options(names: tuple[str, ...] = tuple(OPTIONS)) -> argparse.ArgumentParser:
    """A parent parser with the options `names` (all of them by default) and --version."""
    # No abbreviations: `--tr` must not mean --trust, nor `--mod` --mode or --model.
    common = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    # -q and -v ask for opposite things: saying which one wins would be a guess.
    either = common.add_mutually_exclusive_group() if {"quiet", "verbose"} <= set(names) else None
    for name in names:
        flags, settings = OPTIONS[name]
        into = either if either and name in ("quiet", "verbose") else common
        into.add_argument(*flags, dest=name, **settings)
    common.add_argument("--version", action="version", version=f"heph {__version__}")
    return common


def option_defaults() -> dict[str, Any]:
    """Every option's value when not given: what a subcommand's runner reads for the options
    it does not take (a shared helper may ask any of them)."""
    return vars(common_options().parse_args([]))
