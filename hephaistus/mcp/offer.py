"""What the MCP servers offer a run: each enabled server's tools that its entry lets through and
whose definition is pinned as it is now (a new or changed one withheld until approved), within
the prompt's share for them, with the servers' own words above their first tool, and the
resources' read tool; and those tools joining a run's registry, what was left out said.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from hephaistus.mcp.pins import Pins
from hephaistus.mcp.tools import (
    INSTRUCTION_CHARS,
    INSTRUCTIONS,
    MCP_PROMPT_CHARS,
    MCP_TOOLS,
    McpTools,
    definition_digest,
    described,
)


@dataclass
class Offer:
    """What the servers give a run: their tools, the definitions withheld (new or changed
    since pinned), and the servers that could not be listed (one line each)."""

    tools: list[Any] = field(default_factory=list)  # hephaistus.tools.Tool
    withheld: list[str] = field(default_factory=list)  # "server: tool (changed)"
    failed: list[str] = field(default_factory=list)


def offered(mcp: McpTools, *, fresh: bool = False) -> Offer:
    """Every enabled server's tools that the entry lets through and whose definition is
    pinned as it is now; listing a server only when its cache is missing or stale (or
    each of them, `fresh`: starting it to ask)."""
    offer = Offer()
    every: dict[bool, Pins] = {}  # the workspace's pins and the person's, read once
    named: dict[str, str] = {}  # a tool's name for the model -> whose tool it is
    spent, left_out = 0, dict[str, int]()  # the prompt's characters they take; beyond
    changed = mcp._hub.tools_changed() if mcp._hub is not None else []
    for server in mcp.servers.values():
        try:
            definitions = mcp.definitions(server, fresh=fresh or server.name in changed)
        except Exception as error:  # one line; the other servers' tools still work
            offer.failed.append(str(error))
            continue
        if server.from_workspace not in every:
            every[server.from_workspace] = mcp._pins(server)
        pins = every[server.from_workspace]
        pinned = pins.of(server.name)
        first = not pinned
        instructions = ""
        for definition in definitions:
            told = definition["name"] == INSTRUCTIONS  # what it says of itself
            if not told and not server.offers(definition["name"]):
                continue
            digest = definition_digest(definition)
            if first:
                pins.pin(server.name, definition["name"], digest, definition)
            elif pinned.get(definition["name"]) != digest:
                what = "new" if definition["name"] not in pinned else "changed"
                offer.withheld.append(f"{server.name}: {definition['name']} ({what})")
                continue
            if told:
                instructions = definition.get("description") or ""
                continue
            tool = mcp._tool(server, definition)
            if isinstance(tool, str):  # one line: the rest of its tools still work
                offer.failed.append(f"MCP tool {server.name}: {definition['name']} {tool}")
                continue
            size = len(tool.describe())
            if spent + size > MCP_PROMPT_CHARS or len(offer.tools) >= MCP_TOOLS:
                left_out[server.name] = left_out.get(server.name, 0) + 1
                continue
            spent += size
            if instructions:  # said above its first tool, as its text, clipped
                said = described(instructions, INSTRUCTION_CHARS)
                tool = replace(tool, preface=f"- (MCP server {server.name} says: {said})")
                instructions = ""
            whose = f"{server.name}: {definition['name']}"
            if tool.name in named:  # `a` + `b__c` and `a__b` + `c` are one name
                taken = named[tool.name]
                offer.failed.append(f"MCP tool {whose} is left out: {tool.name} is {taken}'s")
                continue
            named[tool.name] = whose
            offer.tools.append(tool)
    for pins in every.values():
        pins.save()
    mcp.withheld = bool(offer.withheld)
    if mcp.servers:  # their resources: one read tool for all of them
        from hephaistus.mcp.resources import resource_tool

        offer.tools.append(resource_tool(mcp))
    for name, count in left_out.items():
        offer.failed.append(
            f"{count} tools of MCP server {name} are left out: the MCP tools offered take "
            f"at most {MCP_PROMPT_CHARS:,} characters of the prompt and {MCP_TOOLS} tools "
            "(enabled_tools in its entry chooses which)"
        )
    return offer


def offer_to(mcp: McpTools, registry: Any, say: Callable[[str], None]) -> None:
    """The servers' tools join `registry` (listed from the cache, or by starting a server);
    what could not be listed, or changed since it was approved, is said in one line each."""
    offer = offered(mcp)
    for tool in offer.tools:
        if registry.get(tool.name) is None:
            registry.add(tool)
    for failure in offer.failed:
        say(failure)
    if offer.withheld:
        servers = sorted({line.split(":", 1)[0] for line in offer.withheld})
        say(
            f"MCP tools withheld until you approve them (heph mcp approve "
            f"{' / '.join(servers)}, or /mcp approve NAME in the chat): "
            f"{', '.join(offer.withheld)}"
        )
