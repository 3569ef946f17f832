"""What an editor shows of heph over ACP, driven by the protocol's SDK client: titles that say
what a call does, the tool's own output, and failures as errors that carry heph's words."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError, connect_to_agent, text_block
from test_acp import Editor, run, session, start, thinking

from hephaistus.testing import act, final


async def connected(editor, home, url, workspace, **initialize):
    """`heph acp` started and initialized for `editor`: (process, connection, its answer)."""
    process = await start(home, url, workspace)
    connection = connect_to_agent(editor, process.stdin, process.stdout)
    started = await connection.initialize(protocol_version=PROTOCOL_VERSION, **initialize)
    return process, connection, started


async def last_turn(connection, process, sid, text):
    """A prompt that ends its turn, then the editor closes the connection: heph exits 0."""
    done = await connection.prompt(session_id=sid, prompt=[text_block(text)])
    assert done.stop_reason == "end_turn"
    process.stdin.close()
    assert await process.wait() == 0


@pytest.mark.parametrize(
    ("status", "code", "exit_code", "said"),
    [
        (401, -32000, 2, "rejected the API key (401)"),  # ACP's "authentication required"
        (404, -32603, 1, "model 'scripted' was not found"),
    ],
)
def test_a_model_failure_is_an_error_with_hephs_words_and_exit_code_and_the_next_turn_works(
    chat_server, home, workspace, status, code, exit_code, said
):
    chat_server.fault("status", status=status, body='{"error": {"message": "refused"}}')

    async def scenario():
        editor = Editor([])
        process = await start(home, chat_server.url, workspace)
        connection, sid = await session(editor, process, workspace)
        with pytest.raises(RequestError) as failed:
            await connection.prompt(session_id=sid, prompt=[text_block("say hello")])
        assert (failed.value.code, failed.value.data["exitCode"]) == (code, exit_code)
        assert said in failed.value.data["message"]
        assert not [u for u in editor.updates if u.session_update == "agent_message_chunk"]
        chat_server.reply(final("hello"))
        await last_turn(connection, process, sid, "say hello")

    run(scenario())


def test_each_call_is_titled_by_what_it_does_from_its_first_update_and_shows_its_output(
    chat_server, home, workspace
):
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    chat_server.reply(act("read_file", path="app.py"))
    chat_server.reply(act("edit_file", path="app.py", old="a - b", new="a + b"))
    chat_server.reply(act("shell", command="echo checked"))
    chat_server.reply(final("Fixed."))

    async def scenario():
        editor = Editor(["allow_once", "allow_once"])
        process = await start(home, chat_server.url, workspace)
        connection, sid = await session(editor, process, workspace)
        await last_turn(connection, process, sid, "fix add")
        return editor

    editor = run(scenario())
    calls = [u for u in editor.updates if u.session_update == "tool_call"]
    assert [c.title for c in calls] == ["Read app.py", "Edit app.py", "Run echo checked"]
    # A title given is kept: the updates and the permission asked name the call the same way.
    titles = {c.tool_call_id: c.title for c in calls}
    for update in editor.updates:
        if update.session_update == "tool_call_update" and update.title is not None:
            assert update.title == titles[update.tool_call_id]
    assert [a.title for a in editor.asked] == ["Edit app.py", "Run echo checked"]
    finished = [
        u
        for u in editor.updates
        if u.session_update == "tool_call_update" and u.status == "completed"
    ]
    outputs = [u.content[-1].content.text for u in finished]
    assert outputs[0].startswith("1 def add(a, b):")
    assert "checked" in outputs[2]
    assert all(u.raw_output is None for u in finished)  # no {ok, decision} of heph's own


def test_a_conversation_is_loaded_by_its_first_id_after_each_of_three_reconnects(
    chat_server, home, workspace
):
    for n in range(1, 4):
        chat_server.reply(final(f"answer {n}"))

    async def connect(editor):
        process, connection, _ = await connected(editor, home, chat_server.url, workspace)
        return process, connection

    async def scenario():
        editor = Editor([])
        process, connection = await connect(editor)
        sid = (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await connection.prompt(session_id=sid, prompt=[text_block("turn 1")])
        process.stdin.close()
        assert await process.wait() == 0
        replays = []
        for n in (2, 3, 4):
            editor = Editor([])
            process, connection = await connect(editor)
            await connection.load_session(session_id=sid, cwd=str(workspace), mcp_servers=[])
            replays.append([u.content.text for u in editor.updates if hasattr(u, "content")])
            if n < 4:
                await connection.prompt(session_id=sid, prompt=[text_block(f"turn {n}")])
            process.stdin.close()
            assert await process.wait() == 0
        return replays

    replays = run(scenario())
    assert replays[-1] == [
        "turn 1",
        "answer 1",
        "turn 2",
        "answer 2",
        "turn 3",
        "answer 3",
    ]
    assert replays[0] == ["turn 1", "answer 1"]
    sent = chat_server.requests[-1]["messages"]  # the model saw one conversation
    assert [m["content"].split("\n")[0] for m in sent if m["role"] == "user"][-3:] == [
        "turn 1",
        "turn 2",
        "turn 3",
    ]


def test_a_new_conversation_with_no_turn_loads_empty_and_an_id_heph_never_gave_is_an_error(
    chat_server, home, workspace
):
    async def scenario():
        editor = Editor([])
        process, connection, _ = await connected(editor, home, chat_server.url, workspace)
        sid = (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await connection.load_session(session_id=sid, cwd=str(workspace), mcp_servers=[])
        assert [u for u in editor.updates if "message_chunk" in u.session_update] == []
        never = sid[:-6] + "abcdef"  # shaped like one, never given
        with pytest.raises(RequestError) as failed:
            await connection.load_session(session_id=never, cwd=str(workspace), mcp_servers=[])
        assert failed.value.code == -32602 and "matches no conversation" in str(failed.value.data)
        process.stdin.close()
        assert await process.wait() == 0

    run(scenario())


def test_set_mode_plan_then_go_carries_the_plan_out_in_edits_mode(chat_server, home, workspace):
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    chat_server.reply(final("1. Fix the sign in add.\n2. Run the tests."))
    chat_server.reply(act("edit_file", path="app.py", old="a - b", new="a + b"))
    chat_server.reply(final("Done: add adds."))

    async def scenario():
        editor = Editor([])
        process, connection, _ = await connected(editor, home, chat_server.url, workspace)
        created = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = created.session_id
        assert created.modes.current_mode_id == "ask"
        offered = [m.id for m in created.modes.available_modes]
        assert offered == ["ask", "edits", "plan"]  # auto: only where the person chose it
        with pytest.raises(RequestError):
            await connection.set_session_mode(session_id=sid, mode_id="auto")
        await connection.set_session_mode(session_id=sid, mode_id="plan")
        planned = await connection.prompt(session_id=sid, prompt=[text_block("plan the fix")])
        assert planned.stop_reason == "end_turn"
        assert (workspace / "app.py").read_text().endswith("a - b\n")  # plan mode wrote nothing
        await last_turn(connection, process, sid, "/go")
        return editor

    editor = run(scenario())
    assert (workspace / "app.py").read_text().endswith("a + b\n")  # edits mode: unasked
    assert editor.asked == []
    switched = [u for u in editor.updates if u.session_update == "current_mode_update"]
    assert [u.current_mode_id for u in switched] == ["edits"]
    listed = [u for u in editor.updates if u.session_update == "available_commands_update"]
    assert {"go", "mode", "help"} <= {c.name for c in listed[0].available_commands}
    go_task = chat_server.requests[-2]["messages"][-1]["content"]
    assert go_task.startswith("Carry out the plan")
    assert "Fix the sign in add." in go_task  # the plan, in the agent state


def test_two_sessions_on_one_connection_run_their_turns_at_once(chat_server, home, workspace):
    import time

    chat_server.latency = 3.0  # each turn waits three seconds for the model
    chat_server.reply(final("one"))
    chat_server.reply(final("two"))

    async def scenario():
        editor = Editor([])
        process = await start(home, chat_server.url, workspace)
        connection, first = await session(editor, process, workspace)
        turn_one = asyncio.create_task(
            connection.prompt(session_id=first, prompt=[text_block("first")])
        )
        await thinking(chat_server)
        opened = time.monotonic()
        second = (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        new_took = time.monotonic() - opened
        turn_two = asyncio.create_task(
            connection.prompt(session_id=second, prompt=[text_block("second")])
        )
        answers = await asyncio.gather(turn_one, turn_two)
        process.stdin.close()
        assert await process.wait() == 0
        return answers, new_took

    answers, new_took = run(scenario())
    assert [a.stop_reason for a in answers] == ["end_turn", "end_turn"]
    assert new_took < 2.5  # session/new did not wait out the first turn's model
    assert chat_server.most_in_flight == 2  # the two turns asked the model at the same time


def test_a_mode_set_then_a_reconnect_keeps_the_mode(chat_server, home, workspace):
    async def scenario():
        editor = Editor([])
        process = await start(home, chat_server.url, workspace)
        connection, sid = await session(editor, process, workspace)
        await connection.set_session_mode(session_id=sid, mode_id="plan")
        process.stdin.close()
        assert await process.wait() == 0
        process, connection, _ = await connected(Editor([]), home, chat_server.url, workspace)
        loaded = await connection.load_session(session_id=sid, cwd=str(workspace), mcp_servers=[])
        process.stdin.close()
        assert await process.wait() == 0
        return loaded

    assert run(scenario()).modes.current_mode_id == "plan"


def test_an_editors_mcp_server_is_offered_and_its_tool_called(chat_server, home, workspace):
    import sys

    from acp.schema import McpServerStdio

    server = str(Path(__file__).with_name("mcp_server.py"))
    chat_server.reply(act("mcp__from_editor__add", a=2, b=40))
    chat_server.reply(final("42"))

    async def scenario():
        editor = Editor(["allow_once"])
        process, connection, started = await connected(editor, home, chat_server.url, workspace)
        assert started.agent_capabilities.mcp_capabilities.http is True
        servers = [
            McpServerStdio(name="from editor", command=sys.executable, args=[server], env=[])
        ]
        sid = (await connection.new_session(cwd=str(workspace), mcp_servers=servers)).session_id
        await last_turn(connection, process, sid, "add 2 and 40")
        return editor

    editor = run(scenario())
    system = chat_server.requests[0]["messages"][0]["content"]
    assert "mcp__from_editor__add(a: integer, b: integer)" in system
    assert "Observation: 42" in chat_server.requests[1]["messages"][-1]["content"]
    assert editor.asked and editor.asked[0].title == "Call add of from_editor"


def test_an_editors_servers_are_the_persons_never_on_the_host_and_sse_is_named_not_taken():
    from hephaistus.acp.editor_servers import editor_servers

    servers, said = editor_servers(
        [
            {
                "name": "fs",
                "command": "npx",
                "args": ["-y", "pkg"],
                "env": [{"name": "A", "value": "1"}],
            },
            {"type": "http", "name": "web", "url": "https://x.test/mcp", "headers": []},
            {"type": "sse", "name": "old", "url": "https://x.test/sse", "headers": []},
            {"name": "../../evil name!", "command": "x"},
            "not an entry",
        ]
    )
    assert [s.name for s in servers] == ["fs", "web", "evil_name"]
    assert not any(s.on_host or s.from_workspace for s in servers)
    assert dict(servers[0].env) == {"A": "1"} and servers[1].url == "https://x.test/mcp"
    assert said == [
        "heph: the editor's MCP server old was left out: heph takes stdio and HTTP servers, not sse"
    ]


def reads_and_writes():
    """An editor's capabilities: it reads and writes files for its agent."""
    from acp.schema import ClientCapabilities, FileSystemCapabilities

    files = FileSystemCapabilities(read_text_file=True, write_text_file=True)
    return ClientCapabilities(fs=files)


