"""A tool's arguments as a JSON schema gives them (an MCP server's): its references inlined, told
to the model in words, put in OpenAI's strict form, and a call's arguments given back to the
server as it declared them.

Everything in such a schema is a third party's text: what the model reads of it is escaped, one
line each, clipped, and bounded for the whole tool, so no server floods the prompt; its prose
never goes into the step's schema (only the prompt, under the third-party header).
"""

from __future__ import annotations

import json
from typing import Any

REF_DEPTH = 8  # references followed inside one another
SCHEMA_BYTES = 32_000  # an inlined schema larger than this is not kept (references can multiply)
ENUM_KEPT = 200  # allowed values sent in a schema; more are the server's to check
STRICT_DEPTH = 5  # objects nested in a tool's arguments in strict form (OpenAI takes 10 in all)
NESTING = 3  # levels of nested fields told to the model
ARG_CHARS = 160  # of one argument's description
TOOL_CHARS = 1_500  # of all of one tool's argument lines
VALUES_SHOWN = 12  # allowed values named
VALUE_CHARS = 40
PROSE = ("description", "title", "examples", "$comment")
SCALARS = ("string", "integer", "number", "boolean", "null")
SIGNED = ("string", "integer", "number", "boolean", "array of string")  # the tool's line says
JSON_TEXT = {"type": "string"}  # what strict form cannot say, as JSON text (decoded for the call)


def inlined(schema: Any, *, prose: bool = True) -> Any:
    """`schema` with its local `$ref`s resolved (they point at its own root, which is not where
    it ends up) and `$defs` gone; without its prose (`prose=False`: descriptions, titles,
    examples) for the step's schema. A reference nested too deep, or to nowhere, stands for
    any value; a list of allowed values too long to send (ENUM_KEPT) is left to the server to
    check. ValueError where the result without prose is still too large to send."""
    done = _inlined(schema, None, 0, prose)
    size = 0 if prose else len(json.dumps(done, ensure_ascii=False))  # (prose: told, bounded)
    if size > SCHEMA_BYTES:
        raise ValueError(f"its arguments' schema is too large ({size:,} characters inlined)")
    return done


def _inlined(schema: Any, defs: dict[str, Any] | None, depth: int, prose: bool) -> Any:
    if isinstance(schema, list):
        return [_inlined(item, defs, depth, prose) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if defs is None:
        found = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
        defs = found if all(isinstance(k, str) for k in found) else {}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if depth >= REF_DEPTH or name not in defs or not ref.startswith("#/"):
            return {}
        return _inlined(defs[name], defs, depth + 1, prose)
    plain = {}
    for key, value in schema.items():
        if (key in PROSE and not prose) or key in ("$defs", "definitions", "$schema"):
            continue
        if key == "enum" and isinstance(value, list) and len(value) > ENUM_KEPT:
            continue  # its type stays; the server checks the value
        if key in ("properties", "patternProperties") and isinstance(value, dict):
            # (an argument may be called "title": only the schema's own prose goes)
            plain[key] = {name: _inlined(sub, defs, depth, prose) for name, sub in value.items()}
        else:
            plain[key] = _inlined(value, defs, depth, prose)
    return plain


# -- told to the model -----------------------------------------------------------------------


def argument_lines(schema: Any) -> list[str]:
    """The tool's arguments as the prompt lists them under its line: each one's type, whether
    it is required, its allowed values and default, and its description; the fields of nested
    objects (and arrays of them) below it, indented. Bounded: what does not fit is counted."""
    lines: list[str] = []
    _fields(inlined(schema), "    ", 0, lines)
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) > TOOL_CHARS:
            kept.append(f"    … and {len(lines) - len(kept)} more argument lines left out")
            break
        kept.append(line)
        used += len(line)
    return kept


def _fields(node: Any, indent: str, level: int, lines: list[str]) -> None:
    properties = node.get("properties") if isinstance(node, dict) else None
    if not isinstance(properties, dict):
        return
    required = node.get("required")
    required = set(required) if isinstance(required, list) else set()
    for name, sub in properties.items():
        about = [_kind(sub)]
        if name in required:
            about.append("required")
        if isinstance(sub, dict) and "default" in sub:
            about.append(f"default {_value(sub['default'])}")
        elif name not in required:
            about.append("optional")
        text = _described(sub.get("description") if isinstance(sub, dict) else None)
        nested: list[str] = []
        if level + 1 < NESTING:
            _fields(_object_of(sub), indent + "  ", level + 1, nested)
        told = text or nested or about[0] not in SIGNED or "default" in about[-1]
        if level == 0 and not told:
            continue  # the tool's line says all there is of it already
        lines += [f"{indent}- {_plain(str(name), 60)} ({', '.join(about)})" + text, *nested]


def _object_of(node: Any) -> Any:
    """The object whose fields a node has: itself, its array's items, or its one object option."""
    if not isinstance(node, dict):
        return None
    if node.get("type") == "array":
        return _object_of(node.get("items"))
    options = node.get("anyOf") or node.get("oneOf")
    if isinstance(options, list):
        objects = [o for o in options if isinstance(o, dict) and "properties" in o]
        return objects[0] if len(objects) == 1 else None
    return node


