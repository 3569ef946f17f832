"""run_command: named project commands only, plain arguments, timeouts, no secrets, approval."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import heph_command
from hephaistus.engine.agent import Agent
from hephaistus.engine.runner import Runtime
from hephaistus.runtime.policy import Policy
from hephaistus.settings.config import Config
from hephaistus.testing import ScriptedModel, act, final
from hephaistus.testing.tools import run_tool
from hephaistus.tools import ToolContext, default_registry
from hephaistus.ui.approval import TerminalAsker
from hephaistus.values import CommandRequest
from hephaistus.workspace import Workspace
from hephaistus.workspace.project_commands import detect

TOOLS = default_registry()
PYTHON = sys.executable
# The project's own tests need none of the plugins installed for this suite: loading them
# would take longer than the run itself.
PYTEST = f"{PYTHON} -m pytest -q -p no:cacheprovider -p no:xdist -p no:hypothesispytest -p no:anyio"
BUGGY = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(BUGGY)
    (root / "tests" / "test_calc.py").write_text(TEST)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    return root


def running(pid, wait=2.0):
    """Whether `pid` still runs (a killed process whose parent died may linger as a zombie)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.05)
    return True


def context(root, **commands):
    return ToolContext(Workspace.at(root), commands=commands, command_timeout=30)


def run(ctx, name, args=None, **policy):
    payload = {"name": name} if args is None else {"name": name, "args": args}
    return run_tool(ctx, "run_command", payload, **policy)


def test_end_to_end_the_model_fixes_a_failing_test(heph, chat_server, project):
    (project / ".heph.toml").write_text(f'[commands]\ntest = "{PYTEST}"\n')
    chat_server.reply(act("run_command", "Run the tests first.", name="test"))
    chat_server.reply(
        act("edit_file", "The sign is wrong.", path="calc.py", old="a - b", new="a + b")
    )
    chat_server.reply(act("run_command", "Check again.", name="test"))
    chat_server.reply(final("Fixed `add`; the tests pass."))
    result = heph("--yes", "--trust", "fix the failing test", cwd=project)
    assert result.code == 0, result.stderr
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    first, second = (chat_server.requests[i]["messages"][-1]["content"] for i in (1, 3))
    assert "exit code 1" in first and "1 failed" in first and "assert -1 == 5" in first
    assert "failing command test: failed: tests/test_calc.py::test_add" in first
    assert "exit code 0" in second and "1 passed" in second
    assert "failing command test: (none now)" in second  # the state says it passes now
    system = chat_server.requests[0]["messages"][0]["content"]
    assert f"- test: `{PYTEST}`" in system


def test_unknown_names_are_refused(project):
    result = run(context(project, test="true"), "deploy")
    assert not result.ok and "no project command named 'deploy'" in result.output
    assert "available: test" in result.output


@pytest.mark.parametrize(
    "args",
    [
        "; rm -rf /",
        "$(whoami)",
        "a|b",
        "> out.txt",
        "`id`",
        "x && y",
        "'quoted arg'",
        "../outside.py",
        "/etc/passwd::x",
        "$HOME",
        "~/x",
    ],
)
def test_shell_syntax_and_outside_paths_are_refused(project, args):
    result = run(context(project, test="echo"), "test", args)
    assert not result.ok and result.output.startswith("run_command:")


def test_plain_arguments_are_passed_without_a_shell(project):
    result = run(context(project, test="echo"), "test", "tests/test_calc.py::test_add[x-1] -k add")
    assert result.ok and "tests/test_calc.py::test_add[x-1] -k add" in result.output


def test_a_timeout_kills_the_whole_process_group(project):
    ctx = context(project, slow="sh -c 'sleep 60 & echo $! > child.pid; wait'")
    ctx.command_timeout = 0.5
    started = time.monotonic()
    result = run(ctx, "slow")
    assert time.monotonic() - started < 10
    assert not result.ok and "timed out" in result.output
    assert not running(int((project / "child.pid").read_text()))


