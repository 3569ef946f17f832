"""Every write is checkpointed; undo puts files back byte for byte, and never loses others' work."""

import json
import os
import stat

import pytest

from conftest import git
from hephaistus.engine.agent import Agent
from hephaistus.records.checkpoints import CheckpointStore, NotInside, UndoConflict
from hephaistus.records.undo import redo as redo_session
from hephaistus.records.undo import undo as undo_session
from hephaistus.runtime.policy import Policy
from hephaistus.settings.config import Config
from hephaistus.testing import ScriptedModel, act, final
from hephaistus.workspace import Workspace

ODD_FILES = {
    "crlf.txt": b"one\r\ntwo\r\n",
    "no_final_newline.txt": b"last line",
    "bom.py": b"\xef\xbb\xbfx = 1\n",
    "run.sh": b"#!/bin/sh\necho hi\n",
}


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    for name, data in ODD_FILES.items():
        (root / name).write_bytes(data)
    (root / "run.sh").chmod(0o755)
    return Workspace.at(root)


def run(ws, *replies):
    agent = Agent(ws, Config(), model=ScriptedModel(list(replies)), policy=Policy("auto"))
    outcome = agent.execute("change things")
    assert outcome.status == "answered", outcome.message
    return agent.session.id


def change_everything(ws):
    return run(
        ws,
        act("edit_file", path="crlf.txt", old="two", new="2"),
        act("append_file", path="no_final_newline.txt", content="more\n"),
        act("read_file", path="bom.py"),  # a whole-file write needs it read
        act("write_file", path="bom.py", content="x = 2\n"),
        act("edit_file", path="run.sh", old="echo hi", new="echo bye"),
        act("edit_file", path="run.sh", old="echo bye", new="echo ciao"),
        act("write_file", path="new/created.py", content="made = True\n"),
        final("done"),
    )


