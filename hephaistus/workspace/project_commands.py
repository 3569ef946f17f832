"""The project's named commands (test, lint, ...): configured, or detected when none are.

Configured: `[commands]` in .heph.toml or `[tool.hephaistus.commands]` in pyproject.toml, plus
`--test-cmd` for one run. Detected, only when nothing is configured: pytest when there are tests
and pytest is installed, `npm test` when package.json has a test script, `cargo test`,
`go test ./...`, and `make test` when the Makefile has that target.

A configured command is trusted together with the workspace files it names (`files_named`): a
pull that changes only the script it runs changes what was trusted.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hephaistus.runtime.programs import command_path
from hephaistus.textfile import text_of


@dataclass(frozen=True)
class ProjectCommand:
    """A command the model may run by name (test, lint), and where it came from, for the person
    asked to approve it."""

    name: str
    command: str
    source: str  # "configured in FILE", "--test-cmd", or why it was detected


def resolve(
    root: Path,
    configured: dict[str, str],
    test_cmd: str | None = None,
    where: Callable[[str], str] | None = None,
) -> dict[str, ProjectCommand]:
    """The commands the model may run, by name; `where(name)` says which file configured one
    (`where("test_cmd")`: where test_cmd was set), and the person is told when asked to
    approve it."""
    commands = {
        name: ProjectCommand(name, command, f"configured in {where(f'commands.{name}')}")
        if where
        else ProjectCommand(name, command, "configured")
        for name, command in configured.items()
    }
    if not commands:
        commands = {c.name: c for c in detect(root)}
    if test_cmd:
        source = where("test_cmd") if where else "--test-cmd"
        label = source if source.startswith("--") else f"configured in {source}"
        commands["test"] = ProjectCommand("test", test_cmd, label)
    return commands


def detect(root: Path) -> list[ProjectCommand]:
    """The test command the project's files point to (pytest, npm, cargo, go or make), if any:
    what runs when none is configured."""
    found: list[ProjectCommand] = []
    has_python_tests = (
        (root / "tests").is_dir() or (root / "test").is_dir() or any(root.glob("test_*.py"))
    )
    if has_python_tests and shutil.which("pytest", path=command_path()):
        found.append(ProjectCommand("test", "pytest -q", "detected: a tests folder and pytest"))
    elif has_python_tests:
        python = _python_with_pytest(root)
        if python:
            found.append(
                ProjectCommand(
                    "test",
                    f"{shlex.quote(python)} -m pytest -q",
                    "detected: a tests folder, and pytest importable by that Python",
                )
            )
    package = root / "package.json"
    if package.is_file() and not any(c.name == "test" for c in found):
        try:
            scripts = json.loads(text_of(package) or "{}").get("scripts") or {}
        except (ValueError, AttributeError):
            scripts = {}
        if isinstance(scripts, dict) and "test" in scripts:
            found.append(ProjectCommand("test", "npm test", "detected: package.json test script"))
    if (root / "Cargo.toml").is_file() and not found:
        found.append(ProjectCommand("test", "cargo test", "detected: Cargo.toml"))
    if (root / "go.mod").is_file() and not found:
        found.append(ProjectCommand("test", "go test ./...", "detected: go.mod"))
    if not found:
        text = text_of(root / "Makefile") or ""
        if re.search(r"^test\s*:", text, re.M):
            found.append(ProjectCommand("test", "make test", "detected: Makefile test target"))
    return found


def _python_with_pytest(root: Path) -> str | None:
    """A Python that can import pytest, though no `pytest` is on PATH: the project's own
    virtual environment's, else the one heph runs in. Told by the files it has, never by
    running it: a workspace's program runs only in the sandbox."""
    import importlib.util
    import sys

    for venv in (".venv", "venv"):
        python = root / venv / "bin" / "python"
        sites = list((root / venv).glob("lib/python*/site-packages"))
        if python.is_file() and any(_has_pytest(site) for site in sites):
            return str(python)
    if importlib.util.find_spec("pytest") is not None:
        return sys.executable
    return None


def _has_pytest(site: Path) -> bool:
    """Whether a site-packages folder holds pytest, itself or in a folder a `.pth` file names."""
    folders = [site]
    for pth in site.glob("*.pth"):
        text = text_of(pth) or ""
        folders += [Path(line.strip()) for line in text.splitlines()[:50] if line.startswith("/")]
    return any(
        (folder / "pytest").is_dir() or (folder / "pytest.py").is_file() for folder in folders
    )


