"""`heph acp` driven as a real process by the protocol's own client library (the
agent-client-protocol SDK's client side), against a scripted model on the loopback server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, connect_to_agent, text_block
from acp.schema import AllowedOutcome, RequestPermissionResponse

from conftest import environment
from hephaistus.testing import act, final, heph_command


class Editor:
    """The client: records every update, answers each permission request from `answers`."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.updates: list[Any] = []
        self.asked: list[Any] = []

    async def request_permission(self, options, session_id, tool_call, **kwargs):
        self.asked.append(tool_call)
        choice = self.answers.pop(0)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(option_id=choice, outcome="selected")
        )

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update)

    def kinds(self) -> list[str]:
        """The kinds of the updates of turns (the commands listed at the start left out)."""
        return [
            u.session_update
            for u in self.updates
            if u.session_update != "available_commands_update"
        ]


async def start(home, url, workspace):
    return await asyncio.create_subprocess_exec(
        *heph_command(),
        "acp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=workspace,
        env=environment(home, url),
    )


async def session(editor, process, workspace):
    connection = connect_to_agent(editor, process.stdin, process.stdout)
    started = await connection.initialize(protocol_version=PROTOCOL_VERSION)
    assert started.protocol_version == PROTOCOL_VERSION
    created = await connection.new_session(cwd=str(workspace), mcp_servers=[])
    return connection, created.session_id


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def test_a_prompt_that_reads_and_edits_with_permission_then_one_that_is_rejected(
    chat_server, home, workspace
):
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    chat_server.reply(act("read_file", "look first", path="app.py"))
    chat_server.reply(act("edit_file", "fix the sign", path="app.py", old="a - b", new="a + b"))
    chat_server.reply(final("Fixed add."))
    chat_server.reply(act("write_file", path="app.py", content="broken\n"))
    chat_server.reply(final("It was refused."))

    async def scenario():
        editor = Editor(["allow_once", "reject_once"])
        process = await start(home, chat_server.url, workspace)
        connection, sid = await session(editor, process, workspace)
        first = await connection.prompt(session_id=sid, prompt=[text_block("fix add in app.py")])
        assert first.stop_reason == "end_turn"
        assert (workspace / "app.py").read_text() == "def add(a, b):\n    return a + b\n"
        kinds = editor.kinds()
        assert kinds[:2] == ["agent_thought_chunk", "tool_call"]
        assert (
            kinds[-1] == "agent_message_chunk" and editor.updates[-1].content.text == "Fixed add."
        )
        edits = [u for u in editor.updates if getattr(u, "kind", None) == "edit"]
        assert edits and edits[0].title == "Edit app.py"
        asked = editor.asked[0]
        diff = asked.content[0]
        assert diff.type == "diff" and diff.new_text.endswith("return a + b\n")
        assert diff.path == str(workspace / "app.py")  # ACP's paths are absolute
        assert diff.old_text.endswith("return a - b\n")
        second = await connection.prompt(session_id=sid, prompt=[text_block("now break it")])
        assert second.stop_reason == "end_turn"
        assert (workspace / "app.py").read_text().endswith("return a + b\n")  # rejected
        said = chat_server.requests[-1]["messages"][-1]["content"]
        assert "the user declined" in said
        process.stdin.close()
        assert await process.wait() == 0

    run(scenario())


async def thinking(chat_server):
    """Until the model server holds a chat request (not a probe of what it is): the model is
    thinking about the turn."""
    for _ in range(400):
        if chat_server.requests and chat_server.in_flight:
            return
        await asyncio.sleep(0.025)
    raise AssertionError("no request reached the model server")


def test_cancel_mid_turn_then_it_is_incorrect_keeps_the_conversation(chat_server, home, workspace):
    (workspace / "notes.txt").write_text("n\n")
    chat_server.latency = 3.0  # a slow model: the cancel lands while it thinks
    chat_server.reply(final("never seen"))

    async def scenario():
        editor = Editor([])
        process = await start(home, chat_server.url, workspace)
        connection, sid = await session(editor, process, workspace)
        turn = asyncio.create_task(
            connection.prompt(session_id=sid, prompt=[text_block("summarise notes.txt")])
        )
        await thinking(chat_server)
        await connection.cancel(session_id=sid)
        cancelled = await turn
        assert cancelled.stop_reason == "cancelled"
        chat_server.latency = 0.0
        chat_server.reply(final("Sorry, here it is again."))
        again = await connection.prompt(session_id=sid, prompt=[text_block("it is incorrect")])
        assert again.stop_reason == "end_turn"
        messages = chat_server.requests[-1]["messages"]
        said = " ".join(m["content"] for m in messages if m["role"] == "user")
        assert "summarise notes.txt" in said and "it is incorrect" in said  # one conversation
        process.stdin.close()
        assert await process.wait() == 0

    run(scenario())


