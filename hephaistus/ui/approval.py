"""Asking the person before each write (`[y]es / [n]o / [a]ll / [d]iff`), project command and
commit.

Without a terminal and without --yes nothing can be asked, so all three are refused; --dry-run
shows each change and does nothing. Each kind is approved on its own: `[a]ll` writes (or writes
saved for the workspace) never approve a command or a commit, and one command never another.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from hephaistus.approvals import CommandRequest, CommitRequest, Decision, Request, SavedApprovals
from hephaistus.tools.results import FileChange
from hephaistus.ui.escape import visible

PREVIEW_LINES = 40


def ask_on_stderr(question: str) -> str:
    """Ask on stderr, so a question never ends up in the answer piped from stdout."""
    sys.stderr.write(question)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


class Approval:
    """The Approver of a run with a person at hand (or --yes, or --dry-run): asks before each
    write, project command and commit; an `[a]ll` holds for the rest of the run or chat."""

    def __init__(
        self,
        sink: Any,
        *,
        yes: bool = False,
        dry_run: bool = False,
        interactive: bool | None = None,
        ask: Callable[[str], str] | None = None,
        saved: SavedApprovals | None = None,
    ) -> None:
        self.sink = sink
        self.dry_run = dry_run
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self.ask = ask or ask_on_stderr
        self.saved = saved
        self.yes = yes  # --yes: writes, commands and commits (never trust)
        self.commands_approved: set[str] = set()
        self.all_commands = False
        # Saved approvals count only where someone could have been asked.
        self.writes_approved = yes or bool(self.interactive and saved and saved.writes)

    def __call__(self, request: Request) -> Decision:
        if isinstance(request, CommandRequest):
            return self.approve_command(request.name, request.command_line, request.source)
        if isinstance(request, CommitRequest):
            return self._approve_commit(request)
        if self.dry_run:
            self.sink.show_diff(request.diff)
            return "skip"
        if self.writes_approved:
            return "write"
        if not self.interactive:
            return "refuse"
        return self._prompt(request)

    def _approve_commit(self, request: CommitRequest) -> Decision:
        if self.dry_run:
            return "skip"
        if self.yes:
            return "write"
        if not self.interactive:
            return "refuse"
        names = visible(", ".join(request.paths))
        while True:
            try:
                answer = self.ask(
                    f"Commit {names} with message {visible(request.message)!r}? [y]es / [n]o: "
                )
            except EOFError:
                return "refuse"
            choice = answer.strip().lower()[:1]
            if choice in ("y", "n"):
                return "write" if choice == "y" else "decline"

    def _prompt(self, change: FileChange) -> Decision:
        lines = change.diff.splitlines()
        preview = "\n".join(lines[:PREVIEW_LINES])
        if len(lines) > PREVIEW_LINES:
            preview += f"\n… {len(lines) - PREVIEW_LINES} more lines ([d] shows all)"
        self.sink.show_diff(preview + "\n")
        verb = "Create" if change.created else "Change"
        while True:
            try:
                answer = self.ask(f"{verb} {visible(change.path)}? [y]es / [n]o / [a]ll / [d]iff: ")
            except EOFError:
                return "refuse"
            choice = answer.strip().lower()[:1]
            if choice == "y":
                return "write"
            if choice == "a":
                self.writes_approved = True
                self._offer_to_remember()
                return "write"
            if choice == "n":
                return "decline"
            if choice == "d":
                self.sink.show_diff(change.diff)

    def approve_command(self, name: str, shown: str, source: str = "") -> Decision:
        """Whether project command `name` may run: asked once per command and session, saying
        where the command came from (a repository's own file, or detected)."""
        if self.dry_run:
            return "skip"
        if self.yes or name in self.commands_approved or self.all_commands:
            return "write"
        if not self.interactive:
            return "refuse"
        origin = f" ({visible(source)})" if source else ""
        while True:
            try:
                answer = self.ask(
                    f"Run `{visible(name)}`{origin}: {visible(shown)}? "
                    "[y]es / [n]o / [a]ll commands: "
                )
            except EOFError:
                return "refuse"
            choice = answer.strip().lower()[:1]
            if choice == "y":
                self.commands_approved.add(name)
                return "write"
            if choice == "a":
                self.all_commands = True
                return "write"
            if choice == "n":
                return "decline"

    def _offer_to_remember(self) -> None:
        if self.saved is None or self.saved.writes:
            return
        try:
            answer = self.ask(
                "Approve writes (not commands) in this workspace from now on too "
                f"(saved in {self.saved.path})? [y/N]: "
            )
        except EOFError:
            return
        if answer.strip().lower().startswith("y"):
            self.saved.allow_writes()
