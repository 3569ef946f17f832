"""What an editor sees of a turn: heph's events as `session/update` notifications (the thought,
each tool call and its result with the diff of a write, the answer), and the permission asked
with `session/request_permission` wherever the mode says "ask"."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from hephaistus.acp.wire import Cancelled, Channel
from hephaistus.runtime.policy import Answer
from hephaistus.textfile import MAX_WHOLE_FILE_BYTES, read_real
from hephaistus.values import Action, FileChange, Proposal, ToolResult, Usage

if TYPE_CHECKING:
    from hephaistus.mcp.elicit import Question, Reply

KINDS = {
    "read_file": "read",
    "list_files": "read",
    "git_status": "read",
    "git_diff": "read",
    "git_log": "read",
    "search": "search",
    "write_file": "edit",
    "append_file": "edit",
    "edit_file": "edit",
    "patch_file": "edit",
    "delete_file": "delete",
    "move_file": "move",
    "run_command": "execute",
    "shell": "execute",
}
OPTIONS = [
    {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Allow for this session", "kind": "allow_always"},
    {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
    {"optionId": "reject_always", "name": "Reject for this session", "kind": "reject_always"},
]
ELICIT_OPTIONS = [  # a server's question: its answers (the defaults, shown) sent, or not
    {"optionId": "accept", "name": "Send these answers", "kind": "allow_once"},
    {"optionId": "decline", "name": "Decline", "kind": "reject_once"},
]
SHOWN_OUTPUT = 4000  # characters of a tool's output shown in the editor


VERBS = {
    "read_file": "Read",
    "list_files": "List",
    "write_file": "Write",
    "append_file": "Edit",
    "edit_file": "Edit",
    "patch_file": "Edit",
    "delete_file": "Delete",
    "move_file": "Move",
}
NAMED = {"todo_write": "Update the todo list", "skill": "Load skill {name} {file}"}
TITLE_CHARS = 120  # a title is one line of an editor's list


def title_of(action: Action, commands: dict[str, str]) -> str:
    """What a call does, as the editor lists it from its first update: `Read README.md`,
    `Edit src/app.py`, `Run pytest -q` (a project command by its command line), `Search
    for "TODO"`, `git status`."""
    args, tool = action.args, action.tool

    def text(name: str) -> str:
        value = args.get(name)
        return value if isinstance(value, str) else ""

    if tool == "shell":
        title = f"Run {text('command')}".rstrip()
    elif tool == "run_command":
        line = commands.get(text("name"), text("name"))
        extra = args.get("args")
        more = " ".join(str(a) for a in extra) if isinstance(extra, list) else text("args")
        title = f"Run {line} {more}".rstrip()
    elif tool == "move_file":
        title = f"Move {text('path')} to {text('to')}"
    elif tool == "search":
        where = f" in {text('path')}" if text("path") else ""
        title = f"Search for {text('pattern')!r}{where}"
    elif tool in VERBS:
        title = f"{VERBS[tool]} {text('path') or '.'}"
    elif tool.startswith("git_"):
        title = "git " + tool[len("git_") :]
    elif tool.startswith("mcp__"):
        server, _, name = tool[len("mcp__") :].partition("__")
        title = f"Call {name} of {server}"
    elif tool in NAMED:
        title = NAMED[tool].format(name=text("name"), file=text("file")).strip()
    else:
        title = tool
    title = " ".join(title.split())  # one line, whatever the model sent
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"


def kind_of(tool: str) -> str:
    """The ACP kind of a heph tool."""
    if tool.startswith("mcp__"):
        return "fetch"
    return KINDS.get(tool, "other")


def text_content(text: str) -> dict[str, Any]:
    """Text as a tool call's content block."""
    return {"type": "content", "content": {"type": "text", "text": text}}


def diff_content(change: FileChange, root: Any) -> dict[str, Any]:
    """A write as ACP's diff content (the whole texts, the absolute path), or its unified
    diff as text."""
    if change.new_text is None:
        return text_content(change.diff)
    return {
        "type": "diff",
        "path": str(root / change.path),
        "oldText": None if change.created else change.old_text,
        "newText": change.new_text,
    }


