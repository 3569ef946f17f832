"""The person's own programs in a cloned repository, and the repository heph's git works on: the
repository is located once per run (a `.git` a command makes later changes nothing heph runs),
and heph's looking at git leaves the person's index as it was. Each test is an attack run
for real: real git repositories, the real sandbox, heph run as a person runs it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_hostile_repo import clone, person
from test_own_hands import needs_sandbox

from conftest import git, has_git
from hephaistus.testing import act, final

pytestmark = pytest.mark.skipif(not has_git(), reason="needs git")


def observation(chat_server, n: int) -> str:
    return chat_server.requests[n]["messages"][-1]["content"]


# -- 7. the repository is located once, at start -----------------------------------------------


def built_repository(marker: Path) -> dict[str, str]:
    """A git directory inside a subfolder, not named `.git` (so nothing at start): its config
    runs a filter on every .py file."""
    script = f"sh -c 'echo filter >> {marker}; cat'"
    evil = "sub/fixtures/evil.git"
    return {
        f"{evil}/HEAD": "ref: refs/heads/main\n",
        f"{evil}/config": (
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
            f'[filter "fmt"]\n\tclean = "{script}"\n\tsmudge = "{script}"\n'
        ),
        f"{evil}/objects/.keep": "",
        f"{evil}/refs/heads/.keep": "",
        "sub/.gitattributes": "*.py filter=fmt\n",
        "sub/app.py": "x = 1\n",
    }


@needs_sandbox
def test_a_git_file_a_command_makes_in_a_subfolder_workspace_changes_nothing_heph_runs(
    heph, chat_server, home, tmp_path
):
    marker = tmp_path / "ran"
    top = clone(tmp_path, built_repository(marker))
    sub = top / "sub"
    env = person(home, chat_server)
    chat_server.reply(act("shell", command="printf 'gitdir: fixtures/evil.git\\n' > .git"))
    chat_server.reply(act("write_file", path="new.py", content="y = 2\n"))
    chat_server.reply(act("git_status"))
    chat_server.reply(act("git_commit", message="add new.py"))
    chat_server.reply(final("done"))
    result = heph("-w", str(sub), "--yes", "commit", cwd=top, env=env)
    assert result.code == 0, result.stderr
    assert (sub / ".git").is_file()  # the command made it, in the sandbox
    assert not marker.exists(), marker.read_text()
    assert "committed" in observation(chat_server, 4)
    assert git(top, "log", "-1", "--format=%s", "--name-only") == "add new.py\n\nsub/new.py\n"
    evil = sub / "fixtures" / "evil.git"
    assert [p.name for p in (evil / "refs" / "heads").iterdir()] == [".keep"]  # no commit there


# -- 17. looking at git leaves the person's index as it was ------------------------------------


def test_plan_modes_git_tools_leave_the_index_byte_identical(heph, chat_server, tmp_path):
    root = clone(tmp_path, {"app.py": "x = 1\n", "lib/util.py": "y = 2\n"})
    for path in (root / "app.py", root / "lib" / "util.py"):
        os.utime(path, (1_000_000_000, 1_000_000_000))  # stat data git would refresh
    (root / "app.py").write_text("x = 3\n")
    index = (root / ".git" / "index").read_bytes()
    chat_server.reply(act("git_status"))
    chat_server.reply(act("git_diff"))
    chat_server.reply(act("git_diff", staged=True))
    chat_server.reply(act("git_log"))
    chat_server.reply(final("the plan"))
    result = heph("--mode", "plan", "look at the changes", cwd=root)
    assert result.code == 0, result.stderr
    assert (root / ".git" / "index").read_bytes() == index
    status, diff = observation(chat_server, 1), observation(chat_server, 2)
    assert " M app.py" in status and "util.py" not in status
    assert "+x = 3" in diff and "util.py" not in diff
    assert "no staged changes" in observation(chat_server, 3)
