"""What MCP costs a run: the `mcp` package's import, a task whose one step calls an MCP tool beside
a task that calls none, and `heph --version` with and without an MCP server configured.

    python benchmarks/mcp_servers.py [--runs 5]

Needs the extra: pip install '.[mcp]'. The server is a one-tool stdio server written
with the package's own server API, in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from common import heph_command, import_seconds, report, timed

from hephaistus.testing import ChatServer, act, final

SERVER = """
from mcp.server.mcpserver import MCPServer
server = MCPServer("bench")

@server.tool(description="Add two numbers.")
def add(a: int, b: int) -> int:
    return a + b

server.run()
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    report(
        "importing mcp (the client)",
        import_seconds("import mcp, mcp.client.stdio, mcp.client.session", runs),
    )
    with tempfile.TemporaryDirectory() as folder, ChatServer() as chat:
        root = Path(folder)
        (root / "ws").mkdir()
        (root / "server.py").write_text(SERVER)
        env = {"PATH": os.environ["PATH"], "HOME": folder, "OPENAI_BASE_URL": chat.url}
        env["XDG_CONFIG_HOME"] = str(root / "config")
        plain = dict(env, XDG_CONFIG_HOME=str(root / "none"))
        (root / "config" / "hephaistus").mkdir(parents=True)
        (root / "config" / "hephaistus" / "config.toml").write_text(
            f"[mcp_servers.bench]\ncommand = {json.dumps(sys.executable)}\n"
            f"args = [{json.dumps(str(root / 'server.py'))}]\n"
        )
        version = [*heph_command(), "--version"]
        for name, environ in (("without MCP", plain), ("with an MCP server", env)):
            seconds = [timed(version, environ, root / "ws") for _ in range(runs)]
            report(f"--version, {name}", seconds)
        chat.reply(final("listed"))
        timed([*heph_command(), "--yes", "list"], env, root / "ws")  # lists and caches the tools
        calling, answering = [], []
        for _ in range(runs):
            chat.reply(act("mcp__bench__add", a=1, b=2))
            chat.reply(final("3"))
            calling.append(timed([*heph_command(), "--yes", "add"], env, root / "ws"))
            chat.reply(act("read_file", path="nothing.txt"))
            chat.reply(final("none"))
            answering.append(timed([*heph_command(), "--yes", "read"], env, root / "ws"))
        report("a task with one MCP call", calling)
        report("a task with one read_file", answering)
        extra = [c - a for c, a in zip(calling, answering, strict=True)]
        report("the MCP call's extra", extra, "  (import, server start, the call)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
