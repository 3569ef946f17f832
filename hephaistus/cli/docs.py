"""`heph docs`: the offline docstring check, and the model-written fix (a pre-commit hook)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from hephaistus.cli.common import describe_endpoint, opened, say
from hephaistus.errors import ConfigError


def docs(args: argparse.Namespace) -> int:
    """Check (offline) or fix docstrings; exit codes as pre-commit expects."""
    from dataclasses import replace

    from hephaistus.docs.report import SLOW_SECONDS, Reporter
    from hephaistus.docs.runner import collect_files, run_check, run_fix

    if args.check and args.fix:
        raise ConfigError("heph docs: give --check or --fix, not both")
    args.diff = args.diff or args.dry_run  # the common --dry-run: show, write nothing
    if (args.max_files or args.diff or args.jobs) and not args.fix:
        raise ConfigError("heph docs: --max-files, --diff (--dry-run) and --jobs go with --fix")
    # The check is offline and needs none of the settings that need trust: it asks nothing.
    workspace_opened = opened(args, ask=args.fix, notice=args.fix)
    workspace, config = workspace_opened.workspace, workspace_opened.config
    if args.fix and config.mode == "plan" and not args.diff:
        say("heph docs: plan mode writes nothing: the docstrings are shown as a diff", sys.stderr)
        args.diff = True
    if args.jobs:
        config = replace(config, docs=replace(config.docs, jobs=args.jobs))
    files = collect_files(workspace, args.paths, args.staged)
    if not args.fix:
        problems = run_check(workspace, files, config)
        if args.json:
            from hephaistus.ui.render import print_json

            print_json({"problems": [p.to_dict() for p in problems], "files": len(files)})
        else:
            _report_check(problems, len(files))
        return 1 if problems else 0
    from hephaistus.model.llm import ChatModel

    workspace_opened.config = config
    workspace_opened.choose_model(lambda line: say(line, sys.stderr))
    config = workspace_opened.config
    if args.verbose:
        say(f"heph: {describe_endpoint(config)}", sys.stderr)
    # A hook must not hang a commit: the docs timeout, and a timeout is not tried again.
    model = ChatModel(replace(config, timeout=config.docs.timeout))
    model.retry_timeouts = False
    model.timeout_setting = "`timeout` under [docs] in .heph.toml"
    return run_fix(
        workspace,
        files,
        config,
        model,
        Reporter(slow_after=min(SLOW_SECONDS, config.docs.timeout / 2)),
        max_files=args.max_files,
        diff=args.diff,
    )


def _report_check(problems: list[Any], files: int) -> None:
    """Each problem on stdout, then how many on stderr; a clean check says so, as linters do."""
    from hephaistus.wording import counted

    for problem in problems:
        say(str(problem))
    unreadable = sum(1 for p in problems if p.unreadable)
    if unreadable:
        print(f"{counted(unreadable, 'file')} cannot be parsed", file=sys.stderr)
    if len(problems) > unreadable:
        print(
            f"{len(problems) - unreadable} docstring problems; `heph docs --fix` writes them",
            file=sys.stderr,
        )
    if not problems:
        checked = counted(files, "file")
        print(f"heph docs: {checked} checked, no docstring missing or stale", file=sys.stderr)
