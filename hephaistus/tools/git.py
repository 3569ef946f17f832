"""Git tools: status, diff, log, and a commit of exactly the files heph changed.

`git_commit` uses `git commit --only -- PATHS`: git commits those paths' working-tree content,
runs the repository's hooks, and leaves everything else in the index (the user's staged work) as
it was. Files new to git are announced with `git add --intent-to-add` first, and withdrawn again
when the commit fails. Git itself runs through hephaistus.repository.
"""

from __future__ import annotations

from pathlib import Path

from hephaistus.approvals import CommitRequest
from hephaistus.repository import GitError, Repository
from hephaistus.tools.context import ToolContext
from hephaistus.tools.results import ToolResult, clip
from hephaistus.workspace import PathError, is_secret_name

LOG_LIMIT = 50


def git_status(ctx: ToolContext) -> ToolResult:
    """Branch and changed files."""
    repo = _repo(ctx)
    if isinstance(repo, ToolResult):
        return repo
    mine = _session_paths(ctx, repo)
    lines = [f"branch: {repo.branch()}"]
    ours: list[str] = []
    theirs: list[str] = []
    for code, path in repo.changes():
        (ours if path in mine else theirs).append(f"  {code} {path}")
    lines.append(
        "changed by heph in this session:" if ours else "changed by heph in this session: nothing"
    )
    lines += ours
    lines.append(
        "other changes (the user's; leave them alone):" if theirs else "other changes: none"
    )
    lines += theirs
    lines.append("(codes: first letter = staged, second = not staged; ?? = untracked)")
    return ToolResult(True, "\n".join(lines))


def git_diff(ctx: ToolContext, path: str | None = None, staged: bool = False) -> ToolResult:
    """Uncommitted changes, or the staged ones.

    Args:
        path: limit the diff to this file or folder (default: everything)
        staged: show what is staged for the next commit instead
    """
    repo = _repo(ctx)
    if isinstance(repo, ToolResult):
        return repo
    args = ["--cached"] if staged else []
    scope = "."
    if path:
        try:
            scope = str(ctx.workspace.check(path, allow_secrets=ctx.allow_secrets)[1])
        except PathError as exc:
            return ToolResult(False, str(exc))
    changed = _git(repo, "diff", *args, "--name-only", "-z", "--", scope)
    if isinstance(changed, ToolResult):
        return changed
    secret = (
        []
        if ctx.allow_secrets
        else [name for name in changed.split("\0") if name and is_secret_name(name)]
    )
    # Secret files stay out of the diff, as they stay out of read_file and search.
    hidden = [f":(top,exclude,literal){name}" for name in secret]
    output = _git(repo, "diff", *args, "--", scope, *hidden)
    if isinstance(output, ToolResult):
        return output
    untracked = [p for code, p in repo.changes() if code == "??"]
    note = f"\n(untracked files, not in any diff: {', '.join(untracked)})" if untracked else ""
    if secret:
        note += (
            f"\n(left out as secret files: {', '.join(secret)}; allow_secrets = true shows them)"
        )
    if not output.strip():
        return ToolResult(True, ("no staged changes" if staged else "no unstaged changes") + note)
    return ToolResult(True, clip(output, ctx.observation_limit) + note)


def git_log(ctx: ToolContext, n: int = 10) -> ToolResult:
    """The last n commits.

    Args:
        n: how many commits (default 10, at most 50)
    """
    repo = _repo(ctx)
    if isinstance(repo, ToolResult):
        return repo
    if not repo.has_commits():
        return ToolResult(True, "no commits yet")
    output = _git(repo, "log", f"-{max(1, min(n, LOG_LIMIT))}", "--oneline", "--decorate")
    return output if isinstance(output, ToolResult) else ToolResult(True, output)


def git_commit(ctx: ToolContext, message: str, paths: str | None = None) -> ToolResult:
    """Commit your changed files (or `paths`); only when the user asks.

    Args:
        message: the commit message
        paths: space-separated files to commit instead of this session's files
    """
    repo = _repo(ctx)
    if isinstance(repo, ToolResult):
        return repo
    if not message.strip():
        return ToolResult(False, "the commit message is empty")
    try:
        targets = _commit_targets(ctx, repo, paths)
    except (PathError, ValueError) as exc:
        return ToolResult(False, str(exc))
    relative = tuple(repo.relative(t) for t in targets)
    names = ", ".join(relative)
    decision = ctx.approve(CommitRequest(relative, message))
    if decision == "refuse":
        return ToolResult(
            False, f"commit not approved: nothing was committed ({names})", decision=decision
        )
    if decision == "decline":
        return ToolResult(
            False, "the user declined this commit; nothing was committed", decision=decision
        )
    if decision == "skip":
        return ToolResult(
            True, f"dry run: would commit {names} with message {message!r}", decision=decision
        )
    tracked = repo.tracked([str(t) for t in targets])
    new_files = [str(t) for t in targets if repo.relative(t) not in tracked]
    if new_files:
        _git(repo, "add", "--intent-to-add", "--", *new_files)
    result = _git(
        repo, "commit", "--only", "--no-edit", "-m", message, "--", *[str(t) for t in targets]
    )
    if isinstance(result, ToolResult):
        if new_files:
            _git(repo, "rm", "--cached", "--quiet", "--", *new_files)
        return ToolResult(False, f"git commit failed, nothing was committed:\n{result.output}")
    sha = repo.git("rev-parse", "--short=10", "HEAD").strip()
    return ToolResult(True, f"committed {sha} on {repo.branch()}: {names}\n{result}".rstrip())


TOOLS = ((git_status, False), (git_diff, False), (git_log, False), (git_commit, True))
NAMES = frozenset(fn.__name__ for fn, _ in TOOLS)


# -- helpers -------------------------------------------------------------------------------


def _repo(ctx: ToolContext) -> Repository | ToolResult:
    repo = Repository.find(ctx.workspace.root)
    if repo is None:
        return ToolResult(False, f"{ctx.workspace.root} is not inside a git repository")
    return repo


def _git(repo: Repository, *args: str) -> str | ToolResult:
    try:
        return repo.git(*args)
    except GitError as error:
        return ToolResult(False, str(error))


def _session_paths(ctx: ToolContext, repo: Repository) -> set[str]:
    return {repo.relative(ctx.workspace.root / change.path) for change in ctx.changed}


def _commit_targets(ctx: ToolContext, repo: Repository, paths: str | None) -> list[Path]:
    if paths and paths.strip():
        names = paths.split()
    else:
        names = sorted({change.path for change in ctx.changed})
        if not names:
            raise ValueError("heph changed no files in this session; name the files in 'paths'")
    targets = []
    for name in names:
        real = ctx.workspace.resolve(name)
        if not real.exists() and not repo.tracked([str(real)]):
            raise ValueError(f"{name} does not exist and is not tracked by git")
        targets.append(real)
    return targets
