"""The MCP client: the servers of a run, each started on first use, spoken to through the official
`mcp` package (the `mcp` extra, imported only here, only when a server starts).

The package is async; heph is not. One event loop runs in a thread of its own, and every call
is handed to it and waited for with a timeout, so a server that hangs, dies or fails to start is
an error the caller turns into one line, never a hang. Each server's connection is held open by
one task on that loop (the package's contexts must be left by the task that entered them) until
`close`, which ends every session and leaves no process behind. A server's stderr goes to its
log, in heph's own folder for the workspace (userdirs.workspace_folder: `heph mcp` names it).

Where a server's process runs: a workspace's server always in the sandbox; the person's own in
the sandbox too (with the network: it is their server) unless they trusted the workspace
themselves. Its command finds the workspace's code first (`python -m NAME` a package there,
`npx` a committed `node_modules/`), so in a clone it would run the clone's code as the person.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hephaistus.mcp_config import McpServerConfig
from hephaistus.mcp_placement import workspace_code

CLOSE_SECONDS = 10.0
# What a server gets of heph's environment besides its entry's `env` (never the API key).
PASSED_ENV = ("PATH", "HOME", "LANG", "TERM", "USER", "SHELL")


class McpError(Exception):
    """A server that could not start, answer or finish a call; the message is one line."""


@dataclass(frozen=True)
class ToolDefinition:
    """A tool as a server describes it."""

    name: str
    description: str
    schema: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The definition as the cache keeps it, and as its pin's hash is taken."""
        return {"name": self.name, "description": self.description, "schema": self.schema}


@dataclass(frozen=True)
class CallResult:
    """What a call gave back: its text (content joined), and whether the tool said it failed."""

    text: str
    is_error: bool


