"""MCP servers others wrote, from PyPI (`mcp-server-time`, `mcp-server-git`): what the model is
told of their tools' arguments, and what their answers look like to it, asserted on what the
scripted model received."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from test_mcp import observation, persons_own_project, user_config  # noqa: F401 (a fixture)

from hephaistus.testing import act, final

pytest.importorskip("mcp_server_time")
pytest.importorskip("mcp_server_git")


def with_servers(home, workspace):
    python = json.dumps(sys.executable)
    user_config(
        home,
        f'[mcp_servers.time]\ncommand = {python}\nargs = ["-m", "mcp_server_time", '
        '"--local-timezone", "UTC"]\n'
        f'[mcp_servers.git]\ncommand = {python}\nargs = ["-m", "mcp_server_git", '
        f'"--repository", {json.dumps(str(workspace))}]\nread_only_tools = ["git_log"]\n',
    )


def test_the_time_servers_arguments_are_described_and_its_answer_is_its_json_once(
    heph, chat_server, home, workspace
):
    with_servers(home, workspace)
    args = {"source_timezone": "Europe/London", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    chat_server.reply(act("mcp__time__convert_time", **args))
    chat_server.reply(final("21:00 in Tokyo"))
    assert heph("--yes", "what is noon in London in Tokyo").code == 0
    system = chat_server.requests[0]["messages"][0]["content"]
    assert "    - time (string, required): Time to convert in 24-hour format (HH:MM)" in system
    assert "    - target_timezone (string, required): Target IANA timezone name" in system
    answer = observation(chat_server, 1).removeprefix("Observation: ")
    assert json.loads(answer)["target"]["datetime"].endswith("T21:00:00+09:00")
    assert "[structured content]" not in answer  # the same JSON is not said twice


def test_the_git_servers_optional_arguments_and_defaults_and_a_call_with_nulls(
    heph, chat_server, home, workspace
):
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    (workspace / "a.txt").write_text("a\n")
    subprocess.run(["git", "add", "a.txt"], cwd=workspace, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first commit"],
        cwd=workspace,
        check=True,
    )
    with_servers(home, workspace)
    # A strict-form model sends every key: null for the timestamps it does not filter by.
    chat_server.reply(
        act(
            "mcp__git__git_log",
            repo_path=str(workspace),
            max_count=1,
            start_timestamp=None,
            end_timestamp=None,
        )
    )
    chat_server.reply(final("one commit"))
    assert heph("--yes", "show the last commit").code == 0
    system = chat_server.requests[0]["messages"][0]["content"]
    signature = (
        "mcp__git__git_log(repo_path, max_count?: integer, start_timestamp?, end_timestamp?)"
    )
    assert signature in system
    assert "    - max_count (integer, default 10)" in system
    assert "    - start_timestamp (string or null, default null): Start timestamp" in system
    assert "Message: first commit" in observation(chat_server, 1)
