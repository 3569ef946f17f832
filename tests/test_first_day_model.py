"""A person's first day with heph and a small local model: the window and the steps. A task in an
84-file repository runs in llama-cpp-python's default 2,048-token window (the map shrinks to the
window; after an overflow the retry's reply cap fits, with a margin for the estimate's error), a
busy server keeps the step's schema it enforced before, and a link heph cannot follow is left
out, never a traceback. Each test runs heph for real in a cloned repository against the loopback
server, which behaves as the real server does."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from test_hostile_repo import clone, person

from conftest import has_git
from hephaistus.records.session import load_session
from hephaistus.testing import act, final
from hephaistus.testing import server_flavours as flavours

pytestmark = pytest.mark.skipif(not has_git(), reason="needs git")

WINDOW = 2048  # llama-cpp-python's default n_ctx
UNDER = 1.25  # the server counts a quarter more tokens than heph's estimate


def eighty_four_files() -> dict[str, str]:
    """A project of 84 files: seven packages of eleven modules (functions and a class each),
    their tests, and the usual files at the top."""
    files = {
        "README.md": "# shop\n\nA small shop.\n",
        "pyproject.toml": '[project]\nname = "shop"\n',
    }
    for package in range(7):
        files[f"shop/part{package}/__init__.py"] = ""
        for module in range(10):
            body = "".join(
                f"def compute_{module}_{n}(order, discount_rate, tax_table):\n"
                f"    return order.total * (1 - discount_rate) + tax_table[{n}]\n\n\n"
                for n in range(24 if (package, module) == (0, 0) else 4)
            )
            body += f"class Ledger{package}{module}:\n    def post(self, entry):\n        pass\n"
            files[f"shop/part{package}/module_{module}.py"] = body
    for test in range(5):
        files[f"tests/test_part{test}.py"] = "".join(
            f"def test_compute_{n}_keeps_the_total():\n    assert compute(order({n})) == {n}\n\n"
            for n in range(6)
        )
    assert len(files) == 84
    return files


def sessions(root: Path):
    return [load_session(p) for p in sorted((root / ".heph" / "sessions").glob("*.jsonl"))]


def malformed(root: Path) -> list[str]:
    return [s.output for r in sessions(root) for s in r.spans if s.name == "malformed_reply"]


# -- 10. a small window: the map shrinks, and the retry after an overflow fits -------------------


def test_a_task_in_an_84_file_repository_runs_in_llama_cpp_pythons_default_window(
    heph, chat_server, home, tmp_path
):
    chat_server.flavour = flavours.get("llama-cpp-python")  # says nothing of its window
    chat_server.context_window = WINDOW
    chat_server.tokens_per_estimate = UNDER
    root = clone(tmp_path, eighty_four_files())
    # One reply may be lost to the learning (a reply the window cut): the read comes again.
    chat_server.reply(act("read_file", path="shop/part0/module_0.py"))
    chat_server.reply(act("read_file", path="shop/part0/module_0.py"))
    chat_server.reply(final("module_0 computes order totals"))
    result = heph(
        "-m", "smollm2", "explain shop/part0/module_0.py", cwd=root, env=person(home, chat_server)
    )
    assert result.code == 0, result.stderr
    sent = chat_server.requests
    # The window is learned once: from the server's error for a prompt too large, or from a
    # reply it cut where the window ended (which of the two comes first depends on how much of
    # the window heph's own prompt takes).
    learned = "did not fit" in result.stderr or "the window ended the reply" in result.stderr
    assert learned and result.stderr.count("now using context window 2,048") == 1, result.stderr
    # What did not fit (the prompt and its reply cap, by the server's count) is the first one
    # or two requests, before the window was learned; from then on every request fits.
    over = [
        i
        for i, body in enumerate(sent)
        if flavours.prompt_tokens(body, UNDER) + body["max_tokens"] > WINDOW
    ]
    assert 1 <= len(over) <= 2 and over == list(range(len(over))), over
    assert sent[-1]["messages"][-1]["content"].startswith("Observation: ")


def test_a_reply_the_window_cut_short_teaches_the_window(heph, chat_server, home, tmp_path):
    chat_server.flavour = flavours.get("llama-cpp-python")  # cuts a reply where the window ends
    chat_server.context_window = WINDOW
    root = clone(tmp_path, eighty_four_files())
    chat_server.reply(final("the shop"), run_on=True)  # a small model running on
    chat_server.reply(final("a shop"))
    result = heph("-m", "smollm2", "what is this project?", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    first, second = chat_server.requests
    room = WINDOW - flavours.prompt_tokens(first)
    assert first["max_tokens"] > room  # the window was not known: the server cut the reply
    told = second["messages"][-1]["content"]
    assert "cut off where the model's context window ended" in told
    assert "reply limit" not in told
    assert "context window 2,048 tokens (from where the server cut a reply short)" in result.stderr
    assert flavours.prompt_tokens(second) + second["max_tokens"] <= WINDOW
    chat_server.models = ("smollm2",)
    listed = heph("models", "--json", cwd=root, env=person(home, chat_server))
    assert listed.json["models"][0]["window"] == WINDOW  # heph models shows what was learned


def test_a_reply_cap_the_person_set_never_takes_the_whole_window(heph, chat_server, home, tmp_path):
    chat_server.flavour = flavours.get("llama.cpp")
    chat_server.context_window = WINDOW
    root = clone(tmp_path, {"app.py": "x = 1\n"})
    env = person(home, chat_server)
    config = home / ".config" / "hephaistus" / "config.toml"
    config.write_text(config.read_text() + "max_reply_tokens = 2048\n")
    chat_server.reply(final("x is one"))
    result = heph("what is x?", cwd=root, env=env)
    assert result.code == 0, result.stderr
    assert chat_server.requests[0]["max_tokens"] == WINDOW // 2


def test_the_map_shrinks_to_a_small_window_the_server_names(heph, chat_server, home, tmp_path):
    chat_server.flavour = flavours.get("llama.cpp")  # says n_ctx in /props
    chat_server.context_window = WINDOW
    root = clone(tmp_path, eighty_four_files())
    chat_server.reply(final("a shop"))
    result = heph("-v", "what is this project?", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    assert "context window 2,048 tokens (from the server (llama.cpp n_ctx))" in result.stderr
    task = chat_server.requests[0]["messages"][1]["content"]
    workspace_map = task.split("<workspace>\n", 1)[1].split("\n</workspace>", 1)[0]
    assert "shop/part0/module_0.py" in workspace_map and "files, " in workspace_map  # cut short
    sent = chat_server.requests[0]
    assert flavours.prompt_tokens(sent) + sent["max_tokens"] <= WINDOW
    assert "compacted" not in result.stderr


# -- 24. a busy server keeps the schema it enforced; a final message is never empty -------------


@pytest.mark.parametrize("before", ["in another workspace", "here, over a week ago"])
def test_a_busy_server_that_enforced_the_schema_before_still_gets_it(
    heph, chat_server, home, tmp_path, monkeypatch, before
):
    from hephaistus.model import serverinfo
    from hephaistus.workspace.provenance import read_cache, write_cache

    chat_server.flavour = flavours.get("llama-cpp-python")
    root = clone(tmp_path, {"app.py": "def add(a, b):\n    return a + b\n"})
    earlier = tmp_path / "other" if before == "in another workspace" else root
    earlier.mkdir(exist_ok=True)
    env = person(home, chat_server)
    chat_server.reply(final("one"))
    assert heph("say hello", cwd=earlier, env=env).code == 0
    assert "schema" in chat_server.requests[-1]["response_format"]  # the probe said what it is
    if before == "here, over a week ago":
        cache = root / ".heph" / "cache" / "windows.json"
        known = read_cache(cache, "windows")
        for entry in known.values():
            entry[2] = time.time() - 8 * 86400
        write_cache(cache, "windows", known)
    monkeypatch.setattr(serverinfo, "ASK_SECONDS", 0.2)
    chat_server.busy(0.5, times=2)  # busy with a request the last run left running
    chat_server.reply(final("two"))
    asked = len(chat_server.seen)
    result = heph("say hello again", cwd=root, env=env)
    assert result.code == 0, result.stderr
    sent = chat_server.requests[-1]["response_format"]
    assert sent["type"] == "json_object" and "anyOf" in sent["schema"]
    probes = [path for method, path, _ in chat_server.seen[asked:] if method == "GET"]
    assert probes[:2] == ["/v1/models", "/v1/models"]  # asked once more after the timeout


def test_the_schema_takes_no_empty_final_message(heph, chat_server, home, tmp_path):
    import jsonschema

    chat_server.flavour = flavours.get("llama-cpp-python")  # enforces the schema it is sent
    root = clone(tmp_path, {"app.py": "x = 1\n"})
    chat_server.reply(final("")).reply(final("x is one"))
    result = heph("what is x?", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    schema = chat_server.requests[0]["response_format"]["schema"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"thought": "t", "final": {"message": ""}}, schema)
    assert malformed(root) == []


# -- 9. a link heph cannot follow is left out ----------------------------------------------------


@pytest.mark.parametrize("target", ["/proc/1/cwd", "/proc/1/root/etc", "bad"])
def test_a_link_heph_cannot_follow_is_left_out_of_every_listing(
    heph, chat_server, home, tmp_path, target
):
    root = clone(tmp_path, {"app.py": "x = 1\n", "src/core.py": "def core():\n    pass\n"})
    os.symlink("/proc/1/cwd", root / "bad")
    if target != "bad":
        os.symlink(target, root / "src" / "there")
    chat_server.reply(act("list_files"))
    chat_server.reply(act("search", pattern="core"))
    chat_server.reply(act("read_file", path="bad/etc/hostname"))
    chat_server.reply(final("done"))
    result = heph("--yes", "look around", cwd=root, env=person(home, chat_server))
    assert result.code == 0, result.stderr
    assert "Traceback" not in result.stderr and "PermissionError" not in result.stderr
    listing, found, read = (body["messages"][-1]["content"] for body in chat_server.requests[1:4])
    assert "app.py" in listing and "bad" not in listing and "there" not in listing
    assert "src/core.py:1:" in found
    assert read.startswith("Observation: ") and "denied" not in read.lower()
    assert "<workspace>" in chat_server.requests[0]["messages"][1]["content"]


def test_a_workspace_at_the_root_of_the_file_system_lists_without_a_traceback():
    from hephaistus.workspace import Workspace

    workspace = Workspace.at("/")
    files = workspace.without_secrets(workspace.files())  # what the map lists, read only
    assert files and "proc/1/cwd" not in files and "proc/1/root" not in files
