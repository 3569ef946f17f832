"""The shell tool: one command line in the sandbox, asked about, undone, read-only in plan mode,
and not there at all without a sandbox."""

from __future__ import annotations

import time

import pytest
from test_sandbox import user_config

from hephaistus.runtime.policy import Policy
from hephaistus.runtime.sandbox import unavailable
from hephaistus.testing import act, final
from hephaistus.tools import ToolContext
from hephaistus.tools.run_command import observed
from hephaistus.values import CommandRequest, Proposal
from hephaistus.workspace import Workspace

needs_sandbox = pytest.mark.skipif(
    unavailable() is not None, reason=f"no sandbox here: {unavailable()}"
)


@needs_sandbox
def test_what_the_shell_deletes_and_makes_is_undone(heph, chat_server, workspace):
    (workspace / "a.py").write_text("A = 1\n")
    chat_server.reply(act("shell", command="rm a.py; echo x > b.py; echo done"))
    chat_server.reply(final("cleaned up"))
    result = heph("--yes", "--json", "clean up")
    assert result.code == 0, result.stderr
    said = chat_server.requests[1]["messages"][-1]["content"]
    assert "$ rm a.py; echo x > b.py; echo done\nexit code 0 after" in said and "done" in said
    assert sorted(result.json["changed_files"]) == ["a.py", "b.py"]
    assert not (workspace / "a.py").exists() and (workspace / "b.py").exists()
    assert heph("undo").code == 0
    assert (workspace / "a.py").read_text() == "A = 1\n" and not (workspace / "b.py").exists()


@needs_sandbox
def test_in_plan_mode_the_shell_looks_and_changes_nothing(heph, chat_server, workspace):
    (workspace / "a.py").write_text("A = 1\n")
    chat_server.reply(act("shell", command="cat a.py && echo B = 2 > b.py"))
    chat_server.reply(final("1. Add b.py."))
    result = heph("--mode", "plan", "plan it")
    assert result.code == 0, result.stderr
    assert "- shell(command" in chat_server.requests[0]["messages"][0]["content"]
    said = chat_server.requests[1]["messages"][-1]["content"]
    assert "A = 1" in said and "Read-only file system" in said
    assert not (workspace / "b.py").exists()


@needs_sandbox
def test_a_shell_command_stops_at_its_timeout(heph, chat_server):
    chat_server.reply(act("shell", command="sleep 30", timeout=1))
    chat_server.reply(final("it hung"))
    started = time.monotonic()
    assert heph("--yes", "wait").code == 0
    assert time.monotonic() - started < 15
    assert "timed out after" in chat_server.requests[1]["messages"][-1]["content"]


def test_without_a_sandbox_there_is_no_shell(heph, chat_server, workspace, home):
    user_config(home, '[sandbox]\nbwrap = "/nonexistent/bwrap"\n')
    chat_server.reply(act("shell", command="touch made"))
    chat_server.reply(final("could not"))
    assert heph("--yes", "make it").code == 0
    assert "- shell(" not in chat_server.requests[0]["messages"][0]["content"]
    assert "no sandbox here" in chat_server.requests[1]["messages"][-1]["content"]
    assert not (workspace / "made").exists()


def test_each_shell_line_is_asked_about_and_all_holds_for_the_shell_only():
    answers = iter(["yes", "session"])
    asked: list[str] = []

    def asker(proposal):
        asked.append(proposal.request.command_line)
        return next(answers)

    def line(text: str, name: str = "shell") -> Proposal:
        return Proposal("command", CommandRequest(name, text), lambda: None, "", name=name)

    policy = Policy("edits", asker=asker)
    assert policy.decide(line("ls")) == "allow"
    assert policy.decide(line("ls -l")) == "allow"  # "yes" was for one line: asked again
    assert policy.decide(line("pwd")) == "allow"  # "[a]ll shell commands" was said
    assert asked == ["ls", "ls -l"]
    assert policy.verdict("command", "test") == "ask"  # a project command is asked still


def test_a_flood_of_output_is_read_in_bounded_memory_keeping_its_end(tmp_path):
    import tracemalloc

    from hephaistus.runtime.executor import KEPT_OUTPUT, LocalExecutor

    flood = "head -c 30000000 /dev/zero | tr '\\000' a; echo THE-END"
    tracemalloc.start()
    done = LocalExecutor().run(
        ["sh", "-c", flood], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, timeout=60
    )
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert done.exit_code == 0 and done.output.endswith("aTHE-END\n")
    assert done.size == 30_000_000 + len("THE-END\n")
    assert len(done.output) == KEPT_OUTPUT and peak < 8 * KEPT_OUTPUT
    # The model is told how much there was, not how much was kept.
    ctx = ToolContext(Workspace.at(tmp_path))
    said = observed(ctx, flood, done)
    assert f"the output was {done.size} bytes]" in said and said.endswith("aTHE-END\n")


@needs_sandbox
def test_rm_rf_of_the_whole_workspace_is_undone_file_by_file(heph, chat_server, workspace):
    import os

    for number in range(30):
        path = workspace / f"pkg{number % 3}" / "deep" / f"m{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"N = {number}\n")
    (workspace / "run.sh").write_text("#!/bin/sh\n")
    (workspace / "run.sh").chmod(0o755)
    os.symlink("run.sh", workspace / "start")
    before = {
        str(p.relative_to(workspace)): (p.is_symlink(), os.readlink(p) if p.is_symlink() else "")
        for p in workspace.rglob("*")
    }
    chat_server.reply(act("shell", command="rm -rf ./* && ls -A"))
    chat_server.reply(final("emptied"))
    assert heph("--yes", "empty it").code == 0
    assert [p.name for p in workspace.iterdir()] == [".heph"]
    undone = heph("undo")
    assert undone.code == 0, undone.stderr
    after = {
        str(p.relative_to(workspace)): (p.is_symlink(), os.readlink(p) if p.is_symlink() else "")
        for p in workspace.rglob("*")
        if ".heph" not in p.parts
    }
    assert after == before
    assert (workspace / "pkg1" / "deep" / "m4.py").read_text() == "N = 4\n"
    assert (workspace / "run.sh").stat().st_mode & 0o111


@needs_sandbox
def test_a_link_out_of_the_workspace_leads_a_write_nowhere(heph, chat_server, workspace, home):
    import os

    beside = home / "notes.txt"
    beside.write_text("mine\n")
    os.symlink(beside, workspace / "notes")
    chat_server.reply(act("shell", command="echo theirs > notes; cat notes"))
    chat_server.reply(final("tried"))
    assert heph("--yes", "write through the link").code == 0
    # Outside the workspace is read-only, and /tmp (where this test's home is) a private
    # one that goes with the command: what it wrote through the link is nowhere now.
    assert beside.read_text() == "mine\n"
    assert os.readlink(workspace / "notes") == str(beside)


@needs_sandbox
def test_a_failed_command_is_told_what_the_sandbox_keeps_from_it(heph, chat_server):
    # The shell's description stays short; the sandbox is named where it may explain a failure.
    chat_server.reply(act("shell", command="true"))
    chat_server.reply(act("shell", command="curl -s https://example.com || exit 7"))
    chat_server.reply(final("offline"))
    assert heph("--yes", "fetch").code == 0
    passed = chat_server.requests[1]["messages"][-1]["content"]
    failed = chat_server.requests[2]["messages"][-1]["content"]
    assert "exit code 0" in passed and "In the sandbox" not in passed
    assert "exit code 7" in failed and "(In the sandbox: no network, no input;" in failed
    tools = chat_server.requests[0]["messages"][0]["content"]
    assert "shell(command" in tools and "no network" not in tools