class EditorWithBuffers(Editor):
    """An editor holding `buffers` (path -> unsaved text) that takes writes as editors do: its
    buffer becomes the text, and it saves it to disk."""

    def __init__(self, answers, buffers):
        super().__init__(answers)
        self.buffers = dict(buffers)
        self.read: list[str] = []
        self.written: list[str] = []

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        from acp.schema import ReadTextFileResponse

        self.read.append(path)
        text = self.buffers.get(path)
        if text is None:
            text = Path(path).read_text()
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id, path, content, **kwargs):
        self.written.append(path)
        self.buffers[path] = content
        Path(path).write_text(content)


def test_reads_and_edits_take_the_editors_unsaved_buffer_and_writes_go_through_it_undoably(
    chat_server, home, workspace, heph
):
    app = workspace / "app.py"
    app.write_text("def add(a, b):\n    return a - b\n")
    unsaved = "def add(a, b):\n    return a - b  # unsaved note\n"
    chat_server.reply(act("read_file", path="app.py"))
    chat_server.reply(act("edit_file", path="app.py", old="a - b  # unsaved", new="a + b  # fixed"))
    chat_server.reply(final("Fixed."))

    async def scenario():
        editor = EditorWithBuffers(["allow_once"], {str(app): unsaved})
        process, connection, _ = await connected(
            editor, home, chat_server.url, workspace, client_capabilities=reads_and_writes()
        )
        sid = (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await last_turn(connection, process, sid, "fix add")
        return editor

    editor = run(scenario())
    seen = chat_server.requests[1]["messages"][-1]["content"]
    assert "2     return a - b  # unsaved note" in seen  # the buffer's text reached the model
    assert str(app) in editor.read
    fixed = "def add(a, b):\n    return a + b  # fixed note\n"
    assert app.read_text() == fixed and editor.buffers[str(app)] == fixed
    assert editor.written == [str(app)]
    assert editor.asked[0].content[0].old_text == unsaved  # the diff is against the buffer
    assert heph("undo").code == 0
    assert app.read_text() == "def add(a, b):\n    return a - b\n"  # the disk as heph found it


@pytest.mark.parametrize("named", ["", "last", "2026", "../../x", "x" * 500, None, 7])
def test_a_load_takes_only_a_whole_id_heph_gave(chat_server, home, workspace, heph, named):
    chat_server.reply(final("recorded"))
    assert heph("a recorded task").code == 0  # a session whose id starts with the year

    async def scenario():
        process, connection, _ = await connected(Editor([]), home, chat_server.url, workspace)
        with pytest.raises(RequestError) as failed:
            await connection._conn.send_request(
                "session/load", {"sessionId": named, "cwd": str(workspace), "mcpServers": []}
            )
        process.stdin.close()
        assert await process.wait() == 0
        return failed.value

    refused = run(scenario())
    assert refused.code == -32602 and len(str(refused.data)) < 400


def test_slash_undo_takes_back_the_last_turn_that_changed_files_even_after_a_reconnect(
    chat_server, home, workspace
):
    app = workspace / "app.py"
    app.write_text("def add(a, b):\n    return a - b\n")
    chat_server.reply(act("edit_file", path="app.py", old="a - b", new="a + b"))
    chat_server.reply(final("Fixed."))

    async def scenario():
        editor = EditorWithBuffers(["allow_once"], {})
        process, connection, _ = await connected(
            editor, home, chat_server.url, workspace, client_capabilities=reads_and_writes()
        )
        sid = (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await last_turn(connection, process, sid, "fix add")
        assert app.read_text().endswith("a + b\n")
        process, connection, _ = await connected(
            editor, home, chat_server.url, workspace, client_capabilities=reads_and_writes()
        )
        await connection.load_session(session_id=sid, cwd=str(workspace), mcp_servers=[])
        before = len(editor.updates)
        await connection.prompt(session_id=sid, prompt=[text_block("/undo")])
        again = await connection.prompt(session_id=sid, prompt=[text_block("/undo")])
        assert again.stop_reason == "end_turn"
        process.stdin.close()
        assert await process.wait() == 0
        return editor, editor.updates[before:]

    editor, updates = run(scenario())
    said = [u.content.text for u in updates if u.session_update == "agent_message_chunk"]
    assert "restored app.py" in said[0] and said[1].startswith("nothing to undo")
    assert app.read_text() == "def add(a, b):\n    return a - b\n"
    assert editor.buffers[str(app)] == app.read_text()  # the editor holds what undo put back
    assert len(chat_server.requests) == 2  # /undo never reached the model


@pytest.mark.parametrize("planted", ["json.py", "hephaistus/__init__.py"])
def test_a_clones_modules_in_the_editors_folder_never_run_in_a_sessions_process(
    chat_server, home, workspace, planted
):
    marker = workspace.parent / "ran"
    (workspace / planted).parent.mkdir(parents=True, exist_ok=True)
    (workspace / planted).write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    chat_server.reply(final("hello"))

    async def scenario():
        process, connection, _ = await connected(Editor([]), home, chat_server.url, workspace)
        sid = (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await last_turn(connection, process, sid, "say hello")

    run(scenario())  # heph acp started in the clone's folder, as editors start it
    assert not marker.exists()
