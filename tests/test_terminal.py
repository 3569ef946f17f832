"""The real `heph` chat in a real terminal (tmux), against the loopback model server."""

import os
import shlex
import shutil
import subprocess
import threading
import time

import pytest

from conftest import heph_command
from hephaistus.testing import act, final

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="needs tmux (.ci/run installs it)"
)


class Terminal:
    def __init__(self, command: str, cwd) -> None:
        self.socket = f"heph-test-{os.getpid()}-{time.monotonic_ns()}"
        self.tmux(
            ["new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "-c", str(cwd), command]
        )

    def tmux(self, args: list[str]) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True)
        return done.stdout

    def screen(self) -> str:
        return self.tmux(["capture-pane", "-p", "-t", "t", "-S", "-200"])

    def type(self, text: str, enter: bool = True) -> None:
        self.tmux(["send-keys", "-t", "t", "-l", text])
        if enter:
            self.tmux(["send-keys", "-t", "t", "Enter"])

    def wait_for(self, text: str, timeout: float = 15) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.05)  # each look is a tmux process: often enough, not too often
        raise AssertionError(f"{text!r} never appeared; the screen shows:\n{self.screen()}")

    def close(self) -> None:
        self.tmux(["kill-server"])


def chat_line(home, url: str | None, args: str = "", **extra: str) -> str:
    """The shell line tmux runs: `heph ARGS` with a clean environment of `home` (pointed at `url`
    when given, plus `extra`), then its exit code, and time to read the screen."""
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"),
        **({"OPENAI_BASE_URL": url} if url else {}),
        "PATH": os.environ.get("PATH", ""),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        **extra,
    }
    return (
        "env -i "
        + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        + " "
        + " ".join(shlex.quote(part) for part in heph_command())
        + (f" {args}" if args else "")
        + "; echo HEPH_EXITED=$?; sleep 30"
    )


def test_chat_write_approve_answer_undo_exit(chat_server, workspace, home):
    chat_server.reply(
        act(
            "write_file",
            "I will write the notes file.",
            path="notes.txt",
            content="remember the milk\n",
        )
    )
    chat_server.reply(final("Wrote **notes.txt**."))
    command = chat_line(home, chat_server.url)
    terminal = Terminal(command, workspace)
    try:
        terminal.wait_for("heph [ask]>")
        terminal.type("write a notes file")
        screen = terminal.wait_for("[y]es / [n]o / [a]ll / [d]iff")
        assert "+remember the milk" in screen
        terminal.type("y")
        terminal.wait_for("Wrote notes.txt")
        assert (workspace / "notes.txt").read_text() == "remember the milk\n"
        terminal.type("/undo")
        terminal.wait_for("undone: notes.txt")
        assert not (workspace / "notes.txt").exists()
        terminal.type("/exit")
        terminal.wait_for("HEPH_EXITED=0")
        assert (home / ".state" / "hephaistus" / "history").read_text().count("/undo") == 1
    finally:
        terminal.close()
    assert len(chat_server.requests) == 2


@pytest.mark.parametrize("setting", ["NO_COLOR=1", "TERM=dumb"])
def test_plain_output_in_a_terminal_when_asked(chat_server, workspace, home, setting):
    (workspace / "a.py").write_text("x = 1\n")
    chat_server.reply(act("edit_file", "Changing x.", path="a.py", old="x = 1", new="x = 2"))
    chat_server.reply(final("Changed **x**."))
    name, value = setting.split("=")
    command = chat_line(home, chat_server.url, "--yes 'change x'", **{name: value})
    terminal = Terminal(command, workspace)
    try:
        terminal.wait_for("HEPH_EXITED=0")
        styled = terminal.tmux(["capture-pane", "-p", "-e", "-t", "t", "-S", "-200"])
    finally:
        terminal.close()
    assert "Changed **x**." in styled  # the answer as written, not rendered Markdown
    assert "\x1b[" not in styled


def test_after_ctrl_c_no_spinner_runs_on_and_a_pasted_message_stays_whole(workspace, home):
    from hephaistus.testing import ChatServer

    cancelled = threading.Event()
    asked = []

    def slow_then_at_once(body):  # the first request is still thinking when Ctrl-C comes
        asked.append(body)
        if len(asked) == 1:
            cancelled.wait(20)
        return final("ANSWER-OK")

    with ChatServer() as server:
        server.responder = slow_then_at_once
        command = chat_line(home, server.url)
        terminal = Terminal(command, workspace)
        try:
            terminal.wait_for("heph [ask]>")
            terminal.type("a slow task")
            terminal.wait_for("thinking")
            deadline = time.monotonic() + 15
            while not asked and time.monotonic() < deadline:  # the request is out, unanswered
                time.sleep(0.02)
            terminal.tmux(["send-keys", "-t", "t", "C-c"])
            terminal.wait_for("cancelled; the session was saved")
            cancelled.set()
            time.sleep(0.5)  # a spinner left running would redraw by now
            assert "thinking" not in terminal.screen().split("cancelled")[-1]
            terminal.tmux(["send-keys", "-t", "t", "-l", "first line of the paste"])
            terminal.tmux(["send-keys", "-t", "t", "Escape", "Enter"])
            terminal.type("second line of the paste")
            screen = terminal.wait_for("ANSWER-OK")
            assert "first line of the paste" in screen and "second line of the paste" in screen
        finally:
            cancelled.set()
            terminal.close()
        assert len(asked) == 2  # the cancelled request, then the paste as one message
        pasted = asked[1]["messages"][-1]["content"]
        assert "first line of the paste\nsecond line of the paste" in pasted


