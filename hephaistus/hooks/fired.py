"""An event's hooks run and their answers put together (a Verdict): exit 2 blocks, with stderr
the reason the model gets; exit 0 may decide in JSON on stdout (Claude Code's fields); any
other exit, a missing script or a timeout is a hook error, said on one line, that blocks
nothing. Of the permission decisions, deny wins over ask over allow. Every run is a span of
the task's session."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hephaistus.hooks.definitions import Hook
from hephaistus.hooks.running import HookRun, Sandboxed, run_hook

CONTEXT_CHARS = 10_000  # of what the hooks of one event add for the model
REASON_CHARS = 2_000
SHOWN_CHARS = 300  # of a hook's words in a one-line notice
STRENGTH = {"allow": 1, "ask": 2, "deny": 3}
# heph's modes as Claude Code's `permission_mode` names them.
PERMISSION_MODES = {"ask": "default", "edits": "acceptEdits", "plan": "plan", "auto": "auto"}
SPAN_OUTPUT_CHARS = 2_000  # of a hook's stdout and stderr, kept in its span
Spans = Callable[[str, str, dict[str, Any]], AbstractContextManager[Any]]


@dataclass
class Verdict:
    """What the hooks of one event said."""

    blocked: str | None = None  # exit 2 or `decision: block`: the reason
    permission: str | None = None  # allow | ask | deny (PreToolUse)
    reason: str = ""  # of the permission decision
    updated_input: dict[str, Any] | None = None
    context: list[str] = field(default_factory=list)  # for the model
    stop: str | None = None  # `continue: false`: the run ends, this said
    allowed_by: str = ""  # the hook whose allow lets a call through unasked
    ran: int = 0

    def added_context(self) -> str:
        """What the hooks add for the model, marked as theirs ("" when nothing)."""
        text = "\n".join(c for c in self.context if c.strip())[:CONTEXT_CHARS]
        if not text:
            return ""
        text = text.replace("</hook_context", "<\\/hook_context")
        return f"<hook_context>\n{text}\n</hook_context>"


class Hooks:
    """The hooks in force for a run, fired by event."""

    def __init__(
        self,
        hooks: list[Hook],
        root: Path,
        box: Sandboxed,
        env: Callable[[], dict[str, str]],
        say: Callable[[str], None],
        *,
        vouched: bool = False,
    ) -> None:
        self.hooks = hooks
        # The person's run as them only in a workspace they trusted, and only where they name
        # none of its files: elsewhere a clone's `node_modules/.bin` or module would run.
        self.vouched = vouched
        self.root = root
        self.box = box
        self.env = env
        self.say = say
        self.span: Spans | None = None  # the task's session: a span for each run
        self.common: Callable[[], dict[str, Any]] = dict  # session_id, transcript, mode
        self.started = False  # SessionStart ran

    def any_for(self, event: str, tool: str = "") -> bool:
        """Whether a hook runs at `event` (for `tool`)."""
        return any(h.event == event and h.matches(tool) for h in self.hooks)

    def fire(self, event: str, fields: dict[str, Any], tool: str = "") -> Verdict:
        """Run the hooks of `event` (for `tool`) one after the other, with Claude Code's input;
        what they said, together."""
        verdict = Verdict()
        chosen = [h for h in self.hooks if h.event == event and h.matches(tool)]
        if not chosen:
            return verdict
        payload = {
            **self.common(),
            "cwd": str(self.root),
            "hook_event_name": event,
            **fields,
        }
        for hook in chosen:
            about = {"command": hook.command, "matcher": hook.matcher, "source": hook.source}
            with self.span("HOOK", event, about) if self.span else nullcontext() as span:
                contained = self.contained(hook)
                run = run_hook(
                    hook, payload, root=self.root, box=self.box, env=self.env(), contained=contained
                )
                verdict.ran += 1
                decided = self._take(hook, run, verdict)
                if span is not None:
                    span.ok = run.exit_code in (0, 2)
                    span.error = None if span.ok else run.problem or f"exit {run.exit_code}"
                    span.output = {
                        "exit": run.exit_code,
                        "decision": decided,
                        "stdout": run.stdout[:SPAN_OUTPUT_CHARS],
                        "stderr": run.stderr[:SPAN_OUTPUT_CHARS],
                    }
        return verdict

    def contained(self, hook: Hook) -> bool:
        """Whether `hook` runs in the sandbox: a workspace's always; the person's where they
        have not trusted the workspace, or where its command works on the workspace's files
        (names them, or the project variable: `cd "$CLAUDE_PROJECT_DIR" && make lint`)."""
        return hook.workspace or not self.vouched or works_on_workspace(hook, self.root)

    def before_task(self, asked: str, typed: str, *, resumed: bool) -> tuple[str, str | None]:
        """SessionStart (at the first task) and UserPromptSubmit: (the task with what they
        added for the model, why the task is not to run, or None)."""
        added = []
        if not self.started:
            self.started = True
            start = self.fire("SessionStart", {"source": "resume" if resumed else "startup"})
            added.append(start.added_context())
        submitted = self.fire("UserPromptSubmit", {"prompt": typed})
        if submitted.blocked is not None:
            return asked, f"a UserPromptSubmit hook blocked the task: {submitted.blocked}"
        if submitted.stop is not None:
            return asked, f"a hook stopped the run: {submitted.stop}"
        added.append(submitted.added_context())
        text = "\n\n".join(a for a in added if a)
        return (f"{asked}\n\n{text}" if text else asked), None

    def ended(self) -> None:
        """SessionEnd, once SessionStart ran."""
        if self.started:
            self.started = False
            self.span = None  # the last task's session is closed
            self.fire("SessionEnd", {"reason": "other"})

    def _take(self, hook: Hook, run: HookRun, verdict: Verdict) -> str:
        """Put one run's answer into `verdict`; what it decided, in a word (for its span)."""
        if run.exit_code == 2:
            verdict.blocked = _clipped(run.stderr.strip() or "blocked by a hook", REASON_CHARS)
            return "block"
        if run.exit_code != 0:
            why = run.problem or _last_line(run.stderr) or f"exit code {run.exit_code}"
            if run.exit_code == 127 and not run.problem:
                why = f"its command was not found ({_last_line(run.stderr) or 'exit 127'})"
            self.say(f"hook error ({hook.describe()[:SHOWN_CHARS]}): {why[:SHOWN_CHARS]}")
            return "error"
        answer = _json_object(run.stdout)
        if answer is None:
            if hook.event in ("UserPromptSubmit", "SessionStart") and run.stdout.strip():
                verdict.context.append(run.stdout.strip())
            return "none"
        return _decided(hook, answer, verdict, self.say)


