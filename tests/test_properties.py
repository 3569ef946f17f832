"""Property tests: random paths, arguments and replies never escape, leak or crash."""

import json
import os
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hephaistus.model.protocol import FormatError, parse_reply
from hephaistus.runtime.policy import Policy
from hephaistus.testing.tools import run_tool
from hephaistus.testing.watched import OUTSIDE, SECRET, WatchedWorkspace
from hephaistus.tools import ToolContext, default_registry
from hephaistus.values import Action, Final
from hephaistus.workspace import Workspace

TOOLS = default_registry()

# Examples per test are kept small for the suite; HEPH_FUZZ_SCALE=50 makes a deep run (the
# reliability benchmark fuzzes 10,000 paths).
SCALE = float(os.environ.get("HEPH_FUZZ_SCALE", "1"))


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


class Sandbox(WatchedWorkspace):
    """The watched workspace, with the tools' context and the checks after each call."""

    def context(self) -> ToolContext:
        return ToolContext(
            Workspace.at(self.root),
            commands={"touch": "touch", "echo": "echo"},
            command_timeout=10,
            search_seconds=1.0,
        )

    def check(self, tool: str, result) -> None:
        assert self.outside_files() == self.before, f"{tool} changed something outside"
        assert SECRET not in result.output and OUTSIDE not in result.output, result.output
        assert f"{tool} failed:" not in result.output, result.output  # an unexpected exception


@pytest.fixture
def sandbox(tmp_path):
    return lambda: Sandbox(tmp_path / "sandbox")


FRAGMENTS = [
    "..",
    ".",
    "",
    "/",
    "//",
    "~",
    "src",
    "app.py",
    ".env",
    ".ENV",
    "id_rsa",
    "out",
    "victim.txt",
    "config.txt",
    ".git",
    "config",
    ".heph",
    "new.py",
    "\x00",
    "\x1b[2J",
    "\udcff",
    "a" * 300,
    "*",
    "%2e%2e",
    "\\..\\",
    "C:",
    "\u202e",
]
paths = st.one_of(
    st.lists(
        st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), min_size=1, max_size=5
    ).map("/".join),
    st.sampled_from(
        ["/etc/passwd", "/tmp", "../outside/victim.txt", "out/new.txt", "src/../../outside/x"]
    ),
    st.text(max_size=20),
)


@fuzz(80)
@given(
    tool=st.sampled_from(
        [
            "read_file",
            "list_files",
            "search",
            "write_file",
            "append_file",
            "edit_file",
            "patch_file",
        ]
    ),
    path=paths,
    text=st.text(max_size=30),
)
def test_random_paths_never_escape_or_leak(sandbox, tool, path, text):
    box = sandbox()
    args = {"path": path}
    if tool in ("write_file", "append_file"):
        args["content"] = text
    elif tool == "edit_file":
        args.update(old="return 1", new=text)
    elif tool == "patch_file":
        args["diff"] = f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-x\n+{text}\n"
    elif tool == "search":
        args["pattern"] = "CANARY|" + "".join(c for c in text if c.isalnum())
    box.check(tool, run_tool(box.context(), tool, args))


ARG_WORDS = [
    "-x",
    "--basetemp=",
    "-C",
    "-c",
    "--rootdir=",
    "@",
    "=",
    ":",
    ",",
    "..",
    "/",
    "~",
    "out",
    "out/",
    "victim.txt",
    "/tmp/",
    "/etc/passwd",
    "new.txt",
    ".env",
    "a",
    "-",
]


@fuzz(40)
@given(
    words=st.lists(
        st.lists(st.sampled_from(ARG_WORDS), min_size=1, max_size=4).map("".join),
        min_size=1,
        max_size=4,
    )
)
def test_random_command_arguments_never_touch_outside(sandbox, words):
    box = sandbox()
    result = run_tool(box.context(), "run_command", {"name": "touch", "args": " ".join(words)})
    box.check("run_command", result)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
