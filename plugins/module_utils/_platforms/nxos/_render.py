# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Cisco NX-OS rendering: the plan as the collection's configuration lines (Cisco's RoCEv2 design: the
classification, queuing and network-qos policies, 'system qos', the PFC watchdog globals, the ports).
Pure: no device. The driver (_driver.py) merges these lines into the switch's configuration
(_readers.target) and replaces it; every command and form with its source: docs/vendor-nxos.md.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common._snapshot import natural as _natural
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _vendor as _vendor_nxos

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
# 'weight 0' (no averaging: marking on the instantaneous queue depth): Cisco's own RoCE configuration script
# (paregupt/nx-os nxos_config_roce.py, a Cisco TME's: 'random-detect minimum-threshold 950 kbytes maximum-threshold
# 3000 kbytes drop-probability 7 weight 0 ecn'); NX-OS's range of 'weight' is unverified (_vendor_nxos.ECN_WEIGHT_RANGE).
ECN_WEIGHT = 0
# WRED thresholds are rendered in 'kbytes', the unit of every public Nexus 9000 RoCE configuration (that script,
# ZB, Microsoft's Azure Local reference TOR policy; _vendor_nxos.ECN_THRESHOLD_UNIT). Whether NX-OS's kbyte is 1000
# or 1024 bytes is unverified, so the plan's byte count is rounded up to whole thousands: the threshold the switch
# applies is then at least the plan's under either reading (at most 2.4 % + 1 kB above it). Read back, a threshold
# in kbytes has no byte count (_vendor_nxos.ECN_THRESHOLD_BYTES_PER): the device's own numbers are reported.
ECN_UNIT = _vendor_nxos.ECN_THRESHOLD_UNIT
ECN_BYTES_PER_RENDERED_UNIT = 1000
NETQOS_MTU = _vendor_nxos.NETWORK_QOS_MTU_RANGE
INTERFACE_MTU = _vendor_nxos.MTU_RANGE
# PFC watchdog: 'priority-flow-control watch-dog-interval {on|off}', globally and on each port, as Cisco's own RoCE
# script sets it (paregupt/nx-os nxos_config_roce.py: right after 'conf' and under 'interface <range>' with
# 'priority-flow-control mode on'; the DME's per-interface watchDogInterval on|off; ZB likewise). The watchdog's
# interval and its shutdown / auto-restore multipliers: Cisco's QoS guide names them (QOS-PFC) but no source read
# gives their CLI syntax, so the driver does not render them (issue 31): the switch keeps its own defaults and the
# plan's detection and restoration times are not applied on NX-OS; the record's note says so for every switch
# (_records.NXOS, _vendor_nxos.WATCHDOG_TIMES_NOTE).

_PORT_RE = re.compile(_vendor_nxos.INTERFACE_PATTERN, re.ASCII)
_POLICY_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,40}", re.ASCII)


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


def _ecn_groups(plan: dict, ports: list[str]) -> list[tuple[Any, list[str]]]:
    """The ports grouped by their ECN values (min bytes, max bytes, probability), in port order."""
    groups: dict[Any, list[str]] = {}
    for name in ports:
        ecn = plan["ports"][name].get("ecn")
        if not ecn:
            # mode pfc_only (issue 36): no ECN thresholds; one group of ports without them (key None)
            groups.setdefault(None, []).append(name)
            continue
        key = (ecn["min_threshold_bytes"], ecn["max_threshold_bytes"], ecn["max_probability_percent"])
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in key) or not 1 <= key[0] <= key[1]:
            raise ValueError("nxos: port %s: ECN thresholds %r are not byte counts with minimum <= maximum" % (name, key[:2]))
        _in(key[2], DROP_PROBABILITY, "port %s: ECN drop-probability" % name)
        groups.setdefault(key, []).append(name)
    return list(groups.items())


def _watchdog_word(watchdog: dict) -> str:
    """'on' or 'off' for 'priority-flow-control watch-dog-interval' (the global default is unverified: said explicitly)."""
    if not watchdog.get("enabled"):
        return "off"
    for key, why in _vendor_nxos.watchdog_errors(watchdog.get("detection_time_ms"), watchdog.get("restoration_time_ms"), watchdog.get("action")):
        raise ValueError("nxos: PFC watchdog %s %r has no NX-OS form: %s" % (key, watchdog.get(key), why))
    return "on"


def _kbytes(value: int) -> int:
    """Bytes as whole kbytes, rounded up (ECN_BYTES_PER_RENDERED_UNIT)."""
    return -(-value // ECN_BYTES_PER_RENDERED_UNIT)


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
        why = _vendor_nxos.pfc_priority_error(prio)
        if why:
            # The default class's no-drop form is unverified: refused rather than guessed (the intent refuses it first).
            raise ValueError("nxos: " + why)
    ecn_queue = int(plan["ecn_queue"])
    marks = classes.get(ecn_queue, {}).get("ecn", True)  # False in mode pfc_only
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
    for name, (key, _members) in zip(names, groups):
        lines.append("policy-map type queuing %s" % name)
        for tc in order:
            spec = classes[tc]
            lines.append("  class type queuing %s" % _vendor_nxos.queuing_class(tc))
            if spec["strict"]:
                lines.append("    priority level 1")
                continue
            lines.append("    bandwidth remaining percent %d" % _in(spec["bandwidth_percent"], PERCENT, "traffic class %d: bandwidth remaining percent" % tc))
            if tc == ecn_queue and marks and key is not None:
                low, high, prob = key
                lines.append("    random-detect minimum-threshold %d %s maximum-threshold %d %s drop-probability %d weight %d ecn"
                             % (_kbytes(low), ECN_UNIT, _kbytes(high), ECN_UNIT, prob, ECN_WEIGHT))
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
    # mode ecn_only (issue 36): no PFC priority, so PFC off on every port ('priority-flow-control mode off',
    # _vendor_nxos.PFC_MODES) and no watchdog line at all (the target then keeps no watchdog global of ours)
    watchdog = _watchdog_word(plan["watchdog"]) if pfc else None
    if watchdog:
        lines.append("priority-flow-control watch-dog-interval %s" % watchdog)
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
        lines += ["  mtu %d" % mtu, "  priority-flow-control mode %s" % ("on" if port["pfc_priorities"] else "off")]
        if watchdog:
            lines.append("  priority-flow-control watch-dog-interval %s" % watchdog)
        lines.append("  service-policy type qos input %s" % QOS_POLICY)
        if len(groups) > 1:
            lines.append("  service-policy type queuing output %s" % queuing_of[name])
    for line in lines:
        _base.check_cli_line("nxos render", line)
    return lines
