"""The conversations an editor keeps by id. `session/new` gives a conversation its id for good;
each turn's session records it (its `thread`), so the newest of them holds the whole
conversation. The ids heph gave out are kept in the user's state folder (no repository can
plant one), so a conversation with no turn yet loads as empty, and an id heph never gave is an
error, not an empty chat.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hephaistus.engine.agent import Agent
    from hephaistus.records.session import RecordedSession, SessionStore

HEADER_BYTES = 64 * 1024  # read of a session's first line, to find its conversation
ISSUED = re.compile(r"chat-[0-9]{8}-[0-9]{6}\.[0-9]{6}-[0-9a-f]{6}")


SAFE_NAME = re.compile(r"[\w-][\w.-]{0,127}")  # a file name of the state folder, never a path


def issue(root: Path, thread: str) -> None:
    """Remember that heph gave out `thread` for the workspace at `root`."""
    keep_mode(root, thread, "")


def keep_mode(root: Path, thread: str, mode: str) -> None:
    """The conversation `thread` is in `mode` now: a reconnect loads it so (an editor sets a
    mode, then prompts over a new connection)."""
    path = _file(root, thread)
    if path is None:
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    with open(fd, "w", encoding="utf-8") as file:
        file.write(mode)


def kept_mode(root: Path, thread: str) -> str:
    """The mode the conversation `thread` was last in, or "" when none was kept."""
    path = _file(root, thread, make=False)
    try:  # never through a link, never stuck on a named pipe
        fd = os.open(path or "", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(fd, encoding="utf-8") as file:
            return file.read(16).strip()
    except (OSError, ValueError):
        return ""


def was_issued(root: Path, thread: str) -> bool:
    """Whether heph gave out `thread` for the workspace at `root`."""
    path = _file(root, thread, make=False)
    return bool(ISSUED.fullmatch(thread)) and path is not None and path.is_file()


def _file(root: Path, thread: str, *, make: bool = True) -> Path | None:
    from hephaistus.settings.userdirs import workspace_folder

    if not SAFE_NAME.fullmatch(thread):
        return None
    return workspace_folder(root, "threads", make=make) / thread


def recorded(agent: Agent, thread: str) -> RecordedSession | None:
    """The conversation `thread` names as heph recorded it: the newest session of the
    conversation, or the recorded session of exactly that id; None for an id heph gave out
    whose conversation has no turn yet. LookupError for any other (a prefix, `last`, an empty
    or strange id: an editor names a conversation by the whole id it was given)."""
    from hephaistus.records.session import load_session

    if not SAFE_NAME.fullmatch(thread):
        raise LookupError("that is no id heph gives a conversation or a session")
    newest = _latest_of_thread(agent.sessions, thread)
    if newest is not None:
        return load_session(agent.sessions.path_of(newest))
    if was_issued(agent.workspace.root, thread):
        return None
    if agent.sessions.is_ours(thread):
        return load_session(agent.sessions.folder / f"{thread}.jsonl")
    raise LookupError(
        f"'{thread}' matches no conversation or session heph keeps for "
        f"{agent.workspace.root}; `heph sessions` lists them"
    )


def _latest_of_thread(sessions: SessionStore, thread: str) -> str | None:
    """The newest of heph's sessions of the conversation `thread` (in each header)."""
    import json

    for name in reversed(sessions.names()):
        try:  # never through a link, never stuck on a named pipe
            fd = os.open(
                sessions.folder / f"{name}.jsonl",
                os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
            )
            with open(fd, "rb") as file:
                header = json.loads(file.readline(HEADER_BYTES))
        except (OSError, ValueError):
            continue
        if isinstance(header, dict) and header.get("thread") == thread and sessions.is_ours(name):
            return name
    return None
