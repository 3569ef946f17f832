import os

import pytest

from conftest import git, has_git
from hephaistus.runtime.secret_files import is_secret_name
from hephaistus.testing import final
from hephaistus.workspace import PathError, Workspace


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("a = 1\n")
    return Workspace.at(root)


@pytest.mark.parametrize("path", ["../x", "src/../../x", "/etc/passwd", "/tmp", ""])
def test_paths_outside_are_refused(ws, path):
    with pytest.raises(PathError):
        ws.resolve(path)


def test_relative_and_inside_absolute_paths_resolve(ws):
    assert ws.resolve("src/a.py") == ws.root / "src" / "a.py"
    assert ws.resolve(str(ws.root / "src" / "a.py")) == ws.root / "src" / "a.py"
    assert ws.resolve("src/new/b.py", for_write=True) == ws.root / "src" / "new" / "b.py"


def test_symlink_pointing_outside_is_refused(ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws.root / "link").symlink_to(outside)
    (ws.root / "file_link").symlink_to(outside / "secret.txt")
    with pytest.raises(PathError, match="outside the workspace"):
        ws.resolve("link/x.txt", for_write=True)
    with pytest.raises(PathError, match="outside the workspace"):
        ws.resolve("file_link", for_write=True)


def test_symlink_inside_the_workspace_is_followed(ws):
    (ws.root / "alias.py").symlink_to(ws.root / "src" / "a.py")
    assert ws.resolve("alias.py") == ws.root / "src" / "a.py"


@pytest.mark.parametrize("path", [".git/config", ".heph/state.json", "sub/.git/HEAD", "src"])
def test_protected_places_are_never_written(ws, path):
    (ws.root / ".git").mkdir()
    with pytest.raises(PathError):
        ws.resolve(path, for_write=True)


@pytest.mark.parametrize(
    "name, secret",
    [
        (".env", True),
        (".env.local", True),
        ("certs/server.pem", True),
        ("a.key", True),
        ("id_rsa", True),
        ("id_ed25519.pub", True),
        ("env.py", False),
        ("keys.py", False),
    ],
)
def test_secret_names(name, secret):
    assert is_secret_name(name) is secret


def test_heph_dir_is_excluded_from_git_once(ws):
    git(ws.root, "init", "-q")
    ws.ensure_heph_dir()
    ws.ensure_heph_dir()
    exclude = (ws.root / ".git" / "info" / "exclude").read_text()
    assert exclude.splitlines().count(".heph/") == 1
    (ws.heph_dir / "state.json").write_text("{}")
    assert git(ws.root, "status", "--porcelain", "--untracked-files=all").count(".heph") == 0


def test_files_respect_gitignore_in_a_repository(ws):
    git(ws.root, "init", "-q")
    (ws.root / ".gitignore").write_text("*.log\nbuild/\n")
    (ws.root / "x.log").write_text("log")
    (ws.root / "build").mkdir()
    (ws.root / "build" / "out.py").write_text("")
    (ws.root / "untracked.py").write_text("")
    assert ws.files() == [".gitignore", "src/a.py", "untracked.py"]
    assert ws.files("src") == ["src/a.py"]


def test_files_respect_gitignore_without_git(ws):
    (ws.root / ".gitignore").write_text("*.log\n/build/\n# comment\n")
    (ws.root / "x.log").write_text("log")
    (ws.root / "build").mkdir()
    (ws.root / "build" / "out.py").write_text("")
    (ws.root / "node_modules").mkdir()
    (ws.root / "node_modules" / "m.js").write_text("")
    assert ws.files() == [".gitignore", "src/a.py"]


def test_named_pipes_are_neither_listed_nor_read_as_rules(ws):
    import threading

    os.mkfifo(ws.root / "src" / ".gitignore")  # reading it would wait for a writer for ever
    os.mkfifo(ws.root / "src" / "pipe.py")
    found = []
    walk = threading.Thread(target=lambda: found.append(ws.files()), daemon=True)
    walk.start()
    walk.join(10)
    assert found == [["src/a.py"]]