@pytest.mark.parametrize(
    "args",
    [
        "--basetemp=/tmp/elsewhere",
        "-c/etc/passwd",
        "--rootdir=/etc",
        "-C/tmp/x",
        "--cov=a,/etc",
        "-o cache_dir=/tmp/x",
        "--x=../up",
        "a/../../b",
        "..",
        "@/etc/passwd",
        "tests::/abs",
        "--env-file=.env",
        ".ENV",
        "--config=link/x.cfg",
        "-clink/x",
    ],
)
def test_arguments_naming_places_outside_or_secrets_are_refused(project, tmp_path, args):
    (project / "link").symlink_to(tmp_path)
    result = run(context(project, test="echo"), "test", args)
    assert not result.ok and result.output.startswith("run_command:"), result.output


@pytest.mark.parametrize(
    "args",
    [
        "-x -vv --maxfail=1",
        "tests/test_calc.py::test_add",
        "-k add -o log_cli=true",
        "--basetemp=build/tmp",
        "-p no:cache",
    ],
)
def test_ordinary_arguments_pass(project, args):
    assert run(context(project, test="echo"), "test", args).ok


def test_a_pytest_basetemp_outside_deletes_nothing_outside(project, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    (project / "tests" / "test_tmp.py").write_text("def test_tmp(tmp_path):\n    pass\n")
    result = run(context(project, test=PYTEST), "test", f"--basetemp={victim}")
    assert not result.ok and (victim / "keep.txt").read_text() == "mine"


def test_children_get_an_allow_list_environment(project, monkeypatch):
    leaks = {
        "OPENAI_API_KEY": "sk-do-not-leak-0001",
        "GITHUB_TOKEN": "do-not-leak-0002",
        "DB_PASSWORD": "do-not-leak-0003",
        "AWS_SECRET_ACCESS_KEY": "do-not-leak-0004",
        "DATABASE_URL": "postgres://app:do-not-leak-0005@db/app",
        "SENTRY_DSN": "https://0123456789abcdef0123@o1.ingest.sentry.io/1",
        "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T0/B0/do-not-leak-0007",
        "GH_PAT": "do-not-leak-0008",
        "SOME_SETTING": "not-in-the-allow-list",
    }
    for name, value in leaks.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    result = run(context(project, env="env"), "env")
    assert result.ok and "LC_ALL=C.UTF-8" in result.output and "PATH=" in result.output
    for value in leaks.values():
        assert value not in result.output
    assert "do-not-leak" not in result.output and "0123456789abcdef0123" not in result.output


def test_the_project_config_passes_named_variables(project, monkeypatch):
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "site.settings")
    monkeypatch.setenv("OTHER", "hidden")
    ctx = context(project, env="env")
    ctx.pass_env = ("DJANGO_*",)
    result = run(ctx, "env")
    assert "DJANGO_SETTINGS_MODULE=site.settings" in result.output and "hidden" not in result.output


def test_credentials_a_command_prints_are_scrubbed_from_the_observation(project):
    (project / "show.py").write_text(
        "print('postgres://app:hunter2hunter2@db:5432/app')\n"
        "print('token ghp_' + 'a' * 36)\n"
        "print('key sk-' + 'b' * 40)\n"
    )
    result = run(context(project, show=f"{PYTHON} show.py"), "show")
    assert "hunter2hunter2" not in result.output and "ghp_aaaa" not in result.output
    assert "sk-bbbb" not in result.output and result.output.count("[redacted]") == 3


def test_long_output_keeps_its_end(project):
    ctx = context(project, noisy=f"{PYTHON} -c \"[print('line', i) for i in range(5000)]\"")
    ctx.observation_limit = 2000
    result = run(ctx, "noisy")
    assert "line 4999" in result.output and "line 0\n" not in result.output
    assert "bytes cut from the start" in result.output and len(result.output) < 2500


def test_no_standard_input(project):
    result = run(context(project, cat="cat"), "cat")
    assert result.ok and "exit code 0" in result.output  # cat sees end-of-file at once


