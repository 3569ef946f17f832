"""edit_file and patch_file: edits land despite drift, ambiguity is refused, failures change nothing."""

import pytest

from hephaistus.testing.tools import run_tool
from hephaistus.tools import ToolContext, default_registry
from hephaistus.workspace import Workspace

TOOLS = default_registry()

SOURCE = """\
class Greeter:
    def __init__(self, name):
        self.name = name

    def greet(self):
        return "hello " + self.name


def main():
    print(Greeter("world").greet())
"""


@pytest.fixture
def ctx(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "greet.py").write_text(SOURCE)
    return ToolContext(Workspace.at(root))


def edit(ctx, old, new, path="greet.py"):
    return run_tool(ctx, "edit_file", {"path": path, "old": old, "new": new})


def patch(ctx, diff, path="greet.py"):
    return run_tool(ctx, "patch_file", {"path": path, "diff": diff})


def text(ctx, path="greet.py"):
    return (ctx.workspace.root / path).read_text()


# -- edit_file -----------------------------------------------------------------------------


def test_an_exact_edit_says_where_the_new_text_is_and_echoes_nothing(ctx):
    result = edit(
        ctx, "        self.name = name\n", "        self.name = name\n        self.n = 0\n"
    )
    assert result.ok, result.output
    assert result.output == (
        "updated greet.py (11 lines): 'new' is at lines 3-4 as sent, nothing else changed"
    )
    assert "+        self.n = 0" in result.diff  # the person and the session see the change
    result = edit(ctx, "        self.n = 0\n", "")
    assert result.output.endswith("the text of 'old' was removed, nothing else changed")
    result = edit(ctx, '"hello " + self.name', '"hi " + self.name')  # inside a line
    assert result.output.endswith("'new' is at line 6 as sent, nothing else changed")


def test_a_tolerant_edit_shows_the_model_what_was_written(ctx):
    result = edit(ctx, "self.name = name", "self.name = name.strip()")  # indentation left out
    assert result.ok, result.output
    assert "-        self.name = name\n+        self.name = name.strip()\n" in result.output


def test_trailing_whitespace_drift_is_tolerated(ctx):
    result = edit(
        ctx,
        '    def greet(self):   \n        return "hello " + self.name  ',
        '    def greet(self):\n        return f"hello {self.name}"',
    )
    assert result.ok, result.output
    assert 'return f"hello {self.name}"' in text(ctx)


def test_missing_indentation_is_restored_in_the_new_text(ctx):
    result = edit(
        ctx,
        'def greet(self):\n    return "hello " + self.name',
        'def greet(self, loud=False):\n    text = "hello " + self.name\n'
        "    return text.upper() if loud else text",
    )
    assert result.ok, result.output
    assert (
        '    def greet(self, loud=False):\n        text = "hello " + self.name\n'
        "        return text.upper() if loud else text\n"
    ) in text(ctx)


def test_crlf_file_with_lf_edit_stays_crlf(ctx):
    path = ctx.workspace.root / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    assert edit(ctx, "two\nthree", "2\n3", path="win.txt").ok
    assert path.read_bytes() == b"one\r\n2\r\n3\r\n"


def test_new_text_built_from_a_misspaced_copy_is_refused_not_respaced(ctx):
    (ctx.workspace.root / "calc.py").write_text("def total(p, t):\n    return p * (1 + t)\n")
    result = edit(
        ctx,
        "def total(p, t):\n    return p*(1+t)",
        "def total(p, t, d=0.0):\n    return p*(1+t)*(1-d)",
        path="calc.py",
    )
    assert not result.ok and "spaced otherwise than the file's" in result.output
    assert text(ctx, "calc.py") == "def total(p, t):\n    return p * (1 + t)\n"


def test_spacing_drift_in_lines_the_edit_keeps_is_tolerated(ctx):
    (ctx.workspace.root / "calc.py").write_text(
        "def total(p, t):\n    s = p * (1 + t)\n    return s\n"
    )
    result = edit(
        ctx,
        "    s = p*(1+t)\n    return s",
        "    s = p*(1+t)\n    return round(s, 2)",
        path="calc.py",
    )
    assert result.ok, result.output
    assert text(ctx, "calc.py") == (
        "def total(p, t):\n    s = p * (1 + t)\n    return round(s, 2)\n"
    )


def test_a_loose_match_in_two_places_is_refused_with_both_lines(ctx):
    (ctx.workspace.root / "twice.py").write_text("if a:\n    x = 1\nif b:\n    x = 1\n")
    result = edit(ctx, "x  =  1", "x = 2", path="twice.py")
    assert not result.ok and "2 places" in result.output and "lines 2, 4" in result.output
    assert text(ctx, "twice.py") == "if a:\n    x = 1\nif b:\n    x = 1\n"


def test_a_miss_quotes_the_closest_real_lines_with_numbers(ctx):
    result = edit(ctx, "    def greet(self):\n        return 'hi ' + self.name", "x")
    assert not result.ok
    assert "Nothing changed" in result.output
    assert "5     def greet(self):" in result.output
    assert '6         return "hello " + self.name' in result.output
    assert text(ctx) == SOURCE


