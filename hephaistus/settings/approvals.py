"""What the person approved for good, per workspace: kept in the user's state folder, never in
the workspace (whose own files approve nothing). The runtime's policy reads them."""

from __future__ import annotations

from pathlib import Path

from hephaistus.settings.permissions import approval_key
from hephaistus.settings.userstate import WorkspaceRecords


class SavedApprovals:
    """Approvals the person made permanent for a workspace, per effect and name ("write";
    "command:test" approves that command only). Kept in the user's state folder, keyed by the
    workspace's real path: a workspace's own files never approve anything."""

    def __init__(self, root: Path, records: WorkspaceRecords | None = None) -> None:
        self.root = root
        self.records = records or WorkspaceRecords(RECORDS)
        allowed = self.records.get(root).get("allowed", [])
        self.allowed = (
            {a for a in allowed if isinstance(a, str)} if isinstance(allowed, list) else set()
        )

    @property
    def path(self) -> Path:
        return self.records.path

    @property
    def writes(self) -> bool:
        return self.allows("write")

    def allows(self, effect: str, name: str = "") -> bool:
        """Whether `effect` (with `name`, for a command) was approved for good here."""
        return approval_key(effect, name) in self.allowed

    def allow(self, effect: str, name: str = "") -> None:
        """Approve `effect` (with `name`, for a command) for good, and save it."""
        self.allowed.add(approval_key(effect, name))
        self.records.put(self.root, {"allowed": sorted(self.allowed)})

    def allow_writes(self) -> None:
        """Approve every write in this workspace for good."""
        self.allow("write")

    def clear(self) -> None:
        """Forget everything approved for good in this workspace."""
        self.allowed = set()
        self.records.put(self.root, None)


RECORDS = "approvals.json"
LEGACY_FILE = "approvals.json"  # under .heph/: what earlier versions kept, never read now
