"""The `heph` command line: one-shot tasks, the REPL, and the subcommands of DESIGN.md.

Only the standard library is imported here at start-up: `heph --version` and `heph --help` must
be instant, so each command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hephaistus import __version__
from hephaistus.errors import EXIT_INTERRUPTED, EXIT_USAGE, ConfigError, HephError
from hephaistus.runtime.permissions import MODES

SUBCOMMANDS = ("docs", "sessions", "replay", "undo", "stats", "models", "init", "trust")

EPILOG = """\
commands:
  heph [OPTIONS] TASK...      run one task, print the answer, exit
  heph [OPTIONS]              interactive chat (in a terminal; /help lists its commands)
  heph sessions [--limit N]   list recorded sessions
  heph replay [ID|last]       re-render a recorded session, without the model or any tool
  heph undo [ID|last]         put back the files a session changed (--force: even if edited since)
  heph docs [--check|--fix] [--staged] [PATHS...]
                              find missing or stale docstrings (--check, offline), or write them
  heph stats                  per model: well-formed replies, edits applied, steps, tokens
  heph models                 the endpoint's models, the configured one marked
  heph init                   draft an AGENTS.md for this workspace (shown as a diff to approve)
  heph trust [--show|--forget]
                              show the settings this workspace's files hold that need trust
                              (they decide where the key goes and what runs), and trust it

exit codes: 0 answered, 1 the agent failed, 2 usage or configuration error,
            3 a write was refused, 130 interrupted
