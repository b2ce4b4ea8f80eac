# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Text safety: the one rule for which strings may reach a device CLI, a config file or a command line.

The intent (_intent/_checks.py), the switch plan check (_switches/_config.py) and the NCCL
launcher (_nccl/_launch.py) all refuse a string with ``unsafe_reason``, so a name the intent
accepts is a name every consumer accepts. Pure Python standard library.
"""

from __future__ import annotations

# Characters that could end a CLI line, chain a second command, expand a
# variable or start a comment in some device shell or config file.
FORBIDDEN_CHARS = frozenset(";|&$`\\#!\"'{}<>")


def unsafe_reason(value: str) -> str | None:
    """Why a string must not reach a device CLI or file, or None when it may."""
    for char in value:
        if char in "\r\n\x85\u2028\u2029":
            return "a newline"
        if not char.isprintable() and char != " ":
            return f"a control character ({char!r})"
        if char in FORBIDDEN_CHARS:
            return f"{char!r}, which could start a second command or a comment"
    return None
