"""Asking the person, in the terminal, about an effect the policy asks about: a write
(`[y]es / [n]o / [a]ll / [d]iff`), a project command (`[y]es / [n]o / [a]ll commands`), a commit
(`[y]es / [n]o`). It only asks: what the answer allows is the policy's (runtime.policy).

Each question is answered by one key pressed after it appeared (no Enter): what was typed before
(a next task typed while the model worked) is never an answer, any other key asks again, Ctrl-C
stops the turn. Without a terminal, a question reads a line, as pipes give them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from hephaistus.escape import visible
from hephaistus.values import CommandRequest, CommitRequest, FileChange, ToolCallRequest

if TYPE_CHECKING:
    from hephaistus.mcp.elicit import Question, Reply
    from hephaistus.runtime.policy import Answer
    from hephaistus.settings.approvals import SavedApprovals
    from hephaistus.values import Proposal

PREVIEW_LINES = 40


ENTER = "\n"  # what a key question returns for Enter ("" for a key that is no character)


def read_key(question: str) -> str:
    """Put `question` on stderr (never in the answer piped from stdout) and return the key
    pressed after it appeared: a character, ENTER, or "" for any other key. What was typed
    before it is discarded. Ctrl-C raises KeyboardInterrupt; Ctrl-D, EOFError. Without a
    terminal (or on Windows, which has no termios), the line typed."""
    if not sys.stdin.isatty() or sys.platform == "win32":
        return _read_line(question)
    import termios

    fd = sys.stdin.fileno()
    with _keys_as_pressed(fd):
        # Typed ahead, before the question: no answer. Flushed before the question shows, so a
        # key pressed once it is on screen is never lost.
        termios.tcflush(fd, termios.TCIFLUSH)
        _say(question)
        pressed = os.read(fd, 64).decode("utf-8", "replace")  # one key, or one key's sequence
        key = key_meaning(pressed)
        _say((key if key.isprintable() else "") + "\n")
    return key


def key_meaning(pressed: str) -> str:
    """What a key press (its characters) answers: itself when it is a character, ENTER for
    Enter, "" for any other key; Ctrl-C raises KeyboardInterrupt, Ctrl-D and an ended
    terminal EOFError."""
    first = pressed[:1]
    if first == "\x03":
        raise KeyboardInterrupt
    if first in ("", "\x04"):
        raise EOFError
    if first in ("\r", "\n"):
        return ENTER
    return first if first.isprintable() and not first.isspace() else ""


def ask_on_stderr(question: str) -> str:
    """A `[y/N]` question by one key: "y" or "n" (see yes_or_no); any other key asks again."""
    while (answer := yes_or_no(read_key(question))) is None:
        pass
    return "y" if answer else "n"


def yes_or_no(key: str) -> bool | None:
    """A `[y/N]` answer: True for y, False for n or Enter (the N), None for any other key."""
    letter = key.strip().lower()[:1]
    if letter == "y":
        return True
    if letter == "n" or key == ENTER:
        return False
    return None


@contextmanager
def _keys_as_pressed(fd: int) -> Iterator[None]:
    """The terminal at `fd` hands over each key as pressed, unechoed, Ctrl-C as a key (no
    signal); its mode is restored on every way out."""
    import termios

    before = termios.tcgetattr(fd)
    mode = termios.tcgetattr(fd)
    mode[3] &= ~(termios.ICANON | termios.ECHO | termios.ISIG)
    mode[6][termios.VMIN], mode[6][termios.VTIME] = 1, 0
    termios.tcsetattr(fd, termios.TCSANOW, mode)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, before)


def read_line(question: str) -> str:
    """Put `question` on stderr and return the line typed after it appeared (without its line
    break); what was typed before it is discarded. Ctrl-D raises EOFError."""
    if sys.stdin.isatty() and sys.platform != "win32":
        import termios

        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    try:
        return _read_line(question).rstrip("\r\n")
    except (EOFError, KeyboardInterrupt):
        _say("\n")  # what follows starts a line of its own
        raise


def _read_line(question: str) -> str:
    _say(question)
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


def _say(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


class TerminalAsker:
    """The Asker of a run with a person at hand. `ask` puts one question and returns the key
    pressed after it appeared (see read_key; EOFError when none can come); `saved` is where an
    approval for good would go, so the person is offered that only where it can be kept."""

    def __init__(
        self,
        sink: Any,
        ask: Callable[[str], str] | None = None,
        saved: SavedApprovals | None = None,
        ask_line: Callable[[str], str] | None = None,
    ) -> None:
        self.sink = sink
        self.ask = ask or read_key
        self.ask_line = ask_line or read_line  # a form's field: a line, typed after it showed
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

    def elicit(self, question: Question) -> Reply:
        """A server's question (mcp.elicit): answered at all? then each field of its form, by
        a line (Enter: the default). Ctrl-C stops the turn, and the server is told."""
        from hephaistus.mcp.elicit import DECLINED, fill_in

        asked = f"{question.heading()}\nAnswer it? [y]es / [n]o: "
        if self._choose(asked, {"y": "yes"}) == "no":
            return DECLINED
        return fill_in(question, self.ask_line, lambda line: _say(line + "\n"), shown=True)

    def _choose(self, question: str, answers: dict[str, Answer]) -> Answer:
        """Ask until the key pressed is one of `answers` (or n, for no)."""
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
        question = (
            "Approve writes (not commands or commits) in this workspace from now on too "
            f"(saved in {self.saved.path})? [y/N]: "
        )
        try:
            while (answer := yes_or_no(self.ask(question))) is None:
                pass
        except EOFError:
            return "session"
        return "forever" if answer else "session"
