"""Edits made from real changes, each with one mistake a model typically makes.

The changes are the differences between two successive releases of public projects (their sdists
on PyPI, pinned below with their sha256; downloaded once into ~/.cache/hephaistus-bench, never
stored here). Each changed file with 1 to 4 hunks becomes one change; each change becomes a
set of cases, one per mistake kind, for edit_file (search/replace) or patch_file (unified diff),
and each case runs through heph and, for comparison, through exact replacement, `git apply` and
`patch --fuzz=3`.

Verdicts: correct (the file is the release's), refused (nothing changed), partial (some edits or
hunks applied, others not), WRONG (the tool said it applied everything and the file is not the
release's, or a must-refuse case changed the file otherwise than right), crashed.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import os
import re
import subprocess
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hephaistus-bench"
FILES = "https://files.pythonhosted.org/packages"
RELEASES = [  # (project, old, new, old sdist, new sdist): path under FILES and sha256
    (
        "requests",
        "2.31.0",
        "2.32.0",
        (
            "9d/be/10918a2eac4ae9f02f6cfe6414b7a155ccd8f7f9d4380d62fd5b955065c3",
            "942c5a758f98d790eaed1a29cb6eefc7ffb0d1cf7af05c3d2791656dbd6ad1e1",
        ),
        (
            "28/a2/423f4d16d6934ef502f10ad56673719dd4345e656aedbd6687ccc359ffc5",
            "fa5490319474c82ef1d2c9bc459d3652e3ae4ef4c4ebdd18a21145a47ca4b6b8",
        ),
    ),
    (
        "attrs",
        "23.1.0",
        "23.2.0",
        (
            "97/90/81f95d5f705be17872843536b1868f351805acf6971251ff07c1b8334dbb",
            "6279836d581513a26f1bf235f9acd333bc9115683f14f7e8fae46c98fc50e015",
        ),
        (
            "e3/fc/f800d51204003fa8ae392c4e8278f256206e7a919b708eef054f5f4b650d",
            "935dc3b529c262f6cf76e50877d35a4bd3c1de194fd41f47a2b7ae8f19971f30",
        ),
    ),
    (
        "click",
        "8.1.3",
        "8.1.4",
        (
            "59/87/84326af34517fca8c58418d148f2403df25303e02736832403587318e9e8",
            "7682dc8afb30297001674575ea00d1814d808d6a36af415a82bd481d37ba7b8e",
        ),
        (
            "77/88/b0cc5fe95c31c301e9823ea9b028f669c0dcfa205ff71111037a5ed4892c",
            "b97d0c74955da062a7d4ef92fadb583806a585b2ea81958a81bd72726cbb8e37",
        ),
    ),
    (
        "rich",
        "13.6.0",
        "13.7.0",
        (
            "b1/0e/e5aa3ab6857a16dadac7a970b2e1af21ddf23f03c99248db2c01082090a3",
            "5c14d22737e6d5084ef4771b62d5d4363165b403455a30a1c8ca39dc7b644bef",
        ),
        (
            "a7/ec/4a7d80728bd429f7c0d4d51245287158a1516315cadbb146012439403a9d",
            "5cb5123b5cf9ee70584244246816e9114227e0b98ad9176eede6ad54bf5403fa",
        ),
    ),
]
TEXT_SUFFIXES = {
    ".py",
    ".pyi",
    ".md",
    ".rst",
    ".txt",
    ".toml",
    ".cfg",
    ".ini",
    ".yml",
    ".yaml",
    ".js",
    ".ts",
    ".css",
    ".html",
    ".json",
}
MAX_HUNKS = 4
MAX_FILE_LINES = 4000


# -- the changes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    project: str
    path: str
    before: str
    after: str


def changes() -> Iterator[Change]:
    for project, old, new, old_sdist, new_sdist in RELEASES:
        before = _sdist(project, old, *old_sdist)
        after = _sdist(project, new, *new_sdist)
        for path in sorted(set(before) & set(after)):
            if before[path] == after[path] or Path(path).suffix not in TEXT_SUFFIXES:
                continue
            a, b = before[path], after[path]
            if max(a.count("\n"), b.count("\n")) > MAX_FILE_LINES:
                continue
            if 1 <= len(_opcodes(a, b)) <= MAX_HUNKS:
                yield Change(project, path, a, b)


def _sdist(project: str, version: str, where: str, sha: str) -> dict[str, str]:
    """The text files of a release, by path inside the project."""
    name = f"{project}-{version}.tar.gz"
    archive = CACHE / name
    if not archive.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        data = urllib.request.urlopen(f"{FILES}/{where}/{name}", timeout=60).read()
        archive.write_bytes(data)
    data = archive.read_bytes()
    if hashlib.sha256(data).hexdigest() != sha:
        raise SystemExit(f"{archive}: sha256 differs from the pinned one; delete it and retry")
    files = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            handle = tar.extractfile(member)
            try:
                text = handle.read().decode("utf-8") if handle else None
            except UnicodeDecodeError:
                continue
            if text is not None and "\r" not in text:
                files[member.name.split("/", 1)[1]] = text
    return files


def _opcodes(a: str, b: str) -> list[list[tuple[str, int, int, int, int]]]:
    matcher = difflib.SequenceMatcher(None, a.splitlines(), b.splitlines(), autojunk=False)
    return list(matcher.get_grouped_opcodes(3))


# -- the cases -------------------------------------------------------------------------------


@dataclass
class Case:
    kind: str
    change: Change
    original: str  # the file before
    expected: str | None  # the file after a correct edit (None: only a refusal is right)
    edits: list[tuple[str, str]] = field(default_factory=list)  # (old, new) for edit_file
    diff: str | None = None  # for patch_file
    must_refuse: bool = False


def cases(change: Change) -> Iterator[Case]:
    a, b = change.before.splitlines(), change.after.splitlines()
    groups = _opcodes(change.before, change.after)
    hunks = [_hunk(a, b, group) for group in groups]
    yield from _edit_cases(change, a, hunks)
    yield from _diff_cases(change, a, b, groups, hunks)


@dataclass(frozen=True)
class Hunk:
    old_start: int  # 0-based
    lines: list[tuple[str, str]]  # (" " | "-" | "+", text)

    @property
    def before(self) -> list[str]:
        return [t for k, t in self.lines if k != "+"]

    @property
    def after(self) -> list[str]:
        return [t for k, t in self.lines if k != "-"]


def _hunk(a: list[str], b: list[str], group: list[tuple[str, int, int, int, int]]) -> Hunk:
    lines: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            lines += [(" ", line) for line in a[i1:i2]]
            continue
        lines += [("-", line) for line in a[i1:i2]]
        lines += [("+", line) for line in b[j1:j2]]
    return Hunk(group[0][1], lines)


def _text(lines: list[str]) -> str:
    return "\n".join(lines)


def _edit_cases(change: Change, a: list[str], hunks: list[Hunk]) -> Iterator[Case]:
    original, expected = change.before, change.after
    pairs = [(h.before, h.after) for h in hunks]
    as_text = [(_text(o), _text(n)) for o, n in pairs]
    yield Case("edit: exact", change, original, expected, as_text)
    for kind, shift in (
        ("edit: indent +4", lambda s: "    " + s if s else s),
        ("edit: indent +tab", lambda s: "\t" + s if s else s),
        ("edit: indent -4", _dedent4),
    ):
        shifted = [(_text([shift(x) for x in o]), _text([shift(x) for x in n])) for o, n in pairs]
        if kind == "edit: indent -4" and not all(_all_indented(o + n) for o, n in pairs):
            continue
        yield Case(kind, change, original, expected, shifted)
    if any(line != line.rstrip() for o, _ in pairs for line in o):
        stripped = [
            (_text([x.rstrip() for x in o]), _text([x.rstrip() for x in n])) for o, n in pairs
        ]
        yield Case("edit: trailing whitespace stripped", change, original, expected, stripped)
    yield Case(
        "edit: CRLF file, LF snippet",
        change,
        original.replace("\n", "\r\n"),
        expected.replace("\n", "\r\n"),
        as_text,
    )
    elided = [_elide(h) for h in hunks]
    if all(e is not None for e in elided):
        yield Case(
            "edit: middle line as ...",
            change,
            original,
            expected,
            [e for e in elided if e is not None],
        )
    short = _too_short(a, hunks[0])
    if short is not None:
        yield Case(
            "edit: snippet too short (must refuse)",
            change,
            original,
            None,
            [short],
            must_refuse=True,
        )


def _dedent4(line: str) -> str:
    return line[4:] if line.startswith("    ") else line


def _all_indented(lines: list[str]) -> bool:
    return all(line.startswith("    ") for line in lines if line.strip())


def _elide(hunk: Hunk) -> tuple[str, str] | None:
    """One unchanged line in the middle of the hunk (inside its leading or trailing context)
    written as `...` in both old and new."""
    first_change = next(i for i, (kind, _) in enumerate(hunk.lines) if kind != " ")
    if first_change < 3:
        return None
    marked = list(hunk.lines)
    marked[1] = (" ", "...")
    old = [t for k, t in marked if k != "+"]
    new = [t for k, t in marked if k != "-"]
    return _text(old), _text(new)


def _too_short(a: list[str], hunk: Hunk) -> tuple[str, str] | None:
    """A removed or context line that occurs several times in the file, sent alone."""
    for kind, line in hunk.lines:
        if kind != "+" and line.strip() and a.count(line) > 1:
            return line, line + "  # changed"
    return None


def _diff_cases(
    change: Change, a: list[str], b: list[str], groups: list, hunks: list[Hunk]
) -> Iterator[Case]:
    original, expected, path = change.before, change.after, change.path
    exact = "".join(
        difflib.unified_diff(
            [x + "\n" for x in a], [x + "\n" for x in b], f"a/{path}", f"b/{path}", n=3
        )
    )
    if not change.before.endswith("\n") or not change.after.endswith("\n"):
        return  # "no newline at end" markers: left out to keep the diffs simple
    yield Case("diff: exact git diff", change, original, expected, diff=exact)
    yield Case("diff: wrong line numbers", change, original, expected, diff=_renumber(exact, 37))
    yield Case(
        "diff: @@ ... @@",
        change,
        original,
        expected,
        diff=re.sub(r"^@@ .* @@.*$", "@@ ... @@", exact, flags=re.M),
    )
    yield Case(
        "diff: no headers",
        change,
        original,
        expected,
        diff="".join(
            line for line in exact.splitlines(True) if not line.startswith(("--- ", "+++ "))
        ),
    )
    yield Case(
        "diff: whitespace drift in context", change, original, expected, diff=_drift_context(exact)
    )
    wrong = _wrong_context_line(exact)
    if wrong is not None:
        yield Case("diff: one wrong context line", change, original, expected, diff=wrong)
    if len(hunks) > 1:
        yield Case(
            "diff: hunks out of order", change, original, expected, diff=_reverse_hunks(exact)
        )
    twice = _context_twice(a, hunks, path)
    if twice is not None:
        diff, right = twice
        yield Case(
            "diff: context matches twice (refuse or place right)",
            change,
            original,
            right,
            diff=diff,
            must_refuse=True,
        )
    codex = (
        "*** Begin Patch\n*** Update File: "
        + path
        + "\n"
        + "".join("@@\n" + "".join(f"{k}{t}\n" for k, t in h.lines) for h in hunks)
        + "*** End Patch\n"
    )
    yield Case("diff: Codex patch format", change, original, expected, diff=codex)


def _renumber(diff: str, offset: int) -> str:
    def shift(match: re.Match[str]) -> str:
        return (
            f"@@ -{int(match.group(1)) + offset}{match.group(2) or ''} "
            f"+{int(match.group(3)) + offset}{match.group(4) or ''} @@"
        )

    return re.sub(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", shift, diff, flags=re.M)


def _body_lines(diff: str) -> list[str]:
    return diff.splitlines(True)


def _drift_context(diff: str) -> str:
    """Context lines with trailing spaces added and runs of inner spaces squeezed."""
    out = []
    for line in _body_lines(diff):
        if line.startswith(" ") and line.strip():
            body = line[1:].rstrip("\n")
            indent = body[: len(body) - len(body.lstrip())]
            out.append(" " + indent + re.sub(r"  +", " ", body.lstrip()) + "  \n")
        else:
            out.append(line)
    return "".join(out)


def _wrong_context_line(diff: str) -> str | None:
    """The second context line of the first hunk with a word changed."""
    lines = _body_lines(diff)
    seen = 0
    for index, line in enumerate(lines):
        if line.startswith("@@"):
            seen = 0
        elif line.startswith(" ") and re.search(r"\w{3,}", line):
            seen += 1
            if seen == 2:
                lines[index] = re.sub(r"\w{3,}", "XXXX", line, count=1)
                return "".join(lines)
    return None


def _reverse_hunks(diff: str) -> str:
    lines = _body_lines(diff)
    head = [line for line in lines[:2] if line.startswith(("--- ", "+++ "))]
    hunks: list[list[str]] = []
    for line in lines[len(head) :]:
        if line.startswith("@@"):
            hunks.append([])
        hunks[-1].append(line)
    return "".join(head + [line for hunk in reversed(hunks) for line in hunk])


def _context_twice(a: list[str], hunks: list[Hunk], path: str) -> tuple[str, str] | None:
    """A one-line-context hunk whose context line is in the file twice: (diff, the right
    result if placed at the hunk's own place)."""
    for hunk in hunks:
        for index, (kind, line) in enumerate(hunk.lines):
            if (
                kind == " "
                and line.strip()
                and a.count(line) > 1
                and index + 1 < len(hunk.lines)
                and hunk.lines[index + 1][0] == "+"
            ):
                added = hunk.lines[index + 1][1]
                diff = f"--- a/{path}\n+++ b/{path}\n@@ ... @@\n {line}\n+{added}\n"
                at = hunk.old_start + sum(1 for k, _ in hunk.lines[: index + 1] if k != "+")
                right = a[:at] + [added] + a[at:]
                return diff, "\n".join(right) + "\n"
    return None


# -- the appliers ----------------------------------------------------------------------------

Applier = Callable[[Path, str, Case], tuple[int, int]]  # (applied, refused) calls or hunks


def apply_heph(root: Path, path: str, case: Case) -> tuple[int, int]:
    from hephaistus.testing.tools import run_tool
    from hephaistus.tools import ToolContext

    ctx = ToolContext(_workspace(root))
    calls: list[tuple[str, dict[str, str]]] = [
        ("edit_file", {"path": path, "old": old, "new": new}) for old, new in case.edits
    ]
    if case.diff is not None:
        calls = [("patch_file", {"path": path, "diff": case.diff})]
    applied = refused = 0
    for tool, args in calls:
        result = run_tool(ctx, tool, args)  # a write is prepared, then carried out
        applied, refused = applied + result.ok, refused + (not result.ok)
    return applied, refused


def apply_exact(root: Path, path: str, case: Case) -> tuple[int, int]:
    """Plain str.replace of a snippet found exactly once; a diff's hunks as exact text."""
    file = root / path
    text = file.read_bytes().decode("utf-8")
    pairs = list(case.edits)
    if case.diff is not None:
        from hephaistus.tools.editing.patching import PatchError, parse_patch

        try:
            pairs = [
                ("\n".join(h.before), "\n".join(h.after))
                for p in parse_patch(case.diff)
                for h in p.hunks
            ]
        except PatchError:
            return 0, 1
    applied = refused = 0
    for old, new in pairs:
        if old and text.count(old) == 1:
            text, applied = text.replace(old, new, 1), applied + 1
        else:
            refused += 1
    file.write_bytes(text.encode("utf-8"))
    return applied, refused


def apply_git(root: Path, path: str, case: Case) -> tuple[int, int]:
    if case.diff is None:
        return 0, 0
    done = subprocess.run(
        ["git", "apply", "--recount", "-"],
        cwd=root,
        input=case.diff,
        text=True,
        capture_output=True,
    )
    return (1, 0) if done.returncode == 0 else (0, 1)


def apply_patch(root: Path, path: str, case: Case) -> tuple[int, int]:
    if case.diff is None:
        return 0, 0
    done = subprocess.run(
        ["patch", "-p1", "--fuzz=3", "--no-backup-if-mismatch", "-r", "-", "-s", "-f", path],
        cwd=root,
        input=case.diff,
        text=True,
        capture_output=True,
    )
    failed = len(re.findall(r"FAILED", done.stdout + done.stderr))
    if done.returncode == 0:
        return 1, 0
    return (
        (1, 1) if failed and (root / path).read_bytes() != b"" and done.returncode == 1 else (0, 1)
    )


def _workspace(root: Path):  # noqa: ANN202 - the package's type, imported late
    from hephaistus.workspace import Workspace

    return Workspace.at(root)


APPLIERS: dict[str, Applier] = {
    "heph": apply_heph,
    "exact replace": apply_exact,
    "git apply": apply_git,
    "patch --fuzz=3": apply_patch,
}


def run(case: Case, applier: Applier) -> str:
    """The verdict of one case with one applier, or '' when it does not apply to the case."""
    if applier in (apply_git, apply_patch) and case.diff is None:
        return ""
    path = case.change.path
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        file = root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(case.original.encode("utf-8"))
        try:
            applied, refused = applier(root, path, case)
        except Exception:  # noqa: BLE001 - counted as a crash
            return "crashed"
        after = file.read_bytes().decode("utf-8", "replace")
    if after == case.original and not applied:
        return "refused"
    if after == case.expected:
        return "correct"
    if refused and applied and not case.must_refuse:
        return "partial"
    return "WRONG"  # said it applied all, or changed the file while refusing