replies = st.one_of(
    json_values.map(json.dumps),
    st.fixed_dictionaries(
        {
            "thought": json_values,
            "action": st.fixed_dictionaries(
                {
                    "tool": st.sampled_from([*TOOLS.names, "rm", ""]),
                    "args": st.dictionaries(
                        st.sampled_from(
                            ["path", "content", "old", "new", "pattern", "name", "args", "n", "x"]
                        ),
                        json_values,
                        max_size=4,
                    ),
                }
            ),
        }
    ).map(json.dumps),
    st.text(alphabet=string.printable + '{}[]"\\\ud800\x1b', max_size=200),
    st.lists(
        st.sampled_from(
            [
                '{"',
                '"thought"',
                ":",
                '"',
                "{",
                "}",
                "[",
                "]",
                ",",
                "\\u",
                "d800",
                '"final"',
                '"message"',
                "```json",
                "<think>",
                "</think>",
                "9" * 50,
            ]
        ),
        max_size=40,
    ).map("".join),
)


@fuzz(300)
@given(text=replies)
def test_any_reply_parses_or_is_a_format_error(text):
    try:
        reply = parse_reply(text, TOOLS)
    except FormatError as error:
        assert error.observation.startswith("Your last reply was not valid")
        return
    assert isinstance(reply, (Action, Final))
    if isinstance(reply, Action):
        assert not TOOLS.get(reply.tool).problems(reply.args)


@fuzz(30)
@given(script=st.lists(replies, min_size=1, max_size=5))
def test_any_run_of_replies_ends_with_an_outcome_and_a_closed_session(sandbox, script):
    from hephaistus.engine.agent import Agent
    from hephaistus.records.session import load_session
    from hephaistus.settings.config import Config
    from hephaistus.testing import ScriptedModel

    box = sandbox()
    model = ScriptedModel(
        [*script, json.dumps({"thought": "", "final": {"message": "end"}})]
        + [json.dumps({"thought": "", "final": "end"})] * 3
    )
    agent = Agent(
        Workspace.at(box.root),
        Config(max_steps=8, commands=(("echo", "echo"),)),
        model=model,
        policy=Policy("auto"),
    )
    outcome = agent.execute("fuzz")
    assert outcome.status in ("answered", "failed", "refused")
    assert load_session(agent.session.path).end is not None
    assert box.outside_files() == box.before
    for call in model.calls:
        text = json.dumps(call)
        assert SECRET not in text and OUTSIDE not in text


# -- heph docs --fix: any text the model sends is placed, or refused; the code never changes --

DOCS_SOURCE = (
    '"""M."""\n\n\ndef plain(x):\n    return x\n\n\ndef one_line(x): return x  # why\n\n\n'
    "class Box:\n    def stub(self) -> int: ...\n\n    def old(self, a):\n"
    '        """Old.\n\n        Args:\n            b: gone\n        """\n        return a\n'
)


HOSTILE = st.sampled_from(["\x00", "\x1b[2J", "\u202e", "\ud800", '"', "'''", "\\", "\r\n"])
DOCSTRING_TEXT = st.lists(st.one_of(st.text(max_size=20), HOSTILE), max_size=6).map("".join)


@given(texts=st.lists(DOCSTRING_TEXT, min_size=4, max_size=4))
@fuzz(300)
def test_any_docstring_text_is_placed_or_refused_never_breaking_the_code(texts):
    from hephaistus.docs.fix import fix_source, verify_only_docstrings_changed
    from hephaistus.settings.config import DocsConfig
    from hephaistus.values import ModelReply, Usage

    names = ["plain", "one_line", "Box.stub", "Box.old"]
    entries = [{"name": n, "docstring": t} for n, t in zip(names, texts, strict=True)]
    reply = json.dumps({"docstrings": entries})
    result = fix_source(
        "m.py", DOCS_SOURCE, DocsConfig(), "google", lambda *_: ModelReply(reply, Usage())
    )
    if result.new_source is not None:
        verify_only_docstrings_changed(DOCS_SOURCE, result.new_source)  # raises if not
        result.new_source.encode("utf-8")  # no lone surrogate: the file can be written
    assert set(result.written) | set(result.refused) <= set(names)
    for name in result.written:
        assert name not in result.refused
