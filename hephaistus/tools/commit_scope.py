"""Which files a commit of heph's may take: those heph changed in this session or chat (and has
not undone), never a secret file, and never a file that also holds the person's work (changes
they staged, made before heph's first write and never committed, or made since heph last wrote
it). Their own work is theirs to commit."""

from __future__ import annotations

from hephaistus.records.checkpoints import CheckpointStore
from hephaistus.runtime.secret_files import is_secret_name
from hephaistus.tools.context import ToolContext
from hephaistus.workspace.repository import Repository


class UsersWork(ValueError):
    """Files heph changed that also hold the user's work: `files`, as the workspace names them."""

    def __init__(self, message: str, files: list[str]) -> None:
        super().__init__(message)
        self.files = files


def session_paths(ctx: ToolContext, repo: Repository) -> set[str]:
    """The files heph changed in this conversation, named from the repository's top."""
    return {repo.relative(ctx.workspace.root / rel) for rel in hephs_changes(ctx)}


def hephs_changes(ctx: ToolContext) -> list[str]:
    """The files heph changed in this conversation and has not undone: this process's journal,
    and the checkpoints of the conversation's sessions (`--continue` picks up earlier ones)."""
    mine = ctx.journal.changed_paths()
    if not ctx.sessions:
        return mine
    left = CheckpointStore(ctx.workspace.root, ctx.workspace.heph_dir).left_states(
        list(ctx.sessions)
    )
    # A change undone since is no longer heph's.
    return [rel for rel in dict.fromkeys([*mine, *left]) if left.get(rel, True) is not None]


def commit_targets(ctx: ToolContext, paths: list[str] | str | None) -> tuple[list[str], list[str]]:
    """(the files to commit, the secret ones left out): heph's own changes of this session or
    chat, all of them or those `paths` names (a list, or one string: one path, else paths
    separated by spaces). Anything else is the user's to commit, and refused."""
    mine = hephs_changes(ctx)
    if not mine:
        raise ValueError("heph changed no files in this session, so it has nothing to commit")
    if not paths:
        left_out = [rel for rel in mine if is_secret_name(rel)]
        chosen = [rel for rel in mine if rel not in left_out]
        if not chosen:
            raise ValueError(f"heph never commits secret files ({', '.join(left_out)})")
        return chosen, left_out
    if isinstance(paths, str):
        names = [paths.strip()] if paths.strip() in mine else paths.split()
    else:
        names = paths
    chosen = []
    for name in names:
        rel = ctx.workspace.relative(ctx.workspace.resolve(name))  # inside, and not .git/
        if is_secret_name(rel) or is_secret_name(name):
            raise ValueError(f"{rel} looks like a secret file; heph never commits it")
        if rel not in mine:
            raise ValueError(
                f"{rel} was not changed by heph in this session; heph commits only its own "
                f"changes ({', '.join(mine)}), the user commits theirs"
            )
        chosen.append(rel)
    return list(dict.fromkeys(chosen)), []


def _committed_by_heph(ctx: ToolContext, repo: Repository, rel: str, committed: str) -> bool:
    """Whether HEAD's blob `committed` of `rel` is a content heph's writes left it in (heph
    committed it, in this conversation, before writing it again): no work of the user's."""
    store = CheckpointStore(ctx.workspace.root, ctx.workspace.heph_dir)
    git_name = repo.relative(ctx.workspace.root / rel)
    return any(
        repo.hash_object(git_name, content) == committed
        for content in store.contents_left(list(ctx.sessions), rel)
    )


def not_committed_yet(ctx: ToolContext, repo: Repository, chosen: list[str]) -> list[str]:
    """The files of `chosen` whose content is not what HEAD holds: the others were committed
    as they are already (by an earlier git_commit, say), and are left out."""
    left = []
    for rel in chosen:
        git_name = repo.relative(ctx.workspace.root / rel)
        path = ctx.workspace.root / rel
        now = repo.hash_object(git_name, path.read_bytes()) if path.is_file() else None
        if now != repo.committed_blob(git_name):
            left.append(rel)
    if not left:
        raise ValueError(
            f"{', '.join(chosen)} {'is' if len(chosen) == 1 else 'are'} committed already, as "
            "heph left it: there is nothing new to commit"
        )
    return left


def refuse_the_users_work(ctx: ToolContext, repo: Repository, chosen: list[str]) -> None:
    """A file heph changed may hold the user's work too: changes they staged, made before
    heph's first write to it and never committed, or made since heph last wrote it (or heph's
    change was undone). `git commit --only` would take those along, so such a file is
    refused."""
    if ctx.sessions:
        store = CheckpointStore(ctx.workspace.root, ctx.workspace.heph_dir)
        left = store.left_states(list(ctx.sessions))
        changed = []
        for rel in chosen:
            if rel not in left:
                continue  # no record of heph's write (a context without checkpoints)
            state = left[rel]
            if state is None or not store.holds(rel, state):
                changed.append(rel)
        if changed:
            raise UsersWork(
                f"{', '.join(changed)} changed since heph last wrote it (edited by someone else, "
                "or heph's change undone): committing would take in what is not heph's, so the "
                "user should commit this",
                changed,
            )
    named = [str(ctx.workspace.root / rel) for rel in chosen]
    listed = repo.command("diff", "--cached", "--name-only", "-z", "--", *named, literal=True)
    by_git_name = {repo.relative(ctx.workspace.root / rel): rel for rel in chosen}
    staged = [by_git_name.get(name, name) for name in listed.split("\0") if name]
    if staged:
        raise UsersWork(
            f"{', '.join(staged)} also {'has' if len(staged) == 1 else 'have'} changes the user "
            "staged; committing would take them along, so the user should commit this",
            staged,
        )
    if not ctx.sessions or not repo.has_commits():
        return
    before = CheckpointStore(ctx.workspace.root, ctx.workspace.heph_dir).before_states(
        list(ctx.sessions)
    )
    mixed = []
    for rel in chosen:
        if rel not in before:
            continue
        git_name = repo.relative(ctx.workspace.root / rel)
        committed = repo.committed_blob(git_name)
        content = before[rel]
        was = None if content is None else repo.hash_object(git_name, content)
        if committed != was and not (committed and _committed_by_heph(ctx, repo, rel, committed)):
            mixed.append(rel)
    if mixed:
        raise UsersWork(
            f"{', '.join(mixed)} already had uncommitted changes of the user's before heph "
            "edited it; committing would take those along, so the user should commit this",
            mixed,
        )