class AcpSink:
    """An EventSink that tells the editor, as `session/update` notifications."""

    def __init__(self, channel: Channel, session_id: str, root: Any) -> None:
        self.channel = channel
        self.session_id = session_id
        self.root = root
        self.calls = 0
        self.current: str | None = None  # the tool call in progress
        self.open = False  # it has not finished (a cancel may end the turn inside it)
        self.rejected_always: set[str] = set()  # tool names rejected for the session
        self.commands: dict[str, str] = {}  # the project's commands, by name: for titles
        self.writes_through = False  # the editor takes writes (fs/write_text_file)
        self.title = ""  # the title of the call in progress
        self.terminal: str | None = None  # the editor's terminal the call runs in

    def update(self, update: dict[str, Any]) -> None:
        """Send one `session/update` of this session."""
        self.channel.notify("session/update", {"sessionId": self.session_id, "update": update})

    def text(self, kind: str, text: str) -> None:
        """Send text as an update of `kind` (a thought, the answer)."""
        self.update({"sessionUpdate": kind, "content": {"type": "text", "text": text}})

    # -- EventSink ---------------------------------------------------------------------------
    def step_started(self, step: int) -> None:
        """Nothing: the editor sees steps as tool calls."""
        return None

    def reply_progress(self, text_so_far: str) -> None:
        """Nothing: the thought and the answer are sent whole."""
        return None

    def model_replied(self, usage: Usage) -> None:
        """Nothing: usage is in heph's session file."""
        return None

    def thought(self, text: str) -> None:
        """The model's thought, as a thought chunk."""
        self.text("agent_thought_chunk", text)

    def tool_called(self, action: Action) -> None:
        """A tool call begins: its title, kind, arguments and the file it is about."""
        self.calls += 1
        self.current = f"call_{self.calls}"
        self.open = True
        self.terminal = None
        path = action.args.get("path")
        self.title = title_of(action, self.commands)
        update: dict[str, Any] = {
            "sessionUpdate": "tool_call",
            "toolCallId": self.current,
            "title": self.title,
            "kind": kind_of(action.tool),
            "status": "pending",
            "rawInput": action.args,
        }
        if isinstance(path, str):
            update["locations"] = [{"path": str(self.root / path)}]
        self.update(update)

    def tool_finished(self, action: Action, result: ToolResult) -> None:
        """The call ended: the diff of each write and the output's start. An editor that
        takes writes is given each file heph wrote, so its buffer is what the disk holds."""
        self.open = False
        if self.writes_through:
            for change in result.changed:
                if change.new_text is not None and not change.deleted:
                    self.write_through(self.root / change.path)
        content = [diff_content(change, self.root) for change in result.changed]
        if self.terminal:  # still shown where it ran; the output also for those that drop it
            content.append({"type": "terminal", "terminalId": self.terminal})
        output = result.output[:SHOWN_OUTPUT]
        content.append(text_content(output))
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": self.current,
                "status": "completed" if result.ok else "failed",
                "content": content,  # the output once: no rawOutput (clients print both)
            }
        )

    def todos_changed(self, todos: list[Any]) -> None:
        """The model's todo list, as the editor's plan (the whole list each time)."""
        self.update({"sessionUpdate": "plan", "entries": [todo.entry() for todo in todos]})

    def write_through(self, path: Any) -> None:
        """Hand the editor the file as heph wrote it (its own line endings)."""
        try:
            content = read_real(path, MAX_WHOLE_FILE_BYTES + 1).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return
        if len(content) > MAX_WHOLE_FILE_BYTES:
            return
        params = {"sessionId": self.session_id, "path": str(path), "content": content}
        try:
            self.channel.request("fs/write_text_file", params)
        except Cancelled:
            return  # the editor did not take it: the disk has it, as it would without one

    def show_terminal(self, terminal: str) -> None:
        """The call's command runs in the editor's terminal `terminal`: shown in the call."""
        self.terminal = terminal
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": self.current,
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": terminal}],
            }
        )

    def read_buffer(self, real: Any) -> str | None:
        """The editor's text of the file at `real` (fs/read_text_file), unsaved changes
        and all; None where it gives none."""
        params = {"sessionId": self.session_id, "path": str(real)}
        try:
            answer = self.channel.request("fs/read_text_file", params)
        except Cancelled:
            return None  # it has none, or failed: the disk's
        content = answer.get("content") if isinstance(answer, dict) else None
        fits = isinstance(content, str) and len(content) <= MAX_WHOLE_FILE_BYTES
        return content if fits else None

    def end_open_call(self) -> None:
        """A turn that ended inside a tool call (cancelled): the call is marked failed, never
        left pending in the editor."""
        if self.open and self.current:
            self.open = False
            self.update(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": self.current,
                    "status": "failed",
                }
            )

    def show_diff(self, diff: str) -> None:
        """Nothing: the diff travels in the tool call."""
        return None  # the diff travels in the tool call

    def format_error(self, problem: str) -> None:
        """A malformed reply, as a thought (the model is told to correct it)."""
        self.text("agent_thought_chunk", f"(malformed reply: {problem})")

    def notice(self, text: str) -> None:
        """heph's aside, as a thought."""
        self.text("agent_thought_chunk", f"(heph: {text})")

    def final(self, message: str) -> None:
        """The answer, as the agent's message."""
        self.text("agent_message_chunk", message)

    def failure(self, message: str) -> None:
        """How the task failed, as the agent's message."""
        self.text("agent_message_chunk", message)


