# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The indentation walk the drivers of space-indented CLIs (EOS, NX-OS) share."""

from __future__ import annotations


def walk(text: str, skip: tuple[str, ...] = ()):
    """(context, line) for each configuration line of space-indented text; the context is the
    tuple of enclosing mode lines (a line's parents are the lines before it with less indentation).
    Blank lines, '!' comment lines and the lines in ``skip`` are skipped; white space in a line is
    folded to single spaces."""
    stack: list[tuple[int, str]] = []
    for raw in text.replace("\r", "").split("\n"):
        stripped = raw.strip()
        if not stripped or stripped.startswith("!") or stripped in skip:
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        line = " ".join(stripped.split())
        yield tuple(item[1] for item in stack), line
        stack.append((indent, line))
