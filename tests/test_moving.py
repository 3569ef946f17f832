"""delete_file, move_file and patch_file's deletes and moves: through the path checks, the modes
and the checkpoints, so undo brings a deleted file back and moves a moved one back."""

from __future__ import annotations

import os

import pytest

from conftest import git
from hephaistus.records.checkpoints import Checkpoints, CheckpointStore
from hephaistus.records.state import AgentState
from hephaistus.records.undo import undo as undo_session
from hephaistus.testing import act, final
from hephaistus.testing.tools import run_tool
from hephaistus.tools import ToolContext
from hephaistus.workspace import Workspace


@pytest.fixture
def ctx(workspace):
    (workspace / "app.py").write_text("print('app')\n")
    (workspace / "run.sh").write_bytes(b"#!/bin/sh\n")
    (workspace / "run.sh").chmod(0o750)
    space = Workspace.at(workspace)
    space.ensure_heph_dir()
    return ToolContext(space, checkpoints=Checkpoints(workspace, space.heph_dir, "s1"))


def undo(ctx):
    return undo_session(CheckpointStore(ctx.workspace.root, ctx.workspace.heph_dir), "s1")


def test_a_deleted_file_comes_back_with_its_mode(ctx, workspace):
    result = run_tool(ctx, "delete_file", {"path": "run.sh"})
    assert result.ok, result.output
    assert not (workspace / "run.sh").exists()
    assert result.changed[0].deleted and "+++ /dev/null" in result.diff
    undone = undo(ctx)
    assert undone.restored == ["run.sh"]
    assert (workspace / "run.sh").read_bytes() == b"#!/bin/sh\n"
    assert oct((workspace / "run.sh").stat().st_mode & 0o777) == oct(0o750)


def test_a_moved_file_moves_back_and_its_new_folders_are_made(ctx, workspace):
    result = run_tool(ctx, "move_file", {"path": "run.sh", "to": "bin/tools/run.sh"})
    assert result.ok, result.output
    assert (workspace / "bin/tools/run.sh").read_bytes() == b"#!/bin/sh\n"
    assert (workspace / "bin/tools/run.sh").stat().st_mode & 0o777 == 0o750
    assert not (workspace / "run.sh").exists()
    assert "rename from run.sh\nrename to bin/tools/run.sh" in result.diff
    assert [(c.path, c.deleted) for c in result.changed] == [
        ("run.sh", True),
        ("bin/tools/run.sh", False),
    ]
    undo(ctx)
    assert (workspace / "run.sh").read_bytes() == b"#!/bin/sh\n"
    assert not (workspace / "bin/tools/run.sh").exists()


def test_a_move_into_a_folder_keeps_the_name(ctx, workspace):
    (workspace / "src").mkdir()
    result = run_tool(ctx, "move_file", {"path": "app.py", "to": "src"})
    assert result.ok and (workspace / "src/app.py").exists(), result.output
    result = run_tool(ctx, "move_file", {"path": "src/app.py", "to": "lib/"})
    assert result.ok and (workspace / "lib/app.py").exists(), result.output


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ({"path": "app.py", "to": "run.sh"}, "exists already"),
        ({"path": "app.py", "to": "app.py"}, "already there"),
        ({"path": "app.py", "to": "../outside.py"}, "outside the workspace"),
        ({"path": "app.py", "to": ".git/hooks/pre-commit"}, "inside .git/"),
        ({"path": "app.py", "to": ".heph/state.json"}, "inside .heph/"),
        ({"path": "app.py", "to": ".env"}, "secret"),
        ({"path": "missing.py", "to": "b.py"}, "does not exist"),
        ({"path": ".", "to": "b.py"}, "is a folder"),
    ],
)
def test_a_move_that_cannot_be_made_changes_nothing(ctx, workspace, args, said):
    before = sorted(p.name for p in workspace.iterdir())
    result = run_tool(ctx, "move_file", args)
    assert not result.ok and said in result.output, result.output
    assert sorted(p.name for p in workspace.iterdir()) == before
    assert (workspace / "app.py").read_text() == "print('app')\n"


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("missing.py", "does not exist"),
        ("../ws", "is a folder"),
        ("/etc/hostname", "outside the workspace"),
        (".env", "secret"),
        ("link.py", "is a link"),
    ],
)
def test_a_delete_that_cannot_be_made_changes_nothing(ctx, workspace, path, said):
    (workspace / ".env").write_text("KEY=1\n")
    os.symlink("app.py", workspace / "link.py")
    result = run_tool(ctx, "delete_file", {"path": path})
    assert not result.ok and said in result.output, result.output
    assert (workspace / "app.py").exists() and (workspace / ".env").exists()
    assert os.path.islink(workspace / "link.py")


def test_deletes_and_moves_are_writes_plan_mode_denies_and_ask_mode_asks(ctx, workspace):
    denied = run_tool(ctx, "delete_file", {"path": "app.py"}, mode="plan")
    assert not denied.ok and denied.decision == "deny"
    asked = []

    def asker(proposal):
        asked.append(proposal.request.describe())
        return "no"

    declined = run_tool(ctx, "move_file", {"path": "app.py", "to": "b.py"}, mode="ask", asker=asker)
    assert asked == ["move app.py to b.py"] and declined.decision == "decline"
    assert "app.py was not moved" in declined.output
    assert (workspace / "app.py").exists() and not (workspace / "b.py").exists()


def test_a_file_changed_after_it_was_read_is_not_deleted(ctx, workspace):
    def asker(proposal):
        (workspace / "app.py").write_text("someone else's\n")
        return "yes"

    result = run_tool(ctx, "delete_file", {"path": "app.py"}, mode="ask", asker=asker)
    assert not result.ok and "changed on disk" in result.output
    assert (workspace / "app.py").read_text() == "someone else's\n"


