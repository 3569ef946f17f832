"""A person's first day with heph, where writes meet the person's own work: a whole-file write
never lands on content the model has not seen (the person's edit made meanwhile, another run's
edit, a file never read), and a read-only file stays as it is. Each test runs heph for real in
a cloned repository against the loopback server."""

from __future__ import annotations

import stat
from collections.abc import Callable
from typing import Any

import pytest
from test_hostile_repo import KEY, clone, person

from conftest import has_git
from hephaistus.runtime.sandbox import unavailable
from hephaistus.testing import ChatServer, act, final

WHY_NOT = unavailable()

pytestmark = pytest.mark.skipif(not has_git(), reason="needs git")

UTILS = "def shout(s):\n    return s.upper()\n"
REWRITTEN = "def shout(s):\n    return s.upper() + '!'\n"
USERS_LINE = "# USER'S OWN EDIT\n"


def replies_then(server: ChatServer, *steps: dict[str, Any] | Callable[[], dict[str, Any]]) -> None:
    """Answer with `steps` in order, a callable one being called (the person acting while the
    model thinks) just as the model is asked for that step."""
    queue = list(steps)

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        step = queue.pop(0) if queue else final("done")
        return step() if callable(step) else step

    server.responder = respond


def observations(server: ChatServer) -> list[str]:
    """What the model was told after each of its actions, in order."""
    said = []
    for request in server.requests[1:]:
        last = request["messages"][-1]["content"]
        said.append(last if isinstance(last, str) else str(last))
    return said


