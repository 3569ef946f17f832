"""A setting's value checked against the type its dataclass field declares.

A config file's value must already be of that type; an environment variable's string is read
as it. Either way a bad value is a ConfigError naming where it came from (`where`) and the key.
The settings are `config.Config` and `config.DocsConfig`, passed in as `owner`.
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from hephaistus.errors import ConfigError

KIND_NAMES = {int: "a whole number", float: "a number", bool: "true or false", str: "a string"}
MAY_BE_ZERO = ("max_retries", "min_body_lines", "verify_retries")  # counts where 0 means none


def check_known(key: str, known: set[str], where: str) -> None:
    """Refuse a key that is none of `known`, listing the known ones."""
    if key not in known:
        raise ConfigError(f"{where}: unknown key '{key}' (known keys: {', '.join(sorted(known))})")


def field_type(key: str, owner: type) -> type:
    """The type `owner`'s field `key` declares: int, float, bool, else str."""
    kinds = {"int": int, "float": float, "bool": bool}
    declared = str(next(f.type for f in fields(owner) if f.name == key))
    return next((kind for name, kind in kinds.items() if declared.startswith(name)), str)


def check_type(key: str, value: Any, where: str, owner: type) -> None:
    """Refuse a file's `value` for `key` that is not of the field's type (an int will do for
    a float), is not finite, or is not above 0 (0 will do for the counts in MAY_BE_ZERO)."""
    kind = field_type(key, owner)
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        ok = True
    if not ok:
        raise ConfigError(f"{where}: '{key}' must be {KIND_NAMES[kind]}, got {value!r}")
    if kind is float and not math.isfinite(value):
        raise ConfigError(f"{where}: '{key}' must be a finite number, got {value!r}")
    if kind in (int, float) and value <= 0 and key not in MAY_BE_ZERO:
        raise ConfigError(f"{where}: '{key}' must be greater than 0, got {value!r}")


def coerce(key: str, raw: str, where: str, owner: type) -> Any:
    """An environment variable's `raw` string as the value of `owner`'s field `key`."""
    kind = field_type(key, owner)
    try:
        if kind is bool:
            return raw.strip().lower() in {"1", "true", "yes", "on"}
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{where}: '{raw}' is not {KIND_NAMES[kind]}") from None
    if kind is float and not math.isfinite(value):
        raise ConfigError(f"{where}: must be a finite number, got {raw}")
    if kind in (int, float) and value <= 0:
        raise ConfigError(f"{where}: must be greater than 0, got {raw}")
    return value


def documented(text: str, *, harmless: bool = False) -> dict[str, Any]:
    """A field's documentation; `harmless`: a workspace's files may set it without trust (it
    changes neither where requests and the key go, nor what runs, is exposed or approved)."""
    return {"doc": text, "harmless": harmless}
