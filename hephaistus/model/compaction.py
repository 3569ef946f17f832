"""The context window and the compaction that keeps a conversation inside it.

The budget is the model's context window (configured, or from a table of known models) minus
room for the reply. Token counts are estimated locally and scaled by what the server reports as
the run goes; after an overflow, by the server's own count of the request it refused, with a
margin. The workspace map takes at most an eighth of the window (aider's share): a map sent before
the window was learned is cut to that. When a request would pass the budget, old steps are
compacted first: observations become one-line records of what the tool did and whether it worked,
bulky arguments in old replies are elided, old copies of the agent state dropped. Only if that is
not enough are the oldest steps dropped. The system prompt, the current task (but for its map),
the newest steps and the state are never touched. Compaction goes down to a low-water mark, so it
happens rarely and prompt caches keep hitting.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field

from hephaistus import tokens
from hephaistus.values import Message

LEARNED_FROM_ERROR = "the server's overflow error"
LEARNED_FROM_A_CUT = "where the server cut a reply short"
LEARNED = (LEARNED_FROM_ERROR, LEARNED_FROM_A_CUT)  # kept for the next runs
# Servers that cut a reply where the window ends (below the cap asked for) rather than refuse it.
CUTTING_KINDS = ("llama.cpp", "llama-cpp-python")
DEFAULT_WINDOW = 8192  # conservative: small local servers often run with less than 32k
# Context windows of common models, matched by the longest prefix of the model name.
KNOWN_WINDOWS = {
    "gpt-4o": 128_000,
    "gpt-4.1": 1_000_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude": 200_000,
    "gemini": 1_000_000,
    "deepseek": 64_000,
    "qwen2.5-coder": 32_768,
    "qwen3": 40_960,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3": 8_192,
    "codestral": 32_000,
    "mistral": 32_000,
    "devstral": 128_000,
    "gemma3": 128_000,
    "phi4": 16_384,
}
KEEP_RECENT_MESSAGES = 6  # the last three steps (reply and observation) stay whole
LOW_WATER = 0.6  # compact down to this share of the budget
MESSAGE_OVERHEAD = 4  # tokens the chat format adds per message
STATE_BLOCK = re.compile(r"\n*<agent_state( update)?>\n.*?\n</agent_state>\s*$", re.S)
WORKSPACE_BLOCK = re.compile(r"\n*<workspace>\n.*?\n</workspace>", re.S)
MAP_BODY = re.compile(r"<workspace>\n(.*?)\n</workspace>", re.S)
COMPACTED = "Observation (compacted): "
DROPPED_NOTE = re.compile(r"\n\n\[\d+ earlier steps were dropped to fit the context window\]")
ELIDE_CHARS = 200
MAP_SHARE = 8  # the workspace map takes at most 1/MAP_SHARE of the window
MAP_CUT = "[… the rest of the map left out to fit the context window]"
# After an overflow, estimates are scaled up this much more: the server's count of the next
# request differs from the one it refused (a margin), or was not given (the estimate has been
# measured a quarter under a server's count).
OVERFLOW_MARGIN, UNCOUNTED_MARGIN = 1.1, 1.25


def context_window(
    model: str, configured: int | None, served: tuple[int, str] | None = None
) -> tuple[int, str]:
    """(window in tokens, where it comes from): the configuration, else what the server says,
    else the table of known models, else a conservative default."""
    if configured:
        return configured, "context_window in the configuration"
    if served:
        return served
    name = model.lower().rsplit("/", 1)[-1]
    matches = [prefix for prefix in KNOWN_WINDOWS if name.startswith(prefix)]
    if matches:
        return KNOWN_WINDOWS[max(matches, key=len)], "the table of known models"
    return DEFAULT_WINDOW, "the default for unknown models (set context_window)"


def count(messages: list[Message]) -> int:
    """Estimated tokens of `messages`, the chat format's overhead included."""
    return sum(_tokens_of(m["content"]) + MESSAGE_OVERHEAD for m in messages)


@functools.lru_cache(maxsize=2048)
def _tokens_of(content: str) -> int:
    """tokens.estimate, remembered: every step counts the whole conversation again."""
    return tokens.estimate(content)


