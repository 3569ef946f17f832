"""A server's prompts as the chat's slash commands (`/mcp__t__review ARGS`), and `@server:uri`
in a task, against the test server's prompt `review` and resource `notes://today`."""

from __future__ import annotations

import pytest
from test_mcp import observation, with_server
from test_mcp_elicit import ENTER, chat_with_server

from hephaistus.testing import act, final


def first_task(model) -> str:
    """The task of the model's first request (the last user message)."""
    return [m for m in model.calls[0] if m["role"] == "user"][-1]["content"]


def test_a_server_s_prompt_is_a_slash_command_whose_text_is_the_task(workspace, home, monkeypatch):
    monkeypatch.setenv("HOME", str(home))
    keys = [
        "/mcp__t__review" + ENTER,  # its path is needed: said, nothing sent
        "/mcp__t__nope" + ENTER,
        "/help" + ENTER,
        '/mcp__t__review "src/app.py" security' + ENTER,
        ("/exit" + ENTER, lambda repl: len(repl.agent.model.calls) >= 1),
    ]
    shown, model, repl = chat_with_server(workspace, keys, final("reviewed"))
    assert "path missing: /mcp__t__review PATH [CONCERN]" in shown
    assert "no MCP prompt /mcp__t__nope" in shown
    assert "/mcp__t__review PATH [CONCERN]  Review a file for one concern." in shown
    task = first_task(model)
    assert "Review src/app.py for security." in task
    assert "the prompt of the MCP server t, as the task" in shown
    assert "\x1b" not in shown and "\\x1b[31m" in shown  # the server's escapes spelled out
    assert len(model.calls) == 1
    assert "mcp__t__review" in repl.prompt.completer.commands  # completed after a slash


def test_a_mentioned_resource_is_read_into_the_task(heph, chat_server, home):
    with_server(home)
    chat_server.reply(final("noted"))
    result = heph("--yes", "what is on @t:notes://today? and @t:notes://never, @else:x")
    assert result.code == 0, result.stderr
    task = observation(chat_server, 0)
    assert '<resource server="t" uri="notes://today"' in task and "Buy milk." in task
    assert "@else:x" in task  # no such server: left as written
    assert "@t:notes://never was not read" in result.stderr


def test_an_editor_is_offered_the_prompts_and_runs_one(chat_server, home, workspace):
    import asyncio

    from test_acp import Editor
    from test_acp_editor import connected, last_turn

    with_server(home)
    chat_server.reply(final("reviewed"))
    chat_server.reply(final("again"))

    async def scenario():
        editor = Editor([])
        process, connection, _ = await connected(editor, home, chat_server.url, workspace)
        started = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        from acp import text_block

        sid = started.session_id
        await connection.prompt(session_id=sid, prompt=[text_block("/mcp__t__review app.py")])
        await last_turn(connection, process, sid, "/mcp__t__review")  # its path missing
        return editor

    editor = asyncio.run(scenario())
    assert "Review app.py for bugs." in observation(chat_server, 0)
    assert len(chat_server.requests) == 1  # the second prompt never reached the model
    offered = [
        [c.name for c in u.available_commands]
        for u in editor.updates
        if u.session_update == "available_commands_update"
    ]
    assert "mcp__t__review" not in offered[0] and "mcp__t__review" in offered[-1]
    said = " ".join(
        u.content.text for u in editor.updates if u.session_update == "agent_message_chunk"
    )
    assert "path missing: /mcp__t__review PATH [CONCERN]" in said


def test_a_resource_never_ends_its_own_block_and_prompt_arguments_are_checked(
    heph, chat_server, home
):
    from hephaistus.mcp.prompts import Prompt, _arguments

    with_server(home)
    chat_server.reply(final("read"))
    assert heph("--yes", "read `@t:notes://break`").code == 0
    task = observation(chat_server, 0)
    assert task.count("</resource>") == 1 and "<\\/resource>" in task  # the server's, spelled
    review = Prompt("mcp__t__review", "t", "review", "", (("path", True), ("concern", False)))
    for line, why in (("path=", "path missing"), ("bogus=1 a", "bogus is not one of its")):
        with pytest.raises(ValueError, match=why):
            _arguments(review, line)


def test_a_tool_added_mid_chat_is_approved_in_the_chat_and_then_offered(
    workspace, home, monkeypatch
):
    from test_mcp_elicit import asked_about

    monkeypatch.setenv("HOME", str(home))

    def asked_model(n):
        return lambda repl: len(repl.agent.model.calls) >= n and repl.asking is None

    keys = [
        "grow" + ENTER,
        ("look" + ENTER, asked_model(2)),
        ("/mcp approve t" + ENTER, asked_model(3)),
        ("y", asked_about("Approve these tools of t?")),
        ("and now" + ENTER, lambda repl: "approved t" in repl.console.file.getvalue()),
        ("/exit" + ENTER, asked_model(4)),
    ]
    replies = (act("mcp__t__grow"), final("grew"), final("seen"), final("now"))
    shown, model, _ = chat_with_server(workspace, keys, *replies)
    assert "t: grown (new)" in shown and "/mcp approve NAME in the chat" in shown
    assert "mcp__t__grown" not in model.calls[2][0]["content"]
    assert "- mcp__t__grown(): A tool added later." in model.calls[3][0]["content"]
