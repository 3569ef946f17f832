"""Every path, named or found by walking a folder, passes one containment and secret check."""

import pytest

from conftest import git
from hephaistus.testing.tools import run_tool
from hephaistus.tools import ToolContext, default_registry
from hephaistus.workspace import Workspace
from hephaistus.workspace.repomap import Focus, RepoMap

TOOLS = default_registry()
OUTSIDE_TEXT = "def leaked_outside_symbol():\n    return 'OUTSIDE-MARKER'\n"
SECRET_TEXT = "DATABASE_PASSWORD=SECRET-MARKER\n"


@pytest.fixture
def linked(tmp_path):
    """A workspace with links out of it and to its secret file."""
    (tmp_path / "outside.py").write_text(OUTSIDE_TEXT)
    (tmp_path / "outside_dir").mkdir()
    (tmp_path / "outside_dir" / "deep.py").write_text(OUTSIDE_TEXT)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def app():\n    return 1\n")
    (root / ".env").write_text(SECRET_TEXT)
    (root / "notes.py").symlink_to(tmp_path / "outside.py")
    (root / "config.txt").symlink_to(root / ".env")
    (root / "settings.py").symlink_to(root / ".env")
    (root / "vendor").symlink_to(tmp_path / "outside_dir")
    return root


def call(ctx, tool, **args):
    return run_tool(ctx, tool, args)


@pytest.mark.parametrize("in_git", [False, True])
def test_walked_files_leave_out_links_that_point_outside(linked, in_git):
    if in_git:
        git(linked, "init", "-q")
    files = Workspace.at(linked).files()
    assert "notes.py" not in files and not any(f.startswith("vendor") for f in files)
    assert "app.py" in files


@pytest.mark.parametrize("in_git", [False, True])
def test_search_never_returns_outside_or_secret_text(linked, in_git):
    if in_git:
        git(linked, "init", "-q")
    ctx = ToolContext(Workspace.at(linked))
    for path in (".", "config.txt", "settings.py", "notes.py", "vendor"):
        output = call(ctx, "search", pattern="MARKER", path=path).output
        assert "OUTSIDE-MARKER" not in output and "SECRET-MARKER" not in output, path
    assert call(ctx, "search", pattern="return 1").output.startswith("app.py:2:")


def test_read_file_refuses_a_link_to_a_secret_under_any_name(linked):
    ctx = ToolContext(Workspace.at(linked))
    for path in ("config.txt", "settings.py", ".env"):
        result = call(ctx, "read_file", path=path)
        assert not result.ok and "secret" in result.output and "SECRET-MARKER" not in result.output


def test_the_workspace_map_reads_nothing_through_links(linked):
    git(linked, "init", "-q")
    text = RepoMap(Workspace.at(linked)).render(Focus("look at notes.py"), 4000)
    assert "leaked_outside_symbol" not in text and "SECRET" not in text
    assert "def app" in text


@pytest.mark.parametrize(
    "name",
    [
        ".ENV",
        "Secrets.env",
        "prod.env",
        ".netrc",
        ".npmrc",
        ".pypirc",
        "credentials.json",
        ".git-credentials",
        "server.PEM",
        "cert.p12",
        ".ssh/config",
        ".aws/credentials",
        "id_rsa",
    ],
)
def test_secret_names_are_matched_without_regard_to_case(tmp_path, name):
    root = tmp_path / "ws"
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text("token=SECRET-MARKER\n")
    ctx = ToolContext(Workspace.at(root))
    assert not call(ctx, "read_file", path=name).ok
    assert "SECRET-MARKER" not in call(ctx, "search", pattern="MARKER").output


@pytest.mark.parametrize(
    "name",
    ["env.py", "keys.py", "environment.md", "secret_santa.py", "tokens.py", "credentials_form.py"],
)
def test_ordinary_names_are_not_secret(tmp_path, name):
    assert not Workspace.at(tmp_path).is_secret(name)


def test_a_workspace_inside_a_credential_store_is_all_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    root = tmp_path / ".aws" / "sso"
    root.mkdir(parents=True)
    (root / "cache.json").write_text('{"accessToken": "SECRET-MARKER"}\n')
    ctx = ToolContext(Workspace.at(root))
    assert not call(ctx, "read_file", path="cache.json").ok
    assert "SECRET-MARKER" not in call(ctx, "search", pattern="MARKER").output


def test_a_workspace_inside_hephs_own_folder_shows_and_takes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "state" / "hephaistus"
    root.mkdir(parents=True)
    (root / "approvals.json").write_text("{}\n")
    ctx = ToolContext(Workspace.at(root))
    assert call(ctx, "list_files").output == "no files under '.'"
    for tool, args in (("read_file", {}), ("write_file", {"content": '{"write": 1}'})):
        result = call(ctx, tool, path="approvals.json", **args)
        assert not result.ok and "heph's own" in result.output
    assert (root / "approvals.json").read_text() == "{}\n"


