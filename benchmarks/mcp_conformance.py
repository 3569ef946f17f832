"""heph's MCP client against the protocol's conformance suite (`@modelcontextprotocol/conformance`,
its client scenarios): which pass, and what each failing one says.

    python benchmarks/mcp_conformance.py --suite DIR [--node NODE] [--scenario NAME ...]

DIR holds the suite (`npm install @modelcontextprotocol/conformance` there); it needs Node 22 or
later (`--node`: its path). The suite starts a test server per scenario and runs this script's
client mode with the server's URL (`python mcp_conformance.py client URL`), which does what
heph does with a server at a URL: heph's own MCP client lists its tools and calls each of them,
with arguments made from its schema. A question the server puts (elicitation) goes through
heph's terminal form to a person who says yes and presses Enter at each field (its default).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SCENARIOS = ("initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry")
AUTH = tuple(
    f"auth/{name}"
    for name in (
        "metadata-default",
        "metadata-var1",
        "metadata-var2",
        "metadata-var3",
        "basic-cimd",
        "scope-from-www-authenticate",
        "scope-from-scopes-supported",
        "scope-omitted-when-undefined",
        "scope-step-up",
        "scope-retry-limit",
        "token-endpoint-auth-basic",
        "token-endpoint-auth-post",
        "token-endpoint-auth-none",
        "pre-registration",
        "2025-03-26-oauth-metadata-backcompat",
        "2025-03-26-oauth-endpoint-fallback",
    )
)
EXAMPLES = {"number": 2, "integer": 3, "boolean": True, "string": "heph", "array": []}


def client(url: str) -> int:
    """Connect to the server at `url` as heph does, list its tools and call each one. Where it
    refuses heph (401), sign in as `heph mcp login` does, with a browser that follows the
    authorization server's redirects, then try again."""
    from hephaistus.mcp.client import McpError

    with tempfile.TemporaryDirectory() as folder:
        os.environ["XDG_STATE_HOME"] = folder  # the tokens: this run's alone
        try:
            return call_each_tool(url, Path(folder))
        except McpError as error:
            if "refused heph (HTTP 401)" not in str(error):
                print(error)
                return 1
        print("refused: signing in")
        try:
            sign_in(url, Path(folder))
            return call_each_tool(url, Path(folder))
        except McpError as error:
            print(error)
            return 1


def hub_and_server(url: str, folder: Path) -> tuple[Any, Any]:
    """A hub as a run makes one, and the server at `url` as the person's."""
    from hephaistus.mcp.client import McpHub
    from hephaistus.mcp.placement import Placement
    from hephaistus.settings.mcp_config import McpServerConfig

    placement = Placement(folder, dict(os.environ), None, contain_persons=False)
    given = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")  # a client to use
    if given.get("client_secret"):
        os.environ["CONFORMANCE_CLIENT_SECRET"] = given["client_secret"]
    server = McpServerConfig(
        "conformance",
        url=url,
        startup_timeout_sec=10,
        tool_timeout_sec=10,
        oauth_client_id=given.get("client_id", ""),
        oauth_client_secret_env_var="CONFORMANCE_CLIENT_SECRET"
        if given.get("client_secret")
        else "",
    )
    return McpHub(folder / "logs", placement), server


def sign_in(url: str, folder: Path) -> None:
    """`heph mcp login`'s flow, the browser a thread that opens the address shown and
    follows each redirect (the last one to heph's listener)."""
    import threading
    import urllib.request

    from hephaistus.mcp.oauth import SignIn

    def browse(address: str) -> None:
        with urllib.request.urlopen(address, timeout=10) as page:  # redirects followed
            page.read()

    hub, server = hub_and_server(url, folder)
    login = SignIn(lambda address: threading.Thread(target=browse, args=(address,)).start())
    hub.auth = login.auth
    try:
        hub.list_tools(server, {})
    finally:
        hub.close()


def call_each_tool(url: str, folder: Path) -> int:
    """List the server's tools and call each one, a person at hand who answers its questions
    with their defaults."""
    from hephaistus.mcp.client import McpError
    from hephaistus.mcp.waiting import During
    from hephaistus.ui.approval import TerminalAsker

    person = TerminalAsker(None, ask=lambda question: "y", ask_line=lambda question: "")
    hub, server = hub_and_server(url, folder)
    try:
        for tool in hub.list_tools(server, {}):
            args = example_args(tool.schema)
            try:
                done = hub.call(server, {}, tool.name, args, During(ask=person.elicit))
                print(f"{tool.name}({json.dumps(args)}): {done.text[:200]}")
            except McpError as error:
                print(f"{tool.name}: {error}")
    finally:
        hub.close()
    return 0


def example_args(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool: each required one, of its type."""
    properties = schema.get("properties") or {}
    needed = schema.get("required") or []
    return {
        name: EXAMPLES.get(str(properties.get(name, {}).get("type")), "heph")
        for name in needed
        if name in properties
    }


def run_suite(suite: Path, node: str, scenarios: list[str]) -> int:
    """Each scenario's checks, counted, and what a failing one said."""
    entry = suite / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    command = f"{sys.executable} {Path(__file__).resolve()} client"
    passed = 0
    for scenario in scenarios:
        done = subprocess.run(
            [node, str(entry), "client", "--command", command, "--scenario", scenario],
            capture_output=True,
            text=True,
            timeout=120,
        )
        output = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
        failures = [line.strip() for line in output.splitlines() if "FAILURE" in line]
        ok = done.returncode == 0 and not failures
        passed += ok
        print(f"{'pass' if ok else 'FAIL'}  {scenario}")
        for line in failures[:4]:
            print(f"      {line[:220]}")
    print(f"{passed} of {len(scenarios)} client scenarios pass")
    return 0


def main() -> int:
    if sys.argv[1:2] == ["client"]:
        return client(sys.argv[-1])
    parser = argparse.ArgumentParser()
    parser.add_argument("--suite", type=Path, required=True, help="where the suite is installed")
    parser.add_argument("--node", default="node", help="Node 22 or later")
    parser.add_argument("--scenario", action="append", help="(default: the client scenarios)")
    options = parser.parse_args()
    return run_suite(options.suite, options.node, options.scenario or [*SCENARIOS, *AUTH])


if __name__ == "__main__":
    raise SystemExit(main())
