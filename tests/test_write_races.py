"""Writes racing each other: two heph runs changing one file at the very same moment. Each test
makes another real run write the file at the worst instant of this one (through the seam where a
read checks what it opened), so the interleaving is the same every time, no sleep involved; every
write must land, or be reported as not done, never lost while reported as done."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hephaistus import textfile
from hephaistus.testing import act, final


@pytest.fixture
def when_read(monkeypatch, chat_server):
    """when_read(path, action): `action` runs the first time this process, once it asked the
    model something, has opened `path` for reading and checks that it opened that very file:
    the instant between the open and the check."""

    def arrange(path: Path, action: Callable[[], None]) -> None:
        check = textfile._opened_path
        pending = [action]

        def opened_path(fd: int) -> bytes | None:
            if pending and chat_server.requests and check(fd) == bytes(path):
                pending.pop()()
            return check(fd)

        monkeypatch.setattr(textfile, "_opened_path", opened_path)

    return arrange


def observations(chat_server) -> list[str]:
    """The observations heph sent the model, in the order the requests came."""
    return [
        message["content"]
        for request in chat_server.requests
        for message in request["messages"][-1:]
        if message["role"] == "user" and message["content"].startswith("Observation:")
    ]


def another_run(heph_process, chat_server, tool: str, **args: str) -> Callable[[], None]:
    """What a second heph run does: call `tool` with `args` once, as a process of its own;
    then the model's last reply to this run is queued."""

    def run() -> None:
        chat_server.reply(act(tool, **args))
        chat_server.reply(final("done"))
        done = heph_process("--yes", f"{tool} once")
        assert done.code == 0, done.stderr
        chat_server.reply(final("done"))

    return run


def another_run_appends(heph_process, chat_server, line: str) -> Callable[[], None]:
    """A second heph run appending `line` to log.txt."""
    return another_run(heph_process, chat_server, "append_file", path="log.txt", content=line)


def test_an_append_lands_when_another_run_replaces_the_file_while_it_reads(
    heph, heph_process, chat_server, workspace, when_read
):
    # Run A opens log.txt to read it; run B renames its new log.txt over it before A checks
    # what it opened, so A's descriptor is the old, now deleted, file. A said "a folder on its
    # path became a link" and dropped its line, though it exits 0.
    (workspace / "log.txt").write_text("start\n")
    chat_server.reply(act("append_file", path="log.txt", content="a\n"))
    when_read(workspace / "log.txt", another_run_appends(heph_process, chat_server, "b\n"))
    done = heph("--yes", "append a")
    assert done.code == 0, done.stderr
    assert (workspace / "log.txt").read_text() == "start\nb\na\n"
    told = observations(chat_server)
    assert len(told) == 2 and all(o.startswith("Observation: updated log.txt") for o in told), told


MOVED = "--- a/log.txt\n+++ b/moved.txt\nrename from log.txt\nrename to moved.txt\n"
HUNK = "@@ -1 +1 @@\n-start\n+begin\n"
DELETED = "--- a/log.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-start\n"


@pytest.mark.parametrize("diff", [MOVED + HUNK, DELETED], ids=["move", "delete"])
def test_a_patch_that_moves_or_deletes_keeps_what_another_run_wrote_meanwhile(
    heph, heph_process, chat_server, workspace, when_read, diff
):
    # The patch was worked out from one read of log.txt, and the move (or delete) was made
    # from a second: B's line, appended between them, went with the old content (moved.txt
    # held only "begin") or with the deleted file, and both runs said done.
    (workspace / "log.txt").write_text("start\n")
    chat_server.reply(act("patch_file", path="log.txt", diff=diff))
    when_read(workspace / "log.txt", another_run_appends(heph_process, chat_server, "b\n"))
    assert heph("--yes", "patch").code == 0
    appended, patched = observations(chat_server)
    assert appended.startswith("Observation: updated log.txt"), appended
    assert "changed on disk" in patched and "nothing was written" in patched, patched
    assert (workspace / "log.txt").read_text() == "start\nb\n"
    assert not (workspace / "moved.txt").exists()


EDITS = {
    "edit_file": {"path": "log.txt", "old": "start", "new": "begin"},
    "patch_file": {"path": "log.txt", "diff": "@@ -1 +1 @@\n-start\n+begin\n"},
}


@pytest.mark.parametrize("tool", EDITS)
def test_an_edit_is_made_on_what_another_run_wrote_while_it_was_prepared(
    heph, heph_process, chat_server, workspace, when_read, tool
):
    # The edit was worked out from "start\n"; B appended before it was written. It was
    # refused ("changed on disk, read it again"), though it applies as well to the file as it
    # is now, as a call made a moment later would have.
    (workspace / "log.txt").write_text("start\n")
    chat_server.reply(act(tool, **EDITS[tool]))
    when_read(workspace / "log.txt", another_run_appends(heph_process, chat_server, "b\n"))
    assert heph("--yes", "edit").code == 0
    assert (workspace / "log.txt").read_text() == "begin\nb\n"
    edited = observations(chat_server)[-1]
    assert edited.startswith("Observation: updated log.txt") and "+begin" in edited, edited


@pytest.mark.parametrize("tool", EDITS)
def test_an_edit_that_no_longer_applies_to_what_another_run_wrote_is_not_made(
    heph, heph_process, chat_server, workspace, when_read, tool
):
    (workspace / "log.txt").write_text("start\n")
    chat_server.reply(act(tool, **EDITS[tool]))
    theirs = another_run(
        heph_process, chat_server, "edit_file", path="log.txt", old="start", new="x"
    )
    when_read(workspace / "log.txt", theirs)
    assert heph("--yes", "edit").code == 0
    assert (workspace / "log.txt").read_text() == "x\n"
    refused = observations(chat_server)[-1]
    assert "changed on disk" in refused and "nothing was written" in refused, refused
