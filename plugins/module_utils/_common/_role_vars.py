# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Role variables that reach a file, a command line or a name, checked whole.

Each rule is a full match (re.fullmatch; a '$' anchor would let a trailing
newline through) over ASCII only: a value such as opensm_log_flags '0x03\\nfoo'
must never write a second line into opensm.conf. Roles call this through the
lossless.fabric.role_var_errors filter in their preflight:

    {'opensm_log_flags': ['hex_byte', '0x03']} -> []
"""

from __future__ import annotations

import re
from typing import Any

# rule -> (pattern, what the value must be); patterns are matched whole, ASCII only.
_TEXT_RULES: dict[str, tuple[re.Pattern, str]] = {
    # An absolute POSIX path without whitespace, quotes or shell characters.
    "abs_path": (re.compile(r"/[A-Za-z0-9._+@/-]{0,4095}", re.ASCII), "an absolute path (/ then letters, digits and ._+@/- only)"),
    # A path (relative allowed, ~ for the home folder), same characters.
    "path": (re.compile(r"[A-Za-z0-9._+@/~-]{1,4096}", re.ASCII), "a path (letters, digits and ._+@/~- only)"),
    # OpenSM's log_flags: one byte in hex (opensm.conf writes it as 0x03; man opensm, -D / log_flags).
    "hex_byte": (re.compile(r"0x[0-9A-Fa-f]{1,2}", re.ASCII), "a byte in hex (0x00-0xff, like 0x03)"),
    # major.minor, as 'kubectl version' prints them.
    "k8s_version": (re.compile(r"[0-9]{1,3}\.[0-9]{1,3}", re.ASCII), "a Kubernetes version major.minor (like 1.30)"),
    # An https URL without user info, query or fragment.
    "https_url": (re.compile(r"https://[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?(/[A-Za-z0-9._~/-]*)?", re.ASCII), "an https URL (https://host[:port][/path])"),
}
_EMPTY_OK = {"abs_path_or_empty": "abs_path", "path_or_empty": "path"}
_INT_RULES = {"seconds": (1, 10**7, "a number of seconds above 0"), "count": (0, 2**31 - 1, "a whole number, 0 or more")}
# An argv element: no newline or control character (argv is not split by a shell; a newline would still
# end a line in a unit file or a log, and a control character is never meant).
_ARGV_ITEM = re.compile(r"[^\x00-\x1f\x7f\x85\u2028\u2029]{1,4096}")

RULES = tuple(sorted(set(_TEXT_RULES) | set(_EMPTY_OK) | set(_INT_RULES) | {"argv"}))


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, (str, int, float, list, dict, bool)) or value is None else type(value).__name__


def check(name: str, rule: str, value: Any) -> str | None:
    """The error for one variable ('name: value is not ...'), or None when it is fine."""
    if rule not in RULES:
        raise ValueError("unknown rule %r for %s (rules: %s)" % (rule, name, ", ".join(RULES)))
    if rule in _INT_RULES:
        low, high, what = _INT_RULES[rule]
        if isinstance(value, str) and re.fullmatch(r"[0-9]{1,10}", value, re.ASCII):
            value = int(value)  # -e name=300 gives a string; the role's argument spec converts it the same way
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return "%s: %s is not %s (%d-%d)" % (name, _shown(value), what, low, high)
        return None
    if rule == "argv":
        if not isinstance(value, list) or not value:
            return "%s: %s is not a command as a list of arguments (argv)" % (name, _shown(value))
        for index, item in enumerate(value):
            if not isinstance(item, str) or not _ARGV_ITEM.fullmatch(item):
                return "%s[%d]: %s is not a command argument (one line, no control characters)" % (name, index, _shown(item))
        return None
    if rule in _EMPTY_OK:
        if value == "":
            return None
        rule = _EMPTY_OK[rule]
    pattern, what = _TEXT_RULES[rule]
    if not isinstance(value, str) or not pattern.fullmatch(value):
        return "%s: %s is not %s" % (name, _shown(value), what)
    return None


def errors(checks: dict) -> list[str]:
    """Every error of {variable: [rule, value]}, in variable order."""
    found = []
    for name in sorted(checks):
        entry = checks[name]
        if not isinstance(entry, (list, tuple)) or len(entry) != 2:
            raise ValueError("%s: give [rule, value]" % name)
        problem = check(name, entry[0], entry[1])
        if problem:
            found.append(problem)
    return found
