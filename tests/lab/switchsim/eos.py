# SPDX-License-Identifier: GPL-3.0-or-later
"""Arista EOS model: modes, configure sessions, commit timer, QoS/PFC grammar, counters.

Grammar sources (docs/vendor-eos.md lists them with what is unverified):
- aristanetworks/avd python-avd/pyavd/_eos_cli_config_gen/j2templates/eos/ (ethernet-interfaces.j2,
  ethernet-interface-tx-queues.j2, ethernet-interface-uc-tx-queues.j2, qos.j2, priority-flow-control.j2)
  and schema/schema_fragments/ (ranges: ECN thresholds 1-256000000, max-mark-probability 1-100, weight 0-15).
- github.com/aristanetworks/avd/issues/4900: a 7280SRA (Jericho) takes 'tx-queue N' and offers the
  threshold units bytes|kbytes|mbytes|microseconds|milliseconds.
- The queue sub-mode follows the emulated model's ASIC family: Strata (7050X/7060X/...) has
  'uc-tx-queue N' and no 'tx-queue N'; Jericho (7280R/7500R/7800R) the reverse (AVD has both templates).
- Sessions: arista.com/en/um-eos/eos-configure-session (an uncommitted session stays after the
  terminal goes: it is discarded only by abort, a reboot or a 24 h timeout); the JSON of
  'show configuration sessions detail' as napalm-automation/napalm napalm/eos/eos.py reads it.
Prompt/session/error forms: see README.md in this package.
"""
from __future__ import annotations

import difflib
import json
import re
import time
from typing import Any

from . import grammar
from .commit import ConfirmedCommit
from .core import Device, Shell, SimError, _wiring_module, natural_key

ERR_INVALID = "% Invalid input (at token {pos}: '{tok}')"
ERR_INCOMPLETE = "% Incomplete command (at token {pos}: '{tok}')"
ERR_AMBIGUOUS = "% Ambiguous command (at token {pos}: '{tok}')"
ERR_PRIV = "% Invalid input (privileged mode required)"
WARN_NO_INTF = "! Interface does not exist. The configuration will not take effect until the module is inserted."

INTF_TYPES = {
    "ethernet": ("Ethernet", "Et"),
    "port-channel": ("Port-Channel", "Po"),
    "loopback": ("Loopback", "Lo"),
    "management": ("Management", "Ma"),
    "vlan": ("Vlan", "Vl"),
}

# Model line -> ASIC family (the simulator's own table; production code has _vendor_eos).
_FAMILY_PREFIXES = (("DCS-7050", "strata"), ("DCS-7060", "strata"), ("DCS-7260", "strata"), ("DCS-7300", "strata"),
                    ("DCS-7358", "strata"), ("DCS-7368", "strata"), ("DCS-7388", "strata"),
                    ("DCS-7280", "jericho"), ("DCS-7500", "jericho"), ("DCS-7800", "jericho"))
QUEUE_BLOCK = {"strata": "uc-tx-queue", "jericho": "tx-queue"}
# The units each family's 'random-detect ecn minimum-threshold N ?' offers: Jericho from avd#4900;
# Strata from AVD's schema (no captured Strata '?' output: unverified).
ECN_UNITS = {"strata": "segments|bytes|kbytes|mbytes|milliseconds",
             "jericho": "bytes|kbytes|mbytes|microseconds|milliseconds"}
ECN_MAX = 256000000  # AVD ethernet_interfaces schema: min 1, max 256000000


def model_family(model: str) -> str:
    for prefix, family in _FAMILY_PREFIXES:
        if model.startswith(prefix):
            return family
    raise SimError(f"no ASIC family known for model {model!r}")


class Rule:
    def __init__(self, pattern: str, kind: str, key: str | None = None, **kw: Any) -> None:
        self.pattern = pattern
        self.elems = grammar.parse_pattern(pattern)
        self.kind = kind          # 'set' | 'block' | 'action' | 'show'
        self.key = key
        self.kw = kw

    def __repr__(self) -> str:  # pragma: no cover
        return f"Rule({self.pattern!r})"


def R(pattern: str, kind: str = "set", key: str | None = None, **kw: Any) -> Rule:
    return Rule(pattern, kind, key, **kw)


SHOW_RULES = [
    R("show version", "show", fn="show_version"),
    R("show hostname", "show", fn="show_hostname"),
    R("show running-config", "show", fn="show_running"),
    R("show running-config section <re:line>", "show", fn="show_running_section"),
    R("show running-config interfaces <intf:intf>+", "show", fn="show_running_intf"),
    R("show session-config", "show", fn="show_session_config"),
    R("show session-config diffs", "show", fn="show_session_diffs"),
    R("show session-config named <name:word>", "show", fn="show_session_config"),
    R("show session-config named <name:word> diffs", "show", fn="show_session_diffs"),
    R("show configuration sessions [detail]", "show", fn="show_sessions"),
    R("show priority-flow-control", "show", fn="show_pfc"),
    R("show priority-flow-control status", "show", fn="show_pfc"),
    R("show priority-flow-control counters", "show", fn="show_pfc_counters"),
    R("show priority-flow-control counters detail", "show", fn="show_pfc_counters", detail=True),
    R("show priority-flow-control counters watchdog", "show", fn="show_pfc_watchdog"),
    R("show qos interfaces ecn counters queue", "show", fn="show_ecn_counters"),
    R("show qos interfaces <intf:intf> ecn counters queue", "show", fn="show_ecn_counters"),
    R("show qos maps", "show", fn="show_qos_maps"),
    R("show interfaces counters queue", "show", fn="show_queue_counters"),
    R("show interfaces counters queue detail", "show", fn="show_queue_counters"),
    R("show interfaces <intf:intf> counters queue", "show", fn="show_queue_counters"),
    R("show interfaces <intf:intf> counters queue detail", "show", fn="show_queue_counters"),
    R("show interfaces counters queue drops", "show", fn="show_queue_drops"),
    R("show interfaces counters discards", "show", fn="show_discards"),
    R("show clock", "show", fn="show_clock"),
    R("show lldp neighbors detail", "show", fn="show_lldp_detail"),
    R("show interfaces status", "show", fn="show_intf_status"),
    # What the peers send when they gather facts (docs/vendor-eos.md "What peers send"): arista.eos
    # eos_facts, napalm eos (ssh transport) and netmiko arista_eos with ntc-templates.
    R("show lldp neighbors", "show", fn="show_lldp"),
    R("show interfaces description", "show", fn="show_intf_description"),
    R("show startup-config", "show", fn="show_startup"),
    R("show inventory", "show", fn="show_inventory"),
    R("show interfaces", "show", fn="show_interfaces"),
    # Last, so that a keyword form above wins a tie ('show interfaces status'); an argument that
    # names no interface ('sh int st') is matched again without this rule (EosShell._dispatch).
    R("show interfaces <intf:intf>+", "show", fn="show_interfaces", intf_check=True),
]

EXEC_RULES = [
    R("enable", "action", fn="do_enable"),
    R("terminal length <n:int:0-32767>", "action", fn="do_terminal_length"),
    R("terminal width <n:int:10-32767>", "action", fn="do_terminal_width"),
    R("exit", "action", fn="do_logout"),
    R("logout", "action", fn="do_logout"),
    R("quit", "action", fn="do_logout"),
] + SHOW_RULES

PRIV_ONLY_RULES = [
    R("disable", "action", fn="do_disable"),
    R("configure", "action", fn="do_configure"),
    R("configure terminal", "action", fn="do_configure"),
    R("configure session", "action", fn="do_configure_session"),
    R("configure session <name:word>", "action", fn="do_configure_session"),
    R("configure session <name:word> commit", "action", fn="do_session_commit_exec"),
    R("configure session <name:word> abort", "action", fn="do_session_abort_exec"),
    R("copy running-config startup-config", "action", fn="do_write"),
    R("write", "action", fn="do_write"),
    R("write memory", "action", fn="do_write"),
    # 'dir' and 'bash' are privileged EXEC commands (Arista EOS user manual, "dir" and "bash"
    # command pages; arista.eos cliconf tolerates the refusal of 'bash' outside enable mode).
    R("dir", "show", fn="show_dir"),
    R("dir all-filesystems", "show", fn="show_dir", every=True),
    R("dir <fs:word>", "show", fn="show_dir"),
    R("bash <cmd:line>", "action", fn="do_bash"),
]
PRIV_RULES = EXEC_RULES + PRIV_ONLY_RULES

COMMON_CONFIG_RULES = [
    R("end", "action", fn="do_end"),
    R("exit", "action", fn="do_exit"),
    R("commit", "action", fn="do_commit"),
    R("commit timer <t:hms>", "action", fn="do_commit_timer"),
    R("abort", "action", fn="do_abort"),
    R("rollback clean-config", "action", fn="do_rollback_clean"),
] + SHOW_RULES

GLOBAL_RULES = [
    R("hostname <name:word>", key="hostname"),
    R("interface <intf:intf>+", "block", fn="enter_interface"),
    R("qos profile <name:word>", "block", fn="enter_qos_profile"),
    R("qos map dscp <dscp:int:0-63>+ to traffic-class <tc:int:0-7>", "action", fn="do_qos_map_dscp"),
    R("qos map traffic-class <tcs:int:0-7>+ to tx-queue <q:int:0-7>", "action", fn="do_qos_map_tc"),
    R("qos random-detect ecn allow non-ect [chip-based]", key="qos random-detect ecn allow non-ect"),
    R("priority-flow-control all off", key="priority-flow-control all off"),
    # Watchdog timers: AVD's schema gives the format (seconds, 2 decimals; polling 3) and
    # "Example: 0.01 or 60"; the 0.01-60 bounds come from that example (unverified as limits).
    R("priority-flow-control pause watchdog default timeout <t:dec:0.01-60:2>",
      key="priority-flow-control pause watchdog default timeout"),
    R("priority-flow-control pause watchdog default recovery-time <t:dec:0.01-60:2>",
      key="priority-flow-control pause watchdog default recovery-time"),
    R("priority-flow-control pause watchdog default polling-interval <t:dec:0.005-60:3>",
      key="priority-flow-control pause watchdog default polling-interval"),
    R("priority-flow-control pause watchdog action <a:enum:drop|no-drop>",
      key="priority-flow-control pause watchdog action"),
    R("priority-flow-control pause watchdog override action drop",
      key="priority-flow-control pause watchdog override action drop"),
]

