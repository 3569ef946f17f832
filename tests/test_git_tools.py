"""Git tools on real repositories in temporary folders."""

import subprocess
import sys

import pytest

from conftest import environment, git
from hephaistus.testing import act, final
from hephaistus.testing.tools import run_tool
from hephaistus.tools import ToolContext, default_registry
from hephaistus.values import CommitRequest, FileChange
from hephaistus.workspace import Workspace

TOOLS = default_registry()


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "dev@example.invalid")
    git(root, "config", "user.name", "Dev")
    (root / "app.py").write_text("print(1)\n")
    (root / "notes.txt").write_text("mine\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "base")
    return root


def context(root, *heph_changed):
    ctx = ToolContext(Workspace.at(root))
    ctx.journal.files.extend(FileChange(path, "", False) for path in heph_changed)
    return ctx


def trusted(root):
    """The person trusts the repository as it is now, its settings included (heph runs git
    there even when its .git holds what a clone would not)."""
    from hephaistus.workspace.trust import TrustStore, settings_needing_trust

    TrustStore().record(root, settings_needing_trust(root), True)


def call(ctx, tool, mode="auto", asker=None, dry_run=False, **args):
    return run_tool(ctx, tool, args, mode=mode, asker=asker, dry_run=dry_run)


def test_status_separates_hephs_changes_from_the_users(repo):
    (repo / "app.py").write_text("print(2)\n")
    (repo / "notes.txt").write_text("mine, edited\n")
    (repo / "new.py").write_text("x = 1\n")
    result = call(context(repo, "app.py", "new.py"), "git_status")
    assert result.ok
    heph_part, user_part = result.output.split("other changes")
    assert "branch: main" in heph_part
    assert " M app.py" in heph_part and "?? new.py" in heph_part
    assert "notes.txt" in user_part and "notes.txt" not in heph_part


def test_commit_takes_only_hephs_files_and_leaves_the_users_index(repo):
    (repo / "app.py").write_text("print(2)\n")
    (repo / "new.py").write_text("x = 1\n")
    (repo / "notes.txt").write_text("mine\nstaged part\nunstaged part\n")
    git(repo, "add", "notes.txt")
    (repo / "notes.txt").write_text("mine\nstaged part\nunstaged part\nmore unstaged\n")
    staged_before = git(repo, "diff", "--cached", "--", "notes.txt")
    result = call(context(repo, "app.py", "new.py"), "git_commit", message="heph: update app")
    assert result.ok, result.output
    committed = git(repo, "show", "--name-only", "--format=%s", "HEAD").split()
    assert committed == ["heph:", "update", "app", "app.py", "new.py"]
    assert git(repo, "diff", "--cached", "--", "notes.txt") == staged_before
    assert "more unstaged" in (repo / "notes.txt").read_text()
    assert git(repo, "status", "--porcelain") == "MM notes.txt\n"


def test_commit_without_changes_or_paths_is_refused(repo):
    result = call(context(repo), "git_commit", message="nothing")
    assert not result.ok and "changed no files" in result.output


def test_a_repositorys_hook_never_runs_and_the_commit_names_it(repo, tmp_path):
    marker = tmp_path / "hook-ran"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\necho 'lint failed' >&2\nexit 1\n")
    hook.chmod(0o755)
    trusted(repo)
    (repo / "brand_new.py").write_text("x = 1\n")
    result = call(context(repo, "brand_new.py"), "git_commit", message="try")
    assert result.ok and "hooks did not run: pre-commit" in result.output, result.output
    assert not marker.exists()  # the project's code never ran on the host
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["brand_new.py"]


def signing_with(repo, script: str) -> None:
    """The repository signs its commits with `script` as its gpg program (the person's
    settings, trusted): a commit that takes its time, or fails saying something."""
    program = repo / ".git" / "sign.sh"
    program.write_text(f"#!/bin/sh\n{script}\n")
    program.chmod(0o755)
    git(repo, "config", "commit.gpgSign", "true")
    git(repo, "config", "gpg.program", str(program))
    trusted(repo)


def test_a_failed_commit_is_reported_and_its_intent_to_add_withdrawn(repo):
    signing_with(repo, "echo 'no secret key' >&2\nexit 1")
    (repo / "brand_new.py").write_text("x = 1\n")
    head = git(repo, "rev-parse", "HEAD")
    result = call(context(repo, "brand_new.py"), "git_commit", message="try")
    assert not result.ok and "gpg failed to sign" in result.output, result.output
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == "?? brand_new.py\n"  # intent-to-add withdrawn


def test_first_commit_in_an_empty_repository(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "dev@example.invalid")
    git(root, "config", "user.name", "Dev")
    (root / "a.py").write_text("a = 1\n")
    (root / "user.txt").write_text("not heph's\n")
    ctx = context(root, "a.py")
    assert call(ctx, "git_log").output == "no commits yet"
    assert "(no commits yet)" in call(ctx, "git_status").output
    result = call(ctx, "git_commit", message="first")
    assert result.ok, result.output
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == ["a.py"]
    assert git(root, "status", "--porcelain") == "?? user.txt\n"


def test_detached_head_still_commits(repo):
    git(repo, "checkout", "-q", "--detach")
    (repo / "app.py").write_text("print(3)\n")
    result = call(context(repo, "app.py"), "git_commit", message="detached work")
    assert result.ok and "detached HEAD" in result.output


def test_explicit_paths_and_containment(repo, tmp_path):
    (repo / "notes.txt").write_text("changed by request\n")
    ctx = context(repo, "notes.txt")
    assert not call(ctx, "git_commit", message="x", paths="../outside.txt").ok
    assert not call(ctx, "git_commit", message="x", paths="missing.txt").ok
    assert call(ctx, "git_commit", message="notes", paths="notes.txt").ok
    assert git(repo, "log", "-1", "--format=%s") == "notes\n"


def test_outside_a_repository(tmp_path):
    ctx = context(tmp_path)
    for tool in ("git_status", "git_diff", "git_log"):
        result = call(ctx, tool)
        assert not result.ok and "not inside a git repository" in result.output
    assert not call(ctx, "git_commit", message="x").ok


def test_diff_and_log(repo):
    (repo / "app.py").write_text("print(2)\n")
    (repo / "untracked.py").write_text("")
    ctx = context(repo)
    diff = call(ctx, "git_diff")
    assert "-print(1)\n+print(2)" in diff.output and "untracked.py" in diff.output
    assert call(ctx, "git_diff", staged=True).output.startswith("no staged changes")
    assert "app.py" in call(ctx, "git_diff", path="app.py").output
    assert not call(ctx, "git_diff", path="../x").ok
    log = call(ctx, "git_log", n=5)
    assert log.ok and "base" in log.output


def test_commit_needs_approval(repo):
    (repo / "app.py").write_text("print(2)\n")
    ctx = context(repo, "app.py")
    asked = []

    def no_answer(proposal):
        asked.append(proposal.request)
        raise EOFError

    for mode in ("ask", "edits"):  # both ask before a commit
        result = call(ctx, "git_commit", mode=mode, asker=no_answer, message="x")
        assert result.refused and "commit not approved" in result.output
    assert git(repo, "log", "--oneline").count("\n") == 1
    assert asked == [CommitRequest(("app.py",), "x")] * 2
    assert call(ctx, "git_commit", mode="ask", message="x").refused  # no one to ask
    declined = call(ctx, "git_commit", mode="ask", asker=lambda p: "no", message="x")
    assert not declined.ok and declined.decision == "decline"
    dry = call(ctx, "git_commit", dry_run=True, message="x")
    assert dry.ok and "dry run" in dry.output and "nothing was committed" in dry.output
    planned = call(ctx, "git_commit", mode="plan", message="x")
    assert planned.decision == "deny" and "not available in plan mode" in planned.output
    assert git(repo, "log", "--oneline").count("\n") == 1
    made = call(ctx, "git_commit", mode="ask", asker=lambda p: "yes", message="x")
    assert made.ok and made.commit and git(repo, "log", "--oneline").count("\n") == 2


def test_git_tools_are_offered_only_in_a_repository(heph, chat_server, workspace, repo):
    chat_server.reply(act("git_status"))
    chat_server.reply(final("no repository"))
    assert heph("what changed?").code == 0
    outside = chat_server.requests[0]["messages"][0]["content"]
    assert "- read_file(" in outside and "git_" not in outside
    # the tool is still there: a model that calls it learns why it cannot work
    assert "is not inside a git repository" in chat_server.requests[1]["messages"][-1]["content"]

    chat_server.reply(final("clean"))
    assert heph("what changed?", cwd=repo).code == 0
    inside = chat_server.requests[-1]["messages"][0]["content"]
    assert "- git_status(): " in inside and "- git_commit(message, paths?: [string]): " in inside


def test_a_workspace_in_a_subfolder_sees_its_own_diff_and_commits_by_name(repo):
    sub = repo / "sub"
    sub.mkdir()
    (sub / "mod.py").write_text("a = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "sub")
    (sub / "mod.py").write_text("a = 2\n")
    (repo / "app.py").write_text("print(2)\n")  # outside the workspace
    ctx = context(sub, "mod.py")
    diff = call(ctx, "git_diff").output
    assert "+a = 2" in diff and "print(2)" not in diff
    assert "+a = 2" in call(ctx, "git_diff", path="mod.py").output
    made = call(ctx, "git_commit", message="sub only")
    assert made.ok and made.commit.paths == ("sub/mod.py",), made.output
    assert git(repo, "status", "--porcelain") == " M app.py\n"


def test_gitpython_runs_every_command_through_heph_and_starts_no_process_of_its_own(
    repo, monkeypatch
):
    from git import cmd, index

    from hephaistus.runtime.gitrun import GitError
    from hephaistus.workspace.gitlibrary import RunnerGit
    from hephaistus.workspace.repository import Repository

    def refuse(*args, **kwargs):
        raise AssertionError(f"GitPython started a process of its own: {args[:1]}")

    for module, name in ((cmd, "safer_popen"), (cmd, "Popen"), (index.fun, "safer_popen")):
        monkeypatch.setattr(module, name, refuse)
    git(repo, "tag", "v1")
    (repo / "app.py").write_text("print(2)\n")
    ctx = context(repo, "app.py")
    assert "branch: main" in call(ctx, "git_status").output
    assert "+print(2)" in call(ctx, "git_diff").output
    assert "(HEAD -> main, tag: v1) base" in call(ctx, "git_log").output
    made = call(ctx, "git_commit", message="second")
    assert made.ok, made.output
    library = Repository.find(repo).library
    assert isinstance(library, RunnerGit)
    with pytest.raises(GitError, match="heph runs git commands to their end"):
        library.get_object_header("HEAD")  # what GitPython would keep a cat-file running for


def test_a_sha256_repository_works(tmp_path):
    root = tmp_path / "sha256"
    root.mkdir()
    git(root, "init", "-q", "-b", "main", "--object-format=sha256")
    git(root, "config", "user.email", "dev@example.invalid")
    git(root, "config", "user.name", "Dev")
    (root / "app.py").write_text("print(1)\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "base")
    from hephaistus.workspace.gitsetup import beyond_a_clone

    assert beyond_a_clone(root) == []  # a clone writes its format version and object format too
    (root / "app.py").write_text("print(2)\n")
    ctx = context(root, "app.py")
    assert "branch: main\n" in call(ctx, "git_status").output
    assert call(ctx, "git_log").output.endswith("base")
    made = call(ctx, "git_commit", message="second")
    assert made.ok and len(made.commit.sha) == 64, made.output
    assert git(root, "log", "-1", "--format=%s") == "second\n"


@pytest.mark.parametrize(
    "variable", ["GIT_COMMON_DIR", "GIT_DIR", "GIT_WORK_TREE", "GIT_OBJECT_DIRECTORY"]
)
def test_a_variable_that_names_another_repository_leads_nowhere(
    repo, tmp_path, monkeypatch, variable
):
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "trunk")
    git(
        other,
        "-c",
        "user.name=o",
        "-c",
        "user.email=o@o",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "theirs",
    )
    monkeypatch.setenv(variable, str(other / ".git") if variable != "GIT_WORK_TREE" else str(other))
    (repo / "app.py").write_text("print(2)\n")
    ctx = context(repo, "app.py")
    assert "branch: main\n" in call(ctx, "git_status").output
    assert call(ctx, "git_log").output.endswith("base")
    made = call(ctx, "git_commit", message="second")
    assert made.ok, made.output
    monkeypatch.delenv(variable)  # the test's own git calls
    assert git(repo, "log", "-1", "--format=%s") == "second\n"
    assert git(other, "log", "--format=%s") == "theirs\n"


def test_importing_gitpython_runs_no_git(tmp_path):
    logged = tmp_path / "ran.txt"
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$@" >> {logged}\n')
    fake.chmod(0o755)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import hephaistus.workspace.gitlibrary, git; print(git.Git.GIT_PYTHON_GIT_EXECUTABLE)",
        ],
        env={"PATH": f"{fake.parent}:/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "git" and not logged.exists()


def test_gitpython_is_imported_only_when_a_git_tool_runs(chat_server, tmp_path, repo):
    script = (
        "import sys\nfrom hephaistus import cli\ntry:\n    cli.main(sys.argv[1:])\n"
        "except SystemExit:\n    pass\nprint('imported git:', 'git' in sys.modules)\n"
    )
    env = environment(tmp_path / "home", chat_server.url)

    def imports_git(*argv: str) -> bool:
        done = subprocess.run(
            [sys.executable, "-c", script, *argv],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "imported git:" in done.stdout, done.stderr
        return "imported git: True" in done.stdout

    chat_server.reply(act("read_file", path="app.py"))
    chat_server.reply(final("read"))
    assert not imports_git("--yes", "read app.py")
    chat_server.reply(act("git_status"))
    chat_server.reply(final("clean"))
    assert imports_git("--yes", "what changed?")
    assert "branch: main" in chat_server.requests[-1]["messages"][-1]["content"]


def test_a_refused_commit_names_the_files_that_can_be_committed_on_their_own(repo):
    (repo / "app.py").write_text("print(2)\n")
    (repo / "notes.txt").write_text("mine, staged\n")
    git(repo, "add", "notes.txt")  # the user's staged work in a file heph also changed
    (repo / "new.py").write_text("x = 1\n")
    ctx = context(repo, "app.py", "notes.txt", "new.py")
    refused = call(ctx, "git_commit", message="all")
    assert not refused.ok and "notes.txt also has changes the user staged" in refused.output
    assert "paths ['app.py', 'new.py']" in refused.output
    made = call(ctx, "git_commit", message="mine only", paths=["app.py", "new.py"])
    assert made.ok and made.commit.paths == ("app.py", "new.py"), made.output
    assert git(repo, "status", "--porcelain") == "M  notes.txt\n"


def test_a_huge_diff_is_cut_once_and_says_its_real_size(repo):
    (repo / "app.py").write_text("".join(f"line = {n}\n" for n in range(50_000)))
    (repo / "untracked.py").write_text("")
    result = call(context(repo), "git_diff")
    note = "(untracked files, not in any diff: untracked.py)\n"
    size = len(note) + len(git(repo, "diff", "--no-renames", "--", ".").encode()) - 1
    assert result.ok and result.output.startswith(note)  # the notes first: never cut off
    assert f"the output was {size} bytes]" in result.output  # the diff's last newline: GitPython
    assert result.output.count("more bytes cut") == 1
    assert len(result.output.encode()) <= 16_000 + 100  # the limit, and the note that cut it


def test_the_persons_color_settings_never_reach_the_model(repo, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[color]\n\tui = always\n\tdiff = always\n\tdecorate = always\n"
    )
    monkeypatch.setenv("HOME", str(home))
    assert "\x1b" in git(repo, "log", "-1", "--decorate")  # git itself colors it
    (repo / "app.py").write_text("print(2)\n")
    ctx = context(repo, "app.py")
    for tool in ("git_log", "git_diff", "git_status"):
        assert "\x1b" not in call(ctx, tool).output, tool
    assert "\x1b" not in call(ctx, "git_commit", message="plain").output


def test_a_commit_past_the_timeout_ends_with_git_and_leaves_no_lock(repo, monkeypatch):
    import os
    import time

    from hephaistus.runtime import gitrun

    monkeypatch.setattr(gitrun, "TIMEOUT", 1.0)
    signing_with(repo, f"echo $$ > {repo / '.git' / 'signer.pid'}\nsleep 60")
    (repo / "brand_new.py").write_text("x = 1\n")
    result = call(context(repo, "brand_new.py"), "git_commit", message="slow")
    assert not result.ok and "did not finish within 1 s" in result.output
    pid = int((repo / ".git" / "signer.pid").read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("what git started still runs")
    assert not (repo / ".git" / "index.lock").exists()
    assert git(repo, "status", "--porcelain") == "?? brand_new.py\n"  # intent-to-add withdrawn


def test_a_second_commit_of_the_same_changes_says_they_are_committed_already(repo):
    (repo / "app.py").write_text("print(2)\n")
    (repo / "new.py").write_text("x = 1\n")
    ctx = context(repo, "app.py", "new.py")
    assert call(ctx, "git_commit", message="first").ok
    again = call(ctx, "git_commit", message="again")
    assert not again.ok and "app.py, new.py are committed already" in again.output
    (repo / "new.py").write_text("x = 2\n")  # heph changes one of them again
    more = call(ctx, "git_commit", message="more")
    assert more.ok and more.commit.paths == ("new.py",), more.output


def test_in_a_chat_a_file_committed_then_changed_again_commits_again(repo):
    from hephaistus.engine.agent import Agent
    from hephaistus.runtime.policy import Policy
    from hephaistus.settings.config import Config
    from hephaistus.testing import ScriptedModel

    model = ScriptedModel(
        [
            act("edit_file", path="app.py", old="print(1)", new="print(2)"),
            act("git_commit", message="two"),
            final("committed"),
            act("edit_file", path="app.py", old="print(2)", new="print(3)"),
            act("git_commit", message="three"),
            final("committed again"),
        ]
    )
    agent = Agent(Workspace.at(repo), Config(), model=model, policy=Policy("auto"))
    assert agent.execute("make it two").status == "answered"
    assert agent.execute("now three").status == "answered"
    assert git(repo, "log", "--format=%s") == "three\ntwo\nbase\n"
    assert git(repo, "status", "--porcelain") == ""


def test_continue_commits_what_the_earlier_sessions_of_the_conversation_changed(
    heph, chat_server, repo
):
    chat_server.reply(act("edit_file", path="app.py", old="print(1)", new="print(2)"))
    chat_server.reply(final("changed"))
    assert heph("--yes", "make it two", cwd=repo).code == 0
    chat_server.reply(act("write_file", path="app.py", content="print(3)\n"))
    chat_server.reply(act("git_status"))
    chat_server.reply(act("git_commit", message="three"))
    chat_server.reply(final("committed"))
    result = heph("-c", "--yes", "--json", "make it three and commit", cwd=repo)
    assert result.code == 0, result.stderr
    status = chat_server.requests[-2]["messages"][-1]["content"]
    assert "changed by heph in this session:\n   M app.py" in status
    assert git(repo, "log", "-1", "--format=%s") == "three\n"
    assert git(repo, "status", "--porcelain") == ""
    chat_server.reply(final("a new conversation"))
    assert heph("--yes", "unrelated", cwd=repo).code == 0  # no -c: nothing of the earlier
    chat_server.reply(act("git_commit", message="again"))
    chat_server.reply(final("no"))
    assert heph("--yes", "commit", cwd=repo).code == 0
    assert "changed no files" in chat_server.requests[-1]["messages"][-1]["content"]


def test_heph_s_records_stay_out_of_git_in_a_worktree_too(repo, tmp_path):
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(worktree))
    Workspace.at(worktree).ensure_heph_dir()
    (worktree / ".heph" / "sessions").mkdir()
    (worktree / ".heph" / "sessions" / "x.jsonl").write_text("{}\n")
    assert git(worktree, "status", "--porcelain") == ""


def test_a_planted_gitignore_link_in_heph_s_folder_is_not_written_through(tmp_path):
    root = tmp_path / "ws"
    (root / ".heph").mkdir(parents=True)
    target = tmp_path / "outside.txt"
    target.write_text("theirs\n")
    (root / ".heph" / ".gitignore").symlink_to(target)
    Workspace.at(root).ensure_heph_dir()
    assert target.read_text() == "theirs\n"


def test_an_index_file_of_another_repository_is_not_used(repo, tmp_path, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    (repo / "new.py").write_text("n = 1\n")
    ctx = context(repo, "new.py")
    assert "?? new.py" in call(ctx, "git_status").output
    assert call(ctx, "git_commit", message="new").ok
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert git(repo, "status", "--porcelain") == ""
    assert git(other, "status", "--porcelain") == ""  # its index untouched


def test_continue_after_a_commit_commits_the_next_change_of_the_same_file(heph, chat_server, repo):
    chat_server.reply(act("edit_file", path="app.py", old="print(1)", new="print(2)"))
    chat_server.reply(act("git_commit", message="two"))
    chat_server.reply(final("committed"))
    assert heph("--yes", "make it two and commit", cwd=repo).code == 0
    chat_server.reply(act("edit_file", path="app.py", old="print(2)", new="print(3)"))
    chat_server.reply(act("git_commit", message="three"))
    chat_server.reply(final("committed"))
    result = heph("-c", "--yes", "now three, commit", cwd=repo)
    assert result.code == 0, result.stderr
    assert "committed" in chat_server.requests[-1]["messages"][-1]["content"]
    assert git(repo, "log", "--format=%s") == "three\ntwo\nbase\n"


def test_in_a_small_window_a_huge_diff_is_still_cut_once(heph, chat_server, repo):
    (repo / "app.py").write_text("".join(f"line = {n}\n" for n in range(50_000)))
    chat_server.reply(act("git_diff"))
    chat_server.reply(final("big"))
    assert heph("-m", "some-local-model", "--yes", "what changed?", cwd=repo).code == 0
    seen = chat_server.requests[1]["messages"][-1]["content"]
    assert seen.count("more bytes cut") == 1
    size = int(seen.split("the output was ")[1].split(" bytes")[0])
    assert size > 600_000  # the diff's real size, not the size of a first cut


def test_ctrl_c_while_a_commit_runs_leaves_the_index_as_it_was(repo):
    import os
    import signal
    import threading
    import time

    marker = repo / ".git" / "signing-started"
    signing_with(repo, f"touch {marker}\nsleep 30")
    (repo / "brand_new.py").write_text("x = 1\n")

    def press_ctrl_c() -> None:
        deadline = time.monotonic() + 10
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=press_ctrl_c, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        call(context(repo, "brand_new.py"), "git_commit", message="interrupted")
    assert not (repo / ".git" / "index.lock").exists()
    assert git(repo, "status", "--porcelain") == "?? brand_new.py\n"  # intent-to-add withdrawn
    assert git(repo, "log", "--format=%s") == "base\n"
