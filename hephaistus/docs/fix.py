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

from hephaistus.config import DocsConfig
from hephaistus.docs.check import Problem, Target, check_tree, targets
from hephaistus.protocol import FormatError, find_json_object
from hephaistus.seams import ModelReply
from hephaistus.textfile import indentation

CODE_LINES = 60  # of each target shown to the model
FILE_LINES = 400  # of the whole file shown for context


class DocsError(ValueError):
    """Why a file was left as it was."""


@dataclass
class FileResult:
    path: str
    asked: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    error: str | None = None
    new_source: str | None = None  # set when the file should be written


def fix_source(
    rel: str, source: str, config: DocsConfig, style: str, ask: Callable[[str, str], ModelReply]
) -> FileResult:
    """The file with its missing and stale docstrings written by the model (or why not)."""
    result = FileResult(rel)
    tree = ast.parse(source)
    problems = check_tree(rel, tree, config)
    if not problems:
        return result
    wanted = {p.name: p for p in problems}
    found = {t.name: t for t in targets(rel, tree, config) if t.name in wanted}
    result.asked = list(found)
    reply = ask(request_text(rel, source, list(found.values()), wanted, style), rel)
    try:
        docstrings = parse_reply(reply.text, set(found))
    except DocsError as error:
        result.error = str(error)
        return result
    lines = source.splitlines(keepends=True)
    # Bottom-up, so the line numbers of the targets above stay valid.
    for name in sorted(docstrings, key=lambda n: _anchor(found[n]), reverse=True):
        try:
            lines = _place(lines, found[name], docstrings[name])
        except DocsError as error:
            result.error = f"{name}: {error}"
            return result
        result.written.insert(0, name)
    new_source = "".join(lines)
    try:
        verify_only_docstrings_changed(source, new_source)
    except DocsError as error:
        result.error = str(error)
        return result
    result.new_source = new_source
    return result


def request_text(
    rel: str, source: str, wanted: list[Target], problems: dict[str, Problem], style: str
) -> str:
    lines = source.splitlines()
    parts = [f"File: {rel}", f"Style: {style}", "", "Write docstrings for:"]
    for target in wanted:
        problem = problems[target.name]
        parts.append(f"\n## {target.name} ({target.kind}; {problem.reason})")
        if target.kind != "module":
            start = target.node.lineno - 1  # type: ignore[attr-defined]
            decorators = getattr(target.node, "decorator_list", [])
            if decorators:
                start = min(d.lineno for d in decorators) - 1
            end = min(target.node.end_lineno or start + 1, start + CODE_LINES)  # type: ignore
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
    text = text.strip()
    for quote in ('"""', "'''"):
        if text.startswith(quote) and text.endswith(quote) and len(text) >= 6:
            text = text[3:-3].strip()
    text = text.replace('"""', '\\"\\"\\"')
    lines = [line.rstrip() for line in text.splitlines()]
    # The model may indent the body lines as in a file: take the common indent away.
    body = [line for line in lines[1:] if line.strip()]
    common = min((len(line) - len(line.lstrip()) for line in body), default=0)
    return "\n".join([lines[0], *[line[common:] for line in lines[1:]]]) if lines else ""


def verify_only_docstrings_changed(old: str, new: str) -> None:
    try:
        new_tree = ast.parse(new)
    except SyntaxError as error:
        raise DocsError(
            f"the new source would not parse ({error.msg}, line {error.lineno})"
        ) from None
    if _without_docstrings(ast.parse(old)) != _without_docstrings(new_tree):
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
        gap = ["\n"] if at < len(lines) and lines[at].strip() else []
        return lines[:at] + [_quoted(text, "") + "\n", *gap] + lines[at:]
    if first is None or first.lineno == node.lineno:  # type: ignore[attr-defined]
        raise DocsError("its body is on the same line as its definition")
    indent = indentation(lines[first.lineno - 1])
    if has_doc:
        return _replace(lines, first, text, indent)  # type: ignore[arg-type]
    # Before the first statement, or before its decorators when it is a decorated definition.
    at = min([first.lineno, *[d.lineno for d in getattr(first, "decorator_list", [])]]) - 1
    gap = ["\n"] if isinstance(node, ast.ClassDef) and lines[at].strip() else []
    return lines[:at] + [_quoted(text, indent) + "\n", *gap] + lines[at:]


def _replace(lines: list[str], docstring: ast.Expr, text: str, indent: str) -> list[str]:
    start, end = docstring.lineno - 1, (docstring.end_lineno or docstring.lineno)
    tail = lines[end - 1][docstring.end_col_offset or 0 :]
    return lines[:start] + [_quoted(text, indent) + (tail if tail.strip() else "\n")] + lines[end:]


def _quoted(text: str, indent: str) -> str:
    prefix = "r" if "\\" in text else ""
    lines = text.splitlines()
    if len(lines) == 1:
        return f'{indent}{prefix}"""{lines[0]}"""'
    body = "\n".join(f"{indent}{line}" if line else "" for line in lines[1:])
    return f'{indent}{prefix}"""{lines[0]}\n{body}\n{indent}"""'


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
