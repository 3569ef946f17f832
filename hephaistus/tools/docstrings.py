"""Reading docstrings: the parameters they document, in the Google, NumPy and Sphinx styles.

Used by `heph docs` (which parameters a docstring documents, and where its parameter sections
are, so a fix can replace them and keep the rest) and by the tool registry (a tool's
description and its `Args:` entries become what the system prompt lists).

A docstring is read as lines. A parameter section is a `Block` of them: a Google section
(`Args:` and its indented entries), a NumPy section (`Parameters` underlined), or a run of
Sphinx fields (`:param x:`, `:type x:`). Keyword sections (`Keyword Args:`, `Other Parameters`,
`:keyword x:`) document names that may come through `**kwargs`, so they are not held to the
signature.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hephaistus.textfile import indentation

PARAMETER_HEADERS = ("Args:", "Arguments:", "Parameters:", "Params:")
KEYWORD_HEADERS = ("Keyword Args:", "Keyword Arguments:", "Other Parameters:", "Kwargs:")
GOOGLE_HEADERS = PARAMETER_HEADERS + KEYWORD_HEADERS

_STARS = r"(?:\\?\*){0,2}"  # *args, **kwargs, and Sphinx's escaped \*\*kwargs
_SPHINX_FIELD = re.compile(
    rf"^\s*:(param|parameter|arg|argument|key|keyword|type|kwtype)\s+(?:[^:]*\s)?{_STARS}"
    r"(\w+)\s*:"
)
_SPHINX_KEYWORD_FIELDS = ("key", "keyword", "kwtype")
_NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_NUMPY_TITLES = ("Parameters", "Other Parameters")
_TYPE = r"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"  # (int), (Sequence(Layout)), three deep
_GOOGLE_ENTRY = re.compile(rf"^{_STARS}(\w+)\s*(?:{_TYPE})?\s*:")
_NUMPY_ENTRY = re.compile(rf"^{_STARS}(\w+(?:\s*,\s*{_STARS}\w+)*)\s*(?::|$)")


@dataclass(frozen=True)
class Block:
    """Lines [start, end) of a docstring that document parameters."""

    start: int
    end: int
    style: str  # google | numpy | sphinx
    params: tuple[str, ...]  # must be in the signature
    keywords: tuple[str, ...]  # may come through **kwargs


@dataclass(frozen=True)
class Documented:
    """The names one docstring documents, from all its parameter sections."""

    params: list[str]  # must be in the signature
    keywords: list[str]  # may come through **kwargs


def parameter_blocks(docstring: str) -> list[Block]:
    """The parameter sections of a docstring, in order."""
    lines = docstring.splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        block = (
            _google_block(lines, index) or _numpy_block(lines, index) or _sphinx_block(lines, index)
        )
        if block is None:
            index += 1
            continue
        blocks.append(block)
        index = max(block.end, index + 1)
    return blocks


def style_of(docstring: str) -> str | None:
    """google, numpy or sphinx: the style of a docstring's parameter section, if it has one."""
    blocks = parameter_blocks(docstring)
    return blocks[0].style if blocks else None


def documented(docstring: str) -> Documented | None:
    """The names the docstring documents; None when it has no parameter section."""
    blocks = parameter_blocks(docstring)
    if not blocks:
        return None
    params = [n for b in blocks for n in b.params]
    keywords = [n for b in blocks for n in b.keywords]
    return Documented(list(dict.fromkeys(params)), list(dict.fromkeys(keywords)))


def documented_params(docstring: str) -> list[str] | None:
    """The parameter names the docstring documents; None when it has no parameter section."""
    found = documented(docstring)
    return None if found is None else found.params


def replace_parameters(old: str, new: str) -> str:
    """`old` with its parameter sections replaced by those of `new`: the summary, Returns,
    Raises, examples and the rest of `old` are kept. `new` when `old` has none."""
    old_blocks, new_blocks = parameter_blocks(old), parameter_blocks(new)
    if not old_blocks:
        return new
    old_lines, new_lines = old.splitlines(), new.splitlines()
    replacement = [line for b in new_blocks for line in _separated(new_lines, b, new_blocks)]
    kept = old_lines[: old_blocks[0].start] + replacement
    for block, following in zip(old_blocks, [*old_blocks[1:], None], strict=True):
        kept += old_lines[block.end : following.start if following else len(old_lines)]
    return _tidy("\n".join(kept))


