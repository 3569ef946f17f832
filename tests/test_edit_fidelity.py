"""Tolerant edits write nothing the model did not send: only indentation and line endings of its
lines change, the file's unchanged lines keep their bytes, and what cannot be told is refused.
Cases in Python, JavaScript/TypeScript, Rust, Go, YAML and Markdown."""

import pytest

from hephaistus.testing.tools import run_tool
from hephaistus.tools import ToolContext, default_registry
from hephaistus.tools.editing.replacing import Unsafe, check_only_indentation_changed
from hephaistus.workspace import Workspace

TOOLS = default_registry()


@pytest.fixture
def ctx(tmp_path):
    return ToolContext(Workspace.at(tmp_path))


def put(ctx, name, text):
    (ctx.workspace.root / name).write_text(text)


def read(ctx, name):
    return (ctx.workspace.root / name).read_text()


def edit(ctx, name, old, new):
    return run_tool(ctx, "edit_file", {"path": name, "old": old, "new": new})


def patch(ctx, name, diff):
    return run_tool(ctx, "patch_file", {"path": name, "diff": diff})


# -- 1. fence lines inside a diff are content, not a wrapper ----------------------------------

README = "# Use\n\n```python\nimport x\n```\n\nThen run it.\n"


def test_a_closing_fence_in_the_context_keeps_the_hunk_in_place(ctx):
    put(ctx, "README.md", "Build:\n```\nmake\n```\nDone.\n")
    result = patch(ctx, "README.md", "@@ ... @@\n make\n ```\n+Then install.\n")
    assert result.ok, result.output
    assert read(ctx, "README.md") == "Build:\n```\nmake\n```\nThen install.\nDone.\n"


def test_fence_lines_inside_a_diff_are_kept(ctx):
    put(ctx, "README.md", README)
    diff = "```diff\n@@ ... @@\n ```python\n import x\n+x.run()\n ```\n```\n"
    result = patch(ctx, "README.md", diff)
    assert result.ok, result.output
    assert read(ctx, "README.md") == "# Use\n\n```python\nimport x\nx.run()\n```\n\nThen run it.\n"


def test_an_added_fence_line_is_added(ctx):
    put(ctx, "README.md", "# Use\n\nRun it.\n")
    diff = "@@ ... @@\n # Use\n \n+```sh\n+make\n+```\n Run it.\n"
    assert patch(ctx, "README.md", diff).ok
    assert read(ctx, "README.md") == "# Use\n\n```sh\nmake\n```\nRun it.\n"


# -- 2. re-indentation keeps the model's structure --------------------------------------------

NESTED = "class A:\n    class B:\n        def f(self):\n            return 1\n"


def test_a_new_shallower_line_gets_the_same_shift_not_the_files_indent(ctx):
    put(ctx, "m.py", NESTED)
    old = "    def f(self):\n        return 1"  # the model lost one level (4 spaces)
    new = "    def f(self):\n        return 1\n\n    def g(self):\n        return 2"
    result = edit(ctx, "m.py", old, new)
    assert result.ok, result.output
    assert read(ctx, "m.py") == NESTED + "\n        def g(self):\n            return 2\n"
    compile(read(ctx, "m.py"), "m.py", "exec")


def test_a_top_level_def_after_a_shifted_snippet_stays_top_level(ctx):
    put(ctx, "m.py", "def f():\n    return 1\n")
    result = edit(ctx, "m.py", "  return 1", "  return 1\n\n\ndef g():\n  return 2")
    assert result.ok, result.output
    assert read(ctx, "m.py") == "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


def test_a_tab_the_model_used_becomes_the_files_spaces(ctx):
    put(ctx, "m.py", "def f(x):\n    if x:\n        return 1\n    return 0\n")
    old = "if x:\n    return 1"
    new = "if x:\n    if x > 1:\n\t\treturn 2\n    return 1"
    result = edit(ctx, "m.py", old, new)
    assert result.ok, result.output
    assert read(ctx, "m.py") == (
        "def f(x):\n    if x:\n        if x > 1:\n"
        "            return 2\n        return 1\n    return 0\n"
    )
    assert "\t" not in read(ctx, "m.py")


