"""Runs the edit tools over an edit corpus (real model edits with original and expected files).

Layout per case: case.json (id, format, expected_outcome, target_files, ...), original/,
expected/, the edit itself (edit.md, edit.txt, edit.json, edit.diff, edit.patch) and, for aider's
chat-history cases, blocks.json. Search/replace edits go to edit_file, unified diffs and Codex
patches to patch_file; other formats are skipped. Used by edits.py and by the test suite.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hephaistus.testing.tools import run_tool
from hephaistus.tools import ToolContext
from hephaistus.workspace import Workspace

EDIT_FORMATS = {"search_replace", "search_replace_json"}
PATCH_FORMATS = {"udiff_llm", "udiff_git", "v4a_apply_patch"}
BLOCK = re.compile(r"<<<<<<< SEARCH\n(.*?)^=======\n(.*?)^>>>>>>> REPLACE", re.S | re.M)

# (path, old, new) for edit_file, or (path, diff) for patch_file
Call = tuple[str, str, str] | tuple[str, str]


@dataclass(frozen=True)
class CaseResult:
    case_id: str
    format: str
    expected: str  # apply | reject | parse
    # correct | kept-whitespace | refused | wrong | skipped | parsed | parse-failed
    verdict: str
    detail: str = ""

    @property
    def passed(self) -> bool:
        if self.expected == "reject":
            return self.verdict == "refused"
        return self.verdict in ("correct", "kept-whitespace", "parsed")


def case_folders(root: Path) -> Iterator[Path]:
    for folder in sorted(root.iterdir()):
        if (folder / "case.json").is_file() or (folder / "blocks.json").is_file():
            yield folder


def run_case(folder: Path, *, naive: bool = False) -> CaseResult:
    meta = _meta(folder)
    case_id, fmt, expected = meta["id"], meta["format"], meta["expected_outcome"]
    if fmt not in EDIT_FORMATS | PATCH_FORMATS:
        return CaseResult(case_id, fmt, expected, "skipped", "format not accepted by heph")
    calls = _calls(folder, meta)
    if expected == "parse":
        return _parse_only(folder, meta, case_id, fmt)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # The shared corpus is read-only; its copy is a person's files, writable (no modes).
        shutil.copytree(
            folder / "original", root, dirs_exist_ok=True, copy_function=shutil.copyfile
        )
        ctx = ToolContext(Workspace.at(root))
        apply = _naive_apply if naive else _tool_apply
        refusals = []
        for number, call in enumerate(calls, 1):
            before = _snapshot(root)
            failure = apply(ctx, call)
            if failure is None:
                continue
            if _snapshot(root) != before:
                return CaseResult(case_id, fmt, expected, "wrong", "a failed edit changed files")
            where = f"edit {number} of {len(calls)}: " if len(calls) > 1 else ""
            refusals.append(where + failure.splitlines()[0])
        after = _snapshot(root)
        wanted = _snapshot(folder / "expected")
        if expected == "reject" or (refusals and after != wanted):
            verdict = "refused" if refusals else "wrong"
            return CaseResult(case_id, fmt, expected, verdict, "; ".join(refusals))
        if after == wanted:
            # Each block is its own tool call: one the expected file shows unapplied may fail.
            note = (
                f"{len(refusals)} of {len(calls)} edits refused, as expected shows"
                if refusals
                else ""
            )
            return CaseResult(case_id, fmt, expected, "correct", note)
        differing = sorted(p for p in set(after) | set(wanted) if after.get(p) != wanted.get(p))
        original = _snapshot(folder / "original")
        if all(
            _only_kept_whitespace(original.get(p, b""), after.get(p, b""), wanted.get(p, b""))
            for p in differing
        ):
            return CaseResult(
                case_id,
                fmt,
                expected,
                "kept-whitespace",
                "as expected/, but lines the edit kept have the file's own "
                f"trailing whitespace, not the model's: {', '.join(differing)}",
            )
        return CaseResult(case_id, fmt, expected, "wrong", f"differs: {', '.join(differing)}")


# -- reading a case ------------------------------------------------------------------------


def _meta(folder: Path) -> dict:
    meta = {}
    if (folder / "case.json").is_file():
        meta = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    # extended/aider_history cases are all aider SEARCH/REPLACE edits that apply
    defaults = {
        "id": f"aider-history-{folder.name}",
        "format": "search_replace",
        "expected_outcome": "apply",
    }
    return {**defaults, **meta}


def _calls(folder: Path, meta: dict) -> list[Call]:
    fmt = meta["format"]
    targets = meta.get("target_files") or []
    if (folder / "blocks.json").is_file():
        blocks = json.loads((folder / "blocks.json").read_text(encoding="utf-8"))
        return [(b["file"], b["search"], b["replace"]) for b in blocks]
    edit = (folder / meta["edit_file"]).read_text(encoding="utf-8") if meta.get("edit_file") else ""
    if fmt == "search_replace_json":
        data = json.loads(edit)
        return [(targets[0], data["old_text"], data["new_text"])]
    if fmt == "search_replace":
        return [(targets[0], old, new) for old, new in BLOCK.findall(edit)]
    return [(target, edit) for target in targets]


def _parse_only(folder: Path, meta: dict, case_id: str, fmt: str) -> CaseResult:
    from hephaistus.tools.editing.patching import PatchError, parse_patch

    edit = (folder / meta["edit_file"]).read_text(encoding="utf-8")
    want = meta.get("expected_parse") or {}
    try:
        patches = parse_patch(edit)
    except PatchError as error:
        return CaseResult(case_id, fmt, "parse", "parse-failed", str(error))
    files = [p.target or p.source for p in patches]
    first = patches[0].hunks[0] if patches and patches[0].hunks else None
    first_lines = first.size if first else 0
    ok = files == want.get("files") and len(patches) == want.get("n_file_edits")
    ok = ok and first_lines == want.get("first_edit_hunk_lines", first_lines)
    return CaseResult(
        case_id,
        fmt,
        "parse",
        "parsed" if ok else "parse-failed",
        f"files={files} first hunk lines={first_lines}",
    )


def _only_kept_whitespace(original: bytes, after: bytes, wanted: bytes) -> bool:
    """Whether `after` differs from `wanted` only in trailing whitespace, each differing line
    being one the original file already had (heph kept the file's bytes; the expected file,
    written by another tool, took the model's copy)."""
    after_lines, wanted_lines = after.splitlines(), wanted.splitlines()
    if len(after_lines) != len(wanted_lines):
        return False
    kept = set(original.splitlines())
    return all(
        a == w or (a.rstrip() == w.rstrip() and a in kept)
        for a, w in zip(after_lines, wanted_lines, strict=True)
    )


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".heph" not in p.parts
    }


