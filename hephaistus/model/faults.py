"""How the model client meets faults: which are worth another attempt, how long to wait
between attempts, and what to tell the user when they persist.

A 429, a 5xx, a broken connection or one timeout is retried: Retry-After is honoured, the wait
otherwise grows exponentially, and the whole stays within a time budget. A request larger than
the context window is told apart (compacting the conversation may help where no retry will).
A 400 refusing an option some servers lack turns it off for the session. Every other fault is a
ModelError that names the URL and what to change.

`openai` is imported only once a request has failed, as in `llm`.
"""

from __future__ import annotations

import datetime
import json
import math
import random
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from hephaistus.errors import ContextOverflow, KeyRejected, ModelError

if TYPE_CHECKING:
    from hephaistus.settings.config import Config

BACKOFF_BASE = 0.25
BACKOFF_CAP = 8.0
RETRY_AFTER_CAP = 60.0
RETRY_BUDGET_SECONDS = 300.0

Reply = TypeVar("Reply")


class ChatModel(Protocol):
    """What a fault needs of the model client (llm.ChatModel): where it is, its settings, and
    what it learns from a refusal (the step's shape, JSON mode, a stream's token counts)."""

    name: str
    url: str
    config: Config
    retry_timeouts: bool
    timeout_setting: str
    sent_shape: str | None
    json_mode: bool
    stream_usage: bool

    def refuse_shape(self) -> None:
        """Stop sending the step's shape the server refused (see llm.ChatModel)."""