def google_entries(docstring: str) -> dict[str, str]:
    """The entries of a Google-style docstring's parameter sections: name -> description
    (continuation lines joined)."""
    entries: dict[str, str] = {}
    lines = docstring.splitlines()
    for block in parameter_blocks(docstring):
        if block.style != "google":
            continue
        entry_indent = None
        current = None
        for line in lines[block.start + 1 : block.end]:
            if not line.strip():
                continue
            if entry_indent is None:
                entry_indent = _indent(line)
            match = _GOOGLE_ENTRY.match(line.strip()) if _indent(line) == entry_indent else None
            if match:
                current = match.group(1)
                entries[current] = line.strip()[match.end() :].strip()
            elif current is not None:
                entries[current] = f"{entries[current]} {line.strip()}".strip()
    return entries


def summary(docstring: str) -> str:
    """The docstring's text before its first Google section header."""
    lines = docstring.splitlines()
    for number, line in enumerate(lines):
        if line.strip() in GOOGLE_HEADERS:
            return "\n".join(lines[:number]).strip()
    return docstring.strip()


# -- the three styles ----------------------------------------------------------------------


def _google_block(lines: list[str], index: int) -> Block | None:
    header = lines[index].strip()
    if header not in GOOGLE_HEADERS:
        return None
    header_indent = _indent(lines[index])
    end = index + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > header_indent):
        end += 1
    end = _without_trailing_blanks(lines, index + 1, end)
    names: list[str] = []
    entry_indent = None
    for line in lines[index + 1 : end]:
        if not line.strip():
            continue
        entry_indent = _indent(line) if entry_indent is None else entry_indent
        match = _GOOGLE_ENTRY.match(line.strip()) if _indent(line) == entry_indent else None
        if match:
            names.append(match.group(1))
    return _block(index, end, "google", names, header in KEYWORD_HEADERS)


def _numpy_block(lines: list[str], index: int) -> Block | None:
    title = lines[index].strip()
    if title not in _NUMPY_TITLES or not _numpy_underlined(lines, index):
        return None
    header_indent = _indent(lines[index])
    names: list[str] = []
    end = index + 2
    while end < len(lines):
        line = lines[end]
        if line.strip():
            if _indent(line) < header_indent or _numpy_underlined(lines, end):
                break
            if _indent(line) == header_indent:
                entry = _NUMPY_ENTRY.match(line.strip())
                if not entry:
                    break
                names += [_bare(n) for n in entry.group(1).split(",")]
        end += 1
    end = _without_trailing_blanks(lines, index + 2, end)
    return _block(index, end, "numpy", names, title == "Other Parameters")


def _sphinx_block(lines: list[str], index: int) -> Block | None:
    """A run of parameter fields, each with its more indented continuation lines."""
    params: list[str] = []
    keywords: list[str] = []
    end = index
    while end < len(lines):
        field = _SPHINX_FIELD.match(lines[end])
        if not field:
            break
        if field.group(1) in _SPHINX_KEYWORD_FIELDS:
            keywords.append(field.group(2))
        elif field.group(1) != "type":
            params.append(field.group(2))
        field_indent = _indent(lines[end])
        end += 1
        while end < len(lines) and lines[end].strip() and _indent(lines[end]) > field_indent:
            end += 1
    if end == index:
        return None
    return Block(index, end, "sphinx", tuple(params), tuple(keywords))


def _block(start: int, end: int, style: str, names: list[str], keywords: bool) -> Block:
    if keywords:
        return Block(start, end, style, (), tuple(names))
    return Block(start, end, style, tuple(names), ())


def _numpy_underlined(lines: list[str], index: int) -> bool:
    return index + 1 < len(lines) and bool(_NUMPY_UNDERLINE.match(lines[index + 1]))


def _separated(lines: list[str], block: Block, blocks: list[Block]) -> list[str]:
    """The block's lines, with the blank line after it when it has one in its docstring."""
    taken = lines[block.start : block.end]
    if block is not blocks[-1] and block.end < len(lines) and not lines[block.end].strip():
        taken.append("")
    return taken


def _tidy(text: str) -> str:
    """No run of blank lines longer than one, none at the ends."""
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def _without_trailing_blanks(lines: list[str], start: int, end: int) -> int:
    while end > start and not lines[end - 1].strip():
        end -= 1
    return end


def _bare(name: str) -> str:
    return name.strip().replace("\\", "").lstrip("*")


def _indent(line: str) -> int:
    return len(indentation(line))