def test_approval_rules(project):
    asked = []

    def answer(question):
        asked.append(question)
        return "y"

    ctx = context(project, hello="echo hi", bye="echo bye")
    policy = Policy("ask", asker=TerminalAsker(None, ask=answer))
    runtime = Runtime(default_registry(), ctx, policy)
    assert runtime.call("run_command", {"name": "hello"}).decision == "allow"
    assert runtime.call("run_command", {"name": "hello"}).decision == "allow"
    assert len(asked) == 1  # "yes" holds for that command for the rest of the session
    assert runtime.call("run_command", {"name": "bye"}).decision == "allow"
    assert len(asked) == 2  # and never for another one
    for mode in ("ask", "edits"):
        assert run(ctx, "hello", mode=mode).refused  # no terminal: refused, never run
    assert run(ctx, "hello", mode="auto").decision == "allow"
    assert run(ctx, "hello", dry_run=True).decision == "skip"
    assert run(ctx, "hello", mode="plan").decision == "deny"
    declined = run(ctx, "hello", mode="ask", asker=lambda p: "no")
    assert declined.decision == "decline" and declined.command is None


def test_the_tool_asks_with_a_typed_request_and_reports_what_ran(project):
    requests = []
    ctx = context(project, hello="echo hi")
    result = run(
        ctx, "hello", "there", mode="ask", asker=lambda p: requests.append(p.request) or "yes"
    )
    assert requests == [CommandRequest("hello", "echo hi there")]
    assert result.command is not None and result.command.name == "hello"
    assert result.command.summary == "passed"


def test_without_a_terminal_commands_are_refused_exit_3(heph, chat_server, project):
    (project / ".heph.toml").write_text('[commands]\ntest = "true"\n')
    chat_server.reply(act("run_command", name="test"))
    result = heph("--trust", "run the tests", cwd=project)
    assert result.code == 3 and "--yes" in result.stderr


def test_check_after_edits_sends_failures_back(project):
    model = ScriptedModel(
        [
            act("read_file", path="calc.py"),
            act("write_file", path="calc.py", content="def add(a, b):\n    return a * b\n"),
            final("done, I think"),
            act("edit_file", path="calc.py", old="a * b", new="a + b"),
            final("now really done"),
        ]
    )
    config = Config(commands=(("test", PYTEST),), verify_after_edits=("test",))
    agent = Agent(Workspace.at(project), config, model=model, policy=Policy("auto"))
    outcome = agent.execute("fix add")
    assert outcome.status == "answered" and outcome.message == "now really done"
    feedback = model.calls[3][-1]["content"]
    assert "before finishing, heph ran the project's `test` command and it failed" in feedback
    assert "1 failed" in feedback
    model.assert_used_up()