class McpHub:
    """The MCP servers of one run or chat."""

    def __init__(
        self,
        log_dir: Path,
        command_line: Callable[..., list[str]] | None = None,
        cwd: Path | None = None,
        *,
        contain_persons: bool = True,
    ) -> None:
        self.log_dir = log_dir
        self.cwd = cwd  # where a server runs unless its entry says: the workspace
        # How a sandboxed server's command line is made (Contained.command_line).
        self.command_line = command_line
        # Whether the person's own servers run in the sandbox too (an untrusted workspace).
        self.contain_persons = contain_persons
        self._connections: dict[str, _Connection] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def list_tools(self, server: McpServerConfig, env: dict[str, str]) -> list[ToolDefinition]:
        """The server's tools, starting it if it is not running (listed once per start)."""
        connection = self._connection(server, env)
        if connection.listed is None:
            work = connection.list_tools()
            connection.listed = self._wait(
                work, server.startup_timeout_sec, server, "list", connection
            )
        return connection.listed

    def call(
        self, server: McpServerConfig, env: dict[str, str], tool: str, args: dict[str, Any]
    ) -> CallResult:
        """Call `tool` of `server` with `args`; McpError when it cannot be done in time. A
        server that broke off is started again at the next call."""
        connection = self._connection(server, env)
        work = connection.call(tool, args)
        return self._wait(work, server.tool_timeout_sec, server, tool, connection)

    def running(self) -> list[str]:
        """The servers started so far."""
        return [name for name, c in self._connections.items() if c.session is not None]

    def close(self) -> None:
        """End every session and stop every server process."""
        loop = self._loop
        if loop is None:
            return
        for connection in list(self._connections.values()):
            future = asyncio.run_coroutine_threadsafe(connection.close(), loop)
            try:
                future.result(CLOSE_SECONDS)
            except Exception:  # a server that will not end is killed with the loop's thread
                pass
        self._connections.clear()
        loop.call_soon_threadsafe(loop.stop)
        self._loop = None

    # -- the loop and the connections ------------------------------------------------------
    def _connection(self, server: McpServerConfig, env: dict[str, str]) -> _Connection:
        with self._lock:
            if self._loop is None:
                import atexit

                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, daemon=True).start()
                atexit.register(self.close)  # no server outlives heph, however it ends
            connection = self._connections.get(server.name)
            if connection is None or connection.dead:
                log = self.log_dir / f"mcp-{server.name}.log"
                _quiet_package_logs(self.log_dir / "mcp.log")
                argv = self._argv(server)
                contained = self.contains(server)
                why = self.why_contained(server) if contained else ""
                connection = _Connection(server, argv, env, log, self.cwd, why)
                self._connections[server.name] = connection
            return connection

    def contains(self, server: McpServerConfig) -> bool:
        """Whether `server`'s process runs in the sandbox (a server at a URL runs nowhere):
        a workspace's always; the person's in a workspace they have not trusted, or wherever
        its command would run the workspace's code (see workspace_code)."""
        return bool(server.command) and (server.from_workspace or bool(self.why_contained(server)))

    def why_contained(self, server: McpServerConfig) -> str:
        """Why the person's `server` runs in the sandbox here, in words ("" where it does not,
        and for a workspace's server, which always does)."""
        if server.from_workspace or not server.command:
            return ""
        if self.contain_persons:
            return UNTRUSTED
        code = workspace_code(server, self.cwd) if self.cwd is not None else None
        return (
            f" (its command would run the workspace's code, which a model can change: {code}; "
            "so it runs in the sandbox, trusted or not)"
            if code
            else ""
        )

    def _argv(self, server: McpServerConfig) -> list[str]:
        """The command line that starts `server`: in the sandbox, or not at all, wherever
        `contains` says; a workspace's with the network its settings give, the person's with
        the network (their server, as their entry says) unless it would run the workspace's
        code."""
        argv = [server.command, *server.args]
        if not self.contains(server):
            return argv
        if server.cwd:  # the sandbox starts in the workspace: the entry's folder is gone to
            argv = ["/bin/sh", "-c", 'cd -- "$0" && exec "$@"', server.cwd, *argv]
        try:
            if self.command_line is None:
                raise OSError("there is no sandbox to run it in")
            if server.from_workspace:
                return self.command_line(argv)
            # The person's server has the network, as their entry means; a command that would
            # run the workspace's code (a clone's package standing in for it) has none.
            code = workspace_code(server, self.cwd) if self.cwd is not None else None
            return self.command_line(argv, network=code is None)
        except OSError as error:
            raise McpError(
                f"MCP server {server.name} was not started: {error}{self.why_contained(server)}"
            ) from None

    def _wait(
        self, work: Any, timeout: float, server: McpServerConfig, what: str, connection: Any
    ) -> Any:
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(work, self._loop)
        log = f"(its log: {connection.log})"
        try:
            return future.result(timeout)
        except FutureTimeout:
            future.cancel()
            if connection.session is None:  # it never started: stop it, try afresh next time
                self._stop(connection)
            raise McpError(
                f"MCP server {server.name} did not answer {what} within {timeout:g} s {log}"
            ) from None
        except McpError as error:
            self._stop(connection)
            raise McpError(f"{error} {log}") from None
        except Exception as error:  # the package's own errors, a broken pipe, a dead server
            if _broken(error):
                self._stop(connection)  # started again at the next call
            raise McpError(f"MCP server {server.name}: {_one_line(error)} {log}") from None

    def _stop(self, connection: Any) -> None:
        connection.dead = True
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(connection.close(), self._loop)