def test_malformed_lines_and_unknown_methods_get_errors_and_the_process_goes_on(
    chat_server, home, workspace
):
    lines = [
        "this is not json",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "no/such"}),
        '{"jsonrpc":"2.0","id":5,"method":"x","params":' + "[" * 5000 + "]" * 5000 + "}",
        json.dumps({"jsonrpc": "2.0", "id": [1], "result": {}}),  # an id that cannot be one
        json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": "x"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {}}),
    ]
    started = time.monotonic()
    done = subprocess.run(
        [*heph_command(), "acp"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        cwd=workspace,
        env=environment(home, chat_server.url),
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]  # nothing else on stdout
    by_id = {a.get("id"): a for a in answers}
    errors = [a["error"]["code"] for a in answers if a.get("id") is None]
    assert errors.count(-32700) == 2 and -32600 in errors  # and the reading went on
    assert by_id[1]["error"]["code"] == -32601
    assert by_id[2]["result"]["protocolVersion"] == 1
    assert time.monotonic() - started < 10


def test_stdin_closed_mid_turn_ends_the_process_cleanly_with_the_session_saved(
    chat_server, home, workspace
):
    chat_server.latency = 3.0
    chat_server.reply(final("late"))

    async def scenario():
        editor = Editor([])
        process = await start(home, chat_server.url, workspace)
        connection, sid = await session(editor, process, workspace)
        asyncio.create_task(connection.prompt(session_id=sid, prompt=[text_block("slow task")]))
        await thinking(chat_server)
        process.stdin.close()
        return await asyncio.wait_for(process.wait(), 20)

    assert run(scenario()) == 0
    saved = list((workspace / ".heph" / "sessions").glob("*.jsonl"))
    assert saved and '"interrupted"' in saved[-1].read_text()


@pytest.mark.parametrize(
    ("cwd", "said"),
    [
        ("relative/path", "absolute folder"),
        ("/no/such/folder", "absolute folder"),
        ("/", "the file system's root"),
    ],
)
def test_a_session_in_a_folder_that_is_not_a_project_is_an_error(
    chat_server, home, workspace, cwd, said
):
    async def scenario():
        process = await start(home, chat_server.url, workspace)
        connection = connect_to_agent(Editor([]), process.stdin, process.stdout)
        await connection.initialize(protocol_version=PROTOCOL_VERSION)
        with pytest.raises(Exception, match=said):
            await connection.new_session(cwd=cwd, mcp_servers=[])
        process.stdin.close()
        assert await process.wait() == 0

    run(scenario())


def test_plan_mode_sends_the_plan_as_entries(chat_server, home, workspace):
    (workspace / ".heph.toml").write_text('mode = "plan"\n')
    chat_server.reply(final("1. Read app.py.\n2. Fix the sign in add.\n3. Run the tests."))

    async def scenario():
        editor = Editor([])
        process = await start(home, chat_server.url, workspace)
        connection, sid = await session(editor, process, workspace)
        done = await connection.prompt(session_id=sid, prompt=[text_block("plan the fix")])
        assert done.stop_reason == "end_turn"
        plans = [u for u in editor.updates if u.session_update == "plan"]
        assert [e.content for e in plans[-1].entries] == [
            "Read app.py.",
            "Fix the sign in add.",
            "Run the tests.",
        ]
        process.stdin.close()
        assert await process.wait() == 0

    run(scenario())


def test_a_recorded_session_is_loaded_and_continued(chat_server, home, workspace, heph):
    chat_server.reply(final("The answer is 4."))
    assert heph("what is 2 + 2").code == 0
    recorded = sorted((workspace / ".heph" / "sessions").glob("*.jsonl"))[-1].stem
    chat_server.reply(final("Sorry: it is 4, as I said."))

    async def scenario():
        editor = Editor([])
        process = await start(home, chat_server.url, workspace)
        connection = connect_to_agent(editor, process.stdin, process.stdout)
        started = await connection.initialize(protocol_version=PROTOCOL_VERSION)
        assert started.agent_capabilities.load_session is True
        await connection.load_session(session_id=recorded, cwd=str(workspace), mcp_servers=[])
        replayed = [u.content.text for u in editor.updates]
        assert any("what is 2 + 2" in text for text in replayed)
        assert "The answer is 4." in replayed
        again = await connection.prompt(session_id=recorded, prompt=[text_block("it is incorrect")])
        assert again.stop_reason == "end_turn"
        sent = chat_server.requests[-1]["messages"]
        assert any("what is 2 + 2" in m["content"] for m in sent if m["role"] == "user")
        process.stdin.close()
        assert await process.wait() == 0

    run(scenario())


def test_sigterm_ends_the_process_and_a_cancelled_call_is_not_left_pending(
    chat_server, home, workspace
):
    import signal

    (workspace / "a.txt").write_text("a\n")
    chat_server.reply(act("edit_file", path="a.txt", old="a", new="b"))
    chat_server.reply(final("never"))

    class Stalling(Editor):
        async def request_permission(self, options, session_id, tool_call, **kwargs):
            self.asked.append(tool_call)
            await asyncio.sleep(30)  # the person looks away; the editor cancels meanwhile

    async def scenario():
        editor = Stalling([])
        process = await start(home, chat_server.url, workspace)
        connection, sid = await session(editor, process, workspace)
        turn = asyncio.create_task(connection.prompt(session_id=sid, prompt=[text_block("b")]))
        while not editor.asked:
            await asyncio.sleep(0.05)
        await connection.cancel(session_id=sid)
        assert (await turn).stop_reason == "cancelled"
        last = [u for u in editor.updates if getattr(u, "tool_call_id", None) == "call_1"][-1]
        assert last.status == "failed"  # never left pending
        process.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(process.wait(), 20)

    assert run(scenario()) == 143
    assert (workspace / "a.txt").read_text() == "a\n"


def test_a_folder_inside_git_opens_the_repository_s_top_not_git(chat_server, home, workspace):
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    chat_server.reply(act("write_file", path="probe.txt", content="p\n"))
    chat_server.reply(final("written"))

    async def scenario():
        editor = Editor(["allow_once"])
        process = await start(home, chat_server.url, workspace)
        connection = connect_to_agent(editor, process.stdin, process.stdout)
        await connection.initialize(protocol_version=PROTOCOL_VERSION)
        created = await connection.new_session(cwd=str(workspace / ".git"), mcp_servers=[])
        done = await connection.prompt(session_id=created.session_id, prompt=[text_block("p")])
        assert done.stop_reason == "end_turn"
        process.stdin.close()
        assert await process.wait() == 0

    run(scenario())
    assert (workspace / "probe.txt").exists()
    assert not (workspace / ".git" / "probe.txt").exists()
