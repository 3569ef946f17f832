"""`heph replay`: a recorded session re-rendered from its file alone, no model, no tools."""

from __future__ import annotations

from rich.text import Text

from hephaistus.escape import outside_text
from hephaistus.model.protocol import FormatError, find_json_object
from hephaistus.records.session import Memo, RecordedSession, Span
from hephaistus.tools import ToolResult, default_registry
from hephaistus.ui.render import ConsoleSink
from hephaistus.values import Action, CommandRun


def replay(recorded: RecordedSession, sink: ConsoleSink) -> None:
    """Show the recorded session on `sink` as it was shown live: the task, each step's thought,
    the tool calls with their results and diffs, notes, the answer, and how it ended."""
    header = recorded.header
    mode = f"  {header['mode']} mode" if isinstance(header.get("mode"), str) else ""
    dry = "  dry run" if header.get("dry_run") is True else ""
    sink.err.print(
        outside_text(
            f"session {header.get('id')}  {header.get('started', '')}  "
            f"model {header.get('model')}{mode}{dry}",
            "bold",
        )
    )
    step = 0
    # A command's preview is the end of its output (see render.preview).
    commands = {tool.name for tool in default_registry() if tool.effect == "command"}
    for span in recorded.spans:
        if span.kind == "INPUT":
            sink.err.print(Text("task: ", style="bold") + outside_text(str(span.output)))
        elif span.kind == "LLM":
            step += 1
            sink.step_started(step)
            thought = _thought(span.output) if span.ok else None
            if thought:
                sink.thought(thought)
            elif not span.ok:
                sink.notice(f"model call failed: {span.error}")
        elif span.kind == "TOOL":
            action = Action("", span.name, span.args)
            output = span.output if isinstance(span.output, dict) else {"output": span.output}
            sink.tool_called(action)
            sink.tool_finished(
                action,
                ToolResult(
                    span.ok,
                    str(output.get("output") or span.error or ""),
                    output.get("diff"),
                    decision=output.get("decision"),
                    command=CommandRun(span.name, "") if span.name in commands else None,
                ),
            )
        elif span.kind == "HOOK":  # shown as it ran, never run again
            out = span.output if isinstance(span.output, dict) else {}
            ran = f"exit {out.get('exit')}, {out.get('decision', '')}" if span.ok else span.error
            sink.notice(f"hook {span.name}: {span.args.get('command', '')} ({ran})")
        elif span.kind == "MEMO":
            _memo(span, sink)
        elif span.kind == "ANSWER":
            sink.final(str(span.output))
    end = recorded.end
    if end is None:
        sink.notice("the session has no end record (it was cut short)")
    elif end.get("outcome") != "answered":
        sink.notice(f"{end.get('outcome')}: {end.get('message')}")


def _memo(span: Span, sink: ConsoleSink) -> None:
    if span.name == Memo.MALFORMED_REPLY:
        sink.format_error(str(span.output))
    elif span.name == Memo.COMPACTION:
        sink.notice(f"compacted the conversation ({span.output} tokens)")
    elif span.name == Memo.ERROR:
        sink.notice(f"error: {span.output}")
    else:  # what `heph docs --fix` did with a file, and names this version does not know
        sink.notice(f"{span.name.replace('_', ' ')}: {span.output}")


def _thought(reply_text: object) -> str | None:
    try:
        data = find_json_object(str(reply_text))
    except FormatError:
        return None
    thought = data.get("thought")
    return thought if isinstance(thought, str) else None
