"""The model client: Chat Completions through the `openai` package, with our own retry policy.

`openai` is imported on the first call, never at import time (it costs half a second). The
client's own retries are off: ours honour Retry-After, back off exponentially, survive several
transient faults in a row and stay bounded in time, then fail with a message naming the URL.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

from hephaistus.config import Config
from hephaistus.errors import ModelError
from hephaistus.seams import Message, ModelReply, Usage
from hephaistus.textfile import encodable

OPENAI_URL = "https://api.openai.com/v1"
BACKOFF_BASE = 0.25
BACKOFF_CAP = 8.0
RETRY_AFTER_CAP = 60.0
RETRY_BUDGET_SECONDS = 300.0
PROGRESS_INTERVAL = 0.1  # seconds between updates of a streaming reply shown so far


class _Transient(Exception):
    """A fault worth another attempt; `after` is the server's Retry-After, if it gave one."""

    def __init__(self, reason: str, after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.after = after


class ChatModel:
    """An OpenAI-compatible chat model, asked for JSON mode where the endpoint accepts it."""

    def __init__(self, config: Config, *, pause: Callable[[float], None] | None = None) -> None:
        self.config = config
        self.pause = pause  # how to wait between retries (tests pass one that does not wait)
        self.name = config.model
        self.url = (config.base_url or OPENAI_URL).rstrip("/")
        self.json_mode = config.json_mode
        self._client: Any = None

    def complete(
        self,
        messages: list[Message],
        *,
        on_retry: Callable[[str, float], None] | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> ModelReply:
        deadline = time.monotonic() + RETRY_BUDGET_SECONDS
        attempts = self.config.max_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                text, usage = self._request(messages, on_text)
                return ModelReply(text, usage, attempt)
            except _Transient as fault:
                delay = _backoff(attempt, fault.after)
                if attempt == attempts or time.monotonic() + delay > deadline:
                    raise ModelError(self._gave_up(fault, attempt)) from None
                if on_retry:
                    on_retry(fault.reason, delay)
                (self.pause or pause)(delay)
        raise AssertionError("unreachable")

    def _gave_up(self, fault: _Transient, attempts: int) -> str:
        if fault.reason.startswith("nothing is listening"):
            return (
                f"nothing is listening at {self.url} ({attempts} attempts): start the model "
                "server (e.g. `ollama serve` or `llama-server`) or fix --base-url / OPENAI_BASE_URL"
            )
        return (
            f"the model endpoint {self.url} kept failing ({fault.reason}) after {attempts} "
            "attempts; try again later or check the server"
        )

    def _request(
        self, messages: list[Message], on_text: Callable[[str], None] | None = None
    ) -> tuple[str, Usage]:
        import openai

        client = self._get_client()
        # A lone surrogate (an undecodable file name in an observation) cannot be encoded.
        sent = [{**m, "content": encodable(m["content"])} for m in messages]
        params: dict[str, Any] = {"model": self.name, "messages": sent}
        if self.json_mode:
            params["response_format"] = {"type": "json_object"}
        try:
            if self.config.stream:
                return self._stream(client, params, on_text)
            response = client.chat.completions.create(**params)
            return _content(response, self.url), _usage(getattr(response, "usage", None))
        except openai.BadRequestError as exc:
            if self.json_mode and _mentions_response_format(exc):
                self.json_mode = False  # remembered for the rest of the session
                return self._request(messages, on_text)
            raise ModelError(
                f"the model endpoint {self.url} rejected the request: {_detail(exc)}"
            ) from None
        except openai.AuthenticationError:
            raise ModelError(
                f"the model endpoint {self.url} rejected the API key (401); check OPENAI_API_KEY"
            ) from None
        except openai.PermissionDeniedError as exc:
            raise ModelError(f"{self.url} refused access (403): {_detail(exc)}") from None
        except openai.NotFoundError:
            raise ModelError(
                f"model '{self.name}' was not found at {self.url} (404); check -m/--model or "
                "HEPH_MODEL (for Ollama: `ollama pull NAME`), and that --base-url is the API root"
            ) from None
        except openai.RateLimitError as exc:
            raise _Transient("429 rate limited", _retry_after(exc)) from None
        except openai.InternalServerError as exc:
            raise _Transient(f"server error {exc.status_code}", _retry_after(exc)) from None
        except openai.APIStatusError as exc:
            if exc.status_code in (408, 409) or exc.status_code >= 500:
                raise _Transient(f"HTTP {exc.status_code}", _retry_after(exc)) from None
            raise ModelError(
                f"the model endpoint {self.url} answered HTTP {exc.status_code}: {_detail(exc)}"
            ) from None
        except openai.APITimeoutError:
            raise _Transient(f"no reply within {self.config.timeout:g} s") from None
        except openai.APIConnectionError as exc:
            if _refused(exc):
                raise _Transient(f"nothing is listening at {self.url}") from None
            raise _Transient("connection lost") from None
        except openai.APIResponseValidationError:
            raise _not_json(self.url) from None
        except ValueError:  # a 200 whose body is not JSON fails to decode
            raise _not_json(self.url) from None
        except openai.APIError as exc:  # anything else the client reports
            raise ModelError(f"the model endpoint {self.url} failed: {_detail(exc)}") from None

    def _stream(
        self, client: Any, params: dict[str, Any], on_text: Callable[[str], None] | None
    ) -> tuple[str, Usage]:
        import openai

        broken: tuple[type[BaseException], ...] = (openai.APIConnectionError, *_httpx_errors())
        parts: list[str] = []
        usage = Usage()
        finished = False
        shown_at = 0.0
        try:
            for chunk in client.chat.completions.create(**params, stream=True):
                if getattr(chunk, "usage", None):
                    usage = _usage(chunk.usage)
                for choice in chunk.choices or ():
                    if choice.delta and choice.delta.content:
                        parts.append(choice.delta.content)
                        # At most a few times a second: joining the parts costs the whole reply.
                        if on_text and time.monotonic() - shown_at >= PROGRESS_INTERVAL:
                            shown_at = time.monotonic()
                            on_text("".join(parts))
                    finished = finished or bool(choice.finish_reason)
        except broken:
            raise _Transient("the reply stream broke off") from None
        except openai.APIStatusError:
            raise
        except openai.APIError as exc:  # an error event inside the stream
            raise _Transient(
                f"the server reported an error while streaming: {_detail(exc)}"
            ) from None
        if not finished:
            raise _Transient("the reply stream ended before the reply was complete")
        return "".join(parts), usage

    def _get_client(self) -> Any:
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
            )
        return self._client


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
    return (
        "no model endpoint is configured. Set one of:\n"
        "  OpenAI:           export OPENAI_API_KEY=sk-...\n"
        "  Ollama:           export OPENAI_BASE_URL=http://localhost:11434/v1"
        " HEPH_MODEL=qwen2.5-coder\n"
        "  llama.cpp server: export OPENAI_BASE_URL=http://localhost:8080/v1\n"
        "or pass --base-url and -m/--model (any OpenAI-compatible endpoint works)"
    )


def _content(response: Any, url: str) -> str:
    if isinstance(response, (str, bytes)):  # some client versions hand back an unparsed body
        raise _not_json(url)
    choices = getattr(response, "choices", None)
    if not choices:
        raise ModelError(f"the model endpoint {url} answered without any choices")
    message = getattr(choices[0], "message", None)
    if message is None:  # a 200 whose message is null: an empty reply, which the loop explains
        return ""
    # Some servers put a reasoning model's whole reply in reasoning_content, leaving content empty.
    return (
        message.content
        or (getattr(message, "model_extra", None) or {}).get("reasoning_content")
        or ""
    )


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    return Usage(getattr(raw, "prompt_tokens", 0) or 0, getattr(raw, "completion_tokens", 0) or 0)


def _backoff(attempt: int, retry_after: float | None) -> float:
    if retry_after is not None:
        return min(max(retry_after, 0.0), RETRY_AFTER_CAP)
    delay = min(BACKOFF_BASE * 2 ** (attempt - 1), BACKOFF_CAP)
    return delay * random.uniform(0.8, 1.2)


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(getattr(exc, "message", exc))


def _mentions_response_format(exc: Any) -> bool:
    text = (_detail(exc) + str(getattr(exc, "body", ""))).lower()
    return "response_format" in text or "json_object" in text


def _refused(exc: BaseException) -> bool:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError) or "refused" in str(cause).lower():
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _not_json(url: str) -> ModelError:
    return ModelError(
        f"the model endpoint {url} answered 200 with a body that is not JSON; "
        "is --base-url the API root (it usually ends in /v1)?"
    )


def _httpx_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = []
    for module in ("httpx2", "httpx"):
        try:
            errors.append(__import__(module).HTTPError)
        except ImportError:
            continue
    return tuple(errors) or (OSError,)
