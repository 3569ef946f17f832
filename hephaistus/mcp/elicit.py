"""A server's question to the person (MCP `elicitation/create`, form mode): what it asks, each
field of its form, and the answer that goes back (accept with the values, decline, cancel).

The question arrives on the client's event loop while heph waits for the call that caused it;
the waiting thread (mcp.waiting) puts it to the person the way the run asks anything (the
terminal, or the editor) and hands the answer back. No one to ask: declined. The
fields are asked one by one; Enter takes the field's default (SEP-1034), so a form whose every
field has one is answered by pressing Enter. Everything the server wrote is shown escaped.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from hephaistus.escape import one_line, visible

Action = Literal["accept", "decline", "cancel"]
MESSAGE_CHARS = 2_000  # what of a server's message is shown
FIELDS = 20  # a longer form is declined: no person fills in a wall of questions


@dataclass(frozen=True)
class Field:
    """One field of a form: its name, its kind and what the server says of it."""

    name: str
    kind: str  # string, number, integer, boolean, choice, choices
    label: str  # the server's title and description, one escaped line
    required: bool
    default: Any = None
    choices: tuple[str, ...] = ()  # a choice's (and choices') allowed values
    bounds: tuple[float | None, float | None] = (None, None)  # length of a string, or value


@dataclass(frozen=True)
class Question:
    """What a server asks the person."""

    server: str
    message: str
    fields: tuple[Field, ...]

    def heading(self) -> str:
        """The question as the person reads it: escaped, clipped, its lines indented (a line of
        the server's never passes for one of heph's)."""
        said = visible(self.message[:MESSAGE_CHARS]).strip()
        said += "…" if len(self.message) > MESSAGE_CHARS else ""
        lines = "\n    ".join(line for line in said.splitlines() if line.strip())
        return f"The MCP server {visible(self.server)} asks: {lines}"

    def defaults(self) -> dict[str, Any] | None:
        """The answer of a person who takes every default; None when a required field has
        none."""
        if any(f.required and f.default is None for f in self.fields):
            return None
        return {f.name: f.default for f in self.fields if f.default is not None}


@dataclass(frozen=True)
class Reply:
    """The person's answer: the action, and the form's values when accepted."""

    action: Action
    content: dict[str, Any] = field(default_factory=dict)


DECLINED = Reply("decline")
Elicit = Callable[[Question], Reply]  # puts a Question to the person


def question_of(server: str, message: str, schema: dict[str, Any]) -> Question | None:
    """The Question a form asks, or None when its schema is not a form heph can ask (nested
    fields, too many of them)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or len(properties) > FIELDS:
        return None
    needed = schema.get("required")
    required = needed if isinstance(needed, list) else []
    fields = []
    for name, declared in properties.items():
        made = _field(str(name), declared if isinstance(declared, dict) else {}, name in required)
        if made is None:
            return None
        fields.append(made)
    return Question(server, str(message), tuple(fields))


def _field(name: str, declared: dict[str, Any], required: bool) -> Field | None:
    kind = declared.get("type")
    words = [str(declared[k]) for k in ("title", "description") if declared.get(k)]
    words = [w for w in words if w.strip().lower() != name.lower()]  # `nights (Nights)`: once
    label = one_line(f"{name} ({' - '.join(words)})" if words else name, 200)
    choices = _choices(declared)
    if kind == "array":
        items = declared.get("items")
        choices = _choices(items if isinstance(items, dict) else {})
        if not choices:
            return None
        made = Field(name, "choices", label, required, None, choices)
    elif choices:
        made = Field(name, "choice", label, required, None, choices)
    elif kind in ("string", "number", "integer", "boolean"):
        low, high = ("minLength", "maxLength") if kind == "string" else ("minimum", "maximum")
        bounds = (declared.get(low), declared.get(high))
        made = Field(name, kind, label, required, None, (), bounds)
    else:
        return None
    return replace(made, default=_checked_default(made, declared.get("default")))


def _checked_default(field_: Field, default: Any) -> Any:
    """The server's default where it is an answer the field takes (None: it has none)."""
    if field_.kind == "boolean" or default is None:
        return default if isinstance(default, bool) else None
    if field_.kind == "choices":
        parts = default if isinstance(default, list) else [default]
        return default if all(str(p) in field_.choices for p in parts) else None
    try:
        return value_of(field_, str(default))
    except ValueError:
        return None