@pytest.fixture
def repo_with_env(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".env").write_text("TOKEN=old\n")
    (root / "app.py").write_text("x = 1\n")
    git(root, "add", ".")
    git(root, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "base")
    (root / ".env").write_text("TOKEN=SECRET-MARKER\n")
    (root / "app.py").write_text("x = 2\n")
    git(root, "add", "app.py")
    (root / "app.py").write_text("x = 3\n")
    return root


def test_git_diff_leaves_secret_files_out(repo_with_env):
    ctx = ToolContext(Workspace.at(repo_with_env))
    whole = call(ctx, "git_diff")
    assert "SECRET-MARKER" not in whole.output and "+x = 3" in whole.output
    assert ".env" in whole.output  # it says what it left out
    assert not call(ctx, "git_diff", path=".env").ok
    git(repo_with_env, "add", ".env")
    staged = call(ctx, "git_diff", staged=True)
    assert "SECRET-MARKER" not in staged.output and "+x = 2" in staged.output
    ctx.allow_secrets = True
    assert "SECRET-MARKER" in call(ctx, "git_diff", staged=True).output


def test_git_diff_of_a_secret_change_alone_says_there_is_one(repo_with_env):
    git(repo_with_env, "reset", "-q")
    git(repo_with_env, "checkout", "-q", "app.py")
    result = call(ToolContext(Workspace.at(repo_with_env)), "git_diff")
    assert result.output.startswith("no unstaged changes but in secret files\n")
    assert ".env" in result.output and "SECRET-MARKER" not in result.output


def test_control_characters_in_a_named_path_are_refused(tmp_path):
    ctx = ToolContext(Workspace.at(tmp_path))
    result = call(ctx, "write_file", path="\x1b]0;owned\x07.py", content="x\n")
    assert not result.ok and "control character" in result.output
    assert list(tmp_path.iterdir()) == []


def swap_for_a_link(folder, target):
    """What another program may do at any moment: move a folder away, link its name elsewhere."""
    folder.rename(folder.with_name(folder.name + ".moved"))
    folder.symlink_to(target, target_is_directory=True)


@pytest.fixture
def swappable(tmp_path):
    """(workspace root, a folder outside it): pkg/a.py inside, a.py outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.py").write_text(OUTSIDE_TEXT)
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("x = 1\n")
    return root, outside


def test_a_folder_swapped_for_a_link_while_a_write_waits_is_not_written_through(swappable):
    root, outside = swappable
    ctx = ToolContext(Workspace.at(root))

    def approve_after_the_swap(proposal):  # the person deliberates; meanwhile the swap happens
        swap_for_a_link(root / "pkg", outside)
        return "yes"

    args = {"path": "pkg/a.py", "content": "x = 2\n"}
    run_tool(ctx, "read_file", {"path": "pkg/a.py"})  # a whole-file write needs it read
    result = run_tool(ctx, "write_file", args, mode="ask", asker=approve_after_the_swap)
    assert not result.ok and "became a link" in result.output
    assert (outside / "a.py").read_text() == OUTSIDE_TEXT
    assert {p.name for p in outside.iterdir()} == {"a.py"}


def test_a_checked_path_whose_folder_became_a_link_is_neither_read_nor_written(swappable):
    from hephaistus.textfile import atomic_write, read_text

    root, outside = swappable
    _, real = Workspace.at(root).check("pkg/a.py")
    swap_for_a_link(root / "pkg", outside)  # between the check and the open
    with pytest.raises(OSError, match="became a link"):
        read_text(real, "pkg/a.py")
    with pytest.raises(OSError, match="became a link"):
        atomic_write(real, b"y = 2\n", temp_dir=root / ".heph" / "tmp", real=True)
    assert (outside / "a.py").read_text() == OUTSIDE_TEXT
    (root / "pkg").unlink()
    (root / "pkg.moved").rename(root / "pkg")
    (root / "pkg" / "a.py").unlink()
    (root / "pkg" / "a.py").symlink_to(outside / "a.py")  # the file itself became a link
    with pytest.raises(OSError, match="became a link"):
        read_text(real, "pkg/a.py")


@pytest.mark.parametrize(
    "path, hint",
    [
        (".heph/state.json", "heph keeps its own records there"),
        (".HEPH./sessions/x.jsonl", "heph keeps its own records there"),
        (".git/config", "the git tools show what git knows"),
        ("vendor/lib/.git/HEAD", "the git tools show what git knows"),
    ],
)
def test_a_protected_folder_s_refusal_says_where_to_look_instead(tmp_path, path, hint):
    ctx = ToolContext(Workspace.at(tmp_path))
    result = run_tool(ctx, "read_file", {"path": path})
    assert not result.ok and "which the file tools never read" in result.output
    assert hint in result.output
