"""Reading and writing workspace text files without losing anything about them.

A file keeps its line endings, its UTF-8 byte-order mark and its mode when heph rewrites it, and
the rewrite is atomic: a temporary file in the same folder, fsync, rename. A workspace file is
opened as the very path the workspace check gave (`open_real`), so no link swapped in since can
lead a read or a write elsewhere.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

BOM = b"\xef\xbb\xbf"
BINARY_SNIFF_BYTES = 8192
MAX_WHOLE_FILE_BYTES = 1_000_000
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class NotTextError(ValueError):
    """The file is binary or not UTF-8, so heph will not read or rewrite it."""


@dataclass(frozen=True)
class TextFile:
    """A text file as read: its text with "\\n" line endings, and the line ending and byte-order
    mark to write it back with."""

    text: str  # always with "\n" line endings
    newline: str  # "\n" or "\r\n", as found in the file
    bom: bool
    # sha256 of the bytes read: two reads are equal only when the file was byte for byte the same
    digest: str = ""

    def encode(self, text: str) -> bytes:
        """`text` (with "\\n" endings) as bytes in this file's own conventions."""
        body = text.replace("\r\n", "\n")
        if self.newline != "\n":
            body = body.replace("\n", self.newline)
        return (BOM if self.bom else b"") + body.encode("utf-8")


NEW_FILE = TextFile(text="", newline="\n", bom=False)


def digest_of(data: bytes) -> str:
    """The name of a file's content, as TextFile.digest holds it."""
    return hashlib.sha256(data).hexdigest()