def hook_fields(agent: Any) -> dict[str, str]:
    """What every hook is told of the run (Claude Code's common input)."""
    session = agent.session
    return {
        "session_id": session.id if session else "",
        "transcript_path": str(session.path) if session else "",
        "permission_mode": PERMISSION_MODES.get(agent.policy.mode, agent.policy.mode),
    }


def works_on_workspace(hook: Hook, root: Path) -> bool:
    """Whether the person's `hook` runs or names the workspace's own files."""
    from hephaistus.hooks.approvals import scripts
    from hephaistus.hooks.definitions import names_project

    return names_project(hook.command) or bool(scripts(root, hook))


def for_run(hooks: list[Hook], root: Path, box: Sandboxed, say: Callable[[str], None]) -> Hooks:
    """The hooks of a run in the workspace at `root`: the person's given the environment
    commands get (no credentials), and run as them only where they trusted it."""
    from hephaistus.tools.run_command import child_environment
    from hephaistus.workspace.trust import vouched

    return Hooks(hooks, root, box, child_environment, say, vouched=vouched(root))


def _decided(hook: Hook, answer: dict[str, Any], verdict: Verdict, say: Any) -> str:
    specific = answer.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    said = "none"
    if isinstance(answer.get("systemMessage"), str):
        say(f"hook ({hook.event}): {answer['systemMessage'][:SHOWN_CHARS]}")
    if answer.get("continue") is False:
        verdict.stop = _clipped(str(answer.get("stopReason") or "a hook stopped the run"), 500)
        said = "stop"
    if answer.get("decision") == "block":
        verdict.blocked = _clipped(str(answer.get("reason") or "blocked by a hook"), REASON_CHARS)
        said = "block"
    permission = specific.get("permissionDecision")
    if answer.get("decision") == "approve":  # the older spelling of allow
        permission = permission or "allow"
    if permission == "allow" and hook.workspace:
        permission = None  # a workspace's hook approves nothing (it may still deny or ask)
    if permission in STRENGTH:
        if permission == "allow":
            verdict.allowed_by = hook.describe()
        if STRENGTH[permission] > STRENGTH.get(verdict.permission or "", 0):
            verdict.permission = permission
            verdict.reason = _clipped(str(specific.get("permissionDecisionReason") or ""), 500)
        said = permission
    updated = specific.get("updatedInput")
    if isinstance(updated, dict):
        verdict.updated_input = updated
        said = "updated input" if said == "none" else said
    context = specific.get("additionalContext")
    if isinstance(context, str) and context.strip():
        verdict.context.append(context.strip())
    return said


def _json_object(text: str) -> dict[str, Any] | None:
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " …"
