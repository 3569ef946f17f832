"""Structured steps: the JSON schema of one step of the protocol, for a server to enforce while it
decodes, so that even a small local model cannot send a malformed step.

The schema is made from the tools offered (their typed arguments): a step is a `thought` and
exactly one of `action` (one branch per tool: the tool's name as a constant and its arguments,
required ones required) or `final` (a `message`). Every free string is bounded, so a small model
cannot run on inside it; no bound is over 1,000 characters (a `maxLength` of 2,000 makes
llama-cpp-python 0.3.36 crash building its grammar). When the workspace has few files, the path a
reading tool takes may be one of them.

OpenAI's strict schemas take a smaller language (an object at the root, every property required,
no length bounds): `compact=True` makes that form. Each server kind takes the schema in its own
request shape (`SHAPES`); `conforms` tells whether a reply keeps to a schema, which is how heph
learns that a server does not enforce it. The protocol itself is unchanged: every reply is still
parsed leniently and validated strictly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable
from typing import Any

from hephaistus.tools import Tool, ToolArg
from hephaistus.tools.schemas import inlined, strict

THOUGHT_CHARS = 400
TEXT_CHARS = 1000  # the most any string may take: file contents, snippets, diffs, answers
NAME_CHARS = 300  # paths, patterns, command lines, commit messages
LIST_ITEMS = 50
LISTED_PATHS = 200  # a reading tool's path is one of the workspace's files, when it has this few
# Arguments that carry text the model writes out, whose bound a step may reach: a value of
# exactly that length was cut by the grammar, and is refused rather than written.
TEXT_ARGS = frozenset({"content", "old", "new", "diff", "message"})
# The tools whose `path` names a file to read.
READING_TOOLS = frozenset({"read_file"})

# How each kind of server takes a schema, in the order tried: a server that refuses a shape (a
# 400) gets the next one. llama.cpp's own `{type: "json_schema", schema}` is silently ignored.
SHAPES = {
    "openai": ("openai_strict",),
    "llama.cpp": ("json_object_schema", "json_schema"),
    "llama-cpp-python": ("json_object_schema",),
    "vllm": ("json_schema",),
    "ollama": ("json_schema",),
    "lmstudio": ("json_schema",),
}
UNKNOWN_KIND_SHAPES = ("json_schema", "json_object_schema")  # `structured = "schema"`


class StepSchema:
    """The schema of a task's steps, in both forms, made when first asked for: the tools
    offered, and the workspace's files (`files`, asked once, only if the schema is sent)."""

    def __init__(self, tools: Iterable[Tool], files: Callable[[], Collection[str]]) -> None:
        self.tools = tuple(tools)
        self._files = files
        self._forms: dict[bool, dict[str, Any]] = {}

    def form(self, *, compact: bool = False) -> dict[str, Any]:
        """The schema; `compact`: OpenAI's strict form."""
        if compact not in self._forms:
            paths = self._files() if any(t.name in READING_TOOLS for t in self.tools) else None
            self._forms[compact] = step_schema(self.tools, paths=paths, compact=compact)
        return self._forms[compact]

    def request_format(self, shape: str) -> dict[str, Any]:
        """The `response_format` carrying the schema in `shape`."""
        return response_format(shape, self.form(compact=shape == "openai_strict"))

    def kept_to(self, text: str, shape: str) -> bool:
        """Whether the reply keeps to the schema that was sent in `shape`."""
        return conforms(text, self.form(compact=shape == "openai_strict"))


def step_schema(
    tools: Iterable[Tool], *, paths: Collection[str] | None = None, compact: bool = False
) -> dict[str, Any]:
    """The schema of a step that calls one of `tools` or answers. `paths`: the workspace's files,
    a reading tool's choices when there are at most LISTED_PATHS. `compact`: OpenAI's strict
    form."""
    listed = sorted(paths) if paths is not None and 0 < len(paths) <= LISTED_PATHS else None
    branches = [_tool_branch(tool, listed, compact) for tool in tools]
    thought = _string(THOUGHT_CHARS, compact)
    action: dict[str, Any] = {"anyOf": branches} if len(branches) != 1 else branches[0]
    message = _string(TEXT_CHARS, compact)
    if not compact:  # an empty answer is no answer (OpenAI's strict form takes no bounds)
        message["minLength"] = 1
    final = _object({"message": message}, ["message"])
    if compact:  # one object at the root; the branch not taken is null
        return _object(
            {
                "thought": thought,
                "action": {"anyOf": [*branches, {"type": "null"}]},
                "final": {"anyOf": [final, {"type": "null"}]},
            },
            ["thought", "action", "final"],
        )
    return {
        "anyOf": [
            _object({"thought": thought, "action": action}, ["thought", "action"]),
            _object({"thought": thought, "final": final}, ["thought", "final"]),
        ]
    }