def test_resolve_refuses_nul_bytes(ws):
    with pytest.raises(PathError):
        ws.resolve("a\0b")


def test_workspace_root_is_resolved_through_symlinks(tmp_path, ws):
    link = tmp_path / "link_to_ws"
    link.symlink_to(ws.root)
    assert Workspace.at(link).root == ws.root
    assert os.path.isabs(Workspace.at(link).root)


def test_a_subfolder_workspace_uses_the_repositorys_git(tmp_path):
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "sub" / "a.py").write_text("")
    (repo / "sub" / "x.log").write_text("")
    ws = Workspace.at(repo / "sub")
    assert ws.files() == ["a.py"]  # the repository's .gitignore applies
    ws.ensure_heph_dir()
    (ws.heph_dir / "state.json").write_text("{}")
    assert ".heph" not in git(repo, "status", "--porcelain", "--untracked-files=all")


IGNORE_TREE = {
    ".gitignore": "*.log\n!keep.log\n/out/\n**/gen/**\ndocs/*.html\n*.tmp\n",
    "keep.log": "",
    "x.log": "",
    "out/x.py": "",
    "lib/out/inner.py": "",  # /out/ is anchored to the root
    "lib/gen/made.py": "",
    "docs/index.html": "",
    "docs/api/deep.html": "",  # docs/*.html does not reach a subfolder
    "pkg/.gitignore": "secret_*.txt\n!*.tmp\nlocal/\n",
    "pkg/secret_a.txt": "",
    "pkg/notes.tmp": "",  # a deeper file's rule wins
    "pkg/local/x.py": "",
    "pkg/mod.py": "",
    "other/secret_b.txt": "",  # pkg's rules stay in pkg
}


@pytest.mark.skipif(not has_git(), reason="git compares the result")
def test_ignore_rules_without_git_are_the_ones_git_applies(tmp_path):
    for name in ("plain", "repo"):
        for rel, text in IGNORE_TREE.items():
            path = tmp_path / name / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    git(tmp_path / "repo", "init", "-q")
    listed = git(tmp_path / "repo", "ls-files", "--others", "--exclude-standard").split()
    assert sorted(listed) == Workspace.at(tmp_path / "plain").files()
    assert "keep.log" in listed and "lib/out/inner.py" in listed and "pkg/notes.tmp" in listed
    assert Workspace.at(tmp_path / "plain").files("pkg") == [
        "pkg/.gitignore",
        "pkg/mod.py",
        "pkg/notes.tmp",
    ]


def test_a_walk_outside_git_skips_tool_folders_and_stops_in_time(tmp_path, monkeypatch):
    from hephaistus import workspace as module

    root = tmp_path / "plain"
    (root / ".cache" / "pip").mkdir(parents=True)
    (root / ".cache" / "pip" / "wheel.py").write_text("x = 1\n")
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text("on: push\n")
    (root / "app.py").write_text("x = 1\n")
    assert Workspace.at(root).files() == [".github/workflows/ci.yml", "app.py"]
    for i in range(30):
        (root / f"f{i:02}.py").write_text("")
    monkeypatch.setattr(module, "WALK_FILES", 10)
    assert len(Workspace.at(root).files()) <= 40  # stopped after the first folder's files


def test_the_home_folder_is_said_to_be_no_project(heph, chat_server, home):
    (home / ".cache").mkdir()
    (home / ".cache" / "junk.py").write_text("def junk(): pass\n")
    (home / "notes.py").write_text("def notes(): pass\n")
    chat_server.reply(final("hi"))
    result = heph("hi", cwd=home)
    assert result.code == 0 and "is your home folder" in result.stderr
    sent = chat_server.requests[0]["messages"][-1]["content"]
    assert "notes.py" in sent and ".cache" not in sent
