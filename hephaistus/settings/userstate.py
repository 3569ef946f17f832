"""What heph keeps about the person's workspaces outside them, in the user's state folder
(`~/.local/state/hephaistus/` on Linux; see userdirs): whether each workspace is trusted, and
the approvals saved for it. Never in a workspace, where a repository could plant its own.

Each kind is one JSON file, an object keyed by the workspace's real path, changed under a lock
and replaced atomically, so two heph processes never lose each other's records. Where the
repository commits a `.heph/` of its own, heph's records of the workspace live here too (see
Workspace.heph_dir), and the links that `.heph/` holds are named once a run (planted_links).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


class WorkspaceRecords:
    """One kind of record (trust, approvals), per workspace."""

    def __init__(self, name: str, folder: Path | None = None) -> None:
        if folder is None:
            from hephaistus.settings.userdirs import state_dir

            folder = state_dir()
        self.path = folder / name

    def get(self, root: Path | str) -> dict[str, Any]:
        """The record of the workspace at `root` ({} when there is none)."""
        record = self._all().get(str(root))
        return record if isinstance(record, dict) else {}

    def put(self, root: Path | str, record: dict[str, Any] | None) -> None:
        """Replace the workspace's record (None removes it)."""
        from hephaistus.locks import locked
        from hephaistus.textfile import atomic_write

        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with locked(self.path.with_name(self.path.name + ".lock"), str(self.path)):
            records = self._all()
            if record is None:
                records.pop(str(root), None)
            else:
                records[str(root)] = record
            data = json.dumps(records, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
            atomic_write(self.path, data.encode("utf-8", "surrogateescape"), mode=0o600)

    def _all(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8", errors="surrogateescape"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}


def planted_links(root: Path, records: Path) -> str | None:
    """One line naming the links in the workspace's `.heph/` (or `.heph` itself, a link) when
    heph keeps its `records` elsewhere because the repository commits that folder: heph makes no
    link there, so each came with the workspace's files, and none is followed. None when there
    is none, or heph's records are in the workspace (where a link stops heph before it writes:
    see Workspace.check_heph_dir)."""
    folder = root / ".heph"
    if records.is_relative_to(root):
        return None
    if os.path.islink(folder):
        links = [folder.name]
    else:
        try:
            with os.scandir(folder) as entries:
                links = sorted(f"{folder.name}/{e.name}" for e in entries if e.is_symlink())
        except OSError:
            return None
    if not links:
        return None
    return (
        f"ignoring {', '.join(links)}: links heph did not make (they came with the workspace's "
        f"files); heph keeps its records of this workspace in {records}"
    )
