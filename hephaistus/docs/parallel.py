"""A few model requests at a time, for `heph docs --fix`.

Worker threads are daemons: on Ctrl-C, or when one request fails for good, the main thread
stops taking results and leaves; a request still in flight cannot hold the process (or a
commit) until its timeout, as the threads of concurrent.futures would at exit.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

TICK_SECONDS = 0.25  # how often the caller hears about requests still running


class Running(Generic[Item]):
    """The items being worked on, with the time each started."""

    def __init__(self) -> None:
        self._started: dict[int, tuple[Item, float]] = {}
        self._lock = threading.Lock()

    def add(self, item: Item) -> None:
        """`item` has started now."""
        with self._lock:
            self._started[id(item)] = (item, time.monotonic())

    def remove(self, item: Item) -> None:
        """`item` is done; one that is not running is ignored."""
        with self._lock:
            self._started.pop(id(item), None)

    def waiting(self) -> list[tuple[Item, float]]:
        """Each running item and the seconds it has run, longest first."""
        now = time.monotonic()
        with self._lock:
            started = list(self._started.values())
        return sorted(((item, now - at) for item, at in started), key=lambda p: -p[1])


def in_parallel(
    items: list[Item],
    work: Callable[[Item], Result],
    jobs: int,
    on_tick: Callable[[Running[Item]], None] = lambda running: None,
) -> Iterator[tuple[Item, Result | None, BaseException | None]]:
    """(item, result, None) or (item, None, error) for each item, as each is done; at most
    `jobs` at once. When the caller stops iterating, no new item is started."""
    pending: queue.Queue[Item] = queue.Queue()
    for item in items:
        pending.put(item)
    done: queue.Queue[tuple[Item, Result | None, BaseException | None]] = queue.Queue()
    running: Running[Item] = Running()
    stop = threading.Event()

    def worker() -> None:
        while not stop.is_set():
            try:
                item = pending.get_nowait()
            except queue.Empty:
                return
            running.add(item)
            try:
                done.put((item, work(item), None))
            except BaseException as error:  # reported to the caller, who decides
                done.put((item, None, error))
            finally:
                running.remove(item)

    for _ in range(max(1, min(jobs, len(items)))):
        threading.Thread(target=worker, name="heph-docs", daemon=True).start()
    try:
        for _ in items:
            while True:
                try:
                    finished = done.get(timeout=TICK_SECONDS)
                    break
                except queue.Empty:
                    on_tick(running)
            yield finished
    finally:
        stop.set()
