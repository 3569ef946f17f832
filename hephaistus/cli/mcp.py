"""`heph mcp`: the MCP tool servers of the workspace's config. `list` asks each one for its tools
now (starting it) and shows its state, how many tools it offers and how many wait for approval;
`tools NAME` shows exactly what the model sees of them; `approve NAME` shows what changed in a
server's definitions, then pins them once the person says yes; `login NAME` signs in to a server
at a URL with OAuth (`logout NAME` forgets its tokens); `import FILE` prints a Claude Code /
Cursor `.mcp.json` as `[mcp_servers]` tables to paste."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hephaistus.cli.common import opened, say
from hephaistus.errors import ConfigError, HephError, Refused
from hephaistus.wording import counted

if TYPE_CHECKING:
    from hephaistus.mcp.offer import Offer
    from hephaistus.mcp.tools import McpTools, Pending
    from hephaistus.settings.config import Config
    from hephaistus.settings.mcp_config import McpServerConfig


def mcp(args: argparse.Namespace) -> int:
    """Run the `heph mcp` action asked for."""
    if args.action == "import":
        return _import(args.name)
    done = opened(args)
    workspace, config = done.workspace, done.config
    from hephaistus.mcp.client import McpError
    from hephaistus.mcp.tools import McpTools
    from hephaistus.runtime.sandbox import Contained

    sandbox = Contained(workspace.root, config.sandbox)  # a workspace's servers run in it
    tools = McpTools(
        config.mcp_servers, workspace.root, workspace.heph_dir, command_line=sandbox.command_line
    )
    try:
        if args.action == "list":
            _say_untrusted_servers(workspace.root, config)
            return _list(tools)
        if not args.name:
            raise ConfigError(f"heph mcp {args.action} NAME: name one of the servers")
        if args.name not in tools.servers:
            known = ", ".join(tools.servers) or "none is configured"
            raise ConfigError(f"no MCP server {args.name} (the servers: {known})")
        if args.action == "approve":
            try:
                pending = tools.pending(args.name)
            except McpError as error:
                raise HephError(str(error)) from None
            return _approve(tools, pending, args.yes)
        if args.action in ("login", "logout"):
            return _login(tools, tools.live(tools.servers[args.name]), args.action)
        return _tools(tools, args.name)
    finally:
        tools.close()


def _approve(tools: McpTools, pending: Pending, yes: bool) -> int:
    """Show what changed in the server's definitions, then pin them if the person says so:
    `[y/N]` by one key in a terminal, `--yes` in a script; without either, nothing is pinned
    (exit 3)."""
    name = pending.server
    if not pending.changes:
        say(f"nothing to approve: {name}'s tools are as you approved them")
        return 0
    for label, diff in pending.changes:
        say(f"{name}: {label}")
        if diff:
            say(diff)
    if not yes:
        if not sys.stdin.isatty():
            raise Refused(
                f"not approved: there is no terminal to ask in; `heph mcp approve {name} --yes` "
                "approves the definitions shown"
            )
        from hephaistus.ui.approval import ask_on_stderr

        try:
            answer = ask_on_stderr(f"Approve these definitions of {name}'s tools? [y/N] ")
        except EOFError:
            answer = "n"
        if answer != "y":
            say(f"not approved: {name}'s new and changed tools stay withheld", sys.stderr)
            return 0
    tools.approve(pending)
    say(f"approved {name}: {', '.join(label for label, _ in pending.changes)}")
    return 0


def _login(tools: McpTools, server: McpServerConfig, action: str) -> int:
    """Sign in to `server` with OAuth: the address to open is printed, the browser comes back
    to heph, the tokens are kept in the user's state folder. `logout`: they are forgotten."""
    from dataclasses import replace

    from hephaistus.mcp.client import McpError
    from hephaistus.mcp.oauth import LOGIN_SECONDS, SignIn, TokenFile

    if not server.url:
        raise ConfigError(f"{server.name} is not a server at a URL: signing in is for those")
    if server.from_workspace:
        raise ConfigError(
            f"{server.name} is a workspace's server: it is sent none of your tokens (put it "
            "in your user config to sign in to it)"
        )
    kept = TokenFile(server.url)
    if action == "logout":
        kept.forget()
        say(f"signed out of {server.name}: heph keeps no token for {server.url}")
        return 0

    def show(address: str) -> None:
        say(f"Open this address in your browser to sign in to {server.name}:\n")
        say(f"  {address}\n")
        sys.stdout.flush()  # the address now, whatever stdout is
        say("Waiting for the browser to come back (Ctrl-C stops)…", sys.stderr)

    before = kept.kept().get("tokens")
    try:
        tools.hub.auth = SignIn(show, server.oauth_callback_port).auth
    except OSError as error:
        raise HephError(f"cannot listen on 127.0.0.1 for the browser: {error}") from None
    try:
        waited = LOGIN_SECONDS + 30  # the browser's own limit says so first
        tools.hub.list_tools(replace(server, startup_timeout_sec=waited), tools.env(server))
    except McpError as error:
        raise HephError(str(error)) from None
    if kept.kept().get("tokens") in (None, before):
        say(f"{server.name} answered without asking heph to sign in: nothing to keep")
        return 0
    say(f"signed in to {server.name}; its tokens are kept in {kept.records.path}")
    return 0