class AcpAsker:
    """The Asker of a session: each question goes to the editor as a permission request for
    the tool call in progress, with the diff of a write; its answer is the person's."""

    def __init__(self, channel: Channel, sink: AcpSink) -> None:
        self.channel = channel
        self.sink = sink

    def __call__(self, proposal: Proposal) -> Answer:
        name = proposal.name or proposal.effect
        if name in self.sink.rejected_always:
            return "no"
        request = proposal.request
        content = [diff_content(request, self.sink.root)] if isinstance(request, FileChange) else []
        tool_call = {
            "toolCallId": self.sink.current or "call_0",
            "title": self.sink.title or _title(proposal),  # the call's own, unchanged
            "status": "pending",
            "content": content,
        }
        chosen = self._permission(tool_call, OPTIONS)
        if chosen == "allow_once":
            return "yes"
        if chosen == "allow_always":
            return "session"  # as the chat's [a]: for the rest of this session
        if chosen == "reject_always":
            self.sink.rejected_always.add(name)
        return "no"

    def elicit(self, question: Question) -> Reply:
        """A server's question (mcp.elicit), shown in the editor's permission request with the
        answers heph would send: each field's default. A form with a required field that has
        none cannot be answered there: declined, and said."""
        from hephaistus.mcp.elicit import DECLINED, Reply

        values = question.defaults()
        if values is None:
            self.sink.notice(f"{question.heading()} (declined: it needs answers typed in)")
            return DECLINED
        shown = "".join(f"\n{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in values.items())
        tool_call = {
            "toolCallId": self.sink.current or "call_0",
            "title": self.sink.title or question.heading()[:200],
            "status": "pending",
            "content": [text_content(question.heading() + shown)],
        }
        chosen = self._permission(tool_call, ELICIT_OPTIONS)
        return Reply("accept", values) if chosen == "accept" else DECLINED

    def _permission(self, tool_call: dict[str, Any], options: list[dict[str, str]]) -> Any:
        """The option the editor chose for `tool_call` (None: no answer); KeyboardInterrupt
        when it cancelled."""
        self.sink.update({"sessionUpdate": "tool_call_update", **tool_call})
        try:
            answer = self.channel.request(
                "session/request_permission",
                {"sessionId": self.sink.session_id, "toolCall": tool_call, "options": options},
            )
        except Cancelled:
            raise KeyboardInterrupt("the editor cancelled") from None
        outcome = answer.get("outcome") if isinstance(answer, dict) else None
        if not isinstance(outcome, dict):
            return None  # an answer that is none: declined, never carried out
        if outcome.get("outcome") == "cancelled":
            raise KeyboardInterrupt("the editor cancelled")
        return outcome.get("optionId")


def _title(proposal: Proposal) -> str:
    from hephaistus.engine.runner import describe

    what = describe(proposal.request)
    return what if len(what) < 200 else what[:199] + "…"


def text_of(prompt: Any) -> str:
    """A prompt's content blocks as the task's text: text blocks, and resource links named."""
    parts = []
    for block in prompt if isinstance(prompt, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "resource_link":
            parts.append(str(block.get("uri") or block.get("name") or ""))
        elif block.get("type") == "resource":
            resource = block.get("resource") or {}
            parts.append(f"{resource.get('uri', '')}:\n{resource.get('text', '')}")
        else:
            parts.append(json.dumps(block)[:200])
    return "\n".join(p for p in parts if p)


def replayed(messages: list[dict[str, str]]) -> list[tuple[str, str]]:
    """A recorded conversation as the editor shows it: the person's words (without the
    workspace map and agent state heph added) and the model's answers (not its tool calls or
    heph's observations)."""
    shown = []
    for message in messages:
        text = message.get("content", "")
        if message.get("role") == "user" and not text.startswith("Observation"):
            shown.append(("user", re.split(r"\n\n<(?:workspace|agent_state)", text)[0]))
        elif message.get("role") == "assistant":
            try:
                reply = json.loads(text, strict=False)
            except ValueError:
                continue
            final = reply.get("final") if isinstance(reply, dict) else None
            if isinstance(final, dict) and isinstance(final.get("message"), str):
                shown.append(("assistant", final["message"]))
    return shown
