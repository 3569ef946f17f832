"""A server's question to the person (MCP elicitation), against the test server's `book` tool,
which asks with the mcp package's own `ctx.elicit`: in the chat (typed answers, defaults,
answers that are not one, type-ahead, Ctrl-C), without a person (declined), and its form."""

from __future__ import annotations

import io
import json
import sys
import threading
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from test_mcp import SERVER, observation, with_server
from test_repl import _type_when_ready, asked_about

from hephaistus.engine.agent import Agent
from hephaistus.mcp.elicit import Field, Question, fill_in, question_of, value_of
from hephaistus.runtime.policy import Policy
from hephaistus.settings.config import Config
from hephaistus.settings.mcp_config import McpServerConfig
from hephaistus.testing import ScriptedModel, act, final
from hephaistus.ui.approval import TerminalAsker
from hephaistus.ui.render import ConsoleSink
from hephaistus.ui.repl import Repl
from hephaistus.workspace import Workspace

ENTER, CTRL_C = "\r", "\x03"


@pytest.fixture(autouse=True)
def persons_own_project(workspace):
    from hephaistus.workspace.trust import TrustStore

    TrustStore().record(workspace, [], True)


def chat_with_server(workspace: Path, keys: list, *replies):
    """The chat on typed `keys` (chunks, each typed once its condition holds), with the test
    server as the person's; returns what it printed and the model."""
    server = McpServerConfig(
        "t", command=sys.executable, args=(str(SERVER),), on_host=True, tool_timeout_sec=20
    )
    model = ScriptedModel(list(replies))
    console = Console(file=io.StringIO(), force_terminal=False, width=200)
    sink = ConsoleSink(console=console)
    asker = TerminalAsker(sink)
    config = Config(mcp_servers=(server,))
    agent = Agent(
        Workspace.at(workspace), config, model=model, sink=sink, policy=Policy("auto", asker=asker)
    )
    try:
        with create_pipe_input() as pipe:
            pipe.send_text(keys[0])
            holder: dict = {}
            typist = threading.Thread(
                target=_type_when_ready, args=(pipe, keys[1:], holder), daemon=True
            )
            repl = Repl(agent, sink, asker, input=pipe, output=DummyOutput())
            repl.lines_asked = 0  # type: ignore[attr-defined]
            asker.ask_line = counted(repl)
            holder["repl"] = repl
            typist.start()
            assert repl.run() == 0
    finally:
        agent.close()
    return console.file.getvalue(), model, repl


def counted(repl):
    """The chat's line question, counting the questions put (an answer is typed only once
    its own question shows: one typed before it is no answer)."""

    def ask_line(question: str) -> str:
        repl.lines_asked += 1
        return Repl.ask_line(repl, question)

    return ask_line


def line_question(n: int, text: str):
    """A condition: the n-th line question (from 1) is showing, and holds `text`."""
    return lambda repl: repl.lines_asked == n and text in (repl.asking or "")


def turn_over(repl) -> bool:
    """A condition: the model was asked again after the call (its answer ends the turn)."""
    return len(repl.agent.model.calls) >= 2


def test_the_person_fills_in_a_server_s_form_in_the_chat(workspace, home, monkeypatch):
    monkeypatch.setenv("HOME", str(home))
    keys = [
        "book a room" + ENTER,
        ("y", asked_about("Answer it?")),
        (ENTER, line_question(1, "Your name")),  # needed: asked again
        ("Ada" + ENTER, line_question(2, "Your name")),
        ("forty" + ENTER, line_question(3, "nights")),  # not a number: asked again
        ("40" + ENTER, line_question(4, "nights")),  # above its maximum: asked again
        (ENTER, line_question(5, "nights")),  # its default
        ("1" + ENTER, line_question(6, "room")),  # the first choice, by number
        ("n" + ENTER, line_question(7, "breakfast")),
        ("/exit" + ENTER, turn_over),
    ]
    shown, model, _ = chat_with_server(workspace, keys, act("mcp__t__book"), final("booked it"))
    seen = model.calls[1][-1]["content"]
    booked = json.loads(seen.split("booked: ", 1)[1])
    assert booked == {"name": "Ada", "nights": 2, "room": "single", "breakfast": False}


def test_without_a_person_the_question_is_declined(heph, chat_server, home):
    with_server(home)
    chat_server.reply(act("mcp__t__book"))
    chat_server.reply(final("could not"))
    result = heph("--yes", "book a room")
    assert result.code == 0, result.stderr
    assert "not booked: decline" in observation(chat_server, 1)


