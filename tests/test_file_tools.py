import os
import stat

import pytest

from hephaistus.testing.tools import run_tool
from hephaistus.tools import ToolContext, default_registry
from hephaistus.workspace import Workspace

TOOLS = default_registry()


@pytest.fixture
def ctx(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def add(a, b):\n    return a - b\n")
    return ToolContext(Workspace.at(root))


def call(ctx, tool, **args):
    return run_tool(ctx, tool, args)


def test_read_file_numbers_lines_and_records_the_read(ctx):
    result = call(ctx, "read_file", path="app.py")
    assert result.ok
    assert result.output == "1 def add(a, b):\n2     return a - b"
    assert result.read == ("app.py",) and result.changed == ()


def test_lines_are_counted_as_git_counts_them_by_every_tool(ctx):
    # A form feed (common in older C and Python sources) and U+2028 in a string break no line:
    # the numbers of read_file, search, edit_file and the diff all agree with git's.
    source = 'import os\n\x0c\ndef f():\n    s = "a\u2028b"\n    return 1\n'
    (ctx.workspace.root / "m.py").write_text(source)
    read = call(ctx, "read_file", path="m.py").output
    assert read.split("\n") == [
        "1 import os",
        "2 \x0c",
        "3 def f():",
        '4     s = "a\u2028b"',
        "5     return 1",
    ]
    assert call(ctx, "search", pattern="return 1").output.startswith("m.py:5: return 1")
    edited = call(ctx, "edit_file", path="m.py", old="    return 1\n", new="    return 2\n")
    assert "(5 lines): 'new' is at line 5" in edited.output
    assert "@@ -2,4 +2,4 @@\n \x0c\n" in edited.diff and "No newline" not in edited.diff
    tail = call(ctx, "read_file", path="m.py", start_line=4).output
    assert tail.startswith('4     s = "a\u2028b"\n5     return 2')


def test_a_named_pipe_is_refused_not_waited_on(ctx):
    import threading

    os.mkfifo(ctx.workspace.root / "pipe.txt")
    results = {}

    def use_it():
        for tool, args in [
            ("read_file", {}),
            ("edit_file", {"old": "a", "new": "b"}),
            ("append_file", {"content": "b"}),
        ]:
            results[tool] = call(ctx, tool, path="pipe.txt", **args)

    worker = threading.Thread(target=use_it, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "a tool blocked on the pipe"
    for result in results.values():
        assert not result.ok and "not a regular file" in result.output


def test_read_file_range_and_continuation_hint(ctx):
    (ctx.workspace.root / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    result = call(ctx, "read_file", path="long.txt", start_line=10, end_line=12)
    assert result.output.splitlines()[:3] == ["10 line 10", "11 line 11", "12 line 12"]
    assert "showing lines 10-12 of 100; read on with start_line=13" in result.output
    past = call(ctx, "read_file", path="long.txt", start_line=500)
    assert not past.ok and "only 100 lines" in past.output


def test_read_file_clips_to_the_observation_limit(ctx):
    ctx.observation_limit = 2000
    (ctx.workspace.root / "big.py").write_text(
        "".join(f"v{i} = {i}  # {'y' * 60}\n" for i in range(500))
    )
    result = call(ctx, "read_file", path="big.py")
    assert len(result.output.encode()) <= 2000
    assert "of 500; read on with start_line=" in result.output


def test_huge_files_are_read_in_part(ctx):
    line = "z" * 99 + "\n"
    (ctx.workspace.root / "huge.txt").write_text(line * 20_000)  # 2 MB
    first = call(ctx, "read_file", path="huge.txt")
    assert first.ok and first.output.startswith("1 zzz")
    assert "of ? (a 2.0 MB file); read on with start_line=" in first.output
    assert len(first.output) <= ctx.observation_limit
    late = call(ctx, "read_file", path="huge.txt", start_line=19_999)
    assert late.output.splitlines()[:2] == ["19999 " + "z" * 99, "20000 " + "z" * 99]


def test_binary_files_are_refused(ctx):
    (ctx.workspace.root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    result = call(ctx, "read_file", path="image.png")
    assert not result.ok and "binary" in result.output
    write = call(ctx, "edit_file", path="image.png", old="PNG", new="GIF")
    assert not write.ok and "binary" in write.output
    assert (ctx.workspace.root / "image.png").read_bytes().startswith(b"\x89PNG")


def test_non_utf8_files_are_refused_not_mangled(ctx):
    (ctx.workspace.root / "latin.txt").write_bytes("café\n".encode("latin-1"))
    assert "not UTF-8" in call(ctx, "read_file", path="latin.txt").output
    assert not call(ctx, "write_file", path="latin.txt", content="x").ok
    assert (ctx.workspace.root / "latin.txt").read_bytes() == "café\n".encode("latin-1")


def test_utf16_files_are_named_as_such(ctx):
    (ctx.workspace.root / "wide.txt").write_bytes("hi\n".encode("utf-16"))
    result = call(ctx, "read_file", path="wide.txt")
    assert not result.ok and "UTF-16" in result.output


def test_secret_files_are_not_read_or_searched(ctx):
    (ctx.workspace.root / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    assert "secret" in call(ctx, "read_file", path=".env").output
    result = call(ctx, "search", pattern="sk-secret")
    assert ".env:1" not in result.output and "1 secret files not searched" in result.output
    ctx.allow_secrets = True
    assert "sk-secret" in call(ctx, "read_file", path=".env").output


def test_search_reports_path_line_text(ctx):
    (ctx.workspace.root / "pkg").mkdir()
    (ctx.workspace.root / "pkg" / "m.py").write_text(
        "import os\n\ndef sub(a, b):\n    return a - b\n"
    )
    result = call(ctx, "search", pattern=r"return a [-+] b")
    assert result.output.splitlines() == ["app.py:2: return a - b", "pkg/m.py:4: return a - b"]
    only = call(ctx, "search", pattern="def", path="pkg")
    assert only.output == "pkg/m.py:3: def sub(a, b):"
    bad = call(ctx, "search", pattern="(unclosed")
    assert not bad.ok and "invalid regular expression" in bad.output
    assert "no matches" in call(ctx, "search", pattern="nothing_like_this").output


def test_search_caps_its_output(ctx):
    (ctx.workspace.root / "many.txt").write_text("hit\n" * 1000)
    result = call(ctx, "search", pattern="hit")
    assert len(result.output.splitlines()) == 201
    assert "more than 200 matches" in result.output


def test_list_files_shows_sizes(ctx):
    result = call(ctx, "list_files")
    assert result.output == "app.py (32 B)"
    assert not call(ctx, "list_files", path="../").ok


def test_write_file_creates_folders_and_reports_a_diff(ctx):
    result = call(ctx, "write_file", path="pkg/new.py", content="x = 1\n")
    assert result.ok and result.diff.startswith("--- /dev/null\n+++ b/pkg/new.py")
    assert (ctx.workspace.root / "pkg" / "new.py").read_text() == "x = 1\n"
    assert [(c.path, c.created) for c in result.changed] == [("pkg/new.py", True)]


def test_writes_keep_crlf_bom_and_mode(ctx):
    path = ctx.workspace.root / "win.py"
    path.write_bytes(b"\xef\xbb\xbfa = 1\r\nb = 2\r\n")
    path.chmod(0o755)
    assert call(ctx, "edit_file", path="win.py", old="b = 2", new="b = 3\nc = 4").ok
    assert path.read_bytes() == b"\xef\xbb\xbfa = 1\r\nb = 3\r\nc = 4\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    assert [p.name for p in path.parent.iterdir() if "heph-tmp" in p.name] == []


def test_write_outside_or_into_git_is_refused_and_writes_nothing(ctx, tmp_path):
    (ctx.workspace.root / ".git").mkdir()
    for path in ("../evil.py", str(tmp_path / "evil.py"), ".git/hooks/pre-commit", ".heph/x"):
        result = call(ctx, "write_file", path=path, content="boom")
        assert not result.ok, path
    assert not (tmp_path / "evil.py").exists()
    assert not (ctx.workspace.root / ".git" / "hooks").exists()


def test_append_file_adds_a_missing_line_break(ctx):
    (ctx.workspace.root / "notes.txt").write_text("one")
    assert call(ctx, "append_file", path="notes.txt", content="two\n").ok
    assert (ctx.workspace.root / "notes.txt").read_text() == "one\ntwo\n"
    assert call(ctx, "append_file", path="fresh.txt", content="hi\n").ok
    assert (ctx.workspace.root / "fresh.txt").read_text() == "hi\n"


def test_edit_file_exact_unique_match(ctx):
    result = call(ctx, "edit_file", path="app.py", old="a - b", new="a + b")
    assert result.ok and "-    return a - b\n+    return a + b" in result.diff
    assert (ctx.workspace.root / "app.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_edit_file_refuses_ambiguous_and_missing_snippets(ctx):
    (ctx.workspace.root / "dup.py").write_text("x = 1\ny = 2\nx = 1\n")
    twice = call(ctx, "edit_file", path="dup.py", old="x = 1", new="x = 3")
    assert not twice.ok and "occurs 2 times" in twice.output and "lines 1, 3" in twice.output
    missing = call(ctx, "edit_file", path="dup.py", old="z = 9", new="z = 1")
    assert not missing.ok and "not found" in missing.output
    assert not call(ctx, "edit_file", path="nope.py", old="a", new="b").ok
    assert (ctx.workspace.root / "dup.py").read_text() == "x = 1\ny = 2\nx = 1\n"
    assert twice.changed == missing.changed == () and missing.target == "dup.py"


def test_unchanged_content_writes_nothing(ctx):
    before = os.stat(ctx.workspace.root / "app.py").st_mtime_ns
    result = call(ctx, "write_file", path="app.py", content="def add(a, b):\n    return a - b\n")
    assert result.ok and "nothing written" in result.output
    assert os.stat(ctx.workspace.root / "app.py").st_mtime_ns == before


def test_approval_decisions(ctx):
    args = {"path": "a.py", "content": "1\n"}
    refused = run_tool(ctx, "write_file", args, mode="ask")  # no one to ask
    assert not refused.ok and refused.refused and "write not approved" in refused.output
    assert "write_file: ask mode asks before writing files" in refused.output
    declined = run_tool(ctx, "write_file", args, mode="ask", asker=lambda proposal: "no")
    assert not declined.ok and not declined.refused and "declined" in declined.output
    skipped = run_tool(ctx, "write_file", args, mode="auto", dry_run=True)
    assert skipped.ok and "dry run" in skipped.output and skipped.diff
    assert not (ctx.workspace.root / "a.py").exists()


def test_rewriting_python_drops_its_stale_bytecode(ctx):
    import py_compile

    source = ctx.workspace.root / "calc.py"
    source.write_text("VALUE = 1\n")
    py_compile.compile(str(source))  # what an import writes: __pycache__/calc.<tag>.pyc
    assert list((ctx.workspace.root / "__pycache__").glob("calc.*.pyc"))
    assert call(ctx, "edit_file", path="calc.py", old="1", new="2").ok  # same size, same second
    assert not list((ctx.workspace.root / "__pycache__").glob("calc.*.pyc"))


def test_a_catastrophic_pattern_is_stopped_and_says_so(ctx):
    (ctx.workspace.root / "a.txt").write_text("a" * 40 + "b\n")
    (ctx.workspace.root / "b.txt").write_text("aaa\n")
    ctx.search_seconds = 0.3
    result = call(ctx, "search", pattern="(a|aa)+$")
    assert result.ok and "search stopped after 0.3 s" in result.output


def test_a_file_that_is_one_huge_line_is_read_in_bounded_memory(ctx):
    import tracemalloc

    with (ctx.workspace.root / "one_line.min.js").open("w") as handle:
        for _ in range(50):
            handle.write("x" * 100_000)  # 5 MB, no line break
    tracemalloc.start()
    result = call(ctx, "read_file", path="one_line.min.js")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert result.ok and len(result.output.encode()) <= ctx.observation_limit
    assert "line 1 is cut" in result.output
    assert peak < 2_000_000


def test_a_long_line_in_a_small_file_is_cut_to_fit(ctx):
    ctx.observation_limit = 2000
    (ctx.workspace.root / "wide.txt").write_text("short\n" + "y" * 50_000 + "\nend\n")
    result = call(ctx, "read_file", path="wide.txt")
    assert result.output.startswith("1 short\n[showing lines 1-1 of 3; read on with start_line=2]")
    result = call(ctx, "read_file", path="wide.txt", start_line=2)
    assert result.ok and len(result.output.encode()) <= 2000
    assert result.output.startswith("2 yyy") and "line 2 is cut here: 48,200 more" in result.output
