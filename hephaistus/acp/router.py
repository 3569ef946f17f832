"""`heph acp`: one editor's connection, each of its sessions in a process of its own.

The router answers `initialize` itself (at once: it imports nothing heavy) and starts a worker
(`python -m hephaistus.acp`, the AcpServer) for each `session/new` or `session/load`. It passes
each session's requests and notifications to its worker, and the worker's updates, answers and
questions (a permission, a file read through the editor) back, with ids of its own on the
editor's side. So the sessions' turns run at once, a `session/new` never waits for another
session's turn, and a cancel reaches its own session's process as the Ctrl-C it knows.
A closed stdin ends every worker's turn (each session saved) and the process with 0; SIGTERM
and SIGHUP are passed on to the workers, and the process ends as they did.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

from hephaistus.acp.wire import CLOSED, INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, Channel
from hephaistus.errors import Terminated

OPENING = ("session/new", "session/load")
# The folder that holds the hephaistus package (site-packages, or heph's own checkout).
HEPH_HOME = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAFE_PATH = ("-P",) if sys.version_info >= (3, 11) else ()  # no current folder on the path
STOP_WAIT = 20.0  # seconds a worker has to save its session and end, after stdin closed
MAX_SESSIONS = 32  # processes one connection may have heph start (some 50 MiB each)


class Worker:
    """One session's process: requests go to its stdin; a thread reads its stdout."""

    def __init__(self, router: Router) -> None:
        self.router = router
        self.process = subprocess.Popen(
            [sys.executable, *SAFE_PATH, "-m", "hephaistus.acp"],
            # `-m` puts the current folder first on the import path: the editor's project, a
            # clone whose json.py would run as the person, key in reach. heph's own folder is
            # no one else's.
            cwd=HEPH_HOME,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # the router's own stderr: the editor's log
            # Its own group: a Ctrl-C meant for the router is passed on as the router decides,
            # and a worker whose router died ends at its closed stdin, its session saved.
            start_new_session=True,
        )
        self._lock = threading.Lock()
        self._next_id = 0
        self.ended = False  # set by the router (under its lock) once the process ended
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def send(self, message: dict[str, Any]) -> None:
        """Write one message to the worker (one that has ended takes nothing)."""
        data = json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False) + "\n"
        stdin = self.process.stdin
        assert stdin is not None
        with self._lock:
            try:
                stdin.write(data.encode("utf-8", "backslashreplace"))
                stdin.flush()
            except (OSError, ValueError):
                pass  # it ended: its reader tells the router

    def next_id(self) -> int:
        """A new request id on the worker's side."""
        with self._lock:
            self._next_id += 1
            return self._next_id

    def close(self) -> None:
        """End the worker's input: it ends its turn, saves its session and exits."""
        stdin = self.process.stdin
        assert stdin is not None
        with self._lock:
            try:
                stdin.close()
            except (OSError, ValueError):
                pass

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        for raw in stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                continue  # the worker writes only JSON lines; anything else is not passed on
            if isinstance(message, dict):
                self.router.from_worker(self, message)
        self.process.wait()
        self.router.worker_ended(self)


