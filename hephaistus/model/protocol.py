"""The model protocol: one JSON object per reply, parsed leniently and validated strictly.

Lenient: the object may sit inside ```json fences or among prose; the first complete JSON object
wins. Strict: exactly one of `action` / `final`, a known tool, arguments that fit its schema.
A reply that fails raises FormatError, whose `observation` tells the model what was wrong and how
a valid reply looks; it is not fatal to the run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from hephaistus.textfile import LONE_SURROGATE
from hephaistus.tools import Registry
from hephaistus.values import Action, Final, Reply

# A concrete example: small models copy placeholders like "the answer for the user" verbatim,
# and a copy of the example itself is refused too.
EXAMPLE_THOUGHT = "I need to see the function before changing it."
EXAMPLE_ARGS = {"path": "src/app.py"}
EXAMPLE_ACTION = (
    f'{{"thought": "{EXAMPLE_THOUGHT}", '
    '"action": {"tool": "read_file", "args": {"path": "src/app.py"}}}'
)
EXAMPLE_FINAL_MESSAGE = "Fixed the sign in add() in src/app.py; the tests pass now."
# The system prompt's example (prompts/system.md shows it; a test holds the two together).
PROMPT_EXAMPLE = '{"thought": "why", "action": {"tool": "read_file", "args": {"path": "app.py"}}}'
# The example calls: copied with an example's thought, they are not the model's own step.
EXAMPLE_CALLS = [("read_file", EXAMPLE_ARGS), ("read_file", {"path": "app.py"})]
VALID_SHAPES = (
    f"{EXAMPLE_ACTION}\nor, when the task is done:\n"
    f'{{"thought": "The test passes.", "final": {{"message": "{EXAMPLE_FINAL_MESSAGE}"}}}}'
)
# Texts of the examples (here and in the system prompt) that are never a real answer.
PLACEHOLDERS = {
    text.strip(".").lower()
    for text in (
        "why",
        "what for",
        "the answer for the user",
        "what you did or found, for the user",
        "why you are done",
        "what you know and why this step",
        "why this step",
        "what you did or found",
        "what you did",
        EXAMPLE_FINAL_MESSAGE,
    )
}


class FormatError(ValueError):
    """A reply that is not a valid protocol object; carries the corrective observation."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem

    @property
    def observation(self) -> str:
        return (
            f"Your last reply was not valid: {self.problem}\n"
            f"Reply with exactly one JSON object and nothing else, shaped like:\n{VALID_SHAPES}"
        )


# A reasoning model's thinking, before its answer; only at the start, so the search is linear.
THINKING = re.compile(r"\s*<think(?:ing)?>.*?</think(?:ing)?>", re.S)
# Each candidate costs at most one pass over the text, so a reply full of stray braces stays
# linear in its length; a real reply has its object at one of its first few braces.
MAX_CANDIDATES = 64


def find_json_object(text: str) -> dict[str, Any]:
    """The first complete JSON object in `text`, wherever it sits (fences, prose), after any
    <think>...</think> block a reasoning model wrote first."""
    thinking = THINKING.match(text)
    if thinking:
        text = text[thinking.end() :]
    # strict=False: models often put raw newlines and tabs inside strings (file contents).
    decoder = json.JSONDecoder(strict=False)
    start = text.find("{")
    for _ in range(MAX_CANDIDATES):
        if start == -1:
            break
        try:
            value, _end = decoder.raw_decode(text, start)
        except RecursionError:
            raise FormatError("the JSON object is nested too deeply.") from None
        except json.JSONDecodeError:
            pass
        except ValueError as error:  # an integer past Python's digit limit
            raise FormatError(f"a number has too many digits ({error}).") from None
        else:
            if isinstance(value, dict):
                return value
        start = text.find("{", start + 1)
    if not text.strip():
        raise FormatError("the reply was empty.")
    raise FormatError("the reply contained no complete JSON object.")


def _lone_surrogate_in(value: Any) -> bool:
    pending = [value]
    while pending:  # not recursive: the object may be nested as deep as the decoder allows
        item = pending.pop()
        if isinstance(item, str):
            if LONE_SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def parse_reply(text: str, registry: Registry, denied: Collection[str] = ()) -> Reply:
    """The model's reply as an Action or a Final; FormatError, with what to correct, when it is
    neither, names an unknown tool, or has arguments the tool does not take. A `denied` tool
    (one the mode refuses) is never named as available, and its call is returned unchecked:
    the runtime refuses it, saying why."""
    data = find_json_object(text)
    if _lone_surrogate_in(data):
        raise FormatError(
            "a string held a lone surrogate (an invalid \\ud800-\\udfff escape); "
            "send valid Unicode text."
        )
    if "action" not in data and "final" not in data and isinstance(data.get("tool"), str):
        # {"thought": ..., "tool": ..., "args": ...}: the action without its wrapper.
        data = {
            "thought": data.get("thought", ""),
            "action": {k: v for k, v in data.items() if k != "thought"},
        }
    thought = data.get("thought", "")
    if not isinstance(thought, str):
        raise FormatError("'thought' must be a string.")
    has_action, has_final = "action" in data, "final" in data
    if has_action == has_final:
        which = "both" if has_action else "neither"
        raise FormatError(f"the object had {which} of 'action' and 'final'; give exactly one.")
    if has_final:
        return _final(thought, data["final"])
    return _action(thought, data["action"], registry, denied)


def _final(thought: str, final: Any) -> Final:
    if isinstance(final, dict) and isinstance(final.get("message"), str):
        final = final["message"]
    elif not isinstance(final, str):  # a plain string is unambiguous, so accepted
        raise FormatError("'final' must be an object with a string 'message'.")
    if final.strip().strip(".").lower() in PLACEHOLDERS or not final.strip():
        raise FormatError(
            "the final message is the example's text (or empty), not your answer; say what you "
            "did or found in this task."
        )
    return Final(thought, final)


def _action(thought: str, action: Any, registry: Registry, denied: Collection[str]) -> Action:
    if not isinstance(action, dict):
        raise FormatError("'action' must be an object with 'tool' and 'args'.")
    offered = ", ".join(name for name in registry.names if name not in denied)
    name = action.get("tool")
    if not isinstance(name, str) or not name:
        raise FormatError("'action' needs a 'tool' naming one of: " + offered)
    tool = registry.get(name)
    if tool is None:
        raise FormatError(f"unknown tool '{name}'. Available tools: {offered}.")
    args = action.get("args")
    if args is None:  # arguments written beside "tool" instead of inside "args"
        args = {k: v for k, v in action.items() if k not in ("tool", "reason")}
    if name in denied:
        return Action(thought, name, args if isinstance(args, dict) else {}, "")
    problems = tool.problems(args)
    if problems:
        raise FormatError(
            f"bad arguments for {name}: {'; '.join(problems)}. {name} takes: {tool.signature()}."
        )
    copied_thought = (
        thought.strip() == EXAMPLE_THOUGHT or thought.strip(" .").lower() in PLACEHOLDERS
    )
    if copied_thought and (name, args) in EXAMPLE_CALLS:
        raise FormatError("the reply is the example, copied; decide your own next step.")
    reason = action.get("reason", "")
    return Action(thought, name, dict(args), reason if isinstance(reason, str) else "")