environment: OPENAI_API_KEY, OPENAI_BASE_URL, HEPH_MODEL, HEPH_MAX_STEPS, HEPH_TIMEOUT
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (sys.argv's by default) and return the exit code. heph's own
    errors are printed, never raised; Ctrl-C and a closed pipe end it as a shell tool would."""
    argv = list(sys.argv[1:] if argv is None else argv)
    previous = _end_on_signals()
    try:
        _current_folder()
        command, rest = split_command(argv)
        if command is None:
            return run_task(parse(_task_parser(), rest))
        args = parse_subcommand(command, rest)
        return COMMANDS[command](args)
    except HephError as error:
        if error.message:  # argparse has already explained a usage error
            prefix = "" if error.message.startswith("heph") else "heph: "
            say(f"{prefix}{error.message}", sys.stderr)
        return error.exit_code
    except KeyboardInterrupt as stop:
        print(f"heph: interrupted{f' by {stop}' if str(stop) else ''}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `heph ... | head -1`: the reader has all it wanted
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    finally:
        _restore_signals(previous)


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as the shell's own tools end


def _current_folder() -> None:
    """The folder heph was started in must still be there (a shell can stay in a deleted one)."""
    import os

    try:
        os.getcwd()
    except FileNotFoundError:
        raise ConfigError(
            "the current folder no longer exists (it was deleted or moved); cd into the project"
        ) from None


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so what is still buffered cannot fail again at exit."""
    import os

    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        pass
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test's capture)
        pass


def _end_on_signals() -> dict[int, Any]:
    """SIGTERM and SIGHUP (a closed terminal) end a run as Ctrl-C does: the session is ended
    and saved, files are never left half written. Returns the handlers it replaced."""
    import signal

    from hephaistus.errors import Terminated

    def stop(number: int, _frame: Any) -> None:
        raise Terminated(signal.Signals(number).name)

    replaced: dict[int, Any] = {}
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is None:
            continue
        try:
            replaced[number] = signal.signal(number, stop)
        except ValueError:  # not the main thread (an embedding program): leave them be
            break
    return replaced


def _restore_signals(previous: dict[int, Any]) -> None:
    import signal

    for number, handler in previous.items():
        signal.signal(number, handler)


def say(text: str, stream: Any = None) -> None:
    """Print text that came from outside heph (a server, a file, a session): with the
    environment's secrets hidden and control characters spelled out."""
    from hephaistus.redact import hide_values, secret_values
    from hephaistus.ui.escape import visible

    print(visible(hide_values(text, secret_values())), file=stream or sys.stdout)


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


def split_command(argv: list[str]) -> tuple[str | None, list[str]]:
    """A first positional word naming a subcommand selects it; `--` makes the rest a task."""
    takes_value = _options_with_values()
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == "--":
            break
        if word in takes_value:
            index += 2
        elif word.startswith("-"):
            index += 1
        elif word in SUBCOMMANDS:
            return word, argv[:index] + argv[index + 1 :]
        else:
            break
    return None, argv


def _options_with_values() -> set[str]:
    """The options that take a value (-m NAME), read from the parser itself."""
    return {
        option
        for action in _common_options()._actions
        if action.nargs != 0
        for option in action.option_strings
    }


def parse_subcommand(command: str, argv: list[str]) -> argparse.Namespace:
    """The subcommand's options. Words it does not take (`heph init the database schema`,
    `heph docs are out of date`) are most likely a task: an error that says how to send one."""
    parser = _subcommand_parser(command)
    try:
        args, stray = parser.parse_known_intermixed_args(argv)
    except SystemExit as exit_:
        if exit_.code in (0, None):
            raise
        raise _UsageExit() from None
    words = [w for w in stray if not w.startswith("-")]
    if command == "docs" and not stray:
        # Paths of which none exists, with no --check or --fix: words, not files.
        asked = args.check or args.fix or args.staged
        missing = not asked and args.paths and not any(Path(p).exists() for p in args.paths)
        words = args.paths if missing else []
    elif command in ("replay", "undo") and stray:
        words = [args.ref, *stray]
    if stray and not words:
        return parse(parser, argv)  # an unknown option: argparse says so
    if words:
        typed = " ".join([command, *(args.paths if command == "docs" else words)])
        raise ConfigError(
            f"heph {command} does not take {' '.join(words)!r}; to give heph this as a task, "
            f"write: heph -- {typed}"
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
        raise _UsageExit() from None


class _UsageExit(HephError):
    exit_code = EXIT_USAGE

    def __init__(self) -> None:
        super().__init__("")


def _common_options() -> argparse.ArgumentParser:
    # No abbreviations: `--tr` must not mean --trust, nor `--mode` --model.
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
        type=_positive_int,
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
        "--test-cmd",
        metavar="CMD",
        help="the project's test command for this run (run_command's `test`)",
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


def _task_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="heph",
        parents=[_common_options()],
        allow_abbrev=False,
        usage=f"heph [OPTIONS] [TASK...] | heph {{{','.join(SUBCOMMANDS)}}} ...",
        description="Hephaistus: an AI coding assistant that works inside your project folder.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("task", nargs="*", help="what to do, in plain words")
    return parser


def _subcommand_parser(command: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"heph {command}", parents=[_common_options()], allow_abbrev=False
    )
    if command == "sessions":
        parser.add_argument("--limit", type=_positive_int, default=20, metavar="N")
    elif command in ("replay", "undo"):
        parser.add_argument("ref", nargs="?", default="last", metavar="ID|last")
    if command == "trust":
        choice = parser.add_mutually_exclusive_group()
        choice.add_argument("--show", action="store_true", help="show the state, change nothing")
        choice.add_argument("--forget", action="store_true", help="forget the answer given")
    if command == "undo":
        parser.add_argument(
            "--force",
            action="store_true",
            help="undo even files that changed after heph wrote them",
        )
    elif command == "docs":
        parser.add_argument("--check", action="store_true")
        parser.add_argument("--fix", action="store_true")
        parser.add_argument("--staged", action="store_true")
        parser.add_argument(
            "--max-files",
            type=_positive_int,
            metavar="N",
            help="--fix: only the first N files that need docstrings",
        )
        parser.add_argument(
            "--diff",
            action="store_true",
            help="--fix: print the changes, write nothing (as --dry-run)",
        )
        parser.add_argument(
            "--jobs", type=_positive_int, metavar="N", help="--fix: files asked about at once"
        )
        parser.add_argument("paths", nargs="*")
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


# -- commands ------------------------------------------------------------------------------


def run_task(args: argparse.Namespace) -> int:
    """`heph TASK`: run one task (read from stdin when it is piped in), or start the chat when
    there is none and a terminal to chat in."""
    task = " ".join(args.task).strip()
    streaming = args.output == "jsonl"
    if streaming and args.json:
        raise ConfigError("--json and --output jsonl: choose one")
    if not task and sys.stdin.isatty() and not args.json and not streaming:
        return run_chat(args)
    if not task and not sys.stdin.isatty():
        task = sys.stdin.read().strip()
    if not task:
        raise ConfigError('no task given: heph "what to do" (see heph --help)')
    from hephaistus.llm import warm_up

    warm_up()  # the model client's import (most of a run's start) while the map is built
    from hephaistus.agent import Agent
    from hephaistus.runtime.policy import Policy
    from hephaistus.seams import NullSink
    from hephaistus.ui.approval import TerminalAsker
    from hephaistus.ui.render import ConsoleSink, print_json

    workspace, config = _workspace_and_model_config(args)
    sink: Any = NullSink() if args.json else ConsoleSink(verbose=args.verbose, quiet=args.quiet)
    if streaming:
        from hephaistus.ui.events import EventStream

        sink = EventStream()
    if args.verbose:
        sink.notice(describe_endpoint(config))
    # Ask only where a person can answer, and never when stdout is for machines.
    can_ask = sys.stdin.isatty() and not (args.json or streaming)
    policy = Policy(
        config.mode, dry_run=args.dry_run, asker=TerminalAsker(sink) if can_ask else None
    )
    agent = Agent(workspace, config, sink=sink, policy=policy, announce=args.verbose)
    if streaming:
        agent.sessions.tee = sink.record
    if args.continue_:
        agent.continue_conversation(_last_conversation(agent))
    outcome = agent.execute(task)
    message = outcome.message
    if outcome.status == "refused":
        message += (
            f". No terminal to ask in ({config.mode} mode asks): pass --mode edits to let heph "
            "write files, --yes (--mode auto) to also run commands and commit, or --dry-run "
            "to preview"
        )
    if args.json:
        print_json(
            {
                "outcome": outcome.status,
                "exit_code": outcome.exit_code,
                "message": message,
                "session": agent.session.id if agent.session else None,
                "steps": agent.session.steps if agent.session else 0,
                "usage": agent.session.usage.to_dict() if agent.session else {},
                "changed_files": sorted(agent.journal.changed_paths()),
                "mode": config.mode,
                "dry_run": args.dry_run,
            }
        )
    elif outcome.status != "answered":
        sink.failure(message)
    elif args.dry_run:
        sink.notice("dry run: nothing was written")
    return outcome.exit_code


def run_chat(args: argparse.Namespace) -> int:
    """The interactive REPL."""
    from hephaistus.agent import Agent
    from hephaistus.approvals import LEGACY_FILE, SavedApprovals
    from hephaistus.runtime.policy import Policy
    from hephaistus.ui.approval import TerminalAsker
    from hephaistus.ui.render import ConsoleSink, make_console
    from hephaistus.ui.repl import Repl, history_path

    workspace, config = _workspace_and_model_config(args)
    sink = ConsoleSink(verbose=args.verbose, quiet=args.quiet, console=make_console(stderr=False))
    if args.verbose:
        sink.notice(describe_endpoint(config))
    saved = SavedApprovals(workspace.root)
    asker = TerminalAsker(sink, saved=saved)
    policy = Policy(config.mode, dry_run=args.dry_run, asker=asker, saved=saved)
    if (workspace.heph_dir / LEGACY_FILE).exists():
        sink.notice(
            f"ignoring {workspace.heph_dir / LEGACY_FILE}: approvals come only from your own "
            "answers (kept outside the workspace), never from a workspace's files"
        )
    agent = Agent(workspace, config, sink=sink, policy=policy, announce=args.verbose)
    if args.continue_:
        agent.continue_conversation(_last_conversation(agent))
    return Repl(agent, sink, asker, history=history_path()).run()


def cmd_sessions(args: argparse.Namespace) -> int:
    """The workspace's recorded sessions, newest last, as a table (or JSON with --json)."""
    from hephaistus.analytics import as_dicts, session_rows
    from hephaistus.session import SessionStore

    workspace = _workspace(args)
    store = SessionStore(workspace.heph_dir / "sessions")
    _say_foreign_sessions(store)
    rows = session_rows(store, args.limit)
    if args.json:
        from hephaistus.ui.render import print_json

        print_json({"sessions": as_dicts(rows)})
        return 0
    if not rows:
        print(f"no sessions recorded yet in {store.folder}", file=sys.stderr)
        return 0
    from hephaistus.ui.tables import sessions_table

    print_table(sessions_table(rows))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    """The session on standard output (`> run.txt` and `| less` get all of it); with --json,
    its records."""
    from hephaistus.session import SessionStore, load_session
    from hephaistus.ui.render import ConsoleSink, make_console, print_json
    from hephaistus.ui.replay import replay

    workspace = _workspace(args)
    store = SessionStore(workspace.heph_dir / "sessions")
    _say_foreign_sessions(store)
    try:
        path = store.path_of(args.ref)
    except LookupError as error:
        raise ConfigError(str(error)) from None
    recorded = load_session(path)
    if args.json:
        print_json(recorded.to_dict())
        return 0
    console = make_console(stderr=False)
    replay(recorded, ConsoleSink(verbose=args.verbose, quiet=args.quiet, console=console))
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    """Take back the file changes of a session (`last`: the newest not undone yet); refused,
    saying why, when the files changed since, unless --force."""
    from hephaistus.checkpoints import (
        CheckpointStore,
        Damaged,
        Interleaved,
        NotInside,
        UndoConflict,
    )
    from hephaistus.session import SessionStore

    workspace = _workspace(args)
    workspace.check_heph_dir()  # undo writes its locks and records there
    store = CheckpointStore(workspace.root, workspace.heph_dir)
    foreign = store.foreign()
    if foreign:
        from hephaistus.wording import counted

        say(
            f"heph: ignoring {counted(len(foreign), 'checkpoint')} in {store.folder} that heph "
            "did not make on this machine (they came with the workspace's files)",
            sys.stderr,
        )
    if args.ref == "last":
        pending = [s for s in store.sessions_with_changes() if not store.is_undone(s)]
        if not pending:
            raise ConfigError(
                f"no session has changes left to undo in {workspace.root}; for a run in "
                "another folder, name it with -w (heph undo -w sandbox_workspace)"
            )
        session_id = pending[-1]
    else:
        try:
            session_id = SessionStore(workspace.heph_dir / "sessions").path_of(args.ref).stem
        except LookupError as error:
            raise ConfigError(str(error)) from None
    try:
        result = store.undo(session_id, force=args.force)
    except Damaged as damaged:
        raise HephError(f"not undone: {damaged}") from None
    except LookupError as error:
        raise ConfigError(str(error)) from None
    except NotInside as moved:
        raise HephError(f"not undone: {moved}") from None
    except UndoConflict as conflict:
        raise HephError(
            f"not undone: these files changed after heph wrote them: {', '.join(conflict.paths)}."
            " Undoing would lose those changes; pass --force to undo anyway"
        ) from None
    except Interleaved as tangled:
        from hephaistus.ui.undo import interleaved_message

        raise HephError(f"not undone: {interleaved_message(tangled.taken)}") from None
    from hephaistus.ui.undo import undo_report

    say(f"undid session {session_id}")
    for line in undo_report(result):
        say(line)
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
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
    workspace, config = _workspace_and_config(args, ask=args.fix, notice=args.fix)
    if args.jobs:
        config = replace(config, docs=replace(config.docs, jobs=args.jobs))
    files = collect_files(workspace, args.paths, args.staged)
    if not args.fix:
        problems = run_check(workspace, files, config)
        if args.json:
            from hephaistus.ui.render import print_json

            print_json({"problems": [p.to_dict() for p in problems], "files": len(files)})
        else:
            for problem in problems:
                say(str(problem))
            unreadable = sum(1 for p in problems if p.unreadable)
            if unreadable:
                from hephaistus.wording import counted

                print(f"{counted(unreadable, 'file')} cannot be parsed", file=sys.stderr)
            if len(problems) > unreadable:
                print(
                    f"{len(problems) - unreadable} docstring problems; "
                    "`heph docs --fix` writes them",
                    file=sys.stderr,
                )
        return 1 if problems else 0
    from hephaistus.llm import ChatModel

    config = _with_endpoint(config)
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


def cmd_models(args: argparse.Namespace) -> int:
    """The endpoint's models (a local server found when none is set), the configured one
    marked, with the context window where the server tells it."""
    from dataclasses import replace

    from hephaistus.discovery import ListingError, list_models
    from hephaistus.llm import OPENAI_URL

    _, config = _workspace_and_config(args)
    if not config.resolved_api_key():
        from hephaistus.endpoint import local_server

        found = local_server()
        say(f"heph: {found.name} at {found.base_url} (found on this machine)", sys.stderr)
        config = replace(config, base_url=found.base_url)
    if args.verbose:
        say(f"heph: {describe_endpoint(config)}", sys.stderr)
    url = config.base_url or OPENAI_URL
    try:
        models = list_models(url, config.resolved_api_key())
    except ListingError as error:
        raise HephError(str(error)) from None
    from hephaistus.endpoint import model_used, served_window

    if config.is_local:
        models = [
            m if m.window else replace(m, window=served_window(url, m.id, config)) for m in models
        ]
    configured = model_used(config, [m.id for m in models])
    if args.json:
        from hephaistus.ui.render import print_json

        listed = [{**m.__dict__, "configured": m.id == configured} for m in models]
        print_json({"base_url": url, "models": listed})
        return 0
    from hephaistus.ui.tables import models_table

    print_table(models_table(models, configured))
    if configured and configured not in {m.id for m in models}:
        say(f"heph: the configured model {configured} is not among them", sys.stderr)
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    """Draft an AGENTS.md from what heph can see; written as any write is: shown, approved."""
    from hephaistus.agents_md import create
    from hephaistus.errors import Refused
    from hephaistus.runtime.policy import Policy
    from hephaistus.ui.approval import TerminalAsker
    from hephaistus.ui.render import ConsoleSink

    workspace, config = _workspace_and_config(args)
    sink = ConsoleSink(verbose=args.verbose, quiet=args.quiet)
    asker = TerminalAsker(sink) if sys.stdin.isatty() else None
    policy = Policy(config.mode, dry_run=args.dry_run, asker=asker)
    result, _ = create(workspace, config, policy, sink)
    if args.dry_run:
        say("dry run: AGENTS.md was not written", sys.stderr)
    elif result.refused:
        raise Refused(
            f"{result.output}. Without a terminal to ask: pass --mode edits (or --yes) to "
            "write it, or --dry-run to see it"
        )
    elif not result.ok:
        raise HephError(result.output)
    else:
        say("wrote AGENTS.md: add what only you know (what not to touch, how to release)")
    return 0


def cmd_trust(args: argparse.Namespace) -> int:
    """Show the settings of the workspace's files that need trust, and record the person's
    answer (asked in a terminal; `--yes` without one). Never contacts the model."""
    from hephaistus import trust
    from hephaistus.errors import Refused

    workspace = _workspace(args)
    root = workspace.root
    store = trust.TrustStore()
    if args.forget:
        had = store.forget(root)
        say(f"{'forgot' if had else 'there was no'} trust answer for {root}", sys.stderr)
        return 0
    settings = trust.settings_needing_trust(root)
    state = store.state(root, settings)
    if args.show or not settings or state == "trusted":
        say(trust.report(root, settings, state, store))
        return 0
    if args.yes:  # what is trusted is said, even when nobody is asked
        say(trust.report(root, settings, state, store))
        answer: bool | None = True
    elif sys.stdin.isatty():
        from hephaistus.ui.approval import ask_on_stderr

        before = store.answered(root) if state == "changed" else None
        answer = trust.ask_to_trust(settings, ask_on_stderr, before=before)
    else:
        say(trust.report(root, settings, state, store))
        raise Refused("no terminal to ask in: pass --yes to trust this workspace")
    if answer is None:
        raise Refused("no answer: the workspace stays untrusted")
    store.record(root, settings, answer)
    if answer:
        say(f"trusted {root}: these settings apply from now on, until they change")
    else:
        say(f"not trusted: heph ignores these settings in {root}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    """Per model, from the recorded sessions."""
    from hephaistus.analytics import collect
    from hephaistus.session import SessionStore

    workspace = _workspace(args)
    store = SessionStore(workspace.heph_dir / "sessions")
    _say_foreign_sessions(store)
    rows = collect(store)
    if args.json:
        from hephaistus.ui.render import print_json

        print_json({"models": [row.to_dict() for row in rows]})
    elif rows:
        from hephaistus.ui.tables import stats_table

        print_table(stats_table(rows))
    else:
        print(f"no sessions recorded yet in {workspace.heph_dir / 'sessions'}", file=sys.stderr)
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "sessions": cmd_sessions,
    "replay": cmd_replay,
    "undo": cmd_undo,
    "docs": cmd_docs,
    "models": cmd_models,
    "init": cmd_init,
    "stats": cmd_stats,
    "trust": cmd_trust,
}


# -- shared set-up -------------------------------------------------------------------------


def _workspace(args: argparse.Namespace) -> Any:
    from hephaistus.config import find_workspace
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
    return workspace


def _workspace_and_config(
    args: argparse.Namespace, *, ask: bool = True, notice: bool = True
) -> tuple[Any, Any]:
    """The workspace and its settings. Its files' settings that need trust apply only once
    it is trusted: asked once in a terminal (when `ask`), else left out and said so."""
    from hephaistus import trust
    from hephaistus.config import load_config

    workspace = _workspace(args)
    decision = trust.decide(
        workspace.root, for_this_run=args.trust, ask=_trust_question(args) if ask else None
    )
    trust.enforce(workspace.root, decision)
    if notice and not decision.trusted:
        say(trust.notice(decision), sys.stderr)
    flags = {
        "model": args.model,
        "mode": _mode_flag(args),
        "base_url": args.base_url,
        "max_steps": args.max_steps,
        "test_cmd": args.test_cmd,
        "verify_after_edits": ("test",) if args.check_after_edits else None,
    }
    config = load_config(workspace.root, flags, trusted=decision.trusted)
    if notice:
        for why in config.ignored:
            say(why, sys.stderr)
    return workspace, config


def _mode_flag(args: argparse.Namespace) -> str | None:
    """The mode the flags ask for: --mode, or --yes (which is --mode auto)."""
    if args.yes and args.mode not in (None, "auto"):
        raise ConfigError(f"--yes is --mode auto: it cannot go with --mode {args.mode}")
    return "auto" if args.yes else args.mode


def _trust_question(args: argparse.Namespace) -> Callable[[str], str] | None:
    """How to ask the person whether to trust the workspace: only where someone can answer
    (a terminal, and no machine reading stdout)."""
    if args.json or args.output == "jsonl" or not (sys.stdin.isatty() and sys.stderr.isatty()):
        return None
    from hephaistus.ui.approval import ask_on_stderr

    return ask_on_stderr


def _workspace_and_model_config(args: argparse.Namespace) -> tuple[Any, Any]:
    """As `_workspace_and_config`, and a model endpoint must be configured (or found)."""
    workspace, config = _workspace_and_config(args)
    return workspace, _with_endpoint(config)


def _with_endpoint(config: Any) -> Any:
    """`config` with its endpoint and model settled (see endpoint.with_endpoint)."""
    from hephaistus.endpoint import with_endpoint

    return with_endpoint(config, lambda line: say(line, sys.stderr))


def describe_endpoint(config: Any) -> str:
    """The endpoint, the model and the key a run uses, and where each came from (-v)."""
    from hephaistus.endpoint import describe

    return describe(config)


def _say_foreign_sessions(store: Any) -> None:
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


def _last_conversation(agent: Any) -> list[dict[str, str]]:
    from hephaistus.session import load_session

    _say_foreign_sessions(agent.sessions)
    try:
        path = agent.sessions.path_of("last")
    except LookupError:
        raise ConfigError("--continue: there is no earlier session in this workspace") from None
    return load_session(path).messages
