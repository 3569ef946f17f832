"""What heph itself made on this machine, told apart from what came with a workspace's files.

heph keeps its agent state, sessions and checkpoints under `.heph/` inside the workspace, where
a repository (tracked files, a clone, an unpacked archive) can plant its own: a "last task" the
model would take for the person's, a session `heph -c` would continue, a checkpoint `heph undo`
would restore over the person's files. So every such record heph writes carries a signature,
an HMAC keyed by a secret kept in the user's state folder (readable by the person alone), and a
record without a valid one is someone else's: never fed to the model, replayed or undone.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

KEY_FILE = "signing.key"
KEY_BYTES = 32
SIGNATURE = "signature"  # the field a signed record carries
_keys: dict[Path, bytes] = {}  # by the key file's path: tests move the state folder


def signature(kind: str, body: Any) -> str:
    """The signature of `body` (JSON data) as a record of `kind` ("state", "session", ...)."""
    text = json.dumps([kind, body], sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hmac.new(_key(), text.encode("ascii"), hashlib.sha256).hexdigest()


def signed(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """`body` with its signature added."""
    return {**body, SIGNATURE: signature(kind, body)}


def is_ours(kind: str, record: Any) -> bool:
    """Whether `record` (a signed dict, as read back) was made by heph on this machine."""
    if not isinstance(record, dict) or not isinstance(record.get(SIGNATURE), str):
        return False
    body = {k: v for k, v in record.items() if k != SIGNATURE}
    return hmac.compare_digest(record[SIGNATURE], signature(kind, body))


def _key() -> bytes:
    from hephaistus.userdirs import state_dir

    path = state_dir() / KEY_FILE
    if path not in _keys:
        _keys[path] = _read_or_make(path)
    return _keys[path]


def _read_or_make(path: Path) -> bytes:
    """The key in `path`, made (readable by the person alone) when there is none. Where it
    cannot be kept (a read-only home), one for this process: what it signs holds for this
    run only, and is someone else's to the next."""
    try:
        data = path.read_bytes()
        if len(data) == KEY_BYTES:
            return data
    except OSError:
        pass
    key = secrets.token_bytes(KEY_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another heph is making it: wait for its bytes
        for _ in range(50):
            try:
                data = path.read_bytes()
            except OSError:
                return key
            if len(data) == KEY_BYTES:
                return data
            time.sleep(0.01)
        return key  # damaged: sign for this run, and leave the file to the person
    except OSError:
        return key
    with os.fdopen(fd, "wb") as handle:
        handle.write(key)
    return key
