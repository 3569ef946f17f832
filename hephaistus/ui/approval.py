"""Asking the person, in the terminal, about an effect the policy asks about: a write
(`[y]es / [n]o / [a]ll / [d]iff`), a project command (`[y]es / [n]o / [a]ll commands`), a commit
(`[y]es / [n]o`). It only asks: what the answer allows is the policy's (runtime.policy).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hephaistus.ui.escape import visible
from hephaistus.values import CommandRequest, CommitRequest, FileChange, ToolCallRequest

if TYPE_CHECKING:
    from hephaistus.approvals import SavedApprovals
    from hephaistus.runtime.policy import Answer
    from hephaistus.values import Proposal

PREVIEW_LINES = 40


def ask_on_stderr(question: str) -> str:
    """Ask on stderr, so a question never ends up in the answer piped from stdout."""
    sys.stderr.write(question)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


class TerminalAsker:
    """The Asker of a run with a person at hand. `ask` puts one question and returns the line
    typed (EOFError when none can come); `saved` is where an approval for good would go, so
    the person is offered that only where it can be kept."""

    def __init__(
        self,
        sink: Any,
        ask: Callable[[str], str] | None = None,
        saved: SavedApprovals | None = None,
    ) -> None:
        self.sink = sink
        self.ask = ask or ask_on_stderr
        self.saved = saved

    def __call__(self, proposal: Proposal) -> Answer:
        request = proposal.request
        if isinstance(request, CommandRequest):
            return self._command(request)
        if isinstance(request, CommitRequest):
            return self._commit(request)
        if isinstance(request, FileChange):
            return self._write(request)
        if isinstance(request, ToolCallRequest):
            question = (
                f"Call {visible(request.tool)} of the MCP server {visible(request.server)} with "
                f"{visible(request.arguments)}? [y]es / [n]o / [a]lways this tool in this chat: "
            )
            return self._choose(question, {"y": "yes", "a": "session"})
        return self._choose(f"Allow {visible(str(request))}? [y]es / [n]o: ", {"y": "yes"})

    def _choose(self, question: str, answers: dict[str, Answer]) -> Answer:
        """Ask until the first letter typed is one of `answers` (or n, for no)."""
        while True:
            choice = self.ask(question).strip().lower()[:1]
            if choice == "n":
                return "no"
            if choice in answers:
                return answers[choice]

    def _commit(self, request: CommitRequest) -> Answer:
        names = visible(", ".join(request.paths))
        question = f"Commit {names} with message {visible(request.message)!r}? [y]es / [n]o: "
        return self._choose(question, {"y": "yes"})

    def _command(self, request: CommandRequest) -> Answer:
        origin = f" ({visible(request.source)})" if request.source else ""
        if request.name == "shell":  # each line is asked about; [a] trusts the shell for the chat
            question = (
                f"Run in the sandbox: {visible(request.command_line)}? "
                "[y]es / [n]o / [a]ll shell commands: "
            )
            return self._choose(question, {"y": "yes", "a": "session"})
        question = (
            f"Run `{visible(request.name)}`{origin}: {visible(request.command_line)}? "
            "[y]es / [n]o / [a]ll commands: "
        )
        # Yes holds for this command for the rest of the run or chat: it is asked once.
        return self._choose(question, {"y": "session", "a": "all"})

    def _write(self, change: FileChange) -> Answer:
        lines = change.diff.splitlines()
        preview = "\n".join(lines[:PREVIEW_LINES])
        if len(lines) > PREVIEW_LINES:
            preview += f"\n… {len(lines) - PREVIEW_LINES} more lines ([d] shows all)"
        self.sink.show_diff(preview + "\n")
        what = visible(change.describe())
        question = f"{what[:1].upper()}{what[1:]}? [y]es / [n]o / [a]ll / [d]iff: "
        while True:
            choice = self.ask(question).strip().lower()[:1]
            if choice == "y":
                return "yes"
            if choice == "n":
                return "no"
            if choice == "a":
                return self._for_good()
            if choice == "d":
                self.sink.show_diff(change.diff)

    def _for_good(self) -> Answer:
        """[a]ll writes: for the rest of the run or chat, and for good if the person says so."""
        if self.saved is None or self.saved.writes:
            return "session"
        try:
            answer = self.ask(
                "Approve writes (not commands or commits) in this workspace from now on too "
                f"(saved in {self.saved.path})? [y/N]: "
            )
        except EOFError:
            return "session"
        return "forever" if answer.strip().lower().startswith("y") else "session"
