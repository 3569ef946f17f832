"""Questions are answered by one key press, in a real terminal (tmux) against the loopback model
server: what the person typed while the model worked (a next task) never answers one."""

from __future__ import annotations

import fcntl
import os
import struct
import termios
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from test_hostile_repo import clone, person
from test_terminal import Terminal, chat_line

from conftest import has_git
from hephaistus.testing import ChatServer, act, final

WRITE_QUESTION = "[y]es / [n]o / [a]ll / [d]iff"


class HeldModel:
    """The model's replies in order, the first held back until `release()`: the person types
    while it "works"; `asked` is set once the first request is out."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)
        self.asked = threading.Event()
        self.released = threading.Event()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        self.asked.set()
        self.released.wait(30)
        return self.replies.pop(0)

    def release(self) -> None:
        self.released.set()


def two_writes() -> HeldModel:
    """A model that writes notes.txt, then todo.txt, then answers "Both written."."""
    return HeldModel(
        act("write_file", "Writing the notes.", path="notes.txt", content="milk\n"),
        act("write_file", "And the todo list.", path="todo.txt", content="eggs\n"),
        final("Both written."),
    )


def wait_until(terminal: Terminal, holds: Callable[[str], bool], timeout: float = 15) -> str:
    """The screen once `holds(screen)`; fails with the screen when it never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = terminal.screen()
        if holds(screen):
            return screen
        time.sleep(0.05)  # each look is a tmux process
    raise AssertionError(f"never happened; the screen shows:\n{terminal.screen()}")


def press(terminal: Terminal, *keys: str) -> None:
    """Press keys by their tmux names (`C-c`, `Enter`), or type text literally (`-l`)."""
    for key in keys:
        named = key in ("C-c", "C-d", "Enter", "Escape") or key.startswith("C-")
        terminal.tmux(["send-keys", "-t", "t", *([] if named else ["-l"]), key])


@pytest.fixture
def held(workspace, home):
    """A chat in tmux whose model's first reply waits; yields (terminal, model, server)."""
    model = two_writes()
    with ChatServer() as server:
        server.responder = model
        terminal = Terminal(chat_line(home, server.url), workspace)
        try:
            terminal.wait_for("heph [ask]>")
            yield terminal, model, server
        finally:
            model.release()
            terminal.close()


def type_ahead(terminal: Terminal, *lines: str) -> None:
    """Type `lines` (each with Enter) and wait until the terminal holds them, unread."""
    for line in lines:
        terminal.type(line)
    waiting = sum(len(line) + 1 for line in lines)
    tty = terminal.tmux(["display-message", "-p", "-t", "t", "#{pane_tty}"]).strip()
    fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)  # to count, never to read
    try:
        deadline = time.monotonic() + 15
        while unread(fd) < waiting and time.monotonic() < deadline:
            time.sleep(0.01)
        assert unread(fd) >= waiting, f"the terminal holds {unread(fd)} of {waiting} bytes"
    finally:
        os.close(fd)