def looks_binary(data: bytes) -> bool:
    """Whether `data` has a NUL byte in its first BINARY_SNIFF_BYTES: the way git tells a binary
    file."""
    return b"\0" in data[:BINARY_SNIFF_BYTES]


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def decode(data: bytes, name: str) -> TextFile:
    """The file `name` from its bytes; NotTextError, saying why, for UTF-16, binary or non-UTF-8
    content."""
    if data.startswith(UTF16_BOMS):
        raise NotTextError(f"{name} is UTF-16 text; heph only edits UTF-8, so it leaves it alone")
    if looks_binary(data):
        raise NotTextError(f"{name} is a binary file; heph only reads and edits text files")
    bom = data.startswith(BOM)
    try:
        raw = data[len(BOM) if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotTextError(
            f"{name} is not UTF-8 text (byte {exc.start}); heph does not edit other encodings"
        ) from None
    crlf = raw.count("\r\n")
    newline = "\r\n" if crlf and crlf >= raw.count("\n") - crlf else "\n"
    return TextFile(raw.replace("\r\n", "\n"), newline, bom, digest_of(data))


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


SWAPPED = "a folder on its path became a link since heph checked it; nothing was done"
# Flags a POSIX system has (Windows has none of them, and no links to swap in this way).
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def text_of(path: Path) -> str | None:
    """The text of a project file heph only consults (a .gitignore, a Makefile), undecodable
    bytes replaced; None when there is none, it cannot be read, it is a link (which could
    lead out of the workspace), or it is no regular file (a named pipe's read would never
    end)."""
    if path.is_symlink() or not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def read_text(path: Path, name: str) -> TextFile:
    """The text file at `path`, a real path (see `open_real`)."""
    return decode(read_real(path), name)


def read_real(path: Path, limit: int = -1) -> bytes:
    """The bytes of the regular file at `path`, a real path (see `open_real`), up to `limit`."""
    with open_file(path) as handle:
        return handle.read(limit)


def open_file(path: Path) -> BinaryIO:
    """The regular file at `path`, a real path (see `open_real`), open for reading."""
    handle = os.fdopen(open_real(path, os.O_RDONLY | _NONBLOCK), "rb")
    if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
        handle.close()  # a named pipe would block the read for ever; a device is no file
        raise OSError(errno.EINVAL, "not a regular file; heph reads only files", str(path))
    return handle


def unlink_real(path: Path) -> None:
    """Delete the file at `path`, a real path, from its folder as opened by `open_real`."""
    folder = _pinned_folder(path)
    if folder is None:
        path.unlink()
        return
    try:
        os.unlink(path.name, dir_fd=folder)
    finally:
        os.close(folder)


def link_real(path: Path, target: str) -> None:
    """Make `path`, a real path, the symbolic link to `target` (replacing what is there) in
    one rename, in its folder as opened by `open_real`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = f".{os.getpid()}-{os.urandom(4).hex()}{TEMP_SUFFIX}"
    folder = _pinned_folder(path)
    try:
        if folder is None:
            os.symlink(target, path.parent / temporary)
            os.replace(path.parent / temporary, path)
            return
        os.symlink(target, temporary, dir_fd=folder)
        try:
            os.replace(temporary, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except OSError:
            os.unlink(temporary, dir_fd=folder)
            raise
    finally:
        if folder is not None:
            os.close(folder)


def _pinned_folder(path: Path) -> int | None:
    """The folder of `path`, a real path, as `open_real` opens it; None where renames and
    deletes take no folder descriptor (Windows)."""
    if os.rename not in os.supports_dir_fd:  # renameat, which os.replace uses too
        return None
    return open_real(path.parent, os.O_RDONLY | _DIRECTORY)


def open_real(path: Path, flags: int) -> int:
    """A descriptor for `path`, a real path (no links in it, as the workspace check gives it),
    that is sure to be that very file or folder. Between the check and the open a folder on the
    way may have been swapped for a link, which would lead the open elsewhere, maybe out of the
    workspace: the path the descriptor really has is asked of the system, and must be `path`."""
    try:
        fd = os.open(path, flags | _NOFOLLOW)
    except OSError as error:
        # The last name itself became a link (a folder's is ENOTDIR, asked for a folder).
        if error.errno == errno.ELOOP or (error.errno == errno.ENOTDIR and path.is_symlink()):
            raise OSError(errno.ELOOP, SWAPPED, str(path)) from None
        raise
    opened = _opened_path(fd)
    if opened is not None and not _same_path(opened, os.fsencode(path)):
        os.close(fd)
        raise OSError(errno.ELOOP, SWAPPED, str(path))
    return fd


def _opened_path(fd: int) -> bytes | None:
    """Where the open file `fd` is (None where the system cannot tell: then it is not checked)."""
    try:
        if sys.platform == "darwin":
            import fcntl

            return fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024)).split(b"\0", 1)[0]
        return os.readlink(b"/proc/self/fd/%d" % fd)
    except (OSError, AttributeError):
        return None


# How Linux names an open file whose name was since removed, or taken by another file (another
# run's write renamed over it): it was the very file at that path, holding what the path held.
DELETED = b" (deleted)"


def _same_path(opened: bytes, expected: bytes) -> bool:
    if opened in (expected, expected + DELETED):
        return True
    # macOS names a file as stored on its case-insensitive disk, whatever case it was asked by.
    return sys.platform == "darwin" and opened.lower() == expected.lower()


TEMP_SUFFIX = ".heph-tmp"


def atomic_write(
    path: Path,
    data: bytes,
    *,
    temp_dir: Path | None = None,
    real: bool = False,
    mode: int | None = None,
    expected: str | None = None,
) -> None:
    """Replace `path` with `data` in one rename, keeping the old file's mode (or giving it
    `mode`). With `expected`, the digest of what the file held when the change was made from
    it ("" for no file), the file must still hold that and be writable just before the rename,
    else OSError (Changed, or PermissionError for a read-only file) and nothing is written.

    The temporary file is made in `temp_dir` (heph's own, so a crash never leaves one among the
    user's files; `remove_stale_temp_files` clears it) or, when that is on another file system,
    beside `path`. A `real` path (a workspace file, as the check gives it) is renamed into its
    folder as opened by `open_real`, so a folder swapped for a link since cannot lead it away.
    """
    if mode is None:
        mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else new_file_mode()
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = temp_dir or path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f"{os.getpid()}-", suffix=TEMP_SUFFIX, dir=folder)
    into = None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        if real:  # checked as late as can be: just before the rename
            into = _pinned_folder(path)
        if expected is not None:
            _still_as_read(path, expected)
        try:
            if into is not None:
                os.replace(tmp, path.name, dst_dir_fd=into)
            else:
                os.replace(tmp, path)
        except OSError as error:
            if error.errno != errno.EXDEV or temp_dir is None:
                raise
            os.unlink(tmp)  # another file system: the temporary file goes beside it
            atomic_write(path, data, real=real, mode=mode, expected=expected)
            return
        if path.suffix == ".py":
            forget_bytecode(path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    finally:
        if into is not None:
            os.close(into)


class Changed(OSError):
    """The file changed between the read a change was made from and its write."""


READ_ONLY = "the file is read-only"


def may_write(path: Path) -> bool:
    """Whether the existing file at `path` may be replaced: someone may write it, and this
    user may (root may write anything, so a file made read-only would be replaced without
    the bits asked)."""
    return bool(path.stat().st_mode & 0o222) and os.access(path, os.W_OK)


def _still_as_read(path: Path, digest: str) -> None:
    """Changed unless the file at `path` holds the content of `digest` ("": no file), and
    PermissionError when it is read-only."""
    try:
        data = read_real(path)
    except FileNotFoundError:
        data = None
    if (digest_of(data) if data is not None else "") != digest:
        raise Changed(errno.EAGAIN, "it changed on disk while heph wrote it", str(path))
    if data is not None and not may_write(path):
        raise PermissionError(errno.EACCES, READ_ONLY, str(path))


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
