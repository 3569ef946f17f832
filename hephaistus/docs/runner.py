"""`heph docs [--check|--fix] [--staged] [PATHS...]`: which files, and what to do with them.

Exit codes follow pre-commit's contract: 0 when there was nothing to do, 1 when problems were
found (check) or files were changed or problems remain (fix).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hephaistus.docs.check import Problem, check_files
from hephaistus.docs.fix import DocsError, FileResult, detect_style, fix_source
from hephaistus.docs.parallel import in_parallel
from hephaistus.docs.report import Reporter
from hephaistus.errors import ConfigError, HephError
from hephaistus.model.base import Model
from hephaistus.model.compaction import Compactor, context_window
from hephaistus.records.checkpoints import Checkpoints
from hephaistus.records.session import DOCS_SESSION, Memo, Session, SessionStore
from hephaistus.records.transaction import ChangedOnDisk, write_checkpointed
from hephaistus.settings.config import Config
from hephaistus.textfile import (
    NotTextError,
    TextFile,
    read_text,
    remove_stale_temp_files,
)
from hephaistus.values import ModelReply
from hephaistus.workspace import PathError, Workspace

STYLE_SAMPLE_FILES = 300


def collect_files(
    workspace: Workspace, paths: list[str], staged: bool, cwd: Path | None = None
) -> list[str]:
    """Workspace-relative .py files: the staged ones, the given files and folders, or all. Each
    passes the tools' check (inside the workspace, no secret) and goes by its real name, so a
    link is read and written as its target, once, and a link out is never followed."""
    if staged:
        return _checked(workspace, _staged(workspace))
    if not paths:
        return _checked(workspace, workspace.files())
    found: list[str] = []
    base = cwd or Path.cwd()
    for path in paths:
        absolute = path if Path(path).is_absolute() else str(base / path)
        try:
            real = workspace.resolve(absolute)
        except PathError as error:
            raise ConfigError(f"heph docs: {error}") from None
        if real.is_dir():
            found += workspace.files(workspace.relative(real))
        elif real.exists():
            try:
                found.append(workspace.check(absolute)[0])
            except PathError as error:
                raise ConfigError(f"heph docs: {error}") from None
        else:
            raise ConfigError(f"heph docs: {path} does not exist")
    return _checked(workspace, found)


def _checked(workspace: Workspace, names: list[str]) -> list[str]:
    """The .py files among `names` that the tools may use, by their real names, each once."""
    found = []
    for name in names:
        if not name.endswith(".py"):
            continue
        try:
            rel, real = workspace.check(name)
        except PathError:
            continue  # a link out of the workspace, or a secret: never read
        if real.is_file():
            found.append(rel)
    return list(dict.fromkeys(found))


def _staged(workspace: Workspace) -> list[str]:
    from hephaistus.runtime.gitrun import GitError, run

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
    return [n for n in raw.split("\0") if n]


def run_check(workspace: Workspace, files: list[str], config: Config) -> list[Problem]:
    """The docstring problems of `files` (workspace-relative), by the `[docs]` settings."""
    return check_files(workspace.root, files, config.docs)


def run_fix(
    workspace: Workspace,
    files: list[str],
    config: Config,
    model: Model,
    report: Reporter,
    *,
    max_files: int | None = None,
    diff: bool = False,
) -> int:
    """Fix every file (the first `max_files` that need it), a few at a time; with `diff`,
    print what would change and write nothing. 0 when nothing needed doing, else 1
    (pre-commit's contract)."""
    problems = run_check(workspace, files, config)
    by_file: dict[str, list[Problem]] = {}
    for problem in problems:
        by_file.setdefault(problem.path, []).append(problem)
    if not by_file:
        return 0
    todo = list(by_file)[:max_files] if max_files else list(by_file)
    style = config.docs.style if config.docs.style != "auto" else _repository_style(workspace)
    workspace.ensure_heph_dir()
    remove_stale_temp_files(workspace.temp_dir)
    session = SessionStore(workspace.heph_dir / "sessions").create(
        kind=DOCS_SESSION,
        task=f"heph docs --fix{' --diff' if diff else ''} ({len(todo)} files)",
        model=model.name,
        base_url=config.base_url,
        workspace=str(workspace.root),
    )
    checkpoints = Checkpoints(workspace.root, workspace.heph_dir, session.id)
    prompt = _docs_prompt(workspace, style, config.workspace_trusted)
    cap = _reply_cap(workspace, config, model)

    def fixed(rel: str) -> tuple[TextFile, FileResult]:
        return _fixed(workspace, rel, config, style, model, session, prompt, cap)

    results = _Results(workspace, session, checkpoints, report, dry_run=diff)
    remaining = len(by_file) - len(todo)
    outcome, message = "answered", ""
    report.start(len(todo))
    try:
        for rel, done, error in in_parallel(
            todo, fixed, config.docs.jobs, lambda running: report.waiting(running.waiting())
        ):
            if error is None:
                remaining += results.take(*done)  # type: ignore[misc]
            else:
                remaining += results.failed(rel, error)  # raises when the run must stop
    except BaseException as error:
        outcome = "interrupted" if isinstance(error, KeyboardInterrupt) else "failed"
        message = f"{report.done} of {len(todo)} files done before it stopped; "
        if isinstance(error, KeyboardInterrupt):
            report.stopped()
        else:
            session.record("MEMO", Memo.ERROR, str(error))
        raise
    finally:
        report.finish()
        session.end(outcome, 1, f"{message}{len(by_file)} files; {remaining} problems remain")
    return 1


def _fixed(
    workspace: Workspace,
    rel: str,
    config: Config,
    style: str,
    model: Model,
    session: Session,
    prompt: str,
    cap: int,
) -> tuple[TextFile, FileResult]:
    """The file as read, and what the model's docstrings make of it (run in a worker)."""
    original = read_text(workspace.root / rel, rel)  # line endings and BOM are kept

    def ask(request: str, name: str) -> ModelReply:
        with session.span("LLM", model.name, {"file": name}) as span:
            reply = model.complete(
                [{"role": "system", "content": prompt}, {"role": "user", "content": request}],
                max_tokens=cap,
            )
            span.output = reply.text
            span.usage = reply.usage.to_dict()
        if reply.cut_off:
            raise DocsError(
                f"the model's reply was cut off at the reply limit ({cap} tokens; "
                "max_reply_tokens in .heph.toml or your config.toml raises it)"
            )
        return reply

    return original, fix_source(rel, original.text, config.docs, style, ask)


@dataclass
class _Results:
    """Takes each file's result in the main thread: writes it (checkpointed), or with
    `dry_run` shows it as a diff, and says so."""

    workspace: Workspace
    session: Session
    checkpoints: Checkpoints
    report: Reporter
    dry_run: bool

    def failed(self, rel: str, error: BaseException) -> int:
        """A file whose fixing raised: said, and the others go on; unless the endpoint failed
        for good (asking again is pointless) or the run was interrupted."""
        if isinstance(error, HephError) or not isinstance(error, Exception):
            raise error
        readable = isinstance(error, (OSError, NotTextError))
        why = str(error) if readable else f"{type(error).__name__}: {error}"
        self.report.error(rel, why)
        self.session.record("MEMO", Memo.ERROR, f"{rel}: {why}")
        return 1

    def take(self, original: TextFile, result: FileResult) -> int:
        """The number of problems left in the file."""
        rel = result.path
        if result.error or result.new_source is None:
            self.report.error(rel, result.error or "nothing was written")
            self.session.record("MEMO", Memo.DOCS_LEFT_UNCHANGED, f"{rel}: {result.error}")
            return len(result.asked) or 1
        if self.dry_run:
            from hephaistus.workspace.diffs import unified_diff

            changes = unified_diff(rel, original.text, result.new_source, created=False)
            self.report.diff(rel, changes, result.written)
            return len(result.asked)
        path = self.workspace.root / rel
        try:  # only onto what the model saw
            write_checkpointed(
                self.workspace, self.checkpoints, rel, path, original, result.new_source
            )
        except ChangedOnDisk:
            self.report.error(rel, "it changed while its docstrings were written; run again")
            return len(result.asked)
        missed = [n for n in result.asked if n not in result.written and n not in result.refused]
        self.session.record("MEMO", Memo.DOCS_WRITTEN, f"{rel}: {', '.join(result.written)}")
        self.report.fixed(rel, result.written, missed, result.refused)
        return len(missed) + len(result.refused)


def _reply_cap(workspace: Workspace, config: Config, model: Model) -> int:
    """The reply limit every request carries, by the agent's rule: max_reply_tokens, else a
    quarter of the window (a small local server's, asked once and cached), so that a model
    that runs on stops there instead of filling the window until the hook times out."""
    ask = getattr(model, "served_window", None)
    served = None
    if ask is not None and not config.context_window:
        served = ask(workspace.heph_dir / "cache" / "windows.json")
    window, source = context_window(model.name, config.context_window, served)
    return Compactor(window, source, reply_limit=config.max_reply_tokens).reply_tokens


def _docs_prompt(workspace: Workspace, style: str, trusted: bool) -> str:
    from hephaistus.model.prompting import load_template

    return load_template("docs.md", workspace.root if trusted else None).replace("{{style}}", style)


def _repository_style(workspace: Workspace) -> str:
    sources = []
    for rel in [f for f in workspace.files() if f.endswith(".py")][:STYLE_SAMPLE_FILES]:
        try:
            sources.append((workspace.root / rel).read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    return detect_style(sources)
