"""heph docs: the offline check, the AST-guarded fix, and the CLI around them."""

import io
import json
import select
import shutil
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from conftest import environment, git
from hephaistus.docs.check import check_files
from hephaistus.docs.fix import fix_source
from hephaistus.docs.report import Reporter
from hephaistus.settings.config import DocsConfig
from hephaistus.testing import ChatServer, heph_command
from hephaistus.testing.docstring_writer import write_docstrings
from hephaistus.tools.docstrings import documented_params, replace_parameters, style_of
from hephaistus.values import ModelReply, Usage

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


def test_a_file_python_cannot_parse_is_reported(tmp_path):
    broken = write(tmp_path, "broken.py", '"""B."""\n\n\ndef f(:\n')
    nulls = write(tmp_path, "nulls.py", "x = 1\0\n")
    assert problems(tmp_path, [broken, nulls]) == [
        "broken.py:4: <module>: cannot parse: invalid syntax",
        "nulls.py:1: <module>: cannot parse: source code string cannot contain null bytes",
    ]


@pytest.mark.parametrize(
    "docstring",
    [
        # Sphinx with escaped stars, as requests writes them
        "Send.\n\n:param url: where\n:param \\*args: more\n:param \\*\\*kwargs: options",
        # Google with a nested type
        "Send.\n\nArgs:\n    url (Union(str, Url(x))): where\n    *args: more\n"
        "    **kwargs (Mapping(str, Any)): options",
        # keyword sections document **kwargs, and may name what it takes
        "Send.\n\nArgs:\n    url: where\n    *args: more\n\nKeyword Args:\n"
        "    timeout: seconds\n    verify: check TLS",
        "Send.\n\nKeyword Arguments:\n    timeout: seconds\n\nArgs:\n    url: where\n"
        "    *args: more",
        "Send.\n\n:param url: where\n:param args: more\n:keyword timeout: seconds\n"
        ":kwtype timeout: float",
        "Send.\n\nParameters\n----------\nurl : str\n    where\n*args\n    more\n\n"
        "Other Parameters\n----------------\ntimeout : float\n    seconds",
    ],
)
def test_documented_parameters_that_real_projects_write(tmp_path, docstring):
    rel = write(
        tmp_path,
        "s.py",
        f'"""S."""\n\n\ndef send(url, *args, **kwargs):\n    r"""{docstring}"""\n',
    )
    assert problems(tmp_path, [rel]) == []


def test_a_keyword_section_does_not_hide_a_missing_parameter(tmp_path):
    rel = write(
        tmp_path,
        "s.py",
        '"""S."""\n\n\ndef send(url, retries):\n'
        '    """Send.\n\n    Args:\n        url: where\n\n    Keyword Args:\n'
        '        timeout: seconds\n    """\n',
    )
    assert problems(tmp_path, [rel]) == ["s.py:4: send: parameter 'retries' not documented"]


def test_definitions_in_top_level_blocks_are_checked(tmp_path):
    rel = write(
        tmp_path,
        "compat.py",
        textwrap.dedent('''\
            """Compatibility."""
            import sys

            try:
                from fast import dumps
            except ImportError:
                def dumps(obj):
                    return str(obj)

            if sys.version_info >= (3, 12):
                def batched(items, n):
                    return items
            else:
                def batched(items, n):
                    """Batches."""
                    return items

            class Box:
                """A box."""

                if sys.platform == "win32":
                    def open(self):
                        return 1
        '''),
    )
    assert problems(tmp_path, [rel]) == [
        "compat.py:7: dumps: missing docstring",
        "compat.py:11: batched: missing docstring",
        "compat.py:22: Box.open: missing docstring",
    ]


