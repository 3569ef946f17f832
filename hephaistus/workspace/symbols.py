"""Top-level symbols of source files, found by light line scanners instead of full parsers.

A full `ast.parse` of a large code base takes seconds; one compiled regular expression per
language, run over the whole text, finds the same declarations in a fraction of that. A few
false hits (a `def` inside a string at the start of a line) are an acceptable price for a map.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

MAX_SIGNATURE = 100
VERSION = 4  # bump when the scanners change, so cached symbols are redone

# Python: classes, functions, and methods one indentation level inside a class.
_PY = re.compile(
    r"^(?P<indent>[ \t]*)(?P<kind>class|def|async[ \t]+def)[ \t]+(?P<name>\w+)(?P<rest>[^\n]*)",
    re.M,
)
_JS = re.compile(
    r"^(?:export[ \t]+)?(?:default[ \t]+)?(?:async[ \t]+)?"
    r"(?P<kind>function\*?|class|interface|type|enum|const|let)[ \t]+(?P<name>[\w$]+)"
    r"(?P<rest>[^\n]*)",
    re.M,
)
_GO = re.compile(
    r"^(?P<kind>func|type)[ \t]+(?P<name>(?:\([^)]*\)[ \t]*)?\w+)(?P<rest>[^\n]*)", re.M
)
_RUST = re.compile(
    r"^(?:pub(?:\([^)]*\))?[ \t]+)?(?:async[ \t]+)?(?:unsafe[ \t]+)?"
    r"(?P<kind>fn|struct|enum|trait|impl|mod|type)[ \t]+(?P<name>[^\s{(<;]+)(?P<rest>[^\n]*)",
    re.M,
)
_JAVA = re.compile(
    r"^(?P<indent>[ \t]{0,4})(?:(?:public|protected|private|static|final|abstract|sealed)"
    r"[ \t]+)*(?P<kind>class|interface|enum|record|[\w<>\[\], ]+?)[ \t]+(?P<name>\w+)"
    r"[ \t]*(?P<rest>\([^)\n]*\)?|[^\n;=]*\{)",
    re.M,
)

LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".js": "js",
    ".jsx": "js",
    ".mjs": "js",
    ".cjs": "js",
    ".ts": "js",
    ".tsx": "js",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}


def is_test_file(rel: str) -> bool:
    """Whether `rel` is a test by its name (`test_*`, `*_test.py`, conftest.py) or its folder
    (`tests/`, `test/`)."""
    path = PurePosixPath(rel)
    return (
        path.name.startswith("test_")
        or path.name.endswith("_test.py")
        or path.name == "conftest.py"
        or any(p in ("tests", "test") for p in path.parts[:-1])
    )


def language_of(path: str) -> str | None:
    """The language whose scanner reads `path`, by its suffix; None when there is none."""
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return LANGUAGES.get(name[dot:]) if dot > 0 else None  # strings: this runs for every file


def scan(path: str, text: str) -> list[str]:
    """The file's top-level declarations, one line each, in file order."""
    language = language_of(path)
    if language == "python":
        return _python(text)
    if language == "js":
        return [_line(m["kind"], m["name"], _signature(m["rest"])) for m in _JS.finditer(text)]
    if language == "go":
        return [_line(m["kind"], m["name"], _signature(m["rest"])) for m in _GO.finditer(text)]
    if language == "rust":
        return [_line(m["kind"], m["name"], _signature(m["rest"])) for m in _RUST.finditer(text)]
    if language == "java":
        return _java(text)
    return []


def python_imports(text: str) -> list[str]:
    """Modules a Python file imports, dotted, as written (relative ones keep their dots)."""
    found = []
    for match in _IMPORT.finditer(text):
        if match["from"]:
            found.append(match["from"])
        else:
            found.extend(name.split(" as ")[0].strip() for name in match["names"].split(","))
    return [name for name in found if name]


_IMPORT = re.compile(
    r"^(?:from[ \t]+(?P<from>[\w.]+)[ \t]+import|import[ \t]+(?P<names>[\w., \t]+))", re.M
)