class _Connection:
    """One server's session, held open by a task on the hub's loop."""

    def __init__(
        self,
        server: McpServerConfig,
        argv: list[str],
        env: dict[str, str],
        log: Path,
        cwd: Path | None,
        why_contained: str = "",
    ) -> None:
        self.server = server
        self.argv = argv
        self.env = env
        self.log = log
        self.cwd = server.cwd or (str(cwd) if cwd else None)
        self.why_contained = why_contained  # why it runs in the sandbox, when the person's
        self.session: Any = None
        self.dead = False
        self.listed: list[ToolDefinition] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._closing: asyncio.Event | None = None
        self._holder: asyncio.Task[None] | None = None

    async def list_tools(self) -> list[ToolDefinition]:
        session = await self._started()
        found, cursor = [], None
        while True:
            from mcp import types

            params: Any = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            listed = await session.list_tools(params=params)
            found += [
                ToolDefinition(t.name, t.description or "", dict(t.input_schema or {}))
                for t in listed.tools
            ]
            cursor = getattr(listed, "next_cursor", None)
            if not cursor:
                return found

    async def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        session = await self._started()
        result = await session.call_tool(tool, args)
        return CallResult(_text_of(result), bool(result.is_error))

    async def close(self) -> None:
        if self._closing is not None:
            self._closing.set()
        if self._holder is not None:
            if self.session is None:
                self._holder.cancel()  # still starting: the package's exit stops the process
            try:
                await asyncio.wait_for(self._holder, CLOSE_SECONDS)
            except (asyncio.TimeoutError, asyncio.CancelledError, Exception):
                pass

    async def _hold_stdio(self) -> None:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("a", encoding="utf-8") as errlog:
            params = StdioServerParameters(
                command=self.argv[0], args=self.argv[1:], env=self.env, cwd=self.cwd
            )
            async with stdio_client(params, errlog=errlog) as (read, write):
                await self._session(read, write)

    async def _hold_http(self) -> None:
        """Streamable HTTP: the entry's URL, with its headers (expanded: mcp_config.live) and
        the bearer token the user config names."""

        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        variable = self.server.bearer_token_env_var
        token = os.environ.get(variable) if variable and not self.server.from_workspace else None
        headers = dict(self.server.http_headers)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        async with create_mcp_http_client(headers=headers or None) as http:
            async with streamable_http_client(self.server.url, http_client=http) as (read, write):
                await self._session(read, write)

    async def _session(self, read: Any, write: Any) -> None:
        from mcp import ClientSession

        assert self._ready is not None and self._closing is not None
        async with ClientSession(read, write) as session:
            await session.initialize()
            self.session = session
            self._ready.set_result(None)
            await self._closing.wait()

    async def _started(self) -> Any:
        if self._ready is None:
            loop = asyncio.get_running_loop()
            self._ready, self._closing = loop.create_future(), asyncio.Event()
            self._holder = loop.create_task(self._hold())
        await asyncio.shield(self._ready)
        return self.session

    async def _hold(self) -> None:
        assert self._ready is not None and self._closing is not None
        try:
            if self.server.url:
                await self._hold_http()
            else:
                await self._hold_stdio()
        except BaseException as error:  # noqa: BLE001 - a failed start is the caller's to say
            if not self._ready.done():
                failure = _start_failure(self.server, error) + self.why_contained
                self._ready.set_exception(McpError(failure))
        finally:
            self.dead = True
            self.session = None


def _text_of(result: Any) -> str:
    """Text joined; structured content as compact JSON when there is no text; images and
    audio named, never poured into the conversation."""
    import json

    parts = []
    for item in result.content or ():
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} ({getattr(item, 'mime_type', '?')}) left out]")
        elif kind == "resource":
            parts.append(f"[a resource: {getattr(getattr(item, 'resource', None), 'uri', '?')}]")
        else:
            parts.append(f"[{kind or 'content'} left out]")
    if not any(p for p in parts if not p.startswith("[")) and result.structured_content:
        return json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)
    return "\n".join(parts)


def _start_failure(server: McpServerConfig, error: BaseException) -> str:
    if isinstance(error, ModuleNotFoundError) and (error.name or "").startswith("mcp"):
        return (
            f"MCP server {server.name} was not started: the mcp package is not installed "
            "(pip install 'mcp>=2,<3', or '.[mcp]' in heph's checkout)"
        )
    return f"MCP server {server.name} did not start: {_one_line(error)}"


UNTRUSTED = (
    " (your servers run in the sandbox in a workspace you have not trusted, so that its files' "
    "code never runs as you: `heph trust` lets them run as you here)"
)


def _one_line(error: BaseException) -> str:
    inner = getattr(error, "exceptions", None)  # a task group's exception group
    if inner:
        return _one_line(inner[0])
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:300]


def _quiet_package_logs(path: Path) -> None:
    """The package logs what a server got wrong (garbage on its stdout) with tracebacks: into a
    log file of heph's, never onto the person's terminal."""
    import logging

    logger = logging.getLogger("mcp")
    if logger.handlers:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        logger.addHandler(logging.FileHandler(path, encoding="utf-8"))
    except OSError:
        logger.addHandler(logging.NullHandler())
    logger.propagate = False


def _broken(error: BaseException) -> bool:
    """Whether the connection is gone (the server exited or closed its pipes), not merely a
    call it refused."""
    inner = getattr(error, "exceptions", None)
    if inner:
        return any(_broken(e) for e in inner)
    names = {"ClosedResourceError", "BrokenResourceError", "EndOfStream", "BrokenPipeError"}
    return type(error).__name__ in names or "connection closed" in str(error).lower()
