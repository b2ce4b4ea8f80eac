# SPDX-License-Identifier: GPL-3.0-or-later
"""Cisco NX-OS model: a Nexus 9364C-GX (cloud-scale) on NX-OS 10.3(2)F, driven by netmiko `cisco_nxos`.

What it answers (every form's source: docs/vendor-nxos.md, section "Simulator"; what no source
confirms is marked "unverified" here and there):

- login and prompts: `leaf4# ` exec, `leaf4(config)# `, the QoS sub-modes `(config-cmap-qos)`,
  `(config-cmap-nqos)`, `(config-pmap-qos)`, `(config-pmap-c-qos)`, `(config-pmap-que)`,
  `(config-pmap-c-que)`, `(config-pmap-nqos)`, `(config-pmap-nqos-c)`, `(config-sys-qos)`,
  `(config-if)`; `terminal length|width N`, `[no] terminal dont-ask`, `configure terminal`, `end`, `exit`.
  Keywords take unique prefixes (`conf t`, `sh run`); a line not valid in a sub-mode is tried in
  the parent modes, as the NX-OS CLI does (a published session types `system qos` in a class mode).
- the configuration of nxos.render_plan: class-map type qos / network-qos, policy-map type qos /
  queuing / network-qos and their classes, `system qos`, the PFC watchdog globals, interfaces
  (`description`, `mtu`, `priority-flow-control mode`, `service-policy`), `no` forms.
- `show running-config [ipqos]` in the full NX-OS form, `show startup-config`, `show version`.
- bootflash (in memory): `dir`, `copy running-config bootflash:F|startup-config`, `show file F [md5sum]`,
  `delete F` (asks unless `terminal dont-ask`), and the SCP sink (`feature scp-server`).
- `configure replace F [verify-only | commit-timeout N]`, `configure replace commit`,
  `show config-replace status`, `show diff rollback-patch file A file B`.
- `show interface status`, `show lldp neighbors detail`, `show interface priority-flow-control
  detail`, `show queuing interface P` from the lab wiring and the control API's counters.
- what the peers send when they connect and gather facts (cisco.nxos cliconf/terminal/nxos_facts,
  netmiko cisco_nxos, napalm nxos_ssh): `show version` in the full published form (Processor Board ID,
  Kernel uptime, Last reset / Reason), `show inventory`, `show hostname`, `show hosts`, `show interface`,
  `show lldp neighbors`, `show license host-id`, `show privilege`, `show user-account U`, `show clock`,
  `show ipv6 interface vrf all`, `show cdp neighbors detail`; `| json` / `| json-pretty` of version,
  inventory, hostname, interface, lldp neighbors (NX-API bodies), every other JSON form and every other
  pipe refused as NX-OS refuses an unknown word. LLDP chassis IDs and MAC port IDs dotted (`0290.d27c.b1d8`).

The simulator never imports the collection's code: its tables are its own.
"""
from __future__ import annotations

import hashlib
import json
import re
import time
from typing import Any

from . import grammar
from .commit import ConfirmedCommit
from .core import Device, Shell, SimError, _wiring_module, natural_key

VERSION = "10.3(2)"
VERSION_LONG = "10.3(2)F"
MODEL = "N9K-C9364C-GX"
# The 'version' line: Cisco's Nexus 9000 Fundamentals guide shows 'version 10.3(2) Bios:version 07.69' in its
# 'show running-config sanitized' example (that this BIOS string is the 9364C-GX's: unverified).
BIOS = "07.69"
# The rest of 'show version' / 'show inventory' (the lab's values; forms: docs/vendor-nxos.md "Simulator").
CHASSIS = "C9364C-GX"
BIOS_DATE = "05/17/2022"
COMPILE_TIME = "2/17/2023 12:00:00"
COMPILE_STAMP = "02/18/2023 01:30:54"
CPU = "Intel(R) Xeon(R) CPU D-1633N @ 2.50GHz"
MEMORY_KB = 32826188
BOOTFLASH_KB = 115805356

# Ranges. Sources (docs/vendor-nxos.md "Simulator"): CiscoDevNet terraform-provider-nxos definitions [DME]
# for qos-group 0-7, priority level 1-8, bandwidth remaining percent 0-100, network-qos mtu 576-9216,
# pause pfc-cos 0-7, interface mtu 576-9216; the Nexus 7000 guide [CR7K] for commit-timeout 30-3600
# (unverified on the Nexus 9000); DSCP 0-63 is the 6-bit field (RFC 2474). Everything else (WRED
# thresholds, drop-probability, weight, the watchdog values, terminal length/width) is not range-checked
# here: no source gives its bounds (unverified).
QOS_GROUP = (0, 7)
PRIORITY_LEVEL = (1, 8)
PERCENT = (0, 100)
MTU = (576, 9216)
COS = (0, 7)
DSCP = (0, 63)
COMMIT_TIMEOUT = (30, 3600)
ECN_UNITS = ("packets", "bytes", "kbytes", "mbytes")  # the driver's list; the CLI's own: unverified
DSCP_NAMES = {"default": 0, "ef": 46, **{"cs%d" % n: 8 * n for n in range(8)},
              **{"af%d%d" % (c, d): 8 * c + 2 * d for c in range(1, 5) for d in range(1, 4)}}
# 'feature' names taken (a small list: others are refused; which features exist on 10.3(2)F beyond these: not modelled).
FEATURES = ("scp-server", "sftp-server", "lldp", "lacp", "nxapi", "bash-shell", "interface-vlan", "bgp", "ospf",
            "vpc", "hsrp", "dhcp", "pim", "telnet", "netconf", "restconf", "grpc")
# System-defined classes of the 8-queue mode (QoS guide "System-defined queuing class maps ... cannot be
# modified"; the published RoCE configuration names all eight queuing classes; c-8q-nq-default: unverified).
QUEUING_CLASSES = tuple(["c-out-8q-q%d" % n for n in range(1, 8)] + ["c-out-8q-q-default"])
NETQOS_CLASSES = tuple(["c-8q-nq%d" % n for n in range(1, 8)] + ["c-8q-nq-default"])

# bootflash: total size from a published 'dir bootflash:' of a Nexus 9000 (the 9364C-GX's own: unverified);
# the image file and its size are the simulator's (unverified).
BOOTFLASH_TOTAL = 53376499712
BOOTFLASH_BASE_USED = 6040887296
IMAGE = "nxos64-cs.10.3.2.F.bin"
IMAGE_SIZE = 2153660416

PROMPTS = {
    "exec": "#", "config": "(config)#", "cmap-qos": "(config-cmap-qos)#", "cmap-nqos": "(config-cmap-nqos)#",
    "pmap-qos": "(config-pmap-qos)#", "pmap-c-qos": "(config-pmap-c-qos)#", "pmap-que": "(config-pmap-que)#",
    "pmap-c-que": "(config-pmap-c-que)#", "pmap-nqos": "(config-pmap-nqos)#", "pmap-nqos-c": "(config-pmap-nqos-c)#",
    "sys-qos": "(config-sys-qos)#", "if": "(config-if)#",
}

_PORT = re.compile(r"(?:e|et|eth|ethe|ether|ethern|etherne|ethernet)\s*(\d+/\d+(?:/\d+)?)", re.I)


class CliError(Exception):
    """A line the NX-OS parser refuses: kind invalid | incomplete | ambiguous | range | range-intf | message."""

    def __init__(self, kind: str, pos: int = 0, text: str = "") -> None:
        super().__init__(text or kind)
        self.kind, self.pos, self.text = kind, pos, text


class Node:
    """One configuration line and its sub-mode lines; ``key`` says which line a new one replaces."""

    __slots__ = ("line", "key", "kids")

    def __init__(self, line: str, key: str | None = None) -> None:
        self.line = line
        self.key = key or line
        self.kids: list[Node] = []

    def copy(self) -> Node:
        n = Node(self.line, self.key)
        n.kids = [k.copy() for k in self.kids]
        return n

    def find(self, key: str) -> Node | None:
        return next((k for k in self.kids if k.key == key), None)

    def set(self, key: str, line: str) -> Node:
        old = self.find(key)
        if old is not None:
            old.line = line
            return old
        node = Node(line, key)
        self.kids.append(node)
        return node

    def unset(self, key: str) -> bool:
        before = len(self.kids)
        self.kids = [k for k in self.kids if k.key != key]
        return len(self.kids) != before


class Config:
    """A whole NX-OS configuration: a root node whose kids are the top-level lines."""

    def __init__(self, hostname: str, ports: list[str]) -> None:
        self.root = Node("")
        self.root.set("hostname", "hostname %s" % hostname)
        for port in ports:
            self.root.set("interface %s" % port, "interface %s" % port)

    def copy(self) -> Config:
        c = Config.__new__(Config)
        c.root = self.root.copy()
        return c

    @property
    def hostname(self) -> str:
        node = self.root.find("hostname")
        return node.line.split(None, 1)[1] if node else "switch"

    def features(self) -> list[str]:
        return [k.line.split()[1] for k in self.root.kids if k.line.startswith("feature ")]

    def top(self, prefix: str) -> list[Node]:
        return [k for k in self.root.kids if k.line.startswith(prefix)]

    def policy(self, kind: str, name: str) -> Node | None:
        return self.root.find("policy-map type %s %s" % (kind, name))

    def class_map(self, kind: str, name: str) -> Node | None:
        return next((k for k in self.top("class-map type %s " % kind) if k.line.split()[-1] == name), None)

    def interface(self, port: str) -> Node | None:
        return self.root.find("interface %s" % port)

    def lines(self, ipqos: bool = False) -> list[str]:
        """The configuration as 'show running-config' prints it (two spaces a level), in NX-OS's order
        (version, hostname, features, QoS objects, interfaces; the exact interleaving: unverified)."""
        def order(node: Node) -> tuple:
            words = node.line.split()
            rank = {"hostname": 1, "feature": 2, "class-map": 3, "policy-map": 4, "system": 5,
                    "priority-flow-control": 6, "interface": 8}.get(words[0], 7)
            if words[0] == "policy-map":
                rank += {"qos": 0.1, "queuing": 0.2, "network-qos": 0.3}.get(words[2], 0.4)
            if words[0] == "class-map":
                rank += {"qos": 0.1, "queuing": 0.2, "network-qos": 0.3}.get(words[2], 0.4)
            return (rank, natural_key(node.line) if words[0] == "interface" else [])
        out: list[str] = []

        def walk(node: Node, depth: int) -> None:
            out.append("  " * depth + node.line)
            for kid in node.kids:
                walk(kid, depth + 1)
        for node in sorted(self.root.kids, key=order):
            words = node.line.split()
            if ipqos and words[0] not in ("class-map", "policy-map", "system", "priority-flow-control"):
                if not (words[0] == "interface" and any(_is_qos_if_line(k.line) for k in node.kids)):
                    continue
                out.append(node.line)
                out.extend("  " + k.line for k in node.kids if _is_qos_if_line(k.line))
                continue
            if words[0] == "interface":
                out.append("")  # NX-OS prints a blank line before each interface block (unverified for every release)
            walk(node, 0)
        return out


