"""A Chat Completions server on 127.0.0.1 with scripted replies and fault injection.

    server = ChatServer().start()
    server.reply({"thought": "...", "final": {"message": "done"}})
    server.fault("status", status=429, headers={"Retry-After": "0"})
    ... point OPENAI_BASE_URL at server.url ...
    server.requests   # every chat request body, parsed
    server.seen       # every request of any kind: (method, path, headers)

Faults: "status" (any HTTP status, headers, body), "reset" (connection closed with a TCP reset),
"timeout" (no answer for `delay` seconds), "not_json" (a 200 whose body is not JSON),
"truncated_stream" (an SSE stream that stops before its end) and "events" (a 200 SSE stream of
the given raw events, e.g. an `event: error`). Streaming requests get SSE chunks.
With `reject_response_format` / `reject_stream_options`, that parameter gets some servers' 400.

It behaves as real local servers do (see server_flavours): a reply runs on until a token limit
unless the request sends `max_tokens` (then it is cut there, finish_reason "length"); a stream
carries usage only when `stream_options.include_usage` asks for it; with a `context_window`, a
request that does not fit gets the flavour's overflow answer (a 400 with its wording, or a 200
with an empty stream), and llama.cpp's servers cut a reply where the window ends; prompts are
counted by characters, or with `tokens_per_estimate` as a tokenizer heph's estimate is that far
from; the flavour's own endpoints tell the window (/props, /api/show, max_model_len, and who
owns the models), late while `busy()`. A `response_format` with a JSON schema is taken in the
shapes the flavour takes (others are ignored, or refused as the real server refuses them), and
then every reply keeps to the schema: a scripted reply that does not becomes one that does.
"""

from __future__ import annotations

import json
import selectors
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from hephaistus.testing import server_flavours as flavours


@dataclass
class Step:
    """One scripted answer: a reply (its text, usage, whether it runs on) or a fault with its
    options."""

    kind: str  # "reply" or a fault name
    content: str = ""
    usage: dict[str, int] | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    delay: float = 0.0
    events: list[str] = field(default_factory=list)  # raw SSE events, for "events"
    run_on: bool = False  # the reply repeats until max_tokens, or the server's own limit


