"""`heph TASK` (one task, then exit) and `heph` in a terminal (the chat)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from hephaistus.cli.common import (
    describe_endpoint,
    opened_for_a_model,
    say_foreign_sessions,
)
from hephaistus.errors import ConfigError

if TYPE_CHECKING:
    from hephaistus.engine.agent import Agent
    from hephaistus.eventsink import EventSink
    from hephaistus.records.session import RecordedSession


def run_task(args: argparse.Namespace) -> int:
    """`heph TASK`: run one task (read from stdin when it is piped in), or start the chat when
    there is none and a terminal to chat in."""
    task = " ".join(args.task).strip()
    streaming = args.output == "jsonl"
    if streaming and args.json:
        raise ConfigError("--json and --output jsonl: choose one")
    if not task and sys.stdin.isatty() and not args.json and not streaming:
        return run_chat(args)
    if task:
        checked_task(task.encode("utf-8", "surrogateescape"), "the task")
    elif not sys.stdin.isatty():
        task = read_task(sys.stdin)
    if not task:
        raise ConfigError('no task given: heph "what to do" (see heph --help)')
    from hephaistus.model.llm import warm_up

    warm_up()  # the model client's import (most of a run's start) while the map is built
    from hephaistus.eventsink import NullSink
    from hephaistus.ui.approval import TerminalAsker
    from hephaistus.ui.render import ConsoleSink, print_json

    done = opened_for_a_model(args)
    config = done.config
    sink: EventSink = (
        NullSink() if args.json else ConsoleSink(verbose=args.verbose, quiet=args.quiet)
    )
    stream = None
    if streaming:
        from hephaistus.ui.events import EventStream

        sink = stream = EventStream()
    if args.verbose:
        sink.notice(describe_endpoint(config))
    # Ask only where a person can answer: in a terminal, on stderr, whatever stdout is for
    # (--json and --output jsonl keep it for machines; the diffs asked about go to stderr).
    asker = None
    if sys.stdin.isatty():
        asker = TerminalAsker(sink if isinstance(sink, ConsoleSink) else ConsoleSink())
    agent = done.agent(sink, done.policy(asker, dry_run=args.dry_run), announce=args.verbose)
    if stream is not None:
        agent.sessions.tee = stream.record
    if args.continue_:
        agent.continue_conversation(last_conversation(agent))
    try:
        outcome = agent.execute(task)
    finally:
        agent.close()
    message = outcome.message
    if outcome.status == "refused":
        message += f". {unblocking(message)}"
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
                **({"plan": str(agent.plan_path)} if agent.plan_path else {}),
            }
        )
    elif outcome.status != "answered":
        sink.failure(message)
    elif args.dry_run:
        sink.notice("dry run: nothing was written")
    return outcome.exit_code


MAX_TASK_BYTES = 2**20  # a task is words for the model; a larger input belongs in a file


def read_task(stream: Any) -> str:
    """The task piped in on `stream`, read no further than the bound (a 12 MB log or a binary
    file is refused at once, never recorded)."""
    source = getattr(stream, "buffer", None)
    if source is None:  # a text stream (a test's): its characters, as UTF-8
        data = stream.read(MAX_TASK_BYTES + 1).encode("utf-8", "surrogateescape")
    else:
        data = source.read(MAX_TASK_BYTES + 1)
    return checked_task(data, "the task on standard input").strip()


def checked_task(data: bytes, what: str) -> str:
    """`data` as the task's text: a configuration error when it is over MAX_TASK_BYTES or is
    not text (not UTF-8, or holding NUL bytes)."""
    if len(data) > MAX_TASK_BYTES:
        raise ConfigError(
            f"{what} is over {MAX_TASK_BYTES // 2**20} MB: a task is what to do, in words; put "
            "a large input in a file in the workspace and name the file in the task"
        )
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or "\x00" in text:
        raise ConfigError(
            f"{what} is not text (binary data): a task is what to do, in words; to have heph "
            "look at a file, name it in the task"
        )
    return text


def run_chat(args: argparse.Namespace) -> int:
    """The interactive REPL."""
    from hephaistus.settings.approvals import LEGACY_FILE, SavedApprovals
    from hephaistus.ui.approval import TerminalAsker
    from hephaistus.ui.render import ConsoleSink, make_console
    from hephaistus.ui.repl import Repl, history_path

    done = opened_for_a_model(args)
    workspace, config = done.workspace, done.config
    sink = ConsoleSink(verbose=args.verbose, quiet=args.quiet, console=make_console(stderr=False))
    if args.verbose:
        sink.notice(describe_endpoint(config))
    saved = SavedApprovals(workspace.root)
    asker = TerminalAsker(sink, saved=saved)
    policy = done.policy(asker, dry_run=args.dry_run, saved=saved)
    if (workspace.heph_dir / LEGACY_FILE).exists():
        sink.notice(
            f"ignoring {workspace.heph_dir / LEGACY_FILE}: approvals come only from your own "
            "answers (kept outside the workspace), never from a workspace's files"
        )
    agent = done.agent(sink, policy, announce=args.verbose)
    if args.continue_:
        agent.continue_conversation(last_conversation(agent))
    if agent.mcp is not None:
        agent.mcp.warm()  # while the person types, the servers start
    try:
        return Repl(agent, sink, asker, history=history_path()).run()
    finally:
        agent.close()


def last_conversation(agent: Agent) -> RecordedSession:
    """The workspace's last session, for --continue."""
    from hephaistus.records.session import load_session

    say_foreign_sessions(agent.sessions)
    try:
        path = agent.sessions.path_of("last")
    except LookupError:
        raise ConfigError("--continue: there is no earlier session in this workspace") from None
    return load_session(path)


def unblocking(refusal: str) -> str:
    """What lets a run without a terminal do what its mode would have asked about."""
    if refusal.startswith("commit not made"):  # tools/git.py: the workspace's git needs trust
        return "--yes never trusts a workspace: `heph trust` shows what it would trust"
    if refusal.startswith("write not approved"):
        return (
            "To let heph write files unasked, pass --mode edits (--yes also runs commands and "
            "commits); --dry-run shows the changes"
        )
    return (
        "To let heph run commands and commit unasked, pass --yes (= --mode auto); --dry-run "
        "shows what it would do"
    )
