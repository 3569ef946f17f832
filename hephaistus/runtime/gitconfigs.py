"""The git configuration a command in the sandbox reads, shown without credentials: a remote's
token or password, an extra header, an inline credential helper. Every configuration the command
reaches is cleaned (the repository's and its submodules', nested repositories', the person's
global ones, and the files they include), each as a copy in heph's own folder bound over it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# A URL's user and password (`https://user:TOKEN@host`), or a user name that is a token
# (`https://ghp_…@host`); `ssh://git@host` keeps its user.
URL_CREDENTIALS = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^\s/@:\"]*)(?::[^\s/@\"]*)?@"
)
TOKEN_USER = 20  # characters: a user name this long is a token, not a name
SECRET_KEYS = re.compile(r"^(\s*)(extraheader|helper|token|password)(\s*=\s*)(.*)$", re.I)
HIDDEN_VALUE = "(hidden by heph)"


def without_credentials(text: str) -> str | None:
    """`text` (a git configuration file) with every URL's password and token removed and the
    values of extra headers, inline credential helpers, tokens and passwords hidden; None when
    it holds none of them."""

    def url(match: re.Match[str]) -> str:
        user = match["user"]
        has_password = match.group(0).count(":") > 1
        if not has_password and len(user) < TOKEN_USER:
            return match.group(0)
        return f"{match['scheme']}{user}@" if user and len(user) < TOKEN_USER else match["scheme"]

    lines = []
    for line in text.splitlines(keepends=True):
        secret = SECRET_KEYS.match(line.rstrip("\r\n"))
        helper = secret is not None and secret[2].lower() == "helper"
        if secret and (not helper or secret[4].lstrip("\"'").startswith("!")):
            line = f"{secret[1]}{secret[2]}{secret[3]}{HIDDEN_VALUE}\n"
        lines.append(URL_CREDENTIALS.sub(url, line))
    cleaned = "".join(lines)
    return None if cleaned == text else cleaned


def git_configs(workspace: Path, nested: list[Path] | None = None) -> list[Path]:
    """The git configuration files a command in `workspace` reads that may hold credentials:
    its repository's `config` (the common one of a worktree) and its submodules', the nested
    repositories' (`nested`: their `.git`), the person's global ones, and every file these
    include."""
    from hephaistus.gitlocation import locate

    home = Path.home()
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    found = [home / ".gitconfig", Path(xdg) / "git" / "config"]
    located = locate(workspace)
    for git_dir in ([located[1]] if located else []) + list(nested or []):
        try:
            common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
            git_dir = git_dir / common if common else git_dir
        except OSError:
            pass
        found += [git_dir / "config", *_submodule_configs(git_dir)]
    return _with_includes([Path(os.path.realpath(path)) for path in found])


def _submodule_configs(git_dir: Path) -> list[Path]:
    """The configuration of each submodule git keeps in `git_dir/modules/` (nested too)."""
    modules = git_dir / "modules"
    if not modules.is_dir():
        return []
    return [path for path in modules.rglob("config") if path.is_file()][:CONFIGS_AT_MOST]


INCLUDE = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.I)
CONFIGS_AT_MOST = 200


def _with_includes(configs: list[Path]) -> list[Path]:
    """`configs` and the files their `[include]` and `[includeIf]` sections name, followed."""
    found: list[Path] = []
    pending = list(configs)
    while pending and len(found) < CONFIGS_AT_MOST:
        path = pending.pop(0)
        if path in found:
            continue
        found.append(path)
        try:
            if not path.is_file() or path.stat().st_size > CONFIG_LIMIT:
                continue
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        section = ""
        for line in lines:
            stripped = line.strip()
            if stripped.startswith("["):
                section = stripped.lower()
                continue
            named = INCLUDE.match(line) if section.startswith(("[include", "[includeif")) else None
            if named:
                target = os.path.expanduser(named[1].strip("\"'"))
                pending.append(Path(os.path.realpath(path.parent / target)))
    return found


CONFIG_LIMIT = 1 << 20  # bytes: a larger git configuration is hidden whole, not read


def cleaned_git_configs(
    workspace: Path, folder: Path, nested: list[Path] | None = None
) -> list[tuple[Path, Path | None]]:
    """(a git configuration, its copy without credentials in `folder`) for each of `workspace`'s
    (see git_configs) that holds some; None as the copy when it could not be read (it is
    hidden whole)."""
    shown: list[tuple[Path, Path | None]] = []
    for number, path in enumerate(git_configs(workspace, nested)):
        try:
            if not path.is_file():
                continue
            if path.stat().st_size > CONFIG_LIMIT:
                shown.append((path, None))
                continue
            cleaned = without_credentials(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            shown.append((path, None))
            continue
        if cleaned is None:
            continue
        copy = folder / f"gitconfig-{number}"
        temporary = folder / f".gitconfig-{number}.{os.getpid()}"
        temporary.write_text(cleaned, encoding="utf-8")
        os.replace(temporary, copy)
        shown.append((path, copy))
    return shown
