"""Undo and redo: putting back what a session's writes changed, from its checkpoints.

Undo restores every file the session changed as it was before, byte for byte, mode included,
after checking that each is still where heph wrote it and in a state heph knows (else it refuses:
someone edited it since), and that every stored content is intact. A file another run wrote
between heph's writes gets only heph's own lines taken back (see reversal), or is refused when
they cannot be told apart. What undo replaced is kept, signed, so redo can put it back.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace

from hephaistus.locks import workspace_lock
from hephaistus.records.checkpoints import (
    CheckpointStore,
    Damaged,
    Entry,
    FileState,
    Interleaved,
    NotInside,
    UndoConflict,
)
from hephaistus.records.reversal import merge, taken_away
from hephaistus.textfile import atomic_write, link_real, new_file_mode, read_real, unlink_real
from hephaistus.workspace import PathError, Workspace, provenance

Pick = Callable[[Entry], FileState]


@dataclass(frozen=True)
class UndoResult:
    """What an undo (or redo) did, file by file."""

    session_id: str
    restored: list[str]  # files put back as they were
    deleted: list[str]  # files heph had created
    # Files another run also wrote between heph's writes: only heph's own lines were taken back.
    own_lines_only: list[str] = field(default_factory=list)
    taken: dict[str, int] = field(default_factory=dict)  # --force: others' lines taken away
    repositories: list[str] = field(default_factory=list)  # git repositories a command made
    # Files too large to have been kept: left as they are (their earlier content is not
    # known), or deleted (a command made them) where redo cannot bring them back.
    unkept: list[str] = field(default_factory=list)


def undo(store: CheckpointStore, session_id: str, *, force: bool = False) -> UndoResult:
    """Take back every change the session made. A file someone else also wrote between
    heph's writes gets only heph's own lines taken back, when they can be told apart;
    else it is refused (Interleaved), or with `force` restored whole, saying how many of
    their lines that takes away."""
    with workspace_lock(store.heph_dir):
        if store.is_undone(session_id):
            raise LookupError(f"session {session_id} is already undone")
        entries, left = _restorable(store.entries(session_id))
        repositories = store.repositories(session_id)
        if not entries and not left and not repositories:
            raise LookupError(_nothing_to_undo(store, session_id))
        found = _check(store, entries, force, _links_taken_back(entries))
        _check_blobs(store, session_id, entries, lambda e: e.before)
        plans = [_undo_plan(store, session_id, e, found[e.path]) for e in entries]
        tangled = {e.path: n for e, _, own, n in plans if own is None and n}
        if tangled and not force:
            raise Interleaved(tangled)
        # What each file holds now and what it gets, so redo can bring heph's back (not
        # what was too large to keep a copy of).
        undone = [
            {"path": e.path, "before": vars(now).copy(), "after": vars(target).copy()}
            for e, (now, target), _, _ in plans
            if now.kept
        ]
        gone = [e.path for e, (now, _), _, _ in plans if not now.kept]
        signed = provenance.signed(f"undone {store.root}", {"files": undone})
        atomic_write(
            store.folder / session_id / "undone.json",
            json.dumps(signed).encode(),
            temp_dir=store.temp_dir,
        )
        targets = {e.path: target for e, (_, target), _, _ in plans}
        result = _restore(store, session_id, entries, lambda e: targets[e.path])
        own = [e.path for e, _, own_only, _ in plans if own_only]
        return replace(
            result,
            own_lines_only=own,
            taken=tangled if force else {},
            repositories=_remove_repositories(store, repositories),
            unkept=[e.path for e in left] + gone,
        )


def _restorable(entries: list[Entry]) -> tuple[list[Entry], list[Entry]]:
    """(the entries undo can restore, those too large to have been kept a copy of, which
    it leaves as they are)."""
    restorable: list[Entry] = []
    left: list[Entry] = []
    for entry in entries:
        unknown = entry.before.exists and not entry.before.kept
        (left if unknown else restorable).append(entry)
    return restorable, left


def redo(store: CheckpointStore, session_id: str, *, force: bool = False) -> UndoResult:
    """Bring back what undo replaced, if the files are still as undo left them."""
    with workspace_lock(store.heph_dir):
        marker = store.folder / session_id / "undone.json"
        records = store.undone_records(session_id)
        if records is None:
            raise LookupError(f"session {session_id} has not been undone")
        entries = [
            Entry(r["path"], FileState(**r["after"]), FileState(**r["before"])) for r in records
        ]
        _check(store, entries, force)
        _check_blobs(store, session_id, entries, lambda e: e.after)
        result = _restore(store, session_id, entries, lambda e: e.after)
        marker.unlink()
        return result


def _undo_plan(
    store: CheckpointStore, session_id: str, entry: Entry, found: FileState | None
) -> tuple[Entry, tuple[FileState, FileState], bool | None, int]:
    """(entry, (the file's state now, the state undo gives it), whether only heph's own
    lines are taken back (None: they cannot be), the others' lines restoring whole would
    take away). `found`: which of heph's states the file is in (None: none, --force)."""
    now = found or entry.after
    if not entry.interleaved() or now == entry.before:
        return entry, (now, entry.before), False, 0
    if any(
        side.link or not side.kept for step in entry.steps for side in (step.before, step.after)
    ):
        return entry, (now, entry.before), None, 1  # no lines to merge: a link, a huge file

    def content(state: FileState) -> bytes:
        return store.blob(session_id, state)

    # Cut short (the file still holds what the last write found): that write was not made.
    steps = entry.steps if now == entry.after else entry.steps[:-1]
    others = [(content(left), content(found)) for left, found in entry.others_changes()]
    # The newest write taken back is exactly what it found; each earlier one is merged
    # out of what is left (heph left `after`, found `before`; the rest is the others').
    text: bytes | None = content(steps[-1].before) if steps else content(now)
    for step in reversed(steps[:-1]):
        text = None if text is None else merge(content(step.after), content(step.before), text)
    if text is None:
        return entry, (now, entry.before), None, taken_away(others) or 1
    return entry, (now, _store_blob(store, session_id, text, now.mode)), True, 0


def _store_blob(
    store: CheckpointStore, session_id: str, data: bytes, mode: int | None
) -> FileState:
    sha = hashlib.sha256(data).hexdigest()
    blob = store.folder / session_id / "blobs" / sha
    if not blob.exists():
        atomic_write(blob, data, temp_dir=store.temp_dir)
    return FileState(True, mode if mode is not None else new_file_mode(), sha)


def _links_taken_back(entries: list[Entry]) -> set[str]:
    """The links the session made (a command that swapped a folder for one): undo removes
    them first, so the files it puts back under their names go into real folders again."""
    return {e.path for e in entries if e.after.link and not e.before.exists}


def _check(
    store: CheckpointStore, entries: list[Entry], force: bool, cleared: Collection[str] = ()
) -> dict[str, FileState | None]:
    """Every file must still be where heph wrote it, and in a state heph knows: as heph
    left it, as its previous write left it (the last write was cut short before its
    rename), or as it was before. Under a link in `cleared` (removed first) anything goes.
    Which of those states each file is in (None: none of them, when forced)."""
    workspace = Workspace(store.root)  # one: each looks for the repository once
    folders: dict[str, bool] = {}
    moved = [
        e.path
        for e in entries
        if not _under(e.path, cleared) and not _where_written(workspace, e, folders)
    ]
    if moved:
        raise NotInside(moved)
    found = {e.path: _state_now(store, e) for e in entries}
    changed = [path for path, state in found.items() if state is None]
    if changed and not force:
        raise UndoConflict(changed)
    return found


def _state_now(store: CheckpointStore, entry: Entry) -> FileState | None:
    """Which of heph's states of the file it is in now, newest first (None: none)."""
    states = (entry.after, entry.previous, entry.before)
    return next((s for s in states if s is not None and store.holds(entry.path, s)), None)


def _nothing_to_undo(store: CheckpointStore, session_id: str) -> str:
    if store.manifest(store.folder / session_id):
        return (
            f"the checkpoint of session {session_id} was not made by heph on this machine "
            "(it came with the workspace's files); heph does not undo it"
        )
    return f"session {session_id} changed no files"


def _check_blobs(
    store: CheckpointStore, session_id: str, entries: list[Entry], target: Pick
) -> None:
    """Every content about to be restored is there, and is what the record says."""
    for entry in entries:
        state = target(entry)
        if not state.exists or not state.kept:
            continue  # nothing to restore, or nothing kept (a redo leaves such a file out)
        blob = store.folder / session_id / "blobs" / str(state.sha)
        try:
            intact = hashlib.sha256(read_real(blob)).hexdigest() == state.sha
        except OSError:
            intact = False
        if not intact:
            raise Damaged(
                f"the checkpoint of {entry.path} in session {session_id} is missing or "
                "damaged; nothing was restored"
            )


def _where_written(workspace: Workspace, entry: Entry, folders: dict[str, bool]) -> bool:
    """Whether the entry's path still names a place inside the workspace with no link on
    the way, as every path heph writes does: its folder resolves to itself (asked once a
    folder, in `folders`: a command's thousands of files share a few), and the file is no
    link (the tools write a link's target) or folder. A link a command made or removed is
    itself the place."""
    rel = entry.path
    folder = os.path.dirname(rel)
    if folder not in folders:
        try:
            folders[folder] = not folder or workspace.resolve(folder) == workspace.root / folder
        except PathError:
            folders[folder] = False
    if not folders[folder] or any(state.link for state in (entry.before, entry.after)):
        return folders[folder]
    try:
        mode = os.lstat(workspace.root / rel).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return True  # deleted (its folder too, or a file in its place): its place is there
    except OSError:
        return False
    return not stat.S_ISLNK(mode) and not stat.S_ISDIR(mode)


def _under(rel: str, folders: Collection[str]) -> bool:
    return any(rel.startswith(f"{folder}/") for folder in folders)


def _restore(
    store: CheckpointStore, session_id: str, entries: list[Entry], target: Pick
) -> UndoResult:
    restored, deleted = [], []
    # What goes away goes first: a link in a folder's place, before the folder's files.
    for entry in sorted(entries, key=lambda e: target(e).exists):
        state = target(entry)
        path = store.root / entry.path
        if not state.exists:
            if os.path.lexists(path):
                unlink_real(path)
                deleted.append(entry.path)
            continue
        data = store.blob(session_id, state)
        if state.link:
            link_real(path, os.fsdecode(data))
        else:
            atomic_write(path, data, temp_dir=store.temp_dir, real=True, mode=state.mode)
        restored.append(entry.path)
    gone = set(deleted)
    _remove_made_folders(store, [e for e in entries if e.path in gone])
    return UndoResult(session_id, restored, deleted)


def _remove_repositories(store: CheckpointStore, made: list[str]) -> list[str]:
    """Remove the git repositories (a `.git` folder, or a file or link of that name) commands
    made, never through a link on the way: the ones removed."""
    workspace = Workspace(store.root)
    removed = []
    for rel in made:
        folder, path = os.path.dirname(rel), store.root / rel
        try:
            if folder and workspace.resolve(folder) != store.root / folder:
                continue  # its folder is a link now: what is there is not the workspace's
        except PathError:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)  # removes a link inside, never what it leads to
        elif os.path.lexists(path):
            unlink_real(path)
        else:
            continue
        removed.append(rel)
    return removed


def _remove_made_folders(store: CheckpointStore, entries: list[Entry]) -> None:
    """The folders a write made for a file undo deleted, removed when nothing is left in them
    (what someone put there since stays, and so does its folder); never through a link."""
    workspace = Workspace(store.root)
    for folder in sorted({f for e in entries for f in e.made_folders}, key=len, reverse=True):
        try:
            if workspace.resolve(folder) == store.root / folder:
                os.rmdir(store.root / folder)
        except (OSError, PathError):
            continue  # not empty, gone already, or no longer a folder of the workspace