def _is_qos_if_line(line: str) -> bool:
    return line.startswith(("service-policy", "priority-flow-control"))


def _in(value: int, bounds: tuple[int, int], pos: int) -> int:
    if not bounds[0] <= value <= bounds[1]:
        raise CliError("range", pos, "%% Invalid number, range is (%d:%d)" % bounds)
    return value


def parse_dscp(text: str, pos: int) -> list[int]:
    """'0-2,5 af31,ef' -> code points (ranges, commas, names); CliError for anything else."""
    out: set[int] = set()
    for piece in [p for p in re.split(r"[,\s]+", text.strip()) if p]:
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", piece)
        if m:
            low, high = int(m.group(1)), int(m.group(2) or m.group(1))
            _in(low, DSCP, pos)
            _in(high, DSCP, pos)
            if low > high:
                raise CliError("invalid", pos)
            out.update(range(low, high + 1))
        elif piece.lower() in DSCP_NAMES:
            out.add(DSCP_NAMES[piece.lower()])
        else:
            raise CliError("invalid", pos)
    return sorted(out)


def dscp_text(values: list[int]) -> str:
    """How 'show running-config' prints a 'match dscp' list: ranges joined by commas, as the driver
    renders it (NX-OS's own print form of a list: unverified)."""
    runs: list[list[int]] = []
    for v in sorted(set(values)):
        if runs and runs[-1][1] == v - 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ",".join("%d" % a if a == b else "%d-%d" % (a, b) for a, b in runs)


def port_name(text: str) -> str | None:
    m = _PORT.fullmatch(text.strip())
    return "Ethernet" + m.group(1) if m else None


def short_port(port: str) -> str:
    return port.replace("Ethernet", "Eth", 1)


_MAC = re.compile(r"[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){5}")


def dotted(value: str | None) -> str | None:
    """A MAC as NX-OS prints it: '02:90:d2:7c:b1:d8' -> '0290.d27c.b1d8' (every 'Chassis id:' in the published
    'show lldp neighbors detail' captures, ntc-templates tests/cisco_nxos, and the 'port_id' of a MAC port ID in a
    published 'show lldp neighbors | json-pretty'); anything else as it is."""
    if not value or not _MAC.fullmatch(value):
        return value
    hexes = re.sub(r"[^0-9a-fA-F]", "", value).lower()
    return ".".join(hexes[i:i + 4] for i in (0, 4, 8))


def _wiring_mac(host: str, what: str) -> str:
    """A stable MAC for this switch's port (the lab wiring's scheme, tests/lab/wiring.py)."""
    return _wiring_module().mac(host, what)


def speed_gbps(text: Any) -> int | None:
    """'100G' / '400G' (the lab's speeds) -> 100 / 400."""
    m = re.fullmatch(r"(\d+)G", str(text or "").strip(), re.I)
    return int(m.group(1)) if m else None


class _Rule:
    def __init__(self, pattern: str, action: str) -> None:
        self.pattern = pattern
        self.action = action
        self.elems = grammar.parse_pattern(pattern)


def _rules(*pairs: tuple[str, str]) -> list[_Rule]:
    return [_Rule(p, a) for p, a in pairs]


# --- the grammar, per mode -------------------------------------------------------------------------
EXEC_RULES = _rules(
    ("terminal length <n:int>", "noop"), ("terminal width <n:int>", "noop"),
    ("terminal dont-ask", "dont_ask_on"), ("no terminal dont-ask", "dont_ask_off"),
    ("configure terminal", "configure"),
    ("configure replace commit", "replace_commit"),
    ("configure replace <file:word> verify-only", "replace_verify"),
    ("configure replace <file:word> commit-timeout <t:int>", "replace_timed"),
    ("configure replace <file:word>", "replace"),
    ("copy running-config <dest:word>", "copy_running"),
    ("dir [ <path:word> ]", "dir"),
    ("delete <path:word> [ no-prompt ]", "delete"),
    ("end", "end"), ("exit", "exit_exec"),
)
SHOW_RULES = _rules(
    ("show running-config", "show_running"), ("show running-config ipqos", "show_running_ipqos"),
    ("show startup-config", "show_startup"), ("show version", "show_version"),
    ("show config-replace status", "show_cr_status"),
    ("show file <path:word>", "show_file"), ("show file <path:word> md5sum", "show_md5"),
    ("show diff rollback-patch file <a:word> file <b:word>", "show_diff"),
    ("show interface status", "show_intf_status"),
    ("show interface priority-flow-control detail", "show_pfc_detail"),
    ("show lldp neighbors detail", "show_lldp"),
    ("show queuing interface <port:line>", "show_queuing"),
    # What the peers send when they connect and gather facts (docs/vendor-nxos.md "Simulator", "Peers"):
    ("show inventory", "show_inventory"), ("show hostname", "show_hostname"), ("show hosts", "show_hosts"),
    ("show interface", "show_interface"), ("show lldp neighbors", "show_lldp_brief"),
    ("show license host-id", "show_license_hostid"), ("show privilege", "show_privilege"),
    ("show clock", "show_clock"), ("show user-account <user:word>", "show_user_account"),
    ("show ipv6 interface vrf all", "show_empty"), ("show cdp neighbors detail", "show_empty"),
)
# The commands whose '| json' / '| json-pretty' form the simulator prints (the NX-API JSON bodies of the
# sources in docs/vendor-nxos.md "Simulator"); any other command's JSON form is refused as the does-not-support
# capture shows ('% Invalid command at '^' marker.' under 'json').
JSON_ACTIONS = ("show_version", "show_inventory", "show_hostname", "show_interface", "show_lldp_brief", "show_empty")
CONFIG_RULES = _rules(
    ("hostname <name:word>", "hostname"), ("no hostname", "no_hostname"),
    ("version <v:line>", "version"),
    ("feature <f:word>", "feature"), ("no feature <f:word>", "no_feature"),
    ("class-map type qos [ <m:enum:match-any|match-all> ] <name:word>", "cmap_qos"),
    ("no class-map type qos [ <m:enum:match-any|match-all> ] <name:word>", "no_cmap_qos"),
    ("class-map type network-qos [ <m:enum:match-any> ] <name:word>", "cmap_nqos"),
    ("no class-map type network-qos [ <m:enum:match-any> ] <name:word>", "no_cmap_nqos"),
    ("policy-map type <t:enum:qos|queuing|network-qos> <name:word>", "pmap"),
    ("no policy-map type <t:enum:qos|queuing|network-qos> <name:word>", "no_pmap"),
    ("system qos", "system_qos"),
    ("interface <port:line>", "interface"),
    ("priority-flow-control watch-dog-interval <v:enum:on|off>", "wd_global"),
    ("no priority-flow-control watch-dog-interval [ <v:enum:on|off> ]", "no_wd_global"),
    ("priority-flow-control watch-dog interval <n:int>", "wd_interval"),
    ("no priority-flow-control watch-dog interval [ <n:int> ]", "no_wd_interval"),
    ("priority-flow-control watch-dog shutdown-multiplier <n:int>", "wd_shutdown"),
    ("no priority-flow-control watch-dog shutdown-multiplier [ <n:int> ]", "no_wd_shutdown"),
    ("priority-flow-control auto-restore multiplier <n:int>", "wd_restore"),
    ("no priority-flow-control auto-restore multiplier [ <n:int> ]", "no_wd_restore"),
    ("priority-flow-control fixed-restore multiplier <n:int>", "wd_fixed"),
    ("no priority-flow-control fixed-restore multiplier [ <n:int> ]", "no_wd_fixed"),
    ("end", "end"), ("exit", "exit"),
)
MODE_RULES = {
    "cmap-qos": _rules(("match dscp <d:line>", "match_dscp"), ("no match dscp <d:line>", "no_match_dscp")),
    "cmap-nqos": _rules(("match qos-group <g:int>", "match_qos_group"), ("no match qos-group <g:int>", "no_match_qos_group")),
    "pmap-qos": _rules(("class [ type qos ] <name:word>", "pmap_qos_class"), ("no class [ type qos ] <name:word>", "no_class")),
    "pmap-c-qos": _rules(("set qos-group <g:int>", "set_qos_group"), ("no set qos-group [ <g:int> ]", "no_set_qos_group")),
    "pmap-que": _rules(("class type queuing <name:word>", "pmap_que_class"), ("no class type queuing <name:word>", "no_class")),
    "pmap-c-que": _rules(
        ("bandwidth remaining percent <p:int>", "bandwidth"), ("no bandwidth remaining percent [ <p:int> ]", "no_bandwidth"),
        ("priority [ level <l:int> ]", "priority"), ("no priority [ level <l:int> ]", "no_priority"),
        ("random-detect minimum-threshold <min:int> <u1:enum:packets|bytes|kbytes|mbytes> maximum-threshold <max:int> "
         "<u2:enum:packets|bytes|kbytes|mbytes> [ drop-probability <p:int> ] [ weight <w:int> ] [ <e:enum:ecn|non-ecn> ]", "red"),
        ("no random-detect [ <rest:line> ]", "no_red"),
    ),
    "pmap-nqos": _rules(("class type network-qos <name:word>", "pmap_nqos_class"), ("no class type network-qos <name:word>", "no_class")),
    "pmap-nqos-c": _rules(
        ("pause pfc-cos <c:int>+", "pause"), ("no pause pfc-cos [ <c:int>+ ]", "no_pause"),
        ("mtu <m:int>", "class_mtu"), ("no mtu [ <m:int> ]", "no_class_mtu"),
    ),
    "sys-qos": _rules(
        ("service-policy type network-qos <name:word>", "sys_policy"),
        ("service-policy type queuing <dir:enum:input|output> <name:word>", "sys_policy"),
        ("service-policy type qos input <name:word>", "sys_policy"),
        ("no service-policy type network-qos <name:word>", "no_sys_policy"),
        ("no service-policy type queuing <dir:enum:input|output> <name:word>", "no_sys_policy"),
        ("no service-policy type qos input <name:word>", "no_sys_policy"),
    ),
    "if": _rules(
        ("description <text:line>", "if_description"), ("no description", "if_no_description"),
        ("mtu <m:int>", "if_mtu"), ("no mtu [ <m:int> ]", "if_no_mtu"),
        # 'send-tlv' (10.x: also advertise the PFC TLV by LLDP) and 'no-stats' are in Microsoft's published Nexus TOR
        # configuration (Azure/AzureLocal-Supportability, docs/vendor-nxos.md [AZL]); printed back as typed (unverified).
        ("priority-flow-control mode <v:enum:on|off|auto> [ send-tlv ]", "if_pfc"), ("no priority-flow-control mode [ <v:enum:on|off|auto> ]", "if_no_pfc"),
        ("priority-flow-control watch-dog-interval <v:enum:on|off>", "if_wd"), ("no priority-flow-control watch-dog-interval [ <v:enum:on|off> ]", "if_no_wd"),
        ("service-policy type qos input <name:word> [ no-stats ]", "if_policy"),
        ("service-policy type queuing <dir:enum:input|output> <name:word>", "if_policy"),
        ("no service-policy type qos input <name:word> [ no-stats ]", "if_no_policy"),
        ("no service-policy type queuing <dir:enum:input|output> <name:word>", "if_no_policy"),
        ("shutdown", "if_shutdown"), ("no shutdown", "if_no_shutdown"),
    ),
}
MODE_RULES["config"] = CONFIG_RULES
PARENT = {"cmap-qos": "config", "cmap-nqos": "config", "pmap-qos": "config", "pmap-c-qos": "pmap-qos",
          "pmap-que": "config", "pmap-c-que": "pmap-que", "pmap-nqos": "config", "pmap-nqos-c": "pmap-nqos",
          "sys-qos": "config", "if": "config"}


