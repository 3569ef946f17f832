"""The workspace map: ranked, cached, and never over its token budget."""

import os

import pytest

from conftest import git
from hephaistus import tokens
from hephaistus.workspace import Workspace
from hephaistus.workspace.repomap import Focus, RepoMap


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
    assert "pkg/models.py\n  class User\n    def name() -> str" in text


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


# -- ranking by meaning ----------------------------------------------------------------------


@pytest.fixture
def project(tmp_path):
    """A package whose core everything imports, and modules named like everyday words."""
    root = tmp_path / "project"
    pkg = root / "src" / "shop"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from shop.core import answer\n")
    (pkg / "core.py").write_text(
        "class StockLedger:\n    def balance(self) -> int:\n        return 0\n\n"
        "def answer() -> int:\n    return 42\n"
    )
    (pkg / "report.py").write_text("from shop.core import StockLedger\n\ndef report():\n    pass\n")
    (pkg / "pricing.py").write_text("from .core import answer\n\ndef price():\n    pass\n")
    (pkg / "cli.py").write_text("import shop.core\nimport operator\n\ndef run():\n    pass\n")
    (pkg / "operator.py").write_text("def apply():\n    pass\n")
    for word in ("list", "main", "this", "modules", "project"):
        (pkg / f"{word}.py").write_text(f"def {word}_helper():\n    pass\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_core.py").write_text("from shop.core import answer\n")
    return Workspace.at(root)


def files_in_order(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith((" ", "["))]


def test_everyday_words_do_not_pull_files_up_and_the_core_comes_first(project):
    text = RepoMap(project).render(Focus("list the main modules of this project"), 1000)
    order = files_in_order(text)
    assert order[0] == "src/shop/core.py"  # three modules and a test import it
    assert order == files_in_order(RepoMap(project).render(Focus(), 1000))  # no word counted


def test_a_path_or_an_identifier_in_the_task_counts(project):
    for task, first in [
        ("fix list.py", "src/shop/list.py"),
        ("look at shop/pricing", "src/shop/pricing.py"),
        ("why does report() fail", "src/shop/report.py"),
        ("the `this_helper` is slow", "src/shop/this.py"),
        ("StockLedger loses stock", "src/shop/core.py"),
    ]:
        assert files_in_order(RepoMap(project).render(Focus(task), 1000))[0] == first, task


def test_a_rare_identifier_counts_more_than_a_common_one(project):
    for index in range(3):
        (project.root / f"run_{index}.py").write_text("def run():\n    pass\n")
    (project.root / "src" / "shop" / "zz.py").write_text("def rarely_used():\n    pass\n")
    order = files_in_order(RepoMap(project).render(Focus("run() calls rarely_used()"), 1000))
    assert order[0] == "src/shop/zz.py"  # declared once; run() in four files
    assert set(order[1:5]) == {"run_0.py", "run_1.py", "run_2.py", "src/shop/cli.py"}


def test_an_import_of_the_standard_library_is_not_a_file_inside_a_package(project):
    from hephaistus.workspace.repomap import reference_ranks

    repomap = RepoMap(project)
    repomap.render(Focus(), 1000)
    infos, references = repomap._infos(project.files())
    assert references == reference_ranks(infos)  # cached as computed
    assert "src/shop/operator.py" not in references  # `import operator` is the stdlib's
    assert references["src/shop/core.py"] == 10
    assert "tests/test_core.py" not in references  # nothing imports a test


def test_a_pasted_blob_in_the_task_names_nothing_and_the_rest_still_counts(project):
    task = "a_" * 50_000 + " then StockLedger " + "x/" * 50_000
    order = files_in_order(RepoMap(project).render(Focus(task), 1000))
    assert order[0] == "src/shop/core.py"


def test_a_test_file_is_listed_by_name_and_found_by_its_test_names(project):
    (project.root / "tests" / "test_core.py").write_text(
        "from shop.core import answer\n\ndef test_answer_is_42():\n    assert answer() == 42\n"
    )
    text = RepoMap(project).render(Focus(), 1000)
    assert "tests/test_core.py\n" in text and "test_answer_is_42" not in text
    assert "left out" not in text  # test names are not counted as symbols that did not fit
    named = RepoMap(project).render(Focus("test_answer_is_42 fails"), 1000)
    assert files_in_order(named)[0] == "tests/test_core.py"
