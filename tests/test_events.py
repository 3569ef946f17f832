"""`--output jsonl`: the run as it happens, one JSON object per line on stdout."""

import json
import select
import subprocess
import threading

from conftest import environment
from hephaistus.testing import act, final, heph_command


def events(stdout):
    return [json.loads(line) for line in stdout.splitlines()]


def test_the_stream_carries_what_the_session_records(heph, chat_server, workspace):
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    chat_server.reply(act("edit_file", "Fix the sign.", path="app.py", old="a - b", new="a + b"))
    chat_server.reply(final("Fixed the sign in add."))
    result = heph("--output", "jsonl", "--yes", "fix add in app.py")
    assert result.code == 0, result.stderr
    stream = events(result.stdout)
    assert stream[0]["type"] == "session" and stream[0]["task"] == "fix add in app.py"
    spans = [e for e in stream if e["type"] == "span"]
    assert [s["kind"] for s in spans] == ["INPUT", "LLM", "TOOL", "LLM", "ANSWER"]
    assert spans[1]["usage"]["prompt_tokens"] > 0
    tool = spans[2]
    assert tool["name"] == "edit_file" and tool["args"]["path"] == "app.py"
    assert "-    return a - b\n+    return a + b" in tool["output"]["diff"]
    assert spans[4]["output"] == "Fixed the sign in add."
    assert stream[-1]["type"] == "end" and stream[-1]["outcome"] == "answered"
    session_file = sorted((workspace / ".heph" / "sessions").glob("*.jsonl"))[-1]
    recorded = [json.loads(line) for line in session_file.read_text().splitlines()]
    assert [e for e in stream if e["type"] != "notice"] == recorded  # the same events


def test_a_refused_write_and_a_notice_are_events(heph, chat_server, workspace):
    chat_server.reply(act("write_file", path="new.py", content="x = 1\n"))
    chat_server.reply(final("done"))
    result = heph("--output", "jsonl", "write new.py")
    assert result.code == 3
    stream = events(result.stdout)
    assert stream[-1] == {"type": "failure", "message": stream[-1]["message"]}
    assert "pass --mode edits" in stream[-1]["message"]
    assert not (workspace / "new.py").exists()
    assert heph("--output", "jsonl", "--json", "x").code == 2


def test_events_arrive_while_the_run_goes_on(chat_server, home, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    chat_server.reply(act("read_file", path="a.py"))
    answer = threading.Event()

    def second_reply(body):  # the model thinks until the test has seen the events so far
        answer.wait(20)
        return final("read it")

    chat_server.responder = second_reply
    process = subprocess.Popen(
        [*heph_command(), "--output", "jsonl", "read a.py"],
        cwd=workspace,
        env=environment(home, chat_server.url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = []
    try:
        while not any(e.get("kind") == "TOOL" for e in seen):
            assert select.select([process.stdout], [], [], 20)[0], "no event came"
            seen.append(json.loads(process.stdout.readline()))
        assert process.poll() is None  # the run is still waiting for its second reply
    finally:
        answer.set()
    out, _ = process.communicate(timeout=20)
    assert events(out)[-1]["type"] == "end" and process.returncode == 0
