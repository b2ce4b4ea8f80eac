# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The shared validation machinery: the error/warning collector (Ctx) and its type, range and text checks."""

from __future__ import annotations

import difflib
import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common._text import unsafe_reason
from ansible_collections.lossless.fabric.plugins.module_utils._intent._derive import _is_int
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import (
    _DESCRIPTION_MAX,
    _DESCRIPTION_RE,
    _GUID_RE,
    _NAME_RE,
    BAD,
)

# ---------------------------------------------------------------------------
# Validation machinery
# ---------------------------------------------------------------------------


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    return type(value).__name__


def key_repr(key: Any) -> str:
    """Show a key inside a path: plain when harmless, repr() when it could mislead."""
    text = str(key)
    if isinstance(key, str) and text and unsafe_reason(text) is None and not set(text) & set("[] "):
        return text
    return repr(key)


def _suggest(word: Any, choices: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    return "one of " + ", ".join(choices)


class Ctx:
    """Collects every error and warning; ``prefix`` names the inventory host."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.prefix = ""

    def error(self, path: str, message: str) -> None:
        self.errors.append(f"{self.prefix}{path}: {message}")

    def warn(self, path: str, message: str) -> None:
        self.warnings.append(f"{self.prefix}{path}: {message}")

    # -- containers ---------------------------------------------------------

    def mapping(self, value: Any, path: str, keys: tuple[str, ...], required: tuple[str, ...] = ()) -> dict:
        """Return ``value`` as a dict (absent/null -> {}), reporting unknown and missing keys."""
        if value is None:
            value = {}
        if not isinstance(value, dict):
            self.error(path, f"{type_name(value)} is not a mapping")
            return {}
        for key in value:
            if key not in keys:
                self.error(f"{path}.{key_repr(key)}", f"unknown key ({_suggest(key, keys)})")
        for key in required:
            if value.get(key) is None:
                self.error(f"{path}.{key}", "required")
        return value

    def sequence(self, value: Any, path: str, min_len: int = 0, max_len: int | None = None) -> list | Any:
        if not isinstance(value, list):
            self.error(path, f"{value!r} is not a list")
            return BAD
        if len(value) < min_len or (max_len is not None and len(value) > max_len):
            bound = f"{min_len}-{max_len}" if max_len is not None else f"at least {min_len}"
            self.error(path, f"a list of {len(value)} entries (need {bound})")
            return BAD
        return value

    # -- scalars --------------------------------------------------------------

    def integer(self, src: dict, key: str, path: str, default: Any, low: int, high: int, what: str = "an integer", nullable: bool = False) -> Any:
        value = src.get(key, default)
        return self.check_int(value, f"{path}.{key}", low, high, what, nullable)

    def check_int(self, value: Any, path: str, low: int, high: int, what: str = "an integer", nullable: bool = False) -> Any:
        if value is None and nullable:
            return None
        if not _is_int(value) or not low <= value <= high:
            self.error(path, f"{value!r} is not {what} ({low}-{high})")
            return BAD
        return value

    def boolean(self, src: dict, key: str, path: str, default: bool) -> Any:
        value = src.get(key, default)
        if not isinstance(value, bool):
            self.error(f"{path}.{key}", f"{value!r} is not a boolean (true or false)")
            return BAD
        return value

    def choice(self, src: dict, key: str, path: str, default: Any, choices: tuple[str, ...], what: str, nullable: bool = False) -> Any:
        value = src.get(key, default)
        if value is None and nullable:
            return None
        if not isinstance(value, str) or value not in choices:
            self.error(f"{path}.{key}", f"{value!r} is not {what} ({_suggest(value, choices) if isinstance(value, str) else 'one of ' + ', '.join(choices)})")
            return BAD
        return value

    def text(self, value: Any, path: str, pattern: re.Pattern, rule: str) -> Any:
        """Check a string that reaches a device: injection first, then its own pattern."""
        if not isinstance(value, str):
            self.error(path, f"{value!r} is not a string")
            return BAD
        reason = unsafe_reason(value)
        if reason:
            self.error(path, f"{value!r} contains {reason}")
            return BAD
        if not pattern.fullmatch(value):
            self.error(path, f"{value!r} is not {rule}")
            return BAD
        return value

    def name(self, value: Any, path: str) -> Any:
        return self.text(value, path, _NAME_RE, "a valid name (a letter or digit, then up to 62 of A-Z a-z 0-9 . _ -)")

    def description(self, value: Any, path: str) -> Any:
        if isinstance(value, str) and len(value) > _DESCRIPTION_MAX:
            self.error(path, f"{value[:40]!r}... is {len(value)} characters long (at most {_DESCRIPTION_MAX})")
            return BAD
        return self.text(value, path, _DESCRIPTION_RE, "a valid description (letters, digits, space and ._,:/()@+=- only)")

    def guid(self, value: Any, path: str) -> Any:
        if isinstance(value, str) and _GUID_RE.fullmatch(value):
            return value.lower()
        self.error(path, f"{value!r} is not a GUID (0x followed by 16 hex digits)")
        return BAD


def _ok(*values: Any) -> bool:
    return all(v is not BAD for v in values)


def _natural_key(text: str) -> list:
    # Ethernet2 before Ethernet10, as an engineer reads a port list.
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text)]
