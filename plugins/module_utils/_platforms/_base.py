# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The contract every switch driver keeps, and what is shared between them.

A driver turns a switch plan (the per-device plan _intent/_plan.py build_plan derives)
into the platform's configuration lines and applies them as a transaction
over one netmiko connection:

    open_session -> load(lines) -> diff() -> abort() | commit(timer) -> readback_missing(lines) -> confirm() | rollback()

Failure is precise: every device-side failure raises DeviceError naming the
device, the line (when there is one), what the device said, and the state the
device was left in. A driver never swallows an error.
"""

from __future__ import annotations

from typing import Any, NamedTuple

# What a device was left in, as reported to the user.
UNCHANGED = "unchanged"
ROLLED_BACK = "rolled back"
PENDING = "pending confirmation"
COMMITTED = "committed"
UNKNOWN = "unknown"


class Platform(NamedTuple):
    """One switch OS the collection can configure: the record each driver module
    publishes as ``PLATFORM`` (and _platforms.PLANNED for a platform whose driver
    is not in yet). _intent validates a switch with it and keeps no table of its own.

    ``notes`` are warning templates emitted for every switch of this platform
    (fields: ``host``, ``dscp``, ``priority``); they only fire once
    ``supported`` is True, so a known pitfall is recorded here before the
    driver exists.
    """

    name: str
    # Interface names the intent accepts for ports, fullmatched with re.ASCII. ASCII digits
    # only ([0-9], never \d: \d also matches '\u0661' or '\uff11', which would pass and reach the switch).
    interface_pattern: str
    # One name that matches, quoted in the error for a name that does not.
    interface_example: str
    supported: bool = True
    notes: tuple[str, ...] = ()
    # Largest interface (IP) MTU the OS accepts; lossless_fabric.roce.mtu.switch must not exceed it.
    max_mtu: int = 9216
    # Why max_mtu is what it is, appended to the error for an MTU above it ('' when the number says it all).
    max_mtu_why: str = ""
    # Units capability: True where the OS takes ECN thresholds only as a fill level in percent of
    # the queue's buffer (Junos drop-profile fill-level 0-100), so the plan needs that buffer size.
    ecn_in_percent_of_queue_buffer: bool = False
    # speed_gbps -> {min_threshold_bytes, max_threshold_bytes, max_probability_percent}: the platform's ECN
    # starting values, from its _vendor_<os>.py (ValueError naming the platform for a speed it has none for).
    # None: the collection's derived rule (_intent/_derive.py _derived_ecn_defaults).
    ecn_defaults: Any = None
    # With ecn_in_percent_of_queue_buffer: queue_buffer_bytes -> the same shape (the percents as bytes of that buffer).
    ecn_defaults_of_buffer: Any = None
    # (lowest, highest) seconds the OS's timed commit (commit timer, commit confirmed, commit-timeout) takes;
    # None where the OS documents no limit. A change window hands its remaining time to each switch as that
    # timer, so the window's preflight refuses a window longer than a switch can hold (_window/_change_window.py).
    commit_timer_s: tuple[int, int] | None = None
    # roce (the intent's normalized roce section) -> [(key under lossless_fabric.roce, value, why)]: the values the
    # OS has no form for (PFC watchdog timers and actions, a PFC priority), from its _vendor_<os>.py. The intent
    # refuses them before any device, naming the key, the value and the platform (_intent/_devices.py); the renderer
    # refuses by the same functions. None: no such rule.
    roce_errors: Any = None
    # The renderer configures the lossless class per port and refuses a plan without any: the intent requires one.
    requires_ports: bool = False
    # With ecn_in_percent_of_queue_buffer: (min_bytes, max_bytes, queue_buffer_bytes) -> why the OS cannot carry a
    # port's ECN thresholds as fill levels of that buffer, or None (the intent refuses by it; so does the renderer).
    ecn_of_buffer_error: Any = None
    # lossless_fabric.roce.mode (issue 36) -> the vendor source that the OS runs it (PFC off end to end for ecn_only, ECN
    # off on a queue for pfc_only), from its _vendor_<os>.py ROCE_MODES. The intent refuses a mode not listed, naming
    # the platform (_intent/_devices.py). None: no mode but lossless is claimed.
    roce_modes: Any = None


def watchdog_intent_errors(roce: Any, rule: Any) -> list[tuple[str, Any, str]]:
    """``rule(detection_ms, restoration_ms, action) -> [(key, why)]`` (a platform's _vendor rule, which its renderer
    refuses by too) applied to the enabled PFC watchdog of the intent's normalized roce section, as (key under
    lossless_fabric.roce, value, why); nothing when the watchdog is off or a value is missing (the intent's own
    errors name those). The platforms' roce_errors use it."""
    wd = ((roce if isinstance(roce, dict) else {}).get("pfc") or {}).get("watchdog")
    if not isinstance(wd, dict) or wd.get("enabled") is not True:
        return []
    values = {key: wd.get(key) for key in ("detection_time_ms", "restoration_time_ms", "action")}
    if not all(isinstance(values[key], int) and not isinstance(values[key], bool) for key in ("detection_time_ms", "restoration_time_ms")):
        return []
    if not isinstance(values["action"], str):
        return []
    return [("pfc.watchdog." + key, values[key], why) for key, why in rule(*values.values())]


