"""Which paths name credential files (`.env`, keys, `.netrc`, ...): the file tools neither read
nor search them, git_commit never commits them, the sandbox shows them empty. `allow_secrets`
lifts the rule for the file tools."""

from __future__ import annotations

import fnmatch
import os
import re

# File names (matched in lower case) whose content is a credential. `allow_secrets` lifts the rule.
SECRET_PATTERNS = (
    ".env*",
    "*.env",
    "*.pem",
    "*.key",
    "id_*",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".htpasswd",
    ".pgpass",
    "credentials",
    "credentials.*",
    "secrets.*",
    "*.secret",
    "*.secrets",
)
SECRET_NAME = re.compile("|".join(fnmatch.translate(p) for p in SECRET_PATTERNS))
# Folders whose every file is a credential.
SECRET_DIRS = {".ssh", ".gnupg", ".aws"}


def is_secret_name(path: str) -> bool:
    """Whether a path's spelling names a credential file (any case)."""
    parts = [part for part in path.lower().replace(os.sep, "/").split("/") if part]
    if not parts:
        return False
    if SECRET_DIRS.intersection(parts[:-1]):
        return True
    return SECRET_NAME.match(parts[-1]) is not None