def test_a_write_after_the_person_edited_the_file_keeps_their_line(
    heph, chat_server, home, tmp_path
):
    root = clone(tmp_path, {"app/utils.py": UTILS})
    utils = root / "app" / "utils.py"

    def person_edits() -> dict[str, Any]:
        with utils.open("a") as file:  # echo "# USER'S OWN EDIT" >> app/utils.py
            file.write(USERS_LINE)
        return act("write_file", path="app/utils.py", content=REWRITTEN)

    replies_then(chat_server, act("read_file", path="app/utils.py"), person_edits, final("done"))
    result = heph("--yes", "make shout louder", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    assert utils.read_text() == UTILS + USERS_LINE
    told = observations(chat_server)[1]
    assert "changed since you last read it" in told and "read it again" in told


def test_a_file_never_read_is_not_replaced_whole(heph, chat_server, home, tmp_path):
    root = clone(tmp_path, {"app/utils.py": UTILS})
    replies_then(chat_server, act("write_file", path="app/utils.py", content=REWRITTEN))
    result = heph("--yes", "make shout louder", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    assert (root / "app" / "utils.py").read_text() == UTILS
    told = observations(chat_server)[0]
    assert "not read app/utils.py in this conversation" in told and "read it again" in told


def test_a_patch_that_creates_a_file_which_exists_replaces_it_only_once_read(
    heph, chat_server, home, tmp_path
):
    root = clone(tmp_path, {"notes.txt": "one\ntwo\n"})
    diff = "--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+three\n"
    chat_server.reply(act("patch_file", path="notes.txt", diff=diff))
    chat_server.reply(act("read_file", path="notes.txt"))
    chat_server.reply(act("patch_file", path="notes.txt", diff=diff))
    chat_server.reply(final("done"))
    result = heph("--yes", "rewrite the notes", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    assert (root / "notes.txt").read_text() == "three\n"
    assert "read it again" in observations(chat_server)[0]


def test_another_runs_edit_between_a_read_and_a_write_is_kept(
    heph, heph_process, chat_server, home, tmp_path
):
    root = clone(tmp_path, {"app/utils.py": UTILS})
    env = {**person(home, chat_server), "HEPH_TIMEOUT": "60"}  # run A waits for run B
    utils = root / "app" / "utils.py"
    runs_b = []
    with ChatServer() as other:
        other.reply(act("edit_file", path="app/utils.py", old="s.upper()", new="s.upper()  # B"))
        other.reply(final("edited"))

        def run_b_edits() -> dict[str, Any]:
            b_env = {**env, "OPENAI_BASE_URL": other.url}
            runs_b.append(heph_process("--yes", "mark the return", cwd=root, env=b_env))
            return act("write_file", path="app/utils.py", content=REWRITTEN)

        replies_then(chat_server, act("read_file", path="app/utils.py"), run_b_edits)
        result = heph("--yes", "make shout louder", cwd=root, env=env)  # run A
    assert result.code == 0, result.stderr
    assert runs_b[0].code == 0, runs_b[0].stderr
    assert utils.read_text() == UTILS.replace("s.upper()", "s.upper()  # B")
    assert "read it again" in observations(chat_server)[1]


def test_what_was_read_counts_in_the_continued_conversation_not_in_a_new_one(
    heph, chat_server, home, tmp_path
):
    root = clone(tmp_path, {"app/utils.py": UTILS, "app/other.py": UTILS})
    env = person(home, chat_server)
    chat_server.reply(act("read_file", path="app/utils.py"))
    chat_server.reply(act("read_file", path="app/other.py"))
    chat_server.reply(final("read them"))
    assert heph("--yes", "look", cwd=root, env=env).code == 0
    chat_server.reply(act("write_file", path="app/utils.py", content=REWRITTEN))
    chat_server.reply(final("done"))
    assert heph("--yes", "-c", "make it louder", cwd=root, env=env).code == 0
    assert (root / "app" / "utils.py").read_text() == REWRITTEN
    chat_server.reply(act("write_file", path="app/other.py", content=REWRITTEN))
    chat_server.reply(final("done"))
    assert heph("--yes", "make the other louder", cwd=root, env=env).code == 0  # a new one
    assert (root / "app" / "other.py").read_text() == UTILS


def test_files_the_model_wrote_itself_count_as_seen(heph, chat_server, home, tmp_path):
    root = clone(tmp_path, {"app/utils.py": UTILS})
    chat_server.reply(act("write_file", path="app/new.py", content="x = 1\n"))
    chat_server.reply(act("write_file", path="app/new.py", content="x = 2\n"))
    chat_server.reply(act("read_file", path="app/utils.py"))
    chat_server.reply(act("edit_file", path="app/utils.py", old="upper", new="lower"))
    chat_server.reply(act("write_file", path="app/utils.py", content=REWRITTEN))
    chat_server.reply(final("done"))
    result = heph("--yes", "work", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    assert (root / "app" / "new.py").read_text() == "x = 2\n"
    assert (root / "app" / "utils.py").read_text() == REWRITTEN
    assert not any("read it again" in said for said in observations(chat_server))


def test_an_edit_of_a_file_never_read_does_not_make_it_seen(heph, chat_server, home, tmp_path):
    root = clone(tmp_path, {"app/utils.py": UTILS})
    chat_server.reply(act("edit_file", path="app/utils.py", old="upper", new="lower"))
    chat_server.reply(act("write_file", path="app/utils.py", content=REWRITTEN))
    chat_server.reply(final("done"))
    assert heph("--yes", "work", cwd=root, env=person(home, chat_server)).code == 0
    assert (root / "app" / "utils.py").read_text() == UTILS.replace("upper", "lower")
    assert "read it again" in observations(chat_server)[1]


@pytest.mark.parametrize(
    "action",
    [
        act("write_file", path="app/utils.py", content=REWRITTEN),
        act("edit_file", path="app/utils.py", old="upper", new="lower"),
        act("append_file", path="app/utils.py", content="# more\n"),
    ],
    ids=["write_file", "edit_file", "append_file"],
)
def test_a_file_without_write_permission_is_refused_not_replaced(
    heph, chat_server, home, tmp_path, action
):
    root = clone(tmp_path, {"app/utils.py": UTILS})
    utils = root / "app" / "utils.py"
    utils.chmod(0o444)
    chat_server.reply(act("read_file", path="app/utils.py"))
    chat_server.reply(action)
    chat_server.reply(final("done"))
    result = heph("--yes", "change utils", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    assert utils.read_text() == UTILS
    assert stat.S_IMODE(utils.stat().st_mode) == 0o444
    told = observations(chat_server)[1]
    assert "app/utils.py is read-only" in told and "chmod u+w" in told


def test_the_write_checks_the_file_again_just_before_its_rename(tmp_path):
    from hephaistus.textfile import Changed, atomic_write, digest_of

    path = tmp_path / "utils.py"
    path.write_text(UTILS + USERS_LINE)  # written after heph read UTILS
    with pytest.raises(Changed):
        atomic_write(path, REWRITTEN.encode(), real=True, expected=digest_of(UTILS.encode()))
    assert path.read_text() == UTILS + USERS_LINE
    with pytest.raises(Changed):  # a file that appeared since heph found none
        atomic_write(path, REWRITTEN.encode(), real=True, expected="")
    path.chmod(0o444)
    with pytest.raises(PermissionError):
        atomic_write(path, REWRITTEN.encode(), real=True, expected=digest_of(path.read_bytes()))
    assert path.read_text() == UTILS + USERS_LINE
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


# -- edit_file: an exact, unique snippet inside a line -----------------------------------------

REPLACE = ".replace('-', '_')"
NORMALISE = f"def normalise(s):\n    return s.lower(){REPLACE}\n"


@pytest.mark.parametrize(
    "old, new, expected",
    [
        ("return s.lower()", "return s.casefold()", f"    return s.casefold(){REPLACE}"),
        ("s.lower().replace(", "s.casefold().replace(", f"    return s.casefold(){REPLACE}"),
        (
            "return s.lower().replace('-',",
            "return s.replace('.',",
            "    return s.replace('.', '_')",
        ),
    ],
)
def test_an_exact_unique_snippet_after_the_indentation_ending_mid_line_is_replaced(
    heph, chat_server, home, tmp_path, old, new, expected
):
    root = clone(tmp_path, {"app/text.py": NORMALISE})
    chat_server.reply(act("edit_file", path="app/text.py", old=old, new=new))
    chat_server.reply(final("done"))
    result = heph("--yes", "use casefold", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    said = observations(chat_server)[0]
    assert (root / "app" / "text.py").read_text() == f"def normalise(s):\n{expected}\n", said
    assert "'new' is at line 2 as sent, nothing else changed" in said


# -- search: large files, other encodings, files it cannot search ------------------------------


def test_search_finds_lines_in_large_and_non_utf8_files_and_names_what_it_skipped(
    heph, chat_server, home, tmp_path
):
    root = clone(tmp_path, {"app.py": "x = 1\n"})
    with (root / "big.log").open("w") as log:  # 3 MB, the line near its end
        for number in range(60_000):
            log.write(f"request {number} took 12 ms\n")
        log.write("ERROR needle-in-the-log\n")
    (root / "legacy.txt").write_bytes("café = 'needle-latin1'\n".encode("latin-1"))
    (root / "logo.bin").write_bytes(b"\x89PNG\0\0needle-binary")
    (root / "notes.txt").write_bytes("needle-utf16\n".encode("utf-16"))
    for pattern, path in [
        ("needle-in-the", "."),
        ("needle-in-the", "big.log"),
        ("needle-latin1", "."),
        ("needle-binary", "logo.bin"),
        ("needle-nowhere", "."),
    ]:
        chat_server.reply(act("search", pattern=pattern, path=path))
    chat_server.reply(final("done"))
    result = heph("search the logs", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    walked, named, latin1, binary, nowhere = observations(chat_server)[:5]
    assert "big.log:60001: ERROR needle-in-the-log" in walked
    assert "big.log:60001: ERROR needle-in-the-log" in named
    assert "legacy.txt:1: caf\ufffd = 'needle-latin1'" in latin1
    assert "legacy.txt is not UTF-8" in latin1
    assert "no matches" not in binary and "logo.bin is a binary file" in binary
    assert "no matches for 'needle-nowhere'" in nowhere
    assert "not searched: 1 binary file (logo.bin), 1 UTF-16 file (notes.txt)" in nowhere


def test_search_reads_a_huge_one_line_file_in_bounded_memory(tmp_path):
    import tracemalloc

    from hephaistus.testing.tools import run_tool
    from hephaistus.tools import ToolContext
    from hephaistus.workspace import Workspace

    root = tmp_path / "ws"
    root.mkdir()
    with (root / "bundle.min.js").open("w") as handle:
        for _ in range(200):
            handle.write("x" * 100_000)  # 20 MB, no line break
        handle.write("needle\n")
    ctx = ToolContext(Workspace.at(root))
    tracemalloc.start()
    result = run_tool(ctx, "search", {"pattern": "needle"})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert result.ok and "bundle.min.js:1: " in result.output, result.output
    assert peak < 8_000_000


# -- pass_env: a glob never hands over the model's key or a credential ----------------------

PASSED_ENV = '[\n  "*",\n  "NPM_TOKEN",\n  "OPENAI_API_KEY",\n]'


@pytest.mark.skipif(WHY_NOT is not None, reason=f"no sandbox here: {WHY_NOT}")
def test_a_pass_env_glob_passes_no_credential_and_never_the_models_key(
    heph, chat_server, home, tmp_path
):
    root = clone(tmp_path, {".heph.toml": f"pass_env = {PASSED_ENV}\n", "app.py": "x = 1\n"})
    env = {
        **person(home, chat_server),  # OPENAI_API_KEY and GITHUB_TOKEN
        "DB_PASSWORD": "hunter2-hunter2",
        "KEY_COPY": KEY,  # a variable holding the model's key under another name
        "NPM_TOKEN": "npm_" + "n" * 36,  # named exactly: the person shares it
        "DJANGO_SETTINGS_MODULE": "site.settings",
    }
    chat_server.reply(act("shell", command="env > seen.txt"))
    chat_server.reply(final("done"))
    result = heph("--trust", "--yes", "show the environment", cwd=root, env=env)
    assert result.code == 0, result.stderr
    seen = dict(
        line.split("=", 1) for line in (root / "seen.txt").read_text().splitlines() if "=" in line
    )
    assert "DJANGO_SETTINGS_MODULE" in seen and seen.get("NPM_TOKEN") == env["NPM_TOKEN"]
    for name in ("OPENAI_API_KEY", "KEY_COPY", "GITHUB_TOKEN", "DB_PASSWORD"):
        assert name not in seen, name
    assert KEY not in (root / "seen.txt").read_text()