# The counters (names of module_utils/_switches/_counters.py COUNTERS) a reader looks for on every switch: PFC pause
# frames, queue drops, ECN marks, PFC watchdog storms. A driver names those its platform cannot show in
# Driver.counters_not_available; the integration suite checks every other one on every platform.
COUNTERS_EXPECTED = ("pfc_rx_frames", "pfc_tx_frames", "queue_drops", "ecn_marked", "ecn_marked_total", "watchdog_storms")


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
    # Of the counters a reader looks for on every switch (COUNTERS_EXPECTED), those this platform's show commands
    # print no count of, on any port (each in docs/vendor-<platform>.md): a snapshot lists them in not_available,
    # never as a 0. docs/counters.md has every counter per platform.
    counters_not_available: tuple[str, ...] = ()

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

    @staticmethod
    def missing_lines(lines: list[str], running: str) -> list[str]:
        """Pure: the rendered ``lines`` that the running config text ``running`` does not carry,
        compared by meaning (readback_missing's logic); [] when it holds them all."""
        raise NotImplementedError

    @staticmethod
    def running_of(lines: list[str]) -> str:
        """Pure: the running-config text (what gather() reads) of a device that holds exactly the rendered
        ``lines``, so parse() and missing_lines() can be checked against render() without a device. Lines
        that only clear state (Junos 'delete') leave nothing in it; by default every line is kept."""
        return "\n".join(lines)

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

    # -- links (read-only; the shape is described at the end of this file) --
    @staticmethod
    def link_commands(ports: list[str] | None = None) -> list[str]:
        """The read-only show commands that give LLDP neighbours, oper state and speed."""
        raise NotImplementedError

    @staticmethod
    def parse_links(outputs: dict[str, str]) -> dict:
        """Pure: {command: what the device printed} -> ends. LinkFormError on a form it does not read."""
        raise NotImplementedError

    # -- counters (read-only; module_utils/_switches/_counters.py calls these; module_utils/_common/_snapshot.py holds the snapshot shape) --
    @staticmethod
    def counter_commands(ports: list[str] | None = None) -> list[str]:
        """The read-only show commands of one counters snapshot of ``ports`` (None: every port, where the
        platform can show them all at once; ValueError, naming the key, where it cannot or a name is not its own)."""
        raise NotImplementedError

    @staticmethod
    def parse_counters(outputs: dict[str, str]) -> tuple[dict[str, dict], dict[str, str]]:
        """Pure: {command: what the device printed} -> ({port: counters} in the _snapshot shape,
        {command: what the device said} for each command it refused or whose output is not a form
        this parser reads). Output it does not read is never an empty success: it lands in the second dict."""
        raise NotImplementedError

    def read_counters(self, commands: list[str]) -> dict[str, str]:
        """Read-only show commands over this connection (one round trip where the platform allows); {command: output}."""
        raise NotImplementedError

    def links(self, ports: list[str] | None = None) -> tuple[list[str], dict[str, str], dict]:
        """Run link_commands over the existing read-only channel (read_counters: one round trip
        where the platform allows) and parse them: (commands, outputs, ends)."""
        commands = self.link_commands(ports)
        outputs = self.read_counters(commands)
        return commands, outputs, self.parse_links(outputs)


