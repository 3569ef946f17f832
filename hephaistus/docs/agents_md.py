"""`heph init` and `/init`: a first AGENTS.md for the workspace, drafted from what heph can see
(the layout, the test and lint commands, the conventions its configuration files state) and
written through the write tool, so it is shown as a diff, approved like any write, and
checkpointed. No model is asked: the draft is quick, free and says only what is true; the person
then adds what only they know.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any

from hephaistus.textfile import text_of
from hephaistus.wording import counted
from hephaistus.workspace import Workspace
from hephaistus.workspace.project_commands import ProjectCommand
from hephaistus.workspace.symbols import is_test_file

FILE_NAME = "AGENTS.md"
LAYOUT_ENTRIES = 15
LINT_TOOLS = (  # (how a configuration file shows it, the command people run)
    ("[tool.ruff", "ruff check . && ruff format --check ."),
    ("[tool.black", "black --check ."),
    ("[tool.flake8", "flake8"),
    ("[tool.mypy", "mypy ."),
)
LINT_NAMES = {"mypy .": "types"}  # the name a command is listed under, when not "lint"


def draft(workspace: Workspace, commands: dict[str, ProjectCommand]) -> str:
    """A first AGENTS.md for the workspace, from its files alone: the layout, the commands to
    run, and the conventions its configuration shows."""
    files = workspace.without_secrets(workspace.files())
    pyproject = _text(workspace.root / "pyproject.toml")
    sections = [
        "# AGENTS.md",
        "Instructions for coding agents (and people) working in this repository.",
        "## Layout\n" + "\n".join(_layout(files)),
        "## Commands\n" + "\n".join(_commands(workspace.root, commands, pyproject)),
    ]
    conventions = _conventions(workspace, files, pyproject)
    if conventions:
        sections.append("## Conventions\n" + "\n".join(conventions))
    sections.append(
        "<!-- Drafted by `heph init` from the project's files. Add what only you know: what not "
        "to touch, how changes are reviewed and released. -->"
    )
    return "\n\n".join(sections) + "\n"


def _layout(files: list[str]) -> list[str]:
    folders: dict[str, Counter[str]] = {}
    top_files = []
    for rel in files:
        first, _, rest = rel.partition("/")
        if not rest:
            top_files.append(rel)
            continue
        folders.setdefault(first, Counter())[PurePosixPath(rel).suffix or "no suffix"] += 1
    lines = []
    packages = {rel.split("/")[0] for rel in files if re.fullmatch(r"[^/]+/__init__\.py", rel)}
    for folder, kinds in sorted(folders.items(), key=lambda item: -sum(item[1].values())):
        count = sum(kinds.values())
        common = ", ".join(kind for kind, _ in kinds.most_common(3))
        role = "; a Python package" if folder in packages else _role(folder)
        lines.append(f"- `{folder}/`: {counted(count, 'file')} ({common}){role}")
    lines = lines[:LAYOUT_ENTRIES]
    if top_files:
        shown = ", ".join(f"`{name}`" for name in sorted(top_files)[:LAYOUT_ENTRIES])
        lines.append(f"- at the top: {shown}")
    return lines or ["- (no files yet)"]


def _role(folder: str) -> str:
    roles = {
        "tests": "; the tests",
        "test": "; the tests",
        "docs": "; documentation",
        "src": "; the source",
        "scripts": "; scripts",
        "benchmarks": "; benchmarks",
        "examples": "; examples",
    }
    return roles.get(folder.lower(), "")


def _commands(root: Path, commands: dict[str, ProjectCommand], pyproject: str) -> list[str]:
    lines = [f"- {c.name}: `{c.command}`" for c in commands.values()]
    if "lint" not in commands:
        setup_cfg = _text(root / "setup.cfg")
        for marker, command in LINT_TOOLS:
            section = marker.replace("[tool.", "[")
            if marker in pyproject or section in setup_cfg:
                lines.append(f"- {LINT_NAMES.get(command, 'lint')}: `{command}`")
    if not lines:
        lines.append("- (none found: name them here, and under [commands] in .heph.toml)")
    return lines


def _conventions(workspace: Workspace, files: list[str], pyproject: str) -> list[str]:
    found = []
    python = re.search(r'^requires-python\s*=\s*"([^"]+)"', pyproject, re.M)
    if python:
        found.append(f"- Python {python[1]}.")
    length = re.search(r"^line-length\s*=\s*(\d+)", pyproject, re.M)
    if length:
        found.append(f"- Lines are at most {length[1]} characters.")
    sources = [rel for rel in files if rel.endswith(".py") and not is_test_file(rel)][:200]
    if sources:
        from hephaistus.docs.fix import detect_style

        texts = [_text(workspace.root / rel) for rel in sources]
        style = detect_style(texts)
        if any(re.search(r"^\s*(Args|Parameters|:param)\b", t, re.M) for t in texts):
            found.append(f"- Docstrings in the {style} style (`heph docs --check` checks them).")
        found.append(f"- Indentation: {_indentation(texts)}.")
    return found


def _indentation(texts: list[str]) -> str:
    from hephaistus.tools.editing.indenting import file_unit

    units = Counter(file_unit(text.splitlines()) for text in texts if text.strip())
    usual = [(unit, n) for unit, n in units.most_common() if unit in ("\t", "  ", "    ")]
    unit = usual[0][0] if usual else "    "
    return "tabs" if unit == "\t" else f"{len(unit)} spaces"


def _text(path: Path) -> str:
    return text_of(path) or ""


def create(workspace: Workspace, config: Any, policy: Any, sink: Any = None) -> tuple[Any, str]:
    """Draft AGENTS.md and write it through the write tool, under `policy` (shown as a diff,
    approved like any write, checkpointed) in a session of its own, so `heph undo` takes it
    back. The tool's result, and the session's id."""
    from hephaistus.engine.runner import Runtime
    from hephaistus.errors import ConfigError
    from hephaistus.records.checkpoints import Checkpoints
    from hephaistus.records.session import SessionStore
    from hephaistus.tools import ToolContext, default_registry
    from hephaistus.workspace import project_commands

    if (workspace.root / FILE_NAME).exists():
        raise ConfigError(
            f"{FILE_NAME} exists already; heph init drafts one only where there is none "
            "(ask heph to improve it instead)"
        )
    commands = project_commands.resolve(
        workspace.root, dict(config.commands), config.test_cmd, config.source_of
    )
    args = {"path": FILE_NAME, "content": draft(workspace, commands)}
    workspace.ensure_heph_dir()
    session = SessionStore(workspace.heph_dir / "sessions").create(
        task="heph init", model="-", workspace=str(workspace.root)
    )
    checkpoints = Checkpoints(workspace.root, workspace.heph_dir, session.id)
    context = ToolContext(workspace, checkpoints=checkpoints)
    runtime = Runtime(default_registry(), context, policy, sink)
    outcome = "failed"
    try:
        with session.span("TOOL", "write_file", args) as span:
            result = runtime.call("write_file", args)
            span.output = {"output": result.output, "diff": result.diff}
            span.ok = result.ok
        outcome = "answered" if result.ok else "refused" if result.refused else "failed"
        return result, session.id
    finally:
        session.end(outcome, {"answered": 0, "refused": 3}.get(outcome, 1), "drafted AGENTS.md")
