"""Credentials kept out of everything heph shows or stores.

Two kinds: the values of this process's secret environment variables (the API key among them),
which must never appear in a session file, a terminal or an observation; and text that looks like
a credential wherever it comes from (a URL with a password, a known token format, a key block, the
value of a setting named as a secret, a `.netrc` or `.pgpass` line), scrubbed from what commands
print before the model or a session file sees it.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 8  # shorter values would blank out ordinary words
# Variable names that hold credentials (also the ones kept out of commands' environments): a
# credential word is a word of the name (`_`, `-`, `.`, a digit or a camelCase hump apart), in
# the singular or the plural, never a few letters of another word (AUTH in GIT_AUTHOR_NAME, KEY
# in KEYBOARD, TOKEN in TOKENIZERS). A strong word may come glued after others (PGPASSWORD,
# NGROK_AUTHTOKEN); KEY only after the words that make it a credential (APIKEY, SSHKEY).
_WORD_START = r"(?:(?<![A-Za-z])|(?<=[a-z])(?=[A-Z]))"
_WORD_END = r"(?i:S)?(?:(?![A-Za-z])|(?<=[a-z])(?=[A-Z]))"
_STRONG_WORDS = r"TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTHORIZATION"
_GLUED_BEFORE_KEY = r"API|ACCESS|AUTH|SECRET|PRIVATE|SSH|MASTER|SIGNING|ENCRYPTION|LICENSE"
_WORDS = r"KEY|PASS|AUTH|COOKIE|SESSION|DSN|WEBHOOK|PRIVATE|PAT"
SECRET_NAME = re.compile(
    rf"(?i:{_STRONG_WORDS}){_WORD_END}"
    rf"|{_WORD_START}(?i:(?:{_GLUED_BEFORE_KEY})?KEY|{_WORDS}){_WORD_END}"
    r"|(?i:DATABASE_URL|_URI$)"
)


def _word(literal: str) -> str:
    """`literal` at the start of a word, written literal first: the search then skips ahead to
    the literal (a leading \\b cost 40 ms a megabyte for each format)."""
    escaped = re.escape(literal)
    return rf"{escaped}(?<=\b{escaped})"


# Credentials known by their own shape (in a command's output or in an environment variable's
# value). A shape with a group hides only the group. Each starts with a literal, so that the
# search skips ahead to it; the scrubber takes about 40 ms for a megabyte of output.
TOKEN_SHAPES = (
    # user:password@ (a password may hold @) or a hex key as the user (Sentry DSNs, tokens) in a URL
    r"://([^\s/@:]{0,256}:[^\s/]{1,256}|[0-9a-fA-F]{16,256})@",
    _word("sk-") + r"[A-Za-z0-9_-]{16,}",  # OpenAI and others
    *(_word(f"{kind}k_") + r"(?:live|test)_[A-Za-z0-9]{16,}" for kind in "sr"),  # Stripe
    _word("gh") + r"[pousr]_[A-Za-z0-9]{20,}",
    _word("github_pat_") + r"[A-Za-z0-9_]{20,}",  # GitHub
    _word("glpat-") + r"[A-Za-z0-9_.-]{20,}",  # GitLab
    _word("npm_") + r"[A-Za-z0-9]{36}\b",  # npm
    _word("pypi-") + r"Ag[A-Za-z0-9_-]{50,}",  # PyPI (a macaroon)
    _word("SG.") + r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",  # SendGrid
    _word("xox") + r"[abposr]-[A-Za-z0-9-]{10,}",  # Slack tokens
    r"hooks\.slack\.com/services/[A-Za-z0-9/_-]+",  # Slack webhooks
    r":(?<=\d{8}:)(AA[A-Za-z0-9_-]{30,40})(?![\w-])",  # Telegram bots (the id before : is public)
    *(_word(prefix) + r"[0-9A-Z]{16}\b" for prefix in ("AKIA", "ASIA")),  # AWS access key ids
    _word("AIza") + r"[0-9A-Za-z_-]{30,}",  # Google API keys
    # JWTs, tried only where a run of their characters begins (tried at each -eyJ of a long
    # run, each attempt read the run to its end)
    r"eyJ(?<![\w-]eyJ)[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}",
    r"Key=(?:(?<=AccountKey=)|(?<=SharedAccessKey=))([A-Za-z0-9+/]{20,}={0,2})",  # Azure
    # An Authorization header's token, and its user:password (git's http.extraheader).
    *(_word(f"{b}earer ") + r"([A-Za-z0-9._~+/=-]{12,})" for b in "Bb"),
    *(_word(f"{b}asic ") + r"([A-Za-z0-9+/]{12,}={0,2})" for b in "Bb"),
)
# The first and the last line of a private key block (PEM, OpenSSH, PGP).
KEY_MARKER = re.compile(r"-----(BEGIN|END) (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_KEY_LINE = re.compile(r"(?:[A-Za-z0-9+/=]*|[\w-]+: .*)\r?")  # key material, or an armor header
CREDENTIAL_TEXT = re.compile("|".join((*TOKEN_SHAPES, KEY_MARKER.pattern)))
_TOKENS = tuple(re.compile(shape) for shape in TOKEN_SHAPES)

# Names of settings that hold a credential (`aws_secret_access_key = ...`, `"password": "..."`,
# `export GITHUB_TOKEN=...`, `DB_PASS=...`, kubeconfig's `client-key-data:`), in lower case. Each
# starts with a literal, for speed: one alternation of them all cost 50 ms a megabyte.
SECRET_SETTING_NAMES = (
    "secret",
    "token",
    "passw(?:or)?d",
    "pass(?<![a-z]pass)(?=[\"']?\\s*[:=])",
    "api[_-]?key",
    "private[_-]?key",
    "access[_-]?key",
    "account[_-]?key",
    "key[_-]data",
    "credential",
)
# Its value is hidden, the name kept. Short values, numbers and booleans are settings about
# secrets (`token_count = 5`); calls and subscripts are code (`password = input()`); `==` and `::`
# are code and test ids, and a `:` glued to its value is a URL's (`x-access-token:...@host`).
# The rest of the name is taken whole, as an atomic group would (`(?=(...))\1`): backtracking
# into it made a text of `tokentoken...` cost a second a megabyte.
_SETTING_VALUE = (
    r"""(?=([\w.-]{0,64}))\1["']?\s*(?<![:=])(?:=|:(?=[\s"']))(?![:=])\s*"""
    r"""("[^"\n]{6,}"|'[^'\n]{6,}'|(?!(?:\d+|true|false|none|null)\b)(?![\w.]*[(\[])[^\s"',;}]{6,})"""
)
# Settings and lines that hold a credential, matched in lower case: the group is hidden.
SECRET_SETTINGS = (
    *(name + _SETTING_VALUE for name in SECRET_SETTING_NAMES),
    r'"auth"\s*:\s*"([^"\n]{6,})"',  # a registry login in Docker's config.json
    # .netrc: `machine HOST login USER password PASS`, on one line or several
    _word("machine") + r"[ \t]+\S+[ \t]+(?:login[ \t]+\S+[ \t]+)?password[ \t]+(\S+)",
    _word("default") + r"[ \t]+login[ \t]+\S+[ \t]+password[ \t]+(\S+)",
    _word("login") + r"[ \t]+\S+[ \t]*\r?\n[ \t]*password[ \t]+(\S+)",
    r"^[^:\s]+:(?:\d{1,5}|\*):[^:\s]+:[^:\s]+:([^\n]+)",  # .pgpass: host:port:database:user:
    _word("authorization:") + r"[ \t]*(?:[a-z]+[ \t]+)?(\S{8,})",  # an HTTP header (curl -v)
)
_SETTINGS = tuple(re.compile(shape, re.M) for shape in SECRET_SETTINGS)


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the environment's credential variables, longest first (so a value that
    contains another is replaced whole)."""
    # Every line heph prints asks: matching the whole environment each time cost 2 s for
    # the 5,000 lines of a `heph docs --check`. The same environment gives the same answer,
    # and os.environ's own bytes tell it ten times faster than its decoded items.
    if environ is None:
        raw = getattr(os.environ, "_data", None)
        if isinstance(raw, dict):
            return list(_secret_values_of(frozenset(raw.items())))
        environ = os.environ
    return list(_secret_values_of(frozenset(environ.items())))


@functools.lru_cache(maxsize=8)
def _secret_values_of(items: frozenset[tuple[Any, Any]]) -> tuple[str, ...]:
    found = {
        value
        for name, value in map(_as_text, items)
        if len(value) >= MIN_SECRET_CHARS
        and (SECRET_NAME.search(name) or CREDENTIAL_TEXT.search(value))
    }
    return tuple(sorted(found, key=len, reverse=True))


def _as_text(item: tuple[Any, Any]) -> tuple[str, str]:
    """A variable as text: os.environ keeps them as bytes, decoded as it decodes them."""
    name, value = item
    if isinstance(name, bytes):
        return os.fsdecode(name), os.fsdecode(value)
    return name, value


def hide_values(text: str, values: Iterable[str]) -> str:
    """`text` with each of `values` replaced by the redaction mark (give the longest first, as
    secret_values does)."""
    for value in values:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def scrub(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` without this process's secret values or anything that looks like a credential."""
    return _scrubbed(text, tuple(secret_values(environ)))


