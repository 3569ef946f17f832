"""Which paths name credential files (`.env`, keys, `.netrc`, ...): the file tools neither read
nor search them, git_commit never commits them, the sandbox shows them empty. `allow_secrets`
lifts the rule for the file tools. And where the person's credential stores are, under their home
folder (`CREDENTIAL_STORES`), and the machine's secrets only root may read (`ROOT_SECRETS`, the
SSH host keys): the sandbox hides them, and the file tools take them for secret files where the
workspace holds them (a home folder, `/`)."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable

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


def is_env_file(name: str) -> bool:
    """Whether a file's name is a dotenv file's (`.env`, `.env.local`, `prod.env`): a secret
    wherever it lies, where a `secrets.py` or a `cacert.pem` deep in a toolchain is a library's."""
    lowered = name.lower()
    return lowered == ".env" or lowered.startswith(".env.") or lowered.endswith(".env")


# The person's credential stores, under the home folder: hidden (empty) in the sandbox. Tokens,
# passwords and keys of cloud, package, database and assistant tools, the shells' histories
# (commands typed with a secret in them) and the browsers' profiles (their cookies).
CREDENTIAL_STORES = (
    # keys and cloud accounts
    ".ssh",
    ".aws",
    ".gnupg",
    ".password-store",
    ".local/share/keyrings",
    ".config/gcloud",
    ".azure",
    ".oci",
    ".config/doctl",
    ".config/hcloud",
    ".config/op",
    ".s3cfg",
    ".config/rclone",
    ".vault-token",
    ".terraformrc",
    ".terraform.d/credentials.tfrc.json",
    ".pulumi/credentials.json",
    ".fly",
    ".config/netlify",
    ".local/share/com.vercel.cli",
    ".wrangler",
    ".config/.wrangler",
    ".supabase",
    ".databrickscfg",
    ".snowflake",
    ".dbt/profiles.yml",
    ".kaggle",
    ".config/kaggle",
    ".cache/huggingface/token",
    ".cache/huggingface/stored_tokens",
    ".huggingface/token",
    ".boto",
    ".sentryclirc",
    ".circleci",
    ".config/helm",
    ".wgetrc",
    ".cloudflared",
    ".config/sops",
    ".config/stripe",
    ".ngrok2",
    ".config/ngrok",
    # mail, transfers and more clouds (a fourth round of attacks)
    ".authinfo",
    ".authinfo.gpg",
    ".msmtprc",
    ".fetchmailrc",
    ".mc/config.json",
    ".doppler",
    ".railway",
    ".scw",
    ".tsh",
    ".rclone.conf",
    ".lftp",
    ".config/heroku",
    ".config/linode-cli",
    ".config/cachix",
    ".config/gitlab-runner",
    ".config/Code/User/globalStorage",
    ".local/share/containers/auth.json",
    ".vault",
    ".local/share/jupyter/runtime",
    ".continue/config.json",
    ".wakatime.cfg",
    ".passwd-s3fs",
    ".thunderbird",
    ".purple",
    ".config/aichat",
    # containers and clusters
    ".docker",
    ".config/containers/auth.json",
    ".kube",
    # git hosts and package registries
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".config/configstore",
    ".pypirc",
    ".config/pip/pip.conf",
    ".pip/pip.conf",
    ".config/pypoetry/auth.toml",
    ".gem/credentials",
    ".local/share/gem/credentials",
    ".bundle/config",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".ivy2/.credentials",
    ".sbt/credentials",
    ".nuget/NuGet/NuGet.Config",
    ".composer/auth.json",
    ".config/composer/auth.json",
    # databases
    ".pgpass",
    ".my.cnf",
    ".mylogin.cnf",
    # assistants and model providers
    ".codex/auth.json",
    ".anthropic",
    ".config/anthropic",
    ".openai",
    ".config/openai",
    ".ollama/id_ed25519",
    ".claude/.credentials.json",
    ".claude.json",
    ".config/github-copilot",
    ".gemini",
    ".config/io.datasette.llm/keys.json",
    ".aider.conf.yml",
    # shells' startup files (where a key is often exported) and shells' and tools' histories
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".config/fish/config.fish",
    ".config/fish/conf.d",
    ".envrc",
    ".bash_history",
    ".zsh_history",
    ".histfile",
    ".local/share/fish/fish_history",
    ".local/share/atuin",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".rediscli_history",
    # browsers' profiles
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
)

# What only root may read on the machine (a sandbox run as root, or heph in `/`, would read it).
ROOT_SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssl/private")
# Where an XDG variable moves the stores listed under the home folder's default for it.
XDG_FOLDERS = {
    ".config/": "XDG_CONFIG_HOME",
    ".local/share/": "XDG_DATA_HOME",
    ".local/state/": "XDG_STATE_HOME",
    ".cache/": "XDG_CACHE_HOME",
}


def host_keys() -> list[str]:
    """The machine's SSH host keys (private: root's alone)."""
    try:
        names = os.listdir("/etc/ssh")
    except OSError:
        return []
    return [os.path.join("/etc/ssh", name) for name in names if name.endswith("_key")]


def credential_stores(home: str) -> list[str]:
    """The person's credential stores, as absolute paths: each of CREDENTIAL_STORES under
    `home`, and, of those in a folder an XDG variable moves (`~/.config/gh` with
    `$XDG_CONFIG_HOME`), where the variable puts it."""
    places = [os.path.join(home, name) for name in CREDENTIAL_STORES]
    for prefix, variable in XDG_FOLDERS.items():
        moved = os.environ.get(variable, "")
        if os.path.isabs(moved):
            places += [
                os.path.join(moved, name.removeprefix(prefix))
                for name in CREDENTIAL_STORES
                if name.startswith(prefix)
            ]
    return places


def secrets_in(root: str | os.PathLike[str]) -> tuple[str, ...]:
    """The person's credential stores (under their real home folder) and the machine's
    secrets that lie in the workspace at `root`, as places_in names them."""
    stores = credential_stores(_followed(os.path.expanduser("~")))
    return places_in(root, [*stores, *ROOT_SECRETS, *host_keys()])


def places_in(root: str | os.PathLike[str], places: Iterable[str]) -> tuple[str, ...]:
    """The workspace-relative names of the `places` (absolute paths) that lie in the workspace
    at `root`, as spelled and as their links lead; "" where the workspace lies in one."""
    base = str(root)
    found = []
    for place in places:
        for where in {os.path.normpath(place), _followed(place)}:
            if where == base or base.startswith(os.path.join(where, "")):
                found.append("")
            elif where.startswith(os.path.join(base, "")):
                found.append(os.path.relpath(where, base))
    return tuple(dict.fromkeys(found))


def under_any(rel: str, places: tuple[str, ...]) -> str | None:
    """The place of `places` that the workspace-relative `rel` is or lies in ("" for all)."""
    if not rel.startswith(places):  # the common case, answered at once (a search's files)
        return None
    for place in places:
        if not place or rel == place or rel.startswith(place + "/"):
            return place
    return None


def _followed(path: str) -> str:
    """`path` with its links followed, as far as heph may read them."""
    try:
        return os.path.realpath(path)
    except (OSError, RuntimeError):  # a link heph may not read (/proc/1/cwd), or a loop
        return os.path.normpath(path)