INTF_RULES = [
    R("description <d:line>", key="description"),
    R("shutdown", key="shutdown"),
    R("no switchport", key="switchport"),
    R("switchport", key="switchport", store=False),
    R("mtu <n:int:68-9214>", key="mtu"),
    R("ip address <a:word>", key="ip address", validate="cidr"),
    R("service-profile <name:word>", key="service-profile"),
    R("qos trust <t:enum:dscp|cos>", key="qos trust"),
    R("priority-flow-control on", key="priority-flow-control on"),
    R("priority-flow-control priority <p:int:0-7> no-drop", key="priority-flow-control priority {p}"),
    R("priority-flow-control pause watchdog", key="priority-flow-control pause watchdog"),
    R("priority-flow-control pause watchdog port action <a:enum:drop|notify-only>",
      key="priority-flow-control pause watchdog port action"),
    R("priority-flow-control pause watchdog port timer timeout <t:dec:0.01-60:2> polling-interval auto "
      "recovery-time <r:dec:0.01-60:2> [forced]", key="priority-flow-control pause watchdog port timer"),
    R("priority-flow-control pause watchdog port timer timeout <t:dec:0.01-60:2> polling-interval "
      "<pi:dec:0.005-60:3> recovery-time <r:dec:0.01-60:2> [forced]",
      key="priority-flow-control pause watchdog port timer"),
]
# One of these per model (EosDevice.family): the other is '% Invalid input' as on the device.
QUEUE_RULES = {family: [R(f"{kw} <q:int:0-7>", "block", fn="enter_txq")] for family, kw in QUEUE_BLOCK.items()}

# 'qos profile NAME' (AVD qos-profiles.j2): the interface-level QoS lines and queue blocks, applied
# to an interface with 'service-profile NAME'. Prompt '(config-qos-profile-NAME[-txq-N])#' as avd#4900
# shows; inside a session the 'config-s-NAME6' prefix is assumed (unverified).
PROFILE_RULES = [r for r in INTF_RULES if r.key and (r.key.startswith(("qos trust", "priority-flow-control")))]
PROFILE_QUEUE_RULES = {family: [R(f"{kw} <q:int:0-7>", "block", fn="enter_profile_txq")] for family, kw in QUEUE_BLOCK.items()}

TXQ_COMMON_RULES = [
    R("priority strict", key="priority"),
    R("no priority", key="priority"),
    R("bandwidth percent <n:int:1-100>", key="bandwidth percent"),
    # AVD renders it in tx-queue and uc-tx-queue blocks; whether the PFC watchdog requires it on
    # the watched queue is unverified, so the simulator does not require it (docs/vendor-eos.md).
    R("bandwidth guaranteed percent <n:int:1-100>", key="bandwidth guaranteed"),
    R("random-detect ecn count", key="random-detect ecn count"),
]
TXQ_RULES = {
    family: TXQ_COMMON_RULES + [
        R(f"random-detect ecn minimum-threshold <min:int:1-{ECN_MAX}> <mu:enum:{units}> "
          f"maximum-threshold <max:int:1-{ECN_MAX}> <xu:enum:{units}> "
          "[max-mark-probability <p:int:1-100>] [weight <w:int:0-15>]",
          key="random-detect ecn minimum-threshold", validate="ecn"),
    ]
    for family, units in ECN_UNITS.items()
}

_INTF_LINE_ORDER = [
    "description", "shutdown", "mtu", "switchport", "ip address", "service-profile", "qos trust",
    "priority-flow-control on", "priority-flow-control priority",
    "priority-flow-control pause watchdog port action", "priority-flow-control pause watchdog port timer",
    "priority-flow-control pause watchdog",
]
# The order a real switch prints a queue's lines (avd#4900's paste of a 7280SRA; AVD-M agrees on
# priority before bandwidth).
_TXQ_LINE_ORDER = ["priority", "bandwidth", "random-detect ecn minimum-threshold", "random-detect ecn count"]
_GLOBAL_ORDER = ["hostname", "qos map", "qos random-detect", "priority-flow-control"]


def _order(key: str, order: list[str]) -> tuple:
    for i, prefix in enumerate(order):
        if key.startswith(prefix):
            return (i, natural_key(key))
    return (len(order), natural_key(key))


class Block:
    """A config block: keyed lines plus keyed sub-blocks (interface, tx-queue)."""

    def __init__(self) -> None:
        self.lines: dict[str, str] = {}
        self.subs: dict[str, Block] = {}

    def copy(self) -> Block:
        b = Block()
        b.lines = dict(self.lines)
        b.subs = {k: v.copy() for k, v in self.subs.items()}
        return b

    def sub(self, header: str) -> Block:
        if header not in self.subs:
            self.subs[header] = Block()
        return self.subs[header]


# ---------------------------------------------------------------------------
# interface names
# ---------------------------------------------------------------------------
_INTF_RE = re.compile(r"^([A-Za-z-]+)\s*([\d/,\-]+.*)$")


def expand_interfaces(tokens: list[str]) -> tuple[list[str], str] | None:
    """Expand EOS interface tokens (Et1, Ethernet1/1-4, Et1,3,5-6) to names + prompt label."""
    text = ",".join(tokens)
    text = re.sub(r"\s*-\s*", "-", text)
    names: list[str] = []
    current: tuple[str, str] | None = None
    labels: list[str] = []
    for piece in [p for p in text.split(",") if p]:
        m = _INTF_RE.match(piece)
        if m:
            word = m.group(1).lower()
            hits = [v for k, v in INTF_TYPES.items() if k.startswith(word)]
            if len(hits) != 1:
                return None
            current = hits[0]
            spec = m.group(2)
        else:
            if current is None or not re.match(r"^[\d/\-]+$", piece):
                return None
            spec = piece
        if not re.match(r"^\d+(/\d+){0,2}(-\d+)?$", spec):
            return None
        head, _sep, last = spec.rpartition("/")
        prefix = head + "/" if head else ""
        if "-" in last:
            a, b = (int(x) for x in last.split("-"))
            if a > b:
                return None
            nums = range(a, b + 1)
        else:
            nums = [int(last)]
        for n in nums:
            names.append(f"{current[0]}{prefix}{n}")
        labels.append(spec)
    if not names:
        return None
    short = {v[0]: v[1] for v in INTF_TYPES.values()}
    first = names[0]
    typ = re.match(r"^[A-Za-z-]+", first).group(0)
    label = short[typ] + ",".join(labels)
    return names, label


