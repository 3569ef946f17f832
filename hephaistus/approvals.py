"""What a tool asks the person to approve, and the answers.

Three kinds of request: a write (the FileChange with its diff), a project command, a commit.
Whoever approves (the terminal prompt, --yes, --dry-run, a test) is an Approver (see seams).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Union

if TYPE_CHECKING:
    from hephaistus.tools.results import FileChange


@dataclass(frozen=True)
class CommandRequest:
    name: str  # the project command's name, e.g. test
    command_line: str  # as it will run, for the person to read


@dataclass(frozen=True)
class CommitRequest:
    paths: tuple[str, ...]
    message: str


Request = Union["FileChange", CommandRequest, CommitRequest]  # a write asks with its FileChange

Decision = Literal["write", "skip", "decline", "refuse"]
# "write": go ahead; "skip": dry run, show but do not do it; "decline": the person said no and the
# model may try something else; "refuse": no one could approve it, so the run ends (exit 3).


def approve_all(request: Request) -> Decision:
    return "write"
