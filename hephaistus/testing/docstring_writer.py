"""A stand-in for a model that answers `heph docs --fix` requests: for each name asked, a
docstring in the asked style that documents exactly the parameters of the code shown. It lets
the loopback server answer requests that arrive in any order (several at a time).

    server.responder = write_docstrings
"""

from __future__ import annotations

import ast
import re
import textwrap
from typing import Any

from hephaistus.docs.check import parse_tree

_SECTION = re.compile(r"^## (\S+) \((\w+); [^\n]*\)\n(?:```python\n(.*?)\n```)?", re.M | re.S)


def write_docstrings(body: dict[str, Any]) -> dict[str, Any]:
    """The reply to one `heph docs --fix` request (its JSON object)."""
    request = body["messages"][-1]["content"]
    style = re.search(r"^Style: (\w+)$", request, re.M)
    asked = _SECTION.findall(request.split("\nThe whole file, for context:")[0])
    return {
        "docstrings": [
            {"name": name, "docstring": _docstring(name, kind, code, style[1] if style else "")}
            for name, kind, code in asked
        ]
    }


def _docstring(name: str, kind: str, code: str, style: str) -> str:
    summary = f"What {name.split('#')[0]} is for."
    params = _parameters(code) if kind in ("function", "method") else []
    if not params:
        return summary
    if style == "sphinx":
        return "\n".join([summary, "", *(f":param {p}: the {p}." for p in params)])
    if style == "numpy":
        entries = [line for p in params for line in (p, f"    The {p}.")]
        return "\n".join([summary, "", "Parameters", "----------", *entries])
    return "\n".join([summary, "", "Args:", *(f"    {p}: the {p}." for p in params)])


def _parameters(code: str) -> list[str]:
    """The parameters of the first definition in `code` (its body may be cut short: then
    its header, the lines up to where a body could start, is read)."""
    lines = textwrap.dedent(code).splitlines()
    for attempt in ["\n".join(lines)] + [
        "\n".join(lines[:end]) + "\n    pass" for end in range(1, len(lines) + 1)
    ]:
        try:
            tree = parse_tree(attempt)  # one thread at a time, as heph parses (docs.check)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
                names += [a.arg for a in (args.vararg, args.kwarg) if a]
                return [n for n in names if n not in ("self", "cls")]
    return []
