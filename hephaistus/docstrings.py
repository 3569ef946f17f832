"""Reading docstrings: the parameters they document, in the Google, NumPy and Sphinx styles.

Used by `heph docs` (which parameters a docstring documents) and by the tool registry (a tool's
description and its `Args:` entries become what the system prompt lists).
"""

from __future__ import annotations

import re

from hephaistus.textfile import indentation

GOOGLE_HEADERS = (
    "Args:",
    "Arguments:",
    "Parameters:",
    "Params:",
    "Keyword Args:",
    "Keyword Arguments:",
)
_SPHINX = re.compile(
    r"^\s*:(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?\*{0,2}"
    r"(\w+)\s*:",
    re.M,
)
_NUMPY_HEADER = re.compile(r"^(\s*)(Parameters|Other Parameters)\s*\n\1-{3,}\s*$", re.M)
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:")
_NUMPY_ENTRY = re.compile(r"^\*{0,2}(\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::|$)")


def style_of(docstring: str) -> str | None:
    """google, numpy or sphinx: the style of a docstring's parameter section, if it has one."""
    if _SPHINX.search(docstring):
        return "sphinx"
    if _NUMPY_HEADER.search(docstring):
        return "numpy"
    if any(re.search(rf"^\s*{re.escape(h)}\s*$", docstring, re.M) for h in GOOGLE_HEADERS):
        return "google"
    return None


def documented_params(docstring: str) -> list[str] | None:
    """The parameter names the docstring documents; None when it has no parameter section."""
    style = style_of(docstring)
    if style == "sphinx":
        return _SPHINX.findall(docstring)
    if style == "numpy":
        return _numpy(docstring)
    if style == "google":
        return _google(docstring)
    return None


def _google(docstring: str) -> list[str]:
    return list(google_entries(docstring))


def google_entries(docstring: str) -> dict[str, str]:
    """The entries of a Google-style docstring's parameter sections: name -> description
    (continuation lines joined)."""
    entries: dict[str, str] = {}
    lines = docstring.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.strip() in GOOGLE_HEADERS:
            header_indent = _indent(line)
            entry_indent = None
            current = None
            index += 1
            while index < len(lines):
                entry = lines[index]
                if entry.strip() and _indent(entry) <= header_indent:
                    break  # the next section
                if entry.strip():
                    if entry_indent is None:
                        entry_indent = _indent(entry)
                    match = (
                        _GOOGLE_ENTRY.match(entry.strip())
                        if _indent(entry) == entry_indent
                        else None
                    )
                    if match:
                        current = match.group(1)
                        entries[current] = entry.strip()[match.end() :].strip()
                    elif current is not None:
                        entries[current] = f"{entries[current]} {entry.strip()}".strip()
                index += 1
            continue
        index += 1
    return entries


def summary(docstring: str) -> str:
    """The docstring's text before its first Google section header."""
    lines = docstring.splitlines()
    for number, line in enumerate(lines):
        if line.strip() in GOOGLE_HEADERS:
            return "\n".join(lines[:number]).strip()
    return docstring.strip()


def _numpy(docstring: str) -> list[str]:
    names: list[str] = []
    lines = docstring.splitlines()
    for match in _NUMPY_HEADER.finditer(docstring):
        header_indent = len(match.group(1).replace("\n", ""))
        start = docstring[: match.end()].count("\n") + 1
        for line in lines[start:]:
            if not line.strip():
                continue
            if _indent(line) < header_indent:
                break
            if _indent(line) == header_indent:
                stripped = line.strip()
                if re.match(r"^-{3,}$", stripped):
                    break  # the underline of the next section
                entry = _NUMPY_ENTRY.match(stripped)
                if not entry:
                    break
                following = (
                    lines[lines.index(line) + 1] if lines.index(line) + 1 < len(lines) else ""
                )
                if re.match(r"^\s*-{3,}\s*$", following):
                    break  # a new section title
                names.extend(n.strip().lstrip("*") for n in entry.group(1).split(","))
    return names


def _indent(line: str) -> int:
    return len(indentation(line))
