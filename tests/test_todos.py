"""The todo list (`todo_write`): the whole list each time, at most one item in progress, kept
in the AgentState so a follow-up sees it, shown to the person as it changes, sent to an editor
as ACP `plan` updates in order, and left out with `todo = false`."""

from __future__ import annotations

import pytest
from test_acp import Editor, run, session, start

from hephaistus.records.todos import Todo, checked, from_lines
from hephaistus.testing import act, final

STEPS = [
    {"content": "Read app.py", "status": "completed"},
    {"content": "Fix the sign in add", "status": "in_progress", "priority": "high"},
    {"content": "Run the tests", "status": "pending"},
]


def test_a_list_is_checked_and_kept_as_lines():
    todos = checked(STEPS)
    assert [t.line() for t in todos] == [
        "[x] Read app.py",
        "[>] Fix the sign in add",
        "[ ] Run the tests",
    ]
    assert from_lines([t.line() for t in todos]) == [
        Todo("Read app.py", "completed"),
        Todo("Fix the sign in add", "in_progress"),
        Todo("Run the tests", "pending"),
    ]
    for wrong, said in [
        ({"content": "x"}, "must be a list"),
        ([{"content": "a", "status": "in_progress"}] * 2, "at most one item may be in_progress"),
        ([{"content": "a", "status": "done"}], "status must be one of"),
        ([{"status": "pending"}], "needs a content string"),
        ([{"content": "a", "priority": "urgent"}], "priority must be one of"),
        ([{"content": "a"}] * 51, "at most 50 items"),
    ]:
        with pytest.raises(ValueError, match=said):
            checked(wrong)


def test_the_list_reaches_the_state_the_screen_and_the_next_task(heph, chat_server, workspace):
    chat_server.reply(act("todo_write", todos=STEPS))
    chat_server.reply(act("todo_write", todos=[{"content": "a", "status": "in_progress"}] * 2))
    chat_server.reply(final("working on it"))
    result = heph("fix add")
    assert result.code == 0, result.stderr
    said = chat_server.requests[1]["messages"][-1]["content"]
    assert "todo list updated (1 of 3 done):\n[x] Read app.py\n[>] Fix the sign in add" in said
    assert "todo list: [x] Read app.py | [>] Fix the sign in add | [ ] Run the tests" in said
    refused = chat_server.requests[2]["messages"][-1]["content"]
    assert "at most one item may be in_progress" in refused and "the list is unchanged" in refused
    assert "[>] Fix the sign in add" in result.stderr  # shown as it changed
    chat_server.reply(final("continuing"))
    assert heph("-c", "continue").code == 0
    assert "[ ] Run the tests" in chat_server.requests[3]["messages"][-1]["content"]


def test_todo_false_leaves_the_tool_out(heph, chat_server, workspace):
    chat_server.reply(final("ok"))
    assert heph("hello").code == 0
    assert "- todo_write(todos: json)" in chat_server.requests[0]["messages"][0]["content"]
    (workspace / ".heph.toml").write_text("todo = false\n")
    chat_server.reply(final("ok"))
    assert heph("hello").code == 0
    assert "todo_write" not in chat_server.requests[1]["messages"][0]["content"]


def test_an_editor_gets_each_list_as_a_plan_update_in_order(chat_server, home, workspace):
    chat_server.reply(act("todo_write", todos=STEPS))
    done = [{**step, "status": "completed"} for step in STEPS]
    chat_server.reply(act("todo_write", todos=done))
    chat_server.reply(final("fixed"))

    async def scenario():
        editor = Editor([])
        process = await start(home, chat_server.url, workspace)
        connection, sid = await session(editor, process, workspace)
        finished = await connection.prompt(session_id=sid, prompt=[text_block("fix add")])
        assert finished.stop_reason == "end_turn"
        plans = [u for u in editor.updates if u.session_update == "plan"]
        assert [[e.status for e in p.entries] for p in plans] == [
            ["completed", "in_progress", "pending"],
            ["completed", "completed", "completed"],
        ]
        assert plans[0].entries[1].priority == "high"
        assert [e.content for e in plans[0].entries][0] == "Read app.py"
        process.stdin.close()
        assert await process.wait() == 0

    from acp import text_block

    run(scenario())


def test_an_editor_titles_the_list_and_a_skill_by_what_they_do():
    from hephaistus.acp.updates import title_of
    from hephaistus.values import Action

    assert title_of(Action("", "todo_write", {"todos": STEPS}), {}) == "Update the todo list"
    assert title_of(Action("", "skill", {"name": "lint-fix"}), {}) == "Load skill lint-fix"
    shown = title_of(Action("", "skill", {"name": "lint-fix", "file": "a.py"}), {})
    assert shown == "Load skill lint-fix a.py"