# ---------------------------------------------------------------------------
# device
# ---------------------------------------------------------------------------
class EosDevice(Device):
    platform = "eos"
    default_ports = [f"Ethernet{i}" for i in range(1, 33)]

    def __init__(self, spec: dict, sim: Any) -> None:
        super().__init__(spec, sim)
        # The lab emulates a DCS-7280CR3-32P4 (Jericho2: 'tx-queue') on EOS 4.32.2F; give "model"
        # (e.g. DCS-7050CX3-32S, Trident3: 'uc-tx-queue') for another family.
        self.model = spec.get("model", "DCS-7280CR3-32P4")
        self.family = model_family(self.model)
        self.queue_block = QUEUE_BLOCK[self.family]
        self.version = spec.get("version", "4.32.2F")
        self.running = Block()
        self.running.lines["hostname"] = f"hostname {self.hostname}"
        self.sessions: dict[str, dict] = {}
        # the session whose `commit timer` waits for confirmation (shared machine: commit.py)
        self.pending = ConfirmedCommit(self, self._timer_expired)
        self.boot_time = time.time()
        if spec.get("initial_config"):
            self.load_lines(spec["initial_config"])
        self.startup: Block = self.running.copy()  # booted from it

    def canonical_port(self, port: str) -> str:
        res = expand_interfaces([port])
        if not res or len(res[0]) != 1:
            raise SimError(f"bad interface {port!r}")
        return res[0][0]

    def load_lines(self, text: str | list) -> None:
        """Apply config lines (as typed in configure terminal) to running-config."""
        lines = text.splitlines() if isinstance(text, str) else list(text)
        shell = EosShell(self, None)
        shell.modes = ["exec", "enable"]
        shell.handle("configure terminal")
        for line in lines:
            if not line.strip() or line.strip() in ("!", "end"):
                continue
            out = shell.handle(line)
            if out.startswith("%"):
                raise SimError(f"initial config line {line!r}: {out.strip()}")
        shell.handle("end")

    def new_shell(self, conn: Any) -> EosShell:
        return EosShell(self, conn)

    # --- rendering ---------------------------------------------------------
    def render(self, block: Block) -> str:
        out = [
            "! Command: show running-config",
            f"! device: {self._hostname(block)} ({self.model}, EOS-{self.version})",
            "!",
            "! boot system flash:/EOS.swi",
            "!",
        ]
        glines: dict[str, str] = {}
        dscp_map: dict[int, list[int]] = {}
        tc_map: dict[int, list[int]] = {}
        for key, line in block.lines.items():
            m = re.match(r"^qos map dscp (\d+)$", key)
            if m:
                dscp_map.setdefault(int(line), []).append(int(m.group(1)))
                continue
            m = re.match(r"^qos map traffic-class (\d+)$", key)
            if m:
                tc_map.setdefault(int(line), []).append(int(m.group(1)))
                continue
            glines[key] = line
        for tc in sorted(dscp_map):
            ds = " ".join(str(d) for d in sorted(dscp_map[tc]))
            glines[f"qos map dscp {min(dscp_map[tc]):02d}"] = f"qos map dscp {ds} to traffic-class {tc}"
        for q in sorted(tc_map):
            ts = " ".join(str(t) for t in sorted(tc_map[q]))
            glines[f"qos map traffic-class {min(tc_map[q])}"] = f"qos map traffic-class {ts} to tx-queue {q}"
        groups: list[list[str]] = []
        cur_group = None
        for key in sorted(glines, key=lambda k: _order(k, _GLOBAL_ORDER)):
            grp = _order(key, _GLOBAL_ORDER)[0]
            if grp != cur_group:
                groups.append([])
                cur_group = grp
            groups[-1].append(glines[key])
        for g in groups:
            out.extend(g)
            out.append("!")
        for hdr in sorted((h for h in block.subs if h.startswith("qos profile ")), key=natural_key):
            out.append(hdr)
            pb = block.subs[hdr]
            for key in sorted(pb.lines, key=lambda k: _order(k, _INTF_LINE_ORDER)):
                out.append("   " + pb.lines[key])
            for qhdr in sorted(pb.subs, key=natural_key):
                out.append("   !")
                out.append("   " + qhdr)
                for key in sorted(pb.subs[qhdr].lines, key=lambda k: _order(k, _TXQ_LINE_ORDER)):
                    out.append("      " + pb.subs[qhdr].lines[key])
            out.append("!")
        intfs = set(self.ports) | {h.split(" ", 1)[1] for h in block.subs if h.startswith("interface ")}
        for name in sorted(intfs, key=natural_key):
            out.append(f"interface {name}")
            ib = block.subs.get(f"interface {name}")
            if ib is not None:
                for key in sorted(ib.lines, key=lambda k: _order(k, _INTF_LINE_ORDER)):
                    out.append("   " + ib.lines[key])
                for hdr in sorted(ib.subs, key=natural_key):
                    out.append("   !")
                    out.append("   " + hdr)
                    tb = ib.subs[hdr]
                    for key in sorted(tb.lines, key=lambda k: _order(k, _TXQ_LINE_ORDER)):
                        out.append("      " + tb.lines[key])
            out.append("!")
        out.append("end")
        return "\n".join(out) + "\n"

    def system_name(self) -> str:
        return EosDevice._hostname(self.running)

    @staticmethod
    def _hostname(block: Block) -> str:
        line = block.lines.get("hostname", "hostname localhost")
        return line.split(" ", 1)[1]

    def running_config(self) -> str:
        with self.lock:
            return self.render(self.running)

    def startup_lines(self) -> list[str]:
        """startup-config as config lines: what the switch boots with next time."""
        with self.lock:
            text = self.render(self.startup)
        return [line for line in text.splitlines() if line.strip() and line.strip() not in ("!", "end")]

    def lldp_advertised(self, port: str) -> dict:
        # EOS: port ID = the interface name (subtype 5, 'Interface name'); port description = the
        # interface's configured description (issue 32; the ntc-templates EOS-to-EOS capture shows
        # interfaces without one sending none). docs/vendor-eos.md "LLDP and link state".
        return {"port_id": port, "subtype": "ifname", "descr": self.intf_description(port) or None}

    def intf_description(self, port: str) -> str:
        """The running configuration's 'description' of `port` ('' when none)."""
        blk = self.running.subs.get(f"interface {port}")
        line = blk.lines.get("description", "") if blk else ""
        return line[len("description "):] if line else ""

    def system_mac(self) -> str:
        """The MAC this switch names itself by: the chassis ID peers see in its LLDP (core._advertised)."""
        return _wiring_module().mac(self.name, "chassis")

    def port_view(self) -> dict[str, dict]:
        """Per port what the interface views print, from the wiring and the running configuration:
        {'status' (connected|notconnect|disabled), 'protocol', 'gig' (speed in Gb/s, 0 unknown),
        'descr', 'routed', 'ip', 'mtu'}."""
        seen = self.lldp_ports()
        out = {}
        for p in self.ports:
            state = seen.get(p) or {"oper": "down", "speed": None, "configured": None}
            blk = self.running.subs.get(f"interface {p}")
            lines = blk.lines if blk else {}
            shut = "shutdown" in lines
            up = state["oper"] == "up" and not shut
            speed = str((state["speed"] if up else state.get("configured")) or "")
            gig = int(speed[:-1]) if speed.endswith("G") and speed[:-1].isdigit() else 0
            routed = lines.get("switchport") == "no switchport"
            mtu = lines.get("mtu")
            out[p] = {"status": "disabled" if shut else "connected" if up else "notconnect",
                      "protocol": "up" if up else "down", "gig": gig, "descr": self.intf_description(p),
                      "routed": routed, "ip": lines.get("ip address", "")[len("ip address "):] or None,
                      # EOS's default MTU: 1500 on a routed port, 9214 on a switched one (napalm's
                      # 'show interfaces | json' fixture: Management1 routed 1500, Ethernet2 bridged 9214).
                      "mtu": int(mtu.split()[1]) if mtu else (1500 if routed else 9214)}
        return out

    def pending_state(self) -> dict:
        with self.lock:
            p = self.pending
            return {
                "platform": "eos",
                "pending_commit": bool(p),
                "session": p["name"] if p else None,
                "remaining_seconds": round(p.remaining(), 3) if p else None,
                "sessions": {n: {"state": s["state"]} for n, s in self.sessions.items()},
            }

    # --- transactions --------------------------------------------------------
    def commit_session(self, name: str, timer: int | None) -> str:
        """Commit session `name` (optionally with a rollback timer). Returns error text or ''."""
        with self.lock:
            sess = self.sessions.get(name)
            if sess is None:
                return f"% Session {name} does not exist"
            if self.faults.get("commit_error"):
                return "% " + str(self.faults["commit_error"])
            if self.pending and self.pending["name"] == name:
                # second commit confirms the timer commit
                self.pending.confirm()
                if sess["block"] is not None:
                    self.running = sess["block"].copy()
                sess["state"] = "completed"
                self.record("commit_confirmed", session=name)
                return ""
            if sess["state"] in ("completed", "aborted"):
                return f"% Session {name} has already been {sess['state']}"
            if self.pending and timer is not None:
                return (f"% Cannot commit session {name} with a timer while session "
                        f"{self.pending['name']} has a pending commit timer")
            before = self.running.copy()
            self.running = sess["block"].copy()
            if timer is None:
                sess["state"] = "completed"
                self.record("commit", session=name)
                return ""
            sess["state"] = "pendingCommitTimer"
            self.pending.start(timer, before, name=name)
            self.record("commit_timer", session=name, seconds=timer)
            return ""

    def _timer_expired(self, before: Block, info: dict) -> None:
        """The commit timer ran out (called by self.pending under the lock)."""
        name = info["name"]
        self.running = before
        sess = self.sessions.get(name)
        if sess:
            sess["state"] = "aborted"
        self.record("commit_timer_expired_rollback", session=name)

    def abort_session(self, name: str) -> str:
        with self.lock:
            sess = self.sessions.get(name)
            if sess is None:
                return f"% Session {name} does not exist"
            if self.pending and self.pending["name"] == name:
                self.running = self.pending.cancel()
                self.record("commit_timer_aborted_rollback", session=name)
            del self.sessions[name]
            return ""


