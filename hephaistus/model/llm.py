"""The model client: Chat Completions through the `openai` package, with our own retry policy.

`openai` is imported on the first call, never at import time (it costs half a second). The
client's own retries are off: ours (in `llm_faults`) honour Retry-After, back off
exponentially, survive several transient faults in a row and stay bounded in time, then fail
with a message naming the URL.

The request goes out through the client's `post` (its connection pool, timeouts and error
types), not `chat.completions.create`: that one walks the whole message list against its type
declarations on every call (10-20 ms a request, growing with the conversation), and our body
is plain JSON already.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hephaistus import tokens
from hephaistus.errors import ContextOverflow, ModelError
from hephaistus.model.faults import (
    Transient,
    broken_stream_errors,
    detail,
    fault_of,
    not_json,
    retrying,
)
from hephaistus.settings.config import OPENAI_URL, Config, is_loopback_url
from hephaistus.textfile import encodable
from hephaistus.values import Message, ModelReply, Usage

if TYPE_CHECKING:
    from hephaistus.model.serverinfo import SchemaRecord
    from hephaistus.model.steps import StepSchema

ENFORCED, NOT_ENFORCED = "enforced", "not enforced"
KEPT_TO_TRUST = 3

PROGRESS_INTERVAL = 0.1  # seconds between updates of a streaming reply shown so far


class ChatModel:
    """An OpenAI-compatible chat model, asked for JSON mode where the endpoint accepts it."""

    def __init__(self, config: Config, *, pause: Callable[[float], None] | None = None) -> None:
        self.config = config
        self.pause = pause  # how to wait between retries (tests pass one that does not wait)
        self.name = config.model
        self.url = config.endpoint_url
        self.json_mode = config.json_mode
        self.structured = config.structured  # auto | schema | json | off (see steps)
        self.server_kind = "openai" if self.url == OPENAI_URL else ""  # learned by served_window
        self.refused_shapes: set[str] = set()  # schema shapes the server answered 400 to
        self.schema_record: SchemaRecord | None = None  # whether it enforced the schema
        self.sent_shape: str | None = None  # the schema's shape in the request being made
        self.kept_in_a_row = 0  # replies that kept to the schema, since the last that broke it
        self.stream_usage = True  # ask a stream for its token counts, until a server refuses
        self.retry_timeouts = True  # `heph docs` gives up at once: a commit is waiting
        self.timeout_setting = "`timeout` in .heph.toml or HEPH_TIMEOUT"
        self._client: Any = None
        self._client_lock = threading.Lock()  # `heph docs --fix` asks from several threads
        self.encoder = Encoder()

    def complete(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        on_retry: Callable[[str, float], None] | None = None,
        on_text: Callable[[str], None] | None = None,
        schema: StepSchema | None = None,
        plain: bool = False,
    ) -> ModelReply:
        """The model's reply to `messages`. Transient failures (429, 5xx, resets, a timeout once)
        are retried with backoff within a time budget; ModelError when they persist or the
        request cannot succeed. Usage is estimated when the server sends none. The step's
        `schema` goes with it where the server is known to enforce it (see schema_shape)."""
        # `pause` is looked up at each call, so that a test can replace `llm.pause`.
        (text, usage, finish), attempt = retrying(
            lambda: self._request(messages, max_tokens, on_text, schema, plain),
            self,
            self.pause or pause,
            on_retry,
        )
        if schema is not None and self.sent_shape and finish != "length":
            self._learn_enforcement(schema.kept_to(text, self.sent_shape))
        if not usage.total:  # the server said nothing: our estimate, marked as such
            usage = Usage(estimated_tokens(messages), tokens.estimate(text), True)
        constrained = schema is not None and self.sent_shape is not None
        return ModelReply(text, usage, attempt, cut_off=finish == "length", constrained=constrained)

    def served_window(self, cache: Path) -> tuple[int, str] | None:
        """The context window the server says it runs the model with (not asked of OpenAI);
        what kind of server it is, and whether it kept to a step's schema before, are learned
        on the way (cached beside)."""
        from hephaistus.model.serverinfo import SchemaRecord, cached_facts

        self.schema_record = SchemaRecord(cache.parent / "schema.json", self.url, self.name)
        self.refused_shapes |= self.schema_record.refused()
        if self.url == OPENAI_URL:
            return None
        facts = cached_facts(cache, self.url, self.name, self.config.resolved_api_key())
        self.server_kind = facts.kind
        return (facts.window, facts.source) if facts.window else None

    def schema_shape(self) -> str | None:
        """The shape the step's schema is sent in next, or None (JSON mode, or nothing):
        `auto` sends it only to the kinds of server known to enforce it, and no more once
        one broke it; `schema` to any; a shape the server refused is not sent again."""
        from hephaistus.model.steps import SHAPES, UNKNOWN_KIND_SHAPES

        if self.structured == "auto":
            broken = self.schema_record is not None and self.schema_record.verdict() == NOT_ENFORCED
            shapes = () if broken else SHAPES.get(self.server_kind, ())
        elif self.structured == "schema":
            shapes = SHAPES.get(self.server_kind, UNKNOWN_KIND_SHAPES)
        else:
            shapes = ()
        return next((shape for shape in shapes if shape not in self.refused_shapes), None)

    def refuse_shape(self) -> None:
        """The server answered 400 to the schema's shape: the next request (and run) tries the
        next."""
        if self.sent_shape:
            self.refused_shapes.add(self.sent_shape)
            if self.schema_record is not None:
                self.schema_record.refuse(self.sent_shape)

    def _learn_enforcement(self, kept: bool) -> None:
        """A reply that broke the schema it was sent shows the server does not enforce it:
        remembered, and JSON mode from then on (`auto`). Replies that keep to it may do so by
        chance: "enforced" takes KEPT_TO_TRUST of them in a row."""
        self.kept_in_a_row = self.kept_in_a_row + 1 if kept else 0
        if self.schema_record is None:
            return
        if not kept:
            self.schema_record.note(NOT_ENFORCED)
        elif self.kept_in_a_row >= KEPT_TO_TRUST:
            self.schema_record.note(ENFORCED)

    def remember_window(self, cache: Path, window: int, source: str) -> None:
        """Keep `window` (learned from `source`, say the server's overflow error) for later runs
        with this server and model."""
        from hephaistus.model.serverinfo import remember_window

        remember_window(cache, self.url, self.name, window, source)

    def _request(
        self,
        messages: list[Message],
        max_tokens: int | None = None,
        on_text: Callable[[str], None] | None = None,
        schema: StepSchema | None = None,
        plain: bool = False,
    ) -> tuple[str, Usage, str | None]:
        import openai

        client = self._get_client()
        params: dict[str, Any] = {"model": self.name, "messages": messages}
        if max_tokens:
            params["max_tokens"] = max_tokens
        self.sent_shape = self.schema_shape() if schema is not None else None
        if schema is not None and self.sent_shape:
            params["response_format"] = schema.request_format(self.sent_shape)
        elif self.json_mode and self.structured != "off" and not plain:
            params["response_format"] = {"type": "json_object"}
        if self.config.stream and self.stream_usage:
            params["stream_options"] = {"include_usage": True}
        try:
            if self.config.stream:
                return self._stream(client, params, on_text)
            body = _post(client, self.encoder.sendable(params), streaming=False)
            return _reply_of(body, self.url)
        except (openai.APIError, ValueError) as exc:  # ValueError: a 200 that is not JSON
            fault = fault_of(exc, self, params)
            if fault is None:  # an option the server refused is off now: ask without it
                return self._request(messages, max_tokens, on_text, schema)
            raise fault from None

    def _stream(
        self, client: Any, params: dict[str, Any], on_text: Callable[[str], None] | None
    ) -> tuple[str, Usage, str | None]:
        import openai

        broken = broken_stream_errors()
        parts: list[str] = []
        usage = Usage()
        finish: str | None = None
        started = shown_at = time.monotonic()
        try:
            stream = _post(
                client, self.encoder.sendable({**params, "stream": True}), streaming=True
            )
            for chunk in stream:
                if getattr(chunk, "usage", None):
                    usage = _usage(chunk.usage)
                for choice in chunk.choices or ():
                    if choice.delta and choice.delta.content:
                        parts.append(choice.delta.content)
                        # At most a few times a second: joining the parts costs the whole reply.
                        if on_text and time.monotonic() - shown_at >= PROGRESS_INTERVAL:
                            shown_at = time.monotonic()
                            on_text("".join(parts))
                    finish = finish or choice.finish_reason
                if time.monotonic() - started > self.config.timeout:  # the whole reply's deadline
                    stream.close()
                    raise Transient(
                        f"no complete reply within {self.config.timeout:g} s (the `timeout` "
                        "setting)",
                        timeout=True,
                    )
        except broken:
            raise Transient("the reply stream broke off") from None
        except openai.APIStatusError:
            raise
        except openai.APIError as exc:  # an error event inside the stream
            raise Transient(
                f"the server reported an error while streaming: {detail(exc)}"
            ) from None
        if not parts and finish is None:
            # llama.cpp's servers answer a request too large for the context with an empty
            # 200 stream: no retry will help, compacting the conversation may.
            raise ContextOverflow(
                f"the model endpoint {self.url} sent an empty reply stream, which usually means "
                "the request is larger than the model's context window"
            )
        if finish is None:
            raise Transient("the reply stream ended before the reply was complete")
        return "".join(parts), usage, finish

    def _get_client(self) -> Any:
        with self._client_lock:
            return self._client or self._new_client()

    def _new_client(self) -> Any:
        if self._client is None:
            import openai

            key = self.config.resolved_api_key()
            if not key:
                raise ModelError(missing_key_message())
            self._client = openai.OpenAI(
                api_key=key,
                base_url=self.url,
                max_retries=0,
                timeout=openai.Timeout(self.config.timeout, connect=self.config.connect_timeout),
                http_client=_local_http_client(self.url),
            )
        return self._client


def _local_http_client(url: str) -> Any:
    """For a server on this machine over plain http, a client that never speaks TLS (no proxy,
    no redirect that could lead to one), so it need not load the certificate authorities: 25-50
    ms of every start. None (the default client) for any other server."""
    if not (url.startswith("http://") and is_loopback_url(url)):
        return None
    import openai

    return openai.DefaultHttpxClient(verify=False, trust_env=False, follow_redirects=False)


def _post(client: Any, sent: dict[str, Any], streaming: bool) -> Any:
    """POST /chat/completions with what `Encoder.sendable` made: the body (bytes), or a stream
    of chunks."""
    from openai import Stream
    from openai.types.chat import ChatCompletionChunk

    return client.post(
        "/chat/completions",
        **sent,
        cast_to=bytes,
        stream=streaming,
        stream_cls=Stream[ChatCompletionChunk] if streaming else None,
    )


class Encoder:
    """Request bodies, each message JSON-encoded once: the conversation only grows, so a step
    encodes its new messages, not the whole history. Only the last request's messages are
    kept, so memory follows the conversation (and a `heph docs` run does not pile up files).
    Threads may share one: a body is built from the messages it is given, whatever the others
    leave in the store."""

    def __init__(self) -> None:
        self.known: dict[tuple[str, str], bytes] = {}

    def sendable(self, params: dict[str, Any]) -> dict[str, Any]:
        """The keyword that sends `params`: encoded bytes, or for an `openai` older than its
        `content` parameter, the plain dict (with any lone surrogate spelled out)."""
        if not _post_takes_content():
            messages = [{**m, "content": encodable(m["content"])} for m in params["messages"]]
            return {"body": {**params, "messages": messages}}
        body, self.known = request_body(params, self.known)
        return {"content": body}


@functools.cache
def _post_takes_content() -> bool:
    import inspect

    import openai

    return "content" in inspect.signature(openai.OpenAI.post).parameters


def request_body(
    params: dict[str, Any], known: dict[tuple[str, str], bytes]
) -> tuple[bytes, dict[tuple[str, str], bytes]]:
    """`params` as the JSON the server receives, and its messages' encodings, reusing `known`."""
    rest = {key: value for key, value in params.items() if key != "messages"}
    head = json.dumps(rest, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    encoded: dict[tuple[str, str], bytes] = {}
    for message in params["messages"]:
        key = (message["role"], message["content"])
        encoded[key] = encoded.get(key) or known.get(key) or _message_json(*key)
    parts = b",".join(encoded[(m["role"], m["content"])] for m in params["messages"])
    comma = "," if rest else ""
    return f'{head[:-1]}{comma}"messages":['.encode() + parts + b"]}", encoded


def _message_json(role: str, content: str) -> bytes:
    # A lone surrogate (an undecodable file name in an observation) cannot be encoded.
    message = {"role": role, "content": encodable(content)}
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


def pause(seconds: float) -> None:
    """Wait between retries (the default; a test may put one here that does not wait)."""
    time.sleep(seconds)


def warm_up() -> None:
    """Import `openai` in the background while the rest starts (or the user types)."""
    threading.Thread(target=_import_openai, daemon=True).start()


def _import_openai() -> None:
    try:
        import openai  # noqa: F401
    except Exception:  # the first model call reports it properly
        pass


def missing_key_message() -> str:
    """What to set when no endpoint is configured: the variables for OpenAI, Ollama and
    llama.cpp."""
    return (
        "no model endpoint is configured. Set one of:\n"
        "  OpenAI:           export OPENAI_API_KEY=sk-...\n"
        "  Ollama:           export OPENAI_BASE_URL=http://localhost:11434/v1"
        " HEPH_MODEL=qwen2.5-coder\n"
        "  llama.cpp server: export OPENAI_BASE_URL=http://localhost:8080/v1\n"
        "or pass --base-url and -m/--model (any OpenAI-compatible endpoint works)"
    )


def _reply_of(body: Any, url: str) -> tuple[str, Usage, str | None]:
    """The text, usage and finish_reason of a chat completion's body, read as plain JSON (the
    client's model objects would cost every step a few tenths of a millisecond)."""
    try:
        data = json.loads(body) if isinstance(body, (str, bytes)) else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise not_json(url)
    choices = data.get("choices")
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise ModelError(f"the model endpoint {url} answered without any choices")
    finish, message = choices[0].get("finish_reason"), choices[0].get("message")
    usage = given if isinstance(given := data.get("usage"), dict) else {}
    counts = Usage(_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")))
    finish = finish if isinstance(finish, str) else None
    if not isinstance(message, dict):  # a 200 whose message is null: the loop explains it
        return "", counts, finish
    # Some servers put a reasoning model's whole reply in reasoning_content, leaving content empty.
    text = message.get("content") or message.get("reasoning_content") or ""
    return (text if isinstance(text, str) else ""), counts, finish


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    return Usage(getattr(raw, "prompt_tokens", 0) or 0, getattr(raw, "completion_tokens", 0) or 0)


def estimated_tokens(messages: list[Message]) -> int:
    """Estimated prompt tokens of `messages`, for a server that reports none."""
    return sum(tokens.estimate(m["content"]) + 4 for m in messages)
