"""The executor: the one place heph starts a project's processes (run_command, the verify
commands). A protocol, so a sandbox can take the local executor's place.

The local executor gives no standard input, puts the process in a group of its own, and on a
timeout or Ctrl-C kills the whole group (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

KILL_GRACE = 2.0


@dataclass(frozen=True)
class Completed:
    """How a process ended: its exit code (None: it timed out), its output, how long it took."""

    exit_code: int | None
    output: str
    seconds: float


class Executor(Protocol):
    """Runs one command to its end."""

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        timeout: float,
        read_only: bool = False,
    ) -> Completed:
        """Run `argv` in `cwd` with exactly `env`, for at most `timeout` seconds; with
        `read_only`, the workspace may not be changed (only a sandbox can promise that)."""
        ...


class LocalExecutor:
    """Runs commands as this user, on this machine, in the workspace."""

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        timeout: float,
        read_only: bool = False,
    ) -> Completed:
        """Run `argv` with stdout and stderr together; a timeout kills its whole group. It
        cannot keep the workspace read-only: what needs that (the shell) never runs here."""
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        except OSError as error:
            return Completed(127, f"cannot start {argv[0]}: {error.strerror or error}", 0.0)
        try:
            output, _ = process.communicate(timeout=timeout)
            code: int | None = process.returncode
        except subprocess.TimeoutExpired:
            _kill_group(process)
            try:
                output, _ = process.communicate(timeout=KILL_GRACE)
            except subprocess.TimeoutExpired:  # something escaped the group and holds the pipe
                output = b""
            code = None
            output += f"\n[stopped after {timeout:g} s: the command timed out]".encode()
        except BaseException:
            _kill_group(process)
            raise
        return Completed(code, output.decode("utf-8", "replace"), time.monotonic() - started)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            if sig == signal.SIGTERM:
                # The leader is gone; make sure nothing of its group lingers.
                os.killpg(process.pid, signal.SIGKILL)
            return
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return
