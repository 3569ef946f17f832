"""What reaches the terminal and the model from text heph did not write: the model's answer
rendered as Markdown (a link never hides where it goes). Each attack runs for real: the real
rich console, heph as a process."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from test_hostile_repo import clone, person

from conftest import has_git
from hephaistus.testing import final
from hephaistus.ui.render import ConsoleSink

needs_git = pytest.mark.skipif(not has_git(), reason="needs git")

PHISH = "https://evil.example/phish"
# An OSC 8 hyperlink: ESC ] 8 ; params ; target, then the text shown for it.
HYPERLINK = re.compile(r"\x1b]8;[^;]*;([^\x1b\x07]+)(?:\x1b\\|\x07)((?:(?!\x1b]8;).)*)", re.S)
SGR = re.compile(r"\x1b\[[0-9;]*m")


def hidden_targets(output: str) -> list[str]:
    """The targets of the hyperlinks in `output` whose shown text is not the target itself."""
    return [
        target
        for target, shown in HYPERLINK.findall(output)
        if SGR.sub("", shown).strip() != target
    ]


LINKS = (
    f"See [docs]({PHISH}), [![logo](https://evil.example/i.png)]({PHISH}) "
    f"and [https://good.example]({PHISH})."
)


# -- 17a. A link in text from the model shows where it goes -------------------------------


def test_a_link_in_the_answer_shows_its_target_and_hides_none():
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    sink = ConsoleSink(console=console)
    sink.thought(f"I will cite [docs]({PHISH})")
    sink.final(LINKS)
    output = console.file.getvalue()
    assert hidden_targets(output) == [] and "\x1b]8;" not in output
    assert f"docs ({PHISH})" in SGR.sub("", output)
    assert "https://good.example (" + PHISH in SGR.sub("", output)


def answered_with_links(heph_process, chat_server, home, tmp_path, *args: str):
    """heph run as a process whose stdout rich takes for a terminal, answering with links."""
    root = clone(tmp_path, {"app.py": "x = 1\n"})
    terminal = {**person(home, chat_server), "NO_COLOR": None, "TTY_COMPATIBLE": "1"}
    terminal["TERM"] = "xterm-256color"
    chat_server.reply(final(LINKS, thought=f"see [docs]({PHISH})"))
    return root, terminal, heph_process(*args, "look", cwd=root, env=terminal)


@needs_git
@pytest.mark.parametrize("mode", ["ask", "plan"])
def test_an_answer_or_a_plan_on_a_terminal_makes_no_hyperlink_with_a_hidden_target(
    heph_process, chat_server, home, tmp_path, mode
):
    _, _, result = answered_with_links(heph_process, chat_server, home, tmp_path, "--mode", mode)
    assert result.code == 0, result.stderr
    assert "\x1b[" in result.stdout  # rich rendered it for a terminal
    assert hidden_targets(result.stdout + result.stderr) == []
    assert f"docs ({PHISH})" in SGR.sub("", result.stdout)


@needs_git
def test_a_replayed_answer_makes_no_hyperlink_with_a_hidden_target(
    heph_process, chat_server, home, tmp_path
):
    root, terminal, first = answered_with_links(heph_process, chat_server, home, tmp_path)
    assert first.code == 0, first.stderr
    replayed = heph_process("replay", "last", cwd=root, env=terminal)
    assert replayed.code == 0, replayed.stderr
    assert "\x1b[" in replayed.stdout
    assert hidden_targets(replayed.stdout + replayed.stderr) == []
    assert f"docs ({PHISH})" in SGR.sub("", replayed.stdout)