class Router:
    """Routes one editor's messages to the workers of its sessions, and theirs back."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.client_params: dict[str, Any] = {}  # what the editor said at initialize
        self.by_session: dict[str, Worker] = {}
        self.workers: list[Worker] = []
        self._lock = threading.Lock()
        # The editor's request (its id, method, session), by (worker, its id there) ...
        self._client_ids: dict[tuple[int, Any], tuple[Any, str, str]] = {}
        # ... and the worker's request id, by the id heph gave it on the editor's side.
        self._worker_ids: dict[int, tuple[Worker, Any]] = {}
        self._next_id = 0

    def serve(self) -> int:
        """Route until stdin closes; then end the workers, each session saved. 0."""
        self.channel.start()
        while True:
            message = self.channel.incoming.get()
            if message is CLOSED:
                break
            self.from_client(message)
        self.stop()
        return 0

    def stop(self, signal_number: int | None = None) -> None:
        """End every worker (closing its input, or passing `signal_number` on) and wait."""
        for worker in list(self.workers):
            if signal_number is None:
                worker.close()
            elif worker.process.poll() is None:
                worker.process.send_signal(signal_number)
        for worker in list(self.workers):
            try:
                worker.process.wait(STOP_WAIT)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()
            worker.reader.join(STOP_WAIT)  # its last updates reach the editor

    # -- from the editor -------------------------------------------------------------------
    def from_client(self, message: dict[str, Any]) -> None:
        """Route a request or notification of the editor's."""
        method, ident = message["method"], message.get("id")
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if method == "initialize" and "id" in message:
            from hephaistus.acp.server import capabilities

            self.client_params = params
            self.channel.answer(ident, capabilities())
            return
        if method in OPENING and "id" in message:
            refused = self._refused(method, params)
            if refused:
                self.channel.error(ident, INVALID_PARAMS, refused)
                return
            try:
                worker = self._start_worker()
            except OSError as error:  # no process could be started: the router goes on
                self.channel.error(ident, INTERNAL_ERROR, f"{method}: {error.strerror or error}")
                return
            self._forward(worker, ident, method, params)
            return
        known = self.by_session.get(str(params.get("sessionId")))
        if known is not None and "id" in message:
            self._forward(known, ident, method, params)
        elif known is not None:  # a notification: a cancel
            known.send({"method": method, "params": params})
        elif "id" in message:
            if method.startswith("session/"):
                self.channel.error(ident, INVALID_PARAMS, f"{method}: no such session")
            else:
                self.channel.error(ident, METHOD_NOT_FOUND, f"Method not found: {method}")

    def _refused(self, method: str, params: dict[str, Any]) -> str:
        """Why a session cannot be opened, told before a process is started for it."""
        from hephaistus.acp.threads import SAFE_NAME

        cwd, session_id = params.get("cwd"), params.get("sessionId")
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            return f"{method}: cwd must be an absolute folder"
        if method == "session/load" and not (
            isinstance(session_id, str) and SAFE_NAME.fullmatch(session_id)
        ):
            return "session/load: that is no id heph gives a conversation or a session"
        if len(self.workers) >= MAX_SESSIONS:
            return f"{method}: heph runs at most {MAX_SESSIONS} sessions on one connection"
        return ""

    def answer_from_client(self, message: dict[str, Any]) -> None:
        """The editor's answer to a worker's question: back to the worker, by its own id."""
        ident = message.get("id")
        with self._lock:
            found = self._worker_ids.pop(ident, None) if isinstance(ident, int) else None
        if found is not None:
            worker, worker_id = found
            worker.send({**{k: v for k, v in message.items() if k != "jsonrpc"}, "id": worker_id})

    def _start_worker(self) -> Worker:
        worker = Worker(self)
        with self._lock:
            self.workers.append(worker)
        # Its answer is the router's alone: no one waits for it.
        worker.send({"id": worker.next_id(), "method": "initialize", "params": self.client_params})
        return worker

    def _forward(self, worker: Worker, ident: Any, method: str, params: dict[str, Any]) -> None:
        """Send the editor's request to `worker`, known before it goes, so its answer (however
        soon) finds the editor's id; one to a worker that ended is answered here."""
        worker_id = worker.next_id()
        with self._lock:
            ended = worker.ended
            if not ended:
                session_id = str(params.get("sessionId"))
                self._client_ids[(id(worker), worker_id)] = (ident, method, session_id)
        if ended:
            self.channel.error(ident, INTERNAL_ERROR, f"{method}: the session's process ended")
            return
        worker.send({"id": worker_id, "method": method, "params": params})

    # -- from a worker ---------------------------------------------------------------------
    def from_worker(self, worker: Worker, message: dict[str, Any]) -> None:
        """Pass on a worker's update, answer or question."""
        if "method" not in message:  # an answer to a request the router sent it
            with self._lock:
                found = self._client_ids.pop((id(worker), message.get("id")), None)
            if found is None:
                return  # the answer to the router's own initialize
            ident, method, session_id = found
            result = message.get("result")
            if method in OPENING and isinstance(result, dict):  # the session lives there now
                opened = str(result.get("sessionId") if method == "session/new" else session_id)
                before = self.by_session.get(opened)
                if before is not None and before is not worker:
                    before.close()  # loaded again: one process per conversation
                self.by_session[opened] = worker
            elif method in OPENING:
                worker.close()  # it opened nothing: it ends
            self.channel.send({**message, "id": ident})
            return
        if "id" in message:  # a question for the editor: an id of the router's own
            with self._lock:
                self._next_id += 1
                ident = self._next_id
                self._worker_ids[ident] = (worker, message["id"])
            self.channel.send({**message, "id": ident})
            return
        self.channel.send(message)  # an update

    def worker_ended(self, worker: Worker) -> None:
        """A worker ended: its sessions are gone, its open requests answered with an error."""
        with self._lock:
            worker.ended = True
            open_requests = [
                (key, value) for key, value in self._client_ids.items() if key[0] == id(worker)
            ]
            for key, _ in open_requests:
                del self._client_ids[key]
            for session_id in [s for s, w in self.by_session.items() if w is worker]:
                del self.by_session[session_id]
            self.workers = [w for w in self.workers if w is not worker]
        code = worker.process.returncode
        for _, (ident, method, _session) in open_requests:
            said = f"{method}: the session's process ended (exit code {code})"
            self.channel.error(ident, INTERNAL_ERROR, said)


def main() -> int:
    """Serve the editor on stdin/stdout; anything printed by mistake goes to stderr."""
    reader, writer = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # stdout carries the protocol and nothing else
    channel = Channel(reader, writer)
    router = Router(channel)
    channel.on_answer = router.answer_from_client
    ended: list[int] = []

    def passed_on(number: int, _frame: Any) -> None:
        ended.append(number)
        raise Terminated(signal.Signals(number).name)

    for name in ("SIGTERM", "SIGHUP", "SIGINT"):
        signal.signal(getattr(signal, name), passed_on)
    try:
        return router.serve()
    except Terminated as stop:
        # The workers end as the router does (a Ctrl-C ends them too: they are no turn's).
        router.stop(signal.SIGTERM if not ended or ended[0] == signal.SIGINT else ended[0])
        writer.flush()
        os._exit(stop.exit_code)  # the reader thread holds stdin's lock: see server.main
