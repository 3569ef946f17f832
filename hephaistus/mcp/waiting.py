"""Waiting for a server's answer: the timeout, which a server's progress notifications start
again (PROGRESS_CAP times it at most), the questions it puts to the person meanwhile
(mcp.elicit), which the waiting thread answers as they come (the person's time is not the
server's), and its progress, which the waiting thread shows (a line every PROGRESS_EVERY
seconds at most).
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from hephaistus.mcp.elicit import DECLINED, Elicit, Question, Reply
from hephaistus.mcp.sampling import Lend
from hephaistus.mcp.sampling import answered as sampled

PROGRESS_CAP = 10  # a call that keeps saying it progresses runs at most 10 times its timeout
PROGRESS_EVERY = 2.0  # seconds between two progress lines shown
Shown = Callable[[str], None]  # shows the person a line of a call's progress
DONE = None  # what Asking carries when the call it waits on ended


class Asking:
    """Questions and progress from a server's event loop to the thread waiting for the call,
    and the end of that call, on one queue: the waiting thread answers each question and
    shows the progress as they come."""

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[Question | Sample, Future[Reply]] | str | None]
        self._queue = queue.Queue()

    def progressed(self, progress: float, total: float | None, message: str | None) -> None:
        """The server said how far the call got (from the loop)."""
        self._queue.put(progress_line(progress, total, message))

    def put(self, question: Question | Sample) -> Future[Reply]:
        """Hand `question` to the waiting thread (from the loop); its answer comes in the
        future."""
        answer: Future[Reply] = Future()
        self._queue.put((question, answer))
        return answer

    def ended(self, _done: Any = None) -> None:
        """The call waited on ended (a future's done callback)."""
        self._queue.put(DONE)

    def next(self, timeout: float) -> tuple[Question | Sample, Future[Reply]] | str | None:
        """The next question, a progress line, or DONE when the call ended; queue.Empty
        after `timeout`."""
        return self._queue.get(timeout=max(timeout, 0.0))

    def close(self) -> None:
        """No one waits any more: a question still queued is cancelled."""
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, tuple):
                item[1].set_result(Reply("cancel"))


def time_for(server: Any, connection: Any) -> float:
    """The time a call may take: its timeout, and its server's start when it is not running."""
    return server.tool_timeout_sec + (0 if connection.session else server.startup_timeout_sec)


@dataclass(frozen=True)
class During:
    """What the thread waiting for a call does for its server meanwhile: puts its questions
    to the person (`ask`), shows its progress (`show`), lends it heph's model (`lend`, where
    the person's entry allows it)."""

    ask: Elicit | None = None
    show: Shown | None = None
    lend: Lend | None = None


@dataclass(frozen=True)
class Sample:
    """A server's request for heph's model (its params, as the package gives them)."""

    server: str
    params: Any


def listening(connection: Any, during: During | None) -> Asking:
    """The queue a call's questions and progress come by, set on `connection` (before the
    call starts, so that none is missed) where someone will take them."""
    asking = Asking()
    if during is not None and (during.ask or during.show or during.lend):
        connection.asking = asking
    return asking


def result_of(
    future: Any,
    timeout: float,
    connection: Any,
    during: During | None = None,
    asking: Asking | None = None,
) -> Any:
    """The future's result: FutureTimeout once `timeout` seconds pass without a word of
    progress from the server (PROGRESS_CAP times the timeout at most, progress or not). What
    the server asks meanwhile is done `during` it; the person's time answering, and the
    model's, is not the server's."""
    during = during or During()
    ask, show = during.ask, during.show
    asking = asking or listening(connection, during)
    future.add_done_callback(asking.ended)
    began, last_shown, turns = time.monotonic(), 0.0, 0
    try:
        while True:
            quiet_since = max(began, connection.progressed)
            left = min(quiet_since + timeout, began + timeout * PROGRESS_CAP) - time.monotonic()
            if left <= 0:
                raise FutureTimeout()
            try:
                item = asking.next(left)
            except queue.Empty:
                continue  # progress may have come meanwhile
            if item is DONE:
                return future.result(0)
            if isinstance(item, str):
                if show is not None and time.monotonic() - last_shown >= PROGRESS_EVERY:
                    last_shown = time.monotonic()
                    show(item)
                continue
            question, answer = item
            asked_at = time.monotonic()
            if isinstance(question, Sample):
                turns += 1
                lent = sampled(during.lend, question.params, question.server, turns)
                answer.set_result(lent)  # type: ignore[arg-type]
                began += time.monotonic() - asked_at
                continue
            try:
                answer.set_result(answered(ask, question))
            except KeyboardInterrupt:  # the person stopped: the server is told, the call ends
                answer.set_result(Reply("cancel"))
                future.cancel()
                raise
            began += time.monotonic() - asked_at
    finally:
        if connection.asking is asking:
            connection.asking = None
        asking.close()


def answered(ask: Elicit | None, question: Question) -> Reply:
    """The person's Reply to `question` (declined when no one can be asked); KeyboardInterrupt
    passes, after the caller said cancel."""
    if ask is None:
        return DECLINED
    try:
        return ask(question)
    except EOFError:
        return DECLINED


def progress_line(progress: float, total: float | None, message: str | None) -> str:
    """How far a call got, as the person reads it: `3 of 10 (30%): indexing`."""
    from hephaistus.escape import one_line

    done = f"{progress:g}"
    if total:
        done += f" of {total:g} ({100 * progress / total:.0f}%)"
    return done + (f": {one_line(message, 200)}" if message else "")
