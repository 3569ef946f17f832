"""How real OpenAI-compatible servers behave, for the loopback test server to behave alike.

Each flavour says how the server tells its context window and how it answers a request that does
not fit it: llama.cpp's two servers refuse only a prompt that fills the window (a reply cap past it
is cut to the room left), the others a prompt and reply cap over it. What they have in common:
without `max_tokens` a small model may write until a limit of the server's own; usage comes in a
stream only when asked for.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

RUN_ON_TOKENS = 6000  # how long a reply runs without max_tokens (a server's own limit)
CHARS_PER_TOKEN = 4
# What each server says in /v1/models `owned_by` (heph tells llama-cpp-python's by it).
OWNERS = {
    "openai": "system",
    "llama-cpp-python": "me",
    "llama.cpp": "llamacpp",
    "vllm": "vllm",
    "ollama": "library",
    "lmstudio": "organization_owner",
}
LLAMA_CPP = ("llama.cpp", "llama-cpp-python")


class Refused(Exception):
    """A request shape the server answers with an error: (status, body)."""

    def __init__(self, status: int, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        error = {"message": message, "type": "invalid_request_error"}
        self.body = {"error": {**error, **({"param": param} if param else {})}}


@dataclass(frozen=True)
class Flavour:
    """One kind of server (openai, llama.cpp, vllm, ...): the endpoints that tell its window and
    how it answers a prompt too long for it."""

    name: str
    empty_stream_on_overflow: bool = False  # a 200 with an empty stream instead of a 400

    def get_answer(
        self, path: str, window: int | None, models: tuple[str, ...] = ("scripted",)
    ) -> dict[str, Any] | None:
        """The answer to a GET the server knows, or None (a 404)."""
        if path.endswith("/api/v0/models"):
            if self.name != "lmstudio" or not window:
                return None
            loaded = {"max_context_length": window * 4, "loaded_context_length": window}
            return {"data": [{"id": name, **loaded} for name in models]}
        if path.endswith("/models"):
            listed: list[dict[str, Any]] = [
                {"id": name, "object": "model", "owned_by": OWNERS[self.name]} for name in models
            ]
            if self.name == "vllm" and window:
                for model in listed:
                    model["max_model_len"] = window
            return {"object": "list", "data": listed}
        if path.endswith("/props") and self.name == "llama.cpp" and window:
            return {"default_generation_settings": {"n_ctx": window}, "total_slots": 1}
        return None

    def enforced_schema(self, response_format: Any) -> dict[str, Any] | None:
        """The JSON schema this server would enforce for `response_format`, None when it
        enforces none (it ignores the shape, or there is no schema); Refused when it answers
        the shape with an error, as the real one does."""
        if not isinstance(response_format, dict):
            return None
        kind = response_format.get("type")
        nested = response_format.get("json_schema")
        nested = nested.get("schema") if isinstance(nested, dict) else None
        flat = response_format.get("schema")
        if self.name == "openai":
            strict = (response_format.get("json_schema") or {}).get("strict") is True
            return nested if kind == "json_schema" and strict else None
        if self.name == "llama-cpp-python":
            if kind == "json_schema":  # 0.3.36 fails on it with a 500
                raise Refused(500, "Internal Server Error")
            return flat if kind == "json_object" else None
        if self.name == "llama.cpp":
            if kind == "json_object":
                return flat
            return nested if kind == "json_schema" else None  # a flat json_schema is ignored
        if self.name == "lmstudio" and kind == "json_object":
            raise Refused(400, "'response_format.type' must be 'json_schema' or 'text'")
        return nested if kind == "json_schema" else None  # vllm, ollama, lmstudio

    def reply_room(self, prompt: int, max_tokens: int, window: int | None) -> int:
        """The most tokens a reply may take: the request's cap, cut by llama.cpp's servers to
        what the window has left (0: no cap)."""
        if window is None or self.name not in LLAMA_CPP:
            return max_tokens
        return min(max_tokens or window, window - prompt)

    def overflows(self, prompt: int, max_tokens: int, window: int | None) -> bool:
        """Whether a prompt of `prompt` tokens with a reply cap of `max_tokens` does not fit."""
        if window is None:
            return False
        return prompt >= window if self.name in LLAMA_CPP else prompt + max_tokens > window

    def overflow_error(self, window: int, prompt: int, max_tokens: int) -> dict[str, Any]:
        """The error body this server sends when a prompt of `prompt` tokens and a reply cap of
        `max_tokens` do not fit `window`."""
        if self.name == "llama.cpp":
            return {
                "error": {
                    "code": 400,
                    "type": "exceed_context_size_error",
                    "message": "the request exceeds the available context size, try increasing it",
                    "n_prompt_tokens": prompt,
                    "n_ctx": window,
                }
            }
        # llama-cpp-python and vLLM say how the request was made up; OpenAI (here) does not.
        parts = f" ({prompt} in the messages, {max_tokens} in the completion)"
        return {
            "error": {
                "message": f"This model's maximum context length is {window} tokens. "
                f"However, you requested {prompt + max_tokens} tokens"
                f"{parts if self.name != 'openai' else ''}. Please reduce the "
                "length of the messages or completion.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }


FLAVOURS = {
    f.name: f
    for f in (
        Flavour("openai"),
        Flavour("llama-cpp-python", empty_stream_on_overflow=True),
        Flavour("llama.cpp"),
        Flavour("vllm"),
        Flavour("ollama"),
        Flavour("lmstudio"),
    )
}


def get(name: str) -> Flavour:
    """The flavour called `name`; ValueError, listing the known ones, for any other."""
    if name not in FLAVOURS:
        raise ValueError(f"unknown server flavour {name!r} (known: {', '.join(FLAVOURS)})")
    return FLAVOURS[name]


def ollama_show(window: int | None) -> dict[str, Any]:
    """Ollama's /api/show: the model's trained length, and the num_ctx it runs with."""
    return {
        "model_info": {"general.architecture": "llama", "llama.context_length": 131072},
        "parameters": f"num_ctx                        {window or 2048}",
    }


def prompt_tokens(body: dict[str, Any], per_estimate: float | None = None) -> int:
    """The prompt tokens of a request, as the test server counts them: by characters, or as
    heph's own estimate times `per_estimate` (a tokenizer that estimate is that far from)."""
    if per_estimate is None:
        return len(json.dumps(body.get("messages", []))) // CHARS_PER_TOKEN
    from hephaistus.model.compaction import count

    return int(count(body.get("messages", [])) * per_estimate)


