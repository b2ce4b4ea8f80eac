# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Cisco NX-OS (Nexus 9000 cloud-scale): lossless RoCEv2 QoS through configure replace.

NX-OS has no candidate configuration a CLI session can stage; it replaces the whole running
configuration with a file, atomically, with an optional commit timer (Cisco Nexus 9000 Series
NX-OS System Management Configuration Guide, "Performing Configuration Replace", 9.3(1)+).
The driver builds that file from the switch's own running configuration:

    terminal dont-ask                                        (prepare) no confirmation prompts
    show config-replace status                               (open_session) refuse a running commit timer
    dir bootflash:                                           (load) stale lf-<s>-* files of this session
    delete bootflash:lf-<s>-<x>.cfg                          ... each of them
    copy running-config bootflash:lf-<s>-before.cfg          the state to roll back to
    show file bootflash:lf-<s>-before.cfg                    its text: target_config() merges the plan in
    (SCP bootflash:lf-<s>-target.cfg)                        netmiko CiscoNxosFileTransfer
    show file bootflash:lf-<s>-target.cfg md5sum             == the md5 of what was sent
    configure replace bootflash:lf-<s>-target.cfg verify-only   the device validates the patch
    show diff rollback-patch file bootflash:lf-<s>-before.cfg file bootflash:lf-<s>-target.cfg   (diff)
    configure replace bootflash:lf-<s>-target.cfg [commit-timeout <t>]   (commit)
    configure replace commit                                 (confirm) stop the timer, keep the change
    configure replace bootflash:lf-<s>-before.cfg            (rollback) back now
    show running-config                                      (gather, read-back)
    copy running-config startup-config                       (save)

What the driver renders is Cisco's RoCEv2 design (Cisco Data Center Networking Blueprint for
AI/ML Applications; Nexus 9000 NX-OS Quality of Service Configuration Guide 10.3(x)): every DSCP
classified into a qos-group, a strict CNP queue and DWRR ('bandwidth remaining percent') for the
others, WRED in ECN mode on the RoCE queue, PFC ('pause pfc-cos') and MTU in the network-qos
policy, both applied under 'system qos', the PFC watchdog globals, and per port 'mtu',
'priority-flow-control mode on' and the classification policy. Every name the collection owns
starts 'LF-'. Every command and form with its source: docs/vendor-nxos.md; what no source
confirms is marked "unverified" here and there.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _channel, _indent, _records
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _show as _nxos_show
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _vendor as _vendor_nxos

PLATFORM = _records.NXOS

OWN = "LF-"
QOS_POLICY = "LF-QOS"
QUEUING_POLICY = "LF-QUEUING"
NETQOS_POLICY = "LF-NETQOS"
CLASS_PREFIX = "LF-TC"
# Every range, class name and default below is _vendor_nxos's (the vendor table, each value with its source;
# docs/vendor-nxos.md). Cloud-scale switches run 8 qos-groups and 8 egress queues; qos-group N is queue N, its
# system classes _vendor_nxos.queuing_class / network_qos_class (qos-group 0: the default class).
QOS_GROUP = _vendor_nxos.QOS_GROUP_RANGE
PFC_COS = _vendor_nxos.PFC_COS_RANGE
DSCP = _vendor_nxos.DSCP_RANGE
PERCENT = _vendor_nxos.BANDWIDTH_REMAINING_PERCENT_RANGE
# 'random-detect ... drop-probability <p>': the plan's value is a percentage, 0-100 by its meaning; NX-OS's own
# bounds are unverified (_vendor_nxos.ECN_DROP_PROBABILITY_RANGE is None), as are those of 'weight'.
DROP_PROBABILITY = (0, 100)
# 'weight 0' (no averaging: marking on the instantaneous queue depth) is the driver's choice; that NX-OS takes
# weight 0 is unverified (the published configuration uses weight 7; _vendor_nxos.ECN_WEIGHT_RANGE is None).
ECN_WEIGHT = 0
# WRED thresholds are rendered in 'bytes': whether an NX-OS kbyte is 1000 or 1024 bytes is unverified, and so is
# that the CLI takes 'bytes' at all (the published configuration gives kbytes). Read back, a threshold in another
# unit has no byte count (_vendor_nxos.ECN_THRESHOLD_UNITS, ECN_THRESHOLD_BYTES_PER).
ECN_UNIT = "bytes"
NETQOS_MTU = _vendor_nxos.NETWORK_QOS_MTU_RANGE
INTERFACE_MTU = _vendor_nxos.MTU_RANGE
# PFC watchdog: 'priority-flow-control watch-dog-interval {on|off}' enables it, '... watch-dog interval <ms>' is
# its poll interval, '... watch-dog shutdown-multiplier <n>' the intervals of a stuck queue before it is shut
# (drops), '... auto-restore multiplier <n>' the intervals before it is restored (those three keywords and every
# range: unverified, _vendor_nxos). The plan's detection time is rendered as the interval (shutdown-multiplier
# left at its default) and its restoration time as the auto-restore multiplier of that interval.
# The interval: 101-1000 ms is what Cisco's NDFC fabric setting 'pfc_watch_int' takes and 100 ms the system
# default it names, so the driver renders 100-1000 ms; the CLI's own bounds are unverified.
WATCHDOG_INTERVAL_MS = (_vendor_nxos.WATCHDOG_INTERVAL_DEFAULT_MS, _vendor_nxos.NDFC_PFC_WATCH_INT_MS_RANGE[1])
# No source bounds the auto-restore multiplier: the driver asks for a whole multiple, at least 1, and leaves a
# value the switch does not take to 'configure replace ... verify-only' to refuse.
WATCHDOG_AUTO_RESTORE_MIN = 1
# 'configure replace <file> commit-timeout <s>': 30-3600 s is the Nexus 7000 guide's; on the Nexus 9000 unverified.
COMMIT_TIMEOUT_S = _vendor_nxos.COMMIT_TIMEOUT_S_RANGE

# A session name becomes part of a bootflash file name (lf-<s>-before.cfg): 64 characters at most, as
# switch_config and the change window name sessions (_change_window.SESSION_RE).
_SESSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", re.ASCII)
_PORT_RE = re.compile(_vendor_nxos.INTERFACE_PATTERN, re.ASCII)
_POLICY_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,40}", re.ASCII)


# ---------------------------------------------------------------------------
# render
# ---------------------------------------------------------------------------