class Editor:
    """Applies configuration lines to a Config in the CLI's modes (shared by the shell, a configure
    replace file and the control API's load)."""

    def __init__(self, cfg: Config, ports: list[str]) -> None:
        self.cfg = cfg
        self.ports = ports
        self.stack: list[tuple[str, Node | None]] = [("config", None)]

    @property
    def mode(self) -> str:
        return self.stack[-1][0]

    def apply(self, tokens: list[str]) -> str:
        """One configuration line; '' or the line's output; CliError when refused."""
        first_error: CliError | None = None
        for depth in range(len(self.stack) - 1, -1, -1):
            kind = self.stack[depth][0]
            res = grammar.match(MODE_RULES[kind], tokens)
            if res.ok:
                saved = self.stack
                self.stack = self.stack[:depth + 1]
                try:
                    return getattr(self, "do_" + res.rule.action)(res.bindings, tokens)
                except CliError:
                    self.stack = saved
                    raise
            err = CliError(res.error, res.pos)
            if first_error is None:
                first_error = err
            if res.pos > 0 or res.error != "invalid":
                raise err  # the first keyword is this mode's: its error, not the parent's
        assert first_error is not None
        raise first_error

    # -- helpers --
    def _node(self) -> Node:
        node = self.stack[-1][1]
        assert node is not None
        return node

    def _enter(self, mode: str, node: Node) -> str:
        self.stack.append((mode, node))
        return ""

    def _pos(self, tokens: list[str], value: Any) -> int:
        text = str(value)
        for i in range(len(tokens) - 1, -1, -1):
            if tokens[i] == text:
                return i
        return len(tokens) - 1

    def _policy_exists(self, kind: str, name: str, tokens: list[str]) -> None:
        if self.cfg.policy(kind, name) is None:
            # The refusal of a service-policy naming a policy-map that does not exist: its text is unverified.
            raise CliError("message", self._pos(tokens, name), "ERROR: policy-map %s not found" % name)

    # -- config --
    def do_hostname(self, b, tokens):
        self.cfg.root.set("hostname", "hostname %s" % b["name"])
        return ""

    def do_no_hostname(self, b, tokens):
        self.cfg.root.set("hostname", "hostname switch")
        return ""

    def do_version(self, b, tokens):
        return ""  # the 'version' line of a saved configuration: not a setting

    def do_feature(self, b, tokens):
        if b["f"] not in FEATURES:
            raise CliError("invalid", 1)
        self.cfg.root.set("feature %s" % b["f"], "feature %s" % b["f"])
        return ""

    def do_no_feature(self, b, tokens):
        if b["f"] not in FEATURES:
            raise CliError("invalid", 2)
        self.cfg.root.unset("feature %s" % b["f"])
        return ""

    def _cmap(self, kind: str, b: dict, mode: str, default: str) -> str:
        name = b["name"]
        existing = self.cfg.class_map(kind, name)
        if existing is None:
            existing = self.cfg.root.set("class-map type %s %s" % (kind, name),
                                         "class-map type %s %s %s" % (kind, b.get("m") or default, name))
        return self._enter(mode, existing)

    def do_cmap_qos(self, b, tokens):
        return self._cmap("qos", b, "cmap-qos", "match-all")

    def do_cmap_nqos(self, b, tokens):
        return self._cmap("network-qos", b, "cmap-nqos", "match-any")

    def _no_cmap(self, kind: str, b: dict) -> str:
        self.cfg.root.unset("class-map type %s %s" % (kind, b["name"]))
        return ""

    def do_no_cmap_qos(self, b, tokens):
        return self._no_cmap("qos", b)

    def do_no_cmap_nqos(self, b, tokens):
        return self._no_cmap("network-qos", b)

    def do_pmap(self, b, tokens):
        line = "policy-map type %s %s" % (b["t"], b["name"])
        mode = {"qos": "pmap-qos", "queuing": "pmap-que", "network-qos": "pmap-nqos"}[b["t"]]
        return self._enter(mode, self.cfg.root.set(line, line))

    def do_no_pmap(self, b, tokens):
        self.cfg.root.unset("policy-map type %s %s" % (b["t"], b["name"]))
        return ""

    def do_system_qos(self, b, tokens):
        return self._enter("sys-qos", self.cfg.root.set("system qos", "system qos"))

    def do_interface(self, b, tokens):
        text = b["port"]
        port = port_name(text)
        if port is None:
            raise CliError("invalid", 1)
        if port not in self.ports:
            # NX-OS's refusal of an interface the switch does not have (the 9.3(1) capture's 'show run int po3').
            raise CliError("range-intf", len(tokens) - 1)
        line = "interface %s" % port
        return self._enter("if", self.cfg.root.set(line, line))

    def _global(self, key: str, line: str) -> str:
        self.cfg.root.set(key, line)
        return ""

    def do_wd_global(self, b, tokens):
        return self._global("pfc-wd-global", "priority-flow-control watch-dog-interval %s" % b["v"])

    def do_wd_interval(self, b, tokens):
        return self._global("pfc-wd-interval", "priority-flow-control watch-dog interval %d" % b["n"])

    def do_wd_shutdown(self, b, tokens):
        return self._global("pfc-wd-shutdown", "priority-flow-control watch-dog shutdown-multiplier %d" % b["n"])

    def do_wd_restore(self, b, tokens):
        return self._global("pfc-wd-restore", "priority-flow-control auto-restore multiplier %d" % b["n"])

    def do_wd_fixed(self, b, tokens):
        return self._global("pfc-wd-fixed", "priority-flow-control fixed-restore multiplier %d" % b["n"])

    def _unglobal(self, key: str) -> str:
        self.cfg.root.unset(key)
        return ""

    def do_no_wd_global(self, b, tokens):
        return self._unglobal("pfc-wd-global")

    def do_no_wd_interval(self, b, tokens):
        return self._unglobal("pfc-wd-interval")

    def do_no_wd_shutdown(self, b, tokens):
        return self._unglobal("pfc-wd-shutdown")

    def do_no_wd_restore(self, b, tokens):
        return self._unglobal("pfc-wd-restore")

    def do_no_wd_fixed(self, b, tokens):
        return self._unglobal("pfc-wd-fixed")

    def do_end(self, b, tokens):
        self.stack = []
        return ""

    def do_exit(self, b, tokens):
        self.stack = self.stack[:-1]
        return ""

    # -- class maps --
    def do_match_dscp(self, b, tokens):
        node = self._node()
        values = parse_dscp(b["d"], 2)
        have = set()
        for kid in node.kids:
            if kid.line.startswith("match dscp "):
                have.update(parse_dscp(kid.line[len("match dscp "):], 2))
        new = sorted(set(values) - have)
        if new:
            line = "match dscp %s" % dscp_text(new)
            node.set(line, line)
        return ""

    def do_no_match_dscp(self, b, tokens):
        node = self._node()
        gone = set(parse_dscp(b["d"], 3))
        kept = []
        for kid in node.kids:
            if kid.line.startswith("match dscp "):
                rest = sorted(set(parse_dscp(kid.line[len("match dscp "):], 2)) - gone)
                if rest:
                    line = "match dscp %s" % dscp_text(rest)
                    kept.append(Node(line, line))
                continue
            kept.append(kid)
        node.kids = kept
        return ""

    def do_match_qos_group(self, b, tokens):
        _in(b["g"], QOS_GROUP, 2)
        line = "match qos-group %d" % b["g"]
        self._node().set(line, line)
        return ""

    def do_no_match_qos_group(self, b, tokens):
        self._node().unset("match qos-group %d" % b["g"])
        return ""

    # -- policy maps --
    def do_pmap_qos_class(self, b, tokens):
        name = b["name"]
        if name != "class-default" and self.cfg.class_map("qos", name) is None:
            # A class naming no class-map: the refusal's text is unverified.
            raise CliError("message", self._pos(tokens, name), "ERROR: class-map %s not found" % name)
        line = "class %s" % name
        return self._enter("pmap-c-qos", self._node().set(line, line))

    def do_pmap_que_class(self, b, tokens):
        if b["name"] not in QUEUING_CLASSES:
            raise CliError("invalid", self._pos(tokens, b["name"]))
        line = "class type queuing %s" % b["name"]
        return self._enter("pmap-c-que", self._node().set(line, line))

    def do_pmap_nqos_class(self, b, tokens):
        name = b["name"]
        if name not in NETQOS_CLASSES and self.cfg.class_map("network-qos", name) is None:
            raise CliError("invalid", self._pos(tokens, name))
        line = "class type network-qos %s" % name
        return self._enter("pmap-nqos-c", self._node().set(line, line))

    def do_no_class(self, b, tokens):
        node = self._node()
        node.kids = [k for k in node.kids if k.line.split()[-1] != b["name"]]
        return ""

    def do_set_qos_group(self, b, tokens):
        _in(b["g"], QOS_GROUP, 2)
        self._node().set("set qos-group", "set qos-group %d" % b["g"])
        return ""

    def do_no_set_qos_group(self, b, tokens):
        self._node().unset("set qos-group")
        return ""

    def do_bandwidth(self, b, tokens):
        _in(b["p"], PERCENT, 3)
        self._node().set("bandwidth", "bandwidth remaining percent %d" % b["p"])
        return ""

    def do_no_bandwidth(self, b, tokens):
        self._node().unset("bandwidth")
        return ""

    def do_priority(self, b, tokens):
        if b.get("l") is None:
            self._node().set("priority", "priority")
        else:
            _in(b["l"], PRIORITY_LEVEL, 2)
            self._node().set("priority", "priority level %d" % b["l"])
        return ""

    def do_no_priority(self, b, tokens):
        self._node().unset("priority")
        return ""

    def do_red(self, b, tokens):
        # Threshold, drop-probability and weight bounds: unverified (not checked); min <= max is not checked either.
        line = "random-detect minimum-threshold %d %s maximum-threshold %d %s" % (b["min"], b["u1"], b["max"], b["u2"])
        if b.get("p") is not None:
            line += " drop-probability %d" % b["p"]
        if b.get("w") is not None:
            line += " weight %d" % b["w"]
        if b.get("e"):
            line += " " + b["e"]
        self._node().set("random-detect", line)
        return ""

    def do_no_red(self, b, tokens):
        self._node().unset("random-detect")
        return ""

    def do_pause(self, b, tokens):
        for i, cos in enumerate(b["c"]):
            _in(cos, COS, 2 + i)
        self._node().set("pause", "pause pfc-cos %s" % " ".join(str(c) for c in sorted(set(b["c"]))))
        return ""

    def do_no_pause(self, b, tokens):
        self._node().unset("pause")
        return ""

    def do_class_mtu(self, b, tokens):
        _in(b["m"], MTU, 1)
        self._node().set("mtu", "mtu %d" % b["m"])
        return ""

    def do_no_class_mtu(self, b, tokens):
        self._node().unset("mtu")
        return ""

    # -- system qos --
    @staticmethod
    def _sys_key(b: dict, tokens: list[str]) -> tuple[str, str]:
        words = [t.lower() for t in tokens if t.lower() != "no"]
        kind = "network-qos" if "network-qos" in words else "queuing" if "queuing" in words else "qos"
        direction = b.get("dir") or ("input" if kind == "qos" else "")
        return kind, ("service-policy type %s %s" % (kind, direction)).strip()

    def do_sys_policy(self, b, tokens):
        kind, key = self._sys_key(b, tokens)
        self._policy_exists(kind, b["name"], tokens)
        stats = " no-stats" if key == "service-policy type qos input" and len(tokens) > 5 else ""
        self._node().set(key, "%s %s%s" % (key, b["name"], stats))
        return ""

    def do_no_sys_policy(self, b, tokens):
        _kind, key = self._sys_key(b, tokens)
        self._node().unset(key)
        return ""

    # -- interface --
    def do_if_description(self, b, tokens):
        self._node().set("description", "description %s" % b["text"])
        return ""

    def do_if_no_description(self, b, tokens):
        self._node().unset("description")
        return ""

    def do_if_mtu(self, b, tokens):
        _in(b["m"], MTU, 1)
        self._node().set("mtu", "mtu %d" % b["m"])
        return ""

    def do_if_no_mtu(self, b, tokens):
        self._node().unset("mtu")
        return ""

    def do_if_pfc(self, b, tokens):
        tlv = " send-tlv" if len(tokens) > 3 else ""
        self._node().set("pfc-mode", "priority-flow-control mode %s%s" % (b["v"], tlv))
        return ""

    def do_if_no_pfc(self, b, tokens):
        self._node().unset("pfc-mode")
        return ""

    def do_if_wd(self, b, tokens):
        self._node().set("pfc-wd", "priority-flow-control watch-dog-interval %s" % b["v"])
        return ""

    def do_if_no_wd(self, b, tokens):
        self._node().unset("pfc-wd")
        return ""

    def do_if_policy(self, b, tokens):
        kind, key = self._sys_key(b, tokens)
        self._policy_exists(kind, b["name"], tokens)
        stats = " no-stats" if key == "service-policy type qos input" and len(tokens) > 5 else ""
        self._node().set(key, "%s %s%s" % (key, b["name"], stats))
        return ""

    def do_if_no_policy(self, b, tokens):
        _kind, key = self._sys_key(b, tokens)
        self._node().unset(key)
        return ""

    def do_if_shutdown(self, b, tokens):
        self._node().set("shutdown", "shutdown")
        return ""

    def do_if_no_shutdown(self, b, tokens):
        self._node().unset("shutdown")
        return ""