def test_a_lone_context_line_without_its_marker_does_not_shift_the_added_lines(ctx):
    put(ctx, "m.py", "def f():\n    a = 1\n    return a\n")
    result = patch(ctx, "m.py", "@@ ... @@\n    a = 1\n+    b = 2\n")
    assert result.ok, result.output
    assert read(ctx, "m.py") == "def f():\n    a = 1\n    b = 2\n    return a\n"


def test_a_context_line_without_its_marker_does_not_shift_the_added_lines(ctx):
    put(ctx, "m.py", "def f():\n    a = 1\n    b = 2\n    return a + b\n")
    diff = "@@ ... @@\n    a = 1\n+    c = 3\n     b = 2\n"  # first context line lost its ' '
    result = patch(ctx, "m.py", diff)
    assert result.ok, result.output
    assert read(ctx, "m.py") == "def f():\n    a = 1\n    c = 3\n    b = 2\n    return a + b\n"


def test_four_space_snippet_in_a_two_space_file_keeps_the_files_unit(ctx):
    put(
        ctx,
        "app.ts",
        "function f(x: number) {\n  if (x > 0) {\n    return x;\n  }\n  return 0;\n}\n",
    )
    old = "    if (x > 0) {\n        return x;\n    }"
    new = "    if (x > 0) {\n        const y = x * 2;\n        return y;\n    }"
    result = edit(ctx, "app.ts", old, new)
    assert result.ok, result.output
    assert read(ctx, "app.ts") == (
        "function f(x: number) {\n  if (x > 0) {\n    const y = x * 2;\n"
        "    return y;\n  }\n  return 0;\n}\n"
    )


# -- 3. the text of the model's lines is never re-spaced --------------------------------------


# The old text copies a line with other spacing (so only the spacing-blind match finds it);
# that line is kept, so the file keeps its own spelling, and the added line is written as sent.
@pytest.mark.parametrize(
    "name, kept_line, copied_as, added",
    [
        ("a.py", "    s = s + 1", "    s = s+1", "    s += x"),
        (
            "a.js",
            "const total = a + b;",
            "const total = a+b;",
            "const f = (xs) => xs.map(x => x*2);",
        ),
        ("lib.rs", "let n = a + b;", "let n = a+b;", "let v: Vec<u32> = Vec::new();"),
        (
            "App.jsx",
            "const n = a + b;",
            "const n = a+b;",
            'const el = <div className="a">hi</div>;',
        ),
        ("srv.go", "\tn := a + b", "\tn := a+b", '\tw.Header().Set("Content-Encoding", "gzip")'),
        ("ci.yml", "n: a + b", "n: a+b", "url: https://example.com/a-b?x=1&y=2"),
        (
            "notes.md",
            "Step one - then two",
            "Step one-then two",
            "See https://x.io/a-b, or e-mail.",
        ),
    ],
)
def test_added_lines_are_written_as_sent_never_respaced(ctx, name, kept_line, copied_as, added):
    put(ctx, name, f"start\n{kept_line}\nend\n")
    result = edit(ctx, name, f"{copied_as}\nend", f"{copied_as}\n{added}\nend")
    assert result.ok, result.output
    assert read(ctx, name) == f"start\n{kept_line}\n{added}\nend\n"


def test_whitespace_inside_string_literals_is_never_ignored(ctx):
    put(ctx, "a.py", 'greeting = "hello world"\n')
    result = edit(ctx, "a.py", 'greeting = "helloworld"', 'greeting = "hi"')
    assert not result.ok and read(ctx, "a.py") == 'greeting = "hello world"\n'


def test_a_misspaced_copy_of_context_still_places_the_edit(ctx):
    put(
        ctx,
        "a.c",
        "int f(int a) {\n    if (a != 0) {\n        return 1;\n    }\n    return 0;\n}\n",
    )
    diff = "@@ ... @@\n     if (a!=0) {\n-        return 1;\n+        return 2;\n     }\n"
    result = patch(ctx, "a.c", diff)
    assert result.ok, result.output
    assert "    if (a != 0) {\n        return 2;\n" in read(ctx, "a.c")


# -- 4. unchanged lines keep the file's bytes ---------------------------------------------------


def test_unchanged_lines_keep_their_trailing_spaces(ctx):
    put(ctx, "a.md", "Title  \n\nSome text.   \nEnd\n")
    result = edit(ctx, "a.md", "Title\n\nSome text.\nEnd", "Title\n\nSome text.\nThe end")
    assert result.ok, result.output
    assert read(ctx, "a.md") == "Title  \n\nSome text.   \nThe end\n"