class Transient(Exception):
    """A fault worth another attempt; `after` is the server's Retry-After, if it gave one."""

    def __init__(self, reason: str, after: float | None = None, *, timeout: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.after = after
        self.timeout = timeout  # no reply in time: worth one more try only


def retrying(
    request: Callable[[], Reply],
    model: ChatModel,
    wait: Callable[[float], None],
    on_retry: Callable[[str, float], None] | None = None,
) -> tuple[Reply, int]:
    """What `request()` returns, and the attempt that returned it. Transient faults (429, 5xx,
    resets, a timeout once) are retried with backoff within a time budget, each announced to
    `on_retry` with the delay before `wait` waits it; ModelError when they persist."""
    deadline = time.monotonic() + RETRY_BUDGET_SECONDS
    attempts = model.config.max_retries + 1
    timeouts = 0
    for attempt in range(1, attempts + 1):
        try:
            return request(), attempt
        except Transient as fault:
            # Against a server that serves one request at a time, a retry after a timeout
            # waits behind the request it gave up on: retry a timeout once only.
            timeouts += fault.timeout
            if fault.timeout and (timeouts > 1 or not model.retry_timeouts):
                raise ModelError(_timed_out(model)) from None
            delay = backoff(attempt, fault.after)
            if attempt == attempts or time.monotonic() + delay > deadline:
                raise ModelError(_gave_up(model.url, fault, attempt)) from None
            if on_retry:
                on_retry(fault.reason, delay)
            wait(delay)
    raise AssertionError("unreachable")


def _gave_up(url: str, fault: Transient, attempts: int) -> str:
    if fault.reason.startswith("nothing is listening"):
        return (
            f"nothing is listening at {url} ({attempts} attempts): start the model "
            "server (e.g. `ollama serve` or `llama-server`) or fix --base-url / OPENAI_BASE_URL"
        )
    return (
        f"the model endpoint {url} kept failing ({fault.reason}) after {attempts} "
        "attempts; try again later or check the server"
    )


def _timed_out(model: ChatModel) -> str:
    twice = ", twice" if model.retry_timeouts else ""
    return (
        f"the model at {model.url} gave no complete reply within {model.config.timeout:g} s"
        f"{twice}. A slow (local) model may need longer: raise {model.timeout_setting}"
    )


def backoff(attempt: int, retry_after: float | None) -> float:
    """Seconds to wait before attempt `attempt + 1`: the server's Retry-After (capped), else
    an exponential backoff with jitter."""
    if retry_after is not None:
        return min(max(retry_after, 0.0), RETRY_AFTER_CAP)
    delay = min(BACKOFF_BASE * 2 ** (attempt - 1), BACKOFF_CAP)
    return delay * random.uniform(0.8, 1.2)


def fault_of(exc: Exception, model: ChatModel, params: dict[str, Any]) -> Exception | None:
    """What a request's failure means: a Transient worth another attempt, a ContextOverflow,
    or a ModelError saying what to change. None when a 400 refused an option some servers
    lack (JSON mode, token counts in a stream): it is now off for the rest of the session, and
    the request may go again without it."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        return _status_fault(exc, model, params)
    if isinstance(exc, openai.APITimeoutError):
        return Transient(
            f"no reply within {model.config.timeout:g} s (the `timeout` setting)", timeout=True
        )
    if isinstance(exc, openai.APIConnectionError):
        if _refused(exc):
            return Transient(f"nothing is listening at {model.url}")
        return Transient("connection lost")
    # A 200 whose body is not JSON: the client's validation fails, or decoding does.
    if isinstance(exc, (openai.APIResponseValidationError, ValueError)):
        return not_json(model.url)
    return ModelError(f"the model endpoint {model.url} failed: {detail(exc)}")


def _status_fault(exc: Any, model: ChatModel, params: dict[str, Any]) -> Exception | None:
    """`fault_of` for an HTTP error status."""
    import openai

    url = model.url
    if isinstance(exc, openai.BadRequestError):
        overflow = context_overflow(exc)
        if overflow is not None:
            return overflow
        if _dropped_refused_option(exc, model, params):
            return None
        return ModelError(f"the model endpoint {url} rejected the request: {detail(exc)}")
    if isinstance(exc, openai.AuthenticationError):
        return KeyRejected(
            f"the model endpoint {url} rejected the API key (401): set OPENAI_API_KEY to a key "
            "it accepts"
        )
    if isinstance(exc, openai.PermissionDeniedError):
        return ModelError(f"{url} refused access (403): {detail(exc)}")
    if isinstance(exc, openai.NotFoundError):
        return ModelError(
            f"model '{model.name}' was not found at {url} (404); check -m/--model or "
            "HEPH_MODEL (for Ollama: `ollama pull NAME`), and that --base-url is the API root"
        )
    if isinstance(exc, openai.RateLimitError):
        return Transient("429 rate limited", _retry_after(exc))
    if isinstance(exc, openai.InternalServerError):
        return Transient(f"server error {exc.status_code}", _retry_after(exc))
    if exc.status_code in (408, 409) or exc.status_code >= 500:
        return Transient(f"HTTP {exc.status_code}", _retry_after(exc))
    return ModelError(f"the model endpoint {url} answered HTTP {exc.status_code}: {detail(exc)}")


def _dropped_refused_option(exc: Any, model: ChatModel, params: dict[str, Any]) -> bool:
    """Turn off the option a 400 refused, for the rest of the session; whether there was one.
    A 400 to a step's schema moves on to the next shape (then JSON mode)."""
    if model.sent_shape and "response_format" in params:
        model.refuse_shape()
        return True
    if model.json_mode and _mentions(exc, "response_format", "json_object"):
        model.json_mode = False
        return True
    if "stream_options" in params and _mentions(exc, "stream_options", "include_usage"):
        model.stream_usage = False
        return True
    return False


def broken_stream_errors() -> tuple[type[BaseException], ...]:
    """The errors by which a reply stream breaks off: the client's connection error, and the
    HTTP library's own errors, which a stream being read may raise unwrapped."""
    import openai

    errors: list[type[BaseException]] = []
    for module in ("httpx2", "httpx"):
        try:
            errors.append(__import__(module).HTTPError)
        except ImportError:
            continue
    return (openai.APIConnectionError, *(errors or (OSError,)))


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    return retry_after(response.headers) if response is not None else None


def retry_after(headers: Any, now: float | None = None) -> float | None:
    """The seconds a server asks us to wait: `retry-after-ms` (OpenAI's), else `Retry-After` as
    seconds or as an HTTP date. None when it says nothing usable; capped by the caller."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return _finite(float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return _finite(float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _finite(seconds: float) -> float | None:
    return seconds if math.isfinite(seconds) else None


def detail(exc: Any) -> str:
    """What the server said went wrong: the error body's message, else the client's."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(getattr(exc, "message", exc))


def _mentions(exc: Any, *words: str) -> bool:
    text = (detail(exc) + str(getattr(exc, "body", ""))).lower()
    return any(word in text for word in words)


# How servers say a request is larger than the context window (OpenAI, vLLM, llama.cpp's two
# servers, Ollama), and where they say how large the window is.
OVERFLOW_WORDS = (
    "context_length_exceeded",
    "exceed_context_size",
    "maximum context length",
    "exceeds the available context size",
    "context length exceeded",
    "exceed context window",
    "prompt is too long",
    "input length exceeds",
)
WINDOW_NUMBER = re.compile(r"(?:maximum context length is|context window of|n_ctx\W+)\s*(\d+)")
# And the prompt's tokens by their count (llama-cpp-python and vLLM, llama.cpp, OpenAI).
PROMPT_NUMBER = re.compile(
    r"(\d+) in the messages|n_prompt_tokens\W+(\d+)|messages resulted in (\d+) tokens"
)


def context_overflow(exc: Any) -> ContextOverflow | None:
    """The error as a ContextOverflow (with the window and the prompt's size when the server
    names them), if it is one."""
    body = json.dumps(getattr(exc, "body", "") or "", default=str)
    text = f"{detail(exc)} {body}".lower()
    if not any(word in text for word in OVERFLOW_WORDS):
        return None
    number, prompt = WINDOW_NUMBER.search(text), PROMPT_NUMBER.search(text)
    return ContextOverflow(
        f"the model's context window is too small for this request: {detail(exc)}",
        window=int(number.group(1)) if number else None,
        prompt_tokens=int(next(filter(None, prompt.groups()))) if prompt else None,
    )


def _refused(exc: BaseException) -> bool:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError) or "refused" in str(cause).lower():
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def not_json(url: str) -> ModelError:
    """The error for a 200 whose body is not a chat completion: most often a wrong base URL."""
    return ModelError(
        f"the model endpoint {url} answered 200 with a body that is not JSON; "
        "is --base-url the API root (it usually ends in /v1)?"
    )