def _choices(declared: dict[str, Any]) -> tuple[str, ...]:
    """The allowed values of an enum, or of a oneOf/anyOf of consts (SEP-1330)."""
    if isinstance(declared.get("enum"), list):
        return tuple(str(v) for v in declared["enum"])
    options = declared.get("oneOf") or declared.get("anyOf")
    if isinstance(options, list):
        return tuple(str(o["const"]) for o in options if isinstance(o, dict) and "const" in o)
    return ()


def value_of(field_: Field, typed: str) -> Any:
    """What the person typed for `field_` as the value the server asked for; ValueError (its
    message says why) when it is not one."""
    text = typed.strip()
    if field_.kind == "boolean":
        if text.lower() in ("y", "yes", "true"):
            return True
        if text.lower() in ("n", "no", "false"):
            return False
        raise ValueError("answer y or n")
    if field_.kind in ("choice", "choices"):
        picked = [_chosen(field_, part.strip()) for part in text.split(",") if part.strip()]
        picked = list(dict.fromkeys(picked))  # each once
        if field_.kind == "choice" and len(picked) != 1:
            raise ValueError("pick one of them, by its number or as written")
        return picked if field_.kind == "choices" else picked[0]
    if field_.kind in ("number", "integer"):
        whole = field_.kind == "integer"
        try:
            number: float | int = int(text) if whole else float(text)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise ValueError("a whole number, please" if whole else "a number, please")
        _within(field_, number, "")
        return number
    _within(field_, len(text), " characters")
    return text


def _chosen(field_: Field, part: str) -> str:
    if part.isdigit() and 1 <= int(part) <= len(field_.choices):
        return field_.choices[int(part) - 1]
    if part in field_.choices:
        return part
    raise ValueError(f"one of: {visible(', '.join(field_.choices))}")


def _within(field_: Field, measure: float, unit: str) -> None:
    low, high = field_.bounds
    if isinstance(low, (int, float)) and measure < low:
        raise ValueError(f"at least {low:g}{unit}")
    if isinstance(high, (int, float)) and measure > high:
        raise ValueError(f"at most {high:g}{unit}")


def prompt_of(field_: Field) -> str:
    """The line that asks for `field_`: its label, its choices, its default."""
    shown = field_.label
    if field_.choices:
        listed = ", ".join(f"{n}) {visible(c)}" for n, c in enumerate(field_.choices, 1))
        shown += f" [{listed}]"
    low, high = field_.bounds
    unit = " characters" if field_.kind == "string" else ""
    if isinstance(low, (int, float)) and isinstance(high, (int, float)):
        shown += f" ({low:g} to {high:g}{unit})"
    elif isinstance(low, (int, float)) or isinstance(high, (int, float)):
        shown += f" (at least {low:g}{unit})" if low is not None else f" (at most {high:g}{unit})"
    if field_.kind == "boolean":
        shown += " [y/n]"
    if field_.default is not None:
        default = field_.default
        said = ("yes" if default else "no") if isinstance(default, bool) else str(default)
        shown += f" (Enter: {visible(said)})"
    elif not field_.required:
        shown += " (Enter: leave out)"
    return f"  {shown}: "


def fill_in(
    question: Question,
    ask_line: Callable[[str], str],
    say: Callable[[str], None],
    shown: bool = False,
) -> Reply:
    """Ask each field of `question` by a line (`ask_line`), again while the answer is not one;
    Enter takes the default. The question is said first unless `shown` already. EOFError (no
    answer can come) declines; KeyboardInterrupt is the caller's (it cancels)."""
    if not shown:
        say(question.heading())
    content: dict[str, Any] = {}
    for field_ in question.fields:
        while True:
            try:
                typed = ask_line(prompt_of(field_))
            except EOFError:
                return DECLINED
            if not typed.strip():
                if field_.default is not None:
                    content[field_.name] = field_.default
                    break
                if not field_.required:
                    break
                say(f"  {visible(field_.name)} is needed")
                continue
            try:
                content[field_.name] = value_of(field_, typed)
                break
            except ValueError as why:
                say(f"  {why}")
    return Reply("accept", content)
