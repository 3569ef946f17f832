"""heph docs: the offline check, the AST-guarded fix, and the CLI around them."""

import json
import textwrap

import pytest

from conftest import git
from hephaistus.config import DocsConfig
from hephaistus.docs.check import check_files
from hephaistus.docs.fix import fix_source
from hephaistus.docstrings import documented_params, style_of
from hephaistus.seams import ModelReply, Usage

SOURCE = textwrap.dedent('''\
    from typing import overload


    def documented(a, b):
        """Add.

        Args:
            a: first
            b: second
        """
        return a + b


    def bare(x):
        return x


    def _private(x):
        return x


    class Shape:
        """A shape."""

        def __init__(self, name):
            self.name = name

        def __repr__(self):
            return self.name

        def area(self):
            return 0

        @property
        def label(self):
            return self.name

        @overload
        def grow(self, by: int) -> None: ...


    class Empty:
        pass
''')


def write(tmp_path, rel, text):
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return rel


def problems(tmp_path, files, **config):
    return [str(p) for p in check_files(tmp_path, files, DocsConfig(**config))]


def test_missing_docstrings_with_default_skips(tmp_path):
    rel = write(tmp_path, "pkg/shapes.py", SOURCE)
    assert problems(tmp_path, [rel]) == [
        "pkg/shapes.py:1: <module>: missing docstring",
        "pkg/shapes.py:14: bare: missing docstring",
        "pkg/shapes.py:31: Shape.area: missing docstring",
        "pkg/shapes.py:42: Empty: missing docstring",
    ]


def test_private_names_on_request_and_min_body_lines(tmp_path):
    rel = write(
        tmp_path,
        "m.py",
        '"""M."""\n\ndef _helper(x):\n    return x\n\n'
        "def long(x):\n    y = x\n    z = y\n    return z\n",
    )
    assert problems(tmp_path, [rel]) == ["m.py:6: long: missing docstring"]
    assert "m.py:3: _helper: missing docstring" in problems(tmp_path, [rel], include_private=True)
    assert problems(tmp_path, [rel], min_body_lines=4) == []


def test_tests_and_ignored_files_are_skipped(tmp_path):
    files = [
        write(tmp_path, name, "def f(x):\n    return x\n")
        for name in ("tests/test_a.py", "test_b.py", "b_test.py", "gen/out.py", "real.py")
    ]
    assert [p.split(":")[0] for p in problems(tmp_path, files, ignore=("gen/*",))] == [
        "real.py",
        "real.py",
    ]
    assert len(problems(tmp_path, files, skip_tests=False)) == 10


@pytest.mark.parametrize(
    "docstring, names",
    [
        (
            "Do.\n\nArgs:\n    a (int): first\n    b: second\n        more about b\n\nReturns:\n    x",
            ["a", "b"],
        ),
        (
            "Do.\n\nParameters\n----------\na : int\n    first\nb, c : str\n    others\n\n"
            "Returns\n-------\nint\n    the result",
            ["a", "b", "c"],
        ),
        ("Do.\n\n:param a: first\n:param int b: second\n:type b: int\n:returns: x", ["a", "b"]),
        ("Just a sentence about a and b.", None),
    ],
)
def test_documented_parameters_in_each_style(docstring, names):
    assert documented_params(docstring) == names


def test_style_names():
    assert style_of("x\n\nArgs:\n    a: b") == "google"
    assert style_of("x\n\nParameters\n----------\na : int") == "numpy"
    assert style_of("x\n\n:param a: b") == "sphinx"


@pytest.mark.parametrize(
    "docstring",
    [
        "Add.\n\n    Args:\n        a: first\n        c: gone\n    ",
        "Add.\n\n    Parameters\n    ----------\n    a : int\n    c : int\n    ",
        "Add.\n\n    :param a: first\n    :param c: gone\n    ",
    ],
)
def test_stale_parameters_in_each_style(tmp_path, docstring):
    rel = write(
        tmp_path, "s.py", f'"""S."""\n\ndef add(a, b):\n    """{docstring}"""\n    return a + b\n'
    )
    assert problems(tmp_path, [rel]) == [
        "s.py:3: add: docstring documents 'c', not in the signature"
    ]


def test_a_new_parameter_not_documented(tmp_path):
    rel = write(
        tmp_path,
        "s.py",
        '"""S."""\n\ndef add(a, b, *args, **kw):\n'
        '    """Add.\n\n    Args:\n        a: x\n        b: y\n'
        '        *args: more\n    """\n    return a\n',
    )
    assert problems(tmp_path, [rel]) == ["s.py:3: add: parameter 'kw' not documented"]


def test_a_file_python_cannot_parse_is_left_to_the_linters(tmp_path):
    rel = write(tmp_path, "broken.py", "def f(:\n")
    assert problems(tmp_path, [rel]) == []


# -- fix -----------------------------------------------------------------------------------


def replying(*texts):
    calls = []

    def ask(request, rel):
        calls.append(request)
        return ModelReply(texts[len(calls) - 1], Usage())

    return ask, calls