def test_test_cmd_flag_and_detection(project, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    import sys

    # No pytest on PATH, but heph's own Python (this one) can import it.
    assert [c.command for c in detect(project)] == [f"{sys.executable} -m pytest -q"]
    from hephaistus.workspace import project_commands

    monkeypatch.setattr(project_commands, "_python_with_pytest", lambda root: None)
    assert detect(project) == []  # tests, but no pytest to run them
    monkeypatch.undo()
    monkeypatch.setenv("PATH", str(bin_dir))
    (bin_dir / "pytest").write_text("#!/bin/sh\n")
    (bin_dir / "pytest").chmod(0o755)
    assert [(c.name, c.command) for c in detect(project)] == [("test", "pytest -q")]
    node = tmp_path / "node"
    node.mkdir()
    (node / "package.json").write_text('{"scripts": {"test": "jest"}}')
    assert [(c.name, c.command) for c in detect(node)] == [("test", "npm test")]
    make = tmp_path / "make"
    make.mkdir()
    (make / "Makefile").write_text("build:\n\tcc x.c\n\ntest: build\n\t./run\n")
    assert [c.command for c in detect(make)] == ["make test"]
    for marker, command in (("Cargo.toml", "cargo test"), ("go.mod", "go test ./...")):
        folder = tmp_path / marker.replace(".", "_")
        folder.mkdir()
        (folder / marker).write_text("")
        assert [c.command for c in detect(folder)] == [command]
    assert detect(tmp_path / "node" / "missing") == []


def processes_running(marker: str, wait: float = 0.0) -> list[int]:
    """The host's processes whose command line holds `marker` (a sandboxed process has another
    pid inside its namespace, so it is found by what it runs), after up to `wait` seconds for
    them to go."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes().decode():
                    state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                    if state not in ("Z", "X"):
                        found.append(int(entry.name))
            except OSError:
                continue
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.05)


def test_ctrl_c_kills_the_commands_process_group(chat_server, project, home):
    marker = f"{60 + os.getpid() % 1000 / 1000:.3f}"  # sleep's argument: no other process has it
    (project / ".heph.toml").write_text(
        f"[commands]\nslow = \"sh -c 'sleep {marker} & echo started > child.txt; wait'\"\n"
    )
    chat_server.reply(act("run_command", name="slow"))
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "OPENAI_BASE_URL": chat_server.url}
    process = subprocess.Popen(
        [*heph_command(), "--yes", "--trust", "run slow"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while not processes_running(f"sleep\0{marker}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_running(f"sleep\0{marker}")
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=15) == 130
    assert processes_running(f"sleep\0{marker}", wait=2.0) == []


def test_test_cmd_flag_sets_the_test_command_for_one_run(heph, chat_server, project):
    chat_server.reply(act("run_command", name="test")).reply(final("ran"))
    result = heph(
        "-v", "--yes", "--test-cmd", f"{PYTHON} -c print(42)", "run the tests", cwd=project
    )
    assert result.code == 0, result.stderr
    prompt = chat_server.requests[0]["messages"][0]["content"]
    assert f"Project commands:\n- test: `{PYTHON} -c print(42)`\n" in prompt
    assert "--test-cmd" not in prompt  # where it came from is for the user, shown with -v
    assert f"command test: {PYTHON} -c print(42) (--test-cmd)" in result.stderr
    assert "42" in chat_server.requests[1]["messages"][-1]["content"]


def test_declining_a_verify_command_ends_with_the_answer_not_another_request(project):
    model = ScriptedModel(
        [
            act("write_file", path="calc.py", content="def add(a, b):\n    return a * b\n"),
            final("done"),
        ]
    )
    config = Config(commands=(("test", PYTEST),), verify_after_edits=("test",))
    asked = []

    def answer(proposal):
        asked.append(proposal.request)
        return "no" if isinstance(proposal.request, CommandRequest) else "yes"

    agent = Agent(Workspace.at(project), config, model=model, policy=Policy(asker=answer))
    outcome = agent.execute("change add")
    assert outcome.status == "answered" and outcome.message == "done"
    assert len(model.calls) == 2  # no third request to "fix" a check nobody ran
    model.assert_used_up()


def test_a_shell_command_is_shown_for_approval_as_configured(project):
    requests = []
    ctx = context(project, check="sh -c 'id > ../x' && echo done")
    run(
        ctx,
        "check",
        "tests/test_calc.py",
        mode="ask",
        asker=lambda p: requests.append(p.request) or "no",
    )
    assert requests == [
        CommandRequest("check", "sh -c 'id > ../x' && echo done tests/test_calc.py")
    ]


def test_the_projects_own_virtual_environment_runs_its_tests(project, tmp_path, monkeypatch):
    import sysconfig
    import venv as venvs

    from hephaistus.workspace import project_commands

    venvs.EnvBuilder(symlinks=True).create(project / ".venv")  # a real one, without pip
    paths = {"base": str(project / ".venv"), "platbase": str(project / ".venv")}
    site = Path(sysconfig.get_path("purelib", vars=paths))
    (site / "suite.pth").write_text(f"{Path(pytest.__file__).parents[1]}\n")  # it has pytest
    venv = project / ".venv" / "bin"
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    found = project_commands.detect(project)
    assert [c.command for c in found] == [f"{venv / 'python'} -m pytest -q"]
    result = run(context(project, test=found[0].command), "test")
    assert "exit code 1" in result.output and "1 failed" in result.output  # it really ran
