"""End-to-end: `heph` against the loopback Chat Completions server, in-process, with a few runs
of the installed command as a real process (entry point, exit codes)."""

import json

import pytest

from conftest import git
from hephaistus.testing import act, final


def test_read_write_final(heph_process, chat_server, workspace):
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    chat_server.reply(act("read_file", "Let me look at app.py", path="app.py"))
    chat_server.reply(act("edit_file", path="app.py", old="a - b", new="a + b"))
    chat_server.reply(final("Fixed the sign in `add`."))
    result = heph_process("--yes", "fix", "add")
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == "Fixed the sign in `add`."
    assert "Let me look at app.py" in result.stderr
    assert "→ read_file path=app.py" in result.stderr
    assert "-    return a - b\n+    return a + b" in result.stderr  # the diff of the write
    assert (workspace / "app.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert "\x1b[" not in result.stderr + result.stdout  # no escape codes without a terminal
    assert len(chat_server.requests) == 3


def test_malformed_reply_then_recovery(heph, chat_server):
    chat_server.reply("Sure, I will do that now!")
    chat_server.reply(final("done"))
    result = heph("do it")
    assert result.code == 0 and result.stdout.strip() == "done"
    feedback = chat_server.requests[1]["messages"][-1]["content"]
    assert feedback.startswith("Your last reply was not valid")
    assert "malformed reply" in result.stderr


def test_unknown_tool_and_missing_argument_are_fed_back(heph, chat_server):
    chat_server.reply(act("delete_everything"))
    chat_server.reply({"thought": "t", "action": {"tool": "read_file", "args": {}}})
    chat_server.reply(final("ok"))
    result = heph("go")
    assert result.code == 0
    assert "unknown tool 'delete_everything'" in chat_server.requests[1]["messages"][-1]["content"]
    assert "missing required argument 'path'" in chat_server.requests[2]["messages"][-1]["content"]


def test_three_malformed_replies_exit_1(heph, chat_server):
    for _ in range(3):
        chat_server.reply("no json")
    result = heph("go")
    assert result.code == 1 and "3 malformed replies in a row" in result.stderr


def test_path_escapes_are_refused_and_nothing_is_written_outside(
    heph, chat_server, workspace, tmp_path
):
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "escape").symlink_to(outside)
    chat_server.reply(act("write_file", path="../evil.py", content="x"))
    chat_server.reply(act("write_file", path=str(outside / "abs.py"), content="x"))
    chat_server.reply(act("write_file", path="escape/link.py", content="x"))
    chat_server.reply(act("read_file", path="/etc/passwd"))
    chat_server.reply(final("gave up"))
    result = heph("--yes", "escape")
    assert result.code == 0
    assert list(outside.iterdir()) == [] and not (tmp_path / "evil.py").exists()
    observations = [r["messages"][-1]["content"] for r in chat_server.requests[1:]]
    assert all("outside the workspace" in o for o in observations)
    assert "root:" not in json.dumps(chat_server.requests)


def test_max_steps(heph, chat_server):
    chat_server.reply(act("list_files")).reply(act("read_file", path="x"))
    result = heph("--max-steps", "2", "go")
    assert result.code == 1 and "step limit (2)" in result.stderr
    assert len(chat_server.requests) == 2


def test_loop_detection(heph, chat_server):
    for _ in range(3):
        chat_server.reply(act("list_files"))
    result = heph("go")
    assert result.code == 1 and "same list_files call 3 times" in result.stderr


def test_three_transient_faults_then_success(heph, chat_server):
    chat_server.fault("status", status=429, headers={"Retry-After": "0"})
    chat_server.fault("status", status=500)
    chat_server.fault("reset")
    chat_server.reply(final("made it"))
    result = heph("go")
    assert result.code == 0 and result.stdout.strip() == "made it"
    assert result.stderr.count("retrying in") == 3


def test_dead_endpoint_exit_1_names_the_url(heph):
    url = "http://127.0.0.1:9/v1"
    result = heph("go", env={"OPENAI_BASE_URL": url})
    assert result.code == 1
    assert f"nothing is listening at {url}" in result.stderr
    assert "Traceback" not in result.stderr


def test_no_terminal_without_yes_refuses_writes_exit_3(heph, chat_server, workspace):
    chat_server.reply(act("write_file", path="new.py", content="x = 1\n"))
    result = heph("write new.py")  # standard input is no terminal, as in a pipeline
    assert result.code == 3
    assert "--yes" in result.stderr and "--dry-run" in result.stderr
    assert not (workspace / "new.py").exists()
    assert len(chat_server.requests) == 1


def test_dry_run_shows_the_diff_and_writes_nothing(heph, chat_server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    chat_server.reply(act("edit_file", path="a.py", old="x = 1", new="x = 2"))
    chat_server.reply(final("changed x"))
    result = heph("--dry-run", "change x")
    assert result.code == 0
    assert "-x = 1\n+x = 2" in result.stderr and "nothing was written" in result.stderr
    assert (workspace / "a.py").read_text() == "x = 1\n"
    assert "dry run" in chat_server.requests[1]["messages"][-1]["content"]


def test_second_run_knows_the_file_the_first_wrote(heph, chat_server):
    chat_server.reply(act("write_file", path="fizzbuzz.py", content="print('fizz')\n"))
    chat_server.reply(final("wrote fizzbuzz.py"))
    assert heph("--yes", "write fizzbuzz").code == 0
    chat_server.reply(final("ok"))
    assert heph("it is incorrect").code == 0
    first_request = chat_server.requests[2]["messages"]
    assert len(first_request) == 2  # a new conversation: system prompt and the task
    assert "last modified file: fizzbuzz.py" in first_request[-1]["content"]
    assert "last task: write fizzbuzz" in first_request[-1]["content"]


def test_continue_carries_the_conversation(heph, chat_server):
    chat_server.reply(final("first answer"))
    heph("first task")
    chat_server.reply(final("second answer"))
    assert heph("-c", "second task").code == 0
    messages = chat_server.requests[1]["messages"]
    assert messages[1]["content"].startswith("first task")
    assert messages[2]["content"] == json.dumps(final("first answer"))
    assert messages[-1]["content"].startswith("second task")


def test_replay_shows_a_recorded_thought_without_the_model(heph, chat_server, workspace):
    chat_server.reply(act("list_files", "A memorable thought about files"))
    chat_server.reply(final("listed"))
    assert heph("list").code == 0
    chat_server.stop()  # nothing to call any more
    result = heph("replay", "last")
    assert result.code == 0
    # all of it on standard output, so `> run.txt` and `| less` get the whole replay
    assert "A memorable thought about files" in result.stdout
    assert "→ list_files" in result.stdout and "listed" in result.stdout
    assert result.stderr == ""
    assert len(chat_server.requests) == 2
    records = heph("replay", "last", "--json").json
    assert records["session"]["task"] == "list"
    assert [m["role"] for m in records["messages"]][:2] == ["system", "user"]
    assert [s["kind"] for s in records["spans"]][:3] == ["INPUT", "LLM", "TOOL"]
    assert records["spans"][2]["name"] == "list_files" and records["spans"][2]["ok"] is True
    assert records["end"]["outcome"] == "answered"


def test_sessions_lists_runs(heph, chat_server):
    chat_server.reply(final("one"))
    heph("the first task")
    chat_server.reply("bad").reply("bad").reply("bad")
    heph("the second task")
    chat_server.reply(final("planned"))
    heph("--mode", "plan", "the third task")
    result = heph("sessions")
    lines = result.stdout.splitlines()
    assert lines[0].split()[:5] == ["ID", "STARTED", "(UTC)", "MODE", "STEPS"]
    assert "answered" in lines[1] and "the first task" in lines[1]
    assert "failed" in lines[2] and "the second task" in lines[2]
    assert [line.split()[3] for line in lines[1:]] == ["ask", "ask", "plan"]
    listed = heph("sessions", "--json", "--limit", "2").json["sessions"]
    assert [s["task"] for s in listed] == ["the second task", "the third task"]
    assert int(listed[0]["steps"]) == 3 and [s["mode"] for s in listed] == ["ask", "plan"]


def test_json_output(heph, chat_server, workspace):
    chat_server.reply(act("write_file", path="a.txt", content="hi\n"))
    chat_server.reply(final("wrote a.txt"))
    result = heph("--json", "--yes", "write a")
    assert result.code == 0 and result.stderr == ""
    payload = result.json
    assert payload["outcome"] == "answered" and payload["message"] == "wrote a.txt"
    assert payload["changed_files"] == ["a.txt"] and payload["steps"] == 2
    assert payload["usage"]["prompt_tokens"] > 0


def test_no_endpoint_configured_exit_2_with_help(heph):
    result = heph("go", env={"OPENAI_BASE_URL": None})
    assert result.code == 2
    for words in ("OPENAI_API_KEY", "Ollama", "llama.cpp"):
        assert words in result.stderr


def test_bad_config_exit_2_names_file_and_key(heph, workspace):
    (workspace / ".heph.toml").write_text("temperature = 0.2\n")
    result = heph("go")
    assert result.code == 2 and ".heph.toml" in result.stderr and "'temperature'" in result.stderr


def test_usage_errors_exit_2(heph_process, workspace):
    assert heph_process("--max-steps", "zero", "go").code == 2
    assert heph_process("-w", str(workspace / "missing"), "go").code == 2
    assert heph_process("sessions", "--limit", "-1").code == 2
    empty = heph_process("--test-cmd", " ", "go")  # would be ignored: the config's test ran
    assert empty.code == 2 and "--test-cmd" in empty.stderr
    both = heph_process("-q", "-v", "go")  # opposite wishes: neither wins silently
    assert both.code == 2 and "not allowed with" in both.stderr
    missing = heph_process("mcp", "import", str(workspace / "missing.json"))
    assert missing.code == 2 and "missing.json" in missing.stderr
    result = heph_process("replay", "nosuchid")
    assert result.code == 2 and "no sessions recorded yet" in result.stderr


def test_double_dash_makes_a_subcommand_name_a_task(heph, chat_server):
    chat_server.reply(final("documented"))
    result = heph("--", "docs")
    assert result.code == 0
    assert chat_server.requests[0]["messages"][1]["content"].startswith("docs")


def test_task_from_standard_input(heph, chat_server):
    chat_server.reply(final("read from stdin"))
    result = heph(stdin="explain the project\n")
    assert result.code == 0
    assert chat_server.requests[0]["messages"][1]["content"].startswith("explain the project")


def test_sessions_are_kept_out_of_git(heph, chat_server, workspace):
    git(workspace, "init", "-q")
    chat_server.reply(final("ok"))
    heph("go")
    assert (workspace / ".heph" / "sessions").is_dir()
    assert git(workspace, "status", "--porcelain") == ""


def test_workspace_defaults_to_the_git_top_level(heph, chat_server, workspace):
    git(workspace, "init", "-q")
    (workspace / "pkg").mkdir()
    chat_server.reply(act("write_file", path="top.txt", content="x\n")).reply(final("ok"))
    assert heph("--yes", "go", cwd=workspace / "pkg").code == 0
    assert (workspace / "top.txt").exists() and not (workspace / "pkg" / "top.txt").exists()


def test_streaming_endpoint_with_a_broken_stream_then_a_whole_one(heph, chat_server, workspace):
    (workspace / ".heph.toml").write_text("stream = true\n")
    chat_server.fault("truncated_stream")
    chat_server.reply(final("streamed answer that is long enough for several chunks"))
    result = heph("go")
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == "streamed answer that is long enough for several chunks"
    assert all(body["stream"] for body in chat_server.requests)
    assert "stream ended before the reply was complete; retrying" in result.stderr


def test_a_slow_model_times_out_and_is_retried(heph, chat_server):
    chat_server.fault("timeout", delay=1.0).reply(final("second try"))
    result = heph("go", env={"HEPH_TIMEOUT": "0.3"})
    assert result.code == 0 and "no reply within 0.3 s (the `timeout` setting)" in result.stderr


def test_a_workspace_where_heph_cannot_keep_sessions_is_a_clear_error(heph, workspace):
    (workspace / ".heph").write_text("a file, not a folder")  # fails even for root
    result = heph("go")
    assert (
        result.code == 1 and "cannot create" in result.stderr and "Traceback" not in result.stderr
    )


def test_corrupt_state_file_is_ignored(heph, chat_server, workspace):
    (workspace / ".heph").mkdir()
    (workspace / ".heph" / "state.json").write_text('{"active_files": 5, "last_task": [1]')
    chat_server.reply(final("fine"))
    assert heph("go").code == 0


def test_every_option_with_a_value_is_skipped_when_finding_the_subcommand(heph, chat_server):
    for option in (
        ["--test-cmd", "pytest"],
        ["-m", "x"],
        ["--base-url", chat_server.url],
        ["--max-steps", "3"],
        ["-w", "."],
    ):
        result = heph(*option, "sessions")
        ran = result.code == 0 and "no sessions recorded yet" in result.stderr
        # (an option sessions does not use is refused as its own: the command was found)
        refused = result.code == 2 and f"heph sessions does not take {option[0]}" in result.stderr
        assert ran or refused, option
    assert not chat_server.requests


def test_verbose_says_the_window_and_commands_when_the_window_is_configured(
    heph, chat_server, workspace
):
    (workspace / ".heph.toml").write_text("context_window = 9000\n")
    (workspace / "tests").mkdir()
    chat_server.reply(final("ok"))
    result = heph("-v", "--test-cmd", "pytest -q", "go")
    assert "context window 9,000 tokens (from context_window in the configuration)" in result.stderr
    assert "command test: pytest -q (--test-cmd)" in result.stderr


def test_a_deleted_current_folder_is_a_clear_error(heph_process, workspace, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    import subprocess

    from hephaistus.testing import heph_command

    script = f"cd {gone} && rmdir {gone} && exec {' '.join(heph_command())} sessions"
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True)
    assert done.returncode == 2 and "current folder no longer exists" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "words",
    [
        "init the database schema",
        "docs are out of date",
        "undo the last change",
        "trust me with this",
        "stats for today",
    ],
)
def test_a_subcommand_followed_by_a_sentence_says_how_to_send_it_as_a_task(
    heph, chat_server, words
):
    result = heph(*words.split())
    assert result.code == 2 and chat_server.requests == []
    assert f"write: heph -- {words}" in result.stderr
    assert "heph: heph" not in result.stderr


def test_a_missing_docs_path_is_still_named(heph, workspace):
    result = heph("docs", "--check", "nowhere.py")
    assert result.code == 2 and "nowhere.py does not exist" in result.stderr
    assert "heph: heph" not in result.stderr


def test_the_person_sees_what_a_malformed_reply_said(heph, chat_server):
    chat_server.reply("I think the answer is 42, no JSON needed\nsecond line")
    chat_server.reply("\x1b[2Jstill no JSON")
    chat_server.reply(final("fine"))
    result = heph("what is the answer?")
    assert result.code == 0
    assert "the reply began: 'I think the answer is 42, no JSON needed'" in result.stderr
    assert "\\x1b[2Jstill no JSON" in result.stderr and "\x1b" not in result.stderr


def test_each_subcommand_is_declared_once_and_shown_everywhere(heph):
    import importlib
    from pathlib import Path

    from hephaistus.cli.grammar import SUBCOMMANDS

    shown = heph("--help").stdout
    usage = shown.split("\n\n")[0]
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    for command in SUBCOMMANDS:
        assert command.name in usage
        assert f"heph {command.name} {command.synopsis}".rstrip() in shown
        assert command.summary.split("\n")[0] in shown
        assert f"\nheph {command.name}" in readme  # the README's usage block names it
        helped = heph(command.name, "--help")
        assert helped.code == 0 and f"usage: heph {command.name}" in helped.stdout
        module, _, function = command.runner.partition(":")
        assert callable(getattr(importlib.import_module(f"hephaistus.cli.{module}"), function))


def test_a_stdout_that_takes_no_utf8_gets_escapes_not_a_traceback(heph_process, chat_server):
    chat_server.reply(act("read_file", path="nothing-here.py"))
    chat_server.reply(final("Done \U0001f600 \u2014 caf\u00e9"))
    result = heph_process("--yes", "hi", env={"PYTHONIOENCODING": "ascii"})
    assert result.code == 0, result.stderr
    assert "Traceback" not in result.stderr and "\\U0001f600" in result.stdout
    for output in (["--json"], ["--output", "jsonl"]):  # JSON stays JSON: \\u escapes
        chat_server.reply(final("Done \U0001f600 caf\u00e9"))
        machine = heph_process("--yes", *output, "hi", env={"PYTHONIOENCODING": "ascii"})
        assert machine.code == 0, machine.stderr
        lines = [json.loads(line) for line in machine.stdout.splitlines()]
        assert any(
            "Done \U0001f600 caf\u00e9" in json.dumps(line, ensure_ascii=False) for line in lines
        )
