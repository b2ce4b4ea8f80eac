# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Cisco NX-OS (Nexus 9000 cloud-scale) vendor data: pure tables, each with its source.

docs/vendor-nxos.md lists every source with its URL. The ones used here:

- [DME] CiscoDevNet/terraform-provider-nxos ``gen/definitions/*.yaml`` (commit 43d0c254eb41), Cisco's
  own description of the NX-OS DME objects the CLI writes, with their value ranges:
  ``physical_interface.yaml`` (l1PhysIf ``mtu`` 576..9216; ipqosPriorFlowCtrlWd ``interfaceMutiplier``
  0..40, ``watchDogInterval`` on|off), ``network_qos.yaml`` (ipqosSetMTU 576..9216, ipqosPause
  ``pfcCos0..7``), ``default_qos.yaml`` (ipqosSetQoSGrp 0..7, ipqosDscp), ``queuing_qos.yaml``
  (ipqosPriority ``level`` 1..8, ipqosSetRemBW 0..100).
- [ZB] zartbot, "RoCEv2 AllReduce" (2021-08-24): the published QoS configuration of a Nexus 93180FX2
  running RoCEv2 (system classes ``c-out-8q-q1``..``q7``, ``c-out-8q-q-default``, ``c-8q-nq5``;
  ``random-detect minimum-threshold 400 kbytes maximum-threshold 800 kbytes drop-probability 5 weight 7 ecn``;
  ``priority-flow-control watch-dog-interval on``) and its show outputs (fixtures/nxos/SOURCES.md).
- [CR] Cisco Nexus 9000 System Management Configuration Guide, "Performing Configuration Replace"
  (7.x, 9.2x, 10.1x, 10.2x editions): configure replace with commit-timeout; best-effort from 9.3(1).
  [CR7K] Nexus 7000 Fundamentals guide, "Configure Replace": "The timer value range is between 30-3600 seconds".
- [NDFC] Cisco's Nexus Dashboard Fabric Controller fabric setting ``PFC_WATCH_INT`` (CiscoDevNet terraform
  provider ``ndfc`` 0.2.0, resource ``fabric_vxlan_evpn``, attribute ``pfc_watch_int``): "Priority flow control
  watch-dog interval - Acceptable values from 101 to 1000 (milliseconds). Leave blank for system default (100ms)."
  A fabric controller's setting, not the switch CLI's own range.
- [QOS-PFC] Nexus 9000 QoS guide 10.5(x), "Configuring Priority Flow Control" (its overview and watchdog workflow only).
- [TME] paregupt/nx-os ``nxos_config_roce.py`` (commit ad8128f3; the same text in apply_config() at 213eea35): a Cisco technical marketing engineer's public
  RoCE configuration script for Nexus 9000 (WRED in kbytes with weight 0 and ecn, line 125; 'priority-flow-control
  watch-dog-interval on' globally, line 94, and under the interfaces with 'priority-flow-control mode on', line 152).
- [AZL] Azure/AzureLocal-Supportability (commit 2f67159f), ``TSG/Networking/Top-Of-Rack-Switch/Reference-TOR-QOS-Policy-
  Configuration.md`` and ``Troubleshoot-TOR-Connectivity-Issues.md``: Microsoft's reference NX-OS TOR configuration
  ('random-detect ... kbytes ... weight 0 ecn', 'priority-flow-control mode on send-tlv',
  'service-policy type qos input AZS_SERVICES no-stats'). A third party's configuration, not Cisco's documentation.

What no source here confirms is marked "unverified" (and listed in docs/vendor-nxos.md); the few such values
the driver still needs (an assumption it must make to read a configuration back) are named in UNVERIFIED.
"""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base

PLATFORM = "nxos"

# Physical interfaces the plan's ports may name: Ethernet<slot>/<port>[/<breakout>] (the record's
# pattern, _platforms/_records.py; NX-OS prints 'Ethernet1/1' in configuration and 'Eth1/1' in
# 'show interface status' / LLDP 'Local Port id': fixtures/nxos).
INTERFACE_PATTERN = r"Ethernet[0-9]+/[0-9]+(/[0-9]+)?"
INTERFACE_EXAMPLE = "Ethernet1/1"
# The abbreviation the show commands print for Ethernet interfaces (fixtures/nxos: 'Eth1/1', 'Eth101/1/10').
ETHERNET_ABBREVIATIONS = ("Eth",)

# [DME] l1PhysIf mtu: min_int 576, max_int 9216 ('Administrative port mtu'). The Interfaces guide's CLI
# range ('mtu <576-9216>') was not read here: unverified beyond the DME model.
MTU_RANGE = (576, 9216)
MAX_MTU = MTU_RANGE[1]
# [DME] ipqosSetMTU (network-qos class 'mtu'): 576..9216.
NETWORK_QOS_MTU_RANGE = (576, 9216)

# [DME] ipqosSetQoSGrp: qos-group 0..7 (8 qos-groups: the 8q system classes of cloud-scale).
QOS_GROUP_RANGE = (0, 7)
# [DME] ipqosPause pfcCos0..pfcCos7: 'pause pfc-cos <0-7>'.
PFC_COS_RANGE = (0, 7)
# [DME] ipqosPriority level 1..8; ipqosSetRemBW 'bandwidth remaining percent' 0..100.
PRIORITY_LEVEL_RANGE = (1, 8)
BANDWIDTH_REMAINING_PERCENT_RANGE = (0, 100)

# System queuing / network-qos classes of the 8-queue mode [ZB]: qos-group N (1..7) is
# c-out-8q-qN / c-8q-nqN; qos-group 0 is the default class, c-out-8q-q-default / c-8q-nq-default
# (the published configuration names no 'c-out-8q-q0'; Cisco's own list of system classes was not
# read here: unverified, see docs/vendor-nxos.md Corrections).
QUEUING_CLASS_DEFAULT = "c-out-8q-q-default"
NETWORK_QOS_CLASS_DEFAULT = "c-8q-nq-default"


def queuing_class(qos_group: int) -> str:
    """The system egress queuing class of a qos-group in 8q mode (c-out-8q-q<N>, group 0: c-out-8q-q-default)."""
    _check_group(qos_group)
    return QUEUING_CLASS_DEFAULT if qos_group == 0 else "c-out-8q-q%d" % qos_group


def network_qos_class(qos_group: int) -> str:
    """The system network-qos class of a qos-group in 8q mode (c-8q-nq<N>, group 0: c-8q-nq-default)."""
    _check_group(qos_group)
    return NETWORK_QOS_CLASS_DEFAULT if qos_group == 0 else "c-8q-nq%d" % qos_group


def _class_group(name: str, prefix: str, default: str) -> int | None:
    if name == default:
        return 0
    digit = name[len(prefix):] if name.startswith(prefix) else ""
    return int(digit) if digit in ("1", "2", "3", "4", "5", "6", "7") else None


def queuing_class_group(name: str) -> int | None:
    """The qos-group of a system queuing class name (queuing_class's inverse); None for any other name."""
    return _class_group(name, "c-out-8q-q", QUEUING_CLASS_DEFAULT)


def network_qos_class_group(name: str) -> int | None:
    """The qos-group of a system network-qos class name (network_qos_class's inverse); None for any other name."""
    return _class_group(name, "c-8q-nq", NETWORK_QOS_CLASS_DEFAULT)


def _check_group(qos_group: int) -> None:
    if isinstance(qos_group, bool) or not isinstance(qos_group, int) or not QOS_GROUP_RANGE[0] <= qos_group <= QOS_GROUP_RANGE[1]:
        raise ValueError("nxos: qos-group %r is not in %d-%d" % (qos_group, QOS_GROUP_RANGE[0], QOS_GROUP_RANGE[1]))


# DSCP: the 6-bit code point, 0..63 (RFC 2474); 'match dscp' takes values and names [ZB: 'match dscp 26'].
DSCP_RANGE = (0, 63)
# The names of the standard code points (RFC 2474 class selectors and 'default', RFC 2597 AFxy, RFC 3246 EF).
# unverified: which of them NX-OS takes in 'match dscp' and which 'show running-config' prints as a name
# rather than a number (a reader takes both).
DSCP_NAMES = {"default": 0, "ef": 46, **{"cs%d" % n: 8 * n for n in range(8)},
              **{"af%d%d" % (c, d): 8 * c + 2 * d for c in range(1, 5) for d in range(1, 4)}}

# WRED/ECN thresholds: every public Nexus 9000 RoCE configuration gives them in 'kbytes': [ZB]
# ('random-detect minimum-threshold 400 kbytes maximum-threshold 800 kbytes drop-probability 5 weight 7 ecn'),
# [TME] Cisco's own RoCE script (paregupt/nx-os nxos_config_roce.py at ad8128f3, line 125: '... 950 kbytes
# maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn'), [AZL] Microsoft's Azure Local reference TOR QoS
# policy (Azure/AzureLocal-Supportability Reference-TOR-QOS-Policy-Configuration.md: '... 300 kbytes ... weight 0 ecn').
# unverified: the other units the CLI takes (bytes, mbytes?), the thresholds' range, the range of
# 'drop-probability' and of 'weight'.
ECN_THRESHOLD_UNIT = "kbytes"
ECN_THRESHOLD_BYTES_PER_UNIT = None  # unverified: whether an NX-OS kbyte is 1024 or 1000 bytes (no source read says)
# The threshold unit words a reader accepts: 'kbytes' [ZB, TME, AZL]; 'packets', 'bytes', 'mbytes' as NXOS.md recalls
# the QoS guide's random-detect syntax (unverified: not in any stored copy read here).
ECN_THRESHOLD_UNITS = ("packets", "bytes", "kbytes", "mbytes")
# Bytes per unit where the unit's name says it and nothing else can: 'bytes'. kbytes/mbytes: unverified (1000 or
# 1024), so a threshold in them has no byte count; packets have none.
ECN_THRESHOLD_BYTES_PER = {"bytes": 1}
ECN_THRESHOLD_RANGE = None  # unverified
ECN_DROP_PROBABILITY_RANGE = None  # unverified
ECN_WEIGHT_RANGE = None  # unverified

# ECN starting values per speed: Cisco publishes none that was found (the AI/ML blueprint white paper's
# configuration could not be read past its table of contents here): the record keeps ecn_defaults None,
# the collection's derived rule (docs/vendor-nxos.md, "ECN starting values").
ECN_DEFAULTS = None

# PFC watchdog. [DME] per-interface 'priority-flow-control watch-dog-interval on|off' (ipqosPriorFlowCtrlWd
# watchDogInterval) and its interface multiplier 0..40; [TME] and [ZB] the global and interface form
# 'priority-flow-control watch-dog-interval on'. [QOS-PFC] names a watchdog interval, a shutdown multiplier, an auto
# and a fixed restore multiplier and a 100 ms poll timer, but its command table was not read: no source gives the
# CLI syntax of the interval or the multipliers (the 'priority-flow-control watch-dog interval <ms>' and
# 'priority-flow-control auto-restore multiplier <n>' lines the driver rendered before issue 31 were NXOS.md's
# recollection; a search of the code index finds neither anywhere). The driver sets only on/off and the switch keeps
# its own interval and multipliers.
WATCHDOG_INTERVAL_WORDS = ("on", "off")
WATCHDOG_INTERFACE_MULTIPLIER_RANGE = (0, 40)
WATCHDOG_INTERVAL_MS_RANGE = None  # unverified: the CLI's own range (not NDFC's, below)
# [NDFC] the fabric controller's 'PFC_WATCH_INT' takes 101..1000 ms; left blank the switch keeps its system
# default, 100 ms. The only Cisco numbers found for the interval: a controller's bounds, not the CLI's.
NDFC_PFC_WATCH_INT_MS_RANGE = (101, 1000)
WATCHDOG_INTERVAL_DEFAULT_MS = 100  # [NDFC] "system default (100ms)"
# What every NX-OS switch's plan is told (the record's note, _records.NXOS): the plan's watchdog times are not applied.
WATCHDOG_TIMES_NOTE = (
    "{host}: platform nxos: the PFC watchdog is switched on or off only ('priority-flow-control watch-dog-interval'); "
    "roce.pfc.watchdog.detection_time_ms and restoration_time_ms are not applied: no Cisco source read gives the CLI "
    "syntax of the watchdog interval and multipliers, so the switch keeps its own (unverified: NDFC names a 100 ms default interval)"
)
# [QOS-PFC] "When this time period is exceeded, all outgoing packets are dropped": the watchdog's one action.
WATCHDOG_ACTIONS = ("drop",)


def watchdog_errors(detection_ms: int, restoration_ms: int, action: str) -> list[tuple[str, str]]:  # noqa: ARG001 - times not rendered
    """The intent's watchdog against NX-OS: (key under roce.pfc.watchdog, why) per value NX-OS cannot take. The times are
    not rendered (no sourced syntax: the record's warning says so), so only the action is checked; the intent checks it
    before any device (_intent/_devices.py) and the renderer refuses by the same rule."""
    if action not in WATCHDOG_ACTIONS:
        return [("action", "the NX-OS watchdog only drops (%s)" % ", ".join(WATCHDOG_ACTIONS))]
    return []


# The plan's default traffic class is qos-group 0, NX-OS's class-default ("By default, all network traffic is
# grouped into ... qos-group 0"); a no-drop (PFC) form of the default class is unverified, so it is refused.
DEFAULT_QOS_GROUP = 0


def pfc_priority_error(priority: int) -> str | None:
    """Why NX-OS cannot take ``priority`` as a PFC (lossless) priority, or None."""
    if priority == DEFAULT_QOS_GROUP:
        return ("PFC priority %d is the default class (qos-group %d, c-8q-nq-default): a lossless default class is not rendered "
                "(unverified)" % (priority, DEFAULT_QOS_GROUP))
    return None


def roce_errors(roce: dict) -> list[tuple[str, object, str]]:
    """The record's intent rule (_base.Platform.roce_errors): the watchdog action and the PFC priorities NX-OS has no form for."""
    out = _base.watchdog_intent_errors(roce, watchdog_errors)
    priorities = ((roce if isinstance(roce, dict) else {}).get("pfc") or {}).get("priorities")
    for prio in priorities if isinstance(priorities, list) else []:
        why = pfc_priority_error(prio) if isinstance(prio, int) else None
        if why:
            out.append(("pfc.priorities", priorities, why))
    return out


# 'priority-flow-control mode {auto | on | off}' (Cisco NX-API REST SDK guide 9.3(x), "Configuring
# Priority Flow Control"): the modes the interface takes.
PFC_MODES = ("auto", "on", "off")

# [CR] 'configure replace <file> commit-timeout <s>': documented in the Nexus 9000 System Management
# guide from its 7.x edition (best-effort, not commit-timeout, is the 9.3(1) addition). The range
# 30-3600 s is [CR7K]'s (Nexus 7000); for the Nexus 9000 it is unverified.
COMMIT_TIMEOUT_S_RANGE = (30, 3600)
COMMIT_TIMEOUT_RANGE_VERIFIED_ON_N9K = False

# The values above that no source read states but the driver needs: listed so that no reader takes them for
# sourced ones (tests/unit/plugins/module_utils/_platforms/test_vendor_nxos.py keeps the list honest).
UNVERIFIED = frozenset({
    "ECN_THRESHOLD_UNITS",  # all but 'kbytes'
})

# 'show interface status' Status words: the ones ntc-templates' cisco_nxos_show_interface_status.textfsm
# accepts (connected|notconnec|down|disabled|sfpAbsent|xcvrAbsen|channelDo|noOperMem, read from its
# captures) and genieparser's ShowInterfaceStatus golden6 ('linkFlapE'). 'connected' is the only one that
# means the link is up; a word not listed here gives oper None (not known), never a guess.
STATUS_UP = ("connected",)
STATUS_DOWN = ("notconnec", "disabled", "down", "sfpAbsent", "xcvrAbsen", "channelDo", "noOperMem", "linkFlapE")

# lossless_fabric.roce.mode (issue 36) -> the source that NX-OS runs it; _records.NXOS.roce_modes (docs/vendor-nxos.md, "Fabric modes").
ROCE_MODES = {
    "lossless": "Cisco Nexus 9000 QoS guide, 'Configuring Priority Flow Control' and 'Configuring Queuing and Scheduling' (WRED ECN)",
    "ecn_only": "Cisco NX-API REST SDK guide, 'Configuring Priority Flow Control' ('priority-flow-control mode {auto | on | off}', "
                "PFC_MODES) with the queuing class's 'random-detect ... ecn'",
    "pfc_only": "Cisco Nexus 9000 QoS guide: 'pause pfc-cos' in the network-qos class and a queuing class without random-detect",
}
