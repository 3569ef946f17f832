"""Credentials kept out of everything heph shows or stores.

Two kinds: the values of this process's secret environment variables (the API key among them),
which must never appear in a session file, a terminal or an observation; and text that looks like
a credential wherever it comes from (a URL with a password, a known token format), scrubbed from
what commands print before the model sees it.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 8  # shorter values would blank out ordinary words
# Variable names that hold credentials (also the ones kept out of commands' environments).
SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|DSN|WEBHOOK|PRIVATE|(?:^|_)PAT(?:_|$)"
    r"|DATABASE_URL|_URI$",
    re.I,
)
CREDENTIAL_TEXT = re.compile(
    "|".join(
        (
            r"(?<=://)[^\s/@:]+:[^\s/@]+(?=@)",  # user:password@ in a URL
            r"(?<=://)[0-9a-f]{16,}(?=@)",  # a key as the user of a URL (Sentry DSNs)
            r"\bsk-[A-Za-z0-9_-]{16,}",  # OpenAI and others
            r"\bgh[pousr]_[A-Za-z0-9]{20,}",
            r"\bgithub_pat_[A-Za-z0-9_]{20,}",  # GitHub
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack tokens
            r"hooks\.slack\.com/services/[A-Za-z0-9/_-]+",  # Slack webhooks
            r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key ids
            r"\bAIza[0-9A-Za-z_-]{30,}",  # Google API keys
            r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # JWTs
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
            r"(?<=\b[Bb]earer )[A-Za-z0-9._~+/=-]{12,}",  # an Authorization header's token
            r"(?<=\b[Bb]asic )[A-Za-z0-9+/]{12,}={0,2}",  # and its user:password (extraheader)
        )
    )
)
# A setting whose name says it holds a credential (`aws_secret_access_key = ...`, `"password":
# "..."`, `export GITHUB_TOKEN=...`), as config files and environment dumps spell them. Its value
# is hidden, the name kept. Short values, numbers and booleans are settings about secrets
# (`token_count = 5`), not secrets; `==` and `::` are code and test ids.
SECRET_SETTING = re.compile(
    r"""(?P<key>(?:^|(?<=[\s{,;(=]))(?:export\s+)?["']?[\w.-]*"""
    r"(?:secret|token|passw(?:or)?d|api[_-]?key|private[_-]?key|access[_-]?key|credential)"
    r"""[\w.-]*["']?\s*(?<![:=])[:=](?![:=])\s*)"""
    r"""(?P<value>"[^"\n]{6,}"|'[^'\n]{6,}'|(?!(?:\d+|true|false|none|null)\b)[^\s"',;}]{6,})""",
    re.I | re.M,
)


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the environment's credential variables, longest first (so a value that
    contains another is replaced whole)."""
    environ = os.environ if environ is None else environ
    # Every line heph prints asks: matching the whole environment each time cost 2 s for
    # the 5,000 lines of a `heph docs --check`. The same environment gives the same answer.
    return list(_secret_values_of(frozenset(environ.items())))


@functools.lru_cache(maxsize=8)
def _secret_values_of(items: frozenset[tuple[str, str]]) -> tuple[str, ...]:
    found = {
        value
        for name, value in items
        if len(value) >= MIN_SECRET_CHARS
        and (SECRET_NAME.search(name) or CREDENTIAL_TEXT.search(value))
    }
    return tuple(sorted(found, key=len, reverse=True))


def hide_values(text: str, values: Iterable[str]) -> str:
    """`text` with each of `values` replaced by the redaction mark (give the longest first, as
    secret_values does)."""
    for value in values:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def scrub(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` without this process's secret values or anything that looks like a credential."""
    text = CREDENTIAL_TEXT.sub(REDACTED, hide_values(text, secret_values(environ)))
    return SECRET_SETTING.sub(rf"\g<key>{REDACTED}", text)