def _natural(name: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _in(value: Any, bounds: tuple[int, int], what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not bounds[0] <= value <= bounds[1]:
        raise ValueError("nxos: %s %r is outside NX-OS's %d-%d" % (what, value, bounds[0], bounds[1]))
    return value


def dscp_list(dscps: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> '0-2,5,7-8' ('match dscp' takes a list of values and ranges; the exact
    form 'show running-config' prints the list in is unverified: the parser reads any of them)."""
    runs: list[list[int]] = []
    for dscp in sorted(set(dscps)):
        if runs and runs[-1][1] == dscp - 1:
            runs[-1][1] = dscp
        else:
            runs.append([dscp, dscp])
    return ",".join("%d" % a if a == b else "%d-%d" % (a, b) for a, b in runs)


def parse_dscp_list(text: str) -> list[int]:
    """'0-2,5, af31 ef' -> the code points; ValueError naming nxos for anything else."""
    out: set[int] = set()
    for piece in re.split(r"[,\s]+", text.strip()):
        if not piece:
            continue
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", piece)
        if match:
            low, high = int(match.group(1)), int(match.group(2) or match.group(1))
            if not 0 <= low <= high <= 63:
                raise ValueError("nxos: 'match dscp %s': %r is not a DSCP value or range (0-63)" % (text, piece))
            out.update(range(low, high + 1))
        elif piece.lower() in _vendor_nxos.DSCP_NAMES:
            out.add(_vendor_nxos.DSCP_NAMES[piece.lower()])
        else:
            raise ValueError("nxos: 'match dscp %s': %r is not a DSCP value, range or name" % (text, piece))
    return sorted(out)


def _ecn_groups(plan: dict, ports: list[str]) -> list[tuple[tuple[int, int, int], list[str]]]:
    """The ports grouped by their ECN values (min bytes, max bytes, probability), in port order."""
    groups: dict[tuple[int, int, int], list[str]] = {}
    for name in ports:
        ecn = plan["ports"][name]["ecn"]
        key = (ecn["min_threshold_bytes"], ecn["max_threshold_bytes"], ecn["max_probability_percent"])
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in key) or not 1 <= key[0] <= key[1]:
            raise ValueError("nxos: port %s: ECN thresholds %r are not byte counts with minimum <= maximum" % (name, key[:2]))
        _in(key[2], DROP_PROBABILITY, "port %s: ECN drop-probability" % name)
        groups.setdefault(key, []).append(name)
    return list(groups.items())


def _watchdog_lines(watchdog: dict) -> list[str]:
    if not watchdog.get("enabled"):
        # The global default of the watchdog is unverified: disabled is said explicitly.
        return ["priority-flow-control watch-dog-interval off"]
    if watchdog.get("action") not in _vendor_nxos.WATCHDOG_ACTIONS:
        raise ValueError("nxos: PFC watchdog action %r has no NX-OS form (the NX-OS watchdog only drops: %s)"
                         % (watchdog.get("action"), ", ".join(_vendor_nxos.WATCHDOG_ACTIONS)))
    detect = _in(watchdog.get("detection_time_ms"), WATCHDOG_INTERVAL_MS, "PFC watchdog detection time (ms; the watch-dog interval)")
    restore = watchdog.get("restoration_time_ms")
    if not isinstance(restore, int) or isinstance(restore, bool) or restore % detect:
        raise ValueError("nxos: PFC watchdog restoration time %r ms is not a whole multiple of the detection time %d ms "
                         "(NX-OS restores after 'auto-restore multiplier' watch-dog intervals)" % (restore, detect))
    multiplier = restore // detect
    if multiplier < WATCHDOG_AUTO_RESTORE_MIN:
        raise ValueError("nxos: PFC watchdog auto-restore multiplier %d (restoration / detection time) is not at least %d"
                         % (multiplier, WATCHDOG_AUTO_RESTORE_MIN))
    return [
        "priority-flow-control watch-dog-interval on",
        "priority-flow-control watch-dog interval %d" % detect,
        "priority-flow-control auto-restore multiplier %d" % multiplier,
    ]


def render_plan(plan: dict) -> list[str]:
    """The NX-OS configuration lines of a switch plan, hierarchical with two spaces a level as
    'show running-config' prints them. ValueError naming the value NX-OS would not take."""
    if plan["trust"] != "dscp":
        raise ValueError("nxos: trust %r has no NX-OS mapping (the classification policy matches DSCP)" % (plan["trust"],))
    ports = sorted(plan["ports"], key=_natural)
    if not ports:
        raise ValueError("nxos: the plan has no ports")
    for name in ports:
        if not isinstance(name, str) or not _PORT_RE.fullmatch(name):
            raise ValueError("nxos: port %r is not an NX-OS interface name (%s)" % (name, _vendor_nxos.INTERFACE_EXAMPLE))
    default = int(plan["default_traffic_class"])
    if default != 0:
        # NX-OS: "By default, all network traffic is grouped into ... qos-group 0", the class-default system
        # classes (_vendor_nxos.queuing_class(0)); another default class has no NX-OS form.
        raise ValueError("nxos: default traffic class %r: NX-OS's default class is qos-group 0 (%s, %s)"
                         % (default, _vendor_nxos.QUEUING_CLASS_DEFAULT, _vendor_nxos.NETWORK_QOS_CLASS_DEFAULT))
    classes = {int(tc): spec for tc, spec in plan["traffic_classes"].items()}
    for tc in [default, *classes]:
        _in(tc, QOS_GROUP, "traffic class (qos-group)")
    full = plan.get("dscp_map_full") or {str(d): plan["dscp_map"].get(str(d), default) for d in range(64)}
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in full.items():
        by_tc.setdefault(_in(int(tc), QOS_GROUP, "traffic class (qos-group)"), []).append(_in(int(dscp), DSCP, "DSCP"))
    mtu = plan["mtu"]
    _in(mtu, NETQOS_MTU, "MTU (network-qos class mtu)")
    _in(mtu, INTERFACE_MTU, "MTU (interface mtu)")
    pfc = sorted({int(p) for name in ports for p in plan["ports"][name]["pfc_priorities"]})
    for prio in pfc:
        _in(prio, PFC_COS, "PFC priority (pause pfc-cos)")
        if prio == default:
            # The default class's no-drop form is unverified: refused rather than guessed.
            raise ValueError("nxos: PFC priority %d is the default class (qos-group %d, c-8q-nq-default): "
                             "a lossless default class is not rendered (unverified)" % (prio, default))
    ecn_queue = int(plan["ecn_queue"])
    if ecn_queue not in classes or classes[ecn_queue]["strict"]:
        raise ValueError("nxos: the ECN queue %d is not a weighted traffic class of the plan" % ecn_queue)

    lines: list[str] = []
    # -- classification: QoS guide, "Configuring Classification" ('class-map type qos match-any',
    # 'match dscp <list>'); "Configuring Marking" ('set qos-group') in a 'policy-map type qos'.
    for tc in sorted(by_tc):
        lines += ["class-map type qos match-any %s%d" % (CLASS_PREFIX, tc), "  match dscp %s" % dscp_list(by_tc[tc])]
    lines.append("policy-map type qos %s" % QOS_POLICY)
    for tc in sorted(by_tc):
        lines += ["  class %s%d" % (CLASS_PREFIX, tc), "    set qos-group %d" % tc]
    # -- egress queuing: QoS guide, "Configuring Queuing and Scheduling" ('policy-map type queuing',
    # 'class type queuing c-out-8q-q<N>', 'priority level 1', 'bandwidth remaining percent', 'random-detect
    # minimum-threshold .. maximum-threshold .. drop-probability .. weight .. ecn'); the published RoCE
    # configuration (ZB, docs/vendor-nxos.md) has the same statements (in kbytes, weight 7). One policy per distinct ECN setting of the ports.
    groups = _ecn_groups(plan, ports)
    names = [QUEUING_POLICY] if len(groups) == 1 else ["%s-%d" % (QUEUING_POLICY, i + 1) for i in range(len(groups))]
    order = sorted(tc for tc in classes if tc != default) + ([default] if default in classes else [])
    for prio in pfc:
        if prio not in classes:
            raise ValueError("nxos: PFC priority %d is not a traffic class of the plan" % prio)
    for name, ((low, high, prob), _members) in zip(names, groups):
        lines.append("policy-map type queuing %s" % name)
        for tc in order:
            spec = classes[tc]
            lines.append("  class type queuing %s" % _vendor_nxos.queuing_class(tc))
            if spec["strict"]:
                lines.append("    priority level 1")
                continue
            lines.append("    bandwidth remaining percent %d" % _in(spec["bandwidth_percent"], PERCENT, "traffic class %d: bandwidth remaining percent" % tc))
            if tc == ecn_queue:
                lines.append("    random-detect minimum-threshold %d %s maximum-threshold %d %s drop-probability %d weight %d ecn"
                             % (low, ECN_UNIT, high, ECN_UNIT, prob, ECN_WEIGHT))
    # -- no-drop and MTU per system class: QoS guide, "Configuring Network QoS" / "Configuring Priority Flow
    # Control" ('policy-map type network-qos', 'class type network-qos c-8q-nq<N>', 'pause pfc-cos', 'mtu').
    lines.append("policy-map type network-qos %s" % NETQOS_POLICY)
    for tc in order:
        lines.append("  class type network-qos %s" % _vendor_nxos.network_qos_class(tc))
        if tc in pfc:
            lines.append("    pause pfc-cos %d" % tc)
        lines.append("    mtu %d" % mtu)
    # -- system-wide: QoS guide ('system qos', 'service-policy type network-qos', 'service-policy type
    # queuing output').
    lines += ["system qos", "  service-policy type network-qos %s" % NETQOS_POLICY]
    if len(groups) == 1:
        lines.append("  service-policy type queuing output %s" % QUEUING_POLICY)
    lines += _watchdog_lines(plan["watchdog"])
    # -- per port: QoS guide, "Configuring Priority Flow Control" ('priority-flow-control mode on',
    # 'service-policy type qos input'); Interfaces guide ('description', 'mtu').
    queuing_of = {port: name for name, (_key, members) in zip(names, groups) for port in members}
    for name in ports:
        port = plan["ports"][name]
        description = port.get("description") or ""
        _base.check_cli_line("nxos render", description)
        lines.append("interface %s" % name)
        if description:
            lines.append("  description %s" % description)
        lines += ["  mtu %d" % mtu, "  priority-flow-control mode on", "  service-policy type qos input %s" % QOS_POLICY]
        if len(groups) > 1:
            lines.append("  service-policy type queuing output %s" % queuing_of[name])
    for line in lines:
        _base.check_cli_line("nxos render", line)
    return lines


# ---------------------------------------------------------------------------
# the configuration text: walk, recognise, parse
# ---------------------------------------------------------------------------


def _walk(text: str):
    """(context, line) for each configuration line of NX-OS-indented text (two spaces a level as
    'show running-config' prints it); the context is the tuple of enclosing mode lines. '!' comment
    lines (the '!Command:' / '!Time:' header) and blank lines are skipped."""
    return _indent.walk(text)


# Top-level words an NX-OS running configuration starts its lines with (a Nexus 9000 'show
# running-config': version, feature, hostname, ... interface, line, boot); text with none of them is not one.
_NXOS_TOP = re.compile(
    r"^(version|feature|hostname|interface|class-map|policy-map|system|priority-flow-control|vlan|vrf|username|"
    r"ip|ipv6|no|hardware|logging|ntp|snmp-server|spanning-tree|line|boot|copp|rmon|router|cfs|nv|evpn|vpc|"
    r"port-channel|lldp|control-plane|qos|switchname|banner|clock|password|role|ssh|aaa|license|fabric|mac|key)\b"
)
# Forms of other platforms (Junos set/braces, NVUE, SONiC JSON, EOS three-space indentation is told apart
# by its words): refused by name. Judged on unindented lines only.
_FOREIGN = re.compile(r"^(set |nv |delete |\{|\[)|^\S[^!]*\{\s*$|^}\s*$")


def _check_text(running: Any) -> list[str]:
    if not isinstance(running, str) or not running.strip():
        raise ValueError("nxos: no configuration text (expected the output of 'show running-config')")
    lines = [line for line in running.replace("\r", "").split("\n") if line.strip() and not line.lstrip().startswith("!")]
    if not lines:
        raise ValueError("nxos: only comment lines (expected the output of 'show running-config')")
    foreign = next((line for line in lines if not line.startswith(" ") and _FOREIGN.search(line)), None)
    if foreign is not None:
        raise ValueError("nxos: %r is not NX-OS configuration text (expected the output of 'show running-config', "
                         "indented 2 spaces a level; not Junos, NVUE or JSON)" % foreign.strip()[:80])
    top = [line for line in lines if not line.startswith(" ")]
    if not any(_NXOS_TOP.match(line) for line in top):
        raise ValueError("nxos: no NX-OS configuration line found (expected the output of 'show running-config' "
                         "or 'show running-config ipqos'; first line: %r)" % lines[0][:80])
    return lines


_RED = re.compile(
    r"^random-detect minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+)(?: drop-probability (\d+))?(?: weight (\d+))?(?: (ecn|non-ecn))?$"
)
_WD_INTERVAL = re.compile(r"^priority-flow-control watch-dog interval (\d+)$")
_WD_SHUTDOWN = re.compile(r"^priority-flow-control watch-dog shutdown-multiplier (\d+)$")
_WD_RESTORE = re.compile(r"^priority-flow-control auto-restore multiplier (\d+)$")
_WD_FIXED = re.compile(r"^priority-flow-control fixed-restore multiplier (\d+)$")
_WD_GLOBAL = re.compile(r"^priority-flow-control watch-dog-interval (on|off)$")


def _is_watchdog_global(line: str) -> bool:
    return bool(_WD_INTERVAL.match(line) or _WD_SHUTDOWN.match(line) or _WD_RESTORE.match(line)
                or _WD_FIXED.match(line) or _WD_GLOBAL.match(line))


def _ecn_of(match: re.Match) -> dict:
    low_unit, high_unit = _vendor_nxos.ECN_THRESHOLD_BYTES_PER.get(match.group(2)), _vendor_nxos.ECN_THRESHOLD_BYTES_PER.get(match.group(4))
    for unit in (match.group(2), match.group(4)):
        if unit not in _vendor_nxos.ECN_THRESHOLD_UNITS:
            raise ValueError("nxos: 'random-detect' threshold unit %r is not one of %s" % (unit, ", ".join(_vendor_nxos.ECN_THRESHOLD_UNITS)))
    return {
        "min_threshold_bytes": int(match.group(1)) * low_unit if low_unit else None,
        "max_threshold_bytes": int(match.group(3)) * high_unit if high_unit else None,
        "max_probability_percent": int(match.group(5)) if match.group(5) else None,
        # as the device has them: bytes are known only for the 'bytes' unit (_vendor_nxos.ECN_THRESHOLD_BYTES_PER)
        "min_threshold": int(match.group(1)),
        "max_threshold": int(match.group(3)),
        "unit": match.group(2) if match.group(2) == match.group(4) else "%s/%s" % (match.group(2), match.group(4)),
        "weight": int(match.group(6)) if match.group(6) else None,
        "ecn": match.group(7) == "ecn",
    }


class _Config:
    """The QoS objects of an NX-OS running configuration."""

    def __init__(self, running: str):
        _check_text(running)
        self.class_maps: dict[str, dict] = {}  # class-map type qos name -> {"dscp": [..], "other": [..]}
        self.qos: dict[str, list[tuple[str, int | None]]] = {}  # policy-map type qos -> [(class, qos-group)]
        self.queuing: dict[str, dict[int, dict]] = {}  # policy-map type queuing -> {queue: settings}
        self.netqos: dict[str, dict[int, dict]] = {}  # policy-map type network-qos -> {queue: {pause, mtu}}
        self.system: dict[str, str] = {}  # "network-qos" / "queuing output" / "queuing input" / "qos input" -> policy
        self.watchdog: dict[str, Any] = {}
        self.interfaces: dict[str, dict] = {}
        self.unknown: dict[str, list[str]] = {}  # policy -> class lines that are not system classes
        for context, line in _walk(running):
            self._line(context, line)

    def _line(self, context: tuple, line: str) -> None:
        if not context:
            self._top(line)
            return
        head = context[0]
        words = head.split()
        if head.startswith("class-map type qos ") and len(words) in (4, 5) and len(context) == 1:
            target = self.class_maps[words[-1]]
            match = re.fullmatch(r"match dscp (.+)", line)
            if match:
                target["dscp"] += parse_dscp_list(match.group(1))
            else:
                target["other"].append(line)
        elif head.startswith("policy-map type qos ") and len(words) == 4:
            policy = self.qos[words[3]]
            if len(context) == 1:
                match = re.fullmatch(r"class (?:type qos )?(\S+)", line)
                if match:
                    policy.append((match.group(1), None))
            elif len(context) == 2 and policy:
                match = re.fullmatch(r"set qos-group (\d+)", line)
                if match:
                    policy[-1] = (policy[-1][0], int(match.group(1)))
        elif head.startswith("policy-map type queuing ") and len(words) == 4 and len(context) == 2:
            queue = self._queue(_vendor_nxos.queuing_class_group, context[1], "class type queuing ", self.unknown.setdefault(words[3], []))
            if queue is None:
                return
            slot = self.queuing[words[3]].setdefault(queue, {"strict": False, "bandwidth": None, "ecn": None})
            match = re.fullmatch(r"bandwidth remaining percent (\d+)", line)
            red = _RED.match(line)
            if re.fullmatch(r"priority(?: level \d+)?", line):
                slot["strict"] = True
            elif match:
                slot["bandwidth"] = int(match.group(1))
            elif red:
                slot["ecn"] = _ecn_of(red)
        elif head.startswith("policy-map type network-qos ") and len(words) == 4 and len(context) == 2:
            queue = self._queue(_vendor_nxos.network_qos_class_group, context[1], "class type network-qos ", self.unknown.setdefault(words[3], []))
            if queue is None:
                return
            slot = self.netqos[words[3]].setdefault(queue, {"pause": [], "mtu": None})
            pause = re.fullmatch(r"pause pfc-cos ([\d ,]+)", line)
            mtu = re.fullmatch(r"mtu (\d+)", line)
            if pause:
                slot["pause"] = sorted({int(c) for c in re.split(r"[ ,]+", pause.group(1).strip())})
            elif mtu:
                slot["mtu"] = int(mtu.group(1))
        elif head == "system qos" and len(context) == 1:
            match = re.fullmatch(r"service-policy type (network-qos|queuing (?:input|output)|qos input) (\S+)", line)
            if match:
                self.system[match.group(1)] = match.group(2)
        elif head.startswith("interface ") and len(context) == 1:
            self._interface(self.interfaces[head[len("interface "):]], line)

    @staticmethod
    def _queue(group_of, line: str, prefix: str, unknown: list) -> int | None:
        """The queue of a system class line; None (and the line kept in ``unknown``) for another class:
        refused only if that policy is applied (check_applied)."""
        queue = group_of(line[len(prefix):]) if line.startswith(prefix) else None
        if queue is None and line not in unknown:
            unknown.append(line)
        return queue

    def check_applied(self, policy: str | None) -> None:
        if policy and self.unknown.get(policy):
            raise ValueError("nxos: policy-map %s: %r is not a system class this parser reads (class type queuing c-out-8q-q<N> | "
                             "c-out-8q-q-default, class type network-qos c-8q-nq<N> | c-8q-nq-default: cloud-scale, 8 queues)"
                             % (policy, self.unknown[policy][0]))

    def _top(self, line: str) -> None:
        words = line.split()
        if line.startswith("class-map type qos ") and len(words) in (4, 5):
            self.class_maps.setdefault(words[-1], {"dscp": [], "other": [], "match": words[3] if len(words) == 5 else "match-all"})
        elif line.startswith("policy-map type qos ") and len(words) == 4:
            self.qos.setdefault(words[3], [])
        elif line.startswith("policy-map type queuing ") and len(words) == 4:
            self.queuing.setdefault(words[3], {})
        elif line.startswith("policy-map type network-qos ") and len(words) == 4:
            self.netqos.setdefault(words[3], {})
        elif line.startswith("interface "):
            self.interfaces.setdefault(line[len("interface "):], {
                "description": None, "mtu": None, "pfc_mode": None, "qos_input": None, "queuing_output": None, "watchdog": None})
        elif _WD_GLOBAL.match(line):
            self.watchdog["enabled"] = line.endswith(" on")
        elif _WD_INTERVAL.match(line):
            self.watchdog["interval"] = int(_WD_INTERVAL.match(line).group(1))
        elif _WD_SHUTDOWN.match(line):
            self.watchdog["shutdown"] = int(_WD_SHUTDOWN.match(line).group(1))
        elif _WD_RESTORE.match(line):
            self.watchdog["restore"] = int(_WD_RESTORE.match(line).group(1))

    @staticmethod
    def _interface(intf: dict, line: str) -> None:
        words = line.split()
        if words[0] == "description" and len(words) > 1:
            intf["description"] = line[len("description "):]
        elif words[0] == "mtu" and len(words) == 2 and words[1].isdigit():
            intf["mtu"] = int(words[1])
        elif words[:2] == ["priority-flow-control", "mode"] and len(words) == 3:
            intf["pfc_mode"] = words[2]
        elif words[:4] == ["service-policy", "type", "qos", "input"] and len(words) == 5:
            intf["qos_input"] = words[4]
        elif words[:4] == ["service-policy", "type", "queuing", "output"] and len(words) == 5:
            intf["queuing_output"] = words[4]
        elif words[:2] == ["priority-flow-control", "watch-dog-interval"] and len(words) == 3:
            intf["watchdog"] = words[2] == "on"

    def dscp_of(self, policy: str) -> dict[int, int]:
        """DSCP -> qos-group of a qos policy: its classes in order, the first match wins."""
        found: dict[int, int] = {}
        for name, group in self.qos.get(policy, []):
            if group is None or name not in self.class_maps:
                continue
            for dscp in self.class_maps[name]["dscp"]:
                found.setdefault(dscp, group)
        return found


def parse_config(running: str) -> dict:
    """The gathered shape (docs/switches.md) from 'show running-config' (or 'show running-config ipqos')."""
    config = _Config(running)
    watchdog = config.watchdog
    enabled = watchdog.get("enabled", False)
    interval = watchdog.get("interval", _vendor_nxos.WATCHDOG_INTERVAL_DEFAULT_MS)
    system_queuing = config.system.get("queuing output")
    config.check_applied(system_queuing)
    config.check_applied(config.system.get("network-qos"))
    netqos = config.netqos.get(config.system.get("network-qos", ""), {})
    no_drop = sorted({cos for slot in netqos.values() for cos in slot["pause"]})
    result: dict[str, Any] = {
        "dscp_map": {},
        "watchdog": {
            "enabled": bool(enabled),
            "detection_time_ms": interval * watchdog.get("shutdown", _vendor_nxos.WATCHDOG_SHUTDOWN_MULTIPLIER_DEFAULT) if enabled else None,
            "restoration_time_ms": interval * watchdog.get("restore", _vendor_nxos.WATCHDOG_AUTO_RESTORE_MULTIPLIER_DEFAULT) if enabled else None,
            "action": "drop" if enabled else None,
        },
        "interfaces": {},
    }
    explicit: dict[int, int] = {}
    for name in sorted(config.interfaces, key=_natural):
        intf = config.interfaces[name]
        policy = intf["qos_input"]
        dscp = config.dscp_of(policy) if policy else {}
        for code, group in dscp.items():
            explicit.setdefault(code, group)
        config.check_applied(intf["queuing_output"])
        queuing = config.queuing.get(intf["queuing_output"] or system_queuing or "", {})
        pfc_on = intf["pfc_mode"] == "on"
        result["interfaces"][name] = {
            "description": intf["description"],
            "mtu": intf["mtu"],
            "trust": "dscp" if dscp else None,
            "pfc_enabled": pfc_on,
            "pfc_mode": intf["pfc_mode"],
            "pfc_priorities": no_drop if pfc_on else [],
            "ecn": {str(q): {k: v for k, v in s["ecn"].items() if k != "ecn"} for q, s in sorted(queuing.items()) if s["ecn"] and s["ecn"]["ecn"]},
            "strict_queues": sorted(q for q, s in queuing.items() if s["strict"]),
            "bandwidth_percent": {str(q): s["bandwidth"] for q, s in sorted(queuing.items()) if s["bandwidth"] is not None},
            "watchdog": bool(enabled) and intf["watchdog"] is not False and pfc_on,
            "qos_policy": policy,
            "queuing_policy": intf["queuing_output"] or system_queuing,
        }
    # The plan's dscp_map names the non-default classes (every other code point -> class 0).
    result["dscp_map"] = {str(d): explicit[d] for d in sorted(explicit) if explicit[d] != 0}
    result["dscp_unmapped"] = [d for d in range(64) if d not in explicit] if explicit else list(range(64))
    result["system_qos"] = dict(config.system)
    result["network_qos"] = {str(q): dict(s) for q, s in sorted(netqos.items())}
    return result


# ---------------------------------------------------------------------------
# missing_lines: by meaning, in context
# ---------------------------------------------------------------------------


def _facts(line: str) -> list[str]:
    """A line in a form where equal meaning is equal text: one DSCP per 'match dscp' fact,
    WRED thresholds in bytes."""
    match = re.fullmatch(r"match dscp (.+)", line)
    if match:
        try:
            return ["match dscp %d" % d for d in parse_dscp_list(match.group(1))]
        except ValueError:
            return [line]
    match = _RED.match(line)
    if match:
        ecn = _ecn_of(match)
        if ecn["min_threshold_bytes"] is None or ecn["max_threshold_bytes"] is None:
            return [line]
        return ["random-detect %d %d %s %s %s" % (ecn["min_threshold_bytes"], ecn["max_threshold_bytes"],
                                                  ecn["max_probability_percent"], ecn["weight"], match.group(7))]
    return [line]


def missing(lines: list[str], running: str) -> list[str]:
    _check_text(running)
    have: dict[tuple, set] = {}
    for context, line in _walk(running):
        have.setdefault(context, set()).update(_facts(line))
    headers = {context[: index + 1] for context, _line in _walk("\n".join(lines)) for index in range(len(context))}
    top = have.get((), set())
    out = []
    for context, line in _walk("\n".join(lines)):
        if context + (line,) in headers:
            continue  # a mode line: its children say whether it is there
        facts = have.get(context, set())
        if not context and _WD_GLOBAL.match(line):
            # Its default is unverified: present unless the switch says the other word.
            found = "priority-flow-control watch-dog-interval %s" % ("off" if line.endswith(" on") else "on") not in top
        elif not context and _WD_RESTORE.match(line) and not any(_WD_RESTORE.match(f) for f in top):
            found = int(_WD_RESTORE.match(line).group(1)) == _vendor_nxos.WATCHDOG_AUTO_RESTORE_MULTIPLIER_DEFAULT  # a default is not printed
        elif not context and _WD_INTERVAL.match(line) and not any(_WD_INTERVAL.match(f) for f in top):
            found = int(_WD_INTERVAL.match(line).group(1)) == _vendor_nxos.WATCHDOG_INTERVAL_DEFAULT_MS
        else:
            found = all(fact in facts for fact in _facts(line))
        if not found:
            out.append(" > ".join(context + (line,)))
    return out


# ---------------------------------------------------------------------------
# target_config: the device's whole configuration with the collection's parts replaced
# ---------------------------------------------------------------------------


def _blocks(text: str) -> list[list[str]]:
    """The text as top-level blocks: each a header line (unindented) and its indented lines, raw
    (line ends kept); comment, blank and other leading lines are blocks of their own."""
    blocks: list[list[str]] = []
    for raw in text.splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        if blocks and body.startswith(" ") and body.strip() and not body.lstrip().startswith("!") and _header(blocks[-1]) is not None:
            blocks[-1].append(raw)
        else:
            blocks.append([raw])
    return blocks


def _header(block: list[str]) -> str | None:
    """The normalised header of a configuration block (None for a comment or blank line)."""
    head = block[0].rstrip("\r\n")
    if not head.strip() or head.startswith(" ") or head.lstrip().startswith("!"):
        return None
    return " ".join(head.split())


_OWN_BLOCK = re.compile(r"^(class-map type (?:qos|queuing|network-qos)(?: match-any| match-all)? |policy-map type (?:qos|queuing|network-qos) )(\S+)$")


def _own(header: str | None) -> bool:
    match = _OWN_BLOCK.match(header or "")
    return bool(match and match.group(2).startswith(OWN))


# The interface sub-lines the collection sets, by what they set (a rendered line replaces every line of its key).
def _intf_key(line: str) -> str | None:
    words = line.split()
    if not words:
        return None
    if words[0] in ("description", "mtu"):
        return words[0]
    if words[:2] == ["priority-flow-control", "mode"]:
        return "priority-flow-control mode"
    if words[:3] == ["service-policy", "type", "qos"] and len(words) >= 4:
        return "service-policy type qos " + words[3]
    if words[:3] == ["service-policy", "type", "queuing"] and len(words) >= 4:
        return "service-policy type queuing " + words[3]
    return None


def _system_key(line: str) -> str | None:
    words = line.split()
    if words[:3] == ["service-policy", "type", "network-qos"]:
        return "network-qos"
    if words[:3] == ["service-policy", "type", "queuing"] and len(words) >= 4:
        return "queuing " + words[3]
    return None


def _merge(block: list[str], ours: list[str], key, newline: str, drop=None) -> list[str]:
    """A block with each of ``ours`` (its sub-lines, indented as rendered) replacing the existing sub-lines
    of the same key in place (the first; the others dropped), the rest appended; an existing sub-line for
    which ``drop(line)`` is true (set by us before, not now) removed."""
    wanted = {key(line.strip()): line for line in ours}
    out = [block[0]]
    placed: set = set()
    for raw in block[1:]:
        k = key(raw.strip())
        if k is not None and k in wanted:
            if k not in placed:
                out.append(wanted[k] + newline)
                placed.add(k)
            continue
        if drop is not None and drop(" ".join(raw.split())):
            continue
        out.append(raw)
    out += [wanted[k] + newline for k in wanted if k not in placed]
    return out


def _stale_queuing(ours: list[str]):
    """A predicate: an 'LF-' queuing output policy the rendered ``ours`` no longer applies."""
    applies = any(_intf_key(line.strip()) == "service-policy type queuing output" for line in ours)
    return lambda line: not applies and bool(re.fullmatch(r"service-policy type queuing output LF-\S+", line))


def _rendered_blocks(lines: list[str]) -> list[list[str]]:
    """The rendered lines as top-level blocks (lines without a line end)."""
    blocks: list[list[str]] = []
    for line in lines:
        if line.startswith(" ") and blocks:
            blocks[-1].append(line)
        elif line.startswith(" "):
            raise ValueError("nxos: %r: an indented line before any block header" % line)
        else:
            blocks.append([line])
    return blocks


def _end(block: list[str]) -> str:
    """A block's last line ending ('' when the text ends without one)."""
    last = block[-1]
    return last[len(last.rstrip("\r\n")):]


def target(before: str, lines: list[str]) -> str:
    """``before`` (the device's configuration text) with the collection's blocks replaced by ``lines``:
    every 'LF-' class-map and policy-map, the 'system qos' service policies, the PFC watchdog globals and,
    in each of the plan's interface blocks, the sub-lines the plan sets. Everything else is kept byte for byte."""
    if not isinstance(before, str) or not before.strip():
        raise ValueError("nxos: no configuration text to build the target from")
    _check_text(before)
    rendered = _rendered_blocks(lines)
    newline = "\r\n" if "\r\n" in before else "\n"
    own_blocks, system, watchdog, interfaces = [], None, [], {}
    for block in rendered:
        head = " ".join(block[0].split())
        if _own(head):
            own_blocks.append(block)
        elif head == "system qos":
            system = block
        elif len(block) == 1 and _is_watchdog_global(head):
            watchdog.append(head)
        elif head.startswith("interface "):
            interfaces[head] = block
        else:
            raise ValueError("nxos: %r is not a block this driver renders" % block[0])
    blocks = _blocks(before)
    if blocks and not _end(blocks[-1]):
        blocks[-1][-1] += newline  # the last line gets a line end: every block here ends with one
    heads = [_header(block) for block in blocks]
    has_system = "system qos" in heads
    has_watchdog = any(head is not None and _is_watchdog_global(head) and len(block) == 1 for head, block in zip(heads, blocks))
    out: list[str] = []
    done = {"own": False, "system": system is None, "watchdog": False}
    seen: set[str] = set()

    def emit_own() -> None:
        if not done["own"]:
            out.extend(line + newline for block in own_blocks for line in block)
            done["own"] = True

    def emit_new_globals() -> None:
        """Before the first interface (NX-OS prints the QoS objects, then the interfaces): what the
        device does not have a place for yet."""
        emit_own()
        if not has_system and not done["system"]:
            out.extend(line + newline for line in system)
            done["system"] = True
        if not has_watchdog and not done["watchdog"]:
            out.extend(line + newline for line in watchdog)
            done["watchdog"] = True

    for head, block in zip(heads, blocks):
        if _own(head):
            emit_own()  # every 'LF-' class-map and policy-map is replaced by the rendered ones, at the first one's place
        elif head is not None and _is_watchdog_global(head) and len(block) == 1:
            if not done["watchdog"]:
                out.extend(line + newline for line in watchdog)
                done["watchdog"] = True
        elif head == "system qos":
            emit_own()  # the policies before the block that applies them
            if system is not None and not done["system"]:
                out.extend(_merge(block, system[1:], _system_key, newline,
                                  drop=lambda line: bool(re.fullmatch(r"service-policy type (?:network-qos|queuing output) LF-\S+", line))))
                done["system"] = True
            else:
                out.extend(block)
        elif head is not None and head.startswith("interface "):
            emit_new_globals()
            if head in interfaces:
                out.extend(_merge(block, interfaces[head][1:], _intf_key, newline, drop=_stale_queuing(interfaces[head][1:])))
                seen.add(head)
            else:
                out.extend(block)
        else:
            out.extend(block)
    emit_new_globals()
    for head, block in interfaces.items():
        if head not in seen:
            out.extend(line + newline for line in block)
    return "".join(out)


# ---------------------------------------------------------------------------
# what the device prints
# ---------------------------------------------------------------------------

# NX-OS errors: "% Invalid command at '^' marker.", "% Incomplete command at '^' marker.", "% Invalid number
# ..." (the CLI's parser, ntc-templates / netmiko's cisco_nxos error checks), "Invalid range at '^' marker."
# (no '%': a 9.3(1) session paste), "ERROR: ..." lines (the interface manager's, e.g. the MTU error of an L2
# port), and configure replace's "Syntax error while parsing '<line>'" and "... failed" lines.
_ERROR = re.compile(r"^\s*(?:%|ERROR:|Error:|Syntax error while parsing\b|No such file or directory)|at '\^' marker|"
                    r"\b[Cc]onfigure replace failed\b|\bPatch validation failed\b|\bRollback failed\b", re.M)
_SYNTAX = re.compile(r"Syntax error while parsing '([^'\n]*)'")
# Success forms: "Configure replace completed successfully." (commit: a 9.3(1) session and pyATS' config_replace
# check), "Patch validation completed successful" (verify-only: the same session), "Rollback Patch is Empty"
# (nothing to change: napalm nxos._get_diff and a public NX-OS driver's check). Others: unverified.
_REPLACED = re.compile(r"Configure replace completed successfully")
_VERIFIED = re.compile(r"Patch validation completed successful|Rollback Patch is Empty|Configure replace completed successfully")
_COPIED = re.compile(r"Copy complete")
_MD5 = re.compile(r"\b([0-9a-f]{32})\b")
# 'show config-replace status' (form unverified: no published output was found): a commit timer running
# is read from a line naming the commit timeout / timer with a remaining time, or a status of 'in progress'.
_TIMER_LEFT = re.compile(r"(?im)^\s*(?:remaining time|time remaining|commit[- ]timer(?: expiry)?(?: remaining)?|time left)\s*:\s*(\d+)")
_TIMER_ACTIVE = re.compile(r"(?im)^\s*(?:commit[- ]timeout|commit[- ]timer|timer status)\s*:\s*(?:active|running|pending|started)\b")
_IN_PROGRESS = re.compile(r"(?im)^\s*(?:operation status|last operation status|status)\s*:\s*(?:in progress|in-progress|pending commit|waiting for commit)")
_FILE_IN_STATUS = re.compile(r"\blf-([A-Za-z0-9][A-Za-z0-9._-]*)-target\.cfg\b")


def rejection(output: str) -> str | None:
    said = [line.strip() for line in (output or "").split("\n") if _ERROR.search(line)]
    return "\n".join(said) if said else None


def replace_status(output: str) -> dict | None:
    """The commit timer 'show config-replace status' shows: {'session', 'remaining_s'}, or None."""
    text = output or ""
    left = _TIMER_LEFT.search(text)
    active = _TIMER_ACTIVE.search(text) or _IN_PROGRESS.search(text)
    if left and int(left.group(1)) == 0 and not active:
        return None
    if not left and not active:
        return None
    match = _FILE_IN_STATUS.search(text)
    return {"session": match.group(1) if match else None, "remaining_s": int(left.group(1)) if left else None}


def diff_of(output: str) -> str:
    """The patch 'show diff rollback-patch file A file B' prints, as napalm's nxos driver reads it: the lines
    after 'Generating Rollback Patch', 'Rollback Patch is Empty' meaning none, '!' and '.' lines dropped."""
    text = (output or "").replace("\r", "")
    if "Generating Rollback Patch" in text:
        text = text.split("Generating Rollback Patch", 1)[1]
    text = text.replace("Rollback Patch is Empty", "")
    kept = [line.rstrip(" ") for line in text.split("\n") if line.strip() and line.strip()[0] not in "!.#"]
    return "\n".join(kept) + "\n" if kept else ""


# The SSH channel closed or the device stopped answering (the shared channel's error).
_Lost = _channel.Lost

DEFAULT_TIMEOUT = 60.0  # seconds for one batch, plus PER_LINE_TIMEOUT a command
PER_LINE_TIMEOUT = 0.5
REPLACE_TIMEOUT = 600.0  # a configure replace validates and applies the whole configuration


class Driver(_base.Driver):
    """Cisco NX-OS over SSH (netmiko cisco_nxos), configure replace with commit-timeout."""

    platform = "nxos"
    device_type = "cisco_nxos"
    # No ECN-marked count in any published 'show queuing interface', no watchdog statistics read (_show, docs/vendor-nxos.md).
    counters_not_available = ("ecn_marked", "ecn_marked_total", "watchdog_storms")

    def __init__(self, conn: Any, device: str):
        super().__init__(conn, device)
        self._state = _base.UNCHANGED
        self._verified: str | None = None  # the verify-only output, until the session changes
        self._diff: str | None = None
        self._timed = False  # committed with a commit timer this run
        self.timeout = DEFAULT_TIMEOUT

    # -- netmiko ---------------------------------------------------------
    @staticmethod
    def connection_class():
        # netmiko 4.8: the class lives in netmiko/cisco/cisco_nxos.py (there is no cisco_nxos_ssh module).
        from netmiko.cisco.cisco_nxos import CiscoNxosSSH  # pylint: disable=import-outside-toplevel

        return CiscoNxosSSH

    @staticmethod
    def file_transfer_class():
        """netmiko's SCP transfer for NX-OS (put to 'bootflash:'; the switch needs 'feature scp-server')."""
        from netmiko.cisco.cisco_nxos import CiscoNxosFileTransfer  # pylint: disable=import-outside-toplevel

        return CiscoNxosFileTransfer

    # -- pure ------------------------------------------------------------
    @staticmethod
    def render(plan: dict) -> list[str]:
        return render_plan(plan)

    @staticmethod
    def parse(running: str) -> dict:
        """The lossless-QoS part of an NX-OS running config: the qos-group each DSCP is classified into
        by each port's input policy, the queues of its output queuing policy (its own, or the system's),
        the no-drop CoS of the system network-qos policy, the watchdog globals. ValueError naming nxos."""
        return parse_config(running)

    @staticmethod
    def missing_lines(lines: list[str], running: str) -> list[str]:
        """The rendered lines ``running`` does not carry, each as 'context > ... > line' (by meaning:
        a 'match dscp' list as its code points, thresholds in bytes)."""
        return missing(lines, running)

    @staticmethod
    def target_config(before_text: str, lines: list[str]) -> str:
        """Pure: the whole configuration configure replace is given (see ``target``)."""
        return target(before_text, lines)

    # -- plumbing --------------------------------------------------------
    def _error(self, message: str, state: str, **kwargs: Any) -> _base.DeviceError:
        return _base.DeviceError(self.device, message, state=state, **kwargs)

    def _prompt_re(self) -> re.Pattern:
        base = getattr(self.conn, "base_prompt", None) or ""
        if not base:
            raise _Lost("no prompt known for this connection")
        return re.compile(r"^%s(?:\([^)\n]*\))?# ?" % re.escape(base), re.M)

    def _run(self, commands: list[str], state: str | None, what: str, timeout: float | None = None) -> list[str]:
        """Write all commands in one chunk; read until each has returned its prompt; each command's
        output (echo removed). A lost connection or a silent device: DeviceError with ``state``."""
        state = state or self._state
        for command in commands:
            _base.check_cli_line(self.device, command)
        limit = (timeout or self.timeout) + PER_LINE_TIMEOUT * len(commands)
        try:
            # settle, align end: NX-OS can print the prompt before the echo (netmiko CiscoNxosBase.session_preparation).
            reply = _channel.exchange(self.conn, list(commands), self._prompt_re(), limit, settle=True, align="end")
        except _channel.Silent as exc:
            raise self._error("no prompt after %s within %.0f s (read %d of %d prompts)" % (what, limit, exc.answered, exc.expected),
                              state, line=commands[min(exc.answered, len(commands) - 1)], device_said=exc.tail) from None
        except _channel.transport_errors() as exc:
            raise self._error("connection lost while %s: %s" % (what, exc or type(exc).__name__), state, line=commands[-1]) from None
        return [_channel.strip_echo(command, segment).strip("\n") for command, segment in zip(commands, reply.segments)]

    def _checked(self, command: str, what: str, state: str, timeout: float | None = None, success: re.Pattern | None = None) -> str:
        out = self._run([command], state, what, timeout)[0]
        said = rejection(out)
        if said or (success is not None and not success.search(out)):
            raise self._error("%s failed" % what, state, line=command, device_said=said or out or "(no output)")
        return out

    def _files(self, session: str | None = None) -> tuple[str, str]:
        name = session or self.session or ""
        return "bootflash:lf-%s-before.cfg" % name, "bootflash:lf-%s-target.cfg" % name

    def _name(self, session: str | None) -> str:
        name = session or self.session
        if not isinstance(name, str) or not _SESSION_RE.fullmatch(name):
            raise self._error("no session %r to act on (letters, digits, '.', '_', '-')" % (name,), self._state)
        return name

    def _delete(self, files: list[str], state: str, quiet: bool = False) -> None:
        """Delete files on bootflash ('terminal dont-ask': no prompt); a file already gone is not an error."""
        if not files:
            return
        commands = ["delete %s" % name for name in files]
        try:
            outputs = self._run(commands, state, "deleting the session's files")
        except _base.DeviceError:
            if quiet:
                return
            raise
        for command, out in zip(commands, outputs):
            said = rejection(out)
            if said and not re.search(r"No such file", out, re.I) and not quiet:
                raise self._error("deleting a session file failed", state, line=command, device_said=said)

    def _cleanup(self, state: str) -> None:
        """Best effort after a failure: the caller reports the first error."""
        self._delete(list(self._files()), state, quiet=True)

    # -- device ----------------------------------------------------------
    def prepare(self) -> None:
        """'terminal dont-ask': copy and delete ask no confirmation (netmiko did 'terminal length 0' and
        'terminal width 511'; Cisco NX-OS Fundamentals, 'terminal dont-ask')."""
        self._checked("terminal dont-ask", "setting terminal dont-ask", _base.UNCHANGED)

    def gather(self) -> str:
        return self._checked("show running-config", "reading the running config", self._state)

    def _status(self, state: str) -> dict | None:
        out = self._checked("show config-replace status", "reading the configure replace status", state)
        return replace_status(out)

    def open_session(self, name: str) -> None:
        if not isinstance(name, str) or not _SESSION_RE.fullmatch(name):
            raise self._error("session name %r: letters, digits, '.', '_' and '-' only (at most 64)" % (name,), _base.UNCHANGED)
        self.session = name
        self._verified = self._diff = None
        self._timed = False
        pending = self._status(_base.UNCHANGED)
        if pending:
            who = "lf-%s-target.cfg" % pending["session"] if pending["session"] else "a file"
            left = "" if pending["remaining_s"] is None else ", %d s left" % pending["remaining_s"]
            raise self._error("a configure replace is in progress: a commit timer runs for %s%s; refusing to change the switch "
                              "until it is confirmed ('configure replace commit') or has rolled back" % (who, left), _base.UNCHANGED)

    def load(self, lines: list[str]) -> None:
        name = self._name(None)
        for line in lines:
            _base.check_cli_line(self.device, line)
        before_file, target_file = self._files()
        listing = self._checked("dir bootflash:", "listing bootflash:", _base.UNCHANGED)
        stale = sorted({m.group(1) for m in re.finditer(r"(?:^|\s)(lf-%s-[A-Za-z0-9._-]+)\s*$" % re.escape(name), listing, re.M)})
        commands = ["delete bootflash:%s" % f for f in stale] + ["copy running-config %s" % before_file, "show file %s" % before_file]
        outputs = self._run(commands, _base.UNCHANGED, "saving the running config to %s" % before_file)
        for command, out in zip(commands[:-1], outputs[:-1]):
            said = rejection(out)
            if said or (command.startswith("copy ") and not _COPIED.search(out)):
                self._cleanup(_base.UNCHANGED)
                raise self._error("saving the state to roll back to failed", _base.UNCHANGED, line=command, device_said=said or out or "(no output)")
        before = outputs[-1]
        try:
            text = target(before + "\n", lines)
        except ValueError as exc:
            self._cleanup(_base.UNCHANGED)
            raise self._error(str(exc), _base.UNCHANGED, line=commands[-1], device_said=before[:2000]) from None
        local_md5 = self._put(text, target_file)
        commands = ["show file %s md5sum" % target_file, "configure replace %s verify-only" % target_file]
        outputs = self._run(commands, _base.UNCHANGED, "verifying %s" % target_file, timeout=REPLACE_TIMEOUT)
        md5 = _MD5.search(outputs[0])
        if not md5 or md5.group(1) != local_md5:
            self._cleanup(_base.UNCHANGED)
            raise self._error("the file on bootflash is not what was sent (md5 %s)" % local_md5, _base.UNCHANGED, line=commands[0],
                              device_said=outputs[0] or "(no output)")
        out = outputs[1]
        said = rejection(out)
        if said or not _VERIFIED.search(out):
            self._cleanup(_base.UNCHANGED)
            raise self._error("the device rejected the configuration (configure replace verify-only); the running config is as it was",
                              _base.UNCHANGED, line=self._rejected_line(out, lines) or commands[1], device_said=said or out or "(no output)")
        self._verified = out

    @staticmethod
    def _rejected_line(out: str, lines: list[str]) -> str | None:
        """The rendered line configure replace names in 'Syntax error while parsing '<line>'' (or the line itself)."""
        for match in _SYNTAX.finditer(out or ""):
            said = " ".join(match.group(1).split())
            for line in lines:
                if " ".join(line.split()) == said:
                    return line
            return match.group(1)
        return None

    def _put(self, text: str, remote: str) -> str:
        """SCP ``text`` to ``remote`` (bootflash:<name>) from a private temporary file, deleted after; its md5."""
        data = text.encode("utf-8")
        local_md5 = hashlib.md5(data, usedforsecurity=False).hexdigest()
        handle, path = tempfile.mkstemp(prefix="lf-nxos-", suffix=".cfg")  # mode 0600
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            transfer = self.file_transfer_class()(self.conn, source_file=path, dest_file=remote.split(":", 1)[1],
                                                  file_system="bootflash:", direction="put")
            with transfer:
                transfer.transfer_file()
        except (_channel.transport_errors() + (ValueError,)) as exc:
            self._cleanup(_base.UNCHANGED)
            raise self._error("copying the target configuration to %s failed (SCP; the switch needs 'feature scp-server'): %s"
                              % (remote, exc or type(exc).__name__), _base.UNCHANGED, line="scp %s" % remote) from None
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
        return local_md5

    def diff(self) -> str:
        if self._verified is None:
            raise self._error("diff before load", _base.UNCHANGED)
        if self._diff is None:
            before_file, target_file = self._files()
            command = "show diff rollback-patch file %s file %s" % (before_file, target_file)
            out = self._checked(command, "reading the rollback patch", _base.UNCHANGED, timeout=REPLACE_TIMEOUT)
            self._diff = diff_of(out)
        return self._diff

    def abort(self) -> None:
        self._name(None)
        self._delete(list(self._files()), _base.UNCHANGED)
        self._verified = self._diff = None

    def commit(self, confirm_timeout_s: int | None) -> None:
        self._name(None)
        if self._verified is None:
            raise self._error("commit before load", _base.UNCHANGED)
        _before_file, target_file = self._files()
        if confirm_timeout_s is None:
            command, state = "configure replace %s" % target_file, _base.UNKNOWN
        else:
            low, high = COMMIT_TIMEOUT_S
            if not isinstance(confirm_timeout_s, int) or isinstance(confirm_timeout_s, bool) or not low <= confirm_timeout_s <= high:
                raise self._error("commit timeout %r: whole seconds from %d to %d (configure replace commit-timeout)"
                                  % ((confirm_timeout_s,) + COMMIT_TIMEOUT_S), _base.UNCHANGED)
            command, state = "configure replace %s commit-timeout %d" % (target_file, confirm_timeout_s), _base.PENDING
        out = self._run([command], state, "replacing the running config", timeout=REPLACE_TIMEOUT)[0]
        said = rejection(out)
        if said or not _REPLACED.search(out):
            # Cisco: "If there is a failure in the configuration replace, the original configuration is restored".
            restored = re.search(r"Rolling back to previous configuration is successful|original configuration (?:is|was) restored", out, re.I)
            if restored:
                self._cleanup(_base.ROLLED_BACK)
            raise self._error("configure replace failed" + ("; the device restored the configuration it had" if restored else
                              "; the files lf-%s-*.cfg are kept on bootflash" % self.session),
                              _base.ROLLED_BACK if restored else _base.UNKNOWN, line=command, device_said=said or out or "(no output)")
        self._verified = self._diff = None
        if confirm_timeout_s is None:
            self._state = _base.COMMITTED
            self._delete(list(self._files()), _base.COMMITTED)
        else:
            self._state = _base.PENDING
            self._timed = True

    def pending(self) -> dict | None:
        return self._status(self._state if self._state != _base.UNCHANGED else _base.UNKNOWN)

    def _own_timer(self, session: str | None, action: str) -> dict | None:
        """The running commit timer, when it is this session's; None when none runs (DeviceError when another's does)."""
        status = self._status(_base.PENDING if self._timed else _base.UNKNOWN)
        if status and session and status["session"] not in (None, session):
            raise self._error("refusing to %s: the commit timer that runs is for lf-%s-target.cfg, not session %s"
                              % (action, status["session"], session), _base.UNKNOWN)
        return status

    def confirm(self, session: str | None = None) -> None:
        """Confirm the running commit timer (this run's session, ``session``, or - neither known - the one
        the switch shows: NX-OS has one), then delete the session's files."""
        name = self._name(session) if (session or self.session) else None
        status = self._own_timer(name, "confirm")
        if status is None:
            state = _base.ROLLED_BACK if self._timed else _base.UNKNOWN
            self._timed = False
            raise self._error("no configure replace%s is pending confirmation (its commit timer has run out)"
                              % (" of session %s" % name if name else ""), state)
        name = name or status["session"]
        command = "configure replace commit"
        out = self._run([command], _base.PENDING, "confirming the configure replace")[0]
        said = rejection(out)
        if said:
            raise self._error("cannot confirm the configure replace", self._after_failure(), line=command, device_said=said)
        self._timed = False
        self._state = _base.COMMITTED
        if name:
            self._delete(list(self._files(name)), _base.COMMITTED)

    def rollback(self, session: str | None = None) -> None:
        """Replace the running config with this session's before-file now (the session: this run's, ``session``,
        or - neither known - the one the switch's status names)."""
        name = self._name(session) if (session or self.session) else None
        status = self._own_timer(name, "roll back")
        if name is None:
            if not status or not status["session"]:
                raise self._error("no session named and the switch names no lf-<session>-target.cfg pending: nothing to roll back to",
                                  _base.PENDING if status else _base.UNKNOWN)
            name = status["session"]
        if status is None:
            if self._timed:
                self._timed = False
                self._state = _base.ROLLED_BACK
                self._delete(list(self._files(name)), _base.ROLLED_BACK, quiet=True)
                return  # the timer already restored the configuration
            raise self._error("no configure replace of session %s is pending to roll back" % name, _base.UNKNOWN)
        before_file, _target_file = self._files(name)
        # Whether NX-OS takes a second configure replace while the commit timer runs is unverified (Cisco's
        # guide names only 'configure replace commit' for that state); the device's refusal is reported as is.
        command = "configure replace %s" % before_file
        out = self._run([command], _base.PENDING, "rolling back to %s" % before_file, timeout=REPLACE_TIMEOUT)[0]
        said = rejection(out)
        if said or not _REPLACED.search(out):
            raise self._error("cannot roll back to %s" % before_file, self._after_failure(), line=command, device_said=said or out or "(no output)")
        self._timed = False
        self._state = _base.ROLLED_BACK
        self._delete(list(self._files(name)), _base.ROLLED_BACK)

    def _after_failure(self) -> str:
        """Still pending (the timer will restore the configuration) or not any more (unknown which way)."""
        try:
            return _base.PENDING if self._status(_base.UNKNOWN) else _base.UNKNOWN
        except _base.DeviceError:
            return _base.UNKNOWN

    def readback_missing(self, lines: list[str]) -> list[str]:
        running = self.gather()
        try:
            return self.missing_lines(lines, running)
        except ValueError as exc:
            raise self._error(str(exc), self._state, line="show running-config", device_said=running[:2000]) from None

    def save(self) -> None:
        command = "copy running-config startup-config"
        out = self._run([command], _base.COMMITTED, "saving the configuration", timeout=REPLACE_TIMEOUT)[0]
        said = rejection(out)
        if said or not _COPIED.search(out):
            raise self._error("the change is live but was not saved to the startup config", _base.COMMITTED, line=command,
                              device_said=said or out or "(no output)")

    # -- counters and links (read-only): the readers are _nxos_show's -----------------------------
    @staticmethod
    def link_commands(ports: list[str] | None = None) -> list[str]:
        return _nxos_show.link_commands(ports)

    @staticmethod
    def parse_links(outputs: dict[str, str]) -> dict:
        return _nxos_show.parse_links(outputs)

    @staticmethod
    def counter_commands(ports: list[str] | None = None) -> list[str]:
        return _nxos_show.counter_commands(ports)

    @staticmethod
    def parse_counters(outputs: dict[str, str]) -> tuple[dict[str, dict], dict[str, str]]:
        return _nxos_show.parse_counters(outputs)

    def read_counters(self, commands: list[str]) -> dict[str, str]:
        """All commands in one round trip; {command: output} (the readers judge each output)."""
        return dict(zip(commands, self._run(list(commands), _base.UNCHANGED, "reading the counters")))
