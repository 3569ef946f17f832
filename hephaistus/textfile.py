"""Reading and writing workspace text files without losing anything about them.

A file keeps its line endings, its UTF-8 byte-order mark and its mode when heph rewrites it, and
the rewrite is atomic: a temporary file in the same folder, fsync, rename.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

BOM = b"\xef\xbb\xbf"
BINARY_SNIFF_BYTES = 8192
MAX_WHOLE_FILE_BYTES = 1_000_000
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class NotTextError(ValueError):
    """The file is binary or not UTF-8, so heph will not read or rewrite it."""


@dataclass(frozen=True)
class TextFile:
    text: str  # always with "\n" line endings
    newline: str  # "\n" or "\r\n", as found in the file
    bom: bool

    def encode(self, text: str) -> bytes:
        """`text` (with "\\n" endings) as bytes in this file's own conventions."""
        body = text.replace("\r\n", "\n")
        if self.newline != "\n":
            body = body.replace("\n", self.newline)
        return (BOM if self.bom else b"") + body.encode("utf-8")


NEW_FILE = TextFile(text="", newline="\n", bom=False)


def looks_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_SNIFF_BYTES]


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def decode(data: bytes, name: str) -> TextFile:
    if data.startswith(UTF16_BOMS):
        raise NotTextError(f"{name} is UTF-16 text; heph only edits UTF-8, so it leaves it alone")
    if looks_binary(data):
        raise NotTextError(f"{name} is a binary file; heph only reads and edits text files")
    bom = data.startswith(BOM)
    if bom:
        data = data[len(BOM) :]
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotTextError(
            f"{name} is not UTF-8 text (byte {exc.start}); heph does not edit other encodings"
        ) from None
    crlf = raw.count("\r\n")
    newline = "\r\n" if crlf and crlf >= raw.count("\n") - crlf else "\n"
    return TextFile(text=raw.replace("\r\n", "\n"), newline=newline, bom=bom)


def indentation(line: str) -> str:
    """The spaces and tabs a line starts with."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def encodable(text: str) -> str:
    """`text` with any lone surrogate (an undecodable file name, a bad escape) spelled as its
    escape, so it can be encoded as UTF-8 for the server, a session file or a terminal."""
    if not LONE_SURROGATE.search(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def split_lines(text: str) -> list[str]:
    """The lines of LF-normalized text as git, editors and the edit tools count them: broken at
    LF only. (`str.splitlines` also breaks at a form feed, U+2028 and more, so its line numbers
    drift from everyone else's, and a line cut there cannot be copied back into an edit.)"""
    if not text:
        return []
    return (text[:-1] if text.endswith("\n") else text).split("\n")


def numbered(first: int, lines: list[str]) -> str:
    """Lines as the model reads them: "12 text". Unpadded numbers and one space cost the
    fewest tokens (padding to a column costs about a tenth more)."""
    return "\n".join(f"{first + i} {line}" for i, line in enumerate(lines))


def read_text(path: Path, name: str) -> TextFile:
    return decode(path.read_bytes(), name)


TEMP_SUFFIX = ".heph-tmp"


def atomic_write(path: Path, data: bytes, *, temp_dir: Path | None = None) -> None:
    """Replace `path` with `data` in one rename, keeping the old file's mode.

    The temporary file is made in `temp_dir` (heph's own, so a crash never leaves one among the
    user's files; `remove_stale_temp_files` clears it) or, when that is on another file system,
    beside `path`.
    """
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = temp_dir or path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f"{os.getpid()}-", suffix=TEMP_SUFFIX, dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode if mode is not None else new_file_mode())
        try:
            os.replace(tmp, path)
        except OSError as error:
            if error.errno != errno.EXDEV or temp_dir is None:
                raise
            os.unlink(tmp)
            atomic_write(path, data)  # another file system: the temporary file goes beside it
            return
        if path.suffix == ".py":
            forget_bytecode(path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def new_file_mode() -> int:
    """The mode a new file gets: 0o666 less the umask, read without changing it (os.umask
    would change it for every thread for a moment)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def remove_stale_temp_files(temp_dir: Path) -> list[Path]:
    """Delete the temporary files of heph processes that no longer run (killed mid-write)."""
    removed = []
    for tmp in temp_dir.glob(f"*{TEMP_SUFFIX}") if temp_dir.is_dir() else ():
        pid = tmp.name.split("-", 1)[0]
        if pid.isdigit() and not _running(int(pid)):
            try:
                tmp.unlink()
                removed.append(tmp)
            except OSError:
                pass
    return removed


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat_file:
            return stat_file.read().rsplit(")", 1)[-1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except (OSError, IndexError):  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def forget_bytecode(path: Path) -> None:
    """Delete the cached bytecode of a Python file that was just rewritten.

    Python trusts a .pyc whose recorded source mtime (whole seconds) and size match; an edit
    that keeps the size, made within the second the file was last imported, would otherwise run
    the old code, say in the test run right after the edit.
    """
    for cached in path.parent.joinpath("__pycache__").glob(f"{path.stem}.*.pyc"):
        try:
            cached.unlink()
        except OSError:
            pass
