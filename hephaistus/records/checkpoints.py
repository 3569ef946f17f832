"""Checkpoints: the content of every file before heph wrote it, so any run can be undone.

Layout under `.heph/checkpoints/<session id>/`: `blobs/<sha256>` holds file contents, and
`files.json` lists, in order, each file the session changed with its state before the first write
and after the last one (existence, mode, content hash). Each write is recorded before it happens,
under the workspace's lock, from the very bytes about to be written, so a crash between the
record and the write leaves the file in a state the record knows. Undo restores the
before-states, byte for byte; it refuses when a file is in neither of heph's states (someone
else edited it) unless forced, and it records what it replaced so redo can put heph's version
back. Git is never touched.

The manifest is signed (see provenance): a checkpoint that came with the workspace's files (a
repository's own `.heph/checkpoints/99999999-.../`) is not one, and is never listed or undone.
Every blob is checked against its hash before anything is restored.

A file a command made or changed over LARGEST_KEPT is not copied (see filestate): undo deletes
such a file a command made, but cannot bring back what one held before. The git repositories a
command made are listed too: undo removes them.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from hephaistus.records.filestate import FileState, Side, file_sha, holds
from hephaistus.textfile import atomic_write, new_file_mode, read_real
from hephaistus.workspace import provenance


@dataclass
class Step:
    """One write: the file as heph found it, and as heph left it."""

    before: FileState
    after: FileState


@dataclass
class Entry:
    """Everything a session did to one file: the file before heph's first write and after its
    last."""

    path: str  # workspace-relative
    before: FileState
    after: FileState
    # The state heph's previous write left, which the file keeps if the newest write was cut
    # short between its record and its rename (the run was killed).
    previous: FileState | None = None
    # Every write, in order. A write that found the file otherwise than the one before left
    # it shows that someone else wrote in between (records from before had none).
    steps: list[Step] = field(default_factory=list)
    # The folders the first write made for the file (it was new, and so were they), deepest
    # first: undo removes them again when it leaves them empty.
    made_folders: list[str] = field(default_factory=list)

    def as_record(self) -> dict[str, Any]:
        """The entry as the manifest holds it (asdict's deep copies cost seconds for a
        command's thousands of files)."""
        steps = [
            {"before": vars(s.before).copy(), "after": vars(s.after).copy()} for s in self.steps
        ]
        return {
            "path": self.path,
            "before": vars(self.before).copy(),
            "after": vars(self.after).copy(),
            "previous": None if self.previous is None else vars(self.previous).copy(),
            "steps": steps,
            "made_folders": list(self.made_folders),
        }

    def interleaved(self) -> bool:
        """Whether someone else wrote the file between two of heph's writes."""
        return bool(self.others_changes())

    def others_changes(self) -> list[tuple[FileState, FileState]]:
        """(as heph left the file, as its next write found it) wherever those differ."""
        return [
            (earlier.after, later.before)
            for earlier, later in pairwise(self.steps)
            if (later.before.exists, later.before.sha) != (earlier.after.exists, earlier.after.sha)
        ]


class UndoConflict(Exception):
    """Files changed since heph wrote them; undoing would lose someone's work."""

    def __init__(self, paths: list[str]) -> None:
        super().__init__(", ".join(paths))
        self.paths = paths


class NotInside(Exception):
    """Paths that no longer lead to a file inside the workspace: a folder on the way became a
    link, or the record was altered. heph writes nowhere else, with --force or without."""

    def __init__(self, paths: list[str]) -> None:
        super().__init__(
            f"{', '.join(paths)} no longer lead{'s' if len(paths) == 1 else ''} to a file inside "
            "the workspace (it leads through a link now, or to a folder); heph writes only there"
        )
        self.paths = paths


class Damaged(LookupError):
    """A checkpoint's stored content is missing or is not what its record says."""


class Interleaved(Exception):
    """Files someone else also wrote between heph's writes, whose lines of heph's cannot be
    told apart from theirs: undoing would take theirs away too (`taken`: lines per file)."""

    def __init__(self, taken: dict[str, int]) -> None:
        super().__init__(", ".join(taken))
        self.taken = taken


MANIFEST = "files.json"


class Checkpoints:
    """The checkpoints of one session (each chat turn is a session of its own)."""

    def __init__(self, root: Path, heph_dir: Path, session_id: str) -> None:
        self.root = root
        self.session_id = session_id
        self.folder = heph_dir / "checkpoints" / session_id
        self.temp_dir = heph_dir / "tmp"
        self._entries: dict[str, Entry] = {}
        self._repositories: list[str] = []  # the `.git`s commands made, workspace-relative
        self._deferred = False

    # -- recording (called before every write, under the workspace's lock) ------------------
    def record(self, rel: str, data: bytes | None, mode: int | None = None) -> None:
        """Note that `rel` is about to hold `data` (None: to be deleted), with `mode` (default:
        the file's own, or a new file's): its state before the session's first write is kept,
        and the state heph leaves it in is this one."""
        path = self.root / rel
        found = (
            self._store(read_real(path), stat.S_IMODE(path.stat().st_mode))
            if path.is_file()
            else FileState(False)
        )
        entry = self._entries.get(rel)
        if entry is None:
            entry = self._entries[rel] = Entry(
                rel, found, found, made_folders=_missing(rel, self.root)
            )
        if mode is None:
            mode = found.mode if found.exists and found.mode is not None else new_file_mode()
        entry.previous = entry.after
        entry.after = FileState(False) if data is None else self._store(data, mode)
        entry.steps.append(Step(found, entry.after))
        self._save()

    def record_change(self, rel: str, before: Side | None, after: Side | None) -> None:
        """Note a change someone else made for heph (a command): `rel` held `before`
        (content and mode; None: it did not exist) and now holds `after`. A content of None
        was too large to keep: only the hash of the file as it is now is kept of it."""
        found = self._side(rel, before, now=False)
        entry = self._entries.get(rel)
        if entry is None:
            entry = self._entries[rel] = Entry(rel, found, found)
        entry.previous, entry.after = entry.after, self._side(rel, after, now=True)
        entry.steps.append(Step(found, entry.after))
        self._save()

    def record_repositories(self, made: list[str]) -> None:
        """Note the git repositories (their `.git`, workspace-relative) a command made."""
        self._repositories += [rel for rel in made if rel not in self._repositories]
        self._save()

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Within the block, the manifest is saved once, at its end (signing it again after
        each of a command's 5,000 files made recording them quadratic)."""
        self._deferred = True
        try:
            yield
        finally:
            self._deferred = False
            if self._entries or self._repositories:
                self._save()

    def _side(self, rel: str, side: Side | None, *, now: bool) -> FileState:
        if side is None:
            return FileState(False)
        data, mode = side
        if data is not None:
            return self._store(data, mode)
        return FileState(True, mode, file_sha(self.root / rel) if now else None, kept=False)

    def _store(self, data: bytes, mode: int) -> FileState:
        sha = hashlib.sha256(data).hexdigest()
        blob = self.folder / "blobs" / sha
        if not blob.exists():  # the person's alone: a 0600 file's content stays theirs
            atomic_write(blob, data, temp_dir=self.temp_dir, mode=0o600)
        return FileState(True, mode, sha)

    def _save(self) -> None:
        if self._deferred:
            return
        manifest = [entry.as_record() for entry in self._entries.values()]
        body = {"session": self.session_id, "files": manifest, "repositories": self._repositories}
        record = provenance.signed(f"checkpoint {self.root}", body)
        data = json.dumps(record).encode()
        atomic_write(self.folder / MANIFEST, data, temp_dir=self.temp_dir)


def _missing(rel: str, root: Path) -> list[str]:
    """The folders on the way to `rel` that do not exist yet, deepest first."""
    missing = []
    folder = os.path.dirname(rel)
    while folder and not os.path.lexists(root / folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    return missing


class CheckpointStore:
    """All sessions' checkpoints in a workspace: what can be undone, and undoing it."""

    def __init__(self, root: Path, heph_dir: Path) -> None:
        self.root = root
        self.heph_dir = heph_dir
        self.folder = heph_dir / "checkpoints"
        self.temp_dir = heph_dir / "tmp"

    def sessions_with_changes(self) -> list[str]:
        """The sessions whose checkpoints heph made here, oldest first: their records hold a
        file or a repository."""
        records = ((name, self._record(name)) for name in self._folders())
        return [name for name, r in records if r and (r["files"] or r.get("repositories"))]

    def foreign(self) -> list[str]:
        """The checkpoint folders heph did not make on this machine (they came with the
        workspace's files): never listed or undone."""
        return [
            name
            for name in self._folders()
            if self.manifest(self.folder / name) and self._record(name) is None
        ]

    def _folders(self) -> list[str]:
        if not self.folder.is_dir() or self.folder.is_symlink():
            return []
        return sorted(p.name for p in self.folder.iterdir() if p.is_dir() and not p.is_symlink())

    def is_undone(self, session_id: str) -> bool:
        """Whether the session was undone (and not redone since), by heph itself here."""
        return self.undone_records(session_id) is not None

    def undone_records(self, session_id: str) -> list[dict[str, Any]] | None:
        """What undo wrote, when heph itself undid the session here (signed), else None."""
        try:
            record = json.loads(read_real(self.folder / session_id / "undone.json"))
        except (OSError, ValueError):
            return None
        if not provenance.is_ours(f"undone {self.root}", record):
            return None
        files = record.get("files")
        return files if isinstance(files, list) else None

    @property
    def _kind(self) -> str:
        return f"checkpoint {self.root}"  # this workspace's checkpoints, and no other's

    def blob(self, session_id: str, state: FileState) -> bytes:
        """The content a record names (empty for a file that did not exist)."""
        if not state.exists:
            return b""
        return read_real(self.folder / session_id / "blobs" / str(state.sha))

    def before_states(self, session_ids: list[str]) -> dict[str, bytes | None]:
        """Each file the sessions changed, with its content before the first of them (None:
        it did not exist)."""
        states: dict[str, bytes | None] = {}
        for session_id in session_ids:
            for entry in self.entries(session_id):
                if entry.path not in states:
                    if not entry.before.kept:
                        continue  # too large to have been kept: no earlier content to give
                    exists = entry.before.exists
                    states[entry.path] = self.blob(session_id, entry.before) if exists else None
        return states

    def contents_left(self, session_ids: list[str], rel: str) -> list[bytes]:
        """Every content heph's writes left `rel` in, over the sessions not undone, oldest first
        (what a commit of heph's between them may hold)."""
        found = []
        for session_id in session_ids:
            if self.is_undone(session_id):
                continue
            for entry in self.entries(session_id):
                if entry.path == rel:
                    found += [
                        self.blob(session_id, step.after)
                        for step in entry.steps
                        if step.after.exists and step.after.kept and not step.after.link
                    ]
        return found

    def left_states(self, session_ids: list[str]) -> dict[str, FileState | None]:
        """Each file the sessions changed, as the last of them not undone left it (None:
        every session that wrote it was undone, so nothing of heph's is in it now)."""
        states: dict[str, FileState | None] = {}
        for session_id in session_ids:
            undone = self.is_undone(session_id)
            for entry in self.entries(session_id):
                if not undone:
                    states[entry.path] = entry.after
                else:
                    states.setdefault(entry.path, None)
        return states

    def repositories(self, session_id: str) -> list[str]:
        """The git repositories (their `.git`) the session's commands made."""
        record = self._record(session_id)
        made = record.get("repositories", []) if record else []
        return [rel for rel in made if isinstance(rel, str)]

    def _record(self, session_id: str) -> dict[str, Any] | None:
        """The session's manifest, when heph made it (signed, for this workspace)."""
        manifest = self.manifest(self.folder / session_id)
        if manifest is None:
            return None
        try:
            record = json.loads(read_real(manifest))
        except (OSError, ValueError):
            return None
        if not provenance.is_ours(self._kind, record) or record.get("session") != session_id:
            return None
        return record if isinstance(record.get("files"), list) else None

    def entries(self, session_id: str) -> list[Entry]:
        """One entry per file the session changed; none when heph did not make the record."""
        record = self._record(session_id)
        if record is None:
            return []
        entries = []
        for raw in record["files"]:
            previous = raw.get("previous")
            steps = [
                Step(FileState(**step["before"]), FileState(**step["after"]))
                for step in raw.get("steps", [])
            ]
            entries.append(
                Entry(
                    raw["path"],
                    FileState(**raw["before"]),
                    FileState(**raw["after"]),
                    FileState(**previous) if previous else None,
                    steps,
                    [str(f) for f in raw.get("made_folders", []) if isinstance(f, str)],
                )
            )
        return entries

    @staticmethod
    def manifest(folder: Path) -> Path | None:
        """The session folder's manifest, when there is one (signed by heph or not)."""
        return folder / MANIFEST if (folder / MANIFEST).is_file() else None

    def holds(self, rel: str, state: FileState) -> bool:
        """Whether the file `rel` is in `state` now (see filestate.holds)."""
        return holds(self.root, rel, state)