def test_a_continuation_backslash_line_is_kept_byte_for_byte(ctx):
    put(ctx, "build.sh", "cc -o app \\\n   main.c  \nexit 0\n")
    result = edit(
        ctx, "build.sh", "cc -o app \\\n   main.c\nexit 0", "cc -o app \\\n   main.c\nexit 1"
    )
    assert result.ok, result.output
    assert read(ctx, "build.sh") == "cc -o app \\\n   main.c  \nexit 1\n"


def test_tabs_file_keeps_tabs_in_unchanged_lines(ctx):
    put(ctx, "main.go", "func f() {\n\tx := 1\n\treturn\n}\n")
    result = edit(ctx, "main.go", "    x := 1\n    return", "    x := 1\n    x++\n    return")
    assert result.ok, result.output
    assert read(ctx, "main.go") == "func f() {\n\tx := 1\n\tx++\n\treturn\n}\n"


# -- 5. elided lines (`...`) ---------------------------------------------------------------------

LONG = "def f():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    return a\n"


@pytest.mark.parametrize("marker", ["...", "    # ...", "// ..."])
def test_a_line_of_dots_stands_for_unchanged_lines(ctx, marker):
    put(ctx, "m.py", LONG)
    result = edit(
        ctx,
        "m.py",
        f"def f():\n    a = 1\n{marker}\n    return a",
        f"def f():\n    a = 10\n{marker}\n    return a * 2",
    )
    assert result.ok, result.output
    assert read(ctx, "m.py") == LONG.replace("a = 1", "a = 10").replace("return a", "return a * 2")


def test_dots_only_in_old_are_refused(ctx):
    put(ctx, "m.py", LONG)
    result = edit(ctx, "m.py", "def f():\n    a = 1\n...\n    return a", "def f():\n    return 0")
    assert not result.ok and read(ctx, "m.py") == LONG


def test_a_literal_ellipsis_line_is_matched_as_text(ctx):
    put(ctx, "proto.py", "class P(Protocol):\n    def send(self) -> None:\n        ...\n")
    result = edit(
        ctx,
        "proto.py",
        "    def send(self) -> None:\n        ...",
        "    def send(self, data: bytes) -> None:\n        ...",
    )
    assert result.ok, result.output
    assert "def send(self, data: bytes) -> None:\n        ...\n" in read(ctx, "proto.py")


# -- one context line that differs --------------------------------------------------------------


def test_one_wrong_context_line_in_the_middle_is_tolerated_and_kept_from_the_file(ctx):
    put(ctx, "n.txt", "".join(f"line {i}\n" for i in range(1, 13)))
    diff = "@@ ... @@\n line 4\n line five\n line 6\n-line 7\n+line seven\n line 8\n"
    result = patch(ctx, "n.txt", diff)
    assert result.ok, result.output
    lines = read(ctx, "n.txt").splitlines()
    assert lines[3:8] == ["line 4", "line 5", "line 6", "line seven", "line 8"]


def test_a_wrong_removed_line_is_never_fuzzed(ctx):
    put(ctx, "n.txt", "".join(f"line {i}\n" for i in range(1, 13)))
    diff = "@@ ... @@\n line 4\n line 5\n-line seventy\n+line seven\n line 8\n"
    assert not patch(ctx, "n.txt", diff).ok


# -- the invariant itself --------------------------------------------------------------------


def test_the_invariant_refuses_any_other_change():
    check_only_indentation_changed(["  a", "b"], ["a", "    b"], {})
    with pytest.raises(Unsafe):
        check_only_indentation_changed(["a + b"], ["a+b"], {})
    with pytest.raises(Unsafe):
        check_only_indentation_changed(["x", "y"], ["x", "file y "], {1: "file y"})


def test_code_tags_inside_a_diff_are_content(ctx):
    put(ctx, "page.html", "<body>\n<pre><code>{x}</code></pre>\n</body>\n")
    diff = (
        "<code>\n@@ ... @@\n <body>\n-<pre><code>{x}</code></pre>\n"
        '+<pre><code class="a">{x}</code></pre>\n </body>\n</code>'
    )
    result = patch(ctx, "page.html", diff)
    assert result.ok, result.output
    assert read(ctx, "page.html") == '<body>\n<pre><code class="a">{x}</code></pre>\n</body>\n'


