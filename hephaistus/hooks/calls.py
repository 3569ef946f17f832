"""A tool call as hooks see it: Claude Code's `tool_name` (`Bash` for the shell) and a
`tool_input` with `command` for commands and an absolute `file_path` for file tools, beside
heph's own arguments; and an `updatedInput` a PreToolUse hook sends, read back into heph's
arguments (only those the tool takes)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hephaistus.hooks.definitions import THEIR_NAMES

FILE_TOOLS = {"read_file", "write_file", "append_file", "edit_file", "patch_file", "delete_file"}
RESPONSE_CHARS = 20_000  # of a tool's output, given to a PostToolUse hook


def tool_fields(tool: str, args: dict[str, Any], root: Path, commands: dict[str, str]) -> dict:
    """`tool_name`, `heph_tool_name` and `tool_input` of a call."""
    given = dict(args)
    if tool == "run_command" and isinstance(args.get("name"), str):
        line = commands.get(args["name"], args["name"])
        given["command"] = f"{line} {args['args']}" if args.get("args") else line
    if tool in FILE_TOOLS and isinstance(args.get("path"), str):
        given["file_path"] = str(root / args["path"])
    if tool == "edit_file":
        given.setdefault("old_string", args.get("old"))
        given.setdefault("new_string", args.get("new"))
    if tool == "write_file":
        given.setdefault("content", args.get("content"))
    return {"tool_name": THEIR_NAMES.get(tool, tool), "heph_tool_name": tool, "tool_input": given}


def updated_args(
    args: dict[str, Any], updated: dict[str, Any], takes: set[str], root: Path
) -> dict[str, Any]:
    """`args` with what a hook's `updatedInput` changed of those the tool takes (`file_path`
    back to a workspace path, `old_string`/`new_string` to an edit's `old`/`new`)."""
    changed = dict(args)
    aliases = {"old_string": "old", "new_string": "new"}
    for key, value in updated.items():
        if key == "file_path" and "path" in takes and isinstance(value, str):
            path = Path(value)
            changed["path"] = os.path.relpath(path, root) if path.is_absolute() else value
        elif aliases.get(key) in takes:
            changed[aliases[key]] = value
        elif key in takes:
            changed[key] = value
    return changed


def response_fields(ok: bool, output: str) -> dict[str, Any]:
    """`tool_response` of a finished call."""
    return {"tool_response": {"success": ok, "output": output[:RESPONSE_CHARS]}}
