"""Which paths name credential files (`.env`, keys, `.netrc`, ...): the file tools neither read
nor search them, git_commit never commits them, the sandbox shows them empty. `allow_secrets`
lifts the rule for the file tools. And where the person's credential stores are, under their home
folder (`CREDENTIAL_STORES`): the sandbox hides them."""

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
    ".huggingface/token",
    ".config/sops",
    ".config/stripe",
    ".ngrok2",
    ".config/ngrok",
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