def response_format(shape: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The request's `response_format` that carries `schema` in `shape`."""
    if shape == "openai_strict":
        strict = {"name": "step", "schema": schema, "strict": True}
        return {"type": "json_schema", "json_schema": strict}
    if shape == "json_object_schema":
        return {"type": "json_object", "schema": schema}
    if shape == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "step", "schema": schema}}
    raise ValueError(f"unknown schema shape {shape!r}")


def conforms(text: str, schema: dict[str, Any]) -> bool:
    """Whether the reply `text` is exactly one JSON value that keeps to `schema` (what a server
    that enforces the schema sends, whitespace aside). A raw line break inside a string is let
    pass, as the protocol lets it: llama-cpp-python's grammar allows it."""
    try:
        value = json.loads(text, strict=False)
    except ValueError:
        return False
    return _fits(value, schema)


def cut_by_the_bound(args: dict[str, Any]) -> str | None:
    """The name of a text argument that is exactly TEXT_CHARS long: the grammar ended it there,
    so it is most likely cut short, and writing it would lose the rest."""
    for name, value in args.items():
        if name in TEXT_ARGS and isinstance(value, str) and len(value) == TEXT_CHARS:
            return name
    return None


# -- making the schema ---------------------------------------------------------------------


def _tool_branch(tool: Tool, paths: list[str] | None, compact: bool) -> dict[str, Any]:
    name = {"type": "string", "enum": [tool.name]}
    if tool.input_schema is not None:  # an MCP tool's own schema, kept whole (strict: made so)
        args = inlined(tool.input_schema, prose=False)
        if compact:
            args = strict(args)
            args = args if args.get("type") == "object" else _object({}, [])
        return _object({"tool": name, "args": args}, ["tool", "args"])
    properties = {}
    for arg in tool.args:
        prop = _arg_schema(tool, arg, paths, compact)
        if compact and not arg.required:
            prop = {"anyOf": [prop, {"type": "null"}]}
        properties[arg.name] = prop
    required = [a.name for a in tool.args if a.required or compact]
    args = _object(properties, required)
    return _object({"tool": name, "args": args}, ["tool", "args"])


def _arg_schema(tool: Tool, arg: ToolArg, paths: list[str] | None, compact: bool) -> dict[str, Any]:
    if arg.kind is str:
        if arg.name == "path" and paths and tool.name in READING_TOOLS:
            return {"type": "string", "enum": paths}
        return _string(TEXT_CHARS if arg.name in TEXT_ARGS else NAME_CHARS, compact)
    if arg.kind is list:
        items: dict[str, Any] = {"type": "array", "items": _string(NAME_CHARS, compact)}
        if not compact:
            items["maxItems"] = LIST_ITEMS
        return {"anyOf": [items, _string(NAME_CHARS, compact)]} if arg.or_string else items
    if arg.kind is object:  # any JSON value: strict schemas take none
        return {"type": ["string", "number", "boolean"]} if compact else {}
    kinds = {int: "integer", float: "number", bool: "boolean"}
    return {"type": kinds[arg.kind]}


def _string(bound: int, compact: bool) -> dict[str, Any]:
    return {"type": "string"} if compact else {"type": "string", "maxLength": bound}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


# -- checking a reply against it (the subset of JSON Schema made above) ---------------------

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
}


def _fits(value: Any, schema: dict[str, Any]) -> bool:
    if "anyOf" in schema:
        return any(_fits(value, option) for option in schema["anyOf"])
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if kind in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if kind == "integer" and not isinstance(value, int):
            return False
    elif kind is not None and not isinstance(value, _TYPES[kind]):
        return False
    if isinstance(value, str) and not (
        schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value))
    ):
        return False
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", len(value)):
            return False
        return all(_fits(item, schema.get("items", {})) for item in value)
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        if any(name not in value for name in schema.get("required", [])):
            return False
        if schema.get("additionalProperties") is False and set(value) - set(properties):
            return False
        return all(_fits(value[name], properties[name]) for name in value if name in properties)
    return True
