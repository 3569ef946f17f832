"""The JSON-mode ReAct loop: ask the model, run the one tool it picks, feed back, repeat.

It prints nothing: progress goes to the run's EventSink, the record to its Session. Messages once
sent are never rewritten, so servers' prompt caches keep hitting; the AgentState travels at the end
of each new user message.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hephaistus.engine.base import Run
from hephaistus.engine.hooked import stop_blocked
from hephaistus.errors import ContextOverflow
from hephaistus.model.compaction import (
    CUTTING_KINDS,
    KEEP_RECENT_MESSAGES,
    STATE_BLOCK,
    count,
    record,
)
from hephaistus.model.protocol import FormatError, parse_reply
from hephaistus.model.steps import TEXT_CHARS, cut_by_the_bound
from hephaistus.records.session import Memo
from hephaistus.values import Action, Final, Message, ModelReply, Outcome, ToolResult, clip

MALFORMED_LIMIT = 3
REPEAT_LIMIT = 3
SHOWN_REPLY_CHARS = 120  # of a malformed reply's first line, for the person


def _first_line(text: str) -> str:
    """A reply's first non-blank line, cut short, quoted: what a weak model actually said."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if not line:
        return "nothing"
    cut = line[:SHOWN_REPLY_CHARS] + (" ..." if len(line) > SHOWN_REPLY_CHARS else "")
    return repr(cut)


