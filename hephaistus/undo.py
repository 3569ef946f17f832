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
from collections.abc import Callable, Collection, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, replace

from hephaistus import provenance
from hephaistus.checkpoints import (
    CheckpointStore,
    Damaged,
    Entry,
    FileState,
    Interleaved,
    NotInside,
    UndoConflict,
    UndoResult,
)
from hephaistus.locks import file_lock, workspace_lock
from hephaistus.reversal import merge, taken_away
from hephaistus.textfile import atomic_write, link_real, new_file_mode, read_real, unlink_real
from hephaistus.workspace import PathError, Workspace

Pick = Callable[[Entry], FileState]


def undo(store: CheckpointStore, session_id: str, *, force: bool = False) -> UndoResult:
    """Take back every change the session made. A file someone else also wrote between
    heph's writes gets only heph's own lines taken back, when they can be told apart;
    else it is refused (Interleaved), or with `force` restored whole, saying how many of
    their lines that takes away."""
    with workspace_lock(store.heph_dir):
        if store.is_undone(session_id):
            raise LookupError(f"session {session_id} is already undone")
        entries = store.entries(session_id)
        if not entries:
            raise LookupError(_nothing_to_undo(store, session_id))
        with _files_locked(store, entries):
            _check(store, entries, force, _links_taken_back(entries))
            _check_blobs(store, session_id, entries, lambda e: e.before)
            plans = [_undo_plan(store, session_id, e, force) for e in entries]
            tangled = {e.path: n for e, _, own, n in plans if own is None and n}
            if tangled and not force:
                raise Interleaved(tangled)
            # What each file holds now and what it gets, so redo can bring heph's back.
            undone = [
                {"path": e.path, "before": asdict(now), "after": asdict(target)}
                for e, (now, target), _, _ in plans
            ]
            signed = provenance.signed(f"undone {store.root}", {"files": undone})
            atomic_write(
                store.folder / session_id / "undone.json",
                json.dumps(signed, indent=1).encode(),
                temp_dir=store.temp_dir,
            )
            targets = {e.path: target for e, (_, target), _, _ in plans}
            result = _restore(store, session_id, entries, lambda e: targets[e.path])
            own = [e.path for e, _, own_only, _ in plans if own_only]
            return replace(result, own_lines_only=own, taken=tangled if force else {})


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
        with _files_locked(store, entries):
            _check(store, entries, force)
            _check_blobs(store, session_id, entries, lambda e: e.after)
            result = _restore(store, session_id, entries, lambda e: e.after)
        marker.unlink()
        return result


def _undo_plan(
    store: CheckpointStore, session_id: str, entry: Entry, force: bool
) -> tuple[Entry, tuple[FileState, FileState], bool | None, int]:
    """(entry, (the file's state now, the state undo gives it), whether only heph's own
    lines are taken back (None: they cannot be), the others' lines restoring whole would
    take away)."""
    now = next(
        (
            s
            for s in (entry.after, entry.previous, entry.before)
            if s and store.holds(entry.path, s)
        ),
        entry.after,
    )
    if not entry.interleaved() or now == entry.before:
        return entry, (now, entry.before), False, 0
    if any(step.before.link or step.after.link for step in entry.steps):
        return entry, (now, entry.before), None, 1  # a link's target has no lines to merge

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


@contextmanager
def _files_locked(store: CheckpointStore, entries: list[Entry]) -> Iterator[None]:
    """Every entry's file lock, taken in one order, so no write slips in between."""
    with ExitStack() as stack:
        for path in sorted(e.path for e in entries):
            stack.enter_context(file_lock(store.heph_dir, path))
        yield


def _links_taken_back(entries: list[Entry]) -> set[str]:
    """The links the session made (a command that swapped a folder for one): undo removes
    them first, so the files it puts back under their names go into real folders again."""
    return {e.path for e in entries if e.after.link and not e.before.exists}


def _check(
    store: CheckpointStore, entries: list[Entry], force: bool, cleared: Collection[str] = ()
) -> None:
    """Every file must still be where heph wrote it, and in a state heph knows: as heph
    left it, as its previous write left it (the last write was cut short before its
    rename), or as it was before. Under a link in `cleared` (removed first) anything goes."""
    moved = [
        e.path for e in entries if not _where_written(store, e) and not _under(e.path, cleared)
    ]
    if moved:
        raise NotInside(moved)
    changed = [
        e.path
        for e in entries
        if not force
        and not any(
            state is not None and store.holds(e.path, state)
            for state in (e.after, e.previous, e.before)
        )
    ]
    if changed:
        raise UndoConflict(changed)


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
        if not state.exists:
            continue
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


def _where_written(store: CheckpointStore, entry: Entry) -> bool:
    """Whether the entry's path still names a place inside the workspace with no link on
    the way, as every path heph writes does (the tools write a link's target; a link a
    command made or removed is itself the place, in a folder with no link on the way)."""
    rel = entry.path
    if any(state.link for state in (entry.before, entry.after)):
        folder = os.path.dirname(rel)
        try:
            return not folder or Workspace(store.root).resolve(folder) == store.root / folder
        except PathError:
            return False
    try:
        rel_now, real = Workspace(store.root).check(rel, allow_secrets=True, for_write=True)
    except PathError:
        return False
    return rel_now == rel and real == store.root / rel


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
    _remove_made_folders(store, [e for e in entries if e.path in deleted])
    return UndoResult(session_id, restored, deleted)


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
