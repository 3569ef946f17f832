"""More of a person's first day, and a red team's round: what heph says about trust is what it
does, the chat's history keeps no key, a planted record never crashes plan mode, and /undo
takes back the turn it says it takes back. Each runs heph for real against a real repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from test_hostile_repo import clone, hook, person

from conftest import git, has_git
from hephaistus.testing import act, final

pytestmark = pytest.mark.skipif(not has_git(), reason="needs git")


# -- what heph trust says about hooks is what heph's commits do -------------------------------


def test_trust_says_commits_run_no_hook_and_a_commit_then_runs_none(
    heph, chat_server, home, tmp_path
):
    root = clone(tmp_path, {"app.py": "x = 1\n"})
    env = person(home, chat_server)
    shown = heph("trust", "--show", cwd=root, env=env)
    trusted = heph("trust", "--yes", cwd=root, env=env)
    again = heph("trust", "--show", cwd=root, env=env)
    for said in (shown.stdout, trusted.stdout, again.stdout):
        assert said.count("hook") == said.count("heph's commits run no hook") == 1, said
    assert "your MCP servers run in the sandbox here" in shown.stdout
    assert "on_host = true run as you here" in trusted.stdout + again.stdout

    marker = tmp_path / "hooked"
    hook(root, "pre-commit", marker)  # the person's own hook, in the repository they trusted
    listed = heph("trust", "--yes", cwd=root, env=env)
    assert listed.code == 0 and "pre-commit" in listed.stdout
    assert "heph's commits run no hook" in listed.stdout  # listed to trust, yet never run
    from hephaistus.workspace.trust import ask_to_trust, settings_needing_trust

    asked: list[str] = []
    ask_to_trust(settings_needing_trust(root), lambda question: asked.append(question) or "n")
    assert "pre-commit" in asked[0] and "heph's commits run no hook" in asked[0]  # the question
    chat_server.reply(act("edit_file", path="app.py", old="x = 1", new="x = 2"))
    chat_server.reply(act("git_commit", message="bump"))
    chat_server.reply(final("committed"))
    result = heph("--yes", "bump x and commit", cwd=root, env=env)
    assert result.code == 0, result.stderr
    assert not marker.exists()  # as the trust said: no hook ran
    assert "pre-commit" in chat_server.requests[-1]["messages"][-1]["content"]  # named skipped


# -- the nobody harness skips where the sandbox cannot see heph ------------------------------


@pytest.mark.skipif(os.getuid() != 0, reason="the harness runs as nobody only from root")
def test_the_nobody_harness_skips_when_heph_lies_under_tmp(tmp_path):
    # A venv under /tmp: the sandbox's /tmp is its own, so a server heph starts there as nobody
    # cannot import its package, and the attacks failed instead of being skipped.
    venv = Path(tempfile.mkdtemp(prefix="heph-venv-", dir="/tmp"))
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        sites = [path for path in sys.path if path.endswith("site-packages")]
        (venv / "lib" / version / "site-packages" / "deps.pth").write_text("\n".join(sites))
        probe = (
            "import sys; sys.path[:0] = [sys.argv[1]]\n"
            "import pytest, unprivileged\n"
            "try:\n    print('usable', unprivileged.python_for_nobody())\n"
            "except pytest.skip.Exception as skipped:\n    print('skipped:', skipped.msg)\n"
        )
        tests = str(Path(__file__).parent)
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-c", probe, tests], capture_output=True, text=True
        )
    finally:
        shutil.rmtree(venv)
    assert done.returncode == 0, done.stderr
    said = done.stdout.strip()
    assert said.startswith("skipped:") and "/tmp" in said and "site-packages" in said, said


# -- heph's records a clone commits as links ------------------------------------------------


def linked_clone(tmp_path: Path, linked: str, outside: Path) -> Path:
    """A clone whose repository commits `linked` (a folder of heph's records) as a link to
    `outside`, as a hostile repository can."""
    root = clone(tmp_path, {"app.py": "x = 1\n"}, name="upstream-files")
    upstream = tmp_path / "linked-upstream"
    shutil.copytree(root, upstream, symlinks=True)
    (upstream / linked).parent.mkdir(parents=True, exist_ok=True)
    (upstream / linked).symlink_to(outside, target_is_directory=True)
    git(upstream, "add", "-f", linked)
    git(upstream, "commit", "-qm", "records")
    git(tmp_path, "clone", "-q", str(upstream), "linked")
    return tmp_path / "linked"


@pytest.mark.parametrize(
    "linked",
    [".heph", ".heph/sessions", ".heph/plans", ".heph/checkpoints", ".heph/state", ".heph/tmp"],
)
def test_records_a_clone_commits_as_links_never_crash_plan_mode(
    heph, chat_server, home, tmp_path, linked
):
    outside = tmp_path / "victim"
    outside.mkdir()
    (outside / "notes.md").write_text("the person's own notes\n")
    root = linked_clone(tmp_path, linked, outside)
    env = person(home, chat_server)
    chat_server.reply(final("1. read app.py\n2. bump x"))
    planned = heph("--mode", "plan", "plan a bump of x", cwd=root, env=env)
    assert planned.code == 0, planned.stderr
    assert "Traceback" not in planned.stderr and "ValueError" not in planned.stderr
    assert "1. read app.py" in planned.stdout
    assert [p.name for p in outside.iterdir()] == ["notes.md"]  # nothing written through it
    notices = [line for line in planned.stderr.splitlines() if linked in line]
    assert len(notices) == 1, planned.stderr  # said once, in one line

    chat_server.reply(act("edit_file", path="app.py", old="x = 1", new="x = 2"))
    chat_server.reply(final("bumped"))
    went = heph("-c", "--mode", "edits", "go", cwd=root, env=env)
    assert went.code == 0, went.stderr
    assert "1. read app.py" in chat_server.requests[-2]["messages"][-1]["content"]
    assert (root / "app.py").read_text() == "x = 2\n"
    assert [p.name for p in outside.iterdir()] == ["notes.md"]
    assert heph("undo", "last", cwd=root, env=env).code == 0
    assert (root / "app.py").read_text() == "x = 1\n"
    for command in (["sessions"], ["replay", "last"], ["stats"]):
        shown = heph(*command, cwd=root, env=env)
        assert shown.code == 0 and "Traceback" not in shown.stderr, (command, shown.stderr)
    assert "plan a bump of x" in heph("sessions", cwd=root, env=env).stdout
