"""Whether the person's MCP server would run the workspace's code: its program or script in the
workspace, `python -m NAME` finding a package there first, npx and its kin taking a
`node_modules/` there before the registry, `uv run` in the workspace's project. Such a server runs
in the sandbox, without the network, whatever the trust (see mcp_client).
"""

from __future__ import annotations

import os
from pathlib import Path

from hephaistus.mcp_config import McpServerConfig

NODE_RUNNERS = {"npx", "bunx", "pnpx"}  # and `npm exec`, `pnpm dlx`, `yarn dlx`
PYTHON_PROJECT = ("pyproject.toml", "uv.toml", "setup.py", "setup.cfg")


def workspace_code(server: McpServerConfig, root: Path) -> str | None:
    """What of the workspace at `root` the person's `server` would run, if anything: a program
    or script that lies in it, the package `python -m NAME` finds there first, a `node_modules`
    that npx and its kin take before the registry, or the project `uv run` runs in. A model can
    write all of these (a sandboxed command, a write), so a server that runs them runs in the
    sandbox whatever the trust: the person's trust is in their server, not in what the
    workspace makes of it."""
    folder = Path(server.cwd) if server.cwd else root
    inside = folder == root or root in folder.parents
    if not inside:
        return None  # the person chose where it runs: its code is what they put there
    words = [server.command, *server.args]
    real_root = os.path.realpath(root)
    for word in words:
        path = folder / word
        named = ("/" in word or path.suffix) and path.is_file()
        if named and Path(os.path.realpath(path)).is_relative_to(real_root):
            return f"{word} lies in the workspace"
    program = Path(server.command).name
    if "-m" in server.args[:-1]:
        name = server.args[server.args.index("-m") + 1].split(".")[0]
        if (folder / f"{name}.py").exists() or (folder / name).is_dir():
            return f"python -m {name} would import the workspace's {name}"
    runner = program in NODE_RUNNERS or server.args[:1] in (["exec"], ["dlx"])
    if runner and any((up / "node_modules").exists() for up in _up_to(folder, root)):
        return f"{program} would take the workspace's node_modules first"
    project = any((folder / name).exists() for name in PYTHON_PROJECT)
    if program == "uv" and server.args[:1] == ["run"] and project:
        return "uv run would run the workspace's project"
    return None


def _up_to(folder: Path, root: Path) -> list[Path]:
    """`folder` and the folders above it, up to the workspace's root."""
    return [folder, *[up for up in folder.parents if up == root or root in up.parents]]
