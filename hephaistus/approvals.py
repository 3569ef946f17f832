"""What a tool asks the person to approve, and the answers.

Three kinds of request: a write (the FileChange with its diff), a project command, a commit.
Whoever approves (the terminal prompt, --yes, --dry-run, a test) is an Approver (see seams).
What the person approved for good is kept in the user's state folder, never in the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Union

from hephaistus.userstate import WorkspaceRecords

if TYPE_CHECKING:
    from hephaistus.tools.results import FileChange


@dataclass(frozen=True)
class CommandRequest:
    """A request to run a project command, as the person is asked about it."""

    name: str  # the project command's name, e.g. test
    command_line: str  # as it will run, for the person to read
    source: str = ""  # where the command came from: "configured in .heph.toml", "detected: ..."


@dataclass(frozen=True)
class CommitRequest:
    """A request to commit `paths` (named from the top of the repository) with `message`."""

    paths: tuple[str, ...]
    message: str


Request = Union["FileChange", CommandRequest, CommitRequest]  # a write asks with its FileChange

Decision = Literal["write", "skip", "decline", "refuse"]
# "write": go ahead; "skip": dry run, show but do not do it; "decline": the person said no and the
# model may try something else; "refuse": no one could approve it, so the run ends (exit 3).


def approve_all(request: Request) -> Decision:
    """Approve everything: the default Approver, for tests and code that asks no one."""
    return "write"


class SavedApprovals:
    """Approvals the person made permanent for a workspace, per effect and name ("write";
    "command:test" approves that command only). Kept in the user's state folder, keyed by the
    workspace's real path: a workspace's own files never approve anything."""

    def __init__(self, root: Path, records: WorkspaceRecords | None = None) -> None:
        self.root = root
        self.records = records or WorkspaceRecords(RECORDS)
        allowed = self.records.get(root).get("allowed", [])
        self.allowed = (
            {a for a in allowed if isinstance(a, str)} if isinstance(allowed, list) else set()
        )

    @property
    def path(self) -> Path:
        return self.records.path

    @property
    def writes(self) -> bool:
        return self.allows("write")

    def allows(self, effect: str, name: str = "") -> bool:
        """Whether `effect` (with `name`, for a command) was approved for good here."""
        return _entry(effect, name) in self.allowed

    def allow(self, effect: str, name: str = "") -> None:
        """Approve `effect` (with `name`, for a command) for good, and save it."""
        self.allowed.add(_entry(effect, name))
        self.records.put(self.root, {"allowed": sorted(self.allowed)})

    def allow_writes(self) -> None:
        """Approve every write in this workspace for good."""
        self.allow("write")

    def clear(self) -> None:
        """Forget everything approved for good in this workspace."""
        self.allowed = set()
        self.records.put(self.root, None)


RECORDS = "approvals.json"
LEGACY_FILE = "approvals.json"  # under .heph/: what earlier versions kept, never read now


def _entry(effect: str, name: str) -> str:
    return f"{effect}:{name}" if name else effect
