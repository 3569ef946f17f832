"""The MCP servers an editor names in `session/new` (`mcpServers`): the person's, as their user
config's are (never `on_host`: an editor may take them from a project's own settings, so they
run where the person's servers run by default, in the sandbox of an untrusted workspace).
Stdio and HTTP servers are taken; SSE, which heph does not speak, is named and left out."""

from __future__ import annotations

import re
from typing import Any

from hephaistus.errors import ConfigError
from hephaistus.settings.mcp_config import McpServerConfig, mcp_servers

WHERE = "the editor's mcpServers"


def editor_servers(entries: Any) -> tuple[tuple[McpServerConfig, ...], list[str]]:
    """The servers `entries` names, and what to tell the person of those left out."""
    table: dict[str, dict[str, Any]] = {}
    said: list[str] = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        name = _name(entry.get("name"))
        kind = entry.get("type") or ("stdio" if "command" in entry else "")
        if kind == "stdio" and isinstance(entry.get("command"), str):
            table[name] = {
                "command": entry["command"],
                "args": [a for a in entry.get("args") or [] if isinstance(a, str)],
                "env": _pairs(entry.get("env")),
            }
        elif kind == "http" and isinstance(entry.get("url"), str):
            table[name] = {"url": entry["url"], "http_headers": _pairs(entry.get("headers"))}
        else:
            said.append(
                f"heph: the editor's MCP server {name} was left out: heph takes stdio "
                f"and HTTP servers, not {kind or 'this kind'}"
            )
    try:
        return tuple(mcp_servers(table, WHERE, in_workspace=False).values()), said
    except ConfigError as error:
        return (), [*said, f"heph: the editor's MCP servers were left out: {error.message}"]


def _name(value: Any) -> str:
    """A server's name as heph's config spells them: letters, digits, - and _, at most 32."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", value if isinstance(value, str) else "")[:32]
    return name.strip("_") or "editor"


def _pairs(value: Any) -> dict[str, str]:
    """ACP's [{name, value}] as a table."""
    pairs = value if isinstance(value, list) else []
    return {
        p["name"]: p["value"]
        for p in pairs
        if isinstance(p, dict)
        and isinstance(p.get("name"), str)
        and isinstance(p.get("value"), str)
    }
