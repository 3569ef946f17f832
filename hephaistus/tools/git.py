"""Git tools: status, diff, log, and a commit of exactly the files heph changed.

`git_commit` commits only files heph changed in this session (or chat), never a secret file, and no
file that also holds the user's uncommitted work. It uses `git commit --only -- PATHS`: git commits
those paths' working-tree content and leaves everything else in the index (the user's staged work)
as it was. Files new to git are announced with `git add --intent-to-add` first, and withdrawn again
when the commit fails. No hook runs (as aider's commits, `--no-verify`): a hook runs the project's
code (pre-commit's checks, a test suite, a `conftest.py`) on the host, outside the sandbox, and a
model can write that code; the observation names the hooks the commit skipped, so neither the model
nor the person takes their checks as passed. Where heph runs no git at all (the repository's git
settings wait for the person's trust), a commit is refused and the run ends so (exit 3): a
requested commit that did not happen is no plain success. Git itself runs through GitPython
(`Repository.library`), whose commands hephaistus.workspace.repository runs.
"""

from __future__ import annotations

from pathlib import Path

from hephaistus.redact import scrub
from hephaistus.runtime.gitlocation import is_disabled
from hephaistus.runtime.gitrun import GitError
from hephaistus.runtime.secret_files import is_secret_name
from hephaistus.tools.commit_scope import (
    UsersWork,
    commit_targets,
    not_committed_yet,
    refuse_the_users_work,
    session_paths,
)
from hephaistus.tools.context import ToolContext
from hephaistus.values import CommitMade, CommitRequest, Proposal, ToolResult
from hephaistus.workspace import PathError
from hephaistus.workspace.repository import Repository

LOG_LIMIT = 50
COMMIT_REFUSED = "commit not made"  # how the refusal of a commit git may not run begins


