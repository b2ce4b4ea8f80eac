# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The plan contract: the shape of every per-device plan ``_plan.build_plan`` returns, declared once.

``build_plan(intent, devices)["devices"][host]`` is one of ``SwitchPlan``, ``RoceHostPlan``,
``IbHostPlan`` or ``SubnetManagerPlan`` (docs/intent.md, "The plan"). ``_plan`` builds values of
these types; every consumer that checks a plan it is handed (``_switches/_config.check_plan`` for
switch_config, ``_hosts/_nic.validate_plan`` for nic_qos) reads its key lists from here with
``keys()`` and ``required()`` instead of listing them again, so a key added to a plan is added here
and nowhere else.

Required keys (the class's own, ``total=True``) are those every consumer may rely on: a plan that
was written or edited by hand must have them. Optional keys (``total=False``) are in every plan
``build_plan`` makes where the docstring says so, but a consumer handles their absence: a default
(``kind``, ``platform``: the device's), a derived view it can recompute (``dscp_map_full``), or a
section only one platform has (``junos``, ``eos``, ``sonic``, ``release``, ``traffic_pool``,
``lldp_app_tlv``).

Imports nothing of the collection, only ``typing``: host code (nic_qos on a GPU server) reads it
without carrying the intent, and it needs nothing newer than Python 3.9 (no ``NotRequired``:
required and optional keys are separate classes, and inheritance keeps the declaration order).

Names: ``traffic_classes`` in a switch plan are the switch's queues (egress traffic classes 0-7);
``traffic_class`` in a RoCE host plan is the ToS byte of the host's verbs traffic (``roce_tos`` of
the data DSCP, e.g. 106). The host key keeps its name: it is a documented key of fabric_plan's
result and the name of a nic_qos setting (docs/intent.md, docs/hosts.md).
"""

from __future__ import annotations

from typing import Any, TypedDict


def keys(plan_type: Any) -> tuple[str, ...]:
    """Every key of a plan type, bases first, each in declaration order."""
    return tuple(plan_type.__annotations__)


def required(plan_type: Any) -> tuple[str, ...]:
    """The required keys of a plan type, in declaration order (``__required_keys__`` is a frozenset)."""
    return tuple(key for key in plan_type.__annotations__ if key in plan_type.__required_keys__)


# ---------------------------------------------------------------------------
# Switch
# ---------------------------------------------------------------------------


class _TrafficClassRequired(TypedDict):
    lossless: bool
    ecn: bool
    strict: bool


class TrafficClass(_TrafficClassRequired, total=False):
    """One switch queue (``traffic_classes["3"]``)."""

    bandwidth_percent: int | None  # ETS/DWRR share; None for a strict queue (build_plan sets it)


class Cnp(TypedDict, total=False):
    """Where congestion notification packets go on the switch."""

    dscp: int
    priority: int
    queue: int
    strict: bool


class Watchdog(TypedDict):
    """The PFC watchdog."""

    enabled: bool
    detection_time_ms: int
    restoration_time_ms: int
    action: str  # drop | forward


class _PortEcnRequired(TypedDict):
    min_threshold_bytes: int
    max_threshold_bytes: int


class PortEcn(_PortEcnRequired, total=False):
    """WRED/ECN marking thresholds of a port's RoCE queue."""

    max_probability_percent: int | None


class PortHeadroom(TypedDict, total=False):
    """PFC headroom of one lossless priority on a port (_derive.headroom); all four in every plan."""

    xoff_bytes: int
    xon_bytes: int
    size_bytes: int
    total_bytes: int  # size_bytes x the lossless priorities


# A port's keys in the plan's order: the speed pair, what a driver needs, then the headroom.
class _PortSpeed(TypedDict, total=False):
    speed: str  # "400G"
    speed_gbps: int


class _PortRequired(_PortSpeed):
    cable_length_m: int
    description: str
    pfc_priorities: list[int]  # [] in mode ecn_only


class SwitchPort(_PortRequired, total=False):
    """One switch port in scope (``ports[ifname]``, the platform's canonical interface name).

    ``ecn`` is in every plan but one of mode ``pfc_only`` (no ECN marking); ``headroom`` in every plan with
    PFC priorities (not in mode ``ecn_only``)."""

    ecn: PortEcn
    headroom: PortHeadroom


class _SwitchQosRequired(TypedDict):
    trust: str  # dscp
    dscp_map: dict[str, int]  # "26" -> traffic class; the rest go to default_traffic_class
    default_traffic_class: int
    traffic_classes: dict[str, TrafficClass]  # "0".."7" -> queue
    pfc_priorities: list[int]
    ecn_queue: int
    watchdog: Watchdog
    mtu: int  # the IP MTU
    ports: dict[str, SwitchPort]


class SwitchQos(_SwitchQosRequired, total=False):
    """The QoS model every switch platform renders; ``switch_config`` checks each of these keys value by value."""

    kind: str  # "switch"
    platform: str
    mode: str  # lossless | ecn_only | pfc_only (lossless_fabric.roce.mode); absent: lossless (a plan from before issue 36)
    cnp: Cnp
    queue_buffer_bytes: int | None  # the RoCE queue's buffer, for platforms that set ECN in percent of it


class JunosPlan(TypedDict):
    """What only Junos needs, derived by _plan._junos_plan (docs/vendor-junos.md)."""

    model: str
    scheduling: str
    dcbx: str
    media_mtu: int
    shared_buffer: dict[str, Any]
    default_classes: dict[str, int]
    transmit_percent: dict[str, int]
    group_percent: dict[str, int] | None


class TrafficPool(TypedDict):
    """NVUE's lossless and lossy buffer pools."""

    lossless_pool: str
    lossless_priorities: list[int]
    lossless_memory_percent: int
    lossy_pool: str
    lossy_priorities: list[int]
    lossy_memory_percent: int


class LldpAppTlv(TypedDict):
    """The application-priority TLV NVUE's RoCE mode advertises."""

    udp_port: int
    priority: int


class SwitchPlan(SwitchQos, total=False):
    """A switch's plan: the QoS model plus derived views and per-platform sections.

    ``dscp_map_full`` is in every plan (all 64 code points); the rest only on their platform.
    ``switch_config`` walks these like unknown keys (no unsafe string may reach a CLI).
    """

    dscp_map_full: dict[str, int]
    eos: dict[str, Any]  # EOS: model, asic_family, queue_block
    junos: JunosPlan
    sonic: dict[str, Any]  # SONiC: the buffer model
    release: str  # NVUE: the Cumulus Linux release
    traffic_pool: TrafficPool  # NVUE
    lldp_app_tlv: LldpAppTlv  # NVUE


# ---------------------------------------------------------------------------
# Hosts
# ---------------------------------------------------------------------------


# The host NIC software stacks nic_qos and nic_counters drive (docs/hosts.md): mlx5 with NVIDIA's driver (mlnx) or the
# kernel's (upstream), Broadcom bnxt_en/bnxt_re (bnxt), AMD ionic (ionic). Device data may name one per NIC (nics[].stack).
NIC_STACKS = ("mlnx", "upstream", "bnxt", "ionic")


class _HostNicRequired(TypedDict):
    name: str  # the RDMA device, mlx5_0
    netdev: str | None  # None on InfiniBand when not given
    speed: str
    speed_gbps: int
    guid: str | None
    vfs: int  # SR-IOV VFs to create on the NIC (0: none); issue 37 C1
    vf_guids: list[str]  # InfiniBand: VF i's port GUID ("0x" + 16 hex, lower case); [] on RoCE
    pci: str | None  # the NIC's PCI address (0000:3b:00.0), where the device data gives it; required with vf_guids


class HostNic(_HostNicRequired, total=False):
    """One RDMA NIC of a host (``nics[]``), as the intent normalized it."""

    stack: str  # one of NIC_STACKS, only when the device data names it (else nic_qos detects it from the bound driver)


class Dcqcn(TypedDict):
    enabled: bool
    priorities: list[int]


class HostCnp(TypedDict):
    dscp: int
    priority: int


class NicQos(TypedDict):
    """What nic_qos applies to every NIC of a RoCE host; ``nic_qos`` refuses a plan without one of these keys."""

    trust: str  # dscp
    dscp_map: dict[str, int]  # "26" -> priority; the rest go to default_priority
    default_priority: int
    pfc_priorities: list[int]
    dcqcn: Dcqcn
    cnp: HostCnp
    rdma_cm_tos: int
    traffic_class: int  # the verbs ToS byte (roce_tos of the data DSCP), not a switch queue
    roce_mode: str  # "RoCE v2"
    mtu: int
    nics: list[HostNic]


class _RoceHostRequired(NicQos):
    kind: str  # "host"
    transport: str  # "roce"
    pfc_bitmap: str  # mlnx_qos --pfc, priority 0 first: "0,0,0,1,0,0,0,0" ("0,0,0,0,0,0,0,0" in mode ecn_only)
    gpus: int


class RoceHostPlan(_RoceHostRequired, total=False):
    """A RoCE host's plan (``kind`` host, ``transport`` roce). ``mode`` is in every plan build_plan makes;
    a plan without it (written before issue 36) reads as ``lossless``: ``plan.get("mode", "lossless")``."""

    mode: str  # lossless | ecn_only (pfc_priorities [], pfc_bitmap all 0) | pfc_only (dcqcn.enabled false)


class IbHostPlan(TypedDict):
    """An InfiniBand host's plan (``kind`` host, ``transport`` infiniband)."""

    kind: str
    transport: str
    service_level: int | None
    partition: str
    pkey: str | None  # "0x8001"
    gpus: int
    nics: list[HostNic]


# ---------------------------------------------------------------------------
# Subnet manager
# ---------------------------------------------------------------------------


class SubnetManagerPlan(TypedDict):
    """An OpenSM host's plan: the opensm.conf keys lossless.fabric owns and the three policy files."""

    kind: str  # "subnet_manager"
    role: str  # master | standby
    sm_priority: int
    opensm_conf: dict[str, str]
    partitions_conf: str
    qos_policy_conf: str
    root_guids_conf: str


def roce_priority(plan: NicQos) -> int:
    """The RoCE data priority of a host plan: the priority its dscp_map gives the data DSCP, whose ToS byte is the
    plan's traffic_class (DSCP = ToS >> 2). One derivation for the NIC stacks and the counter evidence."""
    return int(plan["dscp_map"][str(int(plan["traffic_class"]) >> 2)])