def test_a_form_is_read_as_the_server_declared_it():
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 2},
            "age": {"type": "integer", "default": 30, "minimum": 0},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "tags": {"type": "array", "items": {"anyOf": [{"const": "a"}, {"const": "b"}]}},
            "verified": {"type": "boolean", "default": True},
        },
        "required": ["name"],
    }
    question = question_of("s", "Hi \x1b[2J", schema)
    assert question is not None
    fields = {f.name: f for f in question.fields}
    assert fields["status"].choices == ("active", "inactive")
    assert fields["tags"].kind == "choices"
    assert question.defaults() is None  # name has none
    assert "\x1b" not in question.heading()
    assert value_of(fields["tags"], "2, a") == ["b", "a"]
    assert value_of(fields["score"], "1.5") == 1.5
    for field, typed in ((fields["name"], "x"), (fields["age"], "-1"), (fields["status"], "3")):
        with pytest.raises(ValueError):
            value_of(field, typed)
    nested = {"type": "object", "properties": {"a": {"type": "object"}}}
    assert question_of("s", "nested", nested) is None  # not a form heph can ask


def test_enter_takes_every_default_and_no_answer_declines():
    question = question_of(
        "s",
        "defaults",
        {"properties": {"n": {"type": "integer", "default": 3}, "o": {"type": "string"}}},
    )
    assert question is not None
    said: list[str] = []
    assert fill_in(question, lambda _: "", said.append).content == {"n": 3}

    def gone(_: str) -> str:
        raise EOFError

    assert fill_in(question, gone, said.append).action == "decline"
    assert said[0].startswith("The MCP server s asks: defaults")


def test_ctrl_c_at_a_field_stops_the_turn_and_the_server_hears_cancel():
    question = Question("s", "q", (Field("a", "string", "a", True),))

    def ctrl_c(_: str) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fill_in(question, ctrl_c, lambda _: None)


def test_ctrl_c_at_a_field_in_the_chat_cancels_the_turn(workspace, home, monkeypatch):
    monkeypatch.setenv("HOME", str(home))
    keys = [
        "book a room" + ENTER,
        ("y", asked_about("Answer it?")),
        (CTRL_C, line_question(1, "Your name")),
        ("/exit" + ENTER, lambda repl: repl.asking is None),
    ]
    shown, model, _ = chat_with_server(workspace, keys, act("mcp__t__book"), final("never"))
    assert "cancelled; the session was saved" in shown
    assert len(model.calls) == 1  # the turn ended at the question


def test_an_editor_is_shown_the_defaults_and_its_yes_sends_them(chat_server, home, workspace):
    from test_acp import Editor
    from test_acp_editor import connected, last_turn

    with_server(home)
    chat_server.reply(act("mcp__t__printout"))
    chat_server.reply(act("mcp__t__book"))  # a name is needed: an editor cannot type one
    chat_server.reply(final("printed"))

    async def scenario():
        editor = Editor(["allow_once", "accept", "allow_once"])  # call, question, call
        process, connection, _ = await connected(editor, home, chat_server.url, workspace)
        started = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        await last_turn(connection, process, started.session_id, "print it")
        return editor

    import asyncio

    editor = asyncio.run(scenario())
    assert 'printed: {"copies":1,"color":false}' in observation(chat_server, 1)
    assert "not booked: decline" in observation(chat_server, 2)
    shown = editor.asked[1].content[0].content.text
    assert shown.startswith("The MCP server t asks: How shall it print?")
    assert "copies: 1" in shown and "color: false" in shown
    assert len(editor.asked) == 3  # book's question was never put


def test_what_a_hostile_form_holds_never_reaches_the_terminal_or_the_server_unchecked():
    evil = "\x1b[2J\x1b[31mPWNED"
    schema = {
        "properties": {
            evil: {"type": "string"},
            "pick": {"type": "string", "enum": [f"a{evil}", "b"]},
            "price": {"type": "number", "minimum": 0, "maximum": 100},
            "count": {"type": "integer", "default": "lots"},  # not an integer: no default
            "tags": {"type": "array", "items": {"enum": ["x", "y"]}},
        },
        "required": [evil, "price"],
    }
    question = question_of("s", "line one\nThe MCP server heph asks: trust me", schema)
    assert question is not None
    fields = {f.name: f for f in question.fields}
    assert fields["count"].default is None
    assert "\n    The MCP server heph asks" in question.heading()  # indented: the server's
    for typed in ("nan", "inf", "-1", "101"):
        with pytest.raises(ValueError):
            value_of(fields["price"], typed)
    assert value_of(fields["tags"], "x, y, 1") == ["x", "y"]
    with pytest.raises(ValueError) as said:
        value_of(fields["pick"], "zzz")
    assert "\x1b" not in str(said.value)
    lines = iter(["", "ok", "3", "zzz", "1", "50", "", ""])
    shown: list[str] = []
    reply = fill_in(question, lambda prompt: shown.append(prompt) or next(lines), shown.append)
    assert reply.content == {evil: "ok", "pick": f"a{evil}", "price": 50.0}
    assert not any("\x1b" in line for line in shown)
    assert "(0 to 100)" in "".join(shown)