def _say_untrusted_servers(root: Path, config: Config) -> None:
    """The workspace's own servers, while it is untrusted: they do not apply, and why."""
    if config.workspace_trusted:
        return
    from hephaistus.settings.config import workspace_tables

    names = [
        f"{source}: {name}"
        for source, table in workspace_tables(root)
        for name in (table.get("mcp_servers") or {})
    ]
    if names:
        say(
            f"not used until you trust this workspace (heph trust): {', '.join(names)}",
            sys.stderr,
        )


def _list(tools: McpTools) -> int:
    if not tools.servers:
        say("no MCP server is configured ([mcp_servers.NAME] in your user config)")
        return 0
    # Asked now, not from the cache: a definition changed behind it shows as withheld here.
    say("MCP servers, and their tools as each server lists them now (started to ask):")
    from hephaistus.mcp.offer import offered

    offer = offered(tools, fresh=True)
    for name, server in tools.servers.items():
        its = [t for t in offer.tools if t.name.startswith(f"mcp__{name}__")]
        where = _where_it_runs(tools, server)
        failed = _failures(offer, name)
        state = failed[0] if failed else counted(len(its), "tool")
        withheld = [w for w in offer.withheld if w.startswith(f"{name}:")]
        extra = (
            f", {len(withheld)} withheld until approved (heph mcp approve {name})"
            if withheld
            else ""
        )
        say(f"{name} ({where}): {state}{extra}")
    return 0


def _failures(offer: Offer, name: str) -> list[str]:
    """What went wrong with server `name` when its tools were asked for (it did not start, ...)."""
    return [line for line in offer.failed if f"server {name} " in line or f"server {name}:" in line]


def _where_it_runs(tools: McpTools, server: McpServerConfig) -> str:
    """Whose server it is, and whether it runs in the sandbox (the person's does too in a
    workspace they have not trusted)."""
    if server.from_workspace:
        return "workspace, sandboxed"
    placement = tools.placement
    if not placement.contained(server):
        return "user config"
    if placement.contain_persons:
        return "user config, in the sandbox: you have not trusted this workspace (heph trust)"
    return "user config, in the sandbox: " + placement.why_contained(server).strip(" ()")


def _tools(tools: McpTools, name: str) -> int:
    from hephaistus.mcp.offer import offered
    from hephaistus.tools import Registry

    offer = offered(tools)
    mine = Registry(t for t in offer.tools if t.name.startswith(f"mcp__{name}__"))
    failed = _failures(offer, name)
    if failed and not mine.names:
        raise HephError(failed[0])  # it said nothing: its tools are unknown, not none
    say(mine.describe())
    for line in offer.withheld:
        if line.startswith(f"{name}:"):
            say(f"withheld until approved: {line}", sys.stderr)
    return 0


# What Claude Code's and Cursor's files call a server heph reaches over Streamable HTTP.
HTTP_TYPES = ("http", "streamable-http", "streamableHttp")
CARRIED = {"type", "command", "args", "env", "cwd", "url", "headers", "disabled", "oauth"}
OAUTH = ("clientId", "callbackPort")  # its client secret stays where Claude keeps it
WHOLE_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
CURSOR_VARIABLE = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


def _import(path: str | None) -> int:
    """The servers of a `.mcp.json`, Cursor's `mcp.json` or Claude's `~/.claude.json`
    (`{"mcpServers": {NAME: {command, args, env, cwd, disabled} | {type: "http", url,
    headers}}}`) as TOML tables, each thing that does not carry over named in a comment."""
    if not path:
        raise ConfigError("heph mcp import FILE: name the .mcp.json to convert")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    servers = _servers_in(data)
    if servers is None:
        raise ConfigError(f"{path} has no mcpServers table")
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            say(f"# {json.dumps(name)} is left out: its entry is not a table")
            continue
        clean = re.sub(r"[^A-Za-z0-9_-]", "-", str(name))[:32] or "server"
        if clean != name:
            say(f"# {json.dumps(name)} renamed: a server's name is letters, digits, - and _")
        lines, dropped = _converted(entry)
        for what in dropped:
            say(f"# {clean}: {what}")
        if lines:
            say("\n".join([f"[mcp_servers.{clean}]", *lines, ""]))
    return 0


