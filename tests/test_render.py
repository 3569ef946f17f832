"""What the console shows: the streamed thought, call lines, plain output without a terminal."""

import io

from rich.console import Console

from hephaistus.protocol import Action
from hephaistus.seams import Usage
from hephaistus.tools import ToolResult
from hephaistus.ui.render import ConsoleSink, _Waiting, describe_call


def sink(terminal=False):
    console = Console(file=io.StringIO(), force_terminal=terminal, width=100)
    return ConsoleSink(console=console), console


def test_the_thought_is_read_from_a_reply_while_it_streams():
    shown, _ = sink()
    shown.reply_progress('{"thought": "I should read the \\"config\\" first')
    assert shown._partial == 'I should read the "config" first'
    shown.tokens = 1234
    text = _Waiting(shown).__rich__().plain
    assert "thinking…" in text and "1,234 tokens" in text and "config" in text


def test_the_spinner_runs_only_in_a_terminal_and_stops_before_output():
    shown, console = sink(terminal=True)
    shown.step_started(1)
    assert shown._status is not None
    shown.model_replied(Usage(10, 5))
    assert shown._status is None and shown.tokens == 15
    plain, _ = sink(terminal=False)
    plain.step_started(1)
    assert plain._status is None


def test_call_lines_hide_bulky_arguments():
    line = describe_call(Action("", "write_file", {"path": "a.py", "content": "x\ny\nz\n"}))
    assert line == "write_file path=a.py content=<3 lines>"


def test_plain_console_output_has_no_escape_codes():
    shown, console = sink(terminal=False)
    shown.thought("thinking")
    shown.tool_finished(Action("", "write_file", {"path": "a.py"}),
                        ToolResult(True, "created a.py (1 line)", "--- /dev/null\n+++ b/a.py\n"))
    shown.final("**done**")
    output = console.file.getvalue()
    assert "\x1b[" not in output and "**done**" in output and "+++ b/a.py" in output
