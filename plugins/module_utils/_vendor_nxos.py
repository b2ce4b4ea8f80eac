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

What no source here confirms is marked "unverified" (and listed in docs/vendor-nxos.md).
"""

from __future__ import annotations

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


def _check_group(qos_group: int) -> None:
    if isinstance(qos_group, bool) or not isinstance(qos_group, int) or not QOS_GROUP_RANGE[0] <= qos_group <= QOS_GROUP_RANGE[1]:
        raise ValueError("nxos: qos-group %r is not in %d-%d" % (qos_group, QOS_GROUP_RANGE[0], QOS_GROUP_RANGE[1]))


# WRED/ECN thresholds: the published RoCE configuration [ZB] gives them in 'kbytes'
# ('random-detect minimum-threshold <x> kbytes maximum-threshold <y> kbytes drop-probability <p> weight <w> ecn').
# unverified: the other units the CLI takes (bytes, mbytes?), the thresholds' range, the range of
# 'drop-probability' and of 'weight' (the published configuration uses weight 7; NXOS.md's 'weight 0'
# is not in any source read here).
ECN_THRESHOLD_UNIT = "kbytes"
ECN_THRESHOLD_BYTES_PER_UNIT = None  # unverified: whether an NX-OS kbyte is 1024 or 1000 bytes (no source read says)
ECN_THRESHOLD_RANGE = None  # unverified
ECN_DROP_PROBABILITY_RANGE = None  # unverified
ECN_WEIGHT_RANGE = None  # unverified

# ECN starting values per speed: Cisco publishes none that was found (the AI/ML blueprint white paper's
# configuration could not be read past its table of contents here): the record keeps ecn_defaults None,
# the collection's derived rule (docs/vendor-nxos.md, "ECN starting values").
ECN_DEFAULTS = None

# PFC watchdog. [DME] per-interface 'priority-flow-control watch-dog interval on|off' and its
# interface multiplier 0..40; [ZB] the global and interface form 'priority-flow-control watch-dog-interval on'.
# unverified: the global 'watch-dog interval <ms>' range, 'shutdown-multiplier' and 'auto-restore
# multiplier' ranges (the QoS guide's PFC chapter could not be read past its overview here).
WATCHDOG_INTERVAL_WORDS = ("on", "off")
WATCHDOG_INTERFACE_MULTIPLIER_RANGE = (0, 40)
WATCHDOG_INTERVAL_MS_RANGE = None  # unverified
WATCHDOG_SHUTDOWN_MULTIPLIER_RANGE = None  # unverified
WATCHDOG_AUTO_RESTORE_MULTIPLIER_RANGE = None  # unverified

# 'priority-flow-control mode {auto | on | off}' (Cisco NX-API REST SDK guide 9.3(x), "Configuring
# Priority Flow Control"): the modes the interface takes.
PFC_MODES = ("auto", "on", "off")

# [CR] 'configure replace <file> commit-timeout <s>': documented in the Nexus 9000 System Management
# guide from its 7.x edition (best-effort, not commit-timeout, is the 9.3(1) addition). The range
# 30-3600 s is [CR7K]'s (Nexus 7000); for the Nexus 9000 it is unverified.
COMMIT_TIMEOUT_S_RANGE = (30, 3600)
COMMIT_TIMEOUT_RANGE_VERIFIED_ON_N9K = False

# 'show interface status' Status words: the ones ntc-templates' cisco_nxos_show_interface_status.textfsm
# accepts (connected|notconnec|down|disabled|sfpAbsent|xcvrAbsen|channelDo|noOperMem, read from its
# captures) and genieparser's ShowInterfaceStatus golden6 ('linkFlapE'). 'connected' is the only one that
# means the link is up; a word not listed here gives oper None (not known), never a guess.
STATUS_UP = ("connected",)
STATUS_DOWN = ("notconnec", "disabled", "down", "sfpAbsent", "xcvrAbsen", "channelDo", "noOperMem", "linkFlapE")