def _servers_in(data: Any) -> dict[str, Any] | None:
    """The servers of the file: its `mcpServers`, and in Claude's `~/.claude.json` those of
    the project in the current folder too (the others' are named, not taken)."""
    if not isinstance(data, dict):
        return None
    found = data.get("mcpServers")
    servers = dict(found) if isinstance(found, dict) else None
    projects = data.get("projects")
    if isinstance(projects, dict):
        here = projects.get(str(Path.cwd().resolve()))
        mine = here.get("mcpServers") if isinstance(here, dict) else None
        servers = {**(servers or {}), **(mine if isinstance(mine, dict) else {})}
        others = sum(
            1
            for project in projects.values()
            if project is not here and isinstance(project, dict) and project.get("mcpServers")
        )
        if others:
            say(f"# the servers of {counted(others, 'other project')} are left out (run it there)")
    return servers


def _converted(entry: dict[str, Any]) -> tuple[list[str], list[str]]:
    """One server's TOML lines, and what of it does not carry over (said, not silently lost)."""
    if not isinstance(entry.get("command"), str) and not isinstance(entry.get("url"), str):
        return [], ["left out: it names neither a command nor a url"]
    kind = entry.get("type", "stdio" if "command" in entry else "http")
    if kind not in ("stdio", *HTTP_TYPES):
        why = "the older HTTP+SSE transport" if kind == "sse" else "a transport heph lacks"
        return [], [f"left out: type {json.dumps(kind)} is {why} (heph: stdio, Streamable HTTP)"]
    lines: list[str] = []
    dropped = [f"{key} is not carried over" for key in entry if key not in CARRIED]
    for key in ("command", "url", "cwd"):
        if isinstance(entry.get(key), str):
            lines.append(f"{key} = {_toml(_spelled(entry[key]))}")
    if isinstance(entry.get("args"), list):
        lines.append(f"args = [{', '.join(_toml(_spelled(str(a))) for a in entry['args'])}]")
    env = entry.get("env")
    if isinstance(env, dict) and env:
        lines.append(f"env = {_inline({k: _spelled(str(v)) for k, v in env.items()})}")
    if entry.get("disabled") is True:
        lines.append("enabled = false")
    headers = entry.get("headers")
    if isinstance(headers, dict) and headers:
        header_lines, header_dropped = _headers(headers)
        lines += header_lines
        dropped += header_dropped
    oauth = entry.get("oauth")  # Claude Code's client registered beforehand
    if isinstance(oauth, dict):
        if isinstance(oauth.get("clientId"), str):
            lines.append(f"oauth_client_id = {_toml(oauth['clientId'])}")
        if type(oauth.get("callbackPort")) is int:
            lines.append(f"oauth_callback_port = {oauth['callbackPort']}")
        dropped += [f"oauth {key} is not carried over" for key in oauth if key not in OAUTH]
    return lines, dropped


def _headers(headers: dict[str, Any]) -> tuple[list[str], list[str]]:
    """HTTP headers in Codex's keys: `Authorization: Bearer ${VAR}` as bearer_token_env_var,
    a header that is one variable as env_http_headers, any other as http_headers (its
    variables expanded by heph)."""
    from hephaistus.settings.mcp_config import HEADER_NAME

    plain: dict[str, str] = {}
    from_env: dict[str, str] = {}
    lines, dropped = [], []
    for name, raw in headers.items():
        if not isinstance(raw, str) or not HEADER_NAME.match(name):
            dropped.append(f"the header {json.dumps(name)} is not carried over (not a header)")
            continue
        value = _spelled(raw)
        bearer = re.fullmatch(r"Bearer \$\{([A-Za-z_][A-Za-z0-9_]*)\}", value)
        whole = WHOLE_VARIABLE.fullmatch(value)
        if name.lower() == "authorization" and bearer:
            lines.append(f"bearer_token_env_var = {_toml(bearer.group(1))}")
        elif whole:
            from_env[name] = whole.group(1)
        else:
            plain[name] = value
    if plain:
        lines.append(f"http_headers = {_inline(plain)}")
    if from_env:
        lines.append(f"env_http_headers = {_inline(from_env)}")
    return lines, dropped


def _spelled(text: str) -> str:
    """Cursor's `${env:VAR}` and `${userHome}` as heph spells them (`${VAR}`, `${HOME}`)."""
    return CURSOR_VARIABLE.sub(r"${\1}", text).replace("${userHome}", "${HOME}")


def _inline(table: dict[str, str]) -> str:
    """A TOML inline table of strings."""
    return "{ " + ", ".join(f"{_toml_key(k)} = {_toml(v)}" for k, v in table.items()) + " }"


def _toml(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml(key)