class _Stop(Exception):
    """Ends the run with its outcome, from wherever in a step that is decided."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.status)
        self.outcome = outcome


@dataclass
class _Progress:
    """What the loop keeps count of from step to step."""

    checks_left: int
    malformed: int = 0  # malformed replies in a row
    repeats: int = 0  # the same call in a row
    last_call: str = ""
    unchecked: bool = False  # files were written since the verify commands last ran
    stop_blocks: int = 0  # answers a Stop hook blocked


class ReactEngine:
    """The default engine: one tool call per step, in JSON, until a final answer."""

    def run(self, task: str, run: Run) -> Outcome:
        """Step until the model gives a final answer (checked first by the verify commands, when
        files were written), the step limit is reached, or the model keeps sending malformed replies
        or repeating one call."""
        task_index = self._start(task, run)
        progress = _Progress(checks_left=run.verify_retries)
        try:
            for step in range(1, run.max_steps + 1):
                run.sink.step_started(step)
                answer = self._ask_within_window(run, step, task_index)
                reply = self._parse(run, answer, progress)
                if reply is None:
                    continue  # malformed: the model was told what was wrong
                if isinstance(reply, Final):
                    self._finish(run, reply, progress)  # ends the run, unless a check failed
                    continue
                self._stop_a_loop(reply, progress)
                result = self._act(run, reply)
                self._observe(run, reply, result, progress)
                if run.runtime.stopped:  # a hook's `continue: false`
                    raise _Stop(Outcome("failed", f"a hook stopped the run: {run.runtime.stopped}"))
        except _Stop as stop:
            return stop.outcome
        return Outcome(
            "failed",
            f"reached the step limit ({run.max_steps}) without a final "
            "answer; raise it with --max-steps or HEPH_MAX_STEPS",
        )

    def _start(self, task: str, run: Run) -> int:
        """Send the task (with the workspace map, once); the index of its message."""
        summary = (
            f"\n\n<workspace>\n{run.workspace_summary}\n</workspace>"
            if run.workspace_summary
            else ""
        )
        self._say(run, task + summary)
        run.state.task_started(task)
        run.sent_state = run.state.rows()  # that the task is now the last task is not news
        return len(run.messages) - 1

    def _parse(self, run: Run, answer: ModelReply, progress: _Progress) -> Action | Final | None:
        """The reply as an action or an answer; None for a malformed one, which the model is
        told about (the run ends after MALFORMED_LIMIT in a row)."""
        text = answer.text
        try:
            if answer.cut_off:
                where = (
                    "where the model's context window ended"
                    if run.cut_by_the_window
                    else f"at the reply limit ({run.compactor.reply_tokens} tokens)"
                )
                raise FormatError(
                    f"the reply was cut off {where} before it was complete. Reply more briefly; "
                    "to write a large file, write_file a first part and append_file the rest."
                )
            reply = parse_reply(text, run.registry, run.runtime.denied())
            cut = cut_by_the_bound(reply.args) if isinstance(reply, Action) else None
            if answer.constrained and cut:
                raise FormatError(
                    f"'{cut}' reached the {TEXT_CHARS}-character bound the step's schema sets, "
                    "so it was most likely cut short; nothing was done. Send long text in "
                    "parts: write_file a first part and append_file the rest, or edit less "
                    "at a time."
                )
        except FormatError as error:
            progress.malformed += 1
            # The person sees what the model said, not only what was wrong with it.
            said = f"{error.problem} (the reply began: {_first_line(text)})"
            run.sink.format_error(said)
            run.session.record("MEMO", Memo.MALFORMED_REPLY, said)
            if progress.malformed >= MALFORMED_LIMIT:
                raise _Stop(
                    Outcome(
                        "failed",
                        f"the model sent {MALFORMED_LIMIT} malformed replies "
                        f"in a row (last: {error.problem})",
                    )
                ) from None
            self._say(run, error.observation)
            return None
        progress.malformed = 0
        if reply.thought:
            run.sink.thought(reply.thought)
        return reply

    def _finish(self, run: Run, final: Final, progress: _Progress) -> None:
        """Answer, once the verify commands pass (when files were written since they last
        ran); when one fails, its output goes back to the model and the run goes on."""
        failed = self._verify(run) if run.verify and progress.unchecked else None
        progress.unchecked = False
        if failed is None:
            again = stop_blocked(run, final.message, progress.stop_blocks)
            if again is None:
                raise _Stop(self._answer(run, final))
            progress.stop_blocks += 1  # the model goes on
            self._say(run, again)
            return
        name, result = failed
        if result.refused:
            raise _Stop(Outcome("refused", result.output))
        if progress.checks_left == 0:
            run.sink.notice(f"the checks still fail after {run.verify_retries} tries")
            raise _Stop(self._answer(run, final))
        progress.checks_left -= 1
        self._say(
            run,
            f"Observation: before finishing, heph ran the project's `{name}` "
            "command and it failed:\n"
            + clip(result.output, run.runtime.context.observation_limit, keep="tail")
            + "\nFix the problem, or explain in your final answer why it "
            "remains.",
        )

    def _stop_a_loop(self, action: Action, progress: _Progress) -> None:
        """End the run when the model asks for the same call REPEAT_LIMIT times in a row."""
        progress.repeats = progress.repeats + 1 if action.key == progress.last_call else 1
        progress.last_call = action.key
        if progress.repeats >= REPEAT_LIMIT:
            raise _Stop(
                Outcome(
                    "failed",
                    f"stopped a loop: the model asked for the same "
                    f"{action.tool} call {REPEAT_LIMIT} times in a row",
                )
            )

    def _observe(self, run: Run, action: Action, result: ToolResult, progress: _Progress) -> None:
        """Feed the tool's result back to the model (a refusal ends the run)."""
        progress.unchecked = progress.unchecked or bool(result.changed)
        run.save_state()
        if result.refused:
            raise _Stop(Outcome("refused", result.output))
        self._say(run, "Observation: " + result.output, shown=_named_files(action.args))
        run.compactor.records[run.messages[-1]["content"]] = record(
            action.tool, action.args, result.ok, result.output
        )

    def _ask_within_window(self, run: Run, step: int, task_index: int) -> ModelReply:
        """The model's reply, the conversation first compacted to fit the window; after an
        overflow the server reports, the window is learned and the request made once more."""
        overflowed = ""
        for attempt in (1, 2):
            self._fit(run, task_index)
            if not run.compactor.fits(run.messages):
                raise _Stop(Outcome("failed", overflowed + self._too_large(run, task_index)))
            try:
                return self._ask(run, step)
            except ContextOverflow as overflow:
                overflowed = f"{overflow.message.rstrip('. ')}. "
                if attempt == 2:
                    failed = Outcome("failed", overflowed + self._too_large(run, task_index))
                    raise _Stop(failed) from None
                asked = run.compactor.size(run.messages) + run.compactor.reply_tokens
                estimated = count(run.messages)  # what the server counted overflow.prompt_tokens of
                run.compactor.learn_window(
                    overflow.window, asked, overflow.prompt_tokens, estimated
                )
                run.sink.notice(
                    f"the request did not fit the model's context; now using "
                    f"{run.compactor.describe()}"
                )
        raise AssertionError("unreachable")

    def _too_large(self, run: Run, task_index: int) -> str:
        size = run.compactor.size(run.messages)
        system = run.compactor.size(run.messages[:1])
        task = run.compactor.size(run.messages[task_index : task_index + 1])
        steps = max(0, size - system - task)
        return (
            f"the conversation does not fit the model's {run.compactor.describe()}: what must "
            f"stay is about {size:,} tokens (the system prompt with the project's instructions "
            f"{system:,}, the task with the workspace map and state {task:,}, the newest steps "
            f"{steps:,}), and nothing is left to compact. Give the model more context "
            "(llama.cpp: --ctx-size; Ollama: num_ctx) and set context_window, lower map_tokens "
            "or max_reply_tokens, or shorten the task"
        )

    def _fit(self, run: Run, task_index: int) -> None:
        before = run.compactor.size(run.messages)
        hooks = run.runtime.hooks
        if hooks is not None and not run.compactor.fits(run.messages):
            hooks.fire("PreCompact", {"trigger": "auto", "custom_instructions": ""})
        protected = max(task_index + 1, len(run.messages) - KEEP_RECENT_MESSAGES)
        if not run.compactor.fit(run.messages, protected, task_index):
            return
        after = run.compactor.size(run.messages)
        if after >= before:
            return  # nothing could be compacted: say nothing about it
        # Old state blocks went with the compaction: the last message (not sent yet) takes the
        # whole current state, so the newest state the model sees is still the current one.
        last = run.messages[-1]
        if last["role"] == "user":
            text = STATE_BLOCK.sub("", last["content"])  # a block of changes becomes the whole
            run.messages[-1] = {**last, "content": f"{text}\n\n{run.state.render()}"}
            run.compactor.fit(run.messages, protected, task_index)  # room for the whole state
        run.session.record(
            "MEMO", Memo.COMPACTION, f"{before} -> {after} tokens", budget=run.compactor.budget
        )
        run.sink.notice(
            f"compacted the conversation from about {before} to {after} tokens "
            f"to fit the context window ({run.compactor.window})"
        )

    def _ask(self, run: Run, step: int) -> ModelReply:
        sent, cap = count(run.messages), run.compactor.reply_tokens
        with run.session.span("LLM", run.model.name, {"step": step}) as span:
            reply = run.model.complete(
                run.messages,
                max_tokens=cap,
                on_retry=lambda why, delay: run.sink.notice(f"{why}; retrying in {delay:.1f} s"),
                on_text=run.sink.reply_progress,
                schema=run.schema,
            )
            span.output = reply.text
            span.usage = reply.usage.to_dict()
            span.args.update(
                attempts=reply.attempts,
                estimated_prompt_tokens=sent,
                reply_cap=cap,
                cut_off=reply.cut_off,
            )
        run.sink.model_replied(reply.usage)
        run.cut_by_the_window = False
        if not reply.usage.estimated:  # only the server's own counts teach anything
            warning = run.compactor.observe_usage(sent, reply.usage.prompt_tokens)
            if warning:
                run.sink.notice(warning)
            if reply.cut_off:
                self._learn_from_a_cut(run, reply, cap, sent)
        self._append(run, {"role": "assistant", "content": reply.text})
        return reply

    def _learn_from_a_cut(self, run: Run, reply: ModelReply, cap: int, sent: int) -> None:
        """llama.cpp's servers cut a reply where the window ends, short of the cap asked for:
        the window is then known (llama-cpp-python tells it no other way)."""
        if getattr(run.model, "server_kind", "") not in CUTTING_KINDS:
            return
        usage = reply.usage
        if run.compactor.learn_from_a_cut(usage.prompt_tokens, usage.completion_tokens, cap, sent):
            run.cut_by_the_window = True
            run.sink.notice(f"the window ended the reply; now using {run.compactor.describe()}")

    def _act(self, run: Run, action: Action) -> ToolResult:
        run.sink.tool_called(action)
        tool = run.registry.get(action.tool)
        assert tool is not None  # parse_reply checked it
        with run.session.span("TOOL", action.tool, action.args) as span:
            # What the model sees, the session records and the person is shown: never more.
            limit = min(run.runtime.context.observation_limit, run.compactor.observation_chars())
            result = run.runtime.call(action.tool, action.args, limit)
            span.ok = result.ok
            span.output = {
                "output": result.output,
                "diff": result.diff,
                "decision": result.decision,
                "target": result.target,
                "changed": [c.path for c in result.changed],
            }
            if result.commit:
                span.output["commit"] = {"sha": result.commit.sha, "paths": result.commit.paths}
            span.error = None if result.ok else result.output
        for path in result.read:
            run.state.file_read(path)
        for change in result.changed:
            if change.deleted:
                run.state.file_deleted(change.path)
            else:
                run.state.file_written(change.path, created=change.created)
        if result.command:
            run.state.command_ran(result.command.name, result.command.summary)
        tried = result.decision in (None, "allow")  # a failed write, not the person's "no"
        if tool.effect == "write" and result.target and not result.ok and tried:
            run.state.problem(
                result.target, f"{action.tool} failed: {result.output.splitlines()[0]}"
            )
        run.sink.tool_finished(action, result)
        return result

    def _verify(self, run: Run) -> tuple[str, ToolResult] | None:
        """Run the verify commands; the first that fails, with its result, else None."""
        for name in run.verify:
            action = Action(
                "checking the changes before the final answer", "run_command", {"name": name}
            )
            result = self._act(run, action)
            if result.decision in ("decline", "skip", "deny"):
                # The person said no (or it is a dry run): no check, and nothing to fix.
                run.sink.notice(f"the check `{name}` did not run ({result.output})")
                return None
            if result.refused or not result.ok:
                return name, result
        return None

    def _answer(self, run: Run, final: Final) -> Outcome:
        run.state.answered(final.message, carried_out=not run.runtime.policy.dry_run)
        run.session.record("ANSWER", "final", final.message)
        run.save_state()
        run.sink.final(final.message)
        return Outcome("answered", final.message)

    def _say(self, run: Run, text: str, shown: Iterable[str] = ()) -> None:
        """A user message; the state goes with it whole the first time, then only what
        changed (messages once sent stay as they were, so prompt caches keep hitting) beyond
        the files the call it answers named (`shown`)."""
        if run.sent_state is None:
            block = run.state.render() if run.state.rows() else ""  # nothing yet: nothing said
        else:
            block = run.state.render_changes(run.sent_state, shown)
        run.sent_state = run.state.rows()
        self._append(run, {"role": "user", "content": f"{text}\n\n{block}" if block else text})

    def _append(self, run: Run, message: Message) -> None:
        run.messages.append(message)
        run.session.message(message)


def _named_files(args: dict[str, Any]) -> list[str]:
    """The workspace files a call names (`path`, and `to` for a move), as the state lists
    them."""
    named = [args.get("path"), args.get("to")]
    return [os.path.normpath(name) for name in named if isinstance(name, str) and name]
