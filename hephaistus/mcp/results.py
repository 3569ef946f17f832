"""What a tool call's result is to the model: every content kind the protocol has, as text.

Text stays as the server wrote it (text that looks like JSON too); an embedded text resource is
its text under its URI; a resource link its name and URI; images, audio and binary resources are
named with their size, never poured in as base64; structured content comes as JSON besides the
text, unless the text already says the same (as the SDKs' servers write it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CallResult:
    """What a call gave back: its text (content joined), and whether the tool said it failed."""

    text: str
    is_error: bool


def text_of(result: Any) -> str:
    """Every content kind as the model reads it: text as it is (JSON-looking text too); an
    embedded text resource as its text under its URI; a resource link as its name and URI;
    images, audio and binary resources named with their size (never poured in as base64);
    structured content as JSON besides the text, unless the text says the same."""
    parts = [_part(item) for item in result.content or ()]
    structured = result.structured_content
    if structured is not None and not any(_says(part, structured) for part in parts):
        parts.append(f"[structured content] {json.dumps(structured, ensure_ascii=False)}")
    return "\n".join(parts)


def text_of_contents(contents: Any) -> str:
    """A resource read (resources/read): each of its contents as an embedded resource is."""
    return "\n".join(_embedded(item) for item in contents or ())


def resource_line(resource: Any) -> str:
    """One resource of a listing (resources/list): its URI, name, type and description."""
    kind = getattr(resource, "mime_type", None)
    about = getattr(resource, "description", None)
    uri, name = getattr(resource, "uri", "?"), getattr(resource, "name", "?")
    line = f"- {_one_line(uri)} ({_one_line(name)}" + (f", {_one_line(kind)})" if kind else ")")
    return line + (f": {_one_line(about)}" if about else "")


def _embedded(resource: Any) -> str:
    uri = _one_line(getattr(resource, "uri", "?"))
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        return f"[resource {uri}]\n{text}"
    size = _decoded_size(getattr(resource, "blob", ""))
    return f"[resource {uri} ({_one_line(getattr(resource, 'mime_type', None))}, {size:,} bytes)]"


def _part(item: Any) -> str:
    kind = getattr(item, "type", "")
    if kind == "text":
        return str(item.text)
    if kind in ("image", "audio"):
        size = _decoded_size(getattr(item, "data", ""))
        return f"[{kind} {_one_line(getattr(item, 'mime_type', '?'))}, {size:,} bytes: not shown]"
    if kind == "resource":
        return _embedded(getattr(item, "resource", None))
    if kind == "resource_link":
        about = getattr(item, "description", None)
        named = f"[resource link {_one_line(getattr(item, 'name', '?'))}: "
        named += f"{_one_line(getattr(item, 'uri', '?'))}]"
        return named + (f" {_one_line(about)}" if about else "")
    return f"[{_one_line(kind or 'content')} left out]"


def _one_line(text: Any) -> str:
    """A name, URI or type from the server: one line, control characters spelled out."""
    from hephaistus.escape import one_line

    return one_line(str(text or "?"), 300)


def _decoded_size(data: Any) -> int:
    """The size of what base64 `data` holds."""
    text = data if isinstance(data, str) else ""
    return len(text) * 3 // 4 - text[-2:].count("=")


def _says(text: str, structured: Any) -> bool:
    """Whether `text` is the structured content as JSON, or the one result it wraps (as the
    SDKs' servers give a plain return value)."""
    if structured == {"result": text}:
        return True
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return value == structured or structured == {"result": value}
