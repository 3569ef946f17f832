"""The commands about what runs left behind: `heph sessions`, `replay`, `undo` and `stats`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hephaistus.cli.common import print_table, say, say_foreign_sessions, workspace_of
from hephaistus.errors import ConfigError, HephError

if TYPE_CHECKING:
    from hephaistus.records.checkpoints import CheckpointStore
    from hephaistus.workspace import Workspace


def sessions(args: argparse.Namespace) -> int:
    """The workspace's recorded sessions, newest last, as a table (or JSON with --json)."""
    from hephaistus.records.analytics import as_dicts, session_rows
    from hephaistus.records.session import SessionStore

    workspace = workspace_of(args)
    store = SessionStore(workspace.heph_dir / "sessions")
    say_foreign_sessions(store)
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


def replay(args: argparse.Namespace) -> int:
    """The session on standard output (`> run.txt` and `| less` get all of it); with --json,
    its records."""
    from hephaistus.records.session import SessionStore, load_session
    from hephaistus.ui.render import ConsoleSink, make_console, print_json
    from hephaistus.ui.replay import replay

    workspace = workspace_of(args)
    store = SessionStore(workspace.heph_dir / "sessions")
    say_foreign_sessions(store)
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


def _task_of(workspace: Workspace, session_id: str) -> str:
    """`: "the task"` of a session, as undo names the run it took back ("" when unknown)."""
    from hephaistus.escape import visible
    from hephaistus.records.session import SessionStore, load_session

    try:
        recorded = load_session(SessionStore(workspace.heph_dir / "sessions").path_of(session_id))
    except (LookupError, OSError, ValueError):
        return ""
    task = " ".join(str(recorded.header.get("task") or "").split())
    return f' ("{visible(task[:70])}{"…" if len(task) > 70 else ""}")' if task else ""


def undo(args: argparse.Namespace) -> int:
    """Take back the file changes of a session (`last`: the newest not undone yet); refused,
    saying why, when the files changed since, unless --force."""
    from hephaistus.records.checkpoints import (
        CheckpointStore,
        Damaged,
        Interleaved,
        NotInside,
        UndoConflict,
    )
    from hephaistus.records.session import SessionStore
    from hephaistus.records.undo import undo as undo_session

    workspace = workspace_of(args)
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
        pending = _pending(store)
        if not pending:
            raise ConfigError(_nothing_to_undo(workspace.root))
        session_id = pending[-1]
    else:
        try:
            session_id = SessionStore(workspace.heph_dir / "sessions").path_of(args.ref).stem
        except LookupError as error:
            raise ConfigError(str(error)) from None
    try:
        result = undo_session(store, session_id, force=args.force)
    except LookupError as error:
        raise ConfigError(str(error)) from None
    except (Damaged, NotInside, UndoConflict, Interleaved) as refused:
        from hephaistus.records.undo_words import refusal

        raise HephError(refusal(refused, "pass --force")) from None
    from hephaistus.records.undo_words import undo_report

    say(f"undid session {session_id}{_task_of(workspace, session_id)}")
    for line in undo_report(result):
        say(line)
    return 0


def _pending(store: CheckpointStore) -> list[str]:
    """The sessions of a checkpoint store with changes not undone yet, oldest first."""
    return [s for s in store.sessions_with_changes() if not store.is_undone(s)]


def _nothing_to_undo(root: Path) -> str:
    """Nothing to undo in `root`, and how to name another workspace: the folders in it whose
    runs have changes to undo (`-w sandbox_workspace` after the quick start), if any."""
    import os
    import shlex

    message = f"no session has changes left to undo in {root}"
    elsewhere = [os.path.relpath(folder) for folder in _folders_with_changes(root)]
    if not elsewhere:
        return f"{message}; for a run in another folder, name that folder with -w"
    where = ", ".join(elsewhere)
    return f"{message}; there are some in {where}: heph undo -w {shlex.quote(elsewhere[0])}"


def _folders_with_changes(root: Path) -> list[Path]:
    """The folders right under `root` where heph has changes to undo, by name."""
    from hephaistus.records.checkpoints import CheckpointStore

    try:
        folders = sorted(p for p in root.iterdir() if (p / ".heph" / "checkpoints").is_dir())
    except OSError:
        return []
    return [f for f in folders if _pending(CheckpointStore(f, f / ".heph"))]


def stats(args: argparse.Namespace) -> int:
    """Per model, from the recorded sessions."""
    from hephaistus.records.analytics import collect
    from hephaistus.records.session import SessionStore

    workspace = workspace_of(args)
    store = SessionStore(workspace.heph_dir / "sessions")
    say_foreign_sessions(store)
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