def unread(fd: int) -> int:
    """The bytes typed into the terminal at `fd` that no program has read yet."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]


def type_ahead_while_the_model_works(terminal: Terminal, model: HeldModel, *lines: str) -> None:
    """Send a task, and while its request waits, type `lines` into the terminal; then let
    the model answer."""
    terminal.type("write the notes")
    assert model.asked.wait(15), "the task never reached the model"
    type_ahead(terminal, *lines)
    model.release()


def test_a_task_typed_while_the_model_works_never_answers_the_write_question(held, workspace):
    terminal, model, _ = held
    type_ahead_while_the_model_works(terminal, model, "also update the README", "yes please")
    terminal.wait_for(WRITE_QUESTION)
    press(terminal, "x")  # not an answer: the question is asked again
    screen = wait_until(terminal, lambda s: s.count(WRITE_QUESTION) >= 2 or "Both written" in s)
    assert not (workspace / "notes.txt").exists(), screen
    assert "Both written" not in screen
    press(terminal, "y")
    terminal.wait_for("And the todo list")
    screen = wait_until(terminal, lambda s: s.count(WRITE_QUESTION) >= 3)  # asked, not [a]ll
    assert (workspace / "notes.txt").read_text() == "milk\n"
    assert not (workspace / "todo.txt").exists()
    press(terminal, "n")
    terminal.wait_for("Both written.")
    assert not (workspace / "todo.txt").exists()
    # What was typed ahead waits at the next prompt, unsent, for the person to send or edit.
    screen = terminal.wait_for("heph [ask]> also update the README")
    assert "yes please" in screen.split("Both written.")[-1]


def test_what_is_typed_while_the_model_works_is_not_echoed_over_its_progress(workspace, home):
    model = HeldModel(final("Noted."))
    with ChatServer() as server:
        server.responder = model
        terminal = Terminal(chat_line(home, server.url), workspace)
        try:
            terminal.wait_for("heph [ask]>")
            terminal.type("say noted")
            assert model.asked.wait(15), "the task never reached the model"
            press(terminal, "next-task-typed-early")  # no Enter: kept for the next prompt
            # An echo shows between two redraws of the progress line: look many times.
            screens = [terminal.screen() for _ in range(40)]
            assert not any("next-task-typed-early" in screen for screen in screens)
            model.release()
            terminal.wait_for("heph [ask]> next-task-typed-early")
        finally:
            model.release()
            terminal.close()


def test_keys_typed_with_an_answer_never_answer_the_next_question(held, workspace, home):
    terminal, model, _ = held
    terminal.type("write the notes")
    model.release()
    terminal.wait_for(WRITE_QUESTION)
    press(terminal, "ay")  # [a]ll, and a y typed with it, before "from now on too" was asked
    terminal.wait_for("from now on too")
    press(terminal, "x")
    screen = wait_until(terminal, lambda s: s.count("from now on too") >= 2 or "Both" in s)
    assert "Both written" not in screen
    assert not (home / ".state" / "hephaistus" / "approvals.json").exists()
    press(terminal, "n")  # for this chat only
    terminal.wait_for("Both written.")
    assert (workspace / "todo.txt").read_text() == "eggs\n"  # [a]ll: not asked again
    assert not (home / ".state" / "hephaistus" / "approvals.json").exists()


def test_ctrl_c_at_a_question_is_no_and_stops_the_turn(held, workspace):
    terminal, model, server = held
    terminal.type("write the notes")
    model.release()
    terminal.wait_for(WRITE_QUESTION)
    press(terminal, "C-c")
    screen = terminal.wait_for("cancelled; the session was saved")
    assert not (workspace / "notes.txt").exists()
    assert len(server.requests) == 1  # the model was not asked to go on
    terminal.wait_for("heph [ask]>")
    assert "Both written" not in screen


def test_the_prompt_says_when_writes_are_approved(held, workspace, home):
    terminal, model, server = held
    terminal.type("write the notes")
    model.release()
    terminal.wait_for(WRITE_QUESTION)
    press(terminal, "a")
    terminal.wait_for("from now on too")
    press(terminal, "y")
    terminal.wait_for("Both written.")
    terminal.wait_for("heph [ask, writes approved]>")
    terminal.type("/exit")
    terminal.wait_for("HEPH_EXITED=0")
    again = Terminal(chat_line(home, server.url), workspace)  # saved: the next chat shows it
    try:
        again.wait_for("heph [ask, writes approved]>")
        again.type("/approvals clear")
        again.wait_for("approvals cleared")
        screen = again.wait_for("heph [ask]>")
        assert screen.count("writes approved") == 1
    finally:
        again.close()


def test_a_one_shot_task_takes_no_typed_ahead_line_as_an_answer(workspace, home):
    model = two_writes()
    with ChatServer() as server:
        server.responder = model
        terminal = Terminal(chat_line(home, server.url, "'write the notes'"), workspace)
        try:
            assert model.asked.wait(15), "the task never reached the model"
            type_ahead(terminal, "all of it", "yes")
            model.release()
            terminal.wait_for(WRITE_QUESTION)
            press(terminal, "x")
            screen = wait_until(terminal, lambda s: s.count(WRITE_QUESTION) >= 2 or "Both" in s)
            assert not (workspace / "notes.txt").exists(), screen
            press(terminal, "y")
            wait_until(terminal, lambda s: s.count(WRITE_QUESTION) >= 3)
            assert (workspace / "notes.txt").read_text() == "milk\n"
            press(terminal, "C-c")  # no, and the task stops
            terminal.wait_for("HEPH_EXITED=130")
        finally:
            model.release()
            terminal.close()
    assert not (workspace / "todo.txt").exists()
    assert len(server.requests) == 2


@pytest.mark.skipif(not has_git(), reason="needs git")
def test_the_trust_question_takes_no_typed_ahead_y_and_ctrl_c_stops_the_task(
    chat_server, home, tmp_path
):
    root = clone(tmp_path, {".heph.toml": 'model = "theirs"\n', "app.py": "x = 1\n"})
    key = person(home, chat_server)["OPENAI_API_KEY"] or ""
    chat_server.reply(final("hello"))
    start = tmp_path / "start"
    os.mkfifo(start)
    heph_line = chat_line(home, None, "'say hello'", OPENAI_API_KEY=key)
    terminal = Terminal(f"read -r _ < {start}; {heph_line}", root)
    try:
        type_ahead(terminal, "y")  # typed before heph even asked
        start.write_text("go\n")
        terminal.wait_for("Trust this workspace and use them? [y/N]")
        press(terminal, "x")
        screen = wait_until(terminal, lambda s: s.count("[y/N]") >= 2 or "HEPH_EXITED" in s)
        assert "HEPH_EXITED" not in screen
        press(terminal, "C-c")
        screen = terminal.wait_for("HEPH_EXITED=")
    finally:
        terminal.close()
    assert "HEPH_EXITED=130" in screen  # stopped: not carried on untrusted
    assert chat_server.seen == []
    assert not (home / ".state" / "hephaistus" / "trust.json").exists()