def test_dots_in_a_hunk_stand_for_unchanged_lines(ctx):
    put(ctx, "m.py", LONG)
    diff = "@@ ... @@\n def f():\n-    a = 1\n+    a = 10\n ...\n-    return a\n+    return a * 2\n"
    result = patch(ctx, "m.py", diff)
    assert result.ok, result.output
    assert read(ctx, "m.py") == LONG.replace("a = 1", "a = 10").replace("return a", "return a * 2")


def test_a_markdown_table_row_copied_with_other_spacing_is_kept(ctx):
    table = "| name | size |\n|------|------|\n| a    | 1    |\n"
    put(ctx, "t.md", table)
    result = edit(
        ctx, "t.md", "|name|size|\n|------|------|", "|name|size|\n|------|------|\n| b | 2 |"
    )
    assert result.ok, result.output
    assert read(ctx, "t.md") == "| name | size |\n|------|------|\n| b | 2 |\n| a    | 1    |\n"


def test_a_nested_markdown_list_item_keeps_its_depth(ctx):
    put(ctx, "l.md", "- one\n  - one.a\n- two\n")
    result = edit(ctx, "l.md", "- one\n    - one.a", "- one\n    - one.a\n    - one.b")
    assert result.ok, result.output
    assert read(ctx, "l.md") == "- one\n  - one.a\n  - one.b\n- two\n"


def test_python_continuation_lines_keep_their_alignment_when_shifted(ctx):
    put(
        ctx,
        "c.py",
        "class C:\n    def f(self):\n        x = call(a,\n                 b)\n        return x\n",
    )
    old = "x = call(a,\n         b)\nreturn x"
    new = "x = call(a,\n         b,\n         c)\nreturn x"
    result = edit(ctx, "c.py", old, new)
    assert result.ok, result.output
    assert read(ctx, "c.py") == (
        "class C:\n    def f(self):\n        x = call(a,\n"
        "                 b,\n                 c)\n        return x\n"
    )


def test_a_python_file_indented_with_tabs(ctx):
    put(ctx, "t.py", "def f():\n\tif x:\n\t\treturn 1\n\treturn 0\n")
    result = edit(ctx, "t.py", "    if x:\n        return 1", "    if x:\n        return 2")
    assert result.ok, result.output
    assert read(ctx, "t.py") == "def f():\n\tif x:\n\t\treturn 2\n\treturn 0\n"


def test_lines_of_a_multiline_string_shift_with_the_rest(ctx):
    put(ctx, "s.py", 'def f():\n    return """\n    a\n    b\n    """\n')
    result = edit(ctx, "s.py", 'return """\na\nb\n"""', 'return """\na\nb\nc\n"""')
    assert result.ok, result.output
    assert read(ctx, "s.py") == 'def f():\n    return """\n    a\n    b\n    c\n    """\n'


@pytest.mark.parametrize(
    "old, new",
    [
        ("    return s", "    return s * (1 - discount)"),
        ("return s", "return s * (1 - discount)"),
        ("s = 0", "total = 0\n        s = 0"),
    ],
)
def test_an_extension_made_before_is_not_made_twice(ctx, old, new):
    done = "def f(s):\n    if s:\n        total = 0\n        s = 0\n        return s * (1 - discount)\n"
    put(ctx, "d.py", done)
    result = edit(ctx, "d.py", old, new)
    assert result.ok and "already contains the new text" in result.output, result.output
    assert read(ctx, "d.py") == done


@pytest.mark.parametrize("old", ["    return s", "return s"])
def test_a_stale_line_matching_the_start_of_a_longer_one_is_refused(ctx, old):
    line = "        return s*(1-discount)\n"
    put(ctx, "d.py", "def f(s, discount):\n" + line)
    result = edit(ctx, "d.py", old, old + " * (1 - discount)")
    assert (
        not result.ok
        and "matches only the beginning" in result.output
        or "not found" in result.output
    ), result.output
    assert read(ctx, "d.py") == "def f(s, discount):\n" + line


def test_a_fragment_inside_a_line_is_replaced_in_place(ctx):
    put(ctx, "d.py", "def f(a, b):\n    return a - b  # the difference\n")
    assert edit(ctx, "d.py", "a - b", "a + b").ok
    assert read(ctx, "d.py") == "def f(a, b):\n    return a + b  # the difference\n"
