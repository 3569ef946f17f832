"""How heph runs one git command line: the door every git call of heph's goes through (the
workspace's listing, snapshots, and GitPython's commands for the git tools, see gitlibrary).
Output is read in its machine formats (`-z`, `--porcelain`), and every failure becomes a GitError
carrying git's own message.

A repository's `.git/` is the repository author's text when it came unpacked from an archive:
its config can make git run programs (filters, drivers, fsmonitor, signing, a hooks path, a
promisor remote's fetch), its hooks are programs, and its layout can lead to another repository
(a `gitdir:` file, `commondir`, alternates). `gitsetup` lists all that; while the workspace is
untrusted and its `.git/` holds any of it, heph runs no git there at all (see gitlocation, where
the repository is located once per run). And whatever the trust, each git command runs pinned to
that `.git` (`GIT_DIR`, `GIT_WORK_TREE`: no other repository is discovered, `core.worktree` is
ignored), without the person's credentials in its environment, asking no fsmonitor, fetching
nothing, running no hook, never looking into submodules, never running external diff drivers
or filters (but Git LFS's own), taking no optional lock and refreshing no index (looking at git
leaves the person's `.git/index` as it was), and taking the file names heph passes literally (a
file named `[.]env` is that file).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from hephaistus.runtime.gitlocation import Located, locate, runs_no_git
from hephaistus.runtime.gitwait import waited

TIMEOUT = 60.0
# No fsmonitor, no fetching, no automatic housekeeping (gc) behind a commit.
ALWAYS = ("-c", "core.fsmonitor=false", "-c", "protocol.allow=never", "-c", "gc.auto=0")
NO_HOOKS = ("-c", f"core.hooksPath={os.devnull}")  # no hook of the repository's ever runs
DIFFING = {"diff", "log", "show"}  # no driver runs, no color is asked: heph reads plain diffs
NOT_RECURSING = {"diff", "status"}  # a submodule's own config could run its programs
NAMING_FILES = {"add", "commit", "rm", "ls-files", "diff", "hash-object"}  # literal pathspecs
INSPECTING = {"config", "rev-parse"}  # read the setup, run nothing: allowed when disabled
# `git diff` rewrites the index to refresh its stat data, optional locks or not (git 2.39).
NOT_REFRESHING = ("-c", "diff.autoRefreshIndex=false")


class GitError(Exception):
    """A git command failed; the message is git's, for the model or the user."""


def listed_files(folder: Path) -> list[str]:
    """Tracked and untracked, not ignored files under `folder`, relative to it."""
    raw = run(folder, "ls-files", "-z", "--cached", "--others", "--exclude-standard", text=False)
    return [name for name in raw.split("\0") if name]


def names(folder: Path, *args: str) -> list[str]:
    """The file names a command prints (diff --name-only, log --name-only); none if it fails."""
    try:
        output = run(folder, *args, text=False)
    except GitError:
        return []
    return [name for name in output.replace("\0", "\n").splitlines() if name]


def run(
    cwd: Path, *args: str, text: bool = True, data: bytes | None = None, literal: bool = False
) -> str:
    """`git ARGS` in `cwd` (given `data` on its standard input): its output, or GitError with
    git's message. With text=False the output keeps undecodable file names (surrogate
    escapes), as the file system spells them; with `literal`, paths are names, not patterns."""
    output = _succeeded(run_completed(cwd, *args, data=data, literal=literal))
    return output.decode("utf-8", "replace" if text else "surrogateescape")


def run_completed(
    cwd: Path, *args: str, data: bytes | None = None, literal: bool = False
) -> subprocess.CompletedProcess[bytes]:
    """`git ARGS` in `cwd` as `run` runs it (pinned, flagged, without credentials, no hook),
    its exit code and both streams as they came (GitPython reads them); GitError only when git
    may not or cannot run."""
    verb = args[0] if args else ""
    if literal and verb not in NAMING_FILES:
        raise ValueError(f"literal pathspecs are for commands that name files, not git {verb}")
    located = locate(cwd)
    if located is None:
        raise GitError(f"{cwd} is not inside a git repository")
    if runs_no_git(located) and verb not in INSPECTING:
        raise GitError(
            "heph runs no git here until the workspace is trusted: its .git holds what a clone "
            "would not (`heph trust --show` lists it)"
        )
    flags = ["--no-ext-diff", "--no-textconv", "--no-color"] if verb in DIFFING else []
    flags += ["--ignore-submodules=all"] if verb in NOT_RECURSING else []
    hooks_off = NO_HOOKS if verb not in INSPECTING else ()
    refresh_off = NOT_REFRESHING if verb == "diff" else ()
    drivers_off = _no_filters(located) if verb not in INSPECTING else ()
    settings = [*ALWAYS, *hooks_off, *refresh_off, *drivers_off]
    command = [_program(), *settings, *args[:1], *flags, *args[1:]]
    return _completed(command, cwd, _environment(located, literal), data, TIMEOUT)


def _git(command: list[str], cwd: Path, env: dict[str, str], data: bytes | None) -> bytes:
    """Run one git command line; its output, or GitError with git's own message."""
    return _succeeded(_completed(command, cwd, env, data))


def _succeeded(done: subprocess.CompletedProcess[bytes]) -> bytes:
    """A command's output, or GitError with what git said when it failed."""
    if done.returncode != 0:
        raise GitError(failure_message(done))
    return done.stdout