class ChatServer:
    """The scripted server: answers chat requests from `script` in order, then from `responder`
    when there is one (else with a 500), and records every request it gets."""

    def __init__(
        self,
        *,
        reject_response_format: bool = False,
        reject_stream_options: bool = False,
        context_window: int | None = None,
        flavour: str = "openai",
        models: tuple[str, ...] = ("scripted",),
        tokens_per_estimate: float | None = None,
    ) -> None:
        self.script: deque[Step] = deque()
        self.get_delays: deque[float] = deque()  # see busy()
        # When the script is empty: the reply computed from the request (requests that come
        # several at a time, in any order), sent after `latency` seconds (a model's own time).
        self.responder: Callable[[dict[str, Any]], Any] | None = None
        self.latency = 0.0
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        # Every request of any kind, as (method, path, headers): what reached this server.
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.busy_seconds = 0.0  # spent answering chat requests: the "model's" own time
        self.in_flight = 0  # chat requests being answered now
        self.most_in_flight = 0  # the most at any one time
        self.reject_response_format = reject_response_format
        self.reject_stream_options = reject_stream_options
        self.context_window = context_window
        self.flavour = flavours.get(flavour)
        self.models = models  # what GET /v1/models lists
        # Prompts counted as heph's estimate times this (else by characters), as a tokenizer
        # heph's estimate is that far from.
        self.tokens_per_estimate = tokens_per_estimate
        self.enforced = 0  # replies made to keep to a schema the request carried
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    # -- scripting -------------------------------------------------------------------------
    def reply(
        self,
        content: Any,
        usage: dict[str, int] | None = None,
        *,
        run_on: bool = False,
        chunk_delay: float = 0.0,
    ) -> ChatServer:
        """Queue one normal reply; a dict or list is sent as its JSON text. With run_on, the
        text repeats until the request's max_tokens (or the server's own limit); with
        chunk_delay, a stream sends each chunk that long after the last (a slow model)."""
        text = content if isinstance(content, str) else json.dumps(content)
        self.script.append(
            Step("reply", content=text, usage=usage, run_on=run_on, delay=chunk_delay)
        )
        return self

    def fault(self, kind: str, **options: Any) -> ChatServer:
        """Queue a fault (see the module's list) in place of the next reply; `options` are Step's
        fields."""
        if kind not in {"status", "reset", "timeout", "not_json", "truncated_stream", "events"}:
            raise ValueError(f"unknown fault {kind}")
        self.script.append(Step(kind, **options))
        return self

    def busy(self, seconds: float, times: int = 1) -> ChatServer:
        """The next `times` GETs are answered `seconds` late, as by a server that serves one
        request at a time (llama-cpp-python's) while it works on another."""
        self.get_delays.extend([seconds] * times)
        return self

    def _next(self) -> Step | None:
        with self._lock:
            return self.script.popleft() if self.script else None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self, port: int = 0) -> ChatServer:
        """Serve on 127.0.0.1 (`port` 0: any free one) from a daemon thread."""
        handler = type("Handler", (_Handler,), {"chat": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)  # daemon threads
        self._wake, self._waker = socket.socketpair()
        self._serving = threading.Thread(target=self._serve, args=(self._httpd,), daemon=True)
        self._serving.start()
        return self

    def _serve(self, httpd: ThreadingHTTPServer) -> None:
        """Take connections until stop() writes to the wake socket (no poll timing out)."""
        with self._wake, self._waker, selectors.DefaultSelector() as selector:
            selector.register(httpd, selectors.EVENT_READ)
            selector.register(self._wake, selectors.EVENT_READ)
            while not any(key.fileobj is self._wake for key, _ in selector.select()):
                httpd.handle_request()  # a connection is waiting: taken at once
        httpd.server_close()

    def stop(self) -> None:
        """Stop serving and close the socket, at once; a server not serving is left alone."""
        if self._httpd and self._serving.is_alive():
            self._waker.send(b"stop")  # serve_forever() would see its stop when its poll ends
            self._serving.join()

    @property
    def url(self) -> str:
        """The base URL to give a client, `http://127.0.0.1:<port>/v1`."""
        assert self._httpd, "start() the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle's algorithm the body would wait for
    # the client's delayed ACK (40 ms a reply). Real servers (uvicorn, llama.cpp) set this too.
    disable_nagle_algorithm = True
    chat: ChatServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return

    def parse_request(self) -> bool:
        """Read the request's headers: the server's own time (`busy_seconds`) starts here."""
        self._started = time.perf_counter()
        return super().parse_request()

    def _note(self, method: str) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.chat._lock:
            self.chat.seen.append((method, self.path, headers))

    def do_GET(self) -> None:
        self._note("GET")
        with self.chat._lock:
            delay = self.chat.get_delays.popleft() if self.chat.get_delays else 0.0
        time.sleep(delay)
        path = self.path.rstrip("/")
        answer = self.chat.flavour.get_answer(path, self.chat.context_window, self.chat.models)
        try:  # a late answer may find the client gone
            if answer is not None:
                self._json(200, answer)
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})
        except OSError:
            self.close_connection = True

    def do_POST(self) -> None:
        self._note("POST")
        started = self._started
        with self.chat._lock:
            self.chat.in_flight += 1
            self.chat.most_in_flight = max(self.chat.most_in_flight, self.chat.in_flight)
        try:
            self._post()
        finally:
            with self.chat._lock:
                self.chat.in_flight -= 1
                self.chat.busy_seconds += time.perf_counter() - started

    def _post(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/").endswith("/api/show") and self.chat.flavour.name == "ollama":
            self._json(200, flavours.ollama_show(self.chat.context_window))
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._json(400, {"error": {"message": "body is not JSON"}})
            return
        self.chat.requests.append(body)
        self.chat.headers.append({k.lower(): v for k, v in self.headers.items()})
        if self._overflows(body):
            return
        try:  # a refused option or schema shape uses up no scripted reply
            if self.chat.reject_response_format and "response_format" in body:
                raise flavours.Refused(400, "response_format is not supported", "response_format")
            if self.chat.reject_stream_options and "stream_options" in body:
                raise flavours.Refused(
                    400, "Unrecognized request argument supplied: stream_options", "stream_options"
                )
            self.chat.flavour.enforced_schema(body.get("response_format"))
        except flavours.Refused as refused:
            self._json(refused.status, refused.body)
            return
        step = self.chat._next()
        if step is None and self.chat.responder is not None:
            answer = self.chat.responder(body)
            step = Step("reply", answer if isinstance(answer, str) else json.dumps(answer))
        if step is None:
            self._json(500, {"error": {"message": "the test script has no reply left"}})
            return
        getattr(self, f"_{step.kind}")(step, body)

    # -- replies and faults ----------------------------------------------------------------
    def _reply(self, step: Step, body: dict[str, Any]) -> None:
        time.sleep(self.chat.latency)
        content = step.content
        schema = self.chat.flavour.enforced_schema(body.get("response_format"))
        if schema is not None:  # a grammar lets no other reply out
            content = flavours.constrained(content, schema)
            self.chat.enforced += 1
        prompt, window = self._prompt_tokens(body), self.chat.context_window
        room = self.chat.flavour.reply_room(prompt, int(body.get("max_tokens") or 0), window)
        content, finish = flavours.capped(content, step.run_on, room)
        usage = step.usage or flavours.usage(body, content, self.chat.tokens_per_estimate)
        if body.get("stream"):
            asked = (body.get("stream_options") or {}).get("include_usage")
            events = flavours.chunks(body, content, usage if asked else None, finish=finish)
            self._sse(events, pause=step.delay)
        else:
            self._json(200, flavours.completion(body, content, usage, finish))

    def _overflows(self, body: dict[str, Any]) -> bool:
        """Answer as the flavour does when the request does not fit its context window."""
        window, flavour = self.chat.context_window, self.chat.flavour
        prompt, reply = self._prompt_tokens(body), int(body.get("max_tokens") or 0)
        if window is None or not flavour.overflows(prompt, reply, window):
            return False
        if body.get("stream") and flavour.empty_stream_on_overflow:
            self._sse([], truncate=True)  # a 200 with nothing in it, as llama-cpp-python sends
        else:
            self._json(400, flavour.overflow_error(window, prompt, reply))
        return True

    def _prompt_tokens(self, body: dict[str, Any]) -> int:
        return flavours.prompt_tokens(body, self.chat.tokens_per_estimate)

    def _status(self, step: Step, body: dict[str, Any]) -> None:
        payload = step.body or json.dumps({"error": {"message": f"injected {step.status}"}})
        self._send(step.status, payload.encode(), "application/json", step.headers)

    def _reset(self, step: Step, body: dict[str, Any]) -> None:
        # SO_LINGER with a zero timeout turns close() into a TCP reset.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def _timeout(self, step: Step, body: dict[str, Any]) -> None:
        time.sleep(step.delay or 5.0)
        self.close_connection = True

    def _not_json(self, step: Step, body: dict[str, Any]) -> None:
        self._send(200, b"<html>this is not the API</html>", "application/json", {})

    def _truncated_stream(self, step: Step, body: dict[str, Any]) -> None:
        content = step.content or '{"thought": "cut off'
        if body.get("stream"):
            self._sse(flavours.chunks(body, content, None, complete=False), truncate=True)
        else:  # a body cut short of its Content-Length
            data = json.dumps(flavours.completion(body, content, None)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True

    def _events(self, step: Step, body: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in step.events:
            self.wfile.write(f"{event}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True

    # -- wire helpers ----------------------------------------------------------------------
    def _json(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json", {})

    def _send(self, status: int, data: bytes, kind: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _sse(
        self, events: list[dict[str, Any]], truncate: bool = False, pause: float = 0.0
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
            time.sleep(pause)  # a slow model: each chunk takes a while
        if not truncate:
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True
