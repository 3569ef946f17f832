"""What heph itself made on this machine, told apart from what came with a workspace's files.

heph keeps its agent state, sessions, checkpoints and caches under `.heph/` inside the
workspace, where a repository (tracked files, a clone, an unpacked archive, a pull that writes
over excluded files) can plant its own: a "last task" the model would take for the person's, a
session `heph -c` would continue, a checkpoint `heph undo` would restore over the person's
files, a cached context window of 300 tokens. So every such record heph writes carries a
signature, an HMAC keyed by a secret kept in the user's state folder (readable by the person
alone), and a record without a valid one is someone else's: never fed to the model, replayed,
undone or believed.
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
_key_for: dict[tuple[str | None, str | None], bytes] = {}  # by what decides the folder


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


SEAL = b"heph-sealed "  # the first line of a sealed file: this, its signature, a line feed


def seal(kind: str, data: bytes) -> bytes:
    """`data` (a cache heph keeps under `.heph/`) with a first line that signs it."""
    mac = hmac.new(_key(), kind.encode() + b"\0" + data, hashlib.sha256).hexdigest()
    return SEAL + mac.encode() + b"\n" + data


def unseal(kind: str, sealed: bytes) -> bytes | None:
    """The data of a file `seal` made here, or None (heph did not make it: a repository's,
    or one a pull wrote over the person's)."""
    head, _, data = sealed.partition(b"\n")
    if not head.startswith(SEAL):
        return None
    mac = hmac.new(_key(), kind.encode() + b"\0" + data, hashlib.sha256).hexdigest()
    return data if hmac.compare_digest(head[len(SEAL) :], mac.encode()) else None


def read_cache(path: Path, what: str) -> Any:
    """The JSON value heph sealed as `what` into the workspace's cache file `path`
    (`.heph/cache/NAME.json`), or None: missing, unreadable, or not heph's own."""
    from hephaistus.textfile import read_real

    try:
        data = unseal(_cache_kind(path, what), read_real(path))
        return json.loads(data) if data is not None else None
    except (OSError, ValueError):
        return None


def write_cache(path: Path, what: str, value: Any) -> None:
    """Seal `value` as `what` into the cache file `path`; a cache that cannot be written is
    asked again next time. A rename over the file: a link planted there is replaced, never
    followed."""
    from hephaistus.textfile import atomic_write

    data = seal(_cache_kind(path, what), json.dumps(value, indent=1).encode())
    try:
        atomic_write(path, data, temp_dir=path.parent.parent / "tmp")
    except OSError:
        pass


def _cache_kind(path: Path, what: str) -> str:
    """That cache of this workspace, and no other's: `.heph/cache/X` lies three folders in."""
    return f"{what} {path.parent.parent.parent}"


def line_mac(session_id: str, line: str) -> str:
    """The signature of one line of a session file (each line is signed on its own, so a
    crash loses only the line in flight, and no line can be changed or added)."""
    data = f"session-line\0{session_id}\0{line}".encode("utf-8", "surrogatepass")
    return hmac.new(_key(), data, hashlib.sha256).hexdigest()


def _key() -> bytes:
    # Every session line is signed: finding the state folder (platformdirs) each time would
    # cost a step a millisecond. It follows only from these variables.
    where = (os.environ.get("XDG_STATE_HOME"), os.environ.get("HOME"))
    if where not in _key_for:
        from hephaistus.settings.userdirs import state_dir

        path = state_dir() / KEY_FILE
        if path not in _keys:
            _keys[path] = _read_or_make(path)
        _key_for[where] = _keys[path]
    return _key_for[where]


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
