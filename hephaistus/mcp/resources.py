"""`mcp_read_resource`: the resources MCP servers offer (files, records, pages), read as a read
tool: a server's list of them, or one of them by its URI. What a server with the network is
sent is checked as a call's arguments are (mcp/paths.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hephaistus.values import ToolResult

if TYPE_CHECKING:
    from hephaistus.tools import Tool

NAME = "mcp_read_resource"


def resource_tool(mcp: Any) -> Tool:
    """The read tool over the resources of `mcp`'s servers (an McpTools)."""
    from hephaistus.tools import Tool

    def mcp_read_resource(ctx: Any, server: str, uri: str = "") -> ToolResult:
        """Read a resource an MCP server offers, or list them (no uri).

        Args:
            ctx: the run's context (given by heph, not by the model)
            server: the MCP server's name (as in mcp__<server>__<tool>)
            uri: the resource's URI, as the server's list gives it ("" lists them)
        """
        return read(mcp, server, uri)

    return Tool.from_function(mcp_read_resource, effect="read")


def read(mcp: Any, name: str, uri: str) -> ToolResult:
    """What the model is told of server `name`'s resource at `uri` (or of its resources)."""
    from hephaistus.mcp.client import McpError

    server = mcp.servers.get(name)
    if server is None:
        known = ", ".join(sorted(mcp.servers)) or "none"
        return ToolResult(False, f"{NAME}: no MCP server {name!r} (the servers: {known})")
    refused = (
        mcp.placement.refused(server, {"uri": uri}) if uri else ""
    )  # as a call's arguments are
    if refused:
        return ToolResult(False, refused)
    try:
        text = mcp.hub.resources(mcp.live(server), mcp.env(server), uri)
    except McpError as error:
        return ToolResult(False, str(error))
    return ToolResult(True, text or "(empty)")
