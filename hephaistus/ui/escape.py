"""Text from the model (or a file, a server, a command) made safe to show in a terminal.

A model that read a poisoned README can send escape sequences that move the cursor, erase the
lines above (hiding part of a diff shown for approval), retitle the window or write the
clipboard (OSC 52). Every control character except line feed and tab, the C1 range, Unicode
direction overrides and lone surrogates are shown as visible escapes (`\\x1b`, `\\u202e`), so
what the person sees is exactly what there is.
"""

from __future__ import annotations

import re

_CONTROLS = [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]
_DIRECTION = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_VISIBLE = {code: f"\\x{code:02x}" for code in _CONTROLS}
_VISIBLE.update({code: f"\\u{code:04x}" for code in [*_DIRECTION, *range(0xD800, 0xE000)]})
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def visible(text: str) -> str:
    """`text` with everything a terminal would act on spelled out; CRLF becomes LF."""
    if not _UNSAFE.search(text):
        return text
    return text.replace("\r\n", "\n").translate(_VISIBLE)


def json_safe(line: str) -> str:
    """A JSON text (json.dumps output) whose C1 controls, direction overrides and lone
    surrogates are \\u escapes too, as json.dumps already does for the C0 ones."""
    if not _UNSAFE.search(line):
        return line
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)