def test_an_edit_already_applied_is_reported_not_repeated(ctx):
    old = '    def greet(self):\n        return "hi " + self.name'
    new = '    def greet(self):\n        return "hello " + self.name'
    result = edit(ctx, old, new)
    assert result.ok and "already contains the new text" in result.output
    assert text(ctx) == SOURCE


def test_new_text_found_by_coincidence_is_not_claimed_as_done(ctx):
    result = edit(ctx, "return 'bye'", 'return "hello " + self.name')
    assert not result.ok and "was not found" in result.output
    assert text(ctx) == SOURCE


def test_an_empty_file_can_be_filled(ctx):
    (ctx.workspace.root / "empty.py").write_text("")
    assert edit(ctx, "", "x = 1\n", path="empty.py").ok
    assert text(ctx, "empty.py") == "x = 1\n"
    assert not edit(ctx, "", "x = 1\n").ok  # empty old in a non-empty file


# -- patch_file ----------------------------------------------------------------------------


def test_hunks_without_numbers_or_headers_in_a_fence(ctx):
    diff = """Here is the change:
```diff
@@ ... @@
     def greet(self):
-        return "hello " + self.name
+        return "hi " + self.name
```
"""
    result = patch(ctx, diff)
    assert result.ok, result.output
    assert 'return "hi " + self.name' in text(ctx)


def test_wrong_line_numbers_and_several_hunks(ctx):
    diff = """--- a/greet.py
+++ b/greet.py
@@ -40,3 +40,3 @@ class Greeter:
     def __init__(self, name):
-        self.name = name
+        self.name = name.strip()
{blank_context}
@@ -90,2 +90,3 @@
 def main():
+    \"\"\"Say hello.\"\"\"
     print(Greeter("world").greet())
""".format(blank_context=" ")
    result = patch(ctx, diff)
    assert result.ok, result.output
    assert "self.name = name.strip()" in text(ctx)
    assert 'def main():\n    """Say hello."""\n    print(' in text(ctx)


def test_whitespace_drift_in_context(ctx):
    diff = (
        "@@ -1 +1 @@\n class Greeter:\n-  def __init__(self, name):\n-    self.name = name\n"
        "+  def __init__(self, name: str):\n+    self.name = name\n"
    )
    result = patch(ctx, diff)
    assert result.ok, result.output
    assert "    def __init__(self, name: str):\n        self.name = name\n" in text(ctx)


def test_all_hunks_or_none(ctx):
    diff = """@@ ... @@
 class Greeter:
-    def __init__(self, name):
+    def __init__(self, name, punctuation="!"):
@@ ... @@
 def main():
-    print(Greeter("mars").greet())
+    print(Greeter("world", "?").greet())
"""
    result = patch(ctx, diff)
    assert not result.ok
    assert "hunk 2" in result.output and "Nothing changed" in result.output
    assert '10     print(Greeter("world").greet())' in result.output  # the closest real line
    assert text(ctx) == SOURCE


def test_ambiguous_hunk_is_refused(ctx):
    (ctx.workspace.root / "twice.py").write_text("a = 1\nb = 2\n\na = 1\nb = 2\n")
    result = patch(ctx, "@@ ... @@\n a = 1\n-b = 2\n+b = 3\n", path="twice.py")
    assert not result.ok and "ambiguous" in result.output and "lines 1, 4" in result.output
    assert text(ctx, "twice.py") == "a = 1\nb = 2\n\na = 1\nb = 2\n"


def test_one_wrong_outer_context_line_is_tolerated(ctx):
    (ctx.workspace.root / "n.txt").write_text("".join(f"{i}\n" for i in range(1, 13)))
    diff = "@@ -3,6 +3,7 @@\n X\n 6\n 7\n+7.5\n 8\n 9\n 10\n"
    assert patch(ctx, diff, path="n.txt").ok
    assert text(ctx, "n.txt").splitlines()[5:9] == ["6", "7", "7.5", "8"]


def test_a_diff_for_another_file_is_refused(ctx):
    diff = "--- a/other.py\n+++ b/other.py\n@@ ... @@\n-x\n+y\n"
    result = patch(ctx, diff)
    assert not result.ok and "other.py" in result.output and text(ctx) == SOURCE


def test_a_hunk_without_context_cannot_be_placed(ctx):
    result = patch(ctx, "@@ -3,0 +4 @@\n+    # a comment\n")
    assert not result.ok and "no context" in result.output


def test_creating_a_file_from_dev_null(ctx):
    diff = "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"
    result = patch(ctx, diff, path="pkg/new.py")
    assert result.ok, result.output
    assert text(ctx, "pkg/new.py") == "x = 1\ny = 2\n"


def test_codex_patch_format(ctx):
    diff = (
        "*** Begin Patch\n*** Update File: greet.py\n@@\n-        self.name = name\n"
        "+        self.name = name.title()\n*** End Patch\n"
    )
    assert patch(ctx, diff).ok
    assert "self.name = name.title()" in text(ctx)


def test_garbage_is_explained(ctx):
    result = patch(ctx, "please change the greeting")
    assert not result.ok and "no hunks" in result.output


def test_file_without_final_newline_keeps_it(ctx):
    (ctx.workspace.root / "nofinal.c").write_text("int a;\nint b;")
    assert patch(ctx, "@@ ... @@\n int a;\n-int b;\n+long b;\n", path="nofinal.c").ok
    assert text(ctx, "nofinal.c") == "int a;\nlong b;"