def parse_file(text: str, hostname: str, ports: list[str]) -> tuple[Config | None, list[str]]:
    """A configuration file as configure replace reads it: every line through the grammar, from a clean
    switch (the ports, a host name). (config, []) or (None, the lines refused)."""
    cfg = Config(hostname, ports)
    editor = Editor(cfg, ports)
    bad = []
    for raw in text.replace("\r", "").split("\n"):
        line = raw.strip()
        if not line or line.startswith("!"):
            continue
        if not editor.stack:
            editor.stack = [("config", None)]
        try:
            editor.apply(line.split())
        except CliError:
            bad.append(line)
    return (None, bad) if bad else (cfg, [])


def rollback_patch(a: Config, b: Config) -> list[str]:
    """The commands that turn configuration a into b, with their mode lines, as NX-OS's rollback patch lists
    them (removals with 'no', then additions; the exact ordering NX-OS uses: unverified)."""
    out: list[str] = []

    def diff(na: Node, nb: Node, context: list[str]) -> None:
        removed = [k for k in na.kids if nb.find(k.key) is None]
        for k in removed:
            out.extend(context + ["no " + k.line])
        for k in nb.kids:
            old = na.find(k.key)
            if old is None:
                out.extend(context + [k.line])
                sub: list[str] = []
                _all(k, sub)
                out.extend(sub)
            else:
                if old.line != k.line:
                    out.extend(context + [k.line])
                diff(old, k, context + [k.line] if k.kids or old.kids else context)
        # drop repeated context lines
    diff(a.root, b.root, [])
    dedup: list[str] = []
    for line in out:
        if dedup and line == dedup[-1]:
            continue
        dedup.append(line)
    return dedup


def _all(node: Node, out: list[str]) -> None:
    for k in node.kids:
        out.append(k.line)
        _all(k, out)


class NxosDevice(Device):
    platform = "nxos"
    default_ports = ["Ethernet1/%d" % i for i in range(1, 65)]

    def __init__(self, spec: dict, sim: Any) -> None:
        super().__init__(spec, sim)
        self.model = spec.get("model", MODEL)
        self.config = Config(self.hostname, self.ports)
        self.changed_at: float | None = None
        self.bootflash: dict[str, tuple[bytes, float]] = {}
        self.startup: list[str] | None = None
        self.pending = ConfirmedCommit(self, self._timer_expired, unit_seconds=1)
        self.last_replace: dict = {}
        # What 'show version' / 'show inventory' / 'show license host-id' name: the chassis serial (Processor Board ID;
        # 11 characters as in every published capture: 'FDO21270U84', 'FOC21261DQD'), the boot time (Kernel uptime).
        self.no_timer_reply = spec.get("commit_reply_without_timer", "ERROR: No configure replace commit-timeout is in progress\n")
        self.serial = spec.get("serial") or "FDO" + hashlib.sha256(self.name.encode()).hexdigest()[:8].upper()
        self.booted_at = time.time()
        if spec.get("initial_config"):
            self.load_lines(spec["initial_config"])
            self.changed_at = None
        # The switch booted from its startup config: a lab restart must keep it even when no run saves again.
        self.startup = self.config.lines()

    # --- the Device contract ---
    def canonical_port(self, port: str) -> str:
        return port_name(port) or port

    def load_lines(self, lines: Any) -> None:
        if isinstance(lines, str):
            lines = lines.split("\n")
        with self.lock:
            cfg = self.config.copy()
            editor = Editor(cfg, self.ports)
            for raw in lines:
                line = raw.strip()
                if not line or line.startswith("!"):
                    continue
                if not editor.stack:
                    editor.stack = [("config", None)]
                try:
                    editor.apply(line.split())
                except CliError as exc:
                    raise SimError("nxos %s: line %r refused (%s)" % (self.name, line, exc.text or exc.kind)) from None
            self._set_config(cfg)

    def _set_config(self, cfg: Config) -> None:
        self.config = cfg
        self.hostname = cfg.hostname
        self.changed_at = time.time()

    def system_name(self) -> str:
        return self.config.hostname

    def new_shell(self, conn: Any) -> NxosShell:
        return NxosShell(self, conn)

    def running_text(self, command: str = "show running-config", ipqos: bool = False) -> str:
        now = time.time()
        head = ["!Command: %s" % command]
        if self.changed_at is None:
            head.append("!No configuration change since last restart")
        else:
            head.append("!Running configuration last done at: %s" % _ctime(self.changed_at))
        head += ["!Time: %s" % _ctime(now), "", "version %s Bios:version %s" % (VERSION, BIOS)]
        return "\n".join(head + self.config.lines(ipqos=ipqos)) + "\n"

    def running_config(self) -> str:
        # The control API's text (GET /switches/NAME/running) is what the switch holds: 'show running-config'
        # without its '!Command:' / '!Running configuration last done at:' / '!Time:' header, which changes with
        # every read and every replace (a rollback restores the configuration, not the time stamps).
        return "\n".join(["version %s Bios:version %s" % (VERSION, BIOS)] + self.config.lines()) + "\n"

    def startup_lines(self) -> list[str]:
        return list(self.startup or [])

    def describe(self) -> dict:
        # What a peer's facts are checked against (tests/integration/test_peer_nxos.py): the chassis serial and model.
        return {**super().describe(), "serial": self.serial, "model": self.model, "version": VERSION_LONG}

    def lldp_advertised(self, port: str) -> dict:
        # A Nexus neighbour in the published 'show lldp neighbors detail' (fixtures/nxos ntc1) sends its
        # interface name as the port ID and as the port description; that a configured description replaces
        # the name in the port description TLV, and the subtype (interface name): unverified.
        node = self.config.interface(port)
        descr = next((k.line.split(None, 1)[1] for k in node.kids if k.key == "description"), None) if node else None
        return {"port_id": port, "subtype": "ifname", "descr": descr or port}

    def pending_state(self) -> dict:
        with self.lock:
            return {"platform": "nxos", "pending_commit": self.pending.active,
                    "remaining_seconds": round(self.pending.remaining(), 1) if self.pending.active else 0,
                    "file": self.pending.get("file"), "timeout": self.pending.get("amount")}

    def _timer_expired(self, before: Config, info: dict) -> None:
        self._set_config(before)
        self.last_replace = dict(self.last_replace, status="Success", rolled_back=True)
        self.record("commit_timer_expired", file=info.get("file"), amount=info.get("amount"))
        self.record("rollback", reason="commit-timeout", file=info.get("file"))

    # --- bootflash ---
    @staticmethod
    def flash_name(path: str) -> str | None:
        """'bootflash:f', 'bootflash:/f', 'bootflash:///f', 'bootflash://sup-local/f' -> 'f'; '' for the
        root; None for another file system."""
        text = path.strip().strip("'\"")
        m = re.fullmatch(r"bootflash:(?://sup-local)?/*(.*)", text)
        if not m:
            return None
        return m.group(1)

    def scp_sink(self, path: str) -> Any:
        """The SCP server's receiving side (sshserver): a function(name, data) storing the file, or the refusal
        text. Refused unless 'feature scp-server' is configured (the refusal's text: unverified)."""
        with self.lock:
            if "scp-server" not in self.config.features():
                return "scp: the SCP server is not enabled (feature scp-server)"
        name = self.flash_name(path)
        if name is None:
            return "scp: %s: No such file or directory" % path

        def store(filename: str, data: bytes) -> None:
            with self.lock:
                self.bootflash[name or filename] = (data, time.time())
                self.record("scp_received", file=name or filename, size=len(data))
        return store


