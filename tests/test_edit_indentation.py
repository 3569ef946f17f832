"""Tolerant edits map indentation only by a rule every matched line proves, or leave it as sent.

The cases real models sent that heph once wrote wrongly: tabs for a file's spaces with a new line
deeper than any old one, a diff's context line that lost its marker deciding the added lines'
depth, a byte-order mark copied into `old`, blank lines of a shifted block. Then a property over
generated files: indentation units × depths × drift, where every edit is either applied as meant
or refused, never written otherwise.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hephaistus.testing.tools import run_tool
from hephaistus.tools import ToolContext, default_registry
from hephaistus.tools.editing.matching import NoMatch
from hephaistus.tools.editing.replacing import replace
from hephaistus.workspace import Workspace

TOOLS = default_registry()
SCALE = float(os.environ.get("HEPH_FUZZ_SCALE", "1"))

# A file of 4-space blocks with a continuation line aligned under its bracket (17 spaces): the
# greatest common divisor of its indentation is 1, which is no unit.
ALIGNED = [
    "def f(x):",
    "    if x:",
    "        y = call(a,",
    "                 b)",
    "        return y",
    "    return 0",
]


@pytest.fixture
def ctx(tmp_path):
    return ToolContext(Workspace.at(tmp_path))


def test_tabs_for_spaces_with_a_line_deeper_than_any_old_one():
    old = ["\t\ty = call(a,"]
    new = ["\t\ty = call(a,", "\t\tif y is None:", "\t\t\traise ValueError(x)"]
    result = replace(ALIGNED, old, new)
    assert result[3:5] == ["        if y is None:", "            raise ValueError(x)"]


def test_tabs_for_spaces_two_levels_deeper():
    file = ["class A:", "    def f(self):", "        return g(1,", "                 2)"]
    old = ["\tdef f(self):", "\t\treturn g(1,"]
    new = [
        "\tdef f(self):",
        "\t\tif self:",
        "\t\t\tfor i in self:",
        "\t\t\t\tyield i",
        "\t\treturn g(1,",
    ]
    result = replace(file, old, new)
    assert result[2:5] == [
        "        if self:",
        "            for i in self:",
        "                yield i",
    ]


def test_a_depth_no_matched_line_shows_is_refused_not_guessed():
    # One old line, tabs, at no depth, in a file of aligned lines only: nothing shows what a
    # tab is worth here.
    file = ["x = (1,", "     2)", "y = f(a,", "      b)", "z = 3"]
    with pytest.raises(NoMatch, match="'raise ValueError'"):
        replace(file, ["\tz = 3"], ["\tz = 3", "\tif z:", "\t\traise ValueError"])


def test_one_context_line_that_lost_its_marker_does_not_shift_the_added_lines(ctx):
    text = "class A:\n    def f(self):\n        a = (1,\n             2)\n\n    def g(self):\n        pass\n"
    (ctx.workspace.root / "m.py").write_text(text)
    # `        a = (1,` came without its ' ' marker: read as context, it is one space short.
    diff = "@@ ... @@\n     def f(self):\n        a = (1,\n              2)\n+        b = 2\n"
    result = run_tool(ctx, "patch_file", {"path": "m.py", "diff": diff})
    assert result.ok, result.output
    assert (ctx.workspace.root / "m.py").read_text() == text.replace(
        "             2)\n", "             2)\n        b = 2\n"
    )


def test_an_old_text_that_starts_with_the_files_byte_order_mark(ctx):
    (ctx.workspace.root / "bom.py").write_bytes(b"\xef\xbb\xbfx = 1\ny = 2\n")
    args = {"path": "bom.py", "old": "\ufeffx = 1", "new": "\ufeffx = 10"}
    result = run_tool(ctx, "edit_file", args)
    assert result.ok, result.output
    assert (ctx.workspace.root / "bom.py").read_bytes() == b"\xef\xbb\xbfx = 10\ny = 2\n"


def test_blank_lines_of_a_shifted_block_are_written_as_sent():
    file = ["def f():", "    a = 1", "    return a"]
    old = ["a = 1"]  # the model lost the indentation
    new = ["a = 1", "    ", "b = 2"]
    result = replace(file, old, new)
    assert result == ["def f():", "    a = 1", "    ", "    b = 2", "    return a"]


# -- the property: units × depths × drift ------------------------------------------------------

UNITS = {"2 spaces": "  ", "4 spaces": "    ", "tab": "\t"}


def block(depths: list[int], unit: str, extra: int = 0) -> list[str]:
    """Lines `stmt_N` at the given depths (every depth reachable from the one before)."""
    return [unit * (d + extra) + f"stmt_{n} = {n}" for n, d in enumerate(depths)]


depth_runs = st.lists(st.integers(0, 4), min_size=3, max_size=12).map(
    lambda raw: [min(d, (raw[i - 1] if i else 0) + 1) for i, d in enumerate(raw)]
)


@settings(
    max_examples=max(1, int(300 * SCALE)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    depths=depth_runs,
    file_unit=st.sampled_from(sorted(UNITS)),
    model_unit=st.sampled_from(sorted(UNITS)),
    shift=st.integers(-1, 1),
    aligned=st.booleans(),
    data=st.data(),
)
def test_an_edit_in_any_indentation_is_applied_as_meant_or_refused(
    depths, file_unit, model_unit, shift, aligned, data
):
    """The model copies a piece of the file in its own unit, maybe a level off (another unit and
    a shift together only where its lines show two depths), and adds a line one level deeper
    than the line before it. heph writes it at that depth in the file's unit,
    or (when the model's copy is exactly the file's lines) as the model sent it, or refuses; it
    never writes it anywhere else."""
    unit, mine = UNITS[file_unit], UNITS[model_unit]
    proof = ["head_0 = 0", unit + "head_1 = 1", unit * 2 + "head_2 = 2", unit + "head_3 = 3"]
    file = proof + block(depths, unit)  # lines that show the file's unit, then the blocks
    if aligned:  # a continuation line aligned under a bracket, off the unit's grid
        file.insert(1, " " * 9 + "aligned)")
    body = [i for i, line in enumerate(file) if line.strip().startswith("stmt_")]
    start = data.draw(st.sampled_from(body[:-1]))
    size = data.draw(st.integers(1, min(4, len(file) - start)))
    piece = file[start : start + size]
    if any(not line.strip().startswith("stmt_") for line in piece):
        return  # the aligned line is not the point here
    levels = [depths[int(line.split(" = ")[1])] for line in piece]
    if min(levels) + shift < 0:
        return
    if mine != unit and len(set(levels)) == 1 and (shift or "\t" not in mine + unit):
        # Old lines at one depth in another unit than the file's: a shift and a change of
        # unit read alike. heph takes spaces for the file's own (a shift, the usual mistake);
        # what a tab is worth it learns only from a line at the same depth.
        return
    old = [mine * (level + shift) + line.strip() for level, line in zip(levels, piece, strict=True)]
    deeper = levels[-1] + 1
    new = [*old, mine * (deeper + shift) + "added = True"]
    meant = file[: start + size] + [unit * deeper + "added = True"] + file[start + size :]
    as_sent = file[: start + size] + [new[-1]] + file[start + size :]
    try:
        result = replace(file, old, new)
    except NoMatch:
        return  # refused: nothing was written
    assert result == meant or (old == piece and result == as_sent), (old, new)
