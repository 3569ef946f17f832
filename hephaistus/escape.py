"""Text from the model (or a file, a server, a command) made safe to show in a terminal.

A model that read a poisoned README can send escape sequences that move the cursor, erase the
lines above (hiding part of a diff shown for approval), retitle the window or write the
clipboard (OSC 52). Every control character except line feed and tab, the C1 range, Unicode
direction overrides, characters that show as nothing (a zero-width space, a line separator, a
soft hyphen, Hangul fillers, tag characters, a byte-order mark) and lone surrogates are shown
as visible escapes (`\\x1b`, `\\u202e`), so what the person sees is exactly what there is.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

_CONTROLS = [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]
_DIRECTION = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
# Shown as nothing, or as a blank: text could hide behind them. (The joiners U+200C and U+200D
# are left alone: scripts and emoji need them.)
_INVISIBLE = [0x00AD, 0x115F, 0x1160, 0x180E, 0x200B, 0x2028, 0x2029, *range(0x2060, 0x2065)]
_INVISIBLE += [0x3164, 0xFEFF, 0xFFA0]
_TAGS = range(0xE0000, 0xE0080)
_VISIBLE = {code: f"\\x{code:02x}" for code in _CONTROLS}
_VISIBLE.update(
    {code: f"\\u{code:04x}" for code in [*_DIRECTION, *_INVISIBLE, *range(0xD800, 0xE000)]}
)
_VISIBLE.update({code: f"\\U{code:08x}" for code in _TAGS})
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
    "\u00ad\u115f\u1160\u180e\u200b\u2028\u2029\u2060-\u2064\u3164\ufeff\uffa0"
    "\U000e0000-\U000e007f]"
)
_NOT_ASCII = re.compile("[\x7f-\U0010ffff]")  # json.dumps escapes the C0 controls itself


def visible(text: str) -> str:
    """`text` with everything a terminal would act on spelled out; CRLF becomes LF."""
    if not _UNSAFE.search(text):
        return text
    return text.replace("\r\n", "\n").translate(_VISIBLE)


def one_line(text: str, limit: int) -> str:
    """Outside text on one line: what a terminal would act on spelled out, each run of
    whitespace one space, clipped to `limit` characters (… at the end where it was)."""
    line = " ".join(visible(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def safe(text: str) -> str:
    """`text` from outside heph as it may reach a terminal: the environment's secrets hidden,
    control characters visible."""
    from hephaistus.redact import hide_values, secret_values

    return visible(hide_values(text, secret_values()))


def outside_text(text: str, style: str = "") -> Text:
    """`text` from outside heph (a task, the model, a file, a server, a session) for rich, as
    every rich output takes it: a Text, so that `[/x]` is never read as markup nor `:warning:`
    as an emoji, with `safe`'s secrets hidden and control characters visible."""
    from rich.text import Text

    return Text(safe(text), style=style)


def json_safe(line: str, *, ascii_only: bool = False) -> str:
    """A JSON text (json.dumps output) whose C1 controls, direction overrides and lone
    surrogates are \\u escapes too, as json.dumps already does for the C0 ones; with
    `ascii_only` (for a stream that takes no UTF-8), every character beyond ASCII."""
    unsafe = _NOT_ASCII if ascii_only else _UNSAFE
    if not unsafe.search(line):
        return line
    return unsafe.sub(lambda m: _json_escape(ord(m.group())), line)


def takes_utf8(stream: object) -> bool:
    """Whether `stream` encodes text as UTF-8 (one whose encoding is unknown is taken to)."""
    encoding = str(getattr(stream, "encoding", None) or "utf-8").lower().replace("_", "-")
    return encoding in ("utf-8", "utf8")


def _json_escape(code: int) -> str:
    """`\\uXXXX`, or a surrogate pair of them for a character beyond the first plane."""
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
