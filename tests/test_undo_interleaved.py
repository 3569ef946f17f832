"""Undo takes back only its own run's changes, when another run wrote the file in between.

Two runs append to one file, their writes interleaved: undoing one must not take away the lines
the other wrote. heph reverses its own hunks when they can be told apart, refuses when they
cannot, and with --force says what it takes away. A property drives random interleavings.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hephaistus.records.checkpoints import Checkpoints, CheckpointStore, Interleaved, UndoConflict
from hephaistus.records.undo import redo as redo_session
from hephaistus.records.undo import undo as undo_session
from hephaistus.testing.tools import run_tool
from hephaistus.tools import ToolContext, default_registry
from hephaistus.workspace import Workspace

TOOLS = default_registry()
SCALE = float(os.environ.get("HEPH_FUZZ_SCALE", "1"))


class Run:
    """A heph run's tools with a session of its own: its writes are checkpointed under its id."""

    def __init__(self, root, session_id: str) -> None:
        workspace = Workspace.at(root)
        workspace.ensure_heph_dir()
        self.session_id = session_id
        self.ctx = ToolContext(
            workspace, checkpoints=Checkpoints(workspace.root, workspace.heph_dir, session_id)
        )

    def append(self, path: str, text: str) -> None:
        result = run_tool(self.ctx, "append_file", {"path": path, "content": text})
        assert result.ok, result.output

    def edit(self, path: str, old: str, new: str) -> None:
        result = run_tool(self.ctx, "edit_file", {"path": path, "old": old, "new": new})
        assert result.ok, result.output


def store(root) -> CheckpointStore:
    return CheckpointStore(Workspace.at(root).root, Workspace.at(root).heph_dir)


def test_undo_of_one_run_keeps_the_lines_another_appended_in_between(tmp_path):
    (tmp_path / "log.md").write_text("# log\n")
    first, second = Run(tmp_path, "s1-first"), Run(tmp_path, "s2-second")
    first.append("log.md", "first, one\n")
    second.append("log.md", "".join(f"second, {n}\n" for n in range(16)))
    first.append("log.md", "first, two\n")
    result = undo_session(store(tmp_path), "s1-first")
    assert result.own_lines_only == ["log.md"]
    text = (tmp_path / "log.md").read_text()
    assert text == "# log\n" + "".join(f"second, {n}\n" for n in range(16))


def test_lines_that_cannot_be_told_apart_are_refused_then_forced(tmp_path):
    (tmp_path / "app.py").write_text("x = 1\n")
    first, second = Run(tmp_path, "s1-first"), Run(tmp_path, "s2-second")
    first.edit("app.py", "x = 1", "x = 2")
    second.edit("app.py", "x = 2", "x = 3")  # right on top of the first run's line
    first.append("app.py", "y = 1\n")
    with pytest.raises(Interleaved) as refused:
        undo_session(store(tmp_path), "s1-first")
    assert refused.value.taken == {"app.py": 1}
    assert (tmp_path / "app.py").read_text() == "x = 3\ny = 1\n"  # nothing changed
    forced = undo_session(store(tmp_path), "s1-first", force=True)
    assert forced.taken == {"app.py": 1} and (tmp_path / "app.py").read_text() == "x = 1\n"


def test_redo_after_taking_back_only_heph_s_lines(tmp_path):
    (tmp_path / "log.md").write_text("# log\n")
    first, second = Run(tmp_path, "s1-first"), Run(tmp_path, "s2-second")
    first.append("log.md", "a\n")
    second.append("log.md", "b\n")
    first.append("log.md", "c\n")
    undo_session(store(tmp_path), "s1-first")
    assert (tmp_path / "log.md").read_text() == "# log\nb\n"
    redo_session(store(tmp_path), "s1-first")
    assert (tmp_path / "log.md").read_text() == "# log\na\nb\nc\n"


def test_heph_undo_says_what_it_took_back_refused_and_forced(heph, workspace):
    (workspace / "log.md").write_text("# log\n")
    (workspace / "app.py").write_text("x = 1\n")
    mine, theirs = (
        Run(workspace, "20990101-000000.000002-aaaaaa"),
        Run(workspace, "20980101-000000.000001-bbbbbb"),
    )
    mine.append("log.md", "mine\n")
    theirs.append("log.md", "theirs\n")
    mine.append("log.md", "mine too\n")
    mine.edit("app.py", "x = 1", "x = 2")
    theirs.edit("app.py", "x = 2", "x = 3")
    mine.append("app.py", "y = 1\n")
    refused = heph("undo", "last")
    assert refused.code == 1
    assert "another run or program also wrote app.py (1 line of theirs)" in refused.stderr
    assert "--force" in refused.stderr and (workspace / "log.md").read_text().count("mine") == 2
    forced = heph("undo", "last", "--force")
    assert forced.code == 0, forced.stderr
    assert "restored log.md: heph's lines taken back, another run's kept" in forced.stdout
    assert "restored app.py, taking away 1 line another run wrote meanwhile" in forced.stdout
    assert (workspace / "log.md").read_text() == "# log\ntheirs\n"
    assert (workspace / "app.py").read_text() == "x = 1\n"


# -- the property: any interleaving, then undo one run ------------------------------------------


@settings(
    max_examples=max(1, int(60 * SCALE)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(order=st.lists(st.sampled_from("ab"), min_size=2, max_size=8), which=st.sampled_from("ab"))
def test_undoing_one_of_two_interleaved_runs_takes_none_of_the_others_lines(
    tmp_path_factory, order, which
):
    root = tmp_path_factory.mktemp("interleaved")
    (root / "notes.md").write_text("# notes\n")
    runs = {"a": Run(root, "s-a"), "b": Run(root, "s-b")}
    written: dict[str, list[str]] = {"a": [], "b": []}
    for number, name in enumerate(order):
        line = f"{name} wrote line {number}\n"
        runs[name].append("notes.md", line)
        written[name].append(line)
    other = "b" if which == "a" else "a"
    if not written[which]:
        return
    before = (root / "notes.md").read_text()
    try:
        undo_session(store(root), f"s-{which}")
    except (Interleaved, UndoConflict):  # the other wrote between, or after: refused
        assert (root / "notes.md").read_text() == before  # nothing changed
        return
    after = (root / "notes.md").read_text()
    assert all(line in after for line in written[other]), "took the other run's lines"
    assert not any(line in after for line in written[which]), "left its own lines"


def test_a_rewrite_that_copied_heph_s_lines_is_refused(tmp_path):
    (tmp_path / "f.txt").write_text("a\nb\nc\n")
    mine = Run(tmp_path, "s1-mine")
    mine.append("f.txt", "X\n")
    (tmp_path / "f.txt").write_text("a\nb\nc2\nX\nTHEIRS1\na\nb\nc\nX\n")  # another program
    mine.append("f.txt", "Y\n")
    with pytest.raises(Interleaved):  # which X is heph's? it cannot be told
        undo_session(store(tmp_path), "s1-mine")
    assert (tmp_path / "f.txt").read_text() == "a\nb\nc2\nX\nTHEIRS1\na\nb\nc\nX\nY\n"


def test_two_inserts_at_one_place_cannot_be_told_apart(tmp_path):
    (tmp_path / "f.txt").write_text("top\nbottom\n")
    mine = Run(tmp_path, "s1-mine")
    mine.edit("f.txt", "top\nbottom", "top\nmine\nbottom")
    (tmp_path / "f.txt").write_text("top\ntheirs\nmine\nbottom\n")
    mine.append("f.txt", "end\n")
    with pytest.raises(Interleaved):
        undo_session(store(tmp_path), "s1-mine")
