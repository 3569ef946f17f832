"""What an editor shows of heph over ACP, driven by the protocol's SDK client: titles that say
what a call does, the tool's own output, and failures as errors that carry heph's words."""

from __future__ import annotations

import pytest
from acp import PROTOCOL_VERSION, RequestError, connect_to_agent, text_block
from test_acp import Editor, run, session, start

from hephaistus.testing import act, final


def test_a_rejected_key_is_an_error_with_hephs_words_and_exit_code_not_an_answer(
    chat_server, home, workspace
):
    chat_server.fault("status", status=401, body='{"error": {"message": "invalid api key"}}')

    async def scenario():
        editor = Editor([])
        process = await start(home, chat_server.url, workspace)
        connection, sid = await session(editor, process, workspace)
        with pytest.raises(RequestError) as failed:
            await connection.prompt(session_id=sid, prompt=[text_block("say hello")])
        assert failed.value.code == -32000  # ACP's "authentication required"
        data = failed.value.data
        assert "rejected the API key (401)" in data["message"] and data["exitCode"] == 2
        assert not [u for u in editor.updates if u.session_update == "agent_message_chunk"]
        process.stdin.close()
        assert await process.wait() == 0

    run(scenario())


def test_a_model_failure_fails_the_turn_with_an_error_and_the_next_turn_works(
    chat_server, home, workspace
):
    chat_server.fault("status", status=404, body='{"error": {"message": "no such model"}}')

    async def scenario():
        editor = Editor([])
        process = await start(home, chat_server.url, workspace)
        connection, sid = await session(editor, process, workspace)
        with pytest.raises(RequestError) as failed:
            await connection.prompt(session_id=sid, prompt=[text_block("say hello")])
        assert failed.value.code == -32603
        assert failed.value.data["exitCode"] == 1
        assert "model 'scripted' was not found" in failed.value.data["message"]
        chat_server.reply(final("hello"))
        done = await connection.prompt(session_id=sid, prompt=[text_block("say hello")])
        assert done.stop_reason == "end_turn"
        process.stdin.close()
        assert await process.wait() == 0

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
        done = await connection.prompt(session_id=sid, prompt=[text_block("fix add")])
        assert done.stop_reason == "end_turn"
        process.stdin.close()
        assert await process.wait() == 0
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
    outputs = [
        u.raw_output
        for u in editor.updates
        if u.session_update == "tool_call_update" and u.status == "completed"
    ]
    assert outputs[0].startswith("1 def add(a, b):")
    assert "checked" in outputs[2]
    assert not any(isinstance(o, dict) for o in outputs)  # no {ok, decision} of heph's own


def test_a_conversation_is_loaded_by_its_first_id_after_each_of_three_reconnects(
    chat_server, home, workspace
):
    for n in range(1, 4):
        chat_server.reply(final(f"answer {n}"))

    async def connect(editor):
        process = await start(home, chat_server.url, workspace)
        connection = connect_to_agent(editor, process.stdin, process.stdout)
        await connection.initialize(protocol_version=PROTOCOL_VERSION)
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
            replays.append([u.content.text for u in editor.updates])
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
        process = await start(home, chat_server.url, workspace)
        connection = connect_to_agent(editor, process.stdin, process.stdout)
        await connection.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await connection.load_session(session_id=sid, cwd=str(workspace), mcp_servers=[])
        assert editor.updates == []
        never = sid[:-6] + "abcdef"  # shaped like one, never given
        with pytest.raises(RequestError) as failed:
            await connection.load_session(session_id=never, cwd=str(workspace), mcp_servers=[])
        assert failed.value.code == -32602 and "matches no conversation" in str(failed.value.data)
        process.stdin.close()
        assert await process.wait() == 0

    run(scenario())