DELETE_DIFF = """\
--- a/app.py
+++ /dev/null
@@ -1 +0,0 @@
-print('app')
"""


def test_a_diff_to_dev_null_deletes_the_file_instead_of_emptying_it(ctx, workspace):
    result = run_tool(ctx, "patch_file", {"path": "app.py", "diff": DELETE_DIFF})
    assert result.ok, result.output
    assert not (workspace / "app.py").exists()
    undo(ctx)
    assert (workspace / "app.py").read_text() == "print('app')\n"


def test_a_diff_to_dev_null_that_leaves_lines_is_refused(ctx, workspace):
    (workspace / "app.py").write_text("print('app')\nprint('more')\n")
    result = run_tool(ctx, "patch_file", {"path": "app.py", "diff": DELETE_DIFF})
    assert not result.ok and "deletes app.py" in result.output, result.output
    assert (workspace / "app.py").read_text() == "print('app')\nprint('more')\n"


def test_the_codex_patch_formats_delete_and_move(ctx, workspace):
    deleted = run_tool(
        ctx,
        "patch_file",
        {"path": "run.sh", "diff": "*** Begin Patch\n*** Delete File: run.sh\n*** End Patch\n"},
    )
    assert deleted.ok and not (workspace / "run.sh").exists(), deleted.output
    moved = run_tool(
        ctx,
        "patch_file",
        {
            "path": "app.py",
            "diff": "*** Begin Patch\n*** Update File: app.py\n*** Move to: src/main.py\n"
            "@@\n-print('app')\n+print('main')\n*** End Patch\n",
        },
    )
    assert moved.ok, moved.output
    assert (workspace / "src/main.py").read_text() == "print('main')\n"
    assert not (workspace / "app.py").exists()
    undo(ctx)
    assert (workspace / "app.py").read_text() == "print('app')\n"
    assert (workspace / "run.sh").exists() and not (workspace / "src/main.py").exists()


def test_a_git_rename_diff_moves_the_file(ctx, workspace):
    diff = "diff --git a/app.py b/main.py\nsimilarity index 100%\nrename from app.py\nrename to main.py\n"
    result = run_tool(ctx, "patch_file", {"path": "app.py", "diff": diff})
    assert result.ok, result.output
    assert (workspace / "main.py").read_text() == "print('app')\n"


def test_a_patch_deleting_one_file_and_changing_another_is_refused(ctx, workspace):
    diff = DELETE_DIFF + "--- a/run.sh\n+++ b/run.sh\n@@\n-#!/bin/sh\n+#!/bin/bash\n"
    result = run_tool(ctx, "patch_file", {"path": "app.py", "diff": diff})
    assert not result.ok and "one patch_file call per file" in result.output, result.output
    assert (workspace / "app.py").exists()


def test_end_to_end_a_scripted_model_deletes_and_moves_and_undo_restores(
    heph, chat_server, workspace
):
    (workspace / "old.py").write_text("OLD = 1\n")
    (workspace / "keep.py").write_text("KEEP = 1\n")
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", ".")
    git(workspace, "config", "user.email", "dev@example.invalid")
    git(workspace, "config", "user.name", "Dev")
    git(workspace, "commit", "-qm", "first")
    chat_server.reply(act("move_file", path="old.py", to="pkg/new.py"))
    chat_server.reply(act("delete_file", path="keep.py"))
    chat_server.reply(act("git_commit", message="reorganise"))
    chat_server.reply(final("moved and deleted"))
    result = heph("--yes", "--json", "reorganise")
    assert result.code == 0, result.stderr
    assert sorted(result.json["changed_files"]) == ["keep.py", "old.py", "pkg/new.py"]
    shown = git(workspace, "show", "--name-status", "--no-renames", "--format=", "HEAD")
    assert shown.split() == ["D", "keep.py", "D", "old.py", "A", "pkg/new.py"]
    # The agent state follows: the moved file is worked on where it is now, the deleted not.
    state = AgentState.load(workspace / ".heph" / "state.json")
    assert state.last_modified_file == "pkg/new.py"
    assert "pkg/new.py" in state.active_files
    assert not {"old.py", "keep.py"} & set(state.active_files + state.recently_created_files)
    undone = heph("undo")
    assert undone.code == 0, undone.stderr
    assert (workspace / "old.py").read_text() == "OLD = 1\n"
    assert (workspace / "keep.py").read_text() == "KEEP = 1\n"
    assert not (workspace / "pkg" / "new.py").exists()


def test_a_patch_through_a_link_may_name_the_link_in_its_headers(ctx, workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "calc.py").write_text("X = 1\n")
    os.symlink("src/calc.py", workspace / "link.py")
    diff = "--- a/link.py\n+++ b/link.py\n@@\n-X = 1\n+X = 2\n"
    result = run_tool(ctx, "patch_file", {"path": "link.py", "diff": diff})
    assert result.ok, result.output
    assert (workspace / "src" / "calc.py").read_text() == "X = 2\n"


def test_heph_undo_names_the_task_of_the_run_it_took_back(heph, chat_server, workspace):
    (workspace / "a.py").write_text("A = 1\n")
    chat_server.reply(act("delete_file", path="a.py"))
    chat_server.reply(final("deleted"))
    assert heph("--yes", "delete a.py please").code == 0
    chat_server.reply(final("nothing to do"))
    assert heph("--yes", "just say hi").code == 0  # changes nothing: not the one undone
    undone = heph("undo")
    assert undone.code == 0, undone.stderr
    assert '("delete a.py please")' in undone.stdout
    assert (workspace / "a.py").read_text() == "A = 1\n"
