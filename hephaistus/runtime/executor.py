"""The executor: the one place heph starts a project's processes (run_command, the verify
commands, the person's hooks). A protocol, so a sandbox can take the local executor's place.

The local executor gives no standard input, puts the process in a group of its own, and on a
timeout or Ctrl-C kills the whole group (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from hephaistus.runtime.launch import Launch

KILL_GRACE = 2.0


@dataclass(frozen=True)
class Completed:
    """How a process ended: its exit code (None: it timed out), its output (the end of it: at
    most KEPT_OUTPUT bytes), how long it took, and how many bytes it printed in all."""

    exit_code: int | None
    output: str
    seconds: float
    size: int = 0  # bytes of output in all (0: no more than `output`)


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
        shown: bool = False,
    ) -> Completed:
        """Run `argv` in `cwd` with exactly `env`, for at most `timeout` seconds; with
        `read_only`, the workspace may not be changed (only a sandbox can promise that); with
        `shown`, where the person watches it if there is such a place (an editor's terminal)."""
        ...


class Terminal(Protocol):
    """A place where the person watches a process while it runs (an editor's terminal)."""

    def run(self, started: Launch, *, cwd: Path, timeout: float) -> Completed:
        """Start it there and wait for its end, killing it at `timeout`."""
        ...


def timed_out(timeout: float) -> str:
    """What ends the output of a command stopped at its timeout."""
    return f"\n[stopped after {timeout:g} s: the command timed out]"


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
        shown: bool = False,
        before_start: Callable[[], None] | None = None,
    ) -> Completed:
        """Run `argv` with stdout and stderr together; a timeout kills its whole group. It
        cannot keep the workspace read-only: what needs that (the shell) never runs here, nor
        show it anywhere.
        `before_start` runs in the new process before `argv` starts (async-signal-safe calls
        only: a sandbox joining its process limit)."""
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
                preexec_fn=before_start,
            )
        except OSError as error:
            return Completed(127, f"cannot start {argv[0]}: {error.strerror or error}", 0.0)
        tail = _Tail(process.stdout)
        # A timer kills the group at the timeout; the wait itself blocks, where a wait with a
        # timeout polls in sleeps that overshoot a short command by milliseconds.
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            kill_group(process)

        timer = threading.Timer(timeout, expire)
        timer.daemon = True
        timer.start()
        try:
            code: int | None = process.wait()
        except BaseException:
            kill_group(process)
            raise
        finally:
            timer.cancel()
        tail.finish(KILL_GRACE)  # something may have escaped the group and hold the pipe
        if expired.is_set():
            code = None
            tail.add(timed_out(timeout).encode())
        return Completed(code, tail.text(), time.monotonic() - started, tail.seen)


KEPT_OUTPUT = 1 << 20  # bytes of a command's output kept (its end): a flood costs no memory


class _Tail:
    """Reads a process's output as it comes, in a thread, keeping only its last KEPT_OUTPUT
    bytes and counting the rest."""

    def __init__(self, stream: IO[bytes] | None) -> None:
        self.kept = bytearray()
        self.seen = 0
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.reader.start()

    def _read(self, stream: IO[bytes] | None) -> None:
        if stream is None:
            return
        with stream:
            while chunk := stream.read1(1 << 16):  # type: ignore[attr-defined]
                self.add(chunk)

    def add(self, chunk: bytes) -> None:
        """Take more output, dropping what is older than the last KEPT_OUTPUT bytes."""
        with self.lock:
            self.seen += len(chunk)
            self.kept += chunk
            if len(self.kept) > 2 * KEPT_OUTPUT:
                del self.kept[: len(self.kept) - KEPT_OUTPUT]

    def finish(self, wait: float) -> None:
        """Wait up to `wait` seconds for the output to end."""
        self.reader.join(wait)

    def text(self) -> str:
        """The output kept (`seen` says how much there was)."""
        with self.lock:
            return bytes(self.kept[-KEPT_OUTPUT:]).decode("utf-8", "replace")


@dataclass(frozen=True)
class Answered:
    """How a process given input ended: its exit code (None: it timed out), its stdout and
    stderr apart (their last KEPT_OUTPUT bytes each), how long it took."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    seconds: float


def run_with_input(
    argv: list[str], data: bytes, *, cwd: Path, env: dict[str, str], timeout: float
) -> Answered:
    """Run `argv` (a hook: a sandbox's line for a contained one) with `data` on its stdin, in
    a group of its own that a timeout or Ctrl-C kills whole; OSError when it cannot start.
    It has ended when it exits: what it left running in its group is killed then."""
    started = time.monotonic()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    out, err = _Tail(process.stdout), _Tail(process.stderr)
    threading.Thread(target=_feed, args=(process.stdin, data), daemon=True).start()
    try:
        code: int | None = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        code = None
    except BaseException:
        kill_group(process)
        raise
    try:  # what it left running in its group goes with it
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    out.finish(KILL_GRACE / 4)
    err.finish(KILL_GRACE / 4)
    seconds = time.monotonic() - started
    return Answered(code, out.text().encode(), err.text().encode(), seconds)


def _feed(stream: IO[bytes] | None, data: bytes) -> None:
    """Write `data` to a process's stdin and close it (one that never reads it is let be)."""
    if stream is None:
        return
    try:
        with stream:
            stream.write(data)
    except (BrokenPipeError, OSError):
        pass


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """End `process` and everything of its group (it was started in a session of its own):
    SIGTERM first, so git and the like remove their lock files, then SIGKILL."""
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
