from __future__ import annotations

import pytest

from hephaistus.model.prompting import system_prompt
from hephaistus.tools import Registry, Tool, ToolArg, ToolContext, ToolResult, default_registry
from hephaistus.workspace import Workspace


def greet(ctx: ToolContext, name: str, times: int | None = None, loud: bool = False) -> ToolResult:
    """Say hello to someone.

    Args:
        name: who to greet
        times: how many times
            (at least one)
        loud: shout it
    """
    if name == "boom":
        raise RuntimeError("exploded")
    text = f"hello {name}" * (times or 1)
    return ToolResult(True, text.upper() if loud else text)


def test_arguments_come_from_signature_and_docstring():
    tool = Tool.from_function(greet)
    assert tool.description == "Say hello to someone."
    assert [(a.name, a.json_type, a.required, a.description) for a in tool.args] == [
        ("name", "string", True, "who to greet"),
        ("times", "integer", False, "how many times (at least one)"),
        ("loud", "boolean", False, "shout it"),
    ]
    assert (
        tool.describe() == "- greet(name, times?: integer, loud?: boolean): Say hello to someone."
    )


def test_a_tool_without_argument_docs_is_rejected():
    def bare(ctx: ToolContext, path: str) -> ToolResult:
        """Does things."""
        return ToolResult(True, path)

    with pytest.raises(TypeError, match="path"):
        Tool.from_function(bare)


def test_calling_never_raises(tmp_path):
    tool = Tool.from_function(greet)
    ctx = ToolContext(Workspace.at(tmp_path))
    assert tool({"name": "ann", "loud": True}, ctx) == ToolResult(True, "HELLO ANN")
    crashed = tool({"name": "boom"}, ctx)
    assert not crashed.ok and "RuntimeError: exploded" in crashed.output
    bad = tool({"times": "two"}, ctx)
    assert not bad.ok and "missing required argument 'name'" in bad.output
    assert "'times' must be an integer" in bad.output


def test_duplicate_names_are_refused():
    registry = Registry([Tool.from_function(greet)])
    with pytest.raises(ValueError):
        registry.add(Tool.from_function(greet))


def test_system_prompt_lists_every_registered_tool_with_its_arguments(tmp_path):
    registry = default_registry()
    prompt = system_prompt(registry, tmp_path)
    assert "{{tools}}" not in prompt
    for tool in registry:
        line = f"- {tool.name}({', '.join(map(ToolArg.signature, tool.args))}): "
        assert f"{line}{' '.join(tool.description.split())}\n" in prompt
    assert "- read_file(path, start_line?: integer, end_line?: integer): " in prompt
    assert set(registry.names) == {
        "list_files",
        "read_file",
        "search",
        "write_file",
        "append_file",
        "edit_file",
        "patch_file",
        "delete_file",
        "move_file",
        "git_status",
        "git_diff",
        "git_log",
        "git_commit",
        "run_command",
        "shell",
        "skill",
        "todo_write",
        "task",
    }


def test_workspace_prompt_override_wins(tmp_path):
    override = tmp_path / ".heph" / "prompts" / "system.md"
    override.parent.mkdir(parents=True)
    override.write_text("Custom prompt.\n{{tools}}")
    prompt = system_prompt(default_registry(), tmp_path)
    assert prompt.startswith("Custom prompt.\n- list_files(path?): Files and their sizes")
