import json

import pytest

from hephaistus.records.session import SessionStore, load_session


@pytest.fixture
def store(tmp_path):
    return SessionStore(tmp_path / "sessions")


def test_spans_are_on_disk_as_soon_as_they_end(store):
    session = store.create(task="t", model="m")
    session.record("INPUT", "task", "t")
    with session.span("LLM", "m", {"step": 1}) as span:
        span.output = "reply"
        span.usage = {"prompt_tokens": 10, "completion_tokens": 2}
    lines = session.path.read_text().splitlines()  # not closed yet, already readable
    records = [json.loads(line) for line in lines]
    assert [r["type"] for r in records] == ["session", "span", "span"]
    assert records[0]["version"] == 2 and records[0]["task"] == "t"
    llm = records[2]
    assert llm["kind"] == "LLM" and llm["usage"]["prompt_tokens"] == 10
    assert llm["end"] >= llm["start"]
    session.end("answered", 0, "ok")
    recorded = load_session(session.path)
    assert recorded.outcome == "answered" and recorded.end["usage"]["prompt_tokens"] == 10
    assert recorded.end["steps"] == 1


def test_a_failing_span_is_recorded_as_failed(store):
    session = store.create(task="t")
    with pytest.raises(RuntimeError):
        with session.span("TOOL", "read_file", {"path": "x"}):
            raise RuntimeError("disk on fire")
    recorded = load_session(session.path)
    assert recorded.spans[0].ok is False and recorded.spans[0].error == "disk on fire"
    assert recorded.end is None and recorded.outcome == "unfinished"


def test_a_span_ctrl_c_ended_says_it_was_cancelled(store):
    session = store.create(task="t")
    with pytest.raises(KeyboardInterrupt):
        with session.span("TOOL", "write_file", {"path": "x"}):
            raise KeyboardInterrupt
    assert load_session(session.path).spans[0].error == "cancelled (Ctrl-C)"


def test_a_line_cut_by_a_crash_is_skipped(store):
    session = store.create(task="t")
    session.message({"role": "user", "content": "hi"})
    with session.path.open("a") as handle:
        handle.write('{"type": "span", "kind": "LL')
    recorded = load_session(session.path)
    assert recorded.messages == [{"role": "user", "content": "hi"}] and recorded.spans == []


def test_api_key_never_reaches_the_file(store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-very-secret-key")
    session = store.create(task="t")
    session.message({"role": "user", "content": "my key is sk-test-very-secret-key"})
    session.end("answered", 0, "ok")
    text = session.path.read_text()
    assert "sk-test-very-secret-key" not in text and "[redacted]" in text


def test_ids_sort_by_time_and_refs_resolve(store):
    first = store.create(task="a")
    second = store.create(task="b")
    assert store.path_of("last") == second.path
    assert store.ids() == sorted([first.id, second.id])
    assert store.path_of(first.id) == first.path
    with pytest.raises(LookupError, match="matches no session"):
        store.path_of("1999")
    with pytest.raises(LookupError, match="no sessions recorded"):
        SessionStore(store.folder / "empty").path_of("last")


def test_ids_are_unique_and_increasing_even_when_made_back_to_back(store):
    ids = [store.create(task="t").id for _ in range(2000)]
    assert len(set(ids)) == 2000 and ids == sorted(ids)


def _make_sessions(folder, count):
    store = SessionStore(folder)
    for _ in range(count):
        store.create(task="t").end("answered", 0, "ok")


def test_processes_making_sessions_at_once_never_share_one(store):
    import multiprocessing

    workers = [
        multiprocessing.Process(target=_make_sessions, args=(store.folder, 300)) for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    files = list(store.folder.glob("*.jsonl"))
    assert len(files) == 1200
    assert all(load_session(f).header["id"] == f.stem for f in files)
    assert all(load_session(f).outcome == "answered" for f in files)


def test_lone_surrogates_are_stored_and_read_back(store):
    session = store.create(task="fix \udcff.py")
    session.message({"role": "user", "content": "read \udcff.py"})
    session.record("TOOL", "read_file", {"output": "x\ud800y"}, path="\udcff.py")
    session.end("answered", 0, "done \udfff")
    recorded = load_session(session.path)
    assert recorded.header["task"] == "fix \udcff.py"
    assert recorded.messages[0]["content"] == "read \udcff.py"
    assert recorded.spans[0].output == {"output": "x\ud800y"}
    assert recorded.end["message"] == "done \udfff"


def test_a_key_typed_into_a_task_is_kept_nowhere_on_disk(heph, chat_server, workspace):
    from hephaistus.testing import final

    keys = ("sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678", "ghp_" + "abcdefghij" * 3 + "012345")
    chat_server.reply(final("done"))
    result = heph("--yes", f"call the api with key {keys[0]} and {keys[1]} please")
    assert result.code == 0, result.stderr
    assert keys[0] in chat_server.requests[0]["messages"][-1]["content"]  # the model was told
    kept = [*(workspace / ".heph" / "sessions").glob("*.jsonl"), workspace / ".heph" / "state.json"]
    for path in kept:
        text = path.read_text()
        assert not any(key in text for key in keys) and "[redacted]" in text, path
        assert path.stat().st_mode & 0o077 == 0, path  # the person's alone
    listed = heph("sessions")
    assert "call the api" in listed.stdout and not any(key in listed.stdout for key in keys)