def _kind(node: Any, depth: int = 0) -> str:
    """A schema node's type in words: `string`, `array of object`, `one of "a", "b"`."""
    if not isinstance(node, dict) or not node or depth > 4:
        return "any JSON value"
    options = node.get("anyOf") or node.get("oneOf")
    if isinstance(options, list) and options:
        return " or ".join(dict.fromkeys(_kind(option, depth + 1) for option in options))
    if "const" in node:
        return f"exactly {_value(node['const'])}"
    values = node.get("enum")
    if isinstance(values, list) and values:
        named = ", ".join(_value(v) for v in values[:VALUES_SHOWN])
        return f"one of {named}" + (", …" if len(values) > VALUES_SHOWN else "")
    kind = node.get("type")
    if isinstance(kind, list) and kind:
        return " or ".join(_kind({**node, "type": k}, depth + 1) for k in kind)
    if kind == "array":
        return f"array of {_kind(node.get('items'), depth + 1)}"
    if kind == "object":
        return "object"
    if kind in SCALARS:
        shape = node.get("format")
        return f"{kind} ({_plain(shape, 30)})" if isinstance(shape, str) else str(kind)
    return "any JSON value"


def _value(value: Any) -> str:
    return _plain(json.dumps(value, ensure_ascii=False), VALUE_CHARS)


def _described(text: Any) -> str:
    return f": {_plain(text, ARG_CHARS)}" if isinstance(text, str) and text.strip() else ""


def _plain(text: str, limit: int) -> str:
    """A third party's text on one line, control characters spelled out, clipped."""
    from hephaistus.escape import one_line

    return one_line(text, limit)


# -- OpenAI's strict form, and back ----------------------------------------------------------


def strict(node: Any, depth: int = 0) -> dict[str, Any]:
    """A prose-free, inlined schema in OpenAI's strict form: every object's keys required,
    `additionalProperties: false`, the optional ones nullable. What that form cannot say (an
    object of any keys, any value, objects nested deeper than STRICT_DEPTH) is JSON text,
    decoded before the call (`as_declared`)."""
    if not isinstance(node, dict) or not node or depth > STRICT_DEPTH:
        return dict(JSON_TEXT)
    options = node.get("anyOf") or node.get("oneOf")
    if isinstance(options, list) and options:
        return {"anyOf": [strict(option, depth) for option in options]}
    values = node.get("enum")
    if isinstance(values, list) and values:
        scalar = all(v is None or isinstance(v, (str, int, float, bool)) for v in values)
        return {"enum": values} if scalar else dict(JSON_TEXT)
    if "const" in node:
        return {"enum": [node["const"]]}
    kind = node.get("type")
    if isinstance(kind, list) and kind:
        return {"anyOf": [strict({**node, "type": k}, depth) for k in kind]}
    if kind == "object":
        properties = node.get("properties")
        if not isinstance(properties, dict) or not properties:
            return dict(JSON_TEXT)
        listed = node.get("required")
        needed = listed if isinstance(listed, list) else []
        fields = {}
        for name, sub in properties.items():
            made = strict(sub, depth + 1)
            fields[name] = made if name in needed else {"anyOf": [made, {"type": "null"}]}
        return {
            "type": "object",
            "properties": fields,
            "required": list(fields),
            "additionalProperties": False,
        }
    if kind == "array":
        return {"type": "array", "items": strict(node.get("items"), depth)}
    if kind in SCALARS:
        return {"type": kind}
    return dict(JSON_TEXT)


def as_declared(value: Any, node: Any) -> Any:
    """A call's arguments as the server declared them, from what the model sent: the nulls
    strict form gave optional keys left out, and JSON text sent for an object or a list (what
    strict form could not say) decoded."""
    if not isinstance(node, dict):
        return value
    if isinstance(value, str) and _structured(node):
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        if isinstance(decoded, (dict, list)):
            value = decoded
    if isinstance(value, dict):
        fields = _object_of(node) or {}
        properties = fields.get("properties") if isinstance(fields, dict) else None
        properties = properties if isinstance(properties, dict) else {}
        needed = fields.get("required") if isinstance(fields, dict) else None
        needed = needed if isinstance(needed, list) else []
        return {
            key: as_declared(item, properties.get(key))
            for key, item in value.items()
            if item is not None or key in needed
        }
    if isinstance(value, list) and node.get("type") == "array":
        return [as_declared(item, node.get("items")) for item in value]
    return value


def _structured(node: dict[str, Any]) -> bool:
    """Whether a node takes an object or a list (or any value), and never a string: JSON text
    sent for it stands for its value."""
    options = node.get("anyOf") or node.get("oneOf")
    if isinstance(options, list):
        shapes = [option for option in options if isinstance(option, dict)]
        return any(_structured(o) for o in shapes) and not any(_takes_text(o) for o in shapes)
    if _takes_text(node):
        return False
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return kind is None or bool({"object", "array"} & set(kinds))


def _takes_text(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return "enum" in node or "const" in node or kind == "string" or "string" in (kind or [])