# ---------------------------------------------------------------------------
# shell
# ---------------------------------------------------------------------------
class EosShell(Shell):
    def __init__(self, device: EosDevice, conn: Any) -> None:
        super().__init__(device, conn)
        self.dev: EosDevice = device
        self.modes: list[Any] = ["exec"]  # exec, enable, ("config", sess), ("if", names, label), ("txq", names, label, q)
        self.session: str | None = None
        self.width = 80
        self.length = 24

    # --- prompt --------------------------------------------------------------
    def banner(self) -> str:
        return "Last login: Thu Jan  1 00:00:00 2026 from 127.0.0.1\n"

    def prompt(self) -> str:
        host = EosDevice._hostname(self.dev.running)
        m = self.modes[-1]
        if m == "exec":
            return f"{host}>"
        if m == "enable":
            return f"{host}#"
        sess = f"s-{self.session[:6]}" if self.session else ""
        base = "config" + ("-" + sess if sess else "")
        if m[0] == "config":
            return f"{host}({base})#"
        if m[0] == "if":
            return f"{host}({base}-if-{m[2]})#"
        # '-txq-N' as avd#4900 shows for tx-queue; '-uc-txq-N' for uc-tx-queue is unverified.
        txq = "uc-txq" if self.dev.queue_block == "uc-tx-queue" else "txq"
        if m[0] == "txq":
            return f"{host}({base}-if-{m[2]}-{txq}-{m[3]})#"
        if m[0] == "qprof":
            return f"{host}({base}-qos-profile-{m[1]})#"
        if m[0] == "pq":
            return f"{host}({base}-qos-profile-{m[1]}-{txq}-{m[2]})#"
        return f"{host}#"

    def reject(self, line: str) -> str:
        tok = line.split()[-1] if line.split() else ""
        return ERR_INVALID.format(pos=max(0, len(line.split()) - 1), tok=tok) + "\n"

    # --- the config being edited -----------------------------------------------
    def target(self):
        if self.session:
            sess = self.dev.sessions.get(self.session)
            if sess is None:
                return None
            return sess["block"]
        return self.dev.running

    # --- dispatch ------------------------------------------------------------------
    def handle(self, line: str) -> str:
        text = line.strip()
        if not text or text.startswith("!"):
            return ""
        pipe = None
        if " | " in text or text.endswith("|"):
            text, _sep, pipe = text.partition("|")
            text, pipe = text.strip(), pipe.strip()
        tokens = text.split()
        with self.dev.lock:
            out = self._dispatch(tokens, pipe)
        return out

    def _rules_for(self, mode: Any) -> list[Rule]:
        if mode == "exec":
            return EXEC_RULES
        if mode == "enable":
            return PRIV_RULES
        kind = mode[0]
        if kind == "config":
            return COMMON_CONFIG_RULES + GLOBAL_RULES
        if kind == "if":
            return COMMON_CONFIG_RULES + INTF_RULES + QUEUE_RULES[self.dev.family]
        if kind in ("txq", "pq"):
            return COMMON_CONFIG_RULES + TXQ_RULES[self.dev.family]
        if kind == "qprof":
            return COMMON_CONFIG_RULES + PROFILE_RULES + PROFILE_QUEUE_RULES[self.dev.family]
        return []

    def _error(self, res: grammar.Result, tokens: list[str]) -> str:
        pos = min(res.pos, len(tokens) - 1)
        tok = tokens[pos]
        tmpl = {"invalid": ERR_INVALID, "incomplete": ERR_INCOMPLETE,
                "ambiguous": ERR_AMBIGUOUS}[res.error]
        return tmpl.format(pos=pos, tok=tok) + "\n"

    @staticmethod
    def _match(rules: list[Rule], tokens: list[str]) -> grammar.Result:
        """grammar.match, where an interface argument must name interfaces: 'sh int st' is
        'show interfaces status' on EOS, not 'show interfaces' of an interface 'st'."""
        res = grammar.match(rules, tokens)
        if res.ok and res.rule.kw.get("intf_check") and expand_interfaces(res.bindings.get("intf") or []) is None:
            again = grammar.match([r for r in rules if not r.kw.get("intf_check")], tokens)
            if again.ok:
                return again
            return grammar.Result(False, error="invalid", pos=len(tokens) - len(res.bindings["intf"]))
        return res

    def _dispatch(self, tokens: list[str], pipe: str | None) -> str:
        mode = self.modes[-1]
        if mode == "exec":
            res = self._match(EXEC_RULES, tokens)
            if not res.ok:
                priv = grammar.match(PRIV_ONLY_RULES, tokens)
                if priv.ok:
                    return ERR_PRIV + "\n"
                return self._error(res, tokens)
            return self._run(res, tokens, pipe)
        if mode == "enable":
            res = self._match(PRIV_RULES, tokens)
            if not res.ok:
                return self._error(res, tokens)
            return self._run(res, tokens, pipe)
        # configuration modes: try the current mode, then its parents (EOS falls back)
        negate = tokens[0].lower() in ("no", "default")
        best_err = None
        depth = len(self.modes) - 1
        while depth >= 2:
            m = self.modes[depth]
            rules = self._rules_for(m)
            res = self._match(rules, tokens)
            if not res.ok and negate and len(tokens) > 1:
                res2 = self._match_negated(m, tokens)
                if res2 is not None:
                    res = res2
            if res.ok:
                if depth != len(self.modes) - 1:
                    del self.modes[depth + 1:]
                return self._run(res, tokens, pipe)
            if best_err is None or (res.error != "invalid" and best_err.error == "invalid") or \
                    res.pos > best_err.pos:
                best_err = res
            depth -= 1
        return self._error(best_err, tokens)

    def _match_negated(self, mode: Any, tokens: list[str]) -> grammar.Result | None:
        rules = [r for r in self._rules_for(mode) if r.kind in ("set", "block") or
                 (r.kind == "action" and r.kw.get("fn", "").startswith("do_qos_map"))]
        res = grammar.match(rules, tokens[1:], allow_partial=True)
        if not res.ok:
            res.pos += 1
            return res
        res.kw_negate = True  # type: ignore[attr-defined]
        return res

    # --- execution -------------------------------------------------------------------
    def _run(self, res: grammar.Result, tokens: list[str], pipe: str | None) -> str:
        rule: Rule = res.rule
        b = res.bindings
        if getattr(res, "kw_negate", False):
            return self._negate(rule, res, tokens)
        if rule.kind == "show":
            return self._show(rule, b, pipe)
        if rule.kind == "action" or rule.kind == "block":
            return getattr(self, rule.kw["fn"])(b, tokens)
        # set
        if res.partial:
            return ERR_INCOMPLETE.format(pos=len(tokens) - 1, tok=tokens[-1]) + "\n"
        err = self._validate(rule, b)
        if err:
            return err
        key = rule.key.format(**b)
        line = " ".join(res.canon)
        for blk in self._blocks():
            if rule.kw.get("store") is False:
                blk.lines.pop(key, None)
            else:
                blk.lines[key] = line
        return ""

    def _validate(self, rule: Rule, b: dict) -> str:
        v = rule.kw.get("validate")
        if v == "cidr":
            if not re.match(r"^\d{1,3}(\.\d{1,3}){3}/\d{1,2}$", b["a"]):
                return ERR_INVALID.format(pos=2, tok=b["a"]) + "\n"
        if v == "ecn":
            # AVD renders one unit for both thresholds; a mixed pair and min > max are refused
            # here with texts of our own (EOS's wording for these is unverified).
            if b["mu"] != b["xu"]:
                return "% Minimum and maximum thresholds must use the same unit\n"
            if b["min"] > b["max"]:
                return "% Minimum threshold must be less than or equal to maximum threshold\n"
        return ""

    def _blocks(self) -> list[Block]:
        """The blocks the current mode edits (several for an interface range)."""
        tgt = self.target()
        m = self.modes[-1]
        if m[0] == "config":
            return [tgt]
        if m[0] == "if":
            return [tgt.sub(f"interface {n}") for n in m[1]]
        if m[0] == "txq":
            return [tgt.sub(f"interface {n}").sub(f"{self.dev.queue_block} {m[3]}") for n in m[1]]
        if m[0] == "qprof":
            return [tgt.sub(f"qos profile {m[1]}")]
        if m[0] == "pq":
            return [tgt.sub(f"qos profile {m[1]}").sub(f"{self.dev.queue_block} {m[2]}")]
        return []

    def _negate(self, rule: Rule, res: grammar.Result, tokens: list[str]) -> str:
        b = res.bindings
        if rule.kind == "block":
            if rule.kw["fn"] == "enter_interface":
                exp = expand_interfaces(b.get("intf") or [])
                if exp is None:
                    return ERR_INVALID.format(pos=1, tok=tokens[1]) + "\n"
                tgt = self.target()
                for n in exp[0]:
                    tgt.subs.pop(f"interface {n}", None)
                return ""
            if rule.kw["fn"] == "enter_qos_profile":
                if "name" not in b:
                    return ERR_INCOMPLETE.format(pos=len(tokens) - 1, tok=tokens[-1]) + "\n"
                self.target().subs.pop(f"qos profile {b['name']}", None)
                return ""
            if "q" not in b:
                return ERR_INCOMPLETE.format(pos=len(tokens) - 1, tok=tokens[-1]) + "\n"
            for blk in self._blocks():
                blk.subs.pop(f"{self.dev.queue_block} {b['q']}", None)
            return ""
        if rule.kind == "action":  # no qos map ...
            tgt = self.target()
            if rule.kw["fn"] == "do_qos_map_dscp":
                if "dscp" not in b:
                    return ERR_INCOMPLETE.format(pos=len(tokens) - 1, tok=tokens[-1]) + "\n"
                for d in b["dscp"]:
                    tgt.lines.pop(f"qos map dscp {d}", None)
            else:
                if "tcs" not in b:
                    return ERR_INCOMPLETE.format(pos=len(tokens) - 1, tok=tokens[-1]) + "\n"
                for t in b["tcs"]:
                    tgt.lines.pop(f"qos map traffic-class {t}", None)
            return ""
        try:
            key = rule.key.format(**b)
        except KeyError:
            return ERR_INCOMPLETE.format(pos=len(tokens) - 1, tok=tokens[-1]) + "\n"
        if rule.pattern.startswith("no "):
            return ERR_INVALID.format(pos=1, tok=tokens[1]) + "\n"
        for blk in self._blocks():
            blk.lines.pop(key, None)
        return ""

    # --- exec/priv actions -------------------------------------------------------------
    def do_enable(self, b, tokens) -> str:
        if self.modes[-1] == "enable":
            return ""
        if self.dev.enable_secret:
            def check(answer: str) -> str:
                if answer == self.dev.enable_secret:
                    self.modes.append("enable")
                    return ""
                return "% Access denied\n"
            self.ask = ("Password: ", check, False)
            return ""
        self.modes.append("enable")
        return ""

    def do_bash(self, b, tokens) -> str:
        """'bash [timeout N] <command>' runs a Linux command on the switch (Arista EOS user manual, "bash").
        The simulator runs only 'cat' of the files 'dir flash:' lists (/mnt/flash is flash:), which is what
        arista.eos's cliconf sends ('bash timeout 5 cat /mnt/flash/boot-config'). Anything else answers
        as bash does for a program it cannot find (docs/vendor-eos.md: a limit of the simulator)."""
        words = b["cmd"].split()
        if len(words) >= 2 and words[0] == "timeout" and words[1].isdigit():
            words = words[2:]
        if not words:
            return ERR_INCOMPLETE.format(pos=0, tok=tokens[0]) + "\n"
        if words[0] != "cat":
            return f"bash: {words[0]}: command not found\n"
        files = {"/mnt/flash/boot-config": self._boot_config(),
                 "/mnt/flash/startup-config": self.dev.render(self.dev.startup)}
        out = []
        for path in words[1:]:
            out.append(files[path] if path in files else f"cat: {path}: No such file or directory\n")
        return "".join(out)

    def do_disable(self, b, tokens) -> str:
        self.modes = ["exec"]
        return ""

    def do_terminal_length(self, b, tokens) -> str:
        self.length = b["n"]
        return "Pagination disabled.\n" if b["n"] == 0 else ""

    def do_terminal_width(self, b, tokens) -> str:
        self.width = b["n"]
        return f"Width set to {b['n']} columns.\n"

    def do_logout(self, b, tokens) -> str:
        self.closed = True
        return ""

    def do_write(self, b, tokens) -> str:
        self.dev.startup = self.dev.running.copy()
        return "Copy completed successfully.\n"

    def do_configure(self, b, tokens) -> str:
        self.session = None
        self.modes.append(("config", None))
        return ""

    def do_configure_session(self, b, tokens) -> str:
        name = b.get("name")
        if name is None:
            name = f"session{int(time.time() * 1000) % 10**9}"
        if not re.match(r"^[A-Za-z0-9_.:\-]{1,64}$", name):
            return ERR_INVALID.format(pos=2, tok=name) + "\n"
        sess = self.dev.sessions.get(name)
        if sess is None:
            sess = {"name": name, "block": self.dev.running.copy(), "state": "pending",
                    "created": time.time()}
            self.dev.sessions[name] = sess
        elif sess["state"] in ("completed", "aborted"):
            return f"% Cannot enter session {name} (session has been committed or aborted)\n"
        self.session = name
        self.modes = self.modes[:2] + [("config", name)]
        return ""

    def do_session_commit_exec(self, b, tokens) -> str:
        err = self.dev.commit_session(b["name"], None)
        return err + "\n" if err else ""

    def do_session_abort_exec(self, b, tokens) -> str:
        err = self.dev.abort_session(b["name"])
        return err + "\n" if err else ""

    # --- config actions -----------------------------------------------------------------
    def do_end(self, b, tokens) -> str:
        self.modes = self.modes[:2]
        self.session = None
        return ""

    def do_exit(self, b, tokens) -> str:
        self.modes.pop()
        if len(self.modes) == 2:
            self.session = None
        return ""

    def do_commit(self, b, tokens) -> str:
        if not self.session:
            return ERR_INVALID.format(pos=0, tok=tokens[0]) + "\n"
        name = self.session
        err = self.dev.commit_session(name, None)
        if err:
            return err + "\n"
        self.modes = self.modes[:2]
        self.session = None
        return ""

    def do_commit_timer(self, b, tokens) -> str:
        if not self.session:
            return ERR_INVALID.format(pos=0, tok=tokens[0]) + "\n"
        if b["t"] <= 0:
            return ERR_INVALID.format(pos=2, tok=tokens[2]) + "\n"
        err = self.dev.commit_session(self.session, b["t"])
        if err:
            return err + "\n"
        self.modes = self.modes[:2]
        self.session = None
        return ""

    def do_abort(self, b, tokens) -> str:
        if not self.session:
            return ERR_INVALID.format(pos=0, tok=tokens[0]) + "\n"
        self.dev.abort_session(self.session)
        self.modes = self.modes[:2]
        self.session = None
        return ""

    def do_rollback_clean(self, b, tokens) -> str:
        if not self.session:
            return ERR_INVALID.format(pos=0, tok=tokens[0]) + "\n"
        self.dev.sessions[self.session]["block"] = Block()
        self.modes = self.modes[:2] + [("config", self.session)]
        return ""

    def enter_interface(self, b, tokens) -> str:
        exp = expand_interfaces(b["intf"])
        if exp is None:
            return ERR_INVALID.format(pos=1, tok=tokens[1]) + "\n"
        names, label = exp
        warn = ""
        for n in names:
            if n.startswith("Ethernet") and n not in self.dev.ports:
                warn = WARN_NO_INTF + "\n"
        tgt = self.target()
        for n in names:
            tgt.sub(f"interface {n}")
        base = self.modes[:3]
        self.modes = base + [("if", names, label)]
        return warn

    def enter_qos_profile(self, b, tokens) -> str:
        self.target().sub(f"qos profile {b['name']}")
        self.modes = self.modes[:3] + [("qprof", b["name"])]
        return ""

    def enter_profile_txq(self, b, tokens) -> str:
        name = self.modes[-1][1]
        self.target().sub(f"qos profile {name}").sub(f"{self.dev.queue_block} {b['q']}")
        self.modes.append(("pq", name, b["q"]))
        return ""

    def enter_txq(self, b, tokens) -> str:
        m = self.modes[-1]
        names, label = m[1], m[2]
        for blk in self._blocks():
            blk.sub(f"{self.dev.queue_block} {b['q']}")
        self.modes.append(("txq", names, label, b["q"]))
        return ""

    def do_qos_map_dscp(self, b, tokens) -> str:
        tgt = self.target()
        for d in b["dscp"]:
            tgt.lines[f"qos map dscp {d}"] = str(b["tc"])
        return ""

    def do_qos_map_tc(self, b, tokens) -> str:
        tgt = self.target()
        for t in b["tcs"]:
            tgt.lines[f"qos map traffic-class {t}"] = str(b["q"])
        return ""

    # --- show -------------------------------------------------------------------------
    def _show(self, rule: Rule, b: dict, pipe: str | None) -> str:
        json_out = False
        filters: list[tuple[str, str]] = []
        if pipe is not None:
            for part in [p.strip() for p in pipe.split("|")]:
                words = part.split(None, 1)
                if not words:
                    return "% Incomplete command\n"
                w = words[0].lower()
                arg = words[1] if len(words) > 1 else ""
                if "json".startswith(w) and len(w) >= 2 and not arg:
                    json_out = True
                elif w in ("include", "exclude", "begin", "section") and arg:
                    filters.append((w, arg))
                elif w in ("no-more",):
                    pass
                else:
                    return ERR_INVALID.format(pos=0, tok=words[0]) + "\n"
        fn = getattr(self, rule.kw["fn"])
        extra = {k: v for k, v in rule.kw.items() if k not in ("fn", "intf_check")}
        out = fn(b, json_out, **extra)
        if isinstance(out, (dict, list)):
            out = json.dumps(out, indent=2, sort_keys=False) + "\n"
        for w, arg in filters:
            out = _filter(out, w, arg)
        return out

    def show_version(self, b, json_out) -> Any:
        d = self.dev
        if json_out:
            return {
                "mfgName": "Arista", "modelName": d.model, "hardwareRevision": "11.00",
                "serialNumber": "SIM" + d.name.upper()[:8], "systemMacAddress": d.system_mac(),
                "hwMacAddress": d.system_mac(), "configMacAddress": "00:00:00:00:00:00",
                "version": d.version, "architecture": "x86_64",
                "internalVersion": f"{d.version}-00000000.{d.version.replace('.', '')}",
                "internalBuildId": "00000000-0000-0000-0000-000000000000",
                "imageFormatVersion": "3.0", "imageOptimization": "Strata-4GB",
                "bootupTimestamp": d.boot_time, "uptime": time.time() - d.boot_time,
                "memTotal": 8098984, "memFree": 5000000, "isIntlVersion": False,
            }
        up = int(time.time() - d.boot_time)
        return (f"Arista {d.model}\nHardware version: 11.00\nSerial number: SIM{d.name.upper()[:8]}\n"
                f"Hardware MAC address: {self._dotted(d.system_mac())}\nSystem MAC address: {self._dotted(d.system_mac())}\n\n"
                f"Software image version: {d.version}\nArchitecture: x86_64\n"
                f"Internal build version: {d.version}-00000000.{d.version.replace('.', '')}\n"
                f"Image format version: 3.0\nImage optimization: Strata-4GB\n\n"
                f"Uptime: {up // 60} minutes\nTotal memory: 8098984 kB\nFree memory: 5000000 kB\n\n")

    def show_hostname(self, b, json_out) -> Any:
        h = EosDevice._hostname(self.dev.running)
        if json_out:
            return {"hostname": h, "fqdn": h}
        return f"Hostname: {h}\nFQDN:     {h}\n"

    def show_clock(self, b, json_out) -> Any:
        if json_out:
            return {"utcTime": time.time(), "timezone": "UTC"}
        return time.strftime("%a %b %d %H:%M:%S %Y\n", time.gmtime()) + "Timezone: UTC\n"

    def _no_json(self, json_out) -> str | None:
        if json_out:
            return "% This is an unconverted command\n"
        return None

    def show_running(self, b, json_out) -> Any:
        return self._no_json(json_out) or self.dev.render(self.dev.running)

    def show_running_section(self, b, json_out) -> Any:
        return self._no_json(json_out) or _filter(self.dev.render(self.dev.running), "section", b["re"])

    def show_running_intf(self, b, json_out) -> Any:
        if json_out:
            return self._no_json(json_out)
        exp = expand_interfaces(b["intf"])
        if exp is None:
            return ERR_INVALID.format(pos=3, tok=b["intf"][0]) + "\n"
        text = self.dev.render(self.dev.running)
        out = []
        for n in exp[0]:
            sec = _section_block(text, f"interface {n}")
            out.append(sec)
        return "".join(out)

    def _session_name(self, b) -> str | None:
        return b.get("name") or self.session

    def show_session_config(self, b, json_out) -> Any:
        name = self._session_name(b)
        if not name or name not in self.dev.sessions:
            return "% Not in a configuration session\n" if not name else f"% Session {name} does not exist\n"
        return self.dev.render(self.dev.sessions[name]["block"])

    def show_session_diffs(self, b, json_out) -> Any:
        name = self._session_name(b)
        if not name:
            return "% Not in a configuration session\n"
        sess = self.dev.sessions.get(name)
        if sess is None:
            return f"% Session {name} does not exist\n"
        old = self.dev.render(self.dev.running).splitlines()
        new = self.dev.render(sess["block"]).splitlines()
        # the header comment lines are not part of the diff on a real box
        old = [x for x in old if not x.startswith("! ")]
        new = [x for x in new if not x.startswith("! ")]
        diff = difflib.unified_diff(old, new, "system:/running-config",
                                    f"session:/{name}-session-config", n=3, lineterm="")
        return "\n".join(diff) + ("\n" if old != new else "")

    def show_sessions(self, b, json_out) -> Any:
        """JSON as napalm's EOS driver reads it (napalm/eos/eos.py _get_pending_commits): up to
        4.32 each session's 'state' ('pending', 'pendingCommitTimer', 'completed') and 'commitBy'
        (seconds of uptime); later releases name the timed session at the top level
        ('commitTimerSessionName', 'commitTimerExpireTime'). The text table is unverified."""
        uptime = time.time() - self.dev.boot_time
        p = self.dev.pending
        new_form = tuple(int(x) for x in re.findall(r"\d+", self.dev.version)[:2]) > (4, 32)
        sessions = {}
        for name, s in self.dev.sessions.items():
            entry = {"state": s["state"], "completedTime": None, "commitUser": "",
                     "description": "", "instances": {}}
            if p and p["name"] == name and not new_form:
                entry["commitBy"] = uptime + p.remaining()
            sessions[name] = entry
        if json_out:
            doc = {"sessions": sessions, "maxSavedSessions": 1, "maxOpenSessions": 5}
            if new_form and p:
                doc["commitTimerSessionName"] = p["name"]
                doc["commitTimerExpireTime"] = uptime + p.remaining()
            return doc
        lines = ["Maximum number of completed sessions: 1",
                 "Maximum number of pending sessions: 5", "",
                 "  Name               State                   User    Terminal",
                 "  ------------------ ----------------------- ------- --------"]
        for name, s in sessions.items():
            mark = "*" if name == self.session else " "
            lines.append(f"{mark} {name:<18} {s['state']:<23}")
        return "\n".join(lines) + "\n"

    # --- QoS / counters -----------------------------------------------------------------
    def _intf_block(self, name: str) -> Block | None:
        return self.dev.running.subs.get(f"interface {name}")

    def _select_ports(self, b) -> list[str] | str:
        if b.get("intf"):
            exp = expand_interfaces(b["intf"] if isinstance(b["intf"], list) else [b["intf"]])
            if exp is None:
                return ERR_INVALID.format(pos=2, tok=str(b["intf"])) + "\n"
            return [n for n in exp[0] if n in self.dev.counters]
        return list(self.dev.ports)

    def show_pfc(self, b, json_out) -> Any:
        rows = {}
        for p in self.dev.ports:
            blk = self._intf_block(p)
            lines = blk.lines if blk else {}
            enabled = "priority-flow-control on" in lines and \
                "priority-flow-control all off" not in self.dev.running.lines
            prios = sorted(int(k.rsplit(" ", 1)[1]) for k in lines if k.startswith("priority-flow-control priority "))
            wd = "priority-flow-control pause watchdog" in lines
            rows[p] = {"enabled": enabled, "active": enabled, "priorities": prios, "watchdogEnabled": wd}
        if json_out:
            return {"interfaceStatuses": rows}
        out = ["The hardware supports PFC on priorities 0 1 2 3 4 5 6 7",
               "PFC receive processing : Enabled", "",
               "Port       Enabled   Active   Priorities   Watchdog",
               "---------  --------  -------  -----------  --------"]
        for p, r in rows.items():
            short = "Et" + p[len("Ethernet"):]
            out.append(f"{short:<10} {'Yes' if r['enabled'] else 'No':<9} {'Yes' if r['active'] else 'No':<8} "
                       f"{' '.join(str(x) for x in r['priorities']) or '-':<12} {'Yes' if r['watchdogEnabled'] else 'No'}")
        return "\n".join(out) + "\n"

    def show_pfc_counters(self, b, json_out, detail: bool = False) -> Any:
        data = {}
        for p in self.dev.ports:
            c = self.dev.counters[p]
            entry: dict[str, Any] = {"rxFrames": sum(c["pfc_rx"]), "txFrames": sum(c["pfc_tx"])}
            if detail:
                entry["priorities"] = {str(i): {"rxFrames": c["pfc_rx"][i], "txFrames": c["pfc_tx"][i]}
                                       for i in range(8)}
            data[p] = entry
        if json_out:
            return {"interfaceCounters": data}
        if not detail:
            # Header and row pattern: LINKMON (docs/vendor-eos.md); widths and ruler unverified.
            out = ["Port             RxPfc         TxPfc", "--------  ------------  ------------"]
            for p, e in data.items():
                out.append(f"{'Et' + p[8:]:<8}  {e['rxFrames']:>12}  {e['txFrames']:>12}")
            return "\n".join(out) + "\n"
        # Per-priority text layout: invented (no published sample; unverified). The parser refuses it.
        out = []
        for p, e in data.items():
            out.append(f"{p}:")
            out.append("  Priority       RxPfc       TxPfc")
            for i in range(8):
                pe = e["priorities"][str(i)]
                out.append(f"  {i:>8}  {pe['rxFrames']:>10}  {pe['txFrames']:>10}")
        return "\n".join(out) + "\n"

    def show_pfc_watchdog(self, b, json_out) -> Any:
        data = {}
        for p in self.dev.ports:
            c = self.dev.counters[p]
            queues = {str(q): {"stuckCount": c["watchdog_storms"][q], "recoveryCount": c["watchdog_restores"][q]}
                      for q in range(8) if c["watchdog_storms"][q] or c["watchdog_restores"][q]}
            if queues:
                data[p] = {"txQueues": queues}
        if json_out:
            return {"interfaces": data}
        # Text layout invented (no published sample; unverified). The parser refuses it.
        out = ["Port       TxQ   Stuck   Recovered", "---------  ----  ------  ---------"]
        for p, e in data.items():
            for q, v in e["txQueues"].items():
                out.append(f"{'Et' + p[8:]:<10} {q:>4}  {v['stuckCount']:>6}  {v['recoveryCount']:>9}")
        return "\n".join(out) + "\n"

    def show_ecn_counters(self, b, json_out) -> Any:
        # Counts a queue with 'random-detect ecn count' only; 'hardware counter feature ecn out'
        # is not required (whether some platforms need it: unverified, docs/vendor-eos.md).
        ports = self._select_ports(b)
        if isinstance(ports, str):
            return ports
        data = {}
        for p in ports:
            blk = self._intf_block(p)
            qc = {}
            for q in range(8):
                tq = blk.subs.get(f"{self.dev.queue_block} {q}") if blk else None
                counting = tq is not None and "random-detect ecn count" in tq.lines
                qc[str(q)] = str(self.dev.counters[p]["ecn_marked"][q]) if counting else "-"
            data[p] = {"queueCounters": qc}
        if json_out:
            return {"intfQueueCounters": data}
        # Text: per interface its full name on a line, then '<queue> <count>' rows: the row
        # pattern a public exporter reads on real switches (docs/vendor-eos.md, LINKMON). Any
        # column header line and '-' in text (JSON's "not counting") are unverified: none printed.
        out = []
        for p, e in data.items():
            out.append(p)
            out.extend(f"   {q}   {v:>12}" for q, v in e["queueCounters"].items())
        return "\n".join(out) + "\n"

    def show_queue_counters(self, b, json_out) -> Any:
        ports = self._select_ports(b)
        if isinstance(ports, str):
            return ports
        intfs = {}
        for p in ports:
            c = self.dev.counters[p]
            tcs = {f"TC{q}": {"dropPrecedences": {"DP0": {
                "enqueuedPackets": c["tx_packets"][q], "enqueuedBytes": c["tx_bytes"][q],
                "droppedPackets": c["queue_drops"][q] + c["wred_drops"][q], "droppedBytes": 0}}}
                for q in range(8)}
            mc = {f"TC{q}": {"dropPrecedences": {"DP0": {"enqueuedPackets": 0, "enqueuedBytes": 0,
                                                         "droppedPackets": 0, "droppedBytes": 0}}}
                  for q in range(8)}
            intfs[p] = {"ucastQueues": {"trafficClasses": tcs}, "mcastQueues": {"trafficClasses": mc}}
        if json_out:
            return {"egressQueueCounters": {"interfaces": intfs}}
        if self.dev.queue_block == "tx-queue":
            # Jericho: the layout of real output (ntc-templates arista_eos
            # show_interfaces_counters_queue_detail_grep_egress). That sample lists only rows with
            # traffic or drops; that all-zero rows are left out is inferred from it (unverified).
            out = ["Egress Queue Counters",
                   "Port               Traffic   DropPrec   DestType        OutEnqPkts      OutEnqOctets       OutDropPkts     OutDropOctets",
                   "                    Class"]
            for p, e in intfs.items():
                for kind, dest in (("ucastQueues", "UC"), ("mcastQueues", "MC")):
                    for tc, v in e[kind]["trafficClasses"].items():
                        dp = v["dropPrecedences"]["DP0"]
                        if dp["enqueuedPackets"] or dp["droppedPackets"]:
                            # the columns where the real sample puts them: Port to 23, TC to 32, DropPrec to 46,
                            # DestType then four counts right-aligned in 18 (ending at 66, 84, 102, 120)
                            out.append(f"{'Et' + p[8:]:<23}{tc:<9}{'DP0-3':<14}{dest}{dp['enqueuedPackets']:>18}"
                                       f"{dp['enqueuedBytes']:>18}{dp['droppedPackets']:>18}{dp['droppedBytes']:>18}")
            return "\n".join(out) + "\n"
        # Trident/Tomahawk: the header and row pattern public parsers of real switches read
        # (docs/vendor-eos.md, LINKMON, NODESCRAPER); widths and the ruler are unverified.
        out = ["Port       TxQ   Counter/pkts   Counter/bytes   Drop/pkts   Drop/bytes"]
        for p, e in intfs.items():
            for tc, v in e["ucastQueues"]["trafficClasses"].items():
                dp = v["dropPrecedences"]["DP0"]
                out.append(f"{'Et' + p[8:]:<10} UC{tc[2:]:<2}  {dp['enqueuedPackets']:>12}  {dp['enqueuedBytes']:>13}  "
                           f"{dp['droppedPackets']:>10}  {dp['droppedBytes']:>10}")
        return "\n".join(out) + "\n"

    def show_queue_drops(self, b, json_out) -> Any:
        data = {}
        for p in self.dev.ports:
            c = self.dev.counters[p]
            data[p] = {"trafficClasses": {f"TC{q}": {
                "ingressVoqCounters": {"countersSum": {"droppedPackets": c["voq_drops"][q]}},
                "egressQueueCounters": {"countersSum": {"droppedPackets": c["queue_drops"][q] + c["wred_drops"][q]}}}
                for q in range(8)}}
        if json_out:
            return {"interfaces": data}
        # Text layout invented (no published sample; unverified). The parser refuses it.
        out = ["Port       TxQ   Ingress VOQ Drops   Egress Queue Drops", "---------  ----  -----------------  ------------------"]
        for p, e in data.items():
            for tc, v in e["trafficClasses"].items():
                out.append(f"{'Et' + p[8:]:<10} {tc:<4}  {v['ingressVoqCounters']['countersSum']['droppedPackets']:>17}  "
                           f"{v['egressQueueCounters']['countersSum']['droppedPackets']:>18}")
        return "\n".join(out) + "\n"

    def show_discards(self, b, json_out) -> Any:
        data = {p: {"inDiscards": self.dev.counters[p]["in_discards"],
                    "outDiscards": self.dev.counters[p]["out_discards"]} for p in self.dev.ports}
        total_in = sum(v["inDiscards"] for v in data.values())
        total_out = sum(v["outDiscards"] for v in data.values())
        if json_out:
            return {"interfaces": data, "inDiscardsTotal": total_in, "outDiscardsTotal": total_out}
        out = ["Port              InDiscards        OutDiscards", "-------- ------------------ ------------------"]
        for p, v in data.items():
            out.append(f"{'Et' + p[8:]:<8} {v['inDiscards']:>18} {v['outDiscards']:>18}")
        out.append(f"{'Totals':<8} {total_in:>18} {total_out:>18}")  # header: LINKMON; ruler and Totals row: unverified
        return "\n".join(out) + "\n"

    # --- LLDP and link state from the lab wiring (docs/vendor-eos.md "LLDP and link state") -----------
    @staticmethod
    def _dotted(mac: str | None) -> str:
        """EOS prints MAC addresses as xxxx.xxxx.xxxx (chassisId, macAddress port IDs: napalm fixtures)."""
        digits = (mac or "").replace(":", "").lower()
        return ".".join(digits[i:i + 4] for i in range(0, 12, 4)) if len(digits) == 12 else (mac or "")

    def show_lldp_detail(self, b, json_out) -> Any:
        seen = self.dev.lldp_ports()
        ports = list(self.dev.ports)
        # EOS JSON words: interfaceName / macAddress (ANTA, napalm); 'local' for locally assigned: unverified.
        kinds = {"ifname": ("interfaceName", "Interface name (5)"), "mac": ("macAddress", "MAC address (3)"), "local": ("local", "Locally assigned (7)")}
        table = {}
        text = []
        for p in ports:
            peer = (seen.get(p) or {}).get("peer")
            infos = []
            if peer:
                kind, words = kinds[peer["subtype"]]
                port_id = self._dotted(peer["port_id"]) if kind == "macAddress" else '"%s"' % peer["port_id"]
                intf = {"interfaceIdType": kind, "interfaceId": port_id, "interfaceDescription": peer["descr"] or ""}
                if kind != "macAddress":
                    intf["interfaceId_v2"] = peer["port_id"]
                infos.append({"chassisIdType": "macAddress", "chassisId": self._dotted(peer["chassis"]), "systemName": peer["system"], "ttl": 120,
                              "neighborInterfaceInfo": intf})
                text += [f"Interface {p} detected 1 LLDP neighbors:", "",
                         f"  Neighbor {self._dotted(peer['chassis'])}/{port_id}, age 12 seconds",
                         "  - Chassis ID type: MAC address (4)", f"    Chassis ID     : {self._dotted(peer['chassis'])}",
                         f"  - Port ID type: {words}", f"    Port ID     : {port_id}", "  - Time To Live: 120 seconds"]
                if peer["descr"]:
                    text.append(f'  - Port Description: "{peer["descr"]}"')
                text += [f'  - System Name: "{peer["system"]}"', ""]
            else:
                text += [f"Interface {p} detected 0 LLDP neighbors:", ""]
            table[p] = {"lldpNeighborInfo": infos}
        if json_out:
            return {"tablesLastChangeTime": 0.0, "tablesAgeOuts": 0, "tablesInserts": 0, "tablesDeletes": 0, "tablesDrops": 0, "lldpNeighbors": table}
        return "\n".join(text) + "\n"

    def show_intf_status(self, b, json_out) -> Any:
        """Text: the layout of current EOS, with 'Flags' and 'Encapsulation' columns (ntc-templates
        tests/arista_eos/show_interfaces_status/arista_eos_show_interfaces_status_encap.raw, a 4.3x
        capture: the same column starts, both new columns empty on plain Ethernet ports). Name is the
        configured description; the Name column's width follows the longest one (the captures show
        6 to 22 characters; the exact rule is unverified)."""
        view = self.dev.port_view()
        statuses = {}
        width = max([6] + [len(v["descr"]) + 1 for v in view.values()])
        rows = [f"{'Port':<10} {'Name':<{width}} {'Status':<12} {'Vlan':<8} Duplex Speed  {'Type':<15} Flags Encapsulation"]
        for p, v in view.items():
            gig = v["gig"]
            statuses[p] = {"vlanInformation": {"interfaceMode": "routed", "interfaceForwardingModel": "routed"}, "bandwidth": gig * 1000000000,
                           "interfaceType": f"{gig}GBASE-CR8" if gig else "Not Present", "description": v["descr"], "autoNegotiateActive": False,
                           "duplex": "duplexFull", "linkStatus": v["status"], "lineProtocolStatus": v["protocol"]}
            rows.append(f"{'Et' + p[8:]:<10} {v['descr']:<{width}} {v['status']:<12} {'routed':<8} full   {str(gig) + 'G' if gig else 'auto':<6} "
                        f"{statuses[p]['interfaceType']:<15}")
        if json_out:
            return {"interfaceStatuses": statuses}
        return "\n".join(rows) + "\n"

    def show_interfaces(self, b, json_out) -> Any:
        """'show interfaces [<intf>]': JSON with the keys napalm (get_facts, get_interfaces) and
        arista.eos eos_facts read (napalm test/eos/mocked_data/test_get_interfaces/normal/
        show_interfaces.json); text in the form of ntc-templates tests/arista_eos/show_interfaces/
        arista_eos_show_interfaces.raw (a real capture)."""
        view = self.dev.port_view()
        if b.get("intf"):
            names = expand_interfaces(b["intf"])[0]
            missing = [n for n in names if n not in view]
            if missing:
                # EOS names an absent interface this way (unverified wording).
                return "% Interface does not exist\n"
            view = {n: view[n] for n in names}
        mac = self.dev.system_mac()
        boot = self.dev.boot_time
        intfs = {}
        text = []
        for p, v in view.items():
            c = self.dev.counters[p]
            # The lab counts egress per queue only: input packets and bytes stay 0.
            rx_p, tx_p, rx_b, tx_b = 0, sum(c["tx_packets"]), 0, sum(c["tx_bytes"])
            entry = {"name": p, "interfaceStatus": v["status"], "lineProtocolStatus": v["protocol"], "description": v["descr"],
                     "hardware": "ethernet", "mtu": v["mtu"], "bandwidth": v["gig"] * 1000000000, "duplex": "duplexFull",
                     "forwardingModel": "routed" if v["routed"] else "bridged", "physicalAddress": mac, "burnedInAddress": mac,
                     "autoNegotiate": "off", "loopbackMode": "loopbackNone", "lastStatusChangeTimestamp": boot,
                     "interfaceAddress": [],
                     "interfaceCounters": {"inOctets": rx_b, "outOctets": tx_b, "inUcastPkts": rx_p, "outUcastPkts": tx_p,
                                           "inMulticastPkts": 0, "outMulticastPkts": 0, "inBroadcastPkts": 0, "outBroadcastPkts": 0,
                                           "inDiscards": c["in_discards"], "outDiscards": c["out_discards"], "totalInErrors": 0,
                                           "totalOutErrors": 0, "linkStatusChanges": 1},
                     "interfaceStatistics": {"updateInterval": 300.0, "inBitsRate": 0.0, "outBitsRate": 0.0, "inPktsRate": 0.0, "outPktsRate": 0.0}}
            if v["ip"]:
                addr, _sep, length = v["ip"].partition("/")
                entry["interfaceAddress"] = [{"primaryIp": {"address": addr, "maskLen": int(length)}, "secondaryIps": {},
                                              "secondaryIpsOrderedList": [], "broadcastAddress": "255.255.255.255",
                                              "virtualIp": {"address": "0.0.0.0", "maskLen": 0}}]
            intfs[p] = entry
            state = {"connected": "up", "notconnect": "down", "disabled": "administratively down"}[v["status"]]
            dotted = self._dotted(mac)
            text.append(f"{p} is {state}, line protocol is {v['protocol']} ({v['status']})")
            text.append(f"  Hardware is Ethernet, address is {dotted} (bia {dotted})")
            if v["descr"]:
                text.append(f"  Description: {v['descr']}")
            if v["ip"]:
                text += [f"  Internet address is {v['ip']}", "  Broadcast address is 255.255.255.255",
                         "  Address determined by manual configuration"]
            gig = v["gig"]
            text += [f"  {'IP' if v['routed'] else 'Ethernet'} MTU {v['mtu']} bytes , BW {gig * 1000000} kbit",
                     f"  Full-duplex, {gig}Gb/s, auto negotiation: off, uni-link: n/a" if gig else
                     "  Full-duplex, unconfigured, auto negotiation: off, uni-link: n/a",
                     f"  {'Up' if v['protocol'] == 'up' else 'Down'} {int(time.time() - boot) // 60} minutes, 0 seconds",
                     "  1 link status changes since last clear",
                     '  Last clearing of "show interface" counters never',
                     "  5 minutes input rate 0 bps (0.0% with framing overhead), 0 packets/sec",
                     "  5 minutes output rate 0 bps (0.0% with framing overhead), 0 packets/sec",
                     f"     {rx_p} packets input, {rx_b} bytes", "     Received 0 broadcasts, 0 multicast",
                     "     0 runts, 0 giants", f"     0 input errors, 0 CRC, 0 alignment, 0 symbol, {c['in_discards']} input discards",
                     "     0 PAUSE input", f"     {tx_p} packets output, {tx_b} bytes", "     Sent 0 broadcasts, 0 multicast",
                     "     0 output errors, 0 collisions", f"     0 late collision, 0 deferred, {c['out_discards']} output discards",
                     "     0 PAUSE output"]
        if json_out:
            return {"interfaces": intfs}
        return "\n".join(text) + "\n"

    def show_intf_description(self, b, json_out) -> Any:
        """The 'Interface Status Protocol Description' table (ntc-templates tests/arista_eos/
        show_interfaces_description/arista_eos_show_interfaces_description.raw). JSON: not modelled."""
        view = self.dev.port_view()
        if json_out:
            return {"interfaceDescriptions": {p: {"description": v["descr"], "lineProtocolStatus": v["protocol"],
                                                  "interfaceStatus": "adminDown" if v["status"] == "disabled" else v["protocol"]}
                                              for p, v in view.items()}}
        rows = [f"{'Interface':<30} {'Status':<14} {'Protocol':<18} Description"]
        for p, v in view.items():
            status = "admin down" if v["status"] == "disabled" else v["protocol"]
            rows.append(f"{'Et' + p[8:]:<30} {status:<14} {v['protocol']:<18} {v['descr']}".rstrip())
        return "\n".join(rows) + "\n"

    def _neighbor_port(self, peer: dict) -> str:
        """The neighbour's port ID as the summary table and its JSON print it: an interface name or a
        locally assigned ID as sent, a MAC dotted (napalm's show_lldp_neighbors.json: '0800.274f.332d')."""
        return self._dotted(peer["port_id"]) if peer["subtype"] == "mac" else str(peer["port_id"])

    def show_lldp(self, b, json_out) -> Any:
        """'show lldp neighbors': JSON as napalm's fixture (test/eos/mocked_data/test_get_lldp_neighbors/
        normal/show_lldp_neighbors.json: lldpNeighbors is a list of {port, neighborDevice, neighborPort,
        ttl}); text as ntc-templates tests/arista_eos/show_lldp_neighbors/arista_eos_show_lldp_neighbors.raw."""
        seen = self.dev.lldp_ports()
        rows = []
        for p in self.dev.ports:
            peer = (seen.get(p) or {}).get("peer")
            if peer:
                rows.append({"port": p, "neighborDevice": peer["system"], "neighborPort": self._neighbor_port(peer), "ttl": 120})
        if json_out:
            return {"tablesLastChangeTime": self.dev.boot_time, "tablesAgeOuts": 0, "tablesInserts": len(rows),
                    "tablesDeletes": 0, "tablesDrops": 0, "lldpNeighbors": rows}
        out = ["Last table change time   : 0:00:12 ago", f"Number of table inserts  : {len(rows)}",
               "Number of table deletes  : 0", "Number of table drops    : 0", "Number of table age-outs : 0", "",
               f"{'Port':<10} {'Neighbor Device ID':<30} {'Neighbor Port ID':<26} TTL"]
        for r in rows:
            out.append(f"{'Et' + r['port'][8:]:<10} {r['neighborDevice']:<30} {r['neighborPort']:<26} {r['ttl']}")
        return "\n".join(out) + "\n"

    def show_startup(self, b, json_out) -> Any:
        """The startup configuration in the running configuration's form; the first comment line names
        the command (as 'show running-config' does). 'show startup-config' has no JSON form on EOS
        (unconverted, like 'show running-config')."""
        text = self.dev.render(self.dev.startup).replace("! Command: show running-config", "! Command: show startup-config", 1)
        return self._no_json(json_out) or text

    def _flash_files(self) -> list[tuple[str, int]]:
        startup = self.dev.render(self.dev.startup)
        return [("EOS.swi", 1073741824), ("boot-config", len(self._boot_config())), ("startup-config", len(startup))]

    def _boot_config(self) -> str:
        # flash:/boot-config holds 'SWI=<image>' (Arista EOS user manual, "Boot-config file"); the image is
        # the one 'show running-config' names in its 'boot system' line.
        return "SWI=flash:/EOS.swi\n"

    def show_dir(self, b, json_out, every: bool = False) -> Any:
        """'dir [flash:]' and 'dir all-filesystems': 'Directory of <fs>:/' listings as ntc-templates
        tests/arista_eos/dir/arista_eos_dir_flash.raw and arista_eos_dir_system_nodate.raw print them.
        Which filesystems 'all-filesystems' lists on a given model is unverified: flash: and system:."""
        fs = (b.get("fs") or "flash:").rstrip("/")
        if fs not in ("flash:", "system:"):
            return f"% Error listing directory {fs}/ (No such file or directory)\n"
        stamp = time.strftime("%b %e %H:%M", time.gmtime(self.dev.boot_time))  # "Feb 14 02:03", "Apr  3 10:29"
        out = []
        for name in (("flash:", "system:") if every else (fs,)):
            out.append(f"Directory of {name}/")
            out.append("")
            if name == "flash:":
                for fname, size in self._flash_files():
                    out.append(f"       -rwx {size:>11}  {stamp:>20}  {fname}")
                out += ["", "3519041536 bytes total (1725112320 bytes free)"]
            else:
                out.append(f"       -rw-  {len(self.dev.render(self.dev.running)):>10}              <no date>  running-config")
                out += ["", "No space information available"]
            out.append("")
        return self._no_json(json_out) or "\n".join(out)

    def show_inventory(self, b, json_out) -> Any:
        """The text of current EOS (ntc-templates tests/arista_eos/show_inventory/arista_eos_show_inventory1.raw:
        'System information' with Model/Description and HW Version/Serial Number/Mfg Date, then power supply,
        fan, port and transceiver sections). The simulator has no power supplies, fans or transceivers to list.
        JSON: not modelled (EOS converts it; its keys are unverified here)."""
        if json_out:
            return "% This is an unconverted command\n"
        d = self.dev
        serial = "SIM" + d.name.upper()[:8]
        out = ["System information",
               "  Model                    Description",
               "  ------------------------ ----------------------------------------------------",
               f"  {d.model:<24} {len(d.ports)}-port switch",
               "",
               "  HW Version  Serial Number  Mfg Date   Epoch",
               "  ----------- -------------- ---------- -----",
               f"  {'11.00':<11} {serial:<14} 2026-01-01 01.00",
               "",
               "System has 0 power supply slots",
               "",
               "System has 0 fan modules",
               "",
               f"System has {len(d.ports)} ports",
               "  Type             Count",
               "  ---------------- ----",
               f"  {'Switched':<16} {len(d.ports)}",
               ""]
        return "\n".join(out) + "\n"

    def show_qos_maps(self, b, json_out) -> Any:
        if json_out:
            return self._no_json(json_out)
        dscp = {d: 0 for d in range(64)}
        for d in range(64):
            dscp[d] = d // 8  # [verify] default; see reference 1.2
        for k, v in self.dev.running.lines.items():
            m = re.match(r"^qos map dscp (\d+)$", k)
            if m:
                dscp[int(m.group(1))] = int(v)
        out = ["Number of Traffic Classes supported: 8", "Number of Transmit Queues supported: 8", "",
               "Dscp Tc map:", "    d1 :  d2 0  1  2  3  4  5  6  7  8  9", "  -------------------------------------"]
        for row in range(7):
            vals = []
            for col in range(10):
                d = row * 10 + col
                vals.append(f"{dscp[d]:>2}" if d < 64 else "  ")
            out.append(f"    {row} :    " + " ".join(vals).rstrip())
        return "\n".join(out) + "\n"


