"""heph's model lent to an MCP server (sampling), against the test server's `think` tool, which
asks the client's model with the mcp package's own `create_message`: only where the person's
entry says so, in prose, and counted in the session."""

from __future__ import annotations

import json

import pytest
from test_mcp import observation, with_server

from hephaistus.errors import ConfigError
from hephaistus.settings.mcp_config import mcp_servers
from hephaistus.testing import act, final


def test_a_server_is_lent_no_model_unless_the_person_says_so(heph, chat_server, home):
    with_server(home)
    chat_server.reply(act("mcp__t__think", question="what is six times seven?"))
    chat_server.reply(final("it could not"))
    assert heph("--yes", "think").code == 0
    assert "no model:" in observation(chat_server, 1)
    assert len(chat_server.requests) == 2  # the model was asked nothing for the server


def test_a_lent_model_answers_in_prose_and_its_tokens_count(heph, chat_server, home, workspace):
    with_server(home, "sampling = true\n")
    chat_server.reply(act("mcp__t__think", question="what is six times seven?"))
    chat_server.reply("Forty-two.")  # the server's request: prose, not a step
    chat_server.reply(final("42"))
    result = heph("--yes", "--json", "think")
    assert result.code == 0, result.stderr
    lent = chat_server.requests[1]
    assert lent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "what is six times seven?"},
    ]
    assert "response_format" not in lent and lent["max_tokens"] == 50
    assert observation(chat_server, 2) == "Observation: the model said: Forty-two."
    session = next((workspace / ".heph" / "sessions").glob("*.jsonl")).read_text()
    spans = [json.loads(line) for line in session.splitlines()]
    assert any(s.get("args", {}).get("sampled_for") == "t" for s in spans)  # counted


def test_a_workspace_may_not_lend_the_person_s_model():
    table = {"w": {"command": "x", "sampling": True}}
    with pytest.raises(ConfigError, match="'sampling' is for your user config only"):
        mcp_servers(table, "workspace .heph.toml", in_workspace=True)


def test_a_server_may_ask_the_model_five_times_in_a_call_and_each_is_said(heph, chat_server, home):
    with_server(home, "sampling = true\n")
    chat_server.reply(act("mcp__t__greedy", n=8))
    for _ in range(5):
        chat_server.reply("more.")
    chat_server.reply(final("enough"))
    result = heph("--yes", "be greedy")
    assert result.code == 0, result.stderr
    said = observation(chat_server, 6)
    assert "5 answered, then: heph lends its model at most 5 times in one call" in said
    assert result.stderr.count("the MCP server t asked your model") == 5