# -- applying ------------------------------------------------------------------------------


def _tool_apply(ctx: ToolContext, call: Call) -> str | None:
    """None when the tool applied the call, else its failure message."""
    name = "edit_file" if len(call) == 3 else "patch_file"
    args = dict(
        zip(("path", "old", "new") if len(call) == 3 else ("path", "diff"), call, strict=True)
    )
    result = run_tool(ctx, name, args)
    return None if result.ok else result.output


def _naive_apply(ctx: ToolContext, call: Call) -> str | None:
    """Exact matching only, the way a plain str.replace or `git apply` without fuzz works."""
    path = ctx.workspace.root / call[0]
    if not path.is_file():
        return "no such file"
    text = path.read_bytes().decode("utf-8")
    if len(call) == 3:
        old, new = call[1], call[2]
    else:
        from hephaistus.tools.editing.patching import PatchError, parse_patch

        try:
            hunks = [h for p in parse_patch(call[1]) for h in p.hunks]
        except PatchError as error:
            return str(error)
        for hunk in hunks:
            old, new = "\n".join(hunk.before) + "\n", "\n".join(hunk.after) + "\n"
            if text.count(old) != 1:
                return "hunk not found exactly once"
            text = text.replace(old, new, 1)
        path.write_bytes(text.encode("utf-8"))
        return None
    if text.count(old) != 1:
        return "not found exactly once"
    path.write_bytes(text.replace(old, new, 1).encode("utf-8"))
    return None


def summarise(results: list[CaseResult]) -> dict[str, dict[str, int]]:
    """Counts per format (and 'all') of each verdict, and of passes."""
    table: dict[str, dict[str, int]] = {}
    for result in results:
        for key in (result.format, "all"):
            row = table.setdefault(
                key,
                {
                    "cases": 0,
                    "correct": 0,
                    "kept-whitespace": 0,
                    "refused": 0,
                    "wrong": 0,
                    "skipped": 0,
                    "parsed": 0,
                    "passed": 0,
                },
            )
            row["cases"] += 1
            row[result.verdict if result.verdict in row else "wrong"] += 1
            row["passed"] += result.passed
    return table