def _filter(text: str, how: str, arg: str) -> str:
    lines = text.splitlines()
    try:
        rx = re.compile(arg)
    except re.error:
        rx = re.compile(re.escape(arg))
    if how == "include":
        keep = [x for x in lines if rx.search(x)]
    elif how == "exclude":
        keep = [x for x in lines if not rx.search(x)]
    elif how == "begin":
        keep = []
        for i, x in enumerate(lines):
            if rx.search(x):
                keep = lines[i:]
                break
    else:  # section: top-level blocks whose header or any child matches
        keep = []
        block: list[str] = []

        def flush() -> None:
            if block and any(rx.search(x) for x in block):
                keep.extend(x for x in block if x.strip() != "!" or x.startswith("   "))
        for x in lines:
            if x and not x.startswith(" ") and x != "!" :
                flush()
                block = [x]
            elif x == "!":
                flush()
                block = []
            else:
                block.append(x)
        flush()
    return "\n".join(keep) + ("\n" if keep else "")


def _section_block(text: str, header: str) -> str:
    out: list[str] = []
    inside = False
    for x in text.splitlines():
        if x == header:
            inside = True
            out.append(x)
            continue
        if inside:
            if x.startswith(" "):
                out.append(x)
            else:
                break
    return "\n".join(out) + "\n" if out else ""


# -- what the lab and the tests take from this grammar (switchsim/__init__.py; docs/adding-a-platform.md) --

DEVICE = EosDevice

# Two ports of a lab switch of this platform, as a lab inventory gives them.
LAB_PORTS = {"Ethernet1": {"speed": "400G", "cable_length_m": 3, "description": "gpu1 mlx5_0"},
             "Ethernet2": {"speed": "100G", "cable_length_m": 40, "description": "to spine"}}

# Where the transaction stops answering, per switch_config step: the command (regular expression) the
# simulator's 'hang' fault matches; the commands are the ones the driver sends in that step.
HANG_AT = {
    "connect": "login",
    # EOS reads its diff inside load's round trip.
    "load": "^configure session",
    "commit": "^commit timer",
    "read-back": "^show running-config",
    "confirm": "^configure session .* commit$",
}