def snapshot(ws):
    return {
        p.name: (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
        for p in ws.root.iterdir()
        if p.is_file()
    }


def test_undo_restores_every_file_byte_for_byte(ws):
    before = snapshot(ws)
    session = change_everything(ws)
    assert (ws.root / "crlf.txt").read_bytes() == b"one\r\n2\r\n"
    assert (ws.root / "bom.py").read_bytes() == b"\xef\xbb\xbfx = 2\n"
    result = undo_session(CheckpointStore(ws.root, ws.heph_dir), session)
    assert snapshot(ws) == before
    assert not (ws.root / "new" / "created.py").exists()
    assert sorted(result.restored) == sorted(ODD_FILES)
    assert result.deleted == ["new/created.py"]


def test_redo_brings_back_hephs_version(ws):
    session = change_everything(ws)
    after = snapshot(ws)
    store = CheckpointStore(ws.root, ws.heph_dir)
    undo_session(store, session)
    redo_session(store, session)
    assert snapshot(ws) == after
    assert (ws.root / "new" / "created.py").read_text() == "made = True\n"


def test_undo_refuses_when_someone_edited_the_file_since(ws):
    session = change_everything(ws)
    (ws.root / "run.sh").write_text("#!/bin/sh\necho my own change\n")
    store = CheckpointStore(ws.root, ws.heph_dir)
    with pytest.raises(UndoConflict) as caught:
        undo_session(store, session)
    assert caught.value.paths == ["run.sh"]
    assert (ws.root / "run.sh").read_text() == "#!/bin/sh\necho my own change\n"
    assert (ws.root / "crlf.txt").read_bytes() == b"one\r\n2\r\n"  # nothing was undone
    undo_session(store, session, force=True)
    assert (ws.root / "run.sh").read_bytes() == ODD_FILES["run.sh"]


def test_undo_twice_is_refused(ws):
    session = change_everything(ws)
    store = CheckpointStore(ws.root, ws.heph_dir)
    undo_session(store, session)
    with pytest.raises(LookupError, match="already undone"):
        undo_session(store, session)


def test_a_session_without_writes_has_nothing_to_undo(ws):
    session = run(ws, act("read_file", path="crlf.txt"), final("read it"))
    store = CheckpointStore(ws.root, ws.heph_dir)
    assert session not in store.sessions_with_changes()


def test_undo_never_touches_git(ws):
    git(ws.root, "init", "-q")
    git(ws.root, "add", "crlf.txt")
    git(ws.root, "commit", "-qm", "base")
    git(ws.root, "add", "bom.py")  # the user's staged work
    head, index = git(ws.root, "rev-parse", "HEAD"), git(ws.root, "diff", "--cached", "--stat")
    session = change_everything(ws)
    undo_session(CheckpointStore(ws.root, ws.heph_dir), session)
    assert git(ws.root, "rev-parse", "HEAD") == head
    assert git(ws.root, "diff", "--cached", "--stat") == index


def test_heph_undo_command(heph, chat_server, workspace):
    (workspace / "a.txt").write_text("original\n")
    chat_server.reply(act("read_file", path="a.txt"))
    chat_server.reply(act("write_file", path="a.txt", content="changed\n"))
    chat_server.reply(act("write_file", path="b.txt", content="new\n"))
    chat_server.reply(final("done"))
    assert heph("--yes", "change").code == 0
    result = heph("undo")
    assert result.code == 0, result.stderr
    assert "restored a.txt" in result.stdout and "deleted  b.txt" in result.stdout
    assert (workspace / "a.txt").read_text() == "original\n" and not (workspace / "b.txt").exists()
    again = heph("undo")
    assert again.code == 2 and "no session has changes left to undo" in again.stderr


def test_heph_undo_conflict_exit_1_lists_files(heph, chat_server, workspace):
    chat_server.reply(act("write_file", path="a.txt", content="heph\n")).reply(final("done"))
    assert heph("--yes", "write").code == 0
    (workspace / "a.txt").write_text("mine\n")
    result = heph("undo", "last")
    assert result.code == 1 and "a.txt" in result.stderr and "--force" in result.stderr
    assert (workspace / "a.txt").read_text() == "mine\n"
    assert heph("undo", "--force").code == 0 and not (workspace / "a.txt").exists()


def test_dry_run_records_no_checkpoint(heph, chat_server, workspace):
    chat_server.reply(act("write_file", path="a.txt", content="x\n")).reply(final("done"))
    assert heph("--dry-run", "write").code == 0
    assert heph("undo").code == 2


def test_checkpoint_blobs_survive_mode_changes(ws):
    session = run(ws, act("edit_file", path="run.sh", old="hi", new="yo"), final("ok"))
    os.chmod(ws.root / "run.sh", 0o700)  # a mode change alone is not a content change
    undo_session(CheckpointStore(ws.root, ws.heph_dir), session)
    assert stat.S_IMODE((ws.root / "run.sh").stat().st_mode) == 0o755


def test_undo_never_writes_through_a_folder_that_became_a_link(ws, tmp_path):
    session = run(
        ws,
        act("write_file", path="pkg/made.py", content="made = True\n"),
        act("edit_file", path="crlf.txt", old="two", new="2"),
        final("done"),
    )
    elsewhere = tmp_path / "elsewhere"
    (ws.root / "pkg").rename(elsewhere)  # the folder moved out, its name linked back
    (ws.root / "pkg").symlink_to(elsewhere, target_is_directory=True)
    store = CheckpointStore(ws.root, ws.heph_dir)
    for force in (False, True):
        with pytest.raises(NotInside, match="pkg/made.py no longer leads to a file inside"):
            undo_session(store, session, force=force)
    assert (elsewhere / "made.py").read_text() == "made = True\n"  # not deleted
    assert (ws.root / "crlf.txt").read_bytes() == b"one\r\n2\r\n"  # nothing was undone


def test_undo_refuses_a_record_that_names_a_path_outside(ws, tmp_path):
    from hephaistus.workspace import provenance

    session = run(ws, act("edit_file", path="crlf.txt", old="two", new="2"), final("done"))
    manifest = ws.heph_dir / "checkpoints" / session / "files.json"
    victim = tmp_path / "victim.txt"
    victim.write_text("theirs\n")
    original = json.loads(manifest.read_text())
    for path in ("../victim.txt", str(victim)):
        altered = json.loads(json.dumps(original).replace('"crlf.txt"', json.dumps(path)))
        manifest.write_text(json.dumps(altered))  # altered: no longer heph's own record
        with pytest.raises(LookupError, match="not made by heph on this machine"):
            undo_session(CheckpointStore(ws.root, ws.heph_dir), session, force=True)
        del altered["signature"]  # and even signed, it may not lead outside
        kind = f"checkpoint {ws.root}"
        manifest.write_text(json.dumps(provenance.signed(kind, altered)))
        with pytest.raises(NotInside):
            undo_session(CheckpointStore(ws.root, ws.heph_dir), session, force=True)
    assert victim.read_text() == "theirs\n"


def test_nothing_to_undo_says_which_workspace_and_how_to_name_another(heph, workspace):
    result = heph("undo")
    assert result.code == 2 and str(workspace) in result.stderr and "-w" in result.stderr


def tree(ws):
    return sorted(
        p.relative_to(ws.root).as_posix() for p in ws.root.rglob("*") if ".heph" not in p.parts
    )


def test_undo_removes_the_folders_the_session_made_and_only_those(ws, tmp_path):
    (ws.root / "kept").mkdir()  # the person's own empty folder
    before = tree(ws)
    session = run(
        ws,
        act("write_file", path="kept/a/b/deep.py", content="x = 1\n"),
        act("write_file", path="made/one.py", content="y = 1\n"),
        act("write_file", path="other/two.py", content="z = 1\n"),
        act("move_file", path="crlf.txt", to="moved/here/crlf.txt"),
        final("done"),
    )
    (ws.root / "other" / "mine.txt").write_text("the person's, since\n")
    undo_session(CheckpointStore(ws.root, ws.heph_dir), session)
    assert tree(ws) == sorted([*before, "other", "other/mine.txt"])  # kept/ stays, empty
    redo_session(CheckpointStore(ws.root, ws.heph_dir), session)
    assert (ws.root / "kept/a/b/deep.py").read_text() == "x = 1\n"
    assert (ws.root / "moved/here/crlf.txt").exists()


def test_undo_removes_no_folder_through_a_link(ws, tmp_path):
    session = run(ws, act("write_file", path="pkg/sub/made.py", content="1\n"), final("done"))
    (ws.root / "pkg" / "sub" / "made.py").unlink()
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "sub").mkdir(parents=True)
    (ws.root / "pkg" / "sub").rmdir()
    (ws.root / "pkg").rmdir()
    (ws.root / "pkg").symlink_to(elsewhere, target_is_directory=True)  # pkg/sub leads out now
    store = CheckpointStore(ws.root, ws.heph_dir)
    from hephaistus.records.undo import _remove_made_folders

    _remove_made_folders(store, store.entries(session))
    assert (elsewhere / "sub").is_dir() and (ws.root / "pkg").is_symlink()


def test_checkpoint_copies_are_the_persons_alone(heph, chat_server, workspace):
    from hephaistus.testing import act, final

    notes = workspace / "notes.txt"
    notes.write_text("private\n")
    notes.chmod(0o600)
    chat_server.reply(act("read_file", path="notes.txt"))
    chat_server.reply(act("write_file", path="notes.txt", content="replaced\n"))
    chat_server.reply(final("done"))
    assert heph("--yes", "replace the notes").code == 0
    blobs = list((workspace / ".heph" / "checkpoints").rglob("blobs/*"))
    assert blobs and all(blob.stat().st_mode & 0o077 == 0 for blob in blobs), blobs
