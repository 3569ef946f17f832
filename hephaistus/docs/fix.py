"""`heph docs --fix`: ask the model for the missing and stale docstrings of each file, insert
them, and write the file only if its code, docstrings aside, is exactly what it was.

One request per file, listing only what needs a docstring. The reply is one JSON object,
`{"docstrings": [{"name": "Class.method", "docstring": "text"}]}`, keyed by the names asked for.
Before writing, old and new source are parsed and compared with every docstring removed; any
difference leaves the file as it was. Writes are atomic and checkpointed, so `heph undo` works.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from hephaistus.docs.check import (
    Target,
    Unreadable,
    check_tree,
    parse,
    parse_tree,
    signature_params,
    targets,
)
from hephaistus.escape import visible
from hephaistus.model.protocol import FormatError, find_json_object
from hephaistus.settings.config import DocsConfig
from hephaistus.textfile import indentation
from hephaistus.tools.docstrings import parameter_blocks, replace_parameters
from hephaistus.tools.editing.indenting import file_unit
from hephaistus.values import ModelReply

CODE_LINES = 60  # of each target shown to the model
FILE_LINES = 400  # of the whole file shown for context


class DocsError(ValueError):
    """Why a file was left as it was."""


@dataclass
class FileResult:
    """What became of one file: the names asked for, those written, those that could not be
    placed, and the new source to write (or why there is none)."""

    path: str
    asked: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    error: str | None = None
    new_source: str | None = None  # set when the file should be written
    refused: dict[str, str] = field(default_factory=dict)  # target key -> why it was not placed


def fix_source(
    rel: str, source: str, config: DocsConfig, style: str, ask: Callable[[str, str], ModelReply]
) -> FileResult:
    """The file with its missing and stale docstrings written by the model (or why not).
    A docstring that cannot be placed is left out and named; the others are still written."""
    result = FileResult(rel)
    try:
        tree = parse(source)
    except Unreadable as error:
        result.error = str(error)
        return result
    problems = {(p.line, p.name): p for p in check_tree(rel, tree, config)}
    if not problems:
        return result
    found = {t.key: t for t in targets(rel, tree, config) if (t.line, t.name) in problems}
    reasons = {key: problems[(t.line, t.name)].reason for key, t in found.items()}
    result.asked = list(found)
    try:
        reply = ask(request_text(rel, source, list(found.values()), reasons, style), rel)
        docstrings = parse_reply(reply.text, set(found))
    except DocsError as error:
        result.error = str(error)
        return result
    placed, refused = place_all(source, [(found[key], text) for key, text in docstrings.items()])
    result.written = [key for key in found if key in docstrings and key not in refused]
    result.refused = refused
    if result.written:
        result.new_source = placed
    elif refused:
        result.error = "; ".join(f"{key}: {why}" for key, why in refused.items())
    return result


def place_all(source: str, docstrings: list[tuple[Target, str]]) -> tuple[str, dict[str, str]]:
    """`source` with the docstrings placed, and why any could not be (by target key). All are
    tried at once; when the result is not the same code, each is tried alone to find which."""
    refused: dict[str, str] = {}
    usable = []
    for target, text in docstrings:
        try:
            usable.append((target, _merged(target, text)))
        except DocsError as error:
            refused[target.key] = str(error)
    try:
        return _placed_and_verified(source, usable), refused
    except DocsError:
        pass
    good = []
    for target, text in usable:
        try:
            _placed_and_verified(source, [(target, text)])
            good.append((target, text))
        except DocsError as error:
            refused[target.key] = str(error)
    try:
        return _placed_and_verified(source, good), refused
    except DocsError as error:  # each fits alone but not together: write none
        refused.update((target.key, str(error)) for target, _ in good)
        return source, refused


def _placed_and_verified(source: str, docstrings: list[tuple[Target, str]]) -> str:
    lines = source.splitlines(keepends=True)
    # Bottom-up, so the line numbers of the targets above stay valid.
    for target, text in sorted(docstrings, key=lambda pair: _anchor(pair[0]), reverse=True):
        lines = _place(lines, target, text)
    new_source = "".join(lines)
    verify_only_docstrings_changed(source, new_source)
    return new_source


def _merged(target: Target, text: str) -> str:
    """The text to write: for a stale docstring, the old one with only its parameter sections
    replaced by the reply's, so Returns, Raises and examples that were right are kept."""
    node = target.node
    old = ast.get_docstring(node, clean=True)  # type: ignore[arg-type]
    if old is None or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return text
    if not parameter_blocks(text) and signature_params(node):
        raise DocsError("the reply has no parameter section to replace the stale one")
    return replace_parameters(old, text)


