"""Sub-agents (`task`), with the scripted model serving the parent's and the child's requests
in the order they are made: the parent's next request holds only the child's answer, the
child never has more tools than the parent (and never `task`), answers at its step limit,
counts in the session's tokens, is undone with the parent's turn and is seen in replay."""

from __future__ import annotations

import json
from pathlib import Path

from hephaistus.testing import act, final

SECRET_LINE = "UNIQUE_LINE_ONLY_THE_CHILD_READS = 1"


def agent_file(workspace: Path, name: str, front: str, body: str = "Do as asked.") -> None:
    folder = workspace / ".heph" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(f"---\nname: {name}\n{front}---\n{body}\n")


def spans(workspace: Path) -> list[dict]:
    session = sorted((workspace / ".heph" / "sessions").glob("*.jsonl"))[-1]
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    return [line for line in lines if line.get("type") == "span"]


def test_the_parent_gets_only_the_childs_answer(heph, chat_server, workspace):
    (workspace / "app.py").write_text(f"def add(a, b):\n    return a + b\n{SECRET_LINE}\n")
    chat_server.reply(act("task", description="find add", prompt="Where is add defined?"))
    chat_server.reply(act("read_file", path="app.py"))  # the child
    chat_server.reply(final("add is defined in app.py, line 1"))  # the child's answer
    chat_server.reply(final("add is in app.py"))  # the parent
    result = heph("where is add?")
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == "add is in app.py"  # the run's answer alone
    child_system = chat_server.requests[1]["messages"][0]["content"]
    assert "sub-agent explore" in child_system
    assert "- task(" not in child_system and "- write_file(" not in child_system
    assert "- read_file(" in child_system
    assert SECRET_LINE in chat_server.requests[2]["messages"][-1]["content"]  # the child read it
    parent = json.dumps(chat_server.requests[3]["messages"])
    assert '<task agent=\\"explore\\">\\nadd is defined in app.py, line 1' in parent
    assert SECRET_LINE not in parent
    assert (
        "- task(description, prompt, agent?)" in chat_server.requests[0]["messages"][0]["content"]
    )


def test_an_agents_tools_only_narrow_and_a_child_has_no_task(heph, chat_server, workspace):
    agent_file(workspace, "reader", "description: reads\ntools: read_file, search\n")
    chat_server.reply(act("task", description="look", prompt="look around", agent="reader"))
    chat_server.reply(act("shell", command="rm -rf ."))  # the child: not its tool
    chat_server.reply(act("task", description="again", prompt="nest"))  # nor this
    chat_server.reply(final("nothing to report"))
    chat_server.reply(final("ok"))
    result = heph("--trust", "--yes", "look")
    assert result.code == 0, result.stderr
    assert (
        "Sub-agents for the task tool:\n- reader: reads"
        in chat_server.requests[0]["messages"][0]["content"]
    )
    child_system = chat_server.requests[1]["messages"][0]["content"]
    assert "- read_file(" in child_system and "- search(" in child_system
    assert "- list_files(" not in child_system and "- task(" not in child_system
    assert "unknown tool 'shell'" in chat_server.requests[2]["messages"][-1]["content"]
    assert "unknown tool 'task'" in chat_server.requests[3]["messages"][-1]["content"]
    assert "nothing to report" in chat_server.requests[4]["messages"][-1]["content"]


def test_an_unknown_agent_is_refused(heph, chat_server, workspace):
    chat_server.reply(act("task", description="x", prompt="y", agent="nobody"))
    chat_server.reply(final("ok"))
    assert heph("look").code == 0
    said = chat_server.requests[1]["messages"][-1]["content"]
    assert "no agent is called 'nobody' (agents: explore)" in said


def test_a_child_at_its_step_limit_still_answers(heph, chat_server, workspace):
    (workspace / "a.py").write_text("A = 1\n")
    agent_file(workspace, "brief", "description: short\nmax_steps: 1\n")
    chat_server.reply(act("task", description="look", prompt="read a.py", agent="brief"))
    chat_server.reply(act("read_file", path="a.py"))  # its one step
    chat_server.reply(final("A is 1; b.py is left"))  # asked for what it found
    chat_server.reply(final("ok"))
    assert heph("--trust", "look").code == 0
    assert "reached your step limit" in chat_server.requests[2]["messages"][-1]["content"]
    assert "A is 1; b.py is left" in chat_server.requests[3]["messages"][-1]["content"]


def test_the_childs_tokens_count_and_replay_shows_its_steps(heph, chat_server, workspace):
    (workspace / "a.py").write_text("A = 1\n")
    chat_server.reply(act("task", description="look", prompt="read a.py"))
    chat_server.reply(act("read_file", path="a.py"))
    chat_server.reply(final("A is 1"))
    chat_server.reply(final("ok"))
    result = heph("--json", "look")
    assert result.code == 0
    recorded = spans(workspace)
    child = [s for s in recorded if s.get("args", {}).get("agent") == "explore"]
    assert [s["kind"] for s in child] == ["LLM", "TOOL", "LLM", "MEMO"]
    models = [s for s in recorded if s["kind"] == "LLM"]
    assert len(models) == 4
    for count in ("prompt_tokens", "completion_tokens"):
        assert result.json["usage"][count] == sum(s["usage"][count] for s in models)
    replayed = heph("replay")
    shown = replayed.stderr + replayed.stdout
    assert "read_file path=a.py agent=explore" in shown and "answer of explore: A is 1" in shown


def test_undo_takes_back_a_childs_edit(heph, chat_server, workspace):
    agent_file(workspace, "writer", "description: writes\ntools: write_file\n")
    chat_server.reply(act("task", description="make", prompt="write new.py", agent="writer"))
    chat_server.reply(act("write_file", path="new.py", content="X = 1\n"))
    chat_server.reply(final("wrote new.py"))
    chat_server.reply(final("done"))
    assert heph("--trust", "--yes", "make it").code == 0
    assert (workspace / "new.py").exists()
    result = heph("undo")
    assert result.code == 0, result.stdout + result.stderr
    assert not (workspace / "new.py").exists()
