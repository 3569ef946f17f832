"""The workspace map: ranked, cached, and never over its token budget."""

import os

import pytest

from conftest import git
from hephaistus import tokens
from hephaistus.repomap import Focus, RepoMap
from hephaistus.workspace import Workspace


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "models.py").write_text(
        "class User:\n    def name(self) -> str:\n        pass\n"
    )
    (root / "pkg" / "views.py").write_text(
        "from pkg.models import User\n\ndef show(user: User):\n    pass\n"
    )
    (root / "pkg" / "util.py").write_text("def helper():\n    pass\n")
    (root / "README.md").write_text("# project\n")
    for index in range(60):
        (root / "pkg" / f"extra_{index:02}.py").write_text(
            "".join(f"def function_number_{n}(argument_{n}):\n    pass\n" for n in range(10))
        )
    return Workspace.at(root)


@pytest.mark.parametrize("budget", [50, 100, 250, 1000, 4000])
def test_the_budget_is_never_exceeded(ws, budget):
    text = RepoMap(ws).render(Focus("anything"), budget)
    assert tokens.estimate(text) <= budget
    assert "left out]" in text


def test_a_large_budget_shows_everything(ws):
    text = RepoMap(ws).render(Focus(), 100_000)
    assert "left out" not in text
    assert "pkg/models.py\n  class User\n    def name(self) -> str" in text


def test_mentioned_then_active_then_imported_files_come_first(ws):
    text = RepoMap(ws).render(Focus("fix show() in views.py", active=["pkg/util.py"]), 200)
    order = [line for line in text.splitlines() if not line.startswith(" ")]
    assert order[:3] == ["pkg/views.py", "pkg/util.py", "pkg/models.py"]


def test_files_changed_in_git_rank_before_the_rest(ws):
    git(ws.root, "init", "-q")
    git(ws.root, "add", ".")
    git(ws.root, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "base")
    (ws.root / "pkg" / "extra_42.py").write_text("def changed_recently():\n    pass\n")
    text = RepoMap(ws).render(Focus(), 60)
    assert text.splitlines()[0] == "pkg/extra_42.py"


def test_symbols_are_cached_by_size_and_mtime(ws):
    repomap = RepoMap(ws)
    repomap.render(Focus(), 100_000)
    assert repomap.cache_path.is_file()
    util = ws.root / "pkg" / "util.py"
    stat = util.stat()
    # Same size and mtime: the cache is trusted, the file is not read again.
    util.write_text("def helpxx():\n    pass\n")
    os.utime(util, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "def helper()" in RepoMap(ws).render(Focus(), 100_000)
    # A real change (new mtime) is seen.
    util.write_text("def renamed():\n    pass\n")
    os.utime(util, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    text = RepoMap(ws).render(Focus(), 100_000)
    assert "def renamed()" in text and "def helper()" not in text


def test_a_corrupt_cache_is_rebuilt(ws):
    repomap = RepoMap(ws)
    repomap.cache_path.parent.mkdir(parents=True)
    repomap.cache_path.write_text("{not json")
    assert "class User" in repomap.render(Focus(), 100_000)


def test_an_empty_workspace(tmp_path):
    assert RepoMap(Workspace.at(tmp_path)).render(Focus(), 1000) == ""