def _completed(
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    data: bytes | None,
    timeout: float = TIMEOUT,
) -> subprocess.CompletedProcess[bytes]:
    """Run one git command line to its end. In a session of its own: at the timeout (or a
    Ctrl-C) git and what it started end together, git removing its locks."""
    from hephaistus.runtime.executor import kill_group

    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            stdin=subprocess.DEVNULL if data is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
    except OSError as error:
        raise GitError(f"git {_verb(command)} could not run: {error}") from None
    try:
        stdout, stderr = waited(process, data, timeout, cwd)
    except subprocess.TimeoutExpired:
        kill_group(process)
        raise GitError(
            f"git {_verb(command)} did not finish within {timeout:g} s and was stopped, with "
            "what it started"
        ) from None
    except BaseException:
        kill_group(process)
        raise
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def failure_message(done: subprocess.CompletedProcess[bytes]) -> str:
    """What git said when a command failed (its output and errors), or its exit code."""
    message = "\n".join(
        part.decode("utf-8", "replace").strip()
        for part in (done.stdout, done.stderr)
        if part.strip()
    )
    return message or f"git {_verb(list(done.args))} failed (exit code {done.returncode})"


def _verb(command: list[str]) -> str:
    return next((part for part in command[1:] if not part.startswith("-") and "=" not in part), "")


PLACING = {  # the caller's variables that would lead git to another repository
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
}


_filters: dict[Path, tuple[str, ...]] = {}  # a repository's work tree -> its filters turned off
# Git LFS's own filter, as `git lfs install` writes it: the person's git-lfs, found on heph's
# PATH, which reads nothing of the repository's that runs a program. Kept, or heph would see
# every LFS file as changed.
LFS_FILTER = re.compile(r"git-lfs (?:clean|smudge) -- %f|git-lfs filter-process")


def _no_filters(located: Located) -> tuple[str, ...]:
    """Every filter driver the repository's git would run (defined anywhere in the config it
    reads: the person's global `nbstripout` filter among them) turned off for heph's git, Git
    LFS's own kept. A repository's `.gitattributes` chooses which file a filter runs on, and
    the filter runs in the repository: a clone's `nbstripout.py` stood in for the person's
    `python -m nbstripout` and ran with heph's key in reach. Asked once per repository and
    run."""
    if located[0] not in _filters:
        commands: dict[str, list[str]] = {}
        for key, value in _config_entries(located, r"^filter\."):
            name, part = key[len("filter.") : key.rfind(".")], key[key.rfind(".") + 1 :]
            if part in ("clean", "smudge", "process"):
                commands.setdefault(name, []).append(value)
        off: list[str] = []
        for name, given in sorted(commands.items()):
            if not all(LFS_FILTER.fullmatch(command.strip()) for command in given):
                off += [
                    arg
                    for part in ("clean", "smudge", "process")
                    for arg in ("-c", f"filter.{name}.{part}=")
                ]
        _filters[located[0]] = tuple(off)
    return _filters[located[0]]


def _config_entries(located: Located, pattern: str) -> list[tuple[str, str]]:
    """(key, value) of every setting matching `pattern` in the config the repository's git
    reads (system, global, its own, what they include); none where git cannot say."""
    try:
        listed = subprocess.run(
            [_program(), "config", "--null", "--get-regexp", pattern],
            cwd=located[0],
            env=_environment(located, literal=False),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT,
        ).stdout.decode("utf-8", "surrogateescape")
    except (OSError, subprocess.TimeoutExpired):
        return []
    entries = [item.partition("\n") for item in listed.split("\0") if item]
    return [(key, value) for key, _, value in entries]


def _environment(located: Located, literal: bool) -> dict[str, str]:
    """This process's environment without credentials (a hook of the person's own needs no
    API key), pinned to the repository found. The person's own git settings in it stay
    (`GIT_CONFIG_GLOBAL`; `GIT_INDEX_FILE`, which a commit's hook runs heph with)."""
    from hephaistus.redact import CREDENTIAL_TEXT, SECRET_NAME

    environ = {
        name: value
        for name, value in os.environ.items()
        if name not in PLACING
        and not (SECRET_NAME.search(name) and name != "GIT_INDEX_FILE")
        and not CREDENTIAL_TEXT.search(value)
    }
    work_tree, git_dir = located
    index = environ.get("GIT_INDEX_FILE")
    if index and not Path(os.path.realpath(index)).is_relative_to(os.path.realpath(git_dir)):
        del environ["GIT_INDEX_FILE"]  # a hook's index is in its repository; another's is not
    # No optional lock: `git status` would rewrite the index to refresh its stat data.
    environ.update(GIT_DIR=str(git_dir), GIT_WORK_TREE=str(work_tree), GIT_OPTIONAL_LOCKS="0")
    if literal:
        environ["GIT_LITERAL_PATHSPECS"] = "1"
    return environ


def run_private(git_dir: Path, work_tree: Path, *args: str, data: bytes | None = None) -> bytes:
    """`git ARGS` on heph's own repository `git_dir` (the workspace snapshots, which heph
    made in the user's state folder), over `work_tree`: none of the person's git settings or
    attributes, system or global, and none of the workspace's (no filter, driver or hook of
    theirs runs), and nothing of theirs is written. Its output as bytes, or GitError."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "GIT_DIR": str(git_dir),
        **({"GIT_WORK_TREE": str(work_tree)} if args[:1] != ("init",) else {}),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_LITERAL_PATHSPECS": "1",
        "LC_ALL": "C",
    }
    own = ("-c", "core.autocrlf=false", "-c", f"core.attributesFile={os.devnull}")
    command = [_program(), *ALWAYS, *NO_HOOKS, *own, *args]
    return _git(command, work_tree, env, data)


def _program() -> str:
    """The git heph runs: by absolute path, found where no workspace or command put it."""
    from hephaistus.runtime.programs import find, missing

    found = find("git")
    if found is None:
        raise GitError(missing("git"))
    return found