def test_a_property_is_documented_on_its_getter_only(tmp_path):
    rel = write(
        tmp_path,
        "p.py",
        textwrap.dedent('''\
            """P."""


            class Box:
                """A box."""

                @property
                def size(self):
                    if self._size is None:
                        return 0
                    return self._size

                @size.setter
                def size(self, value):
                    self._size = value

                @size.deleter
                def size(self):
                    self._size = None
        '''),
    )
    assert problems(tmp_path, [rel]) == ["p.py:8: Box.size: missing docstring"]


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

            Returns:
                a, unchanged.
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
    # Only the parameter section of a stale docstring is replaced: the rest was right.
    assert (
        '    """Old.\n\n    Args:\n        a: one\n        b: two\n\n    Returns:\n'
        '        a, unchanged.\n    """\n    return a\n' in new
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


@pytest.mark.parametrize(
    "text, written",
    [
        ("ends in a backslash \\", 'r"""ends in a backslash \\ """'),
        ('says "hi"', '"""says "hi" """'),
        ('"quoted" at the start', '""""quoted" at the start"""'),
        ('has """ inside', "'''has \"\"\" inside'''"),
        ("has \"\"\" and ''' \\", '"""has \\"\\"\\" and \'\'\' \\\\ """'),
        (
            "two lines\n\nends in a backslash \\",
            'r"""two lines\n\n    ends in a backslash \\\n    """',
        ),
        # spelled out, as on a terminal: a direction override could make code read otherwise
        (
            "nul\0 esc\x1b[2J rlo\u202e lone\ud800",
            'r"""nul\\x00 esc\\x1b[2J rlo\\u202e lone\\ud800"""',
        ),
    ],
)
def test_any_text_the_model_sends_can_be_placed(text, written):
    ask, _ = replying(json.dumps({"docstrings": [{"name": "f", "docstring": text}]}))
    result = fix_source(
        "f.py", '"""F."""\n\n\ndef f(x):\n    return x\n', DocsConfig(), "google", ask
    )
    assert result.error is None, result.error
    assert f"def f(x):\n    {written}\n    return x\n" in result.new_source


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


def test_bodies_on_the_header_line_are_split_as_a_formatter_would():
    source = textwrap.dedent('''\
        """M."""
        from typing import Protocol


        def f(x): return x  # why


        def g(x): """Old.

            :param y: gone
            """; return x


        def long(
            first,
            second): return first


        class Sender(Protocol):
        \tdef send(self) -> int: ...
    ''')
    names = ["f", "g", "long", "Sender", "Sender.send"]
    reply = {"docstrings": [{"name": n, "docstring": f"{n} doc."} for n in names]}
    reply["docstrings"][1]["docstring"] = ":param x: the x"  # g's is stale: its parameters
    ask, _ = replying(json.dumps(reply))
    result = fix_source("f.py", source, DocsConfig(), "google", ask)
    assert result.error is None and result.written == names
    assert result.new_source == textwrap.dedent('''\
        """M."""
        from typing import Protocol


        def f(x):
            """f doc."""
            return x  # why


        def g(x):
            """Old.

            :param x: the x
            """
            return x


        def long(
            first,
            second):
            """long doc."""
            return first


        class Sender(Protocol):
        \t"""Sender doc."""

        \tdef send(self) -> int:
        \t\t"""Sender.send doc."""
        \t\t...
    ''')
    again, calls = replying()
    assert fix_source("f.py", result.new_source, DocsConfig(), "google", again).asked == []


def test_one_docstring_that_cannot_be_placed_does_not_block_the_others():
    stale = '    """G.\n\n    Args:\n        z: gone\n    """\n'
    source = f'"""M."""\n\n\ndef f(x):\n    return x\n\n\ndef g(y):\n{stale}    return y\n'
    reply = {
        "docstrings": [
            {"name": "f", "docstring": "F."},
            {"name": "g", "docstring": "G, without its parameters."},
        ]
    }
    ask, _ = replying(json.dumps(reply))
    result = fix_source("f.py", source, DocsConfig(), "google", ask)
    assert result.written == ["f"] and list(result.refused) == ["g"]
    assert '    """F."""\n' in result.new_source
    assert f"def g(y):\n{stale}    return y\n" in result.new_source


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
    assert "report.py: wrote 1 docstring (low)" in result.stdout
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


@pytest.mark.parametrize(
    "old, new, merged",
    [
        (
            "Add.\n\nArgs:\n    a: one\n    c: gone\n\nReturns:\n    The sum.\n\nExample:\n"
            "    >>> add(1, 2)\n    3",
            "Add two numbers.\n\nArgs:\n    a: one\n    b: two\n\nReturns:\n    Something.",
            "Add.\n\nArgs:\n    a: one\n    b: two\n\nReturns:\n    The sum.\n\nExample:\n"
            "    >>> add(1, 2)\n    3",
        ),
        (
            "Add.\n\nParameters\n----------\na : int\nc : int\n\nReturns\n-------\nint\n"
            "    The sum.",
            "Parameters\n----------\na : int\n    one\nb : int\n    two",
            "Add.\n\nParameters\n----------\na : int\n    one\nb : int\n    two\n\nReturns\n"
            "-------\nint\n    The sum.",
        ),
        (
            "Add.\n\n:param a: one\n:param c: gone\n    for long\n:type c: int\n:returns: the sum\n"
            ":raises ValueError: never",
            "Adds.\n\n:param a: one\n:param b: two",
            "Add.\n\n:param a: one\n:param b: two\n:returns: the sum\n:raises ValueError: never",
        ),
        # every parameter gone: the section goes, the rest stays
        (
            "Stop.\n\nArgs:\n    c: gone\n\nRaises:\n    OSError: when",
            "Stop.",
            "Stop.\n\nRaises:\n    OSError: when",
        ),
    ],
)
def test_a_stale_docstring_keeps_all_but_its_parameters(old, new, merged):
    assert replace_parameters(old, new) == merged


def test_a_stale_reply_without_parameters_is_refused_for_a_function_that_has_some():
    source = (
        '"""M."""\n\n\ndef f(x):\n    """F.\n\n    Args:\n        y: gone\n    """\n    return x\n'
    )
    ask, _ = replying(json.dumps({"docstrings": [{"name": "f", "docstring": "F, better."}]}))
    result = fix_source("f.py", source, DocsConfig(), "google", ask)
    assert result.new_source is None and "no parameter section" in result.error


@pytest.mark.parametrize(
    "after, gap",
    [
        ("def f():\n    pass\n", "\n\n"),
        ("@cache\ndef f():\n    pass\n", "\n\n"),
        ("# about f\nclass F:\n    pass\n", "\n\n"),
        ("\ndef f():\n    pass\n", "\n\n"),
        ("import os\n", "\n"),
    ],
)
def test_a_new_module_docstring_is_spaced_as_ruff_format_leaves_it(after, gap):
    ask, _ = replying(json.dumps({"docstrings": [{"name": "<module>", "docstring": "M."}]}))
    result = fix_source("m.py", after, DocsConfig(), "google", ask)
    assert result.new_source == '"""M."""\n' + gap + after.lstrip("\n")


# -- at scale: real modules, several requests at once, a hook that never hangs -------------

CORPUS = Path(__file__).parent / "corpus" / "docs"


def test_files_pass_the_tools_check_however_they_are_named(heph, chat_server, workspace, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.py").write_text('TOKEN = "hunter2"\n\n\ndef g(x):\n    return x\n')
    git(workspace, "init", "-q")
    (workspace / "real.py").write_text(REPORT)
    (workspace / "alias.py").symlink_to("real.py")
    (workspace / "leak.py").symlink_to(outside / "private.py")
    git(workspace, "add", ".")
    for how in ([], ["--staged"], ["alias.py", "."]):
        result = heph("docs", "--check", *how)
        assert {line.split(":")[0] for line in result.stdout.splitlines()} == {"real.py"}, how
    assert heph("docs", "--check", "leak.py").code == 2
    chat_server.responder = write_docstrings
    assert heph("docs", "--fix", "--staged").code == 1
    assert len(chat_server.requests) == 1  # the link's target once, and nothing from outside
    assert "hunter2" not in json.dumps(chat_server.requests)
    assert (workspace / "alias.py").is_symlink() and (workspace / "leak.py").is_symlink()
    assert '"""' in (workspace / "real.py").read_text()


def test_fix_on_real_modules_settles(heph, chat_server, workspace):
    for name in ("sessions.py", "reports.py"):
        shutil.copy(CORPUS / name, workspace / name)
    before = heph("docs", "--check")
    assert before.code == 1
    asked = {line.split(": ")[1] for line in before.stdout.splitlines()}
    assert {"SessionRedirectMixin.send", "BaseReport.toterminal"} <= asked
    chat_server.responder = write_docstrings
    first = heph("docs", "--fix")
    assert first.code == 1, first.stdout + first.stderr
    assert "left unchanged" not in first.stdout and "not placed" not in first.stdout
    assert len(chat_server.requests) == 2
    for name in ("sessions.py", "reports.py"):
        assert f"{name}: wrote " in first.stdout
    stub = '    def send(self, request: PreparedRequest, **kwargs: Any) -> Response:\n        """'
    assert stub in (workspace / "sessions.py").read_text()
    again = heph("docs", "--fix")
    assert again.code == 0 and len(chat_server.requests) == 2  # nothing left to ask
    assert heph("docs", "--check").code == 0


def undocumented_files(workspace, count):
    names = [f"m{n}.py" for n in range(count)]
    for name in names:
        (workspace / name).write_text(f'"""M."""\n\n\ndef f{name[1]}(x):\n    return x\n')
    return names


@pytest.mark.parametrize("jobs", [1, 3])
def test_fix_asks_about_several_files_at_once(heph, chat_server, workspace, jobs):
    names = undocumented_files(workspace, 6)

    def when_all_are_asked(body):
        """The reply, once `jobs` requests are in flight (or 10 s went by), and not at once:
        a request more than `jobs` would be in flight by then too."""
        deadline = time.monotonic() + 10
        while chat_server.in_flight < jobs and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(0.1)
        return write_docstrings(body)

    chat_server.responder = when_all_are_asked
    result = heph("docs", "--fix", "--jobs", str(jobs))
    assert result.code == 1, result.stderr
    assert chat_server.most_in_flight == jobs
    assert sorted(line.split(":")[0] for line in result.stdout.splitlines()) == names
    assert heph("docs", "--check").code == 0


def test_the_progress_line_on_a_terminal_and_the_files_blocks():
    out, progress = io.StringIO(), io.StringIO()
    report = Reporter(out, progress)
    report.start(2)
    report.waiting([("a.py", 3.2), ("b.py", 1.0)])
    assert progress.getvalue().endswith(
        "[0/2 files] 0 docstrings written, 0 s; waiting on a.py, b.py"
    )
    report.fixed("a.py", ["f", "g"], [], {"h": "the reply has no parameter section"})
    assert out.getvalue() == (
        "a.py: wrote 2 docstrings (f, g)\n  h: not placed: the reply has no parameter section\n"
    )
    assert progress.getvalue().endswith("\r\x1b[K[1/2 files] 2 docstrings written, 0 s")
    report.error("b.py", "cannot parse: invalid syntax")
    report.finish()
    assert progress.getvalue().endswith("\r\x1b[K")  # the line is gone when it is done


def test_without_a_terminal_a_slow_request_is_named_once(capsys):
    report = Reporter(io.StringIO(), progress=False, slow_after=5)
    report.start(1)
    report.waiting([("a.py", 4.0)])
    report.waiting([("a.py", 5.5)])
    report.waiting([("a.py", 9.0)])
    assert capsys.readouterr().err == "heph docs: waiting for the model on a.py (6 s)\n"


def test_an_endpoint_that_never_answers_does_not_hang_the_commit(heph, chat_server, workspace):
    undocumented_files(workspace, 1)
    (workspace / ".heph.toml").write_text("[docs]\ntimeout = 1.0\n")
    chat_server.fault("timeout", delay=30)
    started = time.monotonic()
    result = heph("docs", "--fix")
    assert time.monotonic() - started < 10
    assert result.code == 1
    assert "waiting for the model on m0.py" in result.stderr
    assert "no complete reply within 1 s" in result.stderr
    assert "`timeout` under [docs]" in result.stderr
    assert len(chat_server.requests) == 1  # a timeout is not tried again
    assert (workspace / "m0.py").read_text() == '"""M."""\n\n\ndef f0(x):\n    return x\n'


def test_max_files_and_a_dry_run_diff(heph, chat_server, workspace):
    names = undocumented_files(workspace, 3)
    before = {name: (workspace / name).read_text() for name in names}
    chat_server.responder = write_docstrings
    dry = heph("docs", "--fix", "--diff", "--max-files", "2")
    assert dry.code == 1
    assert len(chat_server.requests) == 2
    assert "--- a/m0.py\n+++ b/m0.py\n" in dry.stdout
    assert '+    """What f0 is for.\n' in dry.stdout and "m2.py" not in dry.stdout
    assert {name: (workspace / name).read_text() for name in names} == before
    one = heph("docs", "--fix", "--max-files", "1")
    assert one.code == 1 and one.stdout.startswith("m0.py: wrote 1 docstring")
    assert (workspace / "m0.py").read_text() != before["m0.py"]
    assert [(workspace / n).read_text() for n in names[1:]] == [before[n] for n in names[1:]]
    assert heph("docs", "--check", "--diff").code == 2  # --diff goes with --fix
    dry = heph("docs", "--fix", "--dry-run")  # the option every command has means the same
    assert "--- a/m1.py\n+++ b/m1.py\n" in dry.stdout
    assert [(workspace / n).read_text() for n in names[1:]] == [before[n] for n in names[1:]]


def test_ctrl_c_stops_the_fix_keeping_what_was_written(heph, chat_server, home, workspace):
    names = undocumented_files(workspace, 2)
    chat_server.reply(write_docstrings_for("f0"))
    chat_server.fault("timeout", delay=30)
    process = subprocess.Popen(
        [*heph_command(), "docs", "--fix", "--jobs", "1"],
        cwd=workspace,
        env=environment(home, chat_server.url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert select.select([process.stdout], [], [], 20)[0], "m0.py was never reported"
    first = process.stdout.readline()
    deadline = time.monotonic() + 20
    while len(chat_server.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)  # while it waits for the reply about m1.py
    out, err = process.communicate(timeout=10)
    assert process.returncode == 130, err
    assert "stopped after 1 of 2 files; what was written is kept (`heph undo`" in err
    assert first.startswith("m0.py: wrote 1 docstring") and not out
    assert '"""What f0 is for.' in (workspace / names[0]).read_text()
    assert (workspace / names[1]).read_text() == '"""M."""\n\n\ndef f1(x):\n    return x\n'
    session = sorted((workspace / ".heph" / "sessions").glob("*.jsonl"))[-1].read_text()
    assert '"outcome": "interrupted"' in session
    undo = heph("undo")
    assert undo.code == 0, undo.stderr
    assert (workspace / names[0]).read_text() == '"""M."""\n\n\ndef f0(x):\n    return x\n'


def write_docstrings_for(name):
    return {"docstrings": [{"name": name, "docstring": f"What {name} is for."}]}


def test_the_request_shows_a_long_signature_whole():
    params = "".join(f"    p{n}: int,\n" for n in range(80))
    source = f'"""M."""\n\n\ndef f(\n{params}) -> int:\n    return p0\n'
    ask, calls = replying(json.dumps({"docstrings": []}))
    fix_source("f.py", source, DocsConfig(), "google", ask)
    shown = calls[0].split("## f (function; missing docstring)\n")[1].split("```\n")[0]
    assert "    p79: int,\n) -> int:\n    return p0" in shown


def test_fix_reports_a_file_it_cannot_parse_and_goes_on(heph, chat_server, workspace):
    (workspace / "broken.py").write_text("def f(:\n")
    undocumented_files(workspace, 1)
    chat_server.responder = write_docstrings
    result = heph("docs", "--fix")
    assert result.code == 1
    assert "broken.py: left unchanged: cannot parse: invalid syntax" in result.stdout
    assert "m0.py: wrote 1 docstring (f0)" in result.stdout
    assert len(chat_server.requests) == 1


def test_a_file_that_breaks_the_fixer_is_reported_and_the_others_are_fixed(
    heph, chat_server, workspace
):
    # Python parses these, but their trees are too deep to copy and compare safely: refused.
    (workspace / "deep.py").write_text("def f():\n    return " + "-" * 900 + "1\n")
    # Deeper still, the parser itself gives up.
    (workspace / "deeper.py").write_text("def g():\n    return " + "-" * 20_000 + "1\n")
    undocumented_files(workspace, 1)
    check = heph("docs", "--check")
    assert "deeper.py:1: <module>: cannot parse: nested too deeply" in check.stdout
    chat_server.responder = write_docstrings
    result = heph("docs", "--fix")
    assert result.code == 1 and "Traceback" not in result.stderr
    assert "m0.py: wrote 1 docstring (f0)" in result.stdout
    assert "deep.py: left unchanged: " in result.stdout and "nested too deeply" in result.stdout
    assert "deeper.py: left unchanged: cannot parse: nested too deeply" in result.stdout
    assert (workspace / "deep.py").read_text().startswith("def f():\n    return ---")


def test_the_readmes_pre_commit_snippet_works_as_written(tmp_path):
    """The YAML block the README gives, pasted into a repository as is, runs heph's check."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    from conftest import git

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    after = readme.split("In another repository's `.pre-commit-config.yaml`", 1)[1]
    snippet = re.search(r"```yaml\n(.*?)```", after, re.S).group(1)
    root = tmp_path / "other"
    root.mkdir()
    git(root, "init", "-q")
    (root / ".pre-commit-config.yaml").write_text(snippet)
    (root / "report.py").write_text('"""Reports."""\n\n\ndef low(items):\n    return items\n')
    git(root, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "report.py:4: low: missing docstring" in done.stdout


def test_every_fix_request_carries_the_reply_limit(heph, home, workspace):
    # A small local server (llama.cpp, a 2,048-token window) and a model that runs on: without
    # a cap it wrote until the window was full and the hook timed out.
    undocumented_files(workspace, 1)
    with ChatServer(flavour="llama.cpp", context_window=2048) as small:
        small.reply("Here are the docstrings. " * 5, run_on=True)
        result = heph("docs", "--fix", env={"OPENAI_BASE_URL": small.url})
        assert small.requests[0]["max_tokens"] == 512  # a quarter of the window it serves
        assert result.code == 1 and "cut off at the reply limit (512 tokens" in result.stdout
        assert "max_reply_tokens" in result.stdout

        config = home / ".config" / "hephaistus" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text("max_reply_tokens = 300\n")
        small.responder = write_docstrings
        assert heph("docs", "--fix", env={"OPENAI_BASE_URL": small.url}).code == 1
        assert small.requests[1]["max_tokens"] == 300
    assert '"""What f0 is for.' in (workspace / "m0.py").read_text()
