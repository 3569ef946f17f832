"""JSON-RPC 2.0 over stdin/stdout, one message a line, as the Agent Client Protocol carries it.

A thread reads stdin: requests and notifications go to the server's queue (in order), answers
to heph's own requests (a permission asked) go to whoever waits for them, a line that is not
JSON gets a parse error (-32700) at once. Writing is locked, so the loop and the reader never
interleave two messages. Nothing else ever goes to stdout.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from typing import IO, Any

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32603,
)
AUTH_REQUIRED = -32000  # ACP's own code: the endpoint refused the key
CLOSED = {"method": "$closed"}  # what the queue gets when stdin ends


class Cancelled(Exception):
    """The client ended the wait (it cancelled, or closed the connection)."""


class Channel:
    """Both directions of one client's connection."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self.reader = reader
        self.writer = writer
        self.incoming: queue.Queue[dict[str, Any]] = queue.Queue()
        self._write_lock = threading.Lock()
        self._waiting: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._next_id = 0
        self.closed = threading.Event()
        self.on_notice: Any = None  # called with a notification as it arrives (a cancel)
        self.on_answer: Any = None  # given the client's answers, where heph did not ask

    def start(self) -> None:
        """Start reading stdin, in a thread."""
        threading.Thread(target=self._read, daemon=True).start()

    # -- sending ---------------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line (a closed stdout marks the channel closed)."""
        data = json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False) + "\n"
        with self._write_lock:
            try:
                self.writer.write(data.encode("utf-8", "backslashreplace"))
                self.writer.flush()
            except (OSError, ValueError):
                self.closed.set()  # the client went away

    def answer(self, ident: Any, result: Any) -> None:
        """The result of request `ident`."""
        self.send({"id": ident, "result": result})

    def error(self, ident: Any, code: int, message: str, exit_code: int | None = None) -> None:
        """The error answer of request `ident`. Its `data` holds heph's own words (a client
        shows them, not its generic "the agent failed"), and the exit code the CLI would give
        where a task failed."""
        data: dict[str, Any] = {"message": message}
        if exit_code is not None:
            data["exitCode"] = exit_code
        self.send({"id": ident, "error": {"code": code, "message": message, "data": data}})

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """A notification: no answer comes."""
        self.send({"method": method, "params": params})

    def request(self, method: str, params: dict[str, Any], timeout: float | None = None) -> Any:
        """Ask the client, and wait for its answer (TimeoutError after `timeout` seconds);
        Cancelled when the connection closes."""
        return self.ask(method, params).answer(timeout)

    def ask(self, method: str, params: dict[str, Any]) -> Asked:
        """Ask the client; its answer is waited for with the Asked."""
        with self._write_lock:
            self._next_id += 1
            asked = Asked(self, self._next_id, method)
            self._waiting[asked.ident] = asked.box
        self.send({"id": asked.ident, "method": method, "params": params})
        return asked

    # -- receiving -------------------------------------------------------------------------
    def _read(self) -> None:
        for raw in self.reader:
            line = raw.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError) as error:  # nested past Python's limit too
                self.error(None, PARSE_ERROR, f"Parse error: {str(error)[:200]}")
                continue
            if not isinstance(message, dict):
                self.error(None, INVALID_REQUEST, "Invalid Request: not a JSON object")
                continue
            try:
                self._route(message)
            except Exception as error:  # one bad message never stops the reading
                self.error(None, INVALID_REQUEST, f"Invalid Request: {str(error)[:200]}")
        self.closed.set()
        self.incoming.put(CLOSED)

    def _route(self, message: dict[str, Any]) -> None:
        ident = message.get("id")
        if ident is not None and (isinstance(ident, bool) or not isinstance(ident, (int, str))):
            self.error(None, INVALID_REQUEST, "Invalid Request: an id is a number or a string")
            return
        if "method" not in message:  # an answer to a request of heph's
            box = self._waiting.get(ident) if isinstance(ident, int) else None
            if box is not None:
                box.put(message)
            elif self.on_answer is not None:
                self.on_answer(message)  # a question a session's process asked (the router)
            return
        if not isinstance(message.get("method"), str):
            self.error(ident, INVALID_REQUEST, "Invalid Request: no method")
            return
        if "id" not in message and self.on_notice is not None:
            self.on_notice(message)  # a cancel must reach a turn that is running
        self.incoming.put(message)


class Asked:
    """A request heph made of the client, whose answer is still to come."""

    def __init__(self, channel: Channel, ident: int, method: str) -> None:
        self.channel = channel
        self.ident = ident
        self.method = method
        self.box: queue.Queue[dict[str, Any]] = queue.Queue()

    def answer(self, timeout: float | None = None) -> Any:
        """Its answer's result (TimeoutError after `timeout` seconds; Cancelled for an
        error or a closed connection). A Ctrl-C in the wait leaves it to be waited for again
        (what the client started may need ending)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                reply = self.box.get(timeout=0.2)  # a short wait: a cancel or Ctrl-C gets in
                break
            except queue.Empty:
                if self.channel.closed.is_set():
                    self.channel._waiting.pop(self.ident, None)
                    raise Cancelled() from None
                if deadline is not None and time.monotonic() > deadline:
                    self.channel._waiting.pop(self.ident, None)
                    raise TimeoutError(f"{self.method}: no answer in {timeout:g} s") from None
        self.channel._waiting.pop(self.ident, None)
        if "error" in reply:
            error = reply["error"]
            said = error.get("message") if isinstance(error, dict) else None
            raise Cancelled(said if isinstance(said, str) else str(error))
        return reply.get("result")
