"""Shared fixtures: the loopback Chat Completions server and a runner for the real `heph`."""

from __future__ import annotations

import io
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hephaistus.testing import ChatServer, heph_command

DEVELOPER_SETTINGS = ("OPENAI_", "HEPH_", "OLLAMA_", "LLAMA_")

# The files that take longest, longest first (as measured: keep it so when one grows). Under
# xdist (`--dist loadfile`, with its own reordering by number of tests turned off in
# pyproject.toml) the workers take files in collection order, so these go out first and no
# worker is left with a long one at the end; the other files follow, the most tests first.
# test_precommit installs this project into a hook environment (~20 s): it starts at once.
SLOW_FILES = (
    "test_precommit.py",
    "test_as_nobody.py",
    "test_write_races.py",
    "test_hostile_repo.py",
    "test_terminal.py",
    "test_properties.py",
    "test_local_servers.py",
    "test_run_command.py",
    "test_docs.py",
    "test_cli.py",
    "test_repl.py",
    "test_undo_interleaved.py",
    "test_concurrency.py",
    "test_session.py",
    "test_sandbox.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not hasattr(config, "workerinput"):  # a run without xdist keeps the files' order
        return
    count: dict[Path, int] = {}
    for item in items:
        count[item.path] = count.get(item.path, 0) + 1

    def weight(item: pytest.Item) -> tuple[int, int]:
        name = item.path.name
        slow = SLOW_FILES.index(name) if name in SLOW_FILES else len(SLOW_FILES)
        return slow, -count[item.path]

    items.sort(key=weight)  # stable: within a file, the tests keep their order


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Any:
    """Collect with bytecode caching on, even under PYTHONDONTWRITEBYTECODE: pytest then keeps
    the test modules as it rewrote them for their asserts (in tests/__pycache__, which git
    ignores) and the next run reads them back, instead of each worker rewriting all of them
    again (two seconds of every run's start)."""
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = saved


@pytest.fixture(autouse=True)
def own_user_folders(tmp_path, tmp_path_factory, monkeypatch) -> None:
    """Every test gets user folders of its own, never the person's running the tests, nor
    another test's: the config folder of the `home` fixture, and a state folder (trust,
    approvals, the signing key) outside the test's own folder. The `heph` runs get the same
    ones, so what a test makes in-process is the person's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    # Nor the developer's settings: an endpoint, a key or a model of theirs changes what runs.
    for name in list(os.environ):
        if name.startswith(DEVELOPER_SETTINGS):
            monkeypatch.delenv(name)
    # Each test is a run of its own: no command of another test's ran in it (mcp_paths).
    from hephaistus.runtime import sandbox

    monkeypatch.setattr(sandbox, "_started", [])
    # Nor the developer's skills (~/.agents/skills, ~/.claude/skills): the test's home's.
    from hephaistus.workspace import skills

    monkeypatch.setattr(skills, "home", lambda: tmp_path / "home")


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    with ChatServer() as server:
        yield server


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.stdout)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir(exist_ok=True)  # a test's user folders may have made it
    return folder


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def environment(home: Path, url: str, extra: dict[str, str | None] | None = None) -> dict[str, str]:
    """The environment a `heph` process gets in the tests: a clean one, pointed at `url`."""
    environ: dict[str, str | None] = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": os.environ.get("XDG_STATE_HOME", str(home / ".state")),
        "OPENAI_BASE_URL": url,
        "HEPH_TIMEOUT": "5",
        "HEPH_DISCOVER": "",  # never look for a real model server on this machine
        "PYTHONIOENCODING": "utf-8",
        "NO_COLOR": "1",
    }
    environ.update(extra or {})
    return {k: v for k, v in environ.items() if v is not None}


@pytest.fixture
def heph_process(chat_server: ChatServer, home: Path, workspace: Path):
    """Run the installed `heph` as a process in `workspace` against the loopback server, with a
    clean environment: for what only a real process shows (entry point, signals, exit codes)."""

    def run(
        *args: str,
        env: dict[str, str | None] | None = None,
        stdin: str | None = None,
        cwd: Path | None = None,
        timeout: float = 60,
    ) -> Result:
        done = subprocess.run(
            [*heph_command(), *args],
            cwd=cwd or workspace,
            env=environment(home, chat_server.url, env),
            input=stdin or "",
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Result(done.returncode, done.stdout, done.stderr)

    return run


@pytest.fixture
def heph(chat_server: ChatServer, home: Path, workspace: Path, monkeypatch, capsys):
    """Run `heph` in-process (cli.main) in `workspace` against the loopback server, with the
    environment a process would get, and no real waits between retries."""
    from hephaistus import cli
    from hephaistus.model import llm

    monkeypatch.setattr(llm, "pause", lambda seconds: None)

    def run(
        *args: str,
        env: dict[str, str | None] | None = None,
        stdin: str | None = None,
        cwd: Path | None = None,
        timeout: float = 60,
    ) -> Result:
        wanted = environment(home, chat_server.url, env)
        for name in list(os.environ):
            if name not in wanted:
                monkeypatch.delenv(name)
        for name, value in wanted.items():
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(cwd or workspace)
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        capsys.readouterr()
        try:
            code = cli.main(list(args))
        except SystemExit as exit_:  # --help and --version end through argparse
            code = exit_.code if isinstance(exit_.code, int) else 0
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run


@pytest.fixture
def heph_main(heph):
    """The name the first in-process tests used."""
    return heph


@pytest.fixture
def heph_forked(heph, chat_server: ChatServer, home: Path, workspace: Path, tmp_path: Path):
    """Run `heph` (cli.main) in a child forked from this test process, with the environment a
    process would get, killed if it is not done within `timeout`: for a test that heph never
    hangs, without paying for a new interpreter (importing `openai` alone takes a second).
    Whatever blocks or loops, the child is killed and the test fails as for a real process."""
    import openai  # noqa: F401  (imported before the fork, so no child imports it again)

    runs = itertools.count()  # (and `heph`'s set-up holds in the child: no waits on retries)

    def run(
        *args: str,
        env: dict[str, str | None] | None = None,
        stdin: str | None = None,
        cwd: Path | None = None,
        timeout: float = 60,
    ) -> Result:
        number = next(runs)
        out_path, err_path = tmp_path / f"forked-{number}.out", tmp_path / f"forked-{number}.err"
        wanted = environment(home, chat_server.url, env)
        folder = cwd or workspace
        with warnings.catch_warnings():  # Python 3.12 warns of forking with threads running:
            warnings.simplefilter("ignore", DeprecationWarning)  # the child runs heph alone
            pid = os.fork()
        if pid == 0:  # the child: never returns to pytest
            run_as_a_process(list(args), wanted, folder, stdin or "", out_path, err_path)
        deadline = time.monotonic() + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise AssertionError(
                    f"heph {' '.join(args)} did not end within {timeout} s; it wrote:\n"
                    + out_path.read_text(errors="replace")
                    + err_path.read_text(errors="replace")
                )
            time.sleep(0.01)
        return Result(
            os.waitstatus_to_exitcode(status),
            out_path.read_text(errors="replace"),
            err_path.read_text(errors="replace"),
        )

    return run


def run_as_a_process(
    argv: list[str], environ: dict[str, str], cwd: Path, stdin: str, out: Path, err: Path
) -> None:
    """In a forked child: heph's command line as its process runs it, its standard output and
    error written to `out` and `err`; then the child ends, with heph's exit code."""
    code = 70
    try:
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(cwd)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        with (
            open(out, "w", encoding="utf-8") as stdout,
            open(err, "w", encoding="utf-8", errors="backslashreplace", buffering=1) as stderr,
        ):
            os.dup2(stdout.fileno(), 1)  # for what writes to the file descriptors themselves
            os.dup2(stderr.fileno(), 2)
            sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), stdout, stderr
            from hephaistus import cli

            try:
                code = cli.main(argv)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 0
            except BaseException:  # as the interpreter would end on it
                import traceback

                traceback.print_exc()
                code = 1
    finally:
        os._exit(code)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )
    return done.stdout


def has_git() -> bool:
    return shutil.which("git") is not None
