"""Two heph processes in one workspace, and processes killed in the middle of a write."""

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from hephaistus.records.checkpoints import Checkpoints, CheckpointStore, UndoConflict
from hephaistus.records.undo import undo as undo_session
from hephaistus.testing.tools import run_tool
from hephaistus.textfile import remove_stale_temp_files
from hephaistus.tools import ToolContext, default_registry
from hephaistus.workspace import Workspace

TOOLS = default_registry()


def _append_lines(root, session, tag, count, results):
    workspace = Workspace.at(root)
    ctx = ToolContext(
        workspace, checkpoints=Checkpoints(workspace.root, workspace.heph_dir, session)
    )
    for number in range(count):
        result = run_tool(ctx, "append_file", {"path": "log.txt", "content": f"{tag} {number}\n"})
        results.put((tag, number, result.ok))


def _edit_tokens(root, tag, count, results):
    ctx = ToolContext(Workspace.at(root))
    for number in range(count):
        args = {"path": "tokens.txt", "old": f"{tag}-{number} old", "new": f"{tag}-{number} new"}
        results.put((tag, number, run_tool(ctx, "edit_file", args).ok))


def run_at_once(target, argument_lists):
    results = multiprocessing.Queue()
    workers = [
        multiprocessing.Process(target=target, args=(*args, results)) for args in argument_lists
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    found = []
    while not results.empty():
        found.append(results.get())
    return found


def test_appends_from_four_processes_are_all_kept(tmp_path):
    (tmp_path / "log.txt").write_text("start\n")
    results = run_at_once(_append_lines, [(tmp_path, f"s{n}", f"p{n}", 40) for n in range(4)])
    assert len(results) == 160 and all(ok for _, _, ok in results)
    lines = (tmp_path / "log.txt").read_text().splitlines()
    assert lines[0] == "start" and len(lines) == 161
    assert sorted(lines[1:]) == sorted(f"p{n} {i}" for n in range(4) for i in range(40))


def test_edits_from_two_processes_are_applied_or_refused_never_lost(tmp_path):
    tokens = [f"{tag}-{n} old" for n in range(40) for tag in ("a", "b")]
    (tmp_path / "tokens.txt").write_text("\n".join(tokens) + "\n")
    results = run_at_once(_edit_tokens, [(tmp_path, "a", 40), (tmp_path, "b", 40)])
    text = (tmp_path / "tokens.txt").read_text()
    assert len(results) == 80
    for tag, number, ok in results:
        # An edit that said it was done is in the file; one that was refused changed nothing.
        assert (f"{tag}-{number} new" in text) == ok, (tag, number)
    assert len(text.splitlines()) == 80


def test_undo_refuses_when_another_process_wrote_after_heph(tmp_path):
    (tmp_path / "log.txt").write_text("start\n")
    run_at_once(_append_lines, [(tmp_path, "first", "a", 1)])
    run_at_once(_append_lines, [(tmp_path, "second", "b", 1)])
    store = CheckpointStore(tmp_path, tmp_path / ".heph")
    try:
        undo_session(store, "first")
        raise AssertionError("undo should have refused")
    except UndoConflict as conflict:
        assert conflict.paths == ["log.txt"]
    assert (tmp_path / "log.txt").read_text() == "start\na 0\nb 0\n"
    undo_session(store, "second")
    assert (tmp_path / "log.txt").read_text() == "start\na 0\n"


KILLED_MID_WRITE = textwrap.dedent("""
    import os, signal, sys
    from hephaistus.records.checkpoints import Checkpoints
    from hephaistus.testing.tools import run_tool
    from hephaistus.tools import ToolContext
    from hephaistus.workspace import Workspace

    workspace = Workspace.at(sys.argv[1])
    real_replace = os.replace
    writes_left = int(sys.argv[2])

    def replace_then_die(source, target, **folder):
        global writes_left
        if str(target).endswith("app.py"):
            writes_left -= 1
            if writes_left == 0:
                os.kill(os.getpid(), signal.SIGKILL)  # after the record, before the rename
        real_replace(source, target, **folder)

    os.replace = replace_then_die
    ctx = ToolContext(workspace, checkpoints=Checkpoints(workspace.root, workspace.heph_dir, "s1"))
    run_tool(ctx, "read_file", {"path": "app.py"})  # a whole-file write needs it read
    for content in ("first\\n", "second\\n"):
        run_tool(ctx, "write_file", {"path": "app.py", "content": content})
""")


@pytest.mark.parametrize("killed_at, left", [(1, "old\n"), (2, "first\n")])
def test_a_write_killed_before_its_rename_leaves_no_stray_file_and_undo_works(
    tmp_path, killed_at, left
):
    (tmp_path / "app.py").write_text("old\n")
    done = subprocess.run(
        [sys.executable, "-c", KILLED_MID_WRITE, str(tmp_path), str(killed_at)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".heph", "app.py"]
    assert (tmp_path / "app.py").read_text() == left
    leftovers = list((tmp_path / ".heph" / "tmp").iterdir())
    assert len(leftovers) == 1
    assert remove_stale_temp_files(tmp_path / ".heph" / "tmp") == leftovers
    assert not leftovers[0].exists()
    result = undo_session(CheckpointStore(tmp_path, tmp_path / ".heph"), "s1")  # no false conflict
    assert result.restored == ["app.py"] and (tmp_path / "app.py").read_text() == "old\n"


def test_the_temporary_files_of_running_processes_are_left_alone(tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    mine = temp / f"{os.getpid()}-abc.heph-tmp"
    mine.write_text("in flight")
    assert remove_stale_temp_files(temp) == [] and mine.exists()
