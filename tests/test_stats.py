"""heph stats: per model, from the session files alone."""

from hephaistus.testing import act, final


def test_stats_per_model(heph, chat_server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    chat_server.reply("not json")
    chat_server.reply(act("edit_file", path="a.py", old="nothing like this", new="y"))
    chat_server.reply(act("edit_file", path="a.py", old="x = 1", new="x = 2"))
    chat_server.reply(final("done"), usage={"prompt_tokens": 100, "completion_tokens": 10})
    assert heph("--yes", "-m", "model-a", "edit").code == 0
    chat_server.reply(final("hello"), usage={"prompt_tokens": 50, "completion_tokens": 5})
    assert heph("-m", "model-b", "hi").code == 0
    data = {m["model"]: m for m in heph("stats", "--json").json["models"]}
    a, b = data["model-a"], data["model-b"]
    assert (a["sessions"], a["answered"], a["steps"], a["malformed"]) == (1, 1, 4, 1)
    assert a["well_formed_rate"] == 0.75
    assert (a["edits"], a["edits_applied"], a["edit_success_rate"]) == (2, 1, 0.5)
    assert (b["steps"], b["prompt_tokens"], b["completion_tokens"]) == (1, 50, 5)
    assert b["edit_success_rate"] is None
    table = heph("stats").stdout.splitlines()
    assert table[0].split()[:3] == ["MODEL", "SESSIONS", "ANSWERED"]
    assert any(
        line.startswith("model-a") and "75%" in line and "50% of 2" in line for line in table
    )


def test_stats_without_sessions(heph):
    result = heph("stats")
    assert result.code == 0 and "no sessions recorded yet" in result.stderr


def test_previewed_writes_are_not_counted_as_edits(heph_main, chat_server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    chat_server.reply(act("edit_file", path="a.py", old="x = 1", new="x = 2"))
    chat_server.reply(final("done"))
    assert heph_main("--dry-run", "-m", "model-c", "edit").code == 0
    data = {m["model"]: m for m in heph_main("stats", "--json").json["models"]}
    assert data["model-c"]["edits"] == 0 and data["model-c"]["steps"] == 2


def test_replay_tells_memos_apart(heph_main, workspace):
    from hephaistus.records.session import Memo, SessionStore

    session = SessionStore(workspace / ".heph" / "sessions").create(task="t", model="m")
    session.record("MEMO", Memo.COMPACTION, "9000 -> 4000")
    session.record("MEMO", Memo.MALFORMED_REPLY, "no JSON object")
    session.record("MEMO", Memo.DOCS_WRITTEN, "a.py: f, g")
    session.end("answered", 0, "ok")
    shown = heph_main("replay", "last")
    text = shown.stdout + shown.stderr
    assert "compacted the conversation (9000 -> 4000 tokens)" in text
    assert "malformed reply: no JSON object" in text
    assert "docstrings written: a.py: f, g" in text
    assert text.count("malformed") == 1


def test_sessions_keep_their_ids_whole_and_pipes_get_no_padding(heph_main, workspace):
    from rich.console import Console

    from hephaistus.records.analytics import session_rows
    from hephaistus.records.session import SessionStore
    from hephaistus.ui.tables import sessions_table

    store = SessionStore(workspace / ".heph" / "sessions")
    for task in ("short", "a much longer task " * 40):
        session = store.create(task=task, model="m", workspace=str(workspace))
        session.end("answered", 0, "ok")
    narrow = Console(width=60, record=True, force_terminal=True)
    narrow.print(sessions_table(session_rows(store, 10)))
    shown = narrow.export_text()
    for session_id in store.ids():
        assert session_id in shown  # copyable into `heph replay`
    piped = heph_main("sessions")
    lines = piped.stdout.splitlines()
    assert all(line == line.rstrip() for line in lines)
    assert len(piped.stdout) < 2000


def test_a_narrow_terminal_leaves_out_started_before_the_task(workspace):
    from rich.console import Console

    from hephaistus.records.analytics import session_rows
    from hephaistus.records.session import SessionStore
    from hephaistus.ui.tables import sessions_table

    store = SessionStore(workspace / ".heph" / "sessions")
    task = "fix the failing test in app.py and explain at length why it failed " * 3
    session = store.create(task=task, mode="edits", dry_run=True)
    session.end("answered", 0, "ok")
    shown = {}
    for width in (80, 100, 140):
        console = Console(width=width, record=True, force_terminal=True)
        console.print(sessions_table(session_rows(store, 10)))
        shown[width] = console.export_text()
    for width in (80, 100):  # every other column whole; the task cut, with an ellipsis
        header = shown[width].splitlines()[0].split()
        assert header == ["ID", "MODE", "STEPS", "TOKENS", "OUTCOME", "TASK"], shown[width]
        assert "answered" in shown[width] and "fix the" in shown[width] and "…" in shown[width]
    assert "STARTED" in shown[140] and "edits (dry)" in shown[140]
    assert store.ids()[0] in shown[100]
    assert [row.dry_run for row in session_rows(store, 10)] == [True]