def test_fix_inserts_and_replaces_keeping_the_code(tmp_path):
    source = textwrap.dedent('''\
        #!/usr/bin/env python3
        import os


        def old(a, b):
            """Old.

            Args:
                a: one
                c: removed long ago
            """
            return a


        class Box:
            @staticmethod
            def make():
                return Box()
    ''')
    reply = json.dumps(
        {
            "docstrings": [
                {"name": "<module>", "docstring": "Boxes."},
                {"name": "old", "docstring": "Old, now right.\n\nArgs:\n    a: one\n    b: two"},
                {"name": "Box", "docstring": '"""A box."""'},
                {"name": "Box.make", "docstring": "Make a box."},
                {"name": "not_asked", "docstring": "ignored"},
            ]
        }
    )
    ask, calls = replying(reply)
    result = fix_source("box.py", source, DocsConfig(), "google", ask)
    assert result.error is None, result.error
    new = result.new_source
    assert new.startswith('#!/usr/bin/env python3\n"""Boxes."""\n\nimport os\n')
    assert (
        '    """Old, now right.\n\n    Args:\n        a: one\n        b: two\n    """\n'
        "    return a\n" in new
    )
    assert (
        'class Box:\n    """A box."""\n\n    @staticmethod\n    def make():\n'
        '        """Make a box."""\n        return Box()\n' in new
    )
    assert "c: removed" not in new and "not_asked" not in new
    assert (
        "Write docstrings for:" in calls[0]
        and "## old (function; docstring documents 'c'" in calls[0]
    )
    # A second run has nothing to ask.
    again, more_calls = replying()
    assert fix_source("box.py", new, DocsConfig(), "google", again).asked == []
    assert more_calls == []


def test_a_docstring_that_would_break_the_code_is_refused(tmp_path):
    source = "def f(x):\n    return x\n"
    ask, _ = replying(json.dumps({"docstrings": [{"name": "f", "docstring": "ends badly \\"}]}))
    result = fix_source("f.py", source, DocsConfig(), "google", ask)
    assert result.new_source is None and "would not parse" in result.error


@pytest.mark.parametrize(
    "reply, error",
    [
        ("I cannot do that.", "not JSON"),
        ('{"docs": []}', "no 'docstrings' list"),
        ('{"docstrings": [{"name": 1}]}', "string 'name'"),
    ],
)
def test_malformed_replies_leave_the_file(reply, error):
    ask, _ = replying(reply)
    result = fix_source("f.py", "def f(x):\n    return x\n", DocsConfig(), "google", ask)
    assert result.new_source is None and error in result.error


def test_one_line_definitions_are_refused():
    ask, _ = replying(json.dumps({"docstrings": [{"name": "f", "docstring": "F."}]}))
    result = fix_source("f.py", '"""M."""\ndef f(x): return x\n', DocsConfig(), "google", ask)
    assert result.new_source is None and "same line" in result.error


# -- the command ---------------------------------------------------------------------------

REPORT = "def low(items, minimum=5):\n    return [i for i in items if i < minimum]\n"


def test_check_command_exit_codes_and_json(heph, workspace):
    (workspace / "report.py").write_text('"""Reports."""\n\n' + REPORT)
    result = heph("docs", "--check", "report.py")
    assert result.code == 1
    assert result.stdout == "report.py:3: low: missing docstring\n"
    data = heph("docs", "--check", "--json").json
    assert data["problems"][0]["name"] == "low" and data["files"] == 1
    (workspace / "report.py").write_text('"""Reports."""\n\ndef low():\n    """Low."""\n')
    assert heph("docs").code == 0  # --check is the default
    assert heph("docs", "--check", "nope.py").code == 2


def test_fix_command_writes_checkpoints_and_is_idempotent(heph, chat_server, workspace):
    original = '"""Reports."""\r\n\r\n' + REPORT.replace("\n", "\r\n")
    (workspace / "report.py").write_bytes(original.encode())
    chat_server.reply(
        {
            "docstrings": [
                {
                    "name": "low",
                    "docstring": "Items under the minimum.\n\nArgs:\n    items: the items\n"
                    "    minimum: the threshold",
                }
            ]
        }
    )
    result = heph("docs", "--fix")
    assert result.code == 1, result.stderr
    assert "report.py: wrote 1 docstrings (low)" in result.stdout
    new = (workspace / "report.py").read_bytes().decode()
    assert "\r\n" in new and "\n" not in new.replace("\r\n", "")  # still CRLF
    inserted = (
        '    """Items under the minimum.\r\n\r\n    Args:\r\n        items: the items\r\n'
        '        minimum: the threshold\r\n    """\r\n'
    )
    assert new.replace(inserted, "") == original  # the code is otherwise byte-identical
    request = chat_server.requests[0]
    assert request["response_format"] == {"type": "json_object"}
    assert "## low (function; missing docstring)" in request["messages"][1]["content"]
    assert heph("docs", "--fix").code == 0  # nothing left to do: no request
    assert len(chat_server.requests) == 1
    assert heph("undo").code == 0
    assert (workspace / "report.py").read_bytes().decode() == original


def test_fix_without_an_endpoint_is_a_configuration_error(heph, workspace):
    (workspace / "report.py").write_text(REPORT)
    result = heph("docs", "--fix", env={"OPENAI_BASE_URL": None})
    assert result.code == 2 and "OPENAI_API_KEY" in result.stderr


def test_staged_files_only(heph, workspace):
    git(workspace, "init", "-q")
    (workspace / "staged.py").write_text(REPORT)
    (workspace / "unstaged.py").write_text(REPORT)
    git(workspace, "add", "staged.py")
    result = heph("docs", "--check", "--staged")
    assert result.code == 1
    assert {line.split(":")[0] for line in result.stdout.splitlines()} == {"staged.py"}
