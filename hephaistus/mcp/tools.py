"""MCP servers' tools as heph's own: named `mcp__<server>__<tool>`, described under a header that
says their text is the server's, pinned, and called through the runtime like any tool.

The tool list comes from a cache keyed by the server entry's hash (`.heph/cache/`, sealed), so a
run starts no server and imports no `mcp` until a call needs one; a new or changed entry is
listed afresh. Each tool's definition (name, description, arguments) is pinned by hash the
first time heph lists it (in the user's state folder: a workspace's servers per workspace, the
person's once for all); a new or changed
definition is withheld until the person approves it (`heph mcp approve NAME`). `--yes` and auto
mode approve calls, never definitions. A call's effect is `external` (asked about in ask and
edits mode, denied in plan mode), or `read` for the tools the user config names read-only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hephaistus.mcp.pins import PERSONS, Pins, definition_diff
from hephaistus.settings.mcp_config import McpServerConfig, expanded_env, live
from hephaistus.values import Proposal, ToolCallRequest, ToolResult

PREFIX = "mcp__"
NAME_CHARS = 64
DESCRIPTION_CHARS = 400
MCP_PROMPT_CHARS = 12_000  # of the prompt all MCP tools' lines take (about 3,000 tokens)
MCP_TOOLS = 100  # MCP tools offered at most (OpenAI takes 128 in all)
INSTRUCTION_CHARS = 600  # of a server's instructions (what it says of itself at the start)
INSTRUCTIONS = "$instructions"  # what a server says of itself, pinned as a definition is


@dataclass(frozen=True)
class Pending:
    """A server's definitions as it lists them now, and which of them are new or changed since
    approved (`tool (new)`, `tool (changed)`), each with the change itself where the approved
    one was kept (a diff, its text spelled out): what `heph mcp approve` shows, then pins."""

    server: str
    definitions: tuple[dict[str, Any], ...]
    changes: tuple[tuple[str, str], ...]  # ("add (changed)", the diff, or "")


class McpTools:
    """The MCP servers of a workspace's config, and what they offer."""

    def __init__(
        self,
        servers: tuple[McpServerConfig, ...],
        root: Path,
        heph_dir: Path,
        command_line: Callable[..., list[str]] | None = None,
        environ: dict[str, str] | None = None,
        policy: Any = None,
        sink: Any = None,
        lend: Any = None,
    ) -> None:
        self.servers = {s.name: s for s in servers if s.enabled}
        self.policy = policy  # its asker answers a server's questions (none: declined)
        self.sink = sink  # where a call's progress is shown
        self.lend = lend  # heph's model, for the servers the person lends it to (sampling)
        self.root = root
        self.heph_dir = heph_dir
        self.environ = dict(os.environ if environ is None else environ)
        self.command_line = command_line
        self._hub: Any = None
        self._placement: Any = None
        self._made = threading.Lock()
        self.withheld = False  # the last offer withheld some

    @property
    def placement(self) -> Any:
        """Where each server runs, and in which folder (mcp_placement.Placement)."""
        if self._placement is None:
            from hephaistus.mcp.placement import Placement
            from hephaistus.workspace.trust import vouched

            contain = not vouched(self.root)  # the person's servers too, until they trust it
            self._placement = Placement(
                self.root, self.environ, self.command_line, contain_persons=contain
            )
        return self._placement

    @property
    def hub(self) -> Any:
        """The running servers (made on first use: imports nothing before)."""
        with self._made:  # one hub, however many threads start servers at once (warm)
            if self._hub is None:
                from hephaistus.mcp.client import McpHub
                from hephaistus.settings.userdirs import workspace_folder

                # The servers' logs are appended to: in heph's own folder for the workspace,
                # never in .heph/, where a clone can commit a link in their place.
                self._hub = McpHub(workspace_folder(self.root, "logs"), self.placement)
        return self._hub

    def warm(self) -> None:
        """Start every server in the background (the chat, as it opens): the first call finds
        it running. A server that fails says so at its first use, as before."""
        import threading

        def start(server: McpServerConfig) -> None:
            try:
                self.hub.list_tools(self.live(server), self.env(server))
            except Exception:
                pass  # said when a call needs it

        for server in self.servers.values():
            threading.Thread(target=start, args=(server,), daemon=True).start()

    def running(self) -> list[str]:
        """The servers started in this run or chat (none when nothing needed one)."""
        return self._hub.running() if self._hub is not None else []

    def close(self) -> None:
        """Stop every server that was started."""
        if self._hub is not None:
            self._hub.close()

    def tools_changed(self) -> bool:
        """Whether a server's tools changed, or some were withheld, since the last offer."""
        return self.withheld or (self._hub is not None and bool(self._hub.tools_changed()))

    def definitions(self, server: McpServerConfig, *, fresh: bool = False) -> list[dict[str, Any]]:
        """The server's tool definitions: from the cache, or listed (starting the server)."""
        cache = self.heph_dir / "cache" / f"mcp-{server.name}.json"
        if not fresh:
            cached = _read_cache(cache, server.digest)
            if cached is not None:
                return cached
        listed = self._listed(server)
        _write_cache(cache, server.digest, listed)
        return listed

    def _listed(self, server: McpServerConfig) -> list[dict[str, Any]]:
        """The definitions the server lists now (starting it), what it says of itself first:
        cached, pinned and withheld when changed as they are."""
        tools = self.hub.list_tools(self.live(server), self.env(server))
        said = self.hub.instructions(server)
        told = [{"name": INSTRUCTIONS, "description": said, "schema": {}}] if said else []
        return [*told, *(d.to_dict() for d in tools)]

    def with_mentioned(self, task: str, say: Callable[[str], None]) -> str:
        """`task` with the resources it mentions (`@server:uri`) read below it (resources)."""
        from hephaistus.mcp.resources import with_mentioned

        return with_mentioned(self, task, say)

    def pending(self, name: str) -> Pending:
        """The server's definitions as it lists them now (starting it), and what of them is
        new or changed since approved."""
        server = self.servers.get(name)
        if server is None:
            raise KeyError(name)
        pins = self._pins(server)
        pinned = pins.of(name)
        definitions = tuple(self.definitions(server, fresh=True))
        changes = []
        for definition in definitions:
            tool = definition["name"]
            if pinned.get(tool) != definition_digest(definition):
                before = pins.definition(name, tool)
                diff = definition_diff(before, definition) if before is not None else ""
                changes.append((f"{tool} ({'new' if tool not in pinned else 'changed'})", diff))
        return Pending(name, definitions, tuple(changes))

    def approve(self, pending: Pending) -> None:
        """Pin the definitions the person was shown (never ones listed after they looked)."""
        pins = self._pins(self.servers[pending.server])
        for definition in pending.definitions:
            pins.pin(pending.server, definition["name"], definition_digest(definition), definition)
        pins.save()

    def _changed_since_pinned(self, server: McpServerConfig, tool: str) -> str:
        """Why `tool` is withheld now that the running server was asked (its definition is not
        the one pinned: the cache was older than the server), or ""; the cache is renewed, so
        the next run withholds it before offering."""
        listed = self._listed(server)
        _write_cache(self.heph_dir / "cache" / f"mcp-{server.name}.json", server.digest, listed)
        now = next((d for d in listed if d["name"] == tool), None)
        pinned = self._pins(server).of(server.name).get(tool)
        if now is not None and definition_digest(now) == pinned:
            return ""
        what = "is gone from the server" if now is None else "changed since it was approved"
        return (
            f"the MCP tool {tool} of {server.name} was not called: its definition {what} "
            f"(the user can approve it with heph mcp approve {server.name})"
        )

    def _pins(self, server: McpServerConfig) -> Pins:
        """Where `server`'s definitions are pinned: a workspace's for that workspace, the
        person's (their config's, their editor's) once for all workspaces, so a changed
        definition is caught in a workspace that never saw the old one."""
        return Pins(self.root if server.from_workspace else PERSONS)

    def live(self, server: McpServerConfig) -> McpServerConfig:
        """The entry with its variables expanded, as its server starts (never cached: the
        cache is keyed by the entry as written, without the values of its variables)."""
        return live(server, self.environ)

    def env(self, server: McpServerConfig) -> dict[str, str]:
        """The environment `server` starts with: its entry's `env`, a few of heph's own
        (never a secret), and in the sandbox cache folders it can write."""
        from hephaistus.mcp.client import PASSED_ENV

        passed = {k: self.environ[k] for k in PASSED_ENV if k in self.environ}
        if self.placement.contained(server):  # home is read-only there: caches go to its own
            from hephaistus.mcp.placement import servers_cache
            from hephaistus.runtime.sandbox import CACHE_VARIABLES, cache_folder

            # A workspace's server shares the commands' cache; the person's has one of its own.
            cache = cache_folder(self.root) if server.from_workspace else servers_cache(self.root)
            passed.update({name: str(cache / sub) for name, sub in CACHE_VARIABLES.items()})
            if self.placement.offline(server):  # no waiting on a network that is not there
                from hephaistus.mcp.placement import OFFLINE

                passed.update(OFFLINE)
        return {**passed, **expanded_env(server, self.environ)}

    def _during(self, server: McpServerConfig, tool: str) -> Any:
        """What the waiting thread does for `server` during a call of `tool` (mcp.waiting):
        the person answers its questions, its progress is shown, heph's model is lent to it
        where the person's entry says `sampling = true`."""
        from hephaistus.mcp.waiting import During

        ask = getattr(getattr(self.policy, "asker", None), "elicit", None)
        sink = self.sink
        show = (lambda line: sink.notice(f"{server.name} {tool}: {line}")) if sink else None
        return During(ask, show, self.lend if server.sampling else None)

    def _tool(self, server: McpServerConfig, definition: dict[str, Any]) -> Any:
        """The Tool of a definition, or why it is left out."""
        from hephaistus.tools import Tool

        name = tool_name(server.name, definition["name"])
        effect = "read" if definition["name"] in server.read_only_tools else "external"
        try:
            return Tool.from_schema(
                name,
                described(definition.get("description") or ""),
                definition.get("schema") or {"type": "object"},
                self._caller(server, definition["name"], effect, definition.get("schema") or {}),
                effect=effect,
            )
        except TypeError as error:  # arguments heph cannot describe: the tool is not offered
            return f"is left out: {error}"

    def _caller(
        self, server: McpServerConfig, tool: str, effect: str, declared: dict[str, Any]
    ) -> Callable[..., Proposal | ToolResult]:
        def call(ctx: Any, **args: Any) -> Proposal | ToolResult:
            from hephaistus.tools.schemas import as_declared, inlined

            sent = as_declared(args, inlined(declared, prose=False))  # strict form's nulls out
            refused = self.placement.refused(server, sent)
            if refused:
                return ToolResult(False, refused)

            def carry_out() -> ToolResult:
                from hephaistus.mcp.client import McpError

                try:
                    changed = self._changed_since_pinned(server, tool)
                    if changed:
                        return ToolResult(False, changed)
                    live, env = self.live(server), self.env(server)
                    result = self.hub.call(live, env, tool, sent, self._during(server, tool))
                except McpError as error:
                    return ToolResult(False, str(error))
                if result.is_error:
                    return ToolResult(False, f"the tool reported an error: {result.text}")
                return ToolResult(True, result.text or "(no output)")

            request = ToolCallRequest(server.name, tool, json.dumps(sent, ensure_ascii=False))
            return Proposal(
                effect,
                request,
                carry_out,
                f"the MCP tool {tool} of {server.name} was not called",
                name=tool_name(server.name, tool),
            )

        return call


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, in the letters a model's tool name may have, at most 64."""
    raw = f"{PREFIX}{server}__{tool}"
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", raw)
    if len(clean) <= NAME_CHARS:
        return clean
    digest = hashlib.sha256(raw.encode()).hexdigest()[:8]
    return f"{clean[: NAME_CHARS - 9]}_{digest}"


def described(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """A server's text as the model reads it: one line, control characters spelled out,
    clipped to `limit` characters."""
    from hephaistus.escape import one_line

    return one_line(text, limit)


def definition_digest(definition: dict[str, Any]) -> str:
    """The hash a definition is pinned by: its name, description and arguments."""
    data = json.dumps(definition, sort_keys=True, ensure_ascii=False).encode("utf-8", "replace")
    return hashlib.sha256(data).hexdigest()


def _read_cache(cache: Path, digest: str) -> list[dict[str, Any]] | None:
    """The tools listed for the entry `digest`, as heph cached them."""
    from hephaistus.workspace.provenance import read_cache

    record = read_cache(cache, "mcp tools")
    if not isinstance(record, dict) or record.get("entry") != digest:
        return None
    tools = record.get("tools")
    return tools if isinstance(tools, list) else None


def _write_cache(cache: Path, digest: str, tools: list[dict[str, Any]]) -> None:
    from hephaistus.workspace.provenance import write_cache

    write_cache(cache, "mcp tools", {"entry": digest, "tools": tools})
