"""`heph docs [--check|--fix] [--staged] [PATHS...]`: which files, and what to do with them.

Exit codes follow pre-commit's contract: 0 when there was nothing to do, 1 when problems were
found (check) or files were changed or problems remain (fix).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from hephaistus.checkpoints import Checkpoints
from hephaistus.config import Config
from hephaistus.docs.check import Problem, check_files
from hephaistus.docs.fix import detect_style, fix_source
from hephaistus.errors import ConfigError
from hephaistus.locks import file_lock
from hephaistus.seams import Model, ModelReply
from hephaistus.session import DOCS_SESSION, Memo, Session, SessionStore
from hephaistus.textfile import (
    NotTextError,
    atomic_write,
    read_text,
    remove_stale_temp_files,
)
from hephaistus.ui.escape import visible
from hephaistus.workspace import PathError, Workspace

STYLE_SAMPLE_FILES = 300


def collect_files(
    workspace: Workspace, paths: list[str], staged: bool, cwd: Path | None = None
) -> list[str]:
    """Workspace-relative .py files: the staged ones, the given files and folders, or all."""
    if staged:
        return _staged(workspace)
    if not paths:
        return [f for f in workspace.files() if f.endswith(".py")]
    found: list[str] = []
    base = cwd or Path.cwd()
    for path in paths:
        absolute = path if Path(path).is_absolute() else str(base / path)
        try:
            real = workspace.resolve(absolute)
        except PathError as error:
            raise ConfigError(f"heph docs: {error}") from None
        if real.is_dir():
            found += [f for f in workspace.files(workspace.relative(real)) if f.endswith(".py")]
        elif real.exists():
            found.append(workspace.relative(real))
        else:
            raise ConfigError(f"heph docs: {path} does not exist")
    return list(dict.fromkeys(found))


def _staged(workspace: Workspace) -> list[str]:
    from hephaistus.repository import GitError, run

    try:
        raw = run(
            workspace.root,
            "diff",
            "--cached",
            "--name-only",
            "-z",
            "--diff-filter=ACM",
            "--relative",
            text=False,
        )
    except GitError:
        raise ConfigError("heph docs --staged: the workspace is not a git repository") from None
    names = [n for n in raw.split("\0") if n]
    return [n for n in names if n.endswith(".py") and (workspace.root / n).is_file()]


def run_check(workspace: Workspace, files: list[str], config: Config) -> list[Problem]:
    return check_files(workspace.root, files, config.docs)


def run_fix(
    workspace: Workspace, files: list[str], config: Config, model: Model, report: Reporter
) -> int:
    """Fix every file; 0 when nothing needed doing, else 1 (pre-commit's contract)."""
    problems = run_check(workspace, files, config)
    if not problems:
        return 0
    by_file: dict[str, list[Problem]] = {}
    for problem in problems:
        by_file.setdefault(problem.path, []).append(problem)
    style = config.docs.style if config.docs.style != "auto" else _repository_style(workspace)
    workspace.ensure_heph_dir()
    remove_stale_temp_files(workspace.temp_dir)
    session = SessionStore(workspace.heph_dir / "sessions").create(
        kind=DOCS_SESSION,
        task=f"heph docs --fix ({len(by_file)} files)",
        model=model.name,
        base_url=config.base_url,
        workspace=str(workspace.root),
    )
    checkpoints = Checkpoints(workspace.root, workspace.heph_dir, session.id)
    remaining = 0
    outcome = "answered"
    try:
        for rel in by_file:
            remaining += _fix_file(
                workspace, rel, config, style, model, session, checkpoints, report
            )
    except KeyboardInterrupt:
        outcome = "interrupted"
        raise
    except Exception as error:
        outcome = "failed"
        session.record("MEMO", Memo.ERROR, str(error))
        raise
    finally:
        session.end(outcome, 1, f"{len(by_file)} files; {remaining} problems remain")
    return 1


def _fix_file(
    workspace: Workspace,
    rel: str,
    config: Config,
    style: str,
    model: Model,
    session: Session,
    checkpoints: Checkpoints,
    report: Reporter,
) -> int:
    path = workspace.root / rel
    try:
        original = read_text(path, rel)  # its line endings and BOM are kept when writing back
    except (OSError, NotTextError) as error:
        report.error(rel, str(error))
        return 1
    source = original.text

    def ask(request: str, name: str) -> ModelReply:
        with session.span("LLM", model.name, {"file": name}) as span:
            reply = model.complete(
                [
                    {"role": "system", "content": _docs_prompt(workspace, style)},
                    {"role": "user", "content": request},
                ]
            )
            span.output = reply.text
            span.usage = reply.usage.to_dict()
        return reply

    result = fix_source(rel, source, config.docs, style, ask)
    if result.error or result.new_source is None:
        report.error(rel, result.error or "nothing was written")
        session.record("MEMO", Memo.DOCS_LEFT_UNCHANGED, f"{rel}: {result.error}")
        return len(result.asked) or 1
    data = original.encode(result.new_source)
    with file_lock(workspace.heph_dir, rel):  # the file must still be what the model saw
        if read_text(path, rel) != original:
            report.error(rel, "it changed while the docstrings were being written; run again")
            return len(result.asked)
        checkpoints.record(rel, data)
        atomic_write(path, data, temp_dir=workspace.temp_dir)
    missed = [n for n in result.asked if n not in result.written and n not in result.refused]
    session.record("MEMO", Memo.DOCS_WRITTEN, f"{rel}: {', '.join(result.written)}")
    report.fixed(rel, result.written, missed, result.refused)
    return len(missed) + len(result.refused)


def _docs_prompt(workspace: Workspace, style: str) -> str:
    from hephaistus.prompting import load_template

    return load_template("docs.md", workspace.root).replace("{{style}}", style)


def _repository_style(workspace: Workspace) -> str:
    sources = []
    for rel in [f for f in workspace.files() if f.endswith(".py")][:STYLE_SAMPLE_FILES]:
        try:
            sources.append((workspace.root / rel).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    return detect_style(sources)


class Reporter:
    """Says what `--fix` did, one line per file."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout

    def fixed(
        self, rel: str, written: list[str], missed: list[str], refused: dict[str, str]
    ) -> None:
        line = f"{rel}: wrote {len(written)} docstrings ({', '.join(written)})"
        if missed:
            line += f"; the model gave none for {', '.join(missed)}"
        lines = [line, *(f"  {name}: not placed: {why}" for name, why in refused.items())]
        print(visible("\n".join(lines)), file=self.stream)

    def error(self, rel: str, message: str) -> None:
        print(visible(f"{rel}: left unchanged: {message}"), file=self.stream)