def test_shift_tab_switches_the_mode_and_plan_mode_writes_nothing_until_go(
    chat_server, workspace, home
):
    chat_server.reply(act("write_file", "Writing now.", path="notes.txt", content="milk\n"))
    chat_server.reply(final("1. Write notes.txt with milk."))
    chat_server.reply(act("write_file", "Carrying out.", path="notes.txt", content="milk\n"))
    chat_server.reply(final("Wrote notes.txt."))
    command = chat_line(home, chat_server.url)
    terminal = Terminal(command, workspace)
    try:
        terminal.wait_for("heph [ask]>")
        terminal.tmux(["send-keys", "-t", "t", "BTab"])
        terminal.wait_for("heph [edits]>")
        terminal.tmux(["send-keys", "-t", "t", "BTab"])
        terminal.wait_for("heph [plan]>")
        terminal.type("plan the notes")
        terminal.wait_for("plan saved in .heph/plans/")
        assert not (workspace / "notes.txt").exists()
        terminal.type("/go")
        terminal.wait_for("Wrote notes.txt.")  # edits mode: written unasked
        assert "[y]es / [n]o" not in terminal.screen()
        assert (workspace / "notes.txt").read_text() == "milk\n"
        terminal.wait_for("heph [edits]>")
        terminal.type("/exit")
        terminal.wait_for("HEPH_EXITED=0")
    finally:
        terminal.close()
    observation = chat_server.requests[1]["messages"][-1]["content"]
    assert "write_file is not available in plan mode" in observation


def test_the_chat_history_keeps_no_key_typed_and_only_the_person_reads_it(
    chat_server, workspace, home
):
    key = "sk-proj-0123456789abcdefABCDEF0123"
    history = home / ".state" / "hephaistus" / "history"
    history.parent.mkdir(parents=True)
    earlier = "\n# 2024-01-01 10:00:00.000000\n+export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ0123\n"
    history.write_text(earlier)  # a chat before this one kept it, readable by everyone
    history.chmod(0o644)
    chat_server.reply(final("Noted."))
    terminal = Terminal(chat_line(home, chat_server.url), workspace)
    try:
        terminal.wait_for("heph [ask]>")
        terminal.type(f"my key is {key}, use it for the tests")
        terminal.wait_for("Noted.")
        terminal.type("/exit")
        terminal.wait_for("HEPH_EXITED=0")
    finally:
        terminal.close()
    kept = history.read_text()
    assert "my key is [redacted], use it for the tests" in kept
    assert key not in kept and "ghp_0123" not in kept
    assert history.stat().st_mode & 0o777 == 0o600


def test_undo_after_a_turn_that_only_committed_says_which_turn_it_takes_back(
    chat_server, workspace, home
):
    from conftest import git

    git(workspace, "init", "-q", "-b", "main")
    (workspace / "app.py").write_text("x = 1\n")
    git(workspace, "add", "app.py")
    git(workspace, "commit", "-qm", "start")
    chat_server.reply(act("write_file", "Creating.", path="hello.py", content="print('hi')\n"))
    chat_server.reply(final("Created hello.py."))
    chat_server.reply(act("git_commit", "Committing.", message="add hello"))
    chat_server.reply(final("Committed."))
    command = chat_line(
        home,
        chat_server.url,
        "--yes",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
    )
    terminal = Terminal(command, workspace)
    try:
        terminal.wait_for("heph [auto]>")
        terminal.type("create hello.py")
        terminal.wait_for("Created hello.py.")
        terminal.type("commit it")
        terminal.wait_for("Committed.")
        assert git(workspace, "status", "--porcelain") == ""
        terminal.type("/undo")
        screen = terminal.wait_for("(removed)")
        said = screen[screen.rindex("> /undo") :]
        assert 'turn 1 of 2 ("create hello.py")' in said, said
        assert "turn 2 changed no files" in said, said
        assert not (workspace / "hello.py").exists()
        terminal.type("/undo")
        terminal.wait_for("nothing to undo: no turn of this chat changed files it has not undone")
        terminal.type("/exit")
        terminal.wait_for("HEPH_EXITED=0")
    finally:
        terminal.close()