def describe(commands: dict[str, ProjectCommand]) -> str:
    """The commands as the system prompt lists them (why one was detected is not the
    model's business: the user sees it with -v)."""
    if not commands:
        return (
            "No project commands are configured (the user can add them under [commands] in "
            ".heph.toml), so run_command cannot run anything."
        )
    lines = ["Project commands:"]
    lines += [f"- {command.name}: `{command.command}`" for command in commands.values()]
    return "\n".join(lines)


def command_lines(key: str, value: object) -> list[str]:
    """The command lines a setting holds: a project command's, test_cmd's, and each MCP
    server's command with its arguments."""
    if key.startswith("commands.") or key == "test_cmd":
        return [value] if isinstance(value, str) else []
    if key != "mcp_servers" or not isinstance(value, dict):
        return []
    entries = [entry for entry in value.values() if isinstance(entry, dict)]
    return [
        shlex.join([entry["command"], *map(str, entry.get("args") or [])])
        for entry in entries
        if isinstance(entry.get("command"), str)
    ]


QUOTING = re.compile(r"[\"'\\]")  # what makes shlex split a line otherwise than on spaces
NAMED_AT_MOST = 32  # files of one command line covered; a line naming more is not a script's
# What a runner reads by itself, unnamed: its recipe is the script `make test` runs.
READ_BY_RUNNER = {
    "make": ("GNUmakefile", "makefile", "Makefile"),
    "npm": ("package.json",),
    "pnpm": ("package.json",),
    "yarn": ("package.json",),
    "just": ("justfile", "Justfile", ".justfile"),
    "tox": ("tox.ini",),
    "nox": ("noxfile.py",),
}


def files_named(root: Path, line: str, depth: int = 2) -> list[str]:
    """The workspace files (relative POSIX paths) the command `line` runs or names: its program
    when that is a workspace path (written so, or found there on the commands' PATH), the file
    a known runner reads by itself (make's Makefile), and each word, or an option's value after
    `=`, that is an existing file inside the workspace. A quoted word that is itself a command
    line (`sh -c "sh ci/test.sh"`) is read too, `depth` levels."""
    try:  # plain words split as the shell would, without shlex's cost (5,000 commands)
        words = shlex.split(line) if QUOTING.search(line) else line.split()
    except ValueError:  # unbalanced quotes: the shell reads it somehow; take plain words
        words = line.split()
    found = [_program_in(root, words[0])] if words and "/" not in words[0] else []
    found += [_file_in(root, name) for name in READ_BY_RUNNER.get(_runner(words), ())]
    for word in words:
        found += [_file_in(root, piece) for piece in (word, word.partition("=")[2]) if piece]
        if depth > 1 and any(space in word for space in " \t\n"):
            found += files_named(root, word, depth - 1)
    return list(dict.fromkeys(f for f in found if f))[:NAMED_AT_MOST]


def _runner(words: list[str]) -> str:
    """The program a command line starts, by name (`make` for `/usr/bin/make -j4 test`)."""
    return os.path.basename(words[0]) if words else ""


def _file_in(root: Path, word: str) -> str | None:
    """`word` as the path of a file (links followed) lying in the workspace, relative to it."""
    path = os.path.join(root, word)  # an absolute word stays itself
    if not os.path.isfile(path):  # most words: one failed stat
        return None
    relative = os.path.relpath(os.path.normpath(path), root)
    if relative.split(os.sep)[0] in ("..", "."):  # outside, or the root itself
        return None
    return Path(relative).as_posix()


def _program_in(root: Path, name: str) -> str | None:
    """The program `name` in a folder of the commands' PATH that lies in the workspace (an
    activated `.venv/bin`, a relative entry: run from the workspace root), whether or not an
    earlier folder shadows it: covering one more file only asks more."""
    for folder in _path_in_workspace(str(root), command_path()):
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK):
            return _file_in(root, candidate)
    return None


@functools.lru_cache(maxsize=8)
def _path_in_workspace(root: str, path: str) -> tuple[str, ...]:
    """The folders of the PATH `path` that lie in the workspace `root` (relative ones are the
    root's: commands run there)."""
    real = os.path.realpath(root)
    folders = [os.path.realpath(os.path.join(root, entry)) for entry in path.split(os.pathsep)]
    return tuple(f for f in folders if f == real or f.startswith(os.path.join(real, "")))
