"""What a command changes is heph's effect like any write: snapshots of the workspace around it
(heph's own git repository, never the person's index or objects), and undo takes it back."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import git
from hephaistus.records.snapshots import Snapshots
from hephaistus.records.undo import redo as redo_session
from hephaistus.records.undo import undo as undo_session
from hephaistus.testing import act, final


def user_commands(home: Path, **commands: str) -> None:
    folder = home / ".config" / "hephaistus"
    folder.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{name} = {json.dumps(command)}\n" for name, command in commands.items())
    (folder / "config.toml").write_text(f"[commands]\n{lines}")


def a_repository(root: Path) -> None:
    (root / "a.py").write_text("A = 1\n")
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    (root / "run.sh").chmod(0o755)
    (root / ".gitignore").write_text(".venv/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")


def test_a_commands_deletes_and_creations_are_shown_and_undone(heph, chat_server, workspace, home):
    a_repository(workspace)
    index = (workspace / ".git" / "index").read_bytes()
    objects = sorted(p.name for p in (workspace / ".git" / "objects").rglob("*"))
    user_commands(
        home, clean="sh -c 'rm a.py run.sh; echo x > b.py; mkdir -p .venv; echo v > .venv/y'"
    )
    chat_server.reply(act("run_command", name="clean"))
    chat_server.reply(final("cleaned"))
    result = heph("--yes", "--json", "clean up")
    assert result.code == 0, result.stderr
    assert sorted(result.json["changed_files"]) == ["a.py", "b.py", "run.sh"]  # not .venv/
    observation = chat_server.requests[1]["messages"][-1]["content"]
    assert "The command changed these files: " in observation and "b.py (new)" in observation
    # The person's git is as it was: heph's snapshots live in a repository of their own.
    assert (workspace / ".git" / "index").read_bytes() == index
    assert sorted(p.name for p in (workspace / ".git" / "objects").rglob("*")) == objects
    assert git(workspace, "status", "--porcelain") == " D a.py\n D run.sh\n?? b.py\n"
    undone = heph("undo")
    assert undone.code == 0, undone.stderr
    assert (workspace / "a.py").read_text() == "A = 1\n"
    assert (workspace / "run.sh").stat().st_mode & 0o111  # executable again
    assert not (workspace / "b.py").exists()
    assert (workspace / ".venv" / "y").exists()  # ignored: not heph's to take back
    assert git(workspace, "status", "--porcelain") == ""


def test_outside_git_a_commands_changes_are_undone_too(heph, chat_server, workspace, home):
    (workspace / "notes.txt").write_text("keep me\n")
    user_commands(home, scribble="sh -c 'echo gone > notes.txt'")
    chat_server.reply(act("run_command", name="scribble"))
    chat_server.reply(final("done"))
    assert heph("--yes", "scribble").code == 0
    assert (workspace / "notes.txt").read_text() == "gone\n"
    assert heph("undo").code == 0
    assert (workspace / "notes.txt").read_text() == "keep me\n"
    assert not (workspace / ".git").exists()  # heph made no repository of the person's


def test_named_pipes_a_command_makes_gitignores_do_not_hang_the_snapshots(
    heph, chat_server, workspace, home
):
    import time

    a_repository(workspace)
    pipes = "for i in $(seq 40); do mkdir d$i; mkfifo d$i/.gitignore; done"  # git meets each
    pipes += "; mkdir -p sub/.git/objects sub/.git/refs; mkfifo sub/.git/HEAD"  # "a repository?"
    # and one whose HEAD names a ref that is a pipe, behind a link to another .git folder
    pipes += "; mkdir -p y/.git/inner/objects y/.git/inner/refs/heads other"
    pipes += "; echo ref: refs/heads/m > y/.git/inner/HEAD; mkfifo y/.git/inner/refs/heads/m"
    pipes += "; ln -s ../y/.git/inner other/.git"
    user_commands(home, pipe=f"sh -c '{pipes}; echo x > made.txt'")
    chat_server.reply(act("run_command", name="pipe"))
    chat_server.reply(act("git_diff"))  # the person's repository: git meets the pipe there too
    chat_server.reply(final("piped"))
    started = time.monotonic()
    result = heph("--yes", "--json", "make a pipe")
    assert result.code == 0, result.stderr
    assert time.monotonic() - started < 30  # git's own timeout is 60 s a command
    assert "made.txt" in result.json["changed_files"]
    assert "did not finish" not in chat_server.requests[2]["messages"][-1]["content"]


def test_two_snapshots_name_what_changed_between_them(tmp_path):
    (tmp_path / ".heph").mkdir()
    (tmp_path / "same.txt").write_text("same\n")
    (tmp_path / "edit.txt").write_text("old\n")
    snapshots = Snapshots(tmp_path)
    before = snapshots.take()
    (tmp_path / "edit.txt").write_text("new\n")
    (tmp_path / "made.txt").write_text("made\n")
    (tmp_path / ".heph" / "own.json").write_text("{}")  # heph's own: never in a snapshot
    after = snapshots.take()
    assert before and after and before != after
    changes = {c.path: (c.before, c.after) for c in snapshots.changes(before, after)}
    assert changes == {
        "edit.txt": ((b"old\n", 0o644), (b"new\n", 0o644)),
        "made.txt": (None, (b"made\n", 0o644)),
    }


def test_a_binary_file_a_command_deletes_is_named_not_diffed_and_comes_back(tmp_path):
    from hephaistus.records.checkpoints import Checkpoints, CheckpointStore
    from hephaistus.records.snapshots import command_effects

    (tmp_path / ".heph").mkdir()
    blob = bytes(range(256)) * 4000  # 1 MB of every byte
    (tmp_path / "data.bin").write_bytes(blob)
    snapshots = Snapshots(tmp_path)
    checkpoints = Checkpoints(tmp_path, tmp_path / ".heph", "s1")
    before = snapshots.take()
    (tmp_path / "data.bin").unlink()
    (made,) = command_effects(snapshots, before, checkpoints)
    assert made.diff == f"Binary or large file data.bin deleted ({len(blob)} -> 0 bytes)\n"
    undo_session(CheckpointStore(tmp_path, tmp_path / ".heph"), "s1")
    assert (tmp_path / "data.bin").read_bytes() == blob


def test_heph_says_when_a_command_changed_ignored_files(heph, chat_server, workspace, home):
    a_repository(workspace)
    (workspace / ".venv" / "lib").mkdir(parents=True)
    (workspace / ".venv" / "lib" / "old.py").write_text("old\n")
    (workspace / ".gitignore").write_text(".venv/\nbuild/\n*.log\n")
    user_commands(
        home,
        install="sh -c 'echo new > .venv/lib/old.py'",
        build="sh -c 'mkdir build; echo o > build/out.o; echo l > run.log'",
        clean="sh -c 'rm -r build run.log'",
        quiet="sh -c 'echo A = 2 > a.py'",
    )
    for name in ("install", "build", "clean", "quiet"):
        chat_server.reply(act("run_command", name=name))
    chat_server.reply(final("done"))
    result = heph("--yes", "clean up")
    assert result.code == 0, result.stderr
    seen = [chat_server.requests[n]["messages"][-1]["content"] for n in range(1, 5)]
    said = "It also changed what git ignores or nested repositories hold, which undo does not take back: "
    assert f"{said}.venv/\n" in seen[0] + "\n"  # deep inside an ignored folder
    assert f"{said}build/, run.log" in seen[1]
    assert f"{said}build/, run.log" in seen[2]  # deleted
    assert "ignores" not in seen[3] and "The command changed these files: a.py" in seen[3]
    assert "changed ignored files or nested repositories (not undoable): .venv/" in result.stderr


def test_links_and_private_modes_a_command_changed_come_back_as_they_were(tmp_path):
    from hephaistus.records.checkpoints import Checkpoints, CheckpointStore
    from hephaistus.records.snapshots import command_effects

    (tmp_path / ".heph").mkdir()
    (tmp_path / "key.txt").write_text("private\n")
    (tmp_path / "key.txt").chmod(0o600)
    (tmp_path / "group.txt").write_text("shared\n")
    (tmp_path / "group.txt").chmod(0o640)
    (tmp_path / "docs").mkdir()
    os.symlink("../key.txt", tmp_path / "docs" / "current")
    os.symlink("nowhere", tmp_path / "dangling")
    snapshots = Snapshots(tmp_path)
    checkpoints = Checkpoints(tmp_path, tmp_path / ".heph", "s1")
    before = snapshots.take()
    # What a command might do: delete a private file, rewrite another, repoint and remove
    # links, and make a link of its own.
    (tmp_path / "key.txt").unlink()
    (tmp_path / "group.txt").write_text("changed\n")
    (tmp_path / "docs" / "current").unlink()
    os.symlink("../group.txt", tmp_path / "docs" / "current")
    (tmp_path / "dangling").unlink()
    os.symlink("/etc/passwd", tmp_path / "made")
    made = {c.path for c in command_effects(snapshots, before, checkpoints)}
    assert made == {"key.txt", "group.txt", "docs/current", "dangling", "made"}
    result = undo_session(CheckpointStore(tmp_path, tmp_path / ".heph"), "s1")
    assert sorted(result.restored) == ["dangling", "docs/current", "group.txt", "key.txt"]
    assert result.deleted == ["made"] and not os.path.lexists(tmp_path / "made")
    assert (tmp_path / "key.txt").read_text() == "private\n"
    assert (tmp_path / "key.txt").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "group.txt").read_text() == "shared\n"
    assert (tmp_path / "group.txt").stat().st_mode & 0o777 == 0o640
    assert os.readlink(tmp_path / "docs" / "current") == "../key.txt"
    assert os.readlink(tmp_path / "dangling") == "nowhere"


def test_permission_bits_a_command_changed_alone_are_seen_and_undone(tmp_path):
    from hephaistus.records.checkpoints import Checkpoints, CheckpointStore
    from hephaistus.records.snapshots import command_effects

    (tmp_path / ".heph").mkdir()
    for name, mode in (("opened.txt", 0o600), ("closed.txt", 0o644), ("run.sh", 0o755)):
        (tmp_path / name).write_text(f"{name}\n")
        (tmp_path / name).chmod(mode)
    snapshots = Snapshots(tmp_path)
    checkpoints = Checkpoints(tmp_path, tmp_path / ".heph", "s1")
    before = snapshots.take()
    (tmp_path / "opened.txt").chmod(0o644)  # what `chmod` in a command does
    (tmp_path / "closed.txt").chmod(0o600)
    (tmp_path / "run.sh").chmod(0o750)
    made = {c.path for c in command_effects(snapshots, before, checkpoints)}
    assert made == {"opened.txt", "closed.txt", "run.sh"}
    undo_session(CheckpointStore(tmp_path, tmp_path / ".heph"), "s1")
    modes = {name: (tmp_path / name).stat().st_mode & 0o777 for name in made}
    assert modes == {"opened.txt": 0o600, "closed.txt": 0o644, "run.sh": 0o755}
    assert (tmp_path / "closed.txt").read_text() == "closed.txt\n"


def test_undo_leaves_a_link_someone_changed_since(tmp_path):
    from hephaistus.records.checkpoints import Checkpoints, CheckpointStore, UndoConflict
    from hephaistus.records.snapshots import command_effects

    (tmp_path / ".heph").mkdir()
    snapshots = Snapshots(tmp_path)
    checkpoints = Checkpoints(tmp_path, tmp_path / ".heph", "s1")
    before = snapshots.take()
    os.symlink("a", tmp_path / "link")
    command_effects(snapshots, before, checkpoints)
    (tmp_path / "link").unlink()
    os.symlink("b", tmp_path / "link")  # the person's since
    with pytest.raises(UndoConflict):
        undo_session(CheckpointStore(tmp_path, tmp_path / ".heph"), "s1")
    assert os.readlink(tmp_path / "link") == "b"


def test_a_folder_a_command_swapped_for_a_link_comes_back(tmp_path):
    from hephaistus.records.checkpoints import Checkpoints, CheckpointStore
    from hephaistus.records.snapshots import command_effects

    root = tmp_path / "ws"
    (root / ".heph").mkdir(parents=True)
    (root / "src" / "calc").mkdir(parents=True)
    (root / "src" / "calc" / "__init__.py").write_text("X = 1\n")
    (tmp_path / "elsewhere").mkdir()
    snapshots = Snapshots(root)
    checkpoints = Checkpoints(root, root / ".heph", "s1")
    before = snapshots.take()
    shutil.rmtree(root / "src")  # rm -rf src && ln -s ../elsewhere src
    os.symlink("../elsewhere", root / "src")
    command_effects(snapshots, before, checkpoints)
    result = undo_session(CheckpointStore(root, root / ".heph"), "s1")
    assert result.deleted == ["src"]
    assert not (root / "src").is_symlink()
    assert (root / "src" / "calc" / "__init__.py").read_text() == "X = 1\n"
    assert list((tmp_path / "elsewhere").iterdir()) == []  # nothing went through the link


def test_a_tracked_file_a_gitignore_names_is_snapshotted_and_undone(
    heph, chat_server, workspace, home
):
    a_repository(workspace)
    (workspace / ".gitignore").write_text(".venv/\nbuild/\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "keep.txt").write_text("keep\n")
    git(workspace, "add", "-f", ".gitignore", "build/keep.txt")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "keep")
    user_commands(home, clobber="sh -c 'echo changed > build/keep.txt; echo o > build/out.o'")
    chat_server.reply(act("run_command", name="clobber"))
    chat_server.reply(final("done"))
    assert heph("--yes", "clobber").code == 0
    said = chat_server.requests[1]["messages"][-1]["content"]
    assert "The command changed these files: build/keep.txt" in said
    assert heph("undo").code == 0
    assert (workspace / "build" / "keep.txt").read_text() == "keep\n"
    assert (workspace / "build" / "out.o").exists()  # untracked and ignored: not heph's


def test_changes_inside_a_nested_repository_are_named_not_hidden(tmp_path):
    (tmp_path / ".heph").mkdir()
    nested = tmp_path / "vendor" / "lib"
    nested.mkdir(parents=True)
    (nested / "v.txt").write_text("v\n")
    git(nested, "init", "-q")
    git(nested, "add", ".")
    git(nested, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "v")
    (tmp_path / ".pytest_cache").mkdir()
    (tmp_path / ".pytest_cache" / ".gitignore").write_text("*\n")
    (tmp_path / ".gitignore").write_text(".pytest_cache/\n")
    snapshots = Snapshots(tmp_path)
    snapshots.take()
    watch = snapshots.watch_ignored()
    (nested / "v.txt").unlink()
    git(nested, "status", "--short")  # git's own records in there change: no change of files
    (tmp_path / ".pytest_cache" / "v").write_text("x")
    assert snapshots.ignored_changes(watch) == [".pytest_cache/", "vendor/lib/"]


def test_setuid_and_setgid_files_a_command_makes_are_named_ignored_or_not(tmp_path):
    from hephaistus.records.snapshots import command_effects

    (tmp_path / ".heph").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "old").write_text("x\n")
    snapshots = Snapshots(tmp_path)
    before = snapshots.take()
    watch = snapshots.watch_ignored()
    for name, bits in (("build/tool", 0o2755), ("run", 0o4755), ("plain", 0o755)):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(bits)
    assert {c.path for c in command_effects(snapshots, before, None)} == {"run", "plain"}
    assert snapshots.ignored_changes(watch) == ["build/"]
    (said,) = snapshots.remarks
    assert said == (
        "It made setuid or setgid files, which run with their owner's rights: "
        "run (setuid), build/tool (setgid)"
    )
    snapshots.take()  # the next command's picture before: nothing said of this one
    assert snapshots.remarks == []


def test_a_file_over_the_limit_is_never_read_and_undo_says_what_it_leaves(tmp_path):
    from hephaistus.records.checkpoints import Checkpoints, CheckpointStore
    from hephaistus.records.filestate import LARGEST_KEPT
    from hephaistus.records.snapshots import command_effects
    from hephaistus.records.undo_words import undo_report

    (tmp_path / ".heph").mkdir()
    with open(tmp_path / "data.bin", "wb") as data:
        data.truncate(LARGEST_KEPT + 1)  # sparse: costs no disk
    snapshots = Snapshots(tmp_path)
    checkpoints = Checkpoints(tmp_path, tmp_path / ".heph", "s1")
    before = snapshots.take()
    with open(tmp_path / "data.bin", "r+b") as data:
        data.write(b"changed")
    with open(tmp_path / "made.bin", "wb") as data:
        data.truncate(LARGEST_KEPT + 2)
    made = {c.path: c for c in command_effects(snapshots, before, checkpoints)}
    size = LARGEST_KEPT + 1
    assert made["data.bin"].diff == (
        f"Large file data.bin written ({size} -> {size} bytes): heph kept no copy\n"
    )
    assert snapshots.remarks == [
        "data.bin, made.bin: over 16 MB, so heph kept no copy; undo deletes such a file the "
        "command made, but cannot bring back what one held before"
    ]
    blobs = tmp_path / ".heph" / "checkpoints" / "s1" / "blobs"
    assert not blobs.exists() or sum(p.stat().st_size for p in blobs.iterdir()) == 0
    store = CheckpointStore(tmp_path, tmp_path / ".heph")
    result = undo_session(store, "s1")
    assert result.deleted == ["made.bin"] and not (tmp_path / "made.bin").exists()
    assert sorted(result.unkept) == ["data.bin", "made.bin"]
    assert (tmp_path / "data.bin").read_bytes()[:7] == b"changed"  # left as it is
    assert undo_report(result)[-1] == (
        "  kept     data.bin as it is: it was over 16 MB when a command changed or deleted it, "
        "so heph kept no copy of what it held"
    )
    assert redo_session(store, "s1").restored == []  # nothing kept to bring back, and no failure


def test_undo_removes_the_repositories_a_command_made_never_through_a_link(tmp_path):
    from hephaistus.records.checkpoints import Checkpoints, CheckpointStore
    from hephaistus.records.snapshots import command_effects

    root = tmp_path / "ws"
    (root / ".heph").mkdir(parents=True)
    for folder in ("lib", "tools"):
        (root / folder).mkdir()
        (root / folder / "code.py").write_text("x = 1\n")
    outside = tmp_path / "outside"
    snapshots = Snapshots(root)
    checkpoints = Checkpoints(root, root / ".heph", "s1")
    before = snapshots.take()
    for where in (root, root / "lib", root / "tools", outside):
        git(where.parent, "init", "-q", where.name)
    assert command_effects(snapshots, before, checkpoints) == ()
    assert snapshots.repositories_made() == [".git", "lib/.git", "tools/.git"]
    shutil.move(root / "tools", tmp_path / "elsewhere")  # since: tools/ leads out
    os.symlink(outside, root / "tools")
    result = undo_session(CheckpointStore(root, root / ".heph"), "s1")
    assert result.repositories == [".git", "lib/.git"]
    assert not (root / ".git").exists() and not (root / "lib" / ".git").exists()
    assert (outside / ".git").is_dir()  # never through the link
    assert (root / "lib" / "code.py").read_text() == "x = 1\n"
