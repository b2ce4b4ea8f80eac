# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The contract every switch driver keeps, and what is shared between them.

A driver turns a switch plan (the per-device plan _intent.build_plan derives)
into the platform's configuration lines and applies them as a transaction
over one netmiko connection:

    open_session -> load(lines) -> diff() -> abort() | commit(timer) -> readback_missing(lines) -> confirm() | rollback()

Failure is precise: every device-side failure raises DeviceError naming the
device, the line (when there is one), what the device said, and the state the
device was left in. A driver never swallows an error.
"""

from __future__ import annotations

from typing import Any

# What a device was left in, as reported to the user.
UNCHANGED = "unchanged"
ROLLED_BACK = "rolled back"
PENDING = "pending confirmation"
COMMITTED = "committed"
UNKNOWN = "unknown"


class DeviceError(Exception):
    """A device refused or failed something; str() is the message for the user."""

    def __init__(self, device: str, message: str, *, line: str | None = None, device_said: str | None = None, state: str = UNKNOWN):
        self.device = device
        self.line = line
        self.device_said = device_said
        self.state = state
        parts = ["%s: %s" % (device, message)]
        if line is not None:
            parts.append("line: %r" % line)
        if device_said:
            parts.append("device said: %s" % device_said.strip())
        parts.append("device state: %s" % state)
        super().__init__("; ".join(parts))


class Driver:
    """Base class. Subclasses set the class attributes and implement every method.

    Pure methods (no device): render, parse, session_name.
    Device methods use self.conn, a connected netmiko connection of
    ``device_type`` (created by the caller with ``connection_class``).
    """

    platform = ""
    device_type = ""  # netmiko device_type, e.g. arista_eos

    def __init__(self, conn: Any, device: str):
        self.conn = conn
        self.device = device
        self.session: str | None = None

    # -- netmiko ---------------------------------------------------------
    @staticmethod
    def connection_class():
        """The netmiko connection class for this platform, imported alone
        (importing all of netmiko costs ~0.2 s of CPU per worker)."""
        raise NotImplementedError

    # -- pure ------------------------------------------------------------
    @staticmethod
    def render(plan: dict) -> list[str]:
        """Configuration lines for a switch plan, in the order they are sent.
        Every value comes from the plan; nothing is re-derived here."""
        raise NotImplementedError

    @staticmethod
    def parse(running: str) -> dict:
        """Structured lossless-QoS configuration from the platform's running
        config text (what gather() reads): the gathered/parsed shape, see
        docs/switches.md."""
        raise NotImplementedError

    # -- device ----------------------------------------------------------
    def prepare(self) -> None:
        """Anything needed after connect (enable mode, paging off) beyond netmiko's own session prep."""

    def gather(self) -> str:
        """The running configuration text that parse() reads."""
        raise NotImplementedError

    def open_session(self, name: str) -> None:
        """Open a private session / candidate named ``name``."""
        raise NotImplementedError

    def load(self, lines: list[str]) -> None:
        """Send the lines into the open session. On the first line the device
        rejects: abort the session and raise DeviceError(line=..., device_said=..., state=UNCHANGED)."""
        raise NotImplementedError

    def diff(self) -> str:
        """The device's own diff of the session against running; '' when nothing would change."""
        raise NotImplementedError

    def abort(self) -> None:
        """Discard the session; the device stays as it was."""
        raise NotImplementedError

    def commit(self, confirm_timeout_s: int | None) -> None:
        """Commit the session. With a timeout, the device rolls itself back after
        that many seconds unless confirm() is called; None commits for good."""
        raise NotImplementedError

    def confirm(self, session: str | None = None) -> None:
        """Confirm a pending timed commit (this connection's, or ``session``)."""
        raise NotImplementedError

    def rollback(self, session: str | None = None) -> None:
        """Roll a pending timed commit back now."""
        raise NotImplementedError

    def pending(self) -> dict | None:
        """The pending timed commit, if any: {'session': str|None, 'remaining_s': int|None}."""
        raise NotImplementedError

    def readback_missing(self, lines: list[str]) -> list[str]:
        """Read the running config back and return the rendered lines it does
        not carry (in their context); [] when the device holds the whole plan."""
        raise NotImplementedError

    def save(self) -> None:
        """Make the running config the startup config (after a final commit/confirm)."""
        raise NotImplementedError


def check_cli_line(device: str, line: str) -> None:
    """Refuse a line that could carry a second command (defence in depth:
    _intent already refuses such values; this guards hand-given lines)."""
    if not isinstance(line, str) or any(ord(ch) < 32 or ord(ch) == 127 for ch in line):
        raise DeviceError(device, "refusing a configuration line with a control character", line=repr(line), state=UNCHANGED)