def _ctime(t: float) -> str:
    # ctime's layout, the day padded with a space ('Thu Dec  3 08:00:00 2026'; padding: unverified)
    local = time.localtime(t)
    return time.strftime("%a %b ", local) + "%2d" % local.tm_mday + time.strftime(" %H:%M:%S %Y", local)


_BANNER = ("Cisco Nexus Operating System (NX-OS) Software\nTAC support: http://www.cisco.com/tac\n"
           "Copyright (C) 2002-2023, Cisco and/or its affiliates.\nAll rights reserved.\n")

# configure replace output: the 9.3(1) session in docs/vendor-nxos.md "Simulator" (verify-only and a
# successful replace); a failed replace's lines after 'Executing Rollback Patch' are unverified.
_CR_HEAD = ["", "Version match between user file and running configuration.", "Pre-check for User config PASSED"]
_CR_RUN = ["ADVISORY: Config Replace operation started...",
           "Modifying running configuration from another VSH terminal in parallel",
           "is not recommended, as this may lead to Config Replace failure.", "",
           "Collecting Running-Config", "Generating Rollback patch for switch profile", "Rollback Patch is Empty",
           "Collecting Running-Config", "Generating Rollback Patch", "Executing Rollback Patch"]
_CR_DONE = ["During CR operation,will retain L3 configuration", "when vrf member change on interface",
            "Generating Running-config for verification", "Generating Rollback Patch", "",
            "Configure replace completed successfully. Please run 'show config-replace log exec' to see if there is "
            "any configuration that requires reload to take effect."]
_CR_FAILED = ["Rolling back to previous configuration is successful",  # unverified
              "Configure replace failed. Use 'show config-replace log exec' to see reasons for failure"]  # unverified
_COPY_STARTUP = "[########################################] 100%\nCopy complete, now saving to disk (please wait)...\nCopy complete."


