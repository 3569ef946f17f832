"""The hooks of .pre-commit-hooks.yaml, run by the real pre-commit in a real repository.

pre-commit installs this repository (at its last commit) into a hook environment of its own,
which takes a while the first time; the environment is shared by the tests of this module.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import git

pytestmark = pytest.mark.index  # pre-commit installs this project: it needs the package index
REPO = Path(__file__).resolve().parents[1]
UNDOCUMENTED = (
    '"""Reports."""\n\n\ndef low(items, minimum=5):\n    return [i for i in items if i < minimum]\n'
)


MEMORY = Path("/dev/shm")  # a file system in memory, where Linux has one


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    if not (REPO / ".git").exists():
        pytest.skip("the hooks are installed from this repository's git history")
    # The hook environment is some 8,000 files (100 MB): written to memory when there is room,
    # it installs faster, and it is removed at the end of the module, while the other workers
    # still run tests, not by pytest's clean-up of old temporary folders in a later run.
    if in_memory_room(MEMORY):
        home = Path(tempfile.mkdtemp(prefix="heph-pre-commit-home-", dir=MEMORY))
    else:
        home = tmp_path_factory.mktemp("pre-commit-home")
    yield home
    shutil.rmtree(home, ignore_errors=True)


def in_memory_room(folder: Path) -> bool:
    """Whether `folder` is a writable file system whose programs may run, with 1 GB free."""
    try:
        found = os.statvfs(folder)
    except OSError:
        return False
    runs = not found.f_flag & os.ST_NOEXEC
    return runs and os.access(folder, os.W_OK) and found.f_bavail * found.f_frsize > 2**30


def project(tmp_path, hook_id, pre_commit_home, env):
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    (root / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {REPO}\n  rev: {rev}\n  hooks:\n  - id: {hook_id}\n"
    )
    subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )
    (root / "report.py").write_text(UNDOCUMENTED)
    git(root, "add", ".")
    return root


def commit(root, env):
    return subprocess.run(
        ["git", "commit", "-m", "work"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def environment(pre_commit_home, **extra):
    return {
        **os.environ,
        "PRE_COMMIT_HOME": str(pre_commit_home),
        # pip byte-compiles all 4,000 files it installs, a quarter of the install's time; the
        # hooks import a few of them, compiled as they are imported.
        "PIP_NO_COMPILE": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        **extra,
    }


def test_check_hook_fails_the_commit_naming_the_function(tmp_path, pre_commit_home):
    env = environment(pre_commit_home)
    root = project(tmp_path, "heph-docs", pre_commit_home, env)
    done = commit(root, env)
    assert done.returncode != 0, done.stdout + done.stderr
    assert "report.py:4: low: missing docstring" in done.stdout + done.stderr


def test_fix_hook_writes_the_docstring_and_the_second_commit_passes(
    tmp_path, pre_commit_home, chat_server
):
    chat_server.reply({"docstrings": [{"name": "low", "docstring": "Items below the minimum."}]})
    env = environment(pre_commit_home, OPENAI_BASE_URL=chat_server.url)
    env.pop("OPENAI_API_KEY", None)
    root = project(tmp_path, "heph-docs-fix", pre_commit_home, env)
    first = commit(root, env)
    assert first.returncode != 0, first.stdout + first.stderr  # the hook changed a file
    text = (root / "report.py").read_text()
    assert text == UNDOCUMENTED.replace(
        "minimum=5):\n", 'minimum=5):\n    """Items below the minimum."""\n'
    )
    git(root, "add", "report.py")
    second = commit(root, env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert len(chat_server.requests) == 1
    assert git(root, "log", "--format=%s") == "work\n"
