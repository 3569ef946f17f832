"""The git configuration a command in the sandbox reads, shown without credentials. Every
configuration file the command reaches (the system's, the person's global ones and the file
`GIT_CONFIG_GLOBAL` names, the repository's, its worktree's and its submodules', nested
repositories', and every file these include) is read by git itself, so that what is cleaned is
what git would read (a one-line `[section] key = value`, a value continued onto the next line);
a file that holds a credential is shown as a copy written from what git read, without it, bound
over the original. A file git cannot read is hidden whole.

A credential is a setting whose name says so (a token, a password, a key, a header: see
is_credential_key), a value in a known credential's shape, an inline credential helper, or the
password or token of a URL.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hephaistus.redact import CREDENTIAL_TEXT, SECRET_NAME

# A URL's user and password (`https://user:TOKEN@host`), or a user name that is a token
# (`https://ghp_…@host`); `ssh://git@host` keeps its user.
URL_CREDENTIALS = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^\s/@:\"]*)(?::[^\s/@\"]*)?@"
)
TOKEN_USER = 20  # characters: a user name this long is a token, not a name
# git spells a setting's name in lower case, its words glued (`smtppass`, `oauthtoken`,
# `extraheader`): a credential word that ends it names a credential too.
CREDENTIAL_WORD_AT_END = re.compile(
    r"(?:token|secret|passw(?:or)?d|passphrase|pass|auth|key|cookie|credential|header)s?$"
)
HIDDEN = "hidden by heph"
CONFIG_LIMIT = 1 << 20  # bytes: a larger git configuration is hidden whole, not read
CONFIGS_AT_MOST = 200
GIT_SECONDS = 10.0
PLAIN_VALUE = re.compile(r"[^\s\"\\#;](?:[^\x00-\x1f\"\\#;]*[^\s\"\\#;])?")

Setting = tuple[str, str | None]  # git's name (`section.subsection.key`), its value (None: none)


def is_credential_key(name: str) -> bool:
    """Whether a setting's name (`sendemail.smtppass`, `http.extraheader`) says it holds a
    credential: a credential word of it (redact.SECRET_NAME), or one that ends it."""
    key = name.rsplit(".", 1)[-1]
    return bool(CREDENTIAL_WORD_AT_END.search(key.lower()) or SECRET_NAME.search(key))


def without_url_credentials(text: str) -> str:
    """`text` with every URL's password, and a user name that is a token, removed."""

    def url(match: re.Match[str]) -> str:
        user = match["user"]
        has_password = match.group(0).count(":") > 1
        if not has_password and len(user) < TOKEN_USER:
            return match.group(0)
        return f"{match['scheme']}{user}@" if user and len(user) < TOKEN_USER else match["scheme"]

    return URL_CREDENTIALS.sub(url, text)


def without_credentials(settings: list[Setting]) -> list[Setting] | None:
    """`settings` (as git read them) with every credential taken out: a credential's setting
    becomes a comment naming it (value None, name prefixed with `#`), a URL loses its password
    or token (in a value, or a section's name: `[url "https://TOKEN@host"]`); None when they
    hold none."""
    cleaned: list[Setting] = []
    for name, value in settings:
        shown_name = without_url_credentials(name)
        shown = None if value is None else without_url_credentials(value)
        if _is_credential(name, shown):
            cleaned.append((f"# {shown_name}", None))
        else:
            cleaned.append((shown_name, shown))
    return None if cleaned == settings else cleaned


def _is_credential(name: str, value: str | None) -> bool:
    """Whether a setting (its value without URL credentials already) holds a credential."""
    if is_credential_key(name):
        return True
    if value is None:
        return False
    inline_helper = name.endswith(".helper") and value.lstrip().startswith("!")
    return inline_helper or CREDENTIAL_TEXT.search(value) is not None


def rendered(settings: list[Setting]) -> str:
    """A git configuration file that git reads as `settings` (hidden ones as comments)."""
    lines: list[str] = []
    section: str | None = None
    for name, value in settings:
        hidden = name.startswith("# ")
        head, _, key = name.removeprefix("# ").rpartition(".")
        if head != section:
            section = head
            lines.append(_section_line(head))
        if hidden:
            lines.append(f"\t# {key}: {HIDDEN}")
        else:
            lines.append(f"\t{key}" if value is None else f"\t{key} = {_quoted(value)}")
    return "\n".join(lines) + "\n"


def _section_line(head: str) -> str:
    """`[section "subsection"]` for git's `section.subsection` (a subsection may hold dots)."""
    section, dot, subsection = head.partition(".")
    if not dot:
        return f"[{section}]"
    escaped = subsection.replace("\\", "\\\\").replace('"', '\\"')
    return f'[{section} "{escaped}"]'