@dataclass
class Compactor:
    """The budget of one conversation and what it learned on the way: the server's token ratio, the
    steps dropped, the one-line records of old observations."""

    window: int
    source: str = "default"  # where the window's size came from, to say so
    reply_limit: int | None = None  # configured max_reply_tokens
    ratio: float = 1.0  # server's count / our estimate, learned from usage reports
    margin: float = 1.0  # more, after an overflow showed the estimate cannot be trusted
    dropped_steps: int = 0
    warned_truncation: bool = False
    records: dict[str, str] = field(default_factory=dict)  # observation → its one-line record

    @property
    def reply_tokens(self) -> int:
        """The room kept for the reply, sent as max_tokens with every request: a quarter of
        the window (at most 4096), or the configured limit, never over half the window."""
        return min(self.reply_limit or min(4096, max(256, self.window // 4)), self.window // 2)

    def map_tokens(self, configured: int) -> int:
        """The workspace map's budget: the configured one, within its share of the window."""
        return min(configured, self.window // MAP_SHARE)

    @property
    def budget(self) -> int:
        """Tokens the prompt may use: the window less room for the reply."""
        return max(0, self.window - self.reply_tokens)

    def fits(self, messages: list[Message]) -> bool:
        """Whether `messages` fit the budget, by the scaled estimate."""
        return self.size(messages) <= self.budget

    def describe(self) -> str:
        """The window and the room kept for the reply, as `-v` says them."""
        return (
            f"context window {self.window:,} tokens (from {self.source}), of which "
            f"{self.reply_tokens:,} are kept for the reply"
        )

    def size(self, messages: list[Message]) -> int:
        """Estimated tokens of `messages`, scaled by what the server has counted so far."""
        return int(count(messages) * self.ratio * self.margin)

    def observe_usage(self, sent: int, prompt_tokens: int) -> str | None:
        """Learn from the server's count; a warning when it clearly cut the prompt short."""
        if not prompt_tokens or not sent:
            return None
        if prompt_tokens > sent:
            self.ratio = min(prompt_tokens / sent, 3.0)
        elif prompt_tokens < sent * 0.5 and sent > 1500 and not self.warned_truncation:
            self.warned_truncation = True
            return (
                f"the server counted {prompt_tokens} prompt tokens but heph sent about {sent}:"
                " it is probably cutting the conversation short. For Ollama raise num_ctx "
                "(OLLAMA_CONTEXT_LENGTH, or PARAMETER num_ctx in a Modelfile); for llama.cpp "
                "raise --ctx-size; then set context_window in .heph.toml to match"
            )
        return None

    def fit(self, messages: list[Message], protected_from: int, task_index: int) -> bool:
        """Compact `messages` in place if they pass the budget; True when anything changed.

        `task_index` is the current task's message, kept whole with the system prompt but for
        its workspace map, cut to its share of the window, and further when nothing else is
        left. Messages from `protected_from` on are the newest steps; they are compacted too
        only if everything older was not enough. The very last message is only ever shortened,
        and only when it is an observation too large for the window.
        """
        if self.size(messages) <= self.budget:
            return False
        share = self.window // MAP_SHARE
        self._cut_the_map(messages, task_index, share)
        target = int(self.budget * LOW_WATER)
        for keep in (len(messages) - protected_from, 2, 1):  # newest messages left whole
            keep_from = max(len(messages) - keep, task_index + 1)
            for index in range(1, keep_from):
                if index != task_index:
                    self._compact(messages, index)
            if self.size(messages) > target:
                self._drop_oldest(messages, task_index, keep_from, target)
            if self.size(messages) <= self.budget:
                break
        if self.size(messages) > self.budget and len(messages) - 1 != task_index:
            self._shorten_last_observation(messages)
        over = self.size(messages) - self.budget
        if over > 0:  # the map gives way last (measured in estimated tokens)
            self._cut_the_map(
                messages, task_index, share, less=int(over / self.ratio / self.margin) + 1
            )
        return True

    def observation_chars(self) -> int:
        """The most characters of a tool's output worth sending: a third of the prompt budget
        (a small window cannot take the usual 16 KB)."""
        return max(500, int(self.budget / 3 * tokens.MOST_CHARS_PER_TOKEN / 1.5))

    def learn_window(
        self, window: int | None, request_tokens: int, counted: int | None, estimated: int
    ) -> None:
        """The server said the request was too large: take the window it names, else assume
        at most half the request that failed (prompt and reply limit). The server's count of
        the prompt (`counted`, when it gave one) against our `estimated` one corrects the
        estimates from now on, with a margin."""
        self._correct_estimates(counted, estimated)
        if window:
            self.window, self.source = min(window, self.window), LEARNED_FROM_ERROR
        else:
            # The estimate leans high, so the real window may be well under the request: half
            # of it leaves room to compact into and still fit.
            self.window = max(1024, min(self.window * 3 // 4, request_tokens // 2))
            self.source = "half the size of a request the server could not take"

    def learn_from_a_cut(self, counted: int, replied: int, cap: int, estimated: int) -> bool:
        """A reply cut short below the `cap` asked for, by a server of CUTTING_KINDS: the
        window is the prompt (`counted` by the server, `estimated` by us) and the reply. Whether
        that is news (a smaller window than the one in use)."""
        window = counted + replied
        if not counted or replied >= cap or window >= self.window:
            return False
        self.window, self.source = window, LEARNED_FROM_A_CUT
        self._correct_estimates(counted, estimated)
        return True

    def _correct_estimates(self, counted: int | None, estimated: int) -> None:
        """The server's count of a prompt (`counted`) against our `estimated` one scales the
        estimates from now on, with a margin; without a count, a wider margin."""
        if counted and estimated:
            self.ratio = min(max(self.ratio, counted / estimated), 3.0)
            self.margin = OVERFLOW_MARGIN
        else:
            self.margin = UNCOUNTED_MARGIN

    def _cut_the_map(
        self, messages: list[Message], task_index: int, share: int, less: int = 0
    ) -> None:
        """The task's workspace map cut to `share` tokens, or `less` tokens shorter, whichever
        is shorter (whole lines: the map lists the files that matter most first)."""
        task = messages[task_index]["content"]
        maps = list(MAP_BODY.finditer(task))
        found = maps[-1] if maps else None  # the last: heph's, after the person's own text
        size = _tokens_of(found.group(1)) if found else 0
        share = min(share, size - less)
        if not found or size <= share:
            return
        kept: list[str] = []
        used = _tokens_of(MAP_CUT)
        for line in found.group(1).splitlines():
            used += _tokens_of(line) + 1
            if used > share:
                break
            kept.append(line)
        cut = task[: found.start(1)] + "\n".join([*kept, MAP_CUT]) + task[found.end(1) :]
        messages[task_index] = {**messages[task_index], "content": cut}

    def _shorten_last_observation(self, messages: list[Message]) -> None:
        last = messages[-1]
        if last["role"] != "user" or not last["content"].startswith("Observation: "):
            return
        state = STATE_BLOCK.search(last["content"])
        body = last["content"][: state.start()] if state else last["content"]
        tail = last["content"][state.start() :] if state else ""
        room = self.budget - self.size([*messages[:-1], {"role": "user", "content": tail}])
        keep = max(200, int(room * tokens.MOST_CHARS_PER_TOKEN / 1.5 / self.ratio / self.margin))
        while len(body) > keep:
            cut = f"\n[... {len(body) - keep} characters cut to fit the context window]"
            messages[-1] = {"role": "user", "content": body[:keep] + cut + tail}
            if keep == 200 or self.size(messages) <= self.budget:
                break
            keep = max(200, keep * 3 // 4)  # denser text than the estimate assumed

    def _compact(self, messages: list[Message], index: int) -> None:
        message = messages[index]
        content = message["content"]
        if message["role"] == "user":
            known = self.records.pop(content, None)
            content = STATE_BLOCK.sub("", content)
            if content.startswith("Observation: "):
                content = COMPACTED + (known or _first_line(content))
            else:
                content = WORKSPACE_BLOCK.sub("", content)  # an earlier task's workspace map
        elif message["role"] == "assistant":
            content = _elide_reply(content)
        messages[index] = {"role": message["role"], "content": content}

    def _drop_oldest(
        self, messages: list[Message], task_index: int, protected_from: int, target: int
    ) -> int:
        """Remove whole steps (reply + observation) after the task, oldest first; returns how
        many messages went."""
        dropped = 0
        start = task_index + 1
        while self.size(messages) > target and start + 1 < protected_from - 2 * dropped:
            if messages[start]["role"] != "assistant":
                break
            del messages[start : start + 2]
            dropped += 1
        if dropped:
            task = messages[task_index]
            content = DROPPED_NOTE.sub("", task["content"])
            total = dropped + self.dropped_steps
            self.dropped_steps = total
            note = f"\n\n[{total} earlier steps were dropped to fit the context window]"
            messages[task_index] = {"role": task["role"], "content": content + note}
        return 2 * dropped


def record(tool: str, args: dict, ok: bool, output: str) -> str:
    """The one line an observation is compacted to."""
    shown = ", ".join(
        f"{k}={_short(v)}" for k, v in args.items() if k not in ("content", "diff", "old", "new")
    )
    first = output.strip().splitlines()[0][:100] if output.strip() else ""
    lines = output.count("\n") + 1
    return f"{tool}({shown}) → {'ok' if ok else 'FAILED'}: {first} [{lines} lines]"


def _short(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _first_line(content: str) -> str:
    body = content.removeprefix("Observation: ").strip()
    first = body.splitlines()[0][:100] if body else ""
    return f"{first} [{body.count(chr(10)) + 1} lines]"


def _elide_reply(content: str) -> str:
    """An old reply with long argument values and thoughts shortened (the JSON stays valid)."""
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):  # not JSON, or hostile JSON (too deep, huge numbers)
        return content if len(content) <= ELIDE_CHARS else content[:ELIDE_CHARS] + " [...]"
    if not isinstance(data, dict):
        return content if len(content) <= ELIDE_CHARS else content[:ELIDE_CHARS] + " [...]"
    if isinstance(data.get("thought"), str) and len(data["thought"]) > ELIDE_CHARS:
        data["thought"] = data["thought"][:ELIDE_CHARS] + " [...]"
    action = data.get("action")
    if isinstance(action, dict) and isinstance(action.get("args"), dict):
        for key, value in action["args"].items():
            if isinstance(value, str) and len(value) > ELIDE_CHARS:
                action["args"][key] = f"[{len(value)} characters, elided]"
    return json.dumps(data, ensure_ascii=False)