def git_status(ctx: ToolContext) -> ToolResult:
    """Branch and changed files."""
    repo = _repo(ctx)
    if isinstance(repo, ToolResult):
        return repo
    mine = session_paths(ctx, repo)
    try:
        lines = [f"branch: {repo.branch()}"]
        changes = repo.changes()
    except GitError as error:
        return ToolResult(False, str(error))
    ours: list[str] = []
    theirs: list[str] = []
    for code, path in changes:
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
        ctx: the run's workspace, journal and limits (given by heph, not by the model)
        path: limit the diff to this file or folder (default: everything)
        staged: show what is staged for the next commit instead
    """
    repo = _repo(ctx)
    if isinstance(repo, ToolResult):
        return repo
    args = ["--cached"] if staged else []
    scope = str(ctx.workspace.root)  # git runs in the top folder: paths are absolute
    if path:
        try:
            real = ctx.workspace.check(path, allow_secrets=ctx.allow_secrets)[1]
        except PathError as exc:
            return ToolResult(False, str(exc))
        scope = f":(literal){real}"  # the path named, never a pattern
    # No renames: a secret file renamed is its deletion (named, so left out) and an addition.
    args.append("--no-renames")
    changed = _changed_names(repo, staged, scope)
    if isinstance(changed, ToolResult):
        return changed
    secret = [] if ctx.allow_secrets else [name for name in changed if is_secret_name(name)]
    # Secret files stay out of the diff, as they stay out of read_file and search.
    hidden = [f":(top,exclude,literal){name}" for name in secret]
    output = _git(repo, "diff", *args, "--", scope, *hidden)
    if isinstance(output, ToolResult):
        return output
    try:
        untracked = [p for code, p in repo.changes() if code == "??"]
    except GitError as error:
        return ToolResult(False, str(error))
    notes = [f"(untracked files, not in any diff: {', '.join(untracked)})"] if untracked else []
    if secret:
        notes.append(
            f"(left out as secret files: {', '.join(secret)}; allow_secrets = true shows them)"
        )
    if not output.strip():
        said = "no staged changes" if staged else "no unstaged changes"
        said += " but in secret files" if secret else ""  # a changed .env is a change
        return ToolResult(True, "\n".join([said, *notes]))
    # The notes first: the runtime cuts a long diff's end to the window, once, saying its size.
    return ToolResult(True, "\n".join([*notes, output]))


def git_log(ctx: ToolContext, n: int = 10) -> ToolResult:
    """The last n commits.

    Args:
        ctx: the run's workspace, journal and limits (given by heph, not by the model)
        n: how many commits (default 10, at most 50)
    """
    repo = _repo(ctx)
    if isinstance(repo, ToolResult):
        return repo
    if not repo.has_commits():
        return ToolResult(True, "no commits yet")
    try:
        return ToolResult(True, repo.log(max(1, min(n, LOG_LIMIT))))
    except GitError as error:
        return ToolResult(False, str(error))


def git_commit(
    ctx: ToolContext, message: str, paths: list[str] | str | None = None
) -> ToolResult | Proposal:
    """Commit the files you changed in this session (or some of them); only when the user asks.

    Args:
        ctx: the run's workspace, journal and limits (given by heph, not by the model)
        message: the commit message
        paths: some of the files you changed, to commit only those (default: all of them)
    """
    untrusted = _untrusted_git(ctx)
    if untrusted:  # no answer here allows it (--yes never trusts): the run ends, saying so
        return ToolResult(False, f"{COMMIT_REFUSED}: {untrusted}", decision="refuse")
    repo = _found(ctx)
    if isinstance(repo, ToolResult):
        return repo
    if not message.strip():
        return ToolResult(False, "the commit message is empty")
    try:
        chosen, left_out = commit_targets(ctx, paths)
        chosen = not_committed_yet(ctx, repo, chosen)
        refuse_the_users_work(ctx, repo, chosen)
    except UsersWork as exc:
        rest = [rel for rel in chosen if rel not in exc.files]
        hint = f" (the others can be committed on their own: paths {rest})" if rest else ""
        return ToolResult(False, f"nothing was committed: {exc}{hint}")
    except (PathError, ValueError, GitError) as exc:
        return ToolResult(False, f"nothing was committed: {exc}")
    targets = [ctx.workspace.root / rel for rel in chosen]
    relative = tuple(repo.relative(t) for t in targets)

    def carry_out() -> ToolResult:
        try:  # again: the person may have edited or staged something while asked
            refuse_the_users_work(ctx, repo, chosen)
        except (ValueError, GitError) as exc:
            return ToolResult(False, f"nothing was committed: {exc}")
        return _commit(repo, targets, relative, message, left_out)

    return Proposal(
        "git",
        CommitRequest(relative, message),
        carry_out,
        f"nothing was committed ({', '.join(relative)})",
    )


def _commit(
    repo: Repository,
    targets: list[Path],
    relative: tuple[str, ...],
    message: str,
    left_out: list[str],
) -> ToolResult:
    tracked = repo.tracked([str(t) for t in targets])
    new_files = [str(t) for t in targets if repo.relative(t) not in tracked]
    # Literal pathspecs: a file heph wrote named `[.]env` is that file, never a pattern.
    if new_files:
        _git(repo, "add", "--intent-to-add", "--", *new_files, literal=True)
    named = [str(t) for t in targets]

    def withdraw() -> None:  # the intent-to-add, so the person's index is as it was
        if new_files:
            _git(repo, "rm", "--cached", "--quiet", "--", *new_files, literal=True)

    try:
        result = _git(
            repo,
            "commit",
            "--only",
            "--no-edit",
            "-m",
            message,
            "--",
            *named,
            literal=True,
        )
    except BaseException:  # Ctrl-C mid-commit: git ended, its locks removed
        withdraw()
        raise
    if isinstance(result, ToolResult):
        withdraw()
        said = scrub(result.output)
        return ToolResult(False, f"git commit failed, nothing was committed:\n{said}")
    sha = repo.head_id()
    note = f"\n(left out as secret files: {', '.join(left_out)})" if left_out else ""
    names = ", ".join(relative)
    skipped = _hooks_not_run(repo.top)
    return ToolResult(
        True,
        f"committed {sha[:10]} on {repo.branch()}: {names}\n{skipped}{scrub(result)}".rstrip()
        + note,
        commit=CommitMade(sha, relative),
    )


def _hooks_not_run(top: Path) -> str:
    """The line that says which hooks a commit skipped (none: nothing to say), and why."""
    from hephaistus.workspace.gitsetup import commit_hooks

    skipped = commit_hooks(top)
    if not skipped:
        return ""
    return (
        f"(the commit's hooks did not run: {', '.join(skipped)}; heph runs no hook, since a hook "
        "runs the project's code outside the sandbox. Their checks have not run: say so to the "
        "user, who can run them (pre-commit run --from-ref HEAD~1 --to-ref HEAD))\n"
    )


TOOLS = ((git_status, "read"), (git_diff, "read"), (git_log, "read"), (git_commit, "git"))
NAMES = frozenset(fn.__name__ for fn, _ in TOOLS)


# -- helpers -------------------------------------------------------------------------------


def _untrusted_git(ctx: ToolContext) -> str | None:
    """Why heph runs no git in this workspace now (its repository's git settings wait for the
    person's trust), or None."""
    from hephaistus.workspace.trust import recheck

    changed = recheck(ctx.workspace.root)
    if changed or not is_disabled(ctx.workspace.root):
        return changed
    return (
        "heph runs no git in this workspace until the user trusts it (its .git holds settings, "
        "hooks or links a clone would not have; `heph trust --show` lists them, `heph trust` "
        "trusts them)"
    )


def _repo(ctx: ToolContext) -> Repository | ToolResult:
    untrusted = _untrusted_git(ctx)
    if untrusted:
        return ToolResult(False, f"nothing was done: {untrusted}")
    return _found(ctx)


def _found(ctx: ToolContext) -> Repository | ToolResult:
    repo = Repository.find(ctx.workspace.root)
    if repo is None:
        return ToolResult(False, f"{ctx.workspace.root} is not inside a git repository")
    return repo


def _git(repo: Repository, *args: str, literal: bool = False) -> str | ToolResult:
    try:
        return repo.command(*args, literal=literal)
    except GitError as error:
        return ToolResult(False, str(error))


def _changed_names(repo: Repository, staged: bool, scope: str) -> list[str] | ToolResult:
    """The files a diff of `scope` shows (staged: against HEAD; else: against the index),
    named from the top, as `git status` finds them: it compares the content of a file whose
    times alone changed without writing the index (`git diff --name-only`, kept from writing it,
    would name that file)."""
    listed = _git(
        repo, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=no", "--", scope
    )
    if isinstance(listed, ToolResult):
        return listed
    column = 0 if staged else 1
    return [item[3:] for item in listed.split("\0") if len(item) > 3 and item[column] not in " ?"]