def _quoted(value: str) -> str:
    """`value` as git reads it back: as it is where that is plain, else quoted with git's
    escapes."""
    if PLAIN_VALUE.fullmatch(value):
        return value
    for raw, escape in (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\t", "\\t"), ("\b", "\\b")):
        value = value.replace(raw, escape)
    return f'"{value}"'


def read_settings(path: Path) -> list[Setting]:
    """The settings of the configuration file `path`, in order, as git reads them (its
    includes not followed); OSError where git cannot read it."""
    from hephaistus.runtime.programs import find, missing

    git = find("git")
    if git is None:
        raise OSError(missing("git"))
    environ = {"PATH": os.environ.get("PATH", ""), "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
    environ["GIT_CONFIG_GLOBAL"] = os.devnull
    command = [git, "config", "--file", str(path), "--list", "--null"]
    try:
        done = subprocess.run(
            command, capture_output=True, cwd="/", env=environ, timeout=GIT_SECONDS
        )
    except subprocess.TimeoutExpired as error:
        raise OSError(f"git could not read {path} in time") from error
    if done.returncode != 0:
        raise OSError(done.stderr.decode("utf-8", "replace").strip())
    settings: list[Setting] = []
    for item in os.fsdecode(done.stdout).split("\0")[:-1]:
        name, newline, value = item.partition("\n")
        settings.append((name, value if newline else None))
    return settings


def included(named: Path, settings: list[Setting]) -> list[Path]:
    """The files `settings` (of the file `named`, by the path git is given) include, whatever
    their condition: a relative one beside `named` and beside its real path."""
    found = []
    for name, value in settings:
        if value and name.startswith(("include.", "includeif.")) and name.endswith(".path"):
            target = os.path.expanduser(value)
            found += [named.parent / target, Path(os.path.realpath(named)).parent / target]
    return found


@dataclass(frozen=True)
class Shown:
    """What the sandbox shows of one git configuration file, as of its `version`."""

    version: tuple[int, ...]  # device, inode, size, change and modification times
    copy: Path | None  # a copy without its credentials; None: the file itself, or nothing
    whole: bool  # hidden whole: too large, or git could not read it
    includes: tuple[Path, ...]


# By real path and folder of copies: a file is read again only once it changed.
_shown: dict[tuple[Path, Path], Shown] = {}


def cleaned_git_configs(folder: Path, git_dirs: list[Path]) -> list[tuple[Path, Path | None]]:
    """(a git configuration, its copy without credentials in `folder`) for each of those a
    command reads (see git_configs, and the files they include) that holds some; None as the
    copy when it is hidden whole. Each file is read (by git) once, then again only when it
    changed."""
    found: list[tuple[Path, Path | None]] = []
    pending = git_configs(git_dirs)
    seen: set[Path] = set()
    while pending and len(seen) < CONFIGS_AT_MOST:
        named = pending.pop(0)
        path = Path(os.path.realpath(named))
        if path in seen:
            continue
        seen.add(path)
        shown = _shown_of(path, named, folder)
        if shown is None:
            continue
        if shown.whole or shown.copy is not None:
            found.append((path, shown.copy))
        pending += shown.includes
    return found


def _shown_of(path: Path, named: Path, folder: Path) -> Shown | None:
    """What the sandbox shows of the file at the real path `path` (None: no such file)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    version = (info.st_dev, info.st_ino, info.st_size, info.st_ctime_ns, info.st_mtime_ns)
    known = _shown.get((path, folder))
    if known is not None and known.version == version and (not known.copy or known.copy.exists()):
        return known
    _shown[path, folder] = shown = _clean(path, named, version, folder)
    return shown


def _clean(path: Path, named: Path, version: tuple[int, ...], folder: Path) -> Shown:
    """Read `path` with git and, where it holds a credential, write its copy without them
    into `folder` (named after the file's path)."""
    if version[2] > CONFIG_LIMIT:
        return Shown(version, None, True, ())
    try:
        settings = read_settings(path)
    except OSError:
        return Shown(version, None, True, ())
    includes = tuple(included(named, settings))
    cleaned = without_credentials(settings)
    if cleaned is None:
        return Shown(version, None, False, includes)
    digest = hashlib.sha256(os.fsencode(path)).hexdigest()[:16]
    copy = folder / f"gitconfig-{digest}"
    temporary = folder / f".gitconfig-{digest}.{os.getpid()}"
    temporary.write_text(rendered(cleaned), encoding="utf-8")
    os.replace(temporary, copy)
    return Shown(version, copy, False, includes)


def git_configs(git_dirs: list[Path]) -> list[Path]:
    """The git configuration files a command reads that may hold credentials (the files they
    include are found as they are read): the system's, the person's global ones
    (`GIT_CONFIG_GLOBAL`'s too), and of each repository it reaches (`git_dirs`: the
    workspace's, see repository_dirs, and nested or nearby ones' `.git`) its `config` (the
    common one of a worktree), the worktrees' `config.worktree` and the submodules'."""
    from hephaistus.runtime.hidden import real_home

    home = real_home()
    found = [Path("/etc/gitconfig"), Path("/usr/local/etc/gitconfig")]
    found += [home / ".gitconfig", home / ".config/git/config"]
    for variable, under in (
        ("XDG_CONFIG_HOME", "git/config"),
        ("GIT_CONFIG_GLOBAL", ""),
        ("GIT_CONFIG_SYSTEM", ""),
    ):
        value = os.environ.get(variable, "")
        if os.path.isabs(value):
            found.append(Path(value, under) if under else Path(value))
    for git_dir in git_dirs:
        common = _common_dir(git_dir)
        found += [common / "config", common / "config.worktree", git_dir / "config.worktree"]
        found += _submodule_configs(common)
    return list(dict.fromkeys(found))


def repository_dirs(workspace: Path) -> list[Path]:
    """The git directory of the workspace's repository, and its common one when it is a
    worktree's (a command's git reads both): real paths, none outside a repository."""
    from hephaistus.runtime.gitlocation import locate

    located = locate(workspace)
    if located is None:
        return []
    git_dir = Path(os.path.realpath(located[1]))
    return list(dict.fromkeys([git_dir, _common_dir(git_dir)]))


def _common_dir(git_dir: Path) -> Path:
    """A worktree's git directory's common one (the main repository's); else `git_dir`."""
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    return Path(os.path.realpath(git_dir / common)) if common else git_dir


def _submodule_configs(git_dir: Path) -> list[Path]:
    """The configuration of each submodule git keeps in `git_dir/modules/` (nested too)."""
    modules = git_dir / "modules"
    if not modules.is_dir():
        return []
    return [path for path in modules.rglob("config") if path.is_file()][:CONFIGS_AT_MOST]
