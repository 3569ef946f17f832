"""Checkpoints: the content of every file before heph wrote it, so any run can be undone.

Layout under `.heph/checkpoints/<session id>/`: `blobs/<sha256>` holds file contents, and
`files.json` lists, in order, each file the session changed with its state before the first write
and after the last one (existence, mode, content hash). Each write is recorded before it happens,
under the file's lock, from the very bytes about to be written, so a crash between the record and
the write leaves the file in a state the record knows. Undo restores the before-states, byte for
byte; it refuses when a file is in neither of heph's states (someone else edited it) unless
forced, and it records what it replaced so redo can put heph's version back. Git is never touched.

The manifest is signed (see provenance): a checkpoint that came with the workspace's files (a
repository's own `.heph/checkpoints/99999999-.../`) is not one, and is never listed or undone.
Every blob is checked against its hash before anything is restored.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from hephaistus import provenance
from hephaistus.textfile import atomic_write, new_file_mode, read_real


@dataclass
class FileState:
    """A file as heph saw it: whether it existed, its mode, and the sha256 of its content (the
    name of the blob that holds it)."""

    exists: bool
    mode: int | None = None  # permission bits; with S_IFLNK, a link (its blob: the target)
    sha: str | None = None

    @property
    def link(self) -> bool:
        """Whether it is a symbolic link (a command made or removed one)."""
        return self.mode is not None and stat.S_ISLNK(self.mode)


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

    # -- recording (called before every write, under the file's lock) -----------------------
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

    def record_change(
        self, rel: str, before: tuple[bytes, int] | None, after: tuple[bytes, int] | None
    ) -> None:
        """Note a change someone else made for heph (a command): `rel` held `before`
        (content and mode; None: it did not exist) and now holds `after`."""
        found = self._store(*before) if before else FileState(False)
        entry = self._entries.get(rel)
        if entry is None:
            entry = self._entries[rel] = Entry(rel, found, found)
        now = self._store(*after) if after else FileState(False)
        entry.previous, entry.after = entry.after, now
        entry.steps.append(Step(found, entry.after))
        self._save()

    def _store(self, data: bytes, mode: int) -> FileState:
        sha = hashlib.sha256(data).hexdigest()
        blob = self.folder / "blobs" / sha
        if not blob.exists():
            atomic_write(blob, data, temp_dir=self.temp_dir)
        return FileState(True, mode, sha)

    def _save(self) -> None:
        manifest = [asdict(entry) for entry in self._entries.values()]
        body = {"session": self.session_id, "files": manifest}
        record = provenance.signed(f"checkpoint {self.root}", body)
        data = json.dumps(record, indent=1).encode()
        atomic_write(self.folder / MANIFEST, data, temp_dir=self.temp_dir)


def _missing(rel: str, root: Path) -> list[str]:
    """The folders on the way to `rel` that do not exist yet, deepest first."""
    missing = []
    folder = os.path.dirname(rel)
    while folder and not os.path.lexists(root / folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    return missing


@dataclass(frozen=True)
class UndoResult:
    """What an undo (or redo) did, file by file."""

    session_id: str
    restored: list[str]  # files put back as they were
    deleted: list[str]  # files heph had created
    # Files another run also wrote between heph's writes: only heph's own lines were taken back.
    own_lines_only: list[str] = field(default_factory=list)
    taken: dict[str, int] = field(default_factory=dict)  # --force: others' lines taken away


class CheckpointStore:
    """All sessions' checkpoints in a workspace: what can be undone, and undoing it."""

    def __init__(self, root: Path, heph_dir: Path) -> None:
        self.root = root
        self.heph_dir = heph_dir
        self.folder = heph_dir / "checkpoints"
        self.temp_dir = heph_dir / "tmp"

    def sessions_with_changes(self) -> list[str]:
        """The sessions whose checkpoints heph made here, oldest first."""
        return [name for name in self._folders() if self.entries(name)]

    def foreign(self) -> list[str]:
        """The checkpoint folders heph did not make on this machine (they came with the
        workspace's files): never listed or undone."""
        return [
            name
            for name in self._folders()
            if self.manifest(self.folder / name) and not self.entries(name)
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

    def undo(self, session_id: str, *, force: bool = False) -> UndoResult:
        """Take back every change the session made (see undo.undo)."""
        from hephaistus import undo

        return undo.undo(self, session_id, force=force)

    def redo(self, session_id: str, *, force: bool = False) -> UndoResult:
        """Bring back what undo replaced (see undo.redo)."""
        from hephaistus import undo

        return undo.redo(self, session_id, force=force)

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
                        if step.after.exists and not step.after.link
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

    def entries(self, session_id: str) -> list[Entry]:
        """One entry per file the session changed; none when heph did not make the record."""
        manifest = self.manifest(self.folder / session_id)
        if manifest is None:
            return []
        try:
            record = json.loads(read_real(manifest))
        except (OSError, ValueError):
            return []
        if not provenance.is_ours(self._kind, record) or record.get("session") != session_id:
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
        """Whether the file `rel` is in `state` now."""
        path = self.root / rel
        if not state.exists:
            return not os.path.lexists(path)
        if state.link:
            if not path.is_symlink():
                return False
            return hashlib.sha256(os.fsencode(os.readlink(path))).hexdigest() == state.sha
        if path.is_symlink() or not path.is_file():
            return False
        return hashlib.sha256(read_real(path)).hexdigest() == state.sha
