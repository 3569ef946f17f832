"""Shared fixtures: the loopback Chat Completions server and a runner for the real `heph`."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hephaistus.testing import ChatServer, heph_command

DEVELOPER_SETTINGS = ("OPENAI_", "HEPH_", "OLLAMA_", "LLAMA_")


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
    from hephaistus import cli, llm

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