class NxosShell(Shell):
    device: NxosDevice

    def __init__(self, device: NxosDevice, conn: Any) -> None:
        super().__init__(device, conn)
        self.editor: Editor | None = None  # None: exec mode
        self.dont_ask = False
        self._fmt: str | None = None  # 'json' / 'json-pretty' while a piped show runs

    def banner(self) -> str:
        return _BANNER

    def prompt(self) -> str:
        mode = self.editor.mode if self.editor and self.editor.stack else "exec"
        return "%s%s " % (self.device.config.hostname, PROMPTS[mode])

    def reject(self, line: str) -> str:
        return self._caret(line, 0, "% Invalid command at '^' marker.")

    def _caret(self, line: str, pos: int, message: str) -> str:
        """The caret line under token ``pos`` (counted from the start of the prompt, as the published captures
        place it; the exact column NX-OS picks inside a token: unverified) and the message."""
        spans = [m.start() for m in re.finditer(r"\S+", line)]
        col = spans[pos] if pos < len(spans) else len(line.rstrip()) + 1
        return " " * (len(self.prompt()) + col) + "^\n" + message + "\n"

    def _error(self, line: str, exc: CliError) -> str:
        if exc.kind == "incomplete":
            return self._caret(line, len(line.split()), "% Incomplete command at '^' marker.")
        if exc.kind == "ambiguous":
            return self._caret(line, exc.pos, "% Ambiguous command at '^' marker.")
        if exc.kind == "range":
            return self._caret(line, exc.pos, exc.text)  # caret with it: unverified
        if exc.kind == "range-intf":
            return self._caret(line, exc.pos, "Invalid range at '^' marker.")
        if exc.kind == "message":
            return exc.text + "\n"
        return self._caret(line, exc.pos, "% Invalid command at '^' marker.")

    def handle(self, line: str) -> str:
        tokens = line.split()
        if not tokens:
            return ""
        dev = self.device
        with dev.lock:
            if "|" in line and tokens[0].lower() in ("show", "sh", "sho"):
                return self._show_piped(line)
            if self.editor is not None and self.editor.stack:
                if tokens[0].lower() in ("show", "sh", "sho"):  # NX-OS runs show commands in any mode
                    return self._exec(line, tokens, SHOW_RULES)
                self._rebind()
                before = dev.config.lines()
                try:
                    out = self.editor.apply(tokens)
                except CliError as exc:
                    return self._error(line, exc)
                if dev.config.lines() != before:
                    dev._set_config(dev.config)  # pylint: disable=protected-access
                if not self.editor.stack:
                    self.editor = None
                return out
            return self._exec(line, tokens, EXEC_RULES + SHOW_RULES)

    def _show_piped(self, line: str) -> str:
        """'show X | json' / '| json-pretty': the NX-API JSON body of X (JSON_ACTIONS), compact on one line or
        indented by 4 (the published 'show lldp neighbors | json-pretty' capture). Another pipe (include, grep,
        section, ...) is not modelled and refused like an unknown word; a command without a JSON form here is
        refused as the published does-not-support capture shows (napalm test/nxos_ssh/.../show_inventory___json.txt)."""
        base, _bar, rest = line.partition("|")
        btoks = base.split()
        at = len(btoks) + (1 if base.endswith(" ") or rest.startswith(" ") else 0)
        pipe = rest.split()
        if not pipe:
            return self._error(line, CliError("incomplete", at))
        if len(pipe) != 1 or pipe[0].lower() not in ("json", "json-pretty"):
            return self._error(line, CliError("invalid", at))
        res = grammar.match(SHOW_RULES, btoks)
        if not res.ok:
            return self._error(line, CliError(res.error, res.pos))
        if res.rule.action not in JSON_ACTIONS:
            return self._error(line, CliError("invalid", at))
        self._fmt = pipe[0].lower()
        try:
            body = getattr(self, "x_" + res.rule.action)(res.bindings, btoks, base)
        except CliError as exc:
            return self._error(line, exc)
        finally:
            self._fmt = None
        if not body:
            return ""  # an empty table prints nothing (unverified)
        if self._fmt_pretty(pipe[0]):
            return json.dumps(body, indent=4) + "\n"
        return json.dumps(body) + "\n"

    @staticmethod
    def _fmt_pretty(word: str) -> bool:
        return word.lower() == "json-pretty"

    @staticmethod
    def _rows(rows: list[dict]) -> dict | list:
        """NX-API JSON prints one row as an object, several as a list (cisco.nxos nxos_facts and napalm read both)."""
        return rows[0] if len(rows) == 1 else rows

    def _rebind(self) -> None:
        """Point the editor's mode nodes at the device's current configuration (a commit may have replaced it)."""
        ed = self.editor
        if ed is None:
            return
        ed.cfg = self.device.config
        stack: list[tuple[str, Node | None]] = []
        parent = ed.cfg.root
        for mode, node in ed.stack:
            if node is None:
                stack.append((mode, None))
                continue
            found = parent.find(node.key)
            if found is None:
                break
            stack.append((mode, found))
            parent = found
        ed.stack = stack

    def _exec(self, line: str, tokens: list[str], rules: list) -> str:
        res = grammar.match(rules, tokens)
        if not res.ok:
            return self._error(line, CliError(res.error, res.pos))
        try:
            return getattr(self, "x_" + res.rule.action)(res.bindings, tokens, line)
        except CliError as exc:
            return self._error(line, exc)

    # --- exec commands ---
    def x_noop(self, b, tokens, line):
        return ""

    def x_dont_ask_on(self, b, tokens, line):
        self.dont_ask = True
        return ""

    def x_dont_ask_off(self, b, tokens, line):
        self.dont_ask = False
        return ""

    def x_configure(self, b, tokens, line):
        self.editor = Editor(self.device.config, self.device.ports)
        return "Enter configuration commands, one per line. End with CNTL/Z.\n"

    def x_end(self, b, tokens, line):
        return ""

    def x_exit_exec(self, b, tokens, line):
        self.closed = True
        return ""

    def _file(self, path: str, pos: int) -> str:
        name = self.device.flash_name(path)
        if name is None or not name:
            raise CliError("invalid", pos)
        return name

    def x_copy_running(self, b, tokens, line):
        dev = self.device
        dest = b["dest"]
        if dest.lower() in ("startup-config", "startup"):
            dev.startup = dev.config.lines()
            dev.record("saved")
            return _COPY_STARTUP + "\n"
        name = self._file(dest, 2)
        dev.bootflash[name] = (dev.running_text().encode(), time.time())
        return "Copy complete.\n"  # the output of a copy to a file: unverified

    def x_dir(self, b, tokens, line):
        dev = self.device
        path = b.get("path") or "bootflash:"
        name = dev.flash_name(path)
        if name is None:
            raise CliError("invalid", 1)
        files = {IMAGE: (None, 1672531200.0), **dev.bootflash}
        if name:
            if name not in files:
                return "No such file or directory\n"
            files = {name: files[name]}
        rows = []
        for fname in sorted(files):
            data, mtime = files[fname]
            size = IMAGE_SIZE if data is None else len(data)
            rows.append("%11d    %s  %s" % (size, time.strftime("%b %d %H:%M:%S %Y", time.localtime(mtime)), fname))
        used = BOOTFLASH_BASE_USED + sum(len(d) for d, _t in dev.bootflash.values())
        return "\n".join(rows + ["", "Usage for bootflash://sup-local", "%11d bytes used" % used,
                                 "%11d bytes free" % (BOOTFLASH_TOTAL - used), "%11d bytes total" % BOOTFLASH_TOTAL]) + "\n"

    def x_delete(self, b, tokens, line):
        dev = self.device
        name = self._file(b["path"], 1)
        if name not in dev.bootflash:
            return "No such file or directory\n"
        if self.dont_ask or "no-prompt" in [t.lower() for t in tokens[2:]]:
            del dev.bootflash[name]
            return ""

        def answer(text: str) -> str:
            if text.strip().lower() in ("", "y", "yes"):
                dev.bootflash.pop(name, None)
            return ""
        self.ask = ('Do you want to delete "/%s" ? (yes/no/abort)   [y] ' % name, answer, True)
        return ""

    def _read(self, path: str, pos: int) -> bytes:
        name = self._file(path, pos)
        if name not in self.device.bootflash:
            raise CliError("message", pos, "No such file or directory")
        return self.device.bootflash[name][0]

    def x_show_file(self, b, tokens, line):
        return self._read(b["path"], 2).decode("utf-8", "replace")

    def x_show_md5(self, b, tokens, line):
        return hashlib.md5(self._read(b["path"], 2), usedforsecurity=False).hexdigest() + "\n"

    def _parsed(self, path: str, pos: int) -> tuple[Config | None, list[str]]:
        text = self._read(path, pos).decode("utf-8", "replace")
        # The reject_lines fault: the switch refuses these lines of the file as it refuses a line it cannot parse.
        refused = [ln.strip() for ln in text.split("\n") if ln.strip() and self.device.rejected(ln.strip())]
        if refused:
            return None, refused
        return parse_file(text, self.device.hostname, self.device.ports)

    def x_show_diff(self, b, tokens, line):
        a, bad_a = self._parsed(b["a"], 4)
        c, bad_b = self._parsed(b["b"], 6)
        out = ["Collecting Running-Config", "Generating Rollback Patch"]
        if a is None or c is None:
            return "\n".join(out + ["Syntax error while parsing '%s'" % x for x in bad_a + bad_b]) + "\n"
        patch = rollback_patch(a, c)
        if not patch:
            return "\n".join(out + ["Rollback Patch is Empty"]) + "\n"
        return "\n".join(out + ["!!"] + patch) + "\n"

    # --- configure replace ---
    def x_replace_verify(self, b, tokens, line):
        dev = self.device
        target, bad = self._parsed(b["file"], 2)
        cur = dev.config
        out = _CR_HEAD + ["Collecting Running-Config", "Converting to checkpoint file", "Generating Rollback Patch",
                          "Validating Patch", "=" * 56]
        if target is None:
            out += ["`%s`\nSyntax error while parsing '%s'\n" % (x, x) for x in bad]
        else:
            out += ["`config t `"] + ["`%s`" % x for x in rollback_patch(cur, target)]
        # The 9.3(1) capture ends with this line even after 'Syntax error while parsing' lines.
        out += ["=" * 56, "Patch validation completed successful"]
        return "\n".join(out) + "\n"

    def x_replace(self, b, tokens, line, timeout: int | None = None):
        dev = self.device
        target, bad = self._parsed(b["file"], 2)
        out = list(_CR_HEAD)
        fault = dev.faults.get("commit_error")
        if target is None or fault:
            said = ["Syntax error while parsing '%s'" % x for x in bad] if target is None else [str(fault)]
            dev.last_replace = {"file": b["file"], "status": "Failed", "time": time.time()}
            dev.record("replace_failed", file=b["file"], reason=said[0])
            return "\n".join(out + _CR_RUN + said + _CR_FAILED) + "\n"
        if dev.pending.active:
            # A configure replace while a commit timer runs: taken, and it stops that timer (the driver's rollback
            # does this; whether NX-OS allows it: unverified).
            dev.pending.confirm()
            dev.record("commit_timer_stopped", reason="configure replace", file=b["file"])
        before = dev.config
        dev._set_config(target)  # pylint: disable=protected-access
        self._rebind()
        if timeout is not None:
            dev.pending.start(timeout, before, file=b["file"])
        dev.last_replace = {"file": b["file"], "status": "Success", "time": time.time(), "timeout": timeout}
        dev.record("replace", file=b["file"], commit_timeout=timeout)
        return "\n".join(out + _CR_RUN + _CR_DONE) + "\n"

    def x_replace_timed(self, b, tokens, line):
        _in(b["t"], COMMIT_TIMEOUT, 4)
        return self.x_replace(b, tokens, line, timeout=b["t"])

    def x_replace_commit(self, b, tokens, line):
        dev = self.device
        if not dev.pending.active:
            # Nothing to confirm: no source shows what NX-OS replies (unverified). The lab models both readings: an
            # error line (the default) or nothing, per switch ('commit_reply_without_timer' in its spec).
            return dev.no_timer_reply
        fields = dev.pending.confirm()
        dev.record("commit_confirmed", file=fields.get("file"))
        return ""  # the output of a confirm: unverified (nothing printed)

    def x_show_cr_status(self, b, tokens, line):
        """'show config-replace status': no published output was found (unverified): labelled lines in the
        style of the published 'show config-replace log exec', with the forms nxos.py reads."""
        dev = self.device
        last = dev.last_replace
        out = ["Last operation            : %s" % ("Config-replace to user config" if last else "None"),
               "Last operation status     : %s" % (last.get("status", "None") if last else "None")]
        if last:
            out.append("User config file          : %s" % last["file"])
        if dev.pending.active:
            out += ["Commit-timeout            : active", "Time remaining            : %d" % int(dev.pending.remaining() + 0.999),
                    "Commit-timeout file       : %s" % dev.pending["file"]]
        else:
            out.append("Commit-timeout            : inactive")
        return "\n".join(out) + "\n"

    # --- shows ---
    def x_show_running(self, b, tokens, line):
        return self.device.running_text()

    def x_show_running_ipqos(self, b, tokens, line):
        return self.device.running_text("show running-config ipqos", ipqos=True)

    def x_show_startup(self, b, tokens, line):
        dev = self.device
        if dev.startup is None:
            return "No startup configuration\n"  # unverified
        return "\n".join(["!Command: show startup-config", "!Time: %s" % _ctime(time.time()), "",
                          "version %s Bios:version %s" % (VERSION, BIOS)] + dev.startup) + "\n"

    # 'show version': the layout of the published captures (napalm test/nxos_ssh N93180 7.0(3)I7(2), ntc-templates
    # cisco_nxos_show_version7 9.3(15), a 9.3(3) Nexus 9000v session in a public test suite): Software (BIOS, NXOS,
    # image), Hardware (the chassis line, CPU and memory, 'Processor Board ID', 'Device name', bootflash), 'Kernel
    # uptime is D day(s), H hour(s), M minute(s), S second(s)', 'Last reset' with '  Reason: ', plugin and packages.
    # The CPU, memory and compile-time values are this lab's (unverified for the 9364C-GX).
    def _uptime(self) -> tuple[int, int, int, int]:
        left = max(0, int(time.time() - self.device.booted_at))
        return left // 86400, left % 86400 // 3600, left % 3600 // 60, left % 60

    def x_show_version(self, b, tokens, line):
        dev = self.device
        days, hours, mins, secs = self._uptime()
        if self._fmt:
            # The NX-API body's keys: a 9.3(5) Nexus 9000v 'show version' JSON-RPC reply and napalm's N9000 mock.
            return {"header_str": _BANNER, "bios_ver_str": BIOS, "kickstart_ver_str": VERSION_LONG, "nxos_ver_str": VERSION_LONG,
                    "bios_cmpl_time": BIOS_DATE, "kick_file_name": "bootflash:///%s" % IMAGE,
                    "nxos_file_name": "bootflash:///%s" % IMAGE, "kick_cmpl_time": COMPILE_TIME, "nxos_cmpl_time": COMPILE_TIME,
                    "kick_tmstmp": COMPILE_STAMP, "nxos_tmstmp": COMPILE_STAMP, "chassis_id": "Nexus9000 %s Chassis" % CHASSIS,
                    "cpu_name": CPU, "memory": MEMORY_KB, "mem_type": "kB", "proc_board_id": dev.serial,
                    "host_name": dev.config.hostname, "bootflash_size": BOOTFLASH_KB, "kern_uptm_days": days,
                    "kern_uptm_hrs": hours, "kern_uptm_mins": mins, "kern_uptm_secs": secs, "rr_reason": "Unknown",
                    "rr_sys_ver": "", "rr_service": "", "plugins": "Core Plugin, Ethernet Plugin",
                    "manufacturer": "Cisco Systems, Inc."}
        return ("%s\nSoftware\n  BIOS: version %s\n  NXOS: version %s\n  BIOS compile time:  %s\n"
                "  NXOS image file is: bootflash:///%s\n  NXOS compile time:  %s [%s]\n\n\nHardware\n"
                "  cisco Nexus9000 %s Chassis\n  %s with %d kB of memory.\n  Processor Board ID %s\n\n"
                "  Device name: %s\n  bootflash:   %d kB\n"
                "Kernel uptime is %d day(s), %d hour(s), %d minute(s), %d second(s)\n\n"
                "Last reset\n  Reason: Unknown\n  System version: \n  Service: \n\nplugin\n  Core Plugin, Ethernet Plugin\n\n"
                "Active Package(s):\n\n"
                % (_BANNER, BIOS, VERSION_LONG, BIOS_DATE, IMAGE, COMPILE_TIME, COMPILE_STAMP, CHASSIS, CPU, MEMORY_KB,
                   dev.serial, dev.config.hostname, BOOTFLASH_KB, days, hours, mins, secs))

    # 'show inventory': 'NAME: "Chassis",  DESCR: "Nexus9000 C9300v Chassis"' / 'PID: N9K-C9300v          ,  VID:     ,
    # SN: 9QXOX90PJ62' pairs separated by a blank line (ntc-templates cisco_nxos_show_inventory3, the same 9000v session);
    # JSON: TABLE_inv / ROW_inv with name, desc, productid, vendorid, serialnum (napalm's nxos_ssh N93180 mock, whose
    # chassis row's name keeps its quotes). The module rows are this lab's (unverified for the 9364C-GX).
    def _inventory(self) -> list[tuple[str, str, str, str, str]]:
        dev = self.device
        return [("Chassis", "Nexus9000 %s Chassis" % CHASSIS, dev.model, "V01", dev.serial),
                ("Slot 1", "64x100G QSFP28 Ethernet Module", dev.model, "V01", dev.serial),
                ("Power Supply 1", "Nexus9000 PowerSupply", "NXA-PAC-1900W-PE", "V01", "LIT" + dev.serial[3:]),
                ("Fan 1", "Nexus9000 Fan Module", "NXA-FAN-160CFM-PE", "V01", "N/A")]

    def x_show_inventory(self, b, tokens, line):
        rows = self._inventory()
        if self._fmt:
            return {"TABLE_inv": {"ROW_inv": self._rows([{"name": '"%s"' % n, "desc": d, "productid": p, "vendorid": v, "serialnum": sn}
                                                         for n, d, p, v, sn in rows])}}
        return "\n".join('NAME: "%s",  DESCR: "%s"\nPID: %-20s,  VID: %-4s,  SN: %s\n' % r for r in rows)

    # 'show hostname': the name alone (ntc-templates cisco_nxos_show_hostname 'n9k1'; napalm's N93180 mock prints the
    # FQDN when a domain is configured - the lab configures none); JSON {"hostname": ...} (napalm's nxos mock).
    def x_show_hostname(self, b, tokens, line):
        name = self.device.config.hostname
        return {"hostname": name} if self._fmt else name + " \n"

    # 'show hosts' as napalm's nxos_ssh mocks print it with DNS off and no domain (missing_domain / N93180 forms):
    # napalm reads 'Default domain is' for the FQDN.
    def x_show_hosts(self, b, tokens, line):
        return ("DNS lookup disabled\nVrf Name: default Default domain is not configured\nName/address lookup uses domain service\n"
                "Name servers are 255.255.255.255\n\n\nHost            Address\n")

    # 'show license host-id': 'License hostid: VDH=<serial>' (the 9000v session above; cisco.nxos nxos_facts reads
    # 'License hostid: VDH=(.+)$'). That the value is the chassis serial: as in that session.
    def x_show_license_hostid(self, b, tokens, line):
        return "License hostid: VDH=%s\n" % self.device.serial

    # 'show privilege' (the cisco.nxos terminal plugin's become check reads '15' in it): the form is unverified
    # (no published capture read); the lab user is network-admin, privilege level 15.
    def x_show_privilege(self, b, tokens, line):
        return "User privilege level: 15\nFeature privilege: Disabled\n"

    # 'show user-account U' (cisco.nxos validate_user_role reads 'roles:(.+)$'); the layout: unverified.
    def x_show_user_account(self, b, tokens, line):
        user = b["user"]
        if user != self.device.username:
            return ""  # an unknown user prints nothing (unverified)
        return "user:%s\n        this user account has no expiry date\n        roles:network-admin \n" % user

    # 'show clock': '18:57:38.347 UTC Mon Oct 19 2015' (ntc-templates cisco_nxos_show_clock).
    def x_show_clock(self, b, tokens, line):
        now = time.time()
        stamp = time.gmtime(now)
        day = time.strftime("%a %b ", stamp) + "%d %d" % (stamp.tm_mday, stamp.tm_year)  # the day unpadded: unverified
        return "%s.%03d UTC %s\n" % (time.strftime("%H:%M:%S", stamp), int(now * 1000) % 1000, day)

    # 'show ipv6 interface vrf all', 'show cdp neighbors detail' (nxos_facts' interfaces subset): the lab has no IPv6
    # interface and no CDP neighbour; both print nothing, in text and JSON (unverified: no capture of an empty one read).
    def x_show_empty(self, b, tokens, line):
        return {} if self._fmt else ""

    def _links(self) -> dict:
        return self.device.lldp_ports()

    def x_show_intf_status(self, b, tokens, line):
        dev = self.device
        links = self._links()
        rule = "-" * 80
        out = [rule, "Port          Name               Status    Vlan      Duplex  Speed   Type", rule]
        for port in sorted(dev.ports, key=natural_key):
            seen = links.get(port) or {"oper": "down", "speed": None}
            node = dev.config.interface(port)
            descr = next((k.line.split(None, 1)[1] for k in node.kids if k.key == "description"), "--") if node else "--"
            up = seen["oper"] == "up"
            status = "connected" if up else "notconnec"
            speed = str(seen.get("speed") or "auto") if up else "auto"
            # Vlan '1' (an L2 port) and Type '--': unverified for the 9364C-GX's ports.
            row = (short_port(port), descr[:18], status, "1", "full" if up else "auto", speed, "--")
            out.append("%-13s %-18s %-9s %-9s %-7s %-7s %s" % row)
        return "\n".join(out) + "\n"

    # 'show interface' (every port): the block of a Nexus 9000 Ethernet port in the published captures
    # (ntc-templates tests/cisco_nxos/show_interface: 'Ethernet2/1 is up' / 'admin state is up, Dedicated Interface' /
    # '  Hardware: 1000/10000 Ethernet, address: 00de.dddd.ffff (bia aaaa.cccc.dddd)' / Description / 'MTU 9100 bytes,
    # BW 10000000 Kbit, DLY 10 usec' / 'Port mode is ...' / 'full-duplex, 10 Gb/s, media type is 10G' / RX and TX
    # counters; a port without link 'is down (Link not connected)' with 'auto-duplex, auto-speed'). JSON: TABLE_interface /
    # ROW_interface with the NX-API keys of napalm's nxos get_interfaces mock (interface, state, admin_state, desc,
    # eth_hw_desc, eth_hw_addr, eth_bia_addr, eth_mtu, eth_bw, eth_mode, eth_duplex, eth_speed, ...). The hardware
    # words of a 100G port ('100000 Ethernet'), the access mode and the MAC values are this lab's (unverified).
    def _port_facts(self, port: str, links: dict) -> dict:
        dev = self.device
        seen = links.get(port) or {"oper": "down", "speed": None}
        node = dev.config.interface(port)
        kids = node.kids if node else []
        descr = next((k.line.split(None, 1)[1] for k in kids if k.key == "description"), None)
        mtu = next((int(k.line.split()[1]) for k in kids if k.key == "mtu"), 1500)
        shut = any(k.key == "shutdown" and k.line.strip() == "shutdown" for k in kids)
        up = seen.get("oper") == "up" and not shut
        gbps = speed_gbps(seen.get("speed")) or speed_gbps(seen.get("configured")) or 100
        mac = dotted(_wiring_mac(dev.name, port))
        return {"port": port, "up": up, "shut": shut, "descr": descr, "mtu": mtu, "gbps": gbps, "mac": mac}

    def x_show_interface(self, b, tokens, line):
        dev = self.device
        links = self._links()
        facts = [self._port_facts(port, links) for port in sorted(dev.ports, key=natural_key)]
        if self._fmt:
            rows = []
            for f in facts:
                row = {"interface": f["port"], "state": "up" if f["up"] else "down"}
                if not f["up"]:
                    row["state_rsn_desc"] = "Administratively down" if f["shut"] else "Link not connected"
                row.update({"admin_state": "down" if f["shut"] else "up", "share_state": "Dedicated",
                            "eth_hw_desc": "%d Ethernet" % (f["gbps"] * 1000), "eth_hw_addr": f["mac"], "eth_bia_addr": f["mac"]})
                if f["descr"]:
                    row["desc"] = f["descr"]
                row.update({"eth_mtu": str(f["mtu"]), "eth_bw": f["gbps"] * 1000000, "eth_dly": 10, "eth_reliability": "255",
                            "eth_txload": "1", "eth_rxload": "1", "medium": "broadcast", "eth_mode": "access",
                            "eth_duplex": "full" if f["up"] else "auto",
                            "eth_speed": "%d Gb/s" % f["gbps"] if f["up"] else "auto-speed"})
                rows.append(row)
            return {"TABLE_interface": {"ROW_interface": self._rows(rows)}}
        out = []
        for f in facts:
            c = dev.counters[f["port"]]
            tx_pkts, tx_bytes = sum(c["tx_packets"]), sum(c["tx_bytes"])
            state = "up" if f["up"] else "down (%s)" % ("Administratively down" if f["shut"] else "Link not connected")
            out += ["%s is %s" % (f["port"], state), "admin state is %s, Dedicated Interface" % ("down" if f["shut"] else "up"),
                    "  Hardware: %d Ethernet, address: %s (bia %s)" % (f["gbps"] * 1000, f["mac"], f["mac"])]
            if f["descr"]:
                out.append("  Description: %s" % f["descr"])
            out += ["  MTU %d bytes, BW %d Kbit , DLY 10 usec" % (f["mtu"], f["gbps"] * 1000000),
                    "  reliability 255/255, txload 1/255, rxload 1/255", "  Encapsulation ARPA, medium is broadcast",
                    "  Port mode is access",
                    "  full-duplex, %d Gb/s, media type is %dG" % (f["gbps"], f["gbps"]) if f["up"] else "  auto-duplex, auto-speed",
                    "  Beacon is turned off", "  Auto-Negotiation is turned on  FEC mode is Auto",
                    "  Input flow-control is off, output flow-control is off", "  Auto-mdix is turned off",
                    "  Rate mode is dedicated", "  Switchport monitor is off", "  EtherType is 0x8100",
                    "  EEE (efficient-ethernet) : n/a", "  Last link flapped never",
                    '  Last clearing of "show interface" counters never', "  0 interface resets",
                    "  RX", "    0 unicast packets  0 multicast packets  0 broadcast packets",
                    "    0 input packets  %d bytes" % c.get("rx_octets", 0), "    0 jumbo packets  0 storm suppression packets",
                    "    0 runts  0 giants  0 CRC/FCS  0 no buffer",
                    "    0 input error  0 short frame  0 overrun   0 underrun  0 ignored",
                    "    0 watchdog  0 bad etype drop  0 bad proto drop  0 if down drop",
                    "    0 input with dribble  %d input discard" % c.get("in_discards", 0), "    %d Rx pause" % sum(c["pfc_rx"]),
                    "  TX", "    %d unicast packets  0 multicast packets  0 broadcast packets" % tx_pkts,
                    "    %d output packets  %d bytes" % (tx_pkts, tx_bytes), "    0 jumbo packets",
                    "    0 output error  0 collision  0 deferred  0 late collision",
                    "    0 lost carrier  0 no carrier  0 babble  %d output discard" % c.get("out_discards", 0),
                    "    %d Tx pause" % sum(c["pfc_tx"]), ""]
        return "\n".join(out) + "\n"

    def _neighbours(self) -> list[tuple[str, dict]]:
        links = self._links()
        return [(port, links[port]["peer"]) for port in sorted(links, key=natural_key)
                if links[port].get("peer") and links[port].get("oper") == "up"]

    # 'show lldp neighbors': the capability legend, 'Device ID  Local Intf  Hold-time  Capability  Port ID', a Device ID
    # longer than 20 characters on a line of its own (ntc-templates cisco_nxos_show_lldp_neighbors and _multiline),
    # 'Total entries displayed: N'. JSON: 'neigh_hdr', TABLE_nbor / ROW_nbor (chassis_type, chassis_id = the system
    # name, l_port_id, hold_time, system_capability, enabled_capability, port_type, port_id, mgmt_addr...), 'neigh_count'
    # (a published 'show lldp neighbors | json-pretty' of a Nexus 9000 leaf, cisco.nxos nxos_facts reads it).
    def x_show_lldp_brief(self, b, tokens, line):
        nbrs = self._neighbours()
        if self._fmt:
            rows = [{"chassis_type": "Locally Assigned", "chassis_id": peer.get("system") or dotted(peer.get("chassis")),
                     "l_port_id": short_port(port), "hold_time": "120", "system_capability": "BR", "enabled_capability": "BR",
                     "port_type": "Mac Address" if peer.get("subtype") == "mac" else "Interface Name",
                     "port_id": dotted(peer.get("port_id")), "mgmt_addr_type": "IPV4", "mgmt_addr": "not advertised",
                     "mgmt_addr_ipv6_type": "Address not advertised", "mgmt_addr_ipv6": "not advertised"} for port, peer in nbrs]
            return {"neigh_hdr": "neigh_hdr", "TABLE_nbor": {"ROW_nbor": self._rows(rows)}, "neigh_count": str(len(rows))} if rows else {}
        out = ["Capability codes:", "  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device",
               "  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other",
               "Device ID            Local Intf      Hold-time  Capability  Port ID  "]
        for port, peer in nbrs:
            name = peer.get("system") or dotted(peer.get("chassis")) or ""
            rest = "%-15s %-10s %-11s %s" % (short_port(port), "120", "BR", dotted(peer.get("port_id")))
            if len(name) > 20:
                out += [name, " " * 21 + rest]
            else:
                out.append("%-20s %s" % (name, rest))
        out.append("Total entries displayed: %d" % len(nbrs))
        return "\n".join(out) + "\n"

    def x_show_lldp(self, b, tokens, line):
        links = self._links()
        out = ["Capability codes:", "  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device",
               "  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other",
               "Device ID            Local Intf      Hold-time  Capability  Port ID  ", ""]
        n = 0
        for port in sorted(links, key=natural_key):
            peer = links[port].get("peer")
            if not peer or links[port].get("oper") != "up":
                continue
            n += 1
            # The chassis ID (and a MAC port ID) in NX-OS's dotted form, as every published capture prints it.
            out += ["Chassis id: %s" % (dotted(peer.get("chassis")) or "null"), "Port id: %s" % (dotted(peer.get("port_id")) or "null"),
                    "Local Port id: %s" % short_port(port), "Port Description: %s" % (peer.get("descr") or "null"),
                    "System Name: %s" % (peer.get("system") or "null"), "System Description: null",
                    "Time remaining: 91 seconds", "System Capabilities: B, R", "Enabled Capabilities: B, R",
                    "Management Address: not advertised", "Vlan ID: not advertised", "", ""]
        out.append("Total entries displayed: %d" % n)
        return "\n".join(out) + "\n"

    def _no_drop(self) -> list[int]:
        cfg = self.device.config
        sysqos = cfg.root.find("system qos")
        node = sysqos.find("service-policy type network-qos") if sysqos else None
        policy = cfg.policy("network-qos", node.line.split()[-1]) if node else None
        cos: set[int] = set()
        for cls in policy.kids if policy else []:
            pause = cls.find("pause")
            if pause:
                cos.update(int(c) for c in pause.line.split()[2:])
        return sorted(cos)

    def x_show_pfc_detail(self, b, tokens, line):
        dev = self.device
        bitmap = sum(1 << c for c in self._no_drop())
        rule = "    " + "-" * 117
        out = []
        for port in sorted(dev.ports, key=natural_key):
            node = dev.config.interface(port)
            mode = next((k.line.split()[2] for k in node.kids if k.key == "pfc-mode"), "auto") if node else "auto"
            c = dev.counters[port]
            admin = {"on": "On", "off": "Off", "auto": "Auto"}[mode]  # 'Auto'/'Off' spellings: unverified
            out += [port, "    Admin Mode: %s" % admin, "    Oper Mode: %s" % ("On" if mode == "on" else "Off"),
                    "    VL bitmap: (%x)" % bitmap, "    Total Rx PFC Frames: %d" % sum(c["pfc_rx"]),
                    "    Total Tx PFC Frames: %d" % sum(c["pfc_tx"]), rule,
                    "        |" + "|".join("  Priority%d  " % p for p in range(8)) + "|", rule,
                    "    Rx  |" + "|".join("%-13d" % v for v in c["pfc_rx"]), rule,
                    "    Tx  |" + "|".join("%-13d" % v for v in c["pfc_tx"])]
        return "\n".join(out) + "\n"

    def x_show_queuing(self, b, tokens, line):
        dev = self.device
        port = port_name(b["port"])
        if port is None or port not in dev.ports:
            raise CliError("range-intf", 3)
        c = dev.counters[port]
        rule = "+" + "-" * 61 + "+"
        out = ["", "slot  1", "=======", "", "", "Egress Queuing for %s [System]" % port]
        for q in range(8):
            rows = [("Tx Pkts", c["tx_packets"][q]), ("Tx Byts", c["tx_bytes"][q]),
                    ("WRED/AFD & Tail Drop Pkts", c["queue_drops"][q] + c["wred_drops"][q]),
                    ("WRED/AFD & Tail Drop Byts", 0), ("Q Depth Byts", 0), ("WD & Tail Drop Pkts", c["queue_drops"][q])]
            out += [rule, "|%s|" % ("QOS GROUP %d" % q).center(61), rule, "|                           |  Unicast       |Multicast       |", rule]
            out += ["|%26s |%16d|%16d|" % (label, value, 0) for label, value in rows]
        out += [rule, "", "Ingress Queuing for %s" % port, "-" * 53,
                "QoS-Group#                 Pause           Buff Size       Pause Th      Resume Th", "-" * 53]
        out += ["      %d              -            -            -" % q for q in range(7, -1, -1)]
        out += ["PFC Statistics", "-" * 78,
                "TxPPP:%20d,   RxPPP:%20d" % (sum(c["pfc_tx"]), sum(c["pfc_rx"])), "-" * 78,
                "PFC_COS QOS_Group   TxPause             TxCount   RxPause             RxCount"]
        out += ["%7d %9d  Inactive %19d  Inactive %19d" % (q, q, c["pfc_tx"][q], c["pfc_rx"][q]) for q in range(8)]
        out.append("-" * 78)
        return "\n".join(out) + "\n"


