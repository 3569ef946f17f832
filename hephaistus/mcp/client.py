"""The MCP client: the servers of a run, each started on first use, spoken to through the official
`mcp` package (the `mcp` extra, imported only here, only when a server starts).

The package is async; heph is not. One event loop runs in a thread of its own, and every call
is handed to it and waited for with a timeout, so a server that hangs, dies or fails to start is
an error the caller turns into one line, never a hang. Each server's connection is held open by
one task on that loop (the package's contexts must be left by the task that entered them) until
`close`, which ends every session and leaves no process behind. A server's stderr goes to its
log, in heph's own folder for the workspace (userdirs.workspace_folder: `heph mcp` names it).

Where a server's process runs, and in which folder, is its Placement (mcp_placement): never on
the host with the workspace as its folder.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hephaistus.mcp.elicit import question_of
from hephaistus.mcp.failures import (
    broken,
    error_line,
    missing_path,
    quiet_package_logs,
    refused_words,
    sign_in_failure,
    start_failure,
)
from hephaistus.mcp.oauth import kept_sign_in
from hephaistus.mcp.placement import Placement
from hephaistus.mcp.results import CallResult, text_of
from hephaistus.mcp.sampling import answered as sampled
from hephaistus.mcp.waiting import Asking, During, Sample, listening, result_of, time_for
from hephaistus.settings.mcp_config import McpServerConfig

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


class McpHub:
    """The MCP servers of one run or chat."""

    def __init__(self, log_dir: Path, placement: Placement) -> None:
        self.log_dir = log_dir
        self.placement = placement  # where each server runs, and in which folder
        self._connections: dict[str, _Connection] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self.auth = kept_sign_in  # a server's OAuth (None: it gets none), made as it starts

    def list_tools(self, server: McpServerConfig, env: dict[str, str]) -> list[ToolDefinition]:
        """The server's tools, starting it if it is not running (listed once per start)."""
        connection = self._connection(server, env)
        if connection.listed is None:
            work = connection.list_tools()
            connection.listed = self._wait(
                work, server.startup_timeout_sec, server, "list", connection
            )
            connection.changed = False
        return connection.listed

    def tools_changed(self) -> list[str]:
        """The servers that said their tools changed since they were last listed."""
        return [name for name, c in self._connections.items() if c.changed]

    def instructions(self, server: McpServerConfig) -> str:
        """What the running `server` said of itself as it started ("": nothing)."""
        connection = self._connections.get(server.name)
        return connection.instructions if connection is not None else ""

    def call(
        self,
        server: McpServerConfig,
        env: dict[str, str],
        tool: str,
        args: dict[str, Any],
        during: During | None = None,
    ) -> CallResult:
        """Call `tool` of `server` with `args`; McpError when it cannot be done in time. A
        server that broke off is started again at the next call. What the server asks of heph
        meanwhile (the person's answer, heph's model) is done `during` it, on this thread."""
        connection = self._connection(server, env)
        work = connection.call(tool, args)
        return self._wait(work, time_for(server, connection), server, tool, connection, during)

    def on_session(self, server: McpServerConfig, env: dict[str, str], what: str, work: Any) -> Any:
        """What `work(session)` (a coroutine function) makes of `server`'s session (its
        resources, its prompts), in the call's time; McpError when it cannot be done."""
        connection = self._connection(server, env)

        async def on_it() -> Any:
            return await work(await connection._started())

        return self._wait(on_it(), time_for(server, connection), server, what, connection)

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
                quiet_package_logs(self.log_dir / "mcp.log")
                why = self.placement.why_contained(server) + self.placement.offline_hint(server)
                try:
                    argv = self.placement.argv(server) if server.command else []
                except OSError as error:
                    failed = f"MCP server {server.name} was not started: {error}{why}"
                    raise McpError(failed) from None
                folder = self.placement.folder(server)  # entered as the server starts
                connection = _Connection(server, argv, env, log, folder, why)
                connection.root = self.placement.root
                connection.auth = self.auth(server) if server.url else None
                self._connections[server.name] = connection
            return connection

    def _wait(
        self,
        work: Any,
        timeout: float,
        server: McpServerConfig,
        what: str,
        connection: Any,
        during: During | None = None,
    ) -> Any:
        assert self._loop is not None
        asking = listening(connection, during)  # before the work starts: nothing is missed
        future = asyncio.run_coroutine_threadsafe(work, self._loop)
        log = f"(its log: {connection.log})"
        try:
            return result_of(future, timeout, connection, during, asking)
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
            if broken(error):
                self._stop(connection)  # started again at the next call
            if connection.refused:  # a token that expired or was taken back
                raise McpError(refused_words(server, connection.refused)) from None
            raise McpError(f"MCP server {server.name}: {error_line(error)} {log}") from None

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
        folder: AbstractContextManager[str],
        why_contained: str = "",
    ) -> None:
        self.server = server
        self.argv = argv
        self.env = env
        self.log = log
        self.folder = folder  # the folder it runs in, while it runs
        self.why_contained = why_contained  # why it runs in the sandbox, when the person's
        self.session: Any = None
        self.dead = False
        self.refused: int | None = None  # the HTTP status a server at a URL refused heph with
        self.root = Path("/")  # the workspace: the one root heph declares
        self.auth: Any = None  # the OAuth client of a server at a URL the person signed in to
        self.instructions = ""  # what the server says of itself, as it started
        self.progressed = 0.0  # when it last said a call of its made progress (monotonic)
        self.asking: Asking | None = None  # where the call in progress takes its questions
        self.listed: list[ToolDefinition] | None = None
        self.changed = False  # it said its tools changed (list_changed) since listed
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
                if not _task_only(t)
            ]
            cursor = getattr(listed, "next_cursor", None)
            if not cursor:
                return found

    async def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        session = await self._started()

        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            self.progressed = time.monotonic()  # still working: the timeout starts again
            if self.asking is not None:  # and said how far, to show
                self.asking.progressed(progress, total, message)

        result = await session.call_tool(tool, args, progress_callback=progressed)
        return CallResult(text_of(result), bool(result.is_error))

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
        with self.log.open("a", encoding="utf-8") as errlog, self.folder as cwd:
            params = StdioServerParameters(
                command=self.argv[0], args=self.argv[1:], env=self.env, cwd=cwd
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

        async def note(response: Any) -> None:  # the SDK says only "an error response"
            if response.status_code in (401, 403):
                self.refused = response.status_code
            elif response.status_code < 300 and response.request.method == "POST":
                self.refused = None  # signed in again (a refreshed token), or it never refused

        auth = None if token else self.auth
        async with create_mcp_http_client(headers=headers or None, auth=auth) as http:
            http.event_hooks["response"].append(note)
            async with streamable_http_client(self.server.url, http_client=http) as (read, write):
                await self._session(read, write)

    async def _session(self, read: Any, write: Any) -> None:
        from mcp import ClientSession, types

        from hephaistus import __version__

        assert self._ready is not None and self._closing is not None
        heph = types.Implementation(name="heph", title="Hephaistus", version=__version__)
        root = types.Root(uri=self.root.as_uri(), name=self.root.name)  # type: ignore[arg-type]

        async def roots(context: Any) -> Any:  # what the server is to work on: the workspace
            return types.ListRootsResult(roots=[root])

        async def notified(message: Any) -> None:  # its tools changed: asked again when needed
            if getattr(message, "method", "") == "notifications/tools/list_changed":
                self.listed, self.changed = None, True

        async with ClientSession(
            read,
            write,
            client_info=heph,
            list_roots_callback=roots,
            message_handler=notified,
            elicitation_callback=self._elicited,
            sampling_callback=self._sampled if self.server.sampling else None,
        ) as session:
            started = await session.initialize()
            self.instructions = started.instructions or ""
            self.session = session
            self._ready.set_result(None)
            await self._closing.wait()

    async def _elicited(self, context: Any, params: Any) -> Any:
        """A question for the person, put by the thread waiting for the call in progress;
        declined when no call waits, or when it is not a form heph can ask (a URL to visit)."""
        from mcp import types

        asking, question = self.asking, None
        if asking is not None and getattr(params, "mode", "form") in ("form", None):
            schema = dict(getattr(params, "requested_schema", None) or {})
            question = question_of(self.server.name, params.message, schema)
        if asking is None or question is None:
            return types.ElicitResult(action="decline")
        reply = await asyncio.wrap_future(asking.put(question))
        return types.ElicitResult(action=reply.action, content=reply.content or None)

    async def _sampled(self, context: Any, params: Any) -> Any:
        """heph's model for the server, lent by the thread waiting for its call (sampling)."""
        if self.asking is None:  # no call waits: refused
            return sampled(None, params, self.server.name)
        return await asyncio.wrap_future(self.asking.put(Sample(self.server.name, params)))

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
                gone = missing_path(self.server)  # its cause, rather than the sandbox
                failure = start_failure(self.server, error) + (gone or self.why_contained)
                if self.refused:
                    failure = refused_words(self.server, self.refused)
                if sign_in_failure(error):
                    failure = f"MCP server {self.server.name}: signing in failed: " + (
                        sign_in_failure(error)
                    )
                self._ready.set_exception(McpError(failure))
                self._ready.exception()  # told to whoever waits; none may (a timed-out list)
        finally:
            self.dead = True
            self.session = None


def _task_only(tool: Any) -> bool:
    """Whether the server takes calls of `tool` only as tasks (which heph does not make)."""
    execution = getattr(tool, "execution", None)
    return getattr(execution, "task_support", None) == "required"