def _scrubbed(text: str, values: tuple[str, ...]) -> str:
    if len(text) < MIN_SECRET_CHARS:  # too short to hold a secret value or a credential
        return text
    return _scrubbed_long(text, values)


# A step's observation is recorded twice (the tool's span, the message that carries it) and
# the task in every request's span: the same text is scanned once.
@functools.lru_cache(maxsize=32)
def _scrubbed_long(text: str, values: tuple[str, ...]) -> str:
    text = hide_values(text, values)
    return _hidden(text, sorted(credential_spans(text)))


def scrub_strings(value: Any, values: tuple[str, ...] | None = None) -> Any:
    """`value` (JSON's kinds: dicts, lists, strings, ...; anything else as its text) with every
    string scrubbed (see scrub), for a record kept on disk: a key typed into a task is not kept
    with it. The environment's secret values are read once for all of it (`values`)."""
    values = tuple(secret_values()) if values is None else values
    if isinstance(value, str):
        return _scrubbed(value, values)
    if isinstance(value, dict):
        return {key: scrub_strings(item, values) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_strings(item, values) for item in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return _scrubbed(str(value), values)  # as JSON would spell it with default=str


def credential_spans(text: str) -> Iterator[tuple[int, int]]:
    """Where `text` holds something that looks like a credential (spans may overlap)."""
    for pattern in _TOKENS:
        yield from _spans(pattern, text)
    yield from _key_blocks(text)
    lowered = text.lower()
    if len(lowered) != len(text):  # a rare letter whose lower case is longer: ASCII alone
        lowered = text.translate(_ASCII_LOWER)
    for pattern in _SETTINGS:
        yield from _spans(pattern, lowered)


_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


def _spans(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, int]]:
    """Where `pattern` matches: its last group where it has one, else all of the match."""
    part = pattern.groups
    for match in pattern.finditer(text):
        if match.start(part) >= 0:  # an unmatched group (another shape's branch) shows nothing
            yield match.span(part)