def usage(body: dict[str, Any], content: str, per_estimate: float | None) -> dict[str, int]:
    """The usage a server reports for a request and its reply, counted as it counts a prompt
    that does not fit (prompt_tokens, completion_tokens)."""
    prompt = prompt_tokens(body, per_estimate)
    return {"prompt_tokens": prompt, "completion_tokens": -(-len(content) // CHARS_PER_TOKEN)}


def capped(content: str, run_on: bool, max_tokens: Any) -> tuple[str, str]:
    """The reply as the server sends it, and its finish_reason."""
    limit = int(max_tokens) if isinstance(max_tokens, int) and max_tokens > 0 else RUN_ON_TOKENS
    if run_on:
        content = content * (limit * CHARS_PER_TOKEN // max(1, len(content)) + 1)
    if len(content) > limit * CHARS_PER_TOKEN:
        return content[: limit * CHARS_PER_TOKEN], "length"
    return content, "stop"


def constrained(content: str, schema: dict[str, Any]) -> str:
    """What a server that enforces `schema` sends when the scripted reply is `content`: the
    reply itself when it keeps to the schema (checked by the jsonschema library, not heph),
    else a step that does, as a grammar forces one: the text as the final answer's message."""
    import jsonschema

    try:
        jsonschema.validate(json.loads(content), schema)
        return content
    except (ValueError, jsonschema.ValidationError):
        pass
    message = content[:200] or "done"
    forced: dict[str, Any] = {"thought": "forced by the schema", "final": {"message": message}}
    if "anyOf" not in schema:  # OpenAI's strict form: one object, every key there
        forced["action"] = None
    jsonschema.validate(forced, schema)  # a schema that cannot take even this is heph's fault
    return json.dumps(forced)


def completion(
    body: dict[str, Any], content: str, usage: dict[str, int] | None, finish: str = "stop"
) -> dict[str, Any]:
    """The body of a chat completion holding `content` (and `usage`, when given)."""
    result: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "scripted"),
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "message": {"role": "assistant", "content": content},
            }
        ],
    }
    if usage:
        result["usage"] = {**usage, "total_tokens": sum(usage.values())}
    return result


def chunks(
    body: dict[str, Any],
    content: str,
    usage: dict[str, int] | None,
    *,
    complete: bool = True,
    finish: str = "stop",
) -> list[dict[str, Any]]:
    """The chunks of a streamed chat completion: `content` in pieces, the finish (unless the
    stream is cut short: not `complete`), then the usage when given."""
    base = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "scripted"),
    }
    pieces = [content[i : i + 16] for i in range(0, len(content), 16)] or [""]
    if not complete:
        pieces = pieces[: max(1, len(pieces) // 2)]
    events = [
        {
            **base,
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": p}, "finish_reason": None}
            ],
        }
        for p in pieces
    ]
    if complete:
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if usage:
            events.append(
                {**base, "choices": [], "usage": {**usage, "total_tokens": sum(usage.values())}}
            )
    return events