def _python(text: str) -> list[str]:
    symbols = []
    in_class = False
    for match in _PY.finditer(text):
        indent, kind, name = match["indent"], match["kind"], match["name"]
        if not indent:
            private = name.startswith("_") and not name.startswith("__")
            in_class = kind == "class" and not private
            if private:
                continue  # private helpers (and their methods): noise in a map of the code
            kind = "class" if in_class else " ".join(kind.split())
            symbols.append(_line(kind, name, _signature(_header(text, match), python=True)))
        elif (
            in_class
            and kind != "class"
            and indent in ("    ", "\t", "  ")
            and (not name.startswith("_") or name == "__init__")
        ):
            signature = _SELF.sub("(", _signature(_header(text, match), python=True), count=1)
            symbols.append("  " + _line("def", name, signature))
    return symbols


# A method's `self` or `cls` says nothing a map needs (callers do not pass it), as in Sphinx.
_SELF = re.compile(r"^\((?:self|cls)\b(?::[^,)]*)?(?:, |(?=\)))")


def _header(text: str, match: re.Match[str]) -> str:
    """The declaration's rest, continued onto the next lines while its parentheses are open."""
    rest = match["rest"]
    if rest.count("(") <= rest.count(")"):
        return rest
    return rest + text[match.end() : match.end() + 800]


def _java(text: str) -> list[str]:
    symbols = []
    for match in _JAVA.finditer(text):
        kind = match["kind"].strip()
        if kind in ("return", "new", "else", "throw") or match["name"] in ("if", "for", "while"):
            continue
        rest = match["rest"].rstrip("{").strip()
        prefix = "  " if match["indent"] else ""
        if kind in ("class", "interface", "enum", "record"):
            symbols.append(prefix + _line(kind, match["name"], ""))
        elif rest.startswith("("):
            symbols.append(prefix + f"{kind} {match['name']}{_signature(rest)}")
    return symbols


_GO_RECEIVER = re.compile(r"^\s*func\s+\([^)]*\)\s*")
_NAME_BEFORE_PARAMETERS = re.compile(r"([A-Za-z_$][\w$]*)\s*(?:<[^()]*>)?\s*\(")
_NAME_AFTER_KIND = re.compile(r"^\s*[\w*]+\s+([\w$]+)")


def name_of(line: str) -> str:
    """The name a symbol line (as scan() writes it) declares: `def area(r)` → area,
    `class Item` → Item, `func (s *Shop) Sell(n int)` → Sell, `int size()` → size."""
    line = _GO_RECEIVER.sub("", line)
    if "(" in line:
        found = _NAME_BEFORE_PARAMETERS.search(line)
        if found:
            return found[1]
    found = _NAME_AFTER_KIND.match(line)
    return found[1] if found else ""


def _line(kind: str, name: str, signature: str) -> str:
    return f"{kind} {name}{signature}"


def _signature(rest: str, python: bool = False) -> str:
    """The parameter list and return annotation, on one line, without the body."""
    rest = " ".join(rest.split()).replace("( ", "(").replace(", )", ")").replace(",)", ")")
    rest = rest.replace(" )", ")")
    if rest.startswith("("):
        depth = 0
        for index, char in enumerate(rest):
            depth += char in "([{"
            depth -= char in ")]}"
            if depth == 0:
                tail = rest[index + 1 :]
                if python:  # `-> type` up to the colon that opens the body
                    tail = tail.split(":", 1)[0].strip() if tail.strip().startswith("->") else ""
                else:  # a return type up to the body's brace
                    tail = tail.split("{", 1)[0].split(";", 1)[0].split(" = ", 1)[0].strip()
                joiner = "" if tail.startswith(":") else " "
                rest = rest[: index + 1] + (joiner + tail if tail else "")
                break
        else:
            rest = rest[:MAX_SIGNATURE]
    else:
        rest = rest.split("{", 1)[0].split("=", 1)[0].split(":", 1)[0].strip()
        rest = (" " + rest) if rest and not rest.startswith(("(", "<")) else rest
    return rest if len(rest) <= MAX_SIGNATURE else rest[:MAX_SIGNATURE] + "…"