def _key_blocks(text: str) -> Iterator[tuple[int, int]]:
    """Private key blocks, first line to last; one whose first or last line was cut off (a
    command's output keeps its end; `head` keeps a start) as far as its lines of key go."""
    opened = None
    for marker in KEY_MARKER.finditer(text):
        if marker.group(1) == "BEGIN":
            opened = marker.start() if opened is None else opened
        elif opened is not None:
            yield opened, marker.end()
            opened = None
        else:
            yield _key_lines_before(text, marker.start()), marker.end()
    if opened is not None:
        yield opened, _key_lines_after(text, opened)


def _key_lines_before(text: str, start: int) -> int:
    """Where the lines of key material that end at `start` begin."""
    while start > 0 and text[start - 1] == "\n":
        line_start = text.rfind("\n", 0, start - 1) + 1
        if not _KEY_LINE.fullmatch(text, line_start, start - 1):
            break
        start = line_start
    return start


def _key_lines_after(text: str, start: int) -> int:
    """Where the lines of key material after the line at `start` end."""
    end = text.find("\n", start)
    while end != -1:
        next_end = text.find("\n", end + 1)
        line_end = len(text) if next_end == -1 else next_end
        if not _KEY_LINE.fullmatch(text, end + 1, line_end):
            break
        end = next_end
    return len(text) if end == -1 else end


def _hidden(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each span (sorted) replaced by the redaction mark, overlapping ones by one."""
    pieces, shown_from = [], 0
    for start, end in spans:
        if start < shown_from:  # inside or across the one before: hidden with it
            shown_from = max(shown_from, end)
            continue
        pieces += [text[shown_from:start], REDACTED]
        shown_from = end
    pieces.append(text[shown_from:])
    return "".join(pieces)