# -- what the lab and the tests take from this grammar (switchsim/__init__.py; docs/adding-a-platform.md) --

DEVICE = NxosDevice

# Two ports of a lab switch of this platform, as a lab inventory gives them.
# NX-OS names a front-panel port Ethernet<slot>/<port> (the emulated fixed Nexus 9364C-GX, 64 x 100G: slot 1).
LAB_PORTS = {"Ethernet1/1": {"speed": "100G", "cable_length_m": 3, "description": "gpu1 mlx5_2"},
             "Ethernet1/2": {"speed": "100G", "cable_length_m": 10}}

# Where the transaction stops answering, per switch_config step: the command (regular expression) the
# simulator's 'hang' fault matches; the commands are the ones the driver sends in that step.
HANG_AT = {
    "connect": "login",
    "load": "^copy running-config bootflash:",
    # Opening the session lists bootflash (another session's kept files, whose change may be pending, are refused there).
    "open session": "^dir bootflash:$",
    "commit": "^configure replace .* commit-timeout",
    "read-back": "^show running-config$",
    "confirm": "^configure replace commit$",
}

# What a lab switch starts with, as an operator prepares a real one: the driver sends the target configuration
# by SCP, which needs NX-OS's SCP server (docs/vendor-nxos.md, "Transport").
PREPARED = ("feature scp-server",)
