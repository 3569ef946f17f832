"""The MCP tool definitions the person approved, pinned by hash in their state folder: a
workspace's servers per workspace, the person's own (their config's, their editor's) once for
every workspace, so a definition that changed is caught where the old one was never seen. Each
definition is kept whole too, so a later change can be shown as a diff."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PINS_FILE = "mcp-pins.json"
PERSONS = Path("(your servers)")  # the key of the person's own servers' pins, in every workspace
DEFINITIONS = "$definitions"  # no server is called so: a name is letters, digits, - and _


class Pins:
    """The definitions pinned for a workspace (or for the person's servers: PERSONS):
    {server: {tool: digest}}."""

    def __init__(self, root: Path) -> None:
        from hephaistus.settings.userstate import WorkspaceRecords

        self.records = WorkspaceRecords(PINS_FILE)
        self.root = root
        self.pins = self.records.get(root)
        self.changed = False

    def of(self, server: str) -> dict[str, str]:
        """The digests pinned for `server`'s tools, by tool ({}: none yet)."""
        found = self.pins.get(server)
        return dict(found) if isinstance(found, dict) else {}

    def pin(
        self, server: str, tool: str, digest: str, definition: dict[str, Any] | None = None
    ) -> None:
        """Pin `tool` of `server` at `digest`, keeping its `definition` whole where given."""
        current = self.pins.setdefault(server, {})
        if current.get(tool) != digest:
            current[tool] = digest
            self.changed = True
        if definition is not None:  # kept whole, so a later change can be shown
            kept = self.pins.setdefault(DEFINITIONS, {}).setdefault(server, {})
            if kept.get(tool) != definition:
                kept[tool] = definition
                self.changed = True

    def definition(self, server: str, tool: str) -> dict[str, Any] | None:
        """The definition as it was pinned, when it was kept."""
        found = (self.pins.get(DEFINITIONS) or {}).get(server, {}).get(tool)
        return found if isinstance(found, dict) else None

    def save(self) -> None:
        """Write the pins back, if any changed."""
        if self.changed:
            self.records.put(self.root, self.pins)
            self.changed = False


def definition_diff(before: dict[str, Any], after: dict[str, Any]) -> str:
    """What changed in a definition since it was approved, as a unified diff (escaped)."""
    import difflib
    import json

    from hephaistus.escape import visible

    def lines(definition: dict[str, Any]) -> list[str]:
        text = json.dumps(definition, indent=1, sort_keys=True, ensure_ascii=False)
        return [visible(line) for line in text.splitlines()]

    diff = difflib.unified_diff(lines(before), lines(after), "approved", "now", n=1, lineterm="")
    return "\n".join(diff)
