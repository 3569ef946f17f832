"""A person's first hour with heph (issue 34): each test is a rough edge met for real, through
the command line (`heph` in-process, against the loopback model server), the chat or the
console: text from outside is never markup, settings are named when wrong, nothing is written
where heph said it would not, and what a run prints is what the model was sent."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from rich.console import Console
from test_hostile_repo import clone
from test_repl import CTRL_D, ENTER, chat, prompted

from conftest import git, has_git
from hephaistus.redact import secret_values
from hephaistus.runtime.sandbox import unavailable
from hephaistus.testing import act, final
from hephaistus.tools import ToolResult
from hephaistus.ui.render import ConsoleSink
from hephaistus.values import Action

WHY_NOT = unavailable()
needs_sandbox = pytest.mark.skipif(WHY_NOT is not None, reason=f"no sandbox here: {WHY_NOT}")

# -- 5. text from a task, a model, a file or a server is never markup --------------------------

HOSTILE = "[/x] [bold red]loud[/bold red] \x1b[2J [link=https://evil]x[/link] :warning:"
KEPT = "[/x] [bold red]loud[/bold red] \\x1b[2J [link=https://evil]x[/link] :warning:"


def assert_shown_as_written(output: str) -> None:
    """`output` holds the hostile text as it was written, nothing of it acted on."""
    assert KEPT in output, output
    assert "\x1b[2J" not in output and "\x1b]8;" not in output and "⚠" not in output


def test_hostile_text_is_listed_and_replayed_as_written(heph, chat_server, workspace):
    (workspace / "app.py").write_text(f"# {HOSTILE}\n")
    chat_server.reply(act("read_file", thought=HOSTILE, path="app.py"))
    chat_server.reply(final(HOSTILE, thought=HOSTILE))
    run = heph(f"explain {HOSTILE}", env={"HEPH_MODEL": HOSTILE})
    assert run.code == 0, run.stderr
    assert_shown_as_written(run.stdout)
    for command in ("sessions", "replay", "stats"):
        shown = heph(command)
        assert shown.code == 0, f"heph {command}: {shown.stderr}"
        assert_shown_as_written(shown.stdout + shown.stderr)


def terminal_sink() -> tuple[ConsoleSink, Console]:
    console = Console(file=io.StringIO(), force_terminal=True, width=400)
    return ConsoleSink(console=console), console


def test_every_console_output_shows_hostile_text_as_written_in_a_terminal():
    from hephaistus.model.discovery import ModelInfo
    from hephaistus.records.analytics import ModelStats, SessionRow
    from hephaistus.ui.tables import models_table, sessions_table, stats_table

    shown, console = terminal_sink()
    action = Action("", "run_command", {"name": HOSTILE})
    for say in (shown.thought, shown.notice, shown.format_error, shown.failure, shown.final):
        say(HOSTILE)
    shown.tool_called(action)
    shown.tool_finished(action, ToolResult(False, HOSTILE))
    shown.show_diff(f"--- a/x\n+++ b/x\n@@ -1 +1 @@\n+{HOSTILE}\n")
    row = SessionRow(HOSTILE, HOSTILE, 1, 2, HOSTILE, HOSTILE, HOSTILE)
    console.print(sessions_table([row]))
    console.print(stats_table([ModelStats(model=HOSTILE)]))
    console.print(models_table([ModelInfo(HOSTILE)], HOSTILE))
    output = console.file.getvalue()
    assert output.count(KEPT) >= 11, output
    assert_shown_as_written(output)


def test_the_chat_lists_replays_and_names_hostile_text_and_goes_on(tmp_path):
    from hephaistus.workspace import Workspace

    root = tmp_path / "ws"
    root.mkdir()
    typed = HOSTILE.replace("\x1b", "")  # Esc is a key at the prompt, not a character
    keys = [
        f"explain {typed}" + ENTER,
        ("/sessions" + ENTER + "/replay" + ENTER + f"/model {typed}" + ENTER, prompted),
        ("/model" + ENTER + "/nope" + ENTER + f"/mode {typed}" + ENTER, prompted),
        ("/mcp" + ENTER, prompted),
        (CTRL_D, prompted),
    ]
    code, out, _, _ = chat(Workspace.at(root), keys, final(HOSTILE, thought=HOSTILE))
    assert code == 0, out
    assert out.count(KEPT) == 4, out  # the live thought and answer, and their replay
    assert out.count(typed) == 5, out  # listed, replayed, the model named twice, no such mode
    assert "([mcp_servers.NAME] in your config)" in out
    assert_shown_as_written(out)


# -- 23. a credential's name is a word of the variable's name, not a few letters of it --------

AUTHOR = {
    "GIT_AUTHOR_NAME": "Jane Developer",
    "GIT_AUTHOR_EMAIL": "jane.developer@example.com",
    "GIT_COMMITTER_NAME": "Jane Developer",
    "GIT_COMMITTER_EMAIL": "jane.developer@example.com",
}


@pytest.mark.skipif(not has_git(), reason="needs git")
def test_the_persons_git_identity_is_no_secret(heph, chat_server, tmp_path):
    root = clone(tmp_path, {"app.py": "x = 1\n"})
    chat_server.reply(act("edit_file", path="app.py", old="x = 1", new="x = 2"))
    chat_server.reply(act("git_commit", message="two"))
    chat_server.reply(final("committed as Jane Developer <jane.developer@example.com>"))
    run = heph("--yes", "change and commit", cwd=root, env=AUTHOR)
    assert run.code == 0, run.stderr
    jane = "Jane Developer <jane.developer@example.com>"
    assert f"committed as {jane}" in run.stdout
    assert git(root, "log", "-1", "--format=%an <%ae> / %cn <%ce>").strip() == f"{jane} / {jane}"


@pytest.mark.parametrize(
    "name",
    [
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "TOKENIZERS_PARALLELISM",
        "KEYBOARD_LAYOUT",
        "BYPASS_CACHE",
        "MONKEY_PATCH",
        "PASSENGER_APP",
    ],
)
def test_names_that_only_contain_a_credential_word_are_not_credentials(name):
    assert secret_values({name: "a long harmless value"}) == []


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "GH_PAT",
        "DB_PASS",
        "DB_PASSWD",
        "MYSQL_ROOT_PASSWORD",
        "PGPASSWORD",
        "AWS_SECRET_ACCESS_KEY",
        "JWT_SECRET",
        "SENTRY_DSN",
        "SLACK_WEBHOOK_URL",
        "NGROK_AUTHTOKEN",
        "APIKEY",
        "githubToken",
        "apiKey",
        "NPM_CONFIG__AUTH",
        "HTTP_AUTHORIZATION",
        "SESSION_COOKIE",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "DATABASE_URL",
        "MONGO_URI",
        "PRIVATE_KEY",
        "SECRETS",
        "DEPLOY_TOKENS",
        "SSH_PASSPHRASE",
    ],
)
def test_credential_names_are_still_credentials(name):
    assert secret_values({name: "a long secret value"}) == ["a long secret value"]


# -- 19. undo's hint names a folder that has something to undo, or none ----------------------


def test_undo_names_the_folder_whose_run_it_can_take_back(heph, chat_server, workspace):
    (workspace / "proj").mkdir()
    chat_server.reply(act("write_file", path="a.py", content="1\n"))
    chat_server.reply(final("made"))
    assert heph("-w", "proj", "--yes", "make a.py").code == 0
    here = heph("undo")
    assert here.code == 2
    assert f"in {workspace};" in here.stderr and "heph undo -w proj" in here.stderr
    assert "sandbox_workspace" not in here.stderr
    assert heph("undo", "-w", "proj").code == 0
    assert not (workspace / "proj" / "a.py").exists()
    there = heph("undo", "-w", "proj")
    assert there.code == 2 and f"in {workspace / 'proj'}" in there.stderr
    assert "heph undo -w" not in there.stderr  # nothing elsewhere to point at


# -- 21. a command's preview is the end of its output, as the model gets it ------------------


@needs_sandbox
def test_a_commands_preview_shows_how_it_ended_live_and_in_replay(heph, chat_server, workspace):
    chat_server.reply(act("shell", command="seq 1 50; echo 2 tests FAILED"))
    chat_server.reply(act("shell", command="seq 1 20 > made.txt; echo wrote made.txt"))
    chat_server.reply(final("ok"))
    run = heph("--yes", "run them")
    assert run.code == 0, run.stderr
    for shown in (run.stderr, heph("replay").stdout):
        failing = shown.split("$ seq 1 50; echo 2 tests FAILED")[1].split("→")[0]
        assert "exit code 0 after" in failing
        assert "… 48 lines before" in failing and "50\n    2 tests FAILED" in failing
        writing = shown.split("$ seq 1 20 > made.txt; echo wrote made.txt")[1]
        assert "exit code 0 after" in writing and "wrote made.txt" in writing


# -- 14. an endpoint that is not an http(s) URL is named as such, with where it came from ------


@pytest.mark.parametrize(
    ("flags", "env", "named"),
    [
        (["--base-url", "127.0.0.1:9"], {}, "--base-url"),
        (["--base-url", "ftp://x"], {}, "--base-url"),
        ([], {"OPENAI_BASE_URL": "localhost:8080/v1"}, "environment variable OPENAI_BASE_URL"),
    ],
)
@pytest.mark.parametrize("command", [["explain app.py"], ["models"], ["docs", "--fix"]])
def test_an_endpoint_that_is_no_http_url_is_a_usage_error(heph, flags, env, named, command):
    run = heph(*command, *flags, env={"OPENAI_API_KEY": "sk-test", **env})
    assert run.code == 2, run.stderr
    assert "not an http(s) URL" in run.stderr and named in run.stderr
    assert "no model endpoint is configured" not in run.stderr


def test_an_endpoint_in_the_user_config_names_the_file(heph, home):
    config = home / ".config" / "hephaistus" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('base_url = "127.0.0.1:8080/v1"\n')
    run = heph("explain app.py", env={"OPENAI_BASE_URL": None})
    assert run.code == 2 and str(config) in run.stderr and "http://127.0.0.1:8080/v1" in run.stderr


# -- 15. each subcommand takes only the options it uses ----------------------------------------


@pytest.mark.parametrize(
    ("argv", "refused"),
    [
        (["sessions", "--test-cmd", "X", "--dry-run"], ["--test-cmd", "--dry-run"]),
        (["--test-cmd", "X", "sessions"], ["--test-cmd"]),
        (["models", "--yes", "--mode", "plan"], ["--yes", "--mode"]),
        (["undo", "--json"], ["--json"]),
        (["replay", "--continue", "last"], ["--continue"]),
        (["stats", "--max-steps=3"], ["--max-steps"]),
        (["trust", "--mode", "auto"], ["--mode"]),
        (["acp", "-w", "."], ["-w"]),
        (["docs", "--check", "--output", "jsonl"], ["--output"]),
        (["init", "--base-url", "http://localhost:9/v1"], ["--base-url"]),
    ],
)
def test_an_option_a_subcommand_does_not_use_is_a_usage_error(heph, argv, refused):
    run = heph(*argv)
    assert run.code == 2, run.stderr
    command = next(word for word in argv if not word.startswith("-") and word != "X")
    assert f"heph {command} does not take {', '.join(refused)}" in run.stderr
    assert "heph -- " not in run.stderr  # not mistaken for a task


def test_a_subcommands_help_lists_only_its_options(heph):
    shown = heph("sessions", "--help").stdout
    assert "--limit" in shown and "--workspace" in shown and "--json" in shown
    assert "--test-cmd" not in shown and "--dry-run" not in shown and "--mode" not in shown


# -- 22. exit codes and machine output say what happened ---------------------------------------


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (.ci/run installs it)")
@pytest.mark.parametrize("machine", ["--output jsonl", "--json"])
def test_machine_output_in_a_terminal_still_asks_there(chat_server, workspace, home, machine):
    from test_terminal import Terminal, chat_line

    chat_server.reply(act("write_file", path="notes.txt", content="remember the milk\n"))
    chat_server.reply(final("wrote it"))
    out = workspace.parent / "out.json"
    command = chat_line(home, chat_server.url, f"{machine} 'write notes' > {out}")
    terminal = Terminal(command, workspace)
    try:
        screen = terminal.wait_for("[y]es / [n]o / [a]ll / [d]iff")
        assert "+remember the milk" in screen
        terminal.type("y", enter=False)
        terminal.wait_for("HEPH_EXITED=0")
    finally:
        terminal.close()
    assert (workspace / "notes.txt").read_text() == "remember the milk\n"
    lines = out.read_text().splitlines()
    assert all(json.loads(line) for line in lines) and "wrote it" in lines[-1]


def test_a_clean_docs_check_says_so_in_one_line(heph, workspace):
    (workspace / "app.py").write_text('"""The app."""\n\n\ndef add(a, b):\n    """a + b."""\n')
    run = heph("docs", "--check")
    assert run.code == 0 and run.stdout == ""
    assert run.stderr == "heph docs: 1 file checked, no docstring missing or stale\n"


# -- 16. a folder that is no project gets no .heph/ --------------------------------------------


@pytest.mark.parametrize("where", ["home", "above home"])
def test_a_home_folder_or_one_holding_it_gets_no_heph_folder(heph, chat_server, tmp_path, where):
    above = tmp_path / "above"
    home = above / "person"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "todo.txt").write_text("milk\n")
    folder = home if where == "home" else above
    chat_server.reply(act("write_file", path="hello.txt", content="hi\n"))
    chat_server.reply(final("wrote hello.txt"))
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    run = heph("--yes", "write hello.txt", cwd=folder, env=env)
    assert run.code == 0, run.stderr
    assert "not a project" in run.stderr
    assert (folder / "hello.txt").read_text() == "hi\n"
    assert not (folder / ".heph").exists() and not (home / ".heph").exists()
    listed = heph("sessions", cwd=folder, env=env)  # kept in the person's state folder
    assert listed.code == 0 and "write hello.txt" in listed.stdout
    assert heph("undo", cwd=folder, env=env).code == 0
    assert not (folder / "hello.txt").exists() and not (folder / ".heph").exists()


# -- 17. a read-only folder answers, and keeps heph's records in the person's state folder ------


def test_a_read_only_folder_answers_and_refuses_writes_clearly(chat_server):
    from unprivileged import nobodys_folder, python_for_nobody, run_as_nobody

    python = python_for_nobody()
    home = nobodys_folder()
    folder = Path(tempfile.mkdtemp(prefix="heph-read-only-", dir="/var/tmp"))  # root's
    folder.chmod(0o755)  # nobody reads it, and may not write in it
    (folder / "app.py").write_text("def add(a, b):\n    return a + b\n")

    def heph_as_nobody(*args: str) -> subprocess.CompletedProcess[str]:
        env = [f"OPENAI_BASE_URL={chat_server.url}", "HEPH_DISCOVER=", "NO_COLOR=1"]
        argv = ["env", *env, str(python), "-m", "hephaistus", "-w", str(folder), *args]
        return run_as_nobody(argv, home, timeout=120)

    try:
        chat_server.reply(act("read_file", path="app.py"))
        chat_server.reply(final("add adds"))
        explained = heph_as_nobody("explain app.py")
        assert explained.returncode == 0, explained.stderr
        assert explained.stdout == "add adds\n" and "is read-only for you" in explained.stderr
        assert heph_as_nobody("sessions").stdout.count("explain app.py") == 1
        chat_server.reply(act("write_file", path="new.py", content="x = 1\n"))
        chat_server.reply(final("could not"))
        refused = heph_as_nobody("--yes", "write new.py")
        assert "cannot write new.py: Permission denied" in refused.stderr
        assert not (folder / "new.py").exists()
        init = heph_as_nobody("init")
        assert init.returncode == 2 and "heph init cannot write AGENTS.md there" in init.stderr
        assert sorted(p.name for p in folder.iterdir()) == ["app.py"]  # no .heph/ either
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(python.parent.parent, ignore_errors=True)


# -- 11. a task too large or not text is refused at once, and leaves no copy -------------------


def run_with_stdin(home: Path, url: str, cwd: Path, data: bytes) -> subprocess.CompletedProcess:
    """`heph` as a process, its standard input `data` (bytes, as a pipe gives them)."""
    from conftest import environment
    from hephaistus.testing import heph_command

    return subprocess.run(
        heph_command(),
        input=data,
        capture_output=True,
        cwd=cwd,
        env=environment(home, url),
        timeout=60,
    )


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"explain this log\n" + b"x" * 12_000_000, "over 1 MB"),
        (bytes(range(256)) * 4, "not text"),
        (b"fix it\x00\x00\x00", "not text"),
    ],
)
def test_a_huge_or_binary_task_is_refused_at_once(chat_server, home, workspace, data, said):
    started = time.monotonic()
    done = run_with_stdin(home, chat_server.url, workspace, data)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr.decode() and "standard input" in done.stderr.decode()
    assert time.monotonic() - started < 10  # (46 s before)
    assert not chat_server.requests
    assert not (workspace / ".heph").exists()  # no session, no state: nothing recorded


def test_a_huge_task_in_the_arguments_is_refused_too(heph, chat_server, workspace):
    run = heph("explain " + "y" * 1_100_000)
    assert run.code == 2 and "over 1 MB" in run.stderr
    assert not chat_server.requests and not (workspace / ".heph").exists()


def test_a_long_task_is_listed_from_a_clipped_copy(heph, chat_server, workspace):
    from hephaistus.records.session import SessionStore, load_session

    task = "explain " + "z" * 600_000
    chat_server.reply(final("ok"))
    heph(task, env={"HEPH_MAX_STEPS": "1"})
    store = SessionStore(workspace / ".heph" / "sessions")
    recorded = load_session(store.path_of("last"))
    assert len(recorded.header["task"]) < 2100 and "more characters" in recorded.header["task"]
    assert recorded.spans[0].kind == "INPUT" and recorded.spans[0].output == task
    assert store.path_of("last").stat().st_size < 2.2 * len(task)  # was 3 copies


def test_a_rejected_key_is_a_configuration_error(heph, chat_server, workspace):
    chat_server.fault("status", status=401, body='{"error": {"message": "invalid api key"}}')
    run = heph("explain app.py", env={"OPENAI_API_KEY": "sk-wrong-0123456789"})
    assert run.code == 2, run.stderr
    assert "rejected the API key (401)" in run.stderr and "OPENAI_API_KEY" in run.stderr
    assert len(chat_server.requests) == 1  # not tried again
    from hephaistus.records.session import SessionStore, load_session

    ended = load_session(SessionStore(workspace / ".heph" / "sessions").path_of("last")).end
    assert ended and "rejected the API key" in ended["message"]
