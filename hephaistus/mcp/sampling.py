"""heph's model lent to an MCP server (`sampling/createMessage`), only where the person's own
entry for it says `sampling = true`, only while one of its calls runs, and SAMPLES_PER_CALL
times in one call at most: the server's messages (text only) go to heph's model under the
run's key, in prose, as a span of the session (its tokens counted with the rest, and said).
heph declares `sampling` to no other server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hephaistus.values import Message, ModelReply

SAMPLED_TOKENS = 4_000  # the longest reply a server may ask of heph's model
SAMPLES_PER_CALL = 5  # how often one call may ask it
Lend = Callable[[list[Message], int, str], ModelReply]  # messages, reply cap, server


def messages_of(params: Any) -> list[Message] | str:
    """The server's request as heph's model's messages, or why it cannot be sent (a message
    that is not text)."""
    messages: list[Message] = []
    if params.system_prompt:
        messages.append({"role": "system", "content": str(params.system_prompt)})
    for message in params.messages:
        content = message.content
        parts = content if isinstance(content, list) else [content]
        texts = [getattr(part, "text", None) for part in parts]
        if any(not isinstance(text, str) for text in texts):
            return "heph lends its model text only: a message was not text"
        role = "assistant" if message.role == "assistant" else "user"
        messages.append({"role": role, "content": "\n".join(texts)})  # type: ignore[arg-type]
    return messages


def answered(lend: Lend | None, params: Any, server: str, turn: int = 1) -> Any:
    """The package's CreateMessageResult for the server's request (the call's `turn`-th),
    or ErrorData saying why heph does not answer it."""
    from mcp import types

    if lend is None:
        return types.ErrorData(
            code=types.INVALID_REQUEST, message="heph lends its model only during a call"
        )
    if turn > SAMPLES_PER_CALL:
        said = f"heph lends its model at most {SAMPLES_PER_CALL} times in one call"
        return types.ErrorData(code=types.INVALID_REQUEST, message=said)
    messages = messages_of(params)
    if isinstance(messages, str):
        return types.ErrorData(code=types.INVALID_REQUEST, message=messages)
    cap = max(1, min(int(params.max_tokens or SAMPLED_TOKENS), SAMPLED_TOKENS))
    try:
        reply = lend(messages, cap, server)
    except Exception as error:  # noqa: BLE001 - the model's failure is the server's answer
        said = " ".join(str(error).split())[:300] or type(error).__name__
        return types.ErrorData(code=types.INTERNAL_ERROR, message=f"heph's model failed: {said}")
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=reply.text),
        model="heph",
        stop_reason="maxTokens" if reply.cut_off else "endTurn",
    )
