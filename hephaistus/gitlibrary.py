"""GitPython for the git tools, with heph's git runner under it.

The git tools (status, diff, log, commit) and `/commit` reach the repository through GitPython.
It reads the refs and HEAD itself, in this process; every git command it runs, and every object
it reads (one `git cat-file` each), goes through `repository.run_completed`, the door every other
git call of heph's uses: pinned to the `.git` heph found, without the person's credentials, with
no fsmonitor, external diff driver or hook but a commit's, and refused while the workspace is
untrusted. GitPython's own process code (`Git.execute`, which passes the whole environment on,
and the `cat-file` processes it keeps running) never runs in a repository.

Importing GitPython costs about a tenth of a second, so this module is imported only when a
git tool runs; `--version`, `--help` and the workspace's file listing never load it. GitPython
runs `git version` once as it is imported, to find git: it starts no repository's program.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import git

from hephaistus.repository import GitError, failure_message, locate, run_completed


class LibraryGitError(git.GitCommandError, GitError):
    """A git command GitPython asked for failed: GitPython's error (its own code catches that
    one), worded as git said it, as every GitError is."""

    def __init__(self, command: list[str], status: int, message: str) -> None:
        super().__init__(command, status, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class _RunnerGit(git.Git):
    """GitPython's git command, run by heph's runner in the repository's working tree."""

    def __init__(self, top: str | Path) -> None:
        super().__init__(str(top))
        self.top = Path(top)

    def execute(  # type: ignore[override]
        self,
        command: Any,
        istream: Any = None,
        with_extended_output: bool = False,
        with_exceptions: bool = True,
        as_process: bool = False,
        output_stream: Any = None,
        stdout_as_string: bool = True,
        strip_newline_in_stdout: bool = True,
        **_ignored: Any,  # timeouts, shells and chunk sizes: the runner has its own
    ) -> Any:
        """Run `command` (git and its arguments) through the runner. Its output, as GitPython
        asks for it: text or bytes, with the exit code and errors, or as a stream when it asked
        for a process (the command has finished by then)."""
        argv = [str(part) for part in command]
        literal = self._environment.get("GIT_LITERAL_PATHSPECS") == "1"
        data = istream.read() if hasattr(istream, "read") else None
        done = run_completed(self.top, *argv[1:], data=data, literal=literal)
        if done.returncode != 0 and (with_exceptions or as_process):
            raise LibraryGitError(argv, done.returncode, failure_message(done))
        if as_process:
            return _Finished(done.stdout, done.stderr)
        if output_stream is not None:
            output_stream.write(done.stdout)
        raw = (
            done.stdout[:-1]
            if strip_newline_in_stdout and done.stdout.endswith(b"\n")
            else done.stdout
        )
        stdout: str | bytes = raw.decode("utf-8", "replace") if stdout_as_string else raw
        if with_extended_output:
            return done.returncode, stdout, done.stderr.decode("utf-8", "replace")
        return stdout

    def get_object_data(self, ref: str | bytes) -> tuple[str, str, int, bytes]:
        """(id, type, size, content) of one object, read by a `git cat-file --batch` of its
        own that the runner runs (GitPython would keep one running, outside it)."""
        name = ref.decode() if isinstance(ref, bytes) else ref
        argv = ["git", "cat-file", "--batch"]
        done = run_completed(self.top, *argv[1:], data=f"{name}\n".encode())
        if done.returncode != 0:
            raise LibraryGitError(argv, done.returncode, failure_message(done))
        header, _, content = done.stdout.partition(b"\n")
        # GitPython parses the header as bytes, and its callers take the id and type as bytes.
        hexsha, kind, size = self._parse_object_header(header)  # type: ignore[arg-type]
        return hexsha, kind, size, content[:size]

    def get_object_header(self, ref: str | bytes) -> tuple[str, str, int]:
        """(id, type, size) of one object."""
        hexsha, kind, size, _ = self.get_object_data(ref)
        return hexsha, kind, size

    def stream_object_data(self, ref: str | bytes) -> tuple[str, str, int, Any]:
        """(id, type, size, a stream of the content) of one object."""
        hexsha, kind, size, content = self.get_object_data(ref)
        return hexsha, kind, size, io.BytesIO(content)


class _Finished:
    """What GitPython reads of a process it asked for (`iter_commits` reads a `rev-list`), for a
    command that has already ended well."""

    def __init__(self, stdout: bytes, stderr: bytes) -> None:
        self.stdout = io.BytesIO(stdout)
        self.stderr = io.BytesIO(stderr)
        self.returncode = 0

    def wait(self, **_ignored: Any) -> int:
        """The exit code (0: a failed command raised before this was made)."""
        return 0

    def poll(self) -> int:
        """The exit code: the command has ended."""
        return 0


class _Repo(git.Repo):
    GitCommandWrapperType = _RunnerGit  # type: ignore[assignment]


def open_library(top: Path) -> git.Repo:
    """GitPython's view of the repository whose working tree is `top`, its commands run by
    heph's runner. GitError when GitPython finds another `.git` than heph's runner pins."""
    located = locate(top)
    if located is None:
        raise GitError(f"{top} is not inside a git repository")
    work_tree, git_dir = located
    try:
        library = _Repo(str(work_tree), expand_vars=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, OSError, ValueError) as error:
        raise GitError(f"GitPython cannot read the repository at {work_tree}: {error}") from None
    if Path(library.git_dir).resolve() != git_dir.resolve():
        raise GitError(
            f"GitPython found {library.git_dir}, not the repository's {git_dir}: heph reads "
            "no other repository"
        )
    library.git = _RunnerGit(work_tree)
    return library