def request_text(
    rel: str, source: str, wanted: list[Target], reasons: dict[str, str], style: str
) -> str:
    """The request about one file: each target's code and why it needs a docstring, then the file
    itself (the first FILE_LINES lines) for context."""
    lines = source.splitlines()
    parts = [f"File: {rel}", f"Style: {style}", "", "Write docstrings for:"]
    for target in wanted:
        parts.append(f"\n## {target.key} ({target.kind}; {reasons[target.key]})")
        if target.kind != "module":
            start = target.node.lineno - 1  # type: ignore[attr-defined]
            decorators = getattr(target.node, "decorator_list", [])
            if decorators:
                start = min(d.lineno for d in decorators) - 1
            # The whole signature and the old docstring, however long, then some of the body.
            first = target.node.body[0]  # type: ignore[attr-defined]
            shown = max(start + CODE_LINES, first.end_lineno or first.lineno)
            end = min(target.node.end_lineno or start + 1, shown)  # type: ignore[attr-defined]
            parts.append("```python\n" + "\n".join(lines[start:end]) + "\n```")
    shown = "\n".join(lines[:FILE_LINES])
    more = f"\n# ... {len(lines) - FILE_LINES} more lines" if len(lines) > FILE_LINES else ""
    parts.append(f"\nThe whole file, for context:\n```python\n{shown}{more}\n```")
    return "\n".join(parts)


def parse_reply(text: str, asked: set[str]) -> dict[str, str]:
    """The docstrings of the reply, by name; DocsError when the reply is not of that shape."""
    try:
        data = find_json_object(text)
    except FormatError as error:
        raise DocsError(f"the model's reply was not JSON: {error.problem}") from None
    items = data.get("docstrings")
    if not isinstance(items, list):
        raise DocsError("the model's reply has no 'docstrings' list")
    found: dict[str, str] = {}
    for item in items:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("name"), str)
            or not isinstance(item.get("docstring"), str)
        ):
            raise DocsError("each entry of 'docstrings' needs a string 'name' and 'docstring'")
        name, text = item["name"], clean_docstring(item["docstring"])
        if name in asked and text:
            found[name] = text
    return found


def clean_docstring(text: str) -> str:
    """The model's text as a docstring's: control characters, direction overrides (which can
    make code read otherwise than it runs) and lone surrogates spelled out, outer quotes and
    the indentation of a copy from a file taken away."""
    text = visible(text).strip()
    for quote in ('"""', "'''"):
        if text.startswith(quote) and text.endswith(quote) and len(text) >= 6:
            text = text[3:-3].strip()
    lines = [line.rstrip() for line in text.splitlines()]
    # The model may indent the body lines as in a file: take the common indent away.
    body = [line for line in lines[1:] if line.strip()]
    common = min((len(line) - len(line.lstrip()) for line in body), default=0)
    return "\n".join([lines[0], *[line[common:] for line in lines[1:]]]) if lines else ""


def verify_only_docstrings_changed(old: str, new: str) -> None:
    """Raise DocsError unless `new` parses and differs from `old` in docstrings only."""
    try:
        new_tree = parse_tree(new)
    except (MemoryError, RecursionError):
        raise DocsError("the new source is nested too deeply for Python's parser") from None
    except SyntaxError as error:
        raise DocsError(
            f"the new source would not parse ({error.msg}, line {error.lineno})"
        ) from None
    try:
        same = _without_docstrings(parse_tree(old)) == _without_docstrings(new_tree)
    except (MemoryError, RecursionError):  # when unsure, refuse
        raise DocsError(
            "the code is nested too deeply to check that only docstrings changed"
        ) from None
    if not same:
        raise DocsError("inserting the docstrings would have changed the code itself")


