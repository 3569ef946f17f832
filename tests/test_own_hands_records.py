"""What a command leaves behind, and undo at scale: a git repository a command makes, a file
planted in an ignored folder with its times set back, a setuid file, a folder swapped for a link
leading out of the workspace, a huge file, and thousands of files. Each test is the attack run
for real: the real sandbox, real git, heph as a person runs it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from test_hostile_repo import clone, person
from test_own_hands import needs_sandbox

from conftest import environment, has_git
from hephaistus.testing import act, final, heph_command

pytestmark = [pytest.mark.skipif(not has_git(), reason="needs git"), needs_sandbox]


def observation(chat_server, number: int = 1) -> str:
    """What the model was told after its `number`th request."""
    return chat_server.requests[number]["messages"][-1]["content"]


# -- 9. a `.git` a command makes is named and undone; ignored files are judged by ctime --------

# A repository whose next `git status` runs a program of the command's (fsmonitor and a hook).
HOOKED = (
    "git init -q {where} && printf '#!/bin/sh\\necho ran >> {marker}\\n' > {where}/.git/monitor"
    " && chmod +x {where}/.git/monitor {where}/.git/hooks/*"
    ' && git -C {where} config core.fsmonitor "$(pwd)/{where}/.git/monitor"'
    " && cp {where}/.git/monitor {where}/.git/hooks/post-checkout"
)


@pytest.mark.parametrize("where", [".", "lib"])
def test_a_git_repository_a_command_makes_in_a_plain_folder_is_named_and_undone(
    heph, chat_server, workspace, tmp_path, where
):
    marker = tmp_path / "ran"
    (workspace / "lib").mkdir()
    (workspace / "lib" / "code.py").write_text("x = 1\n")
    chat_server.reply(act("shell", command=HOOKED.format(where=where, marker=marker)))
    chat_server.reply(final("done"))
    result = heph("--yes", "set it up")
    assert result.code == 0, result.stderr
    made = os.path.normpath(f"{where}/.git")
    subprocess.run(["git", "status"], cwd=workspace / where, capture_output=True, check=False)
    assert marker.exists()  # the person's next `git status` would run the command's program
    marker.unlink()
    said = observation(chat_server)
    assert f"made a git repository, which undo removes: {made}" in said
    assert f"{made}" in result.stderr and "git repository" in result.stderr
    undone = heph("undo")
    assert undone.code == 0, undone.stderr
    assert f"removed  {made}" in undone.stdout
    assert not os.path.lexists(workspace / made)
    assert (workspace / "lib" / "code.py").read_text() == "x = 1\n"
    subprocess.run(["git", "status"], cwd=workspace / where, capture_output=True, check=False)
    assert not marker.exists()


def test_a_nested_repository_a_command_makes_in_a_new_folder_of_a_repository_is_undone(
    heph, chat_server, home, tmp_path
):
    marker = tmp_path / "ran"
    root = clone(tmp_path, {"app.py": "x = 1\n"})
    line = "mkdir tools && " + HOOKED.format(where="tools", marker=marker)
    chat_server.reply(act("shell", command=line))
    chat_server.reply(final("done"))
    env = person(home, chat_server)
    assert heph("--yes", "set it up", cwd=root, env=env).code == 0
    assert "made a git repository, which undo removes: tools/.git" in observation(chat_server)
    assert heph("undo", cwd=root, env=env).code == 0
    assert not os.path.lexists(root / "tools" / ".git")
    subprocess.run(["git", "status"], cwd=root / "tools", capture_output=True, check=False)
    assert not marker.exists()


def test_a_file_planted_in_an_ignored_folder_with_its_times_set_back_is_reported(
    heph, chat_server, home, tmp_path
):
    root = clone(tmp_path, {"app.py": "x = 1\n", ".gitignore": ".venv/\n"})
    site = root / ".venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "dep.py").write_text("y = 1\n")
    old = "touch -r app.py"
    plant = (
        "echo 'import os; os.system(\"id\")' > .venv/lib/site-packages/zz.pth"
        f" && {old} .venv/lib/site-packages/zz.pth && {old} .venv/lib/site-packages"
        f" && {old} .venv/lib && {old} .venv"
    )
    chat_server.reply(act("shell", command=plant))
    chat_server.reply(final("done"))
    result = heph("--yes", "install", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    assert (site / "zz.pth").stat().st_mtime <= (root / "app.py").stat().st_mtime  # set back
    said = observation(chat_server)
    assert "It also changed what git ignores" in said and ".venv/" in said
    assert "changed ignored files" in result.stderr


# -- 12. a setuid or setgid file a command makes is named, wherever it is ----------------------


def test_a_setuid_file_a_command_makes_is_named_ignored_or_not_and_undone_where_tracked(
    heph, chat_server, home, tmp_path
):
    root = clone(tmp_path, {"app.py": "x = 1\n", "run.sh": "echo\n", ".gitignore": "build/\n"})
    line = (
        "mkdir -p build && cp /bin/sh build/sh && chmod u+s build/sh"
        " && cp /bin/sh tool && chmod u+s tool run.sh"
    )
    chat_server.reply(act("shell", command=line))
    chat_server.reply(final("done"))
    env = person(home, chat_server)
    result = heph("--yes", "build", cwd=root, env=env)
    assert result.code == 0, result.stderr
    assert (root / "build" / "sh").stat().st_mode & stat.S_ISUID  # the command did it
    said = observation(chat_server)
    named = "It made setuid or setgid files, which run with their owner's rights:"
    assert named in said and named in result.stderr
    for each in ("build/sh (setuid)", "tool (setuid)", "run.sh (setuid)"):
        assert each in said and each in result.stderr
    assert heph("undo", cwd=root, env=env).code == 0
    assert not (root / "tool").exists()
    assert not (root / "run.sh").stat().st_mode & stat.S_ISUID
    assert (root / "run.sh").read_text() == "echo\n"


# -- 14. undo through a link, of a huge file, and of thousands of files -----------------------


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_undo_of_a_folder_a_command_swapped_for_a_link_outside_restores_it(
    heph, chat_server, home, tmp_path, force
):
    outside = tmp_path / "outside"
    (outside / "calc").mkdir(parents=True)
    (outside / "calc" / "__init__.py").write_text("theirs\n")
    (outside / "notes.txt").write_text("outside\n")
    root = clone(
        tmp_path,
        {"src/calc/__init__.py": "X = 1\n", "src/calc/ops.py": "Y = 2\n", "src/notes.txt": "n\n"},
    )
    chat_server.reply(act("shell", command=f"rm -rf src && ln -s {outside} src"))
    chat_server.reply(final("done"))
    env = person(home, chat_server)
    assert heph("--yes", "tidy", cwd=root, env=env).code == 0
    assert (root / "src").is_symlink()
    undone = heph("undo", *force, cwd=root, env=env)
    assert undone.code == 0, undone.stderr
    assert not (root / "src").is_symlink()
    assert (root / "src" / "calc" / "__init__.py").read_text() == "X = 1\n"
    assert (root / "src" / "calc" / "ops.py").read_text() == "Y = 2\n"
    assert (root / "src" / "notes.txt").read_text() == "n\n"
    assert (outside / "calc" / "__init__.py").read_text() == "theirs\n"
    assert (outside / "notes.txt").read_text() == "outside\n"
    assert sorted(p.name for p in outside.rglob("*")) == ["__init__.py", "calc", "notes.txt"]


def peak_memory_of(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run `argv` in a process of its own that reports the largest resident size (in KB) any
    process it waited for reached: (that size, what heph wrote)."""
    watcher = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(done.stdout + done.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", watcher, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    size, _, said = done.stdout.partition("\n")
    return int(size), said


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


def test_a_huge_file_a_command_makes_costs_no_memory_or_copy_and_heph_says_so(
    chat_server, home, workspace
):
    (workspace / "app.py").write_text("x = 1\n")
    chat_server.reply(act("shell", command="truncate -s 512M big.bin"))
    chat_server.reply(final("done"))
    env = environment(home, chat_server.url)
    peak, said = peak_memory_of([*heph_command(), "--yes", "make it"], workspace, env)
    assert (workspace / "big.bin").stat().st_size == 512 * 2**20
    assert peak < 300_000, f"{peak} KB"  # heph alone is about 100 MB; the file is 512
    assert folder_size(workspace / ".heph") < 16 * 2**20
    told = observation(chat_server)
    assert "big.bin: over 16 MB, so heph kept no copy" in told, told
    assert "big.bin" in said
    peak, said = peak_memory_of([*heph_command(), "undo"], workspace, env)
    assert "deleted  big.bin" in said, said
    assert not (workspace / "big.bin").exists()
    assert peak < 300_000, f"{peak} KB"


def test_thousands_of_files_one_command_makes_are_recorded_and_undone_quickly(
    heph_forked, chat_server, workspace
):
    (workspace / "app.py").write_text("x = 1\n")
    chat_server.reply(act("shell", command="mkdir out && cd out && touch $(seq 1 5000)"))
    chat_server.reply(final("done"))
    made = heph_forked("--yes", "make them", timeout=60)
    assert made.code == 0, made.stderr
    assert len(list((workspace / "out").iterdir())) == 5000
    assert "The command changed these files: out/" in observation(chat_server)
    undone = heph_forked("undo", timeout=60)
    assert undone.code == 0, undone.stderr
    assert list((workspace / "out").iterdir()) == []