def check_cli_line(device: str, line: str) -> None:
    """Refuse a line that could carry a second command (defence in depth:
    _intent already refuses such values; this guards hand-given lines)."""
    if not isinstance(line, str) or any(ord(ch) < 32 or ord(ch) == 127 for ch in line):
        raise DeviceError(device, "refusing a configuration line with a control character", line=repr(line), state=UNCHANGED)


# -- links (read-only; module_utils/_switches/_links.py, docs/cabling contract) --
# Every driver also implements:
#
#   link_commands(ports) -> [command]      static: the read-only show commands
#   parse_links(outputs) -> ends           static, pure: {command: text} -> the ends shape
#   links(ports) -> (commands, outputs, ends)   runs the commands over this connection
#
# ends = {port: {"oper": "up"|"down"|None, "speed": "400G"|None, "width": None,
#                "neighbors": [{"system", "port", "port_id_subtype", "port_descr", "chassis_id"}]}}
# The readers report what the device says and never compare; a form they do not
# know raises LinkFormError naming the platform, the command and the form expected.

# IEEE 802.1AB port ID subtypes (LLDP-MIB LldpPortIdSubtype): number -> the short name the contract uses.
PORT_ID_SUBTYPES = {1: "ifalias", 2: "port_component", 3: "mac", 4: "network_address", 5: "ifname", 6: "agent_circuit_id", 7: "local"}


class LinkFormError(ValueError):
    """A links command printed something the parser does not read; str() names platform, command, form."""

    def __init__(self, platform: str, command: str, expected: str, got: str | None = None):
        self.platform = platform
        self.command = command
        snippet = " ".join((got or "").split())[:160] or "(no output)"
        super().__init__("%s: %r: not a form this parser reads; expected %s; got: %s" % (platform, command, expected, snippet))


def speed_g(value: Any) -> str | None:
    """'400G', '400Gbps', '400Gb/s', 'a-400G', 400000000000 (bit/s) -> '400G'; None for anything below 1G,
    'auto', 'unconf', '' (the contract's speeds are whole G)."""
    import re  # pylint: disable=import-outside-toplevel

    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        gig = value / 1e9
        return "%dG" % int(gig) if gig >= 1 and float(gig).is_integer() else None
    match = re.fullmatch(r"\s*(?:a-)?(\d+(?:\.\d+)?)\s*([GMT])(?:b(?:ps|/s|it/s)?|bps|E)?\s*", str(value), re.IGNORECASE)
    if not match:
        return None
    number = float(match.group(1)) * {"M": 0.001, "G": 1, "T": 1000}[match.group(2).upper()]
    return "%dG" % int(number) if number >= 1 and number.is_integer() else None


def neighbor(system: Any, port: Any, subtype: str | None = None, descr: Any = None, chassis: Any = None) -> dict:
    """One neighbour in the contract's shape (empty strings are 'not sent': None)."""

    def text(value: Any) -> str | None:
        return None if value is None or str(value).strip() == "" else str(value).strip()

    return {"system": text(system), "port": text(port), "port_id_subtype": subtype, "port_descr": text(descr), "chassis_id": text(chassis)}


def end(oper: str | None = None, speed: str | None = None) -> dict:
    return {"oper": oper, "speed": speed, "width": None, "neighbors": []}