def _without_docstrings(tree: ast.Module) -> str:
    tree = copy.deepcopy(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def _anchor(target: Target) -> int:
    node = target.node
    if isinstance(node, ast.Module):
        return 0
    return node.lineno  # type: ignore[attr-defined, no-any-return]


def _place(lines: list[str], target: Target, text: str) -> list[str]:
    """`lines` with `text` as the target's docstring, replacing the old one if any."""
    node = target.node
    body = node.body  # type: ignore[attr-defined]
    first = body[0] if body else None
    has_doc = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    if isinstance(node, ast.Module):
        if has_doc:
            return _replace(lines, first, text, "")  # type: ignore[arg-type]
        at = _module_insert_line(lines)
        return (
            lines[:at]
            + [_quoted(text, "") + "\n", *_gap_after_module_docstring(lines, at)]
            + lines[at:]
        )
    if first is None:
        raise DocsError("it has no body")
    if lines[first.lineno - 1][: first.col_offset].strip():
        return _split_header_line(lines, node, first, text, has_doc)  # type: ignore[arg-type]
    indent = indentation(lines[first.lineno - 1])
    if has_doc:
        return _replace(lines, first, text, indent)  # type: ignore[arg-type]
    # Before the first statement, or before its decorators when it is a decorated definition.
    at = min([first.lineno, *[d.lineno for d in getattr(first, "decorator_list", [])]]) - 1
    gap = ["\n"] if isinstance(node, ast.ClassDef) and lines[at].strip() else []
    return lines[:at] + [_quoted(text, indent) + "\n", *gap] + lines[at:]


def _split_header_line(
    lines: list[str], node: ast.stmt, first: ast.stmt, text: str, has_doc: bool
) -> list[str]:
    """`def f(): return 1` (or a stub's `...`, or the last line of a long signature) split
    as a formatter would: the header, the docstring, then the body on its own line."""
    row = first.lineno - 1
    header = lines[row][: first.col_offset].rstrip()
    outer = indentation(lines[node.lineno - 1])
    unit = "\t" if "\t" in outer else file_unit([line.rstrip("\r\n") for line in lines])
    indent = outer + (unit if unit and unit != " " else "    ")
    if has_doc:  # the rest of the docstring's last line, past a `;`, stays as the body
        last = (first.end_lineno or first.lineno) - 1
        rest = lines[last][first.end_col_offset or 0 :].lstrip(" \t;")
        replaced = range(row, last + 1)
    else:
        rest = lines[row][first.col_offset :]
        replaced = range(row, row + 1)
    new = [header + "\n", _quoted(text, indent) + "\n"]
    if rest.strip():
        new.append(indent + rest)
    return lines[: replaced.start] + new + lines[replaced.stop :]


def _gap_after_module_docstring(lines: list[str], at: int) -> list[str]:
    """Blank lines to add after a new module docstring: one before other code, two before a
    top-level definition (a comment above it goes with it), as `ruff format` leaves it."""
    blank = 0
    while at + blank < len(lines) and not lines[at + blank].strip():
        blank += 1
    following = at + blank
    while following < len(lines) and lines[following].lstrip().startswith("#"):
        following += 1
    if following >= len(lines):
        return []
    definition = lines[following].startswith(("def ", "async def ", "class ", "@"))
    return ["\n"] * max(0, (2 if definition else 1) - blank)


def _replace(lines: list[str], docstring: ast.Expr, text: str, indent: str) -> list[str]:
    start, end = docstring.lineno - 1, (docstring.end_lineno or docstring.lineno)
    tail = lines[end - 1][docstring.end_col_offset or 0 :]
    return lines[:start] + [_quoted(text, indent) + (tail if tail.strip() else "\n")] + lines[end:]


def _quoted(text: str, indent: str) -> str:
    """The docstring as source, any text: in triple double quotes (single when the text has
    three double), raw when it has a backslash, a one-line one ending in a quote or a
    backslash padded with a space so the closing quotes still close it."""
    quotes = '"""' if '"""' not in text else "'''"
    prefix = "r" if "\\" in text else ""
    if quotes in text:  # both kinds inside: a plain string with everything escaped
        prefix, quotes = "", '"""'
        text = text.replace("\\", "\\\\").replace('"', '\\"')
    lines = text.splitlines()
    if len(lines) == 1:
        padding = " " if lines[0].endswith((quotes[0], "\\")) else ""
        return f"{indent}{prefix}{quotes}{lines[0]}{padding}{quotes}"
    body = "\n".join(f"{indent}{line}" if line else "" for line in lines[1:])
    return f"{indent}{prefix}{quotes}{lines[0]}\n{body}\n{indent}{quotes}"


_HEADER_COMMENT = re.compile(r"^#(!|.*coding[:=])")


def _module_insert_line(lines: list[str]) -> int:
    """After a shebang and an encoding line, before everything else."""
    at = 0
    while at < len(lines) and at < 2 and _HEADER_COMMENT.match(lines[at]):
        at += 1
    return at


def detect_style(sources: list[str]) -> str:
    """The docstring style most used in these sources (google when none is)."""
    counts = {"google": 0, "numpy": 0, "sphinx": 0}
    for source in sources:
        counts["sphinx"] += len(re.findall(r"^\s*:param\b", source, re.M))
        counts["numpy"] += len(re.findall(r"^\s*Parameters\n\s*-{3,}", source, re.M))
        counts["google"] += len(re.findall(r"^\s*(?:Args|Arguments):\s*$", source, re.M))
    best = max(counts, key=lambda k: counts[k])
    return best if counts[best] else "google"
