# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The CLI channel every switch driver shares: type the commands ahead in one write, read until
each has its prompt back, split the output on the prompts.

One round trip per batch instead of one per command is what makes a 64-switch push fast
(docs/performance.md); netmiko's send_command waits for each prompt in turn. A driver keeps only
what differs per OS: its prompt pattern, how it removes the echo, what the device's errors look
like and what a lost connection means for the device's state (its DeviceError). Everything about
the wire is here: the transport errors, a closed channel, the wait, the deadline, the split.

    segments, prompts = exchange(conn, ["show version", "show clock"], prompt_re, timeout=10)

``conn`` is a connected netmiko connection (``read_channel``, ``write_channel``, ``remote_conn``).
"""

from __future__ import annotations

import re
import select
import socket
import time
from typing import Any, NamedTuple

# How long a wait lasts at most before the loop looks again (select returns as soon as data arrives).
POLL_S = 0.05
# With settle=True: how long the buffer must stay quiet, ending in a prompt, when the last command's
# echo is not in the last segment (a device that prints the prompt again before the echo: EOS when it
# falls behind, NX-OS per netmiko's CiscoNxosSSH.session_preparation comment).
SETTLE_S = 0.3
_MISSING = object()


class Lost(Exception):
    """The connection is gone: the device closed it, or the transport failed."""


class Silent(Lost):
    """The device did not print the prompts in time; what was read so far is kept for the error."""

    def __init__(self, timeout: float, answered: int, expected: int, tail: str):
        self.timeout = timeout
        self.answered = answered
        self.expected = expected
        self.tail = tail
        super().__init__("no prompt after %.0f s (%d of %d commands answered)" % (timeout, answered, expected))


class Reply(NamedTuple):
    # Per command, in order: the text between the prompt before it and its own prompt (the echo
    # still in it; '\r\n' made '\n'). The driver removes the echo its OS prints.
    segments: list[str]
    # Every prompt matched in the reply, in order (the last one says which mode the CLI is in).
    prompts: list[str]


def transport_errors() -> tuple:
    """Every exception that means the connection failed (a driver maps them to its DeviceError)."""
    errors: list = [OSError, EOFError, Lost]
    try:
        import paramiko  # pylint: disable=import-outside-toplevel

        errors.append(paramiko.SSHException)
    except ImportError:
        pass
    try:
        from netmiko.exceptions import NetmikoBaseException  # pylint: disable=import-outside-toplevel

        errors.append(NetmikoBaseException)  # ReadException, ReadTimeout among them
    except ImportError:
        pass
    return tuple(errors)


def closed(conn: Any) -> bool:
    """The channel is gone: netmiko dropped it (remote_conn None), the device closed it (EOF), or the
    transport stopped (_switch_connection.shut, a step bound that ran out)."""
    chan = getattr(conn, "remote_conn", _MISSING)
    if chan is _MISSING:
        return False  # not a netmiko connection (a test's stand-in): only its reads tell
    if chan is None:
        return True
    if getattr(chan, "closed", False) or getattr(chan, "eof_received", False):
        return True
    transport = getattr(chan, "transport", None)
    is_active = getattr(transport, "is_active", None)
    return bool(callable(is_active) and not is_active())


def wait(conn: Any, seconds: float) -> None:
    """Wait up to ``seconds`` for data on the channel (at once when some arrives)."""
    chan = getattr(conn, "remote_conn", None)
    try:
        # ACK at once: an SSH server without TCP_NODELAY sends each prompt only after the ACK of the
        # previous reply (Nagle), which a delayed ACK holds up to 40 ms a command on Linux.
        chan.get_transport().sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
    except (AttributeError, OSError):
        pass  # not a TCP socket, or not Linux
    if chan is not None and hasattr(chan, "fileno"):
        try:
            select.select([chan], [], [], seconds)
            return
        except (TypeError, ValueError, OSError):
            pass
    time.sleep(min(seconds, 0.005))


def drain(conn: Any) -> None:
    """Discard output nobody read (a late prompt would upset the prompt count)."""
    for _attempt in range(100):
        if not conn.read_channel():
            return


def exchange(conn: Any, commands: list[str], prompt: re.Pattern, timeout: float, *, settle: bool = False,
             align: str = "start", lone_cr: str = "") -> Reply:
    """Write ``commands`` (each followed by a newline) in one chunk and read until ``prompt`` has
    matched once per command. Raises Silent when that has not happened within ``timeout`` seconds,
    Lost when the channel closes, and lets the transport's own errors through (transport_errors()).

    settle: also require the buffer to end in a prompt and the last command's echo to be in the
    last segment, or the buffer to stay quiet SETTLE_S seconds (a device that repeats prompts).
    align: "start" takes the first len(commands) segments; "end" the last ones (a stale prompt
    before them, or a repeated one, then falls away at the front).
    lone_cr: what a '\\r' not followed by '\\n' becomes ('' removes it; Junos redraws with it: '\\n').
    """
    drain(conn)
    conn.write_channel("".join(command + "\n" for command in commands))
    expected = len(commands)
    last = commands[-1].strip() if commands else ""
    deadline = time.monotonic() + timeout
    raw = ""
    quiet_since = None
    while True:
        data = conn.read_channel()
        if data:
            raw += data
            quiet_since = None
            continue
        text = raw.replace("\r\n", "\n").replace("\r", lone_cr)
        found = prompt.findall(text)
        if len(found) >= expected:
            if not settle:
                break
            pieces = prompt.split(text)
            if prompt.fullmatch(text.rsplit("\n", 1)[-1].rstrip(" ")):
                echo = [line.strip() for line in pieces[-2].split("\n") if line.strip()][:1] if len(pieces) > 1 else []
                if echo == [last] or not last or (quiet_since is not None and time.monotonic() - quiet_since > SETTLE_S):
                    break
                quiet_since = quiet_since or time.monotonic()
        if closed(conn):
            raise Lost("the device closed the connection")
        left = deadline - time.monotonic()
        if left <= 0:
            raise Silent(timeout, len(found), expected, text[-500:])
        wait(conn, min(left, POLL_S))
    pieces = prompt.split(text)
    segments = pieces[-(expected + 1) : -1] if align == "end" else pieces[:expected]
    return Reply(segments, found)


def strip_echo(command: str, segment: str) -> str:
    """A shell-style segment without its first line when that line is the command's echo (also when
    line editing mangled the echo past its first 20 characters); surrounding blank lines removed."""
    lines = segment.lstrip("\n").split("\n")
    if lines and " ".join(lines[0].split()) == " ".join(command.split()):
        lines = lines[1:]
    elif lines and lines[0].strip() and command.startswith(lines[0].strip()[:20]):
        lines = lines[1:]
    return "\n".join(lines)
