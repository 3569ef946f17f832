"""GitPython for the git tools, with heph's git runner under it.

The git tools (status, diff, log, commit) and `/commit` speak to git through GitPython's command
interface (`git.Git`: `library.status(...)`, `library.commit(...)`). Every command it makes goes
through `gitrun.run_completed`, the door every other git call of heph's uses: pinned to the
`.git` heph found, without the person's credentials, with no fsmonitor, external diff driver or
hook but a commit's, and refused while the workspace is untrusted.

GitPython's own process code never runs: not its `Git.execute` (which passes the whole
environment on), not the `git cat-file` it would keep running to read objects (refused: git
reads them, in the commands heph runs), and not the `git version` it runs as it is imported (it
is pointed at no program for that moment; heph's runner needs no such check). Nothing of the
repository is parsed in this process either: so a SHA-256 repository works, and no variable of
heph's environment (`GIT_COMMON_DIR`, say) leads GitPython to another repository's refs.

Importing GitPython costs about 140 ms, so this module is imported only when a
git tool runs; `--version`, `--help` and the workspace's file listing never load it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hephaistus.runtime.gitrun import GitError, failure_message, run_completed

NO_PROGRAM = "/nonexistent/heph-runs-git-itself"


def _import_gitpython() -> None:
    """Import GitPython without the `git version` its import runs to find git."""
    saved = {
        name: os.environ.get(name) for name in ("GIT_PYTHON_GIT_EXECUTABLE", "GIT_PYTHON_REFRESH")
    }
    os.environ.update(GIT_PYTHON_GIT_EXECUTABLE=NO_PROGRAM, GIT_PYTHON_REFRESH="quiet")
    try:
        import git
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    git.Git.GIT_PYTHON_GIT_EXECUTABLE = "git"  # for its messages: the runner names git itself


_import_gitpython()
import git  # noqa: E402  (imported just now, without its check)


class LibraryGitError(git.GitCommandError, GitError):
    """A git command GitPython asked for failed: GitPython's error (its own code catches that
    one), worded as git said it, as every GitError is."""

    def __init__(self, command: list[str], status: int, message: str) -> None:
        super().__init__(command, status, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class RunnerGit(git.Git):
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
        """Run `command` (git and its arguments) through the runner: its output as GitPython
        asks for it (text or bytes, with the exit code and errors). A process left running
        for GitPython to talk to (what its object reading asks for) is refused."""
        argv = [str(part) for part in command]
        if as_process:
            raise GitError(
                f"git {' '.join(argv[1:2])} was asked for as a running process: heph runs git "
                "commands to their end itself"
            )
        literal = self._environment.get("GIT_LITERAL_PATHSPECS") == "1"
        data = istream.read() if hasattr(istream, "read") else None
        done = run_completed(self.top, *argv[1:], data=data, literal=literal)
        if done.returncode != 0 and with_exceptions:
            raise LibraryGitError(argv, done.returncode, failure_message(done))
        if output_stream is not None:
            output_stream.write(done.stdout)
        raw = done.stdout
        if strip_newline_in_stdout and raw.endswith(b"\n"):
            raw = raw[:-1]
        stdout: str | bytes = raw.decode("utf-8", "replace") if stdout_as_string else raw
        if with_extended_output:
            return done.returncode, stdout, done.stderr.decode("utf-8", "replace")
        return stdout
