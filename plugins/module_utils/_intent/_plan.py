# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The entry points (validate, build_plan) and every per-device plan derived from the normalized intent.

Each plan is a value of its type in _contract.py (SwitchPlan, RoceHostPlan, IbHostPlan, SubnetManagerPlan),
the one declaration of its keys that consumers read.
"""

from __future__ import annotations

import copy
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._ib._opensm import (
    DEFAULT_PKEY,
    IB_MTU_CODES,
    OPENSM_PARTITIONS_FILE,
    OPENSM_QOS_POLICY_FILE,
    OPENSM_ROOT_GUID_FILE,
    PARTITIONS_LINE_MAX,
)
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _design, _schema, _tenants, _topology
from ansible_collections.lossless.fabric.plugins.module_utils._intent._checks import Ctx, _ok, key_repr, type_name
from ansible_collections.lossless.fabric.plugins.module_utils._intent._contract import (
    HostNic,
    IbHostPlan,
    JunosPlan,
    RoceHostPlan,
    SubnetManagerPlan,
    SwitchPlan,
)
from ansible_collections.lossless.fabric.plugins.module_utils._intent._derive import _is_int, headroom, roce_tos
from ansible_collections.lossless.fabric.plugins.module_utils._intent._devices import _normalize_device, check_vf_guids
from ansible_collections.lossless.fabric.plugins.module_utils._intent._infiniband import _compute_sl, _ib_section
from ansible_collections.lossless.fabric.plugins.module_utils._intent._kubernetes import _kubernetes_derive, _kubernetes_section
from ansible_collections.lossless.fabric.plugins.module_utils._intent._roce import _port_ecn, _roce_section
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import (
    BAD,
    L2_OVERHEAD_BYTES,
    TRANSPORTS,
    IntentError,
    platforms,
)
from ansible_collections.lossless.fabric.plugins.module_utils._intent._targets import _targets_section, launch_hardware, resolve_auto
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _vendor as _vendor_junos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _vendor as _vendor_nvue
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _vendor as _vendor_nxos

_TOP_KEYS = ("name", "transport", "roce", "infiniband", "targets", "kubernetes", "topology", "tenants")


def _normalize_intent(ctx: Ctx, intent: Any) -> dict:
    path = "lossless_fabric"
    if intent is None:
        ctx.error(path, "required (the fabric intent is not defined)")
        return {"name": BAD, "transport": BAD}
    src = ctx.mapping(intent, path, _TOP_KEYS, required=("name", "transport"))
    out: dict[str, Any] = {}
    out["name"] = ctx.name(src["name"], f"{path}.name") if src.get("name") is not None else BAD
    transport = src.get("transport")
    if transport is not None:
        transport = _schema.value(ctx, src, "transport", path)
    else:
        transport = BAD
    out["transport"] = transport
    for section in TRANSPORTS:
        if src.get(section) is not None and transport in TRANSPORTS and section != transport:
            ctx.error(f"{path}.{section}", f"present but transport is {transport!r} (remove the section)")
    if transport == "roce" or (transport is BAD and src.get("roce") is not None):
        out["roce"] = _roce_section(ctx, src.get("roce"), f"{path}.roce")
    if transport == "infiniband" or (transport is BAD and src.get("infiniband") is not None):
        out["infiniband"] = _ib_section(ctx, src.get("infiniband"), f"{path}.infiniband", _tenants.partition_names(src.get("tenants")))
    out["targets"] = _targets_section(ctx, src.get("targets"), f"{path}.targets", transport)
    if src.get("kubernetes") is not None:
        out["kubernetes"] = _kubernetes_section(ctx, src["kubernetes"], f"{path}.kubernetes", transport, out.get("roce"))
    return out


# ---------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------


def _normalize(intent: Any, devices: Any, groups: dict | None = None) -> tuple[dict, dict, Ctx]:
    ctx = Ctx()
    norm = _normalize_intent(ctx, intent)
    norm_devices: dict[str, Any] = {}
    if devices is None:
        devices = {}
    if not isinstance(devices, dict):
        ctx.error("devices", f"{type_name(devices)} is not a mapping of inventory host to lossless_fabric_device")
        devices = {}
    _fabric_mtu_default(ctx, intent, norm, devices)
    for host in sorted(devices, key=str):
        raw = devices[host]
        if raw is None:
            continue  # a host without lossless_fabric_device is not ours
        ctx.prefix = f"{key_repr(str(host))}: "
        device = _normalize_device(ctx, raw, norm)
        norm_devices[str(host)] = device
        if _ok(device) and device["kind"] == "switch":
            _platform_notes(ctx, str(host), device, norm)
    ctx.prefix = ""
    check_vf_guids(ctx, norm_devices)  # across hosts: a VF GUID unique in the fabric, never a NIC's port GUID
    if isinstance(intent, dict) and intent.get("tenants") is not None:
        # After the devices: a tenant's hosts are inventory hosts, its partition's members their NICs' GUIDs.
        norm["tenants"] = _tenants.tenants_section(ctx, intent["tenants"], norm, norm_devices, groups)
    ctx.cabling = _topology.check(ctx, intent, devices, norm, norm_devices)  # type: ignore[attr-defined]
    hardware = launch_hardware(norm_devices)
    if "targets" in norm and (hardware is not None or all(_ok(d) for d in norm_devices.values())):
        # min_busbw: auto from the hosts' NICs (issue 34); a host that failed validation is reported on its own
        resolve_auto(ctx, norm["targets"], hardware)
    if "kubernetes" in norm:
        _kubernetes_derive(ctx, norm, norm_devices)
    if norm.get("transport") == "infiniband":
        roles = [d["role"] for d in norm_devices.values() if _ok(d) and d["kind"] == "subnet_manager"]
        if not roles and not any(not _ok(d) for d in norm_devices.values()):
            ctx.warn("devices", "no device of kind subnet_manager: no OpenSM configuration will be planned")
        if roles.count("master") > 1:
            ctx.warn("devices", f"{roles.count('master')} subnet managers with role master share one priority: the election falls back to the lowest port GUID")
    return norm, norm_devices, ctx


def _fabric_mtu_default(ctx: Ctx, intent: Any, norm: dict, devices: dict) -> None:
    """mtu.switch is the IP MTU on every platform (EOS 'mtu' and the NVUE/Linux link MTU count
    the IP packet; Junos' media MTU adds the Ethernet header). Left unset, it is 9214 unless a
    Junos switch is in scope: then 9202 (the largest IP MTU a QFX takes) for every switch, so
    the fabric keeps one IP MTU. Given, it is kept and checked per platform."""
    raw_roce = intent.get("roce") if isinstance(intent, dict) else None
    raw_mtu = raw_roce.get("mtu") if isinstance(raw_roce, dict) else None
    if isinstance(raw_mtu, dict) and raw_mtu.get("switch") is not None:
        return
    mtu = (norm.get("roce") or {}).get("mtu")
    junos = any(isinstance(d, dict) and d.get("kind") == "switch" and d.get("platform") == "junos" for d in devices.values())
    if not junos or not isinstance(mtu, dict) or not _is_int(mtu.get("switch")) or mtu["switch"] <= _vendor_junos.MAX_IP_MTU:
        return
    mtu["switch"] = _vendor_junos.MAX_IP_MTU
    if _is_int(mtu.get("host")) and mtu["host"] > mtu["switch"] - L2_OVERHEAD_BYTES:
        ctx.error(
            "lossless_fabric.roce.mtu.host",
            f"{mtu['host']!r} exceeds mtu.switch {mtu['switch']} (the default with a Junos switch in scope)"
            f" - {L2_OVERHEAD_BYTES} = {mtu['switch'] - L2_OVERHEAD_BYTES}",
        )


def _platform_notes(ctx: Ctx, host: str, device: dict, intent: dict) -> None:
    roce = intent.get("roce")
    if not roce or not _ok(roce["data"]["dscp"], roce["data"]["priority"]):
        return
    for note in platforms()[device["platform"]].notes:
        if note == _vendor_nxos.WATCHDOG_TIMES_NOTE and roce.get("mode") == _schema.ECN_ONLY:
            continue  # mode ecn_only renders no watchdog: its times are not applied anywhere (issue 36)
        ctx.warnings.append(note.format(host=host, dscp=roce["data"]["dscp"], priority=roce["data"]["priority"]))


def validate(intent: Any, devices: Any, groups: dict | None = None) -> tuple[list[str], list[str]]:
    """Validate the intent and every device description; return ``(errors, warnings)``.

    Every problem is reported, each naming its full key path and value;
    device problems start with the inventory host name. ``groups`` (inventory group -> hosts)
    resolves a tenant's ``host_group``.
    """
    _norm, _devices, ctx = _normalize(intent, devices, groups)
    return list(ctx.errors), list(ctx.warnings)


def build_plan(intent: Any, devices: Any, groups: dict | None = None) -> dict[str, Any]:
    """Validate, then derive everything each device and benchmark needs.

    Raises ``IntentError`` with every error, the design check's included (_design.check).
    Returns ``{'intent', 'devices', 'tenants', 'nccl_env', 'cabling', 'warnings', 'design', 'summary'}``;
    see docs/intent.md for each shape. ``groups`` (inventory group -> hosts) resolves a tenant's ``host_group``.
    """
    norm, norm_devices, ctx = _normalize(intent, devices, groups)
    if ctx.errors:
        raise IntentError(ctx.errors)
    plans: dict[str, Any] = {}
    for host, device in norm_devices.items():
        if device["kind"] == "switch":
            plans[host] = _switch_plan(norm, device)
        elif device["kind"] == "host":
            plans[host] = _roce_host_plan(norm, device) if norm["transport"] == "roce" else _ib_host_plan(norm, device, host)
        else:
            plans[host] = _sm_plan(norm, device)
    result = {
        "intent": norm,
        "devices": plans,
        # Tenants sharing the fabric (docs/tenants.md): {name: {hosts, namespace, kubeconfig, vlan, partition, qos_level}}.
        "tenants": _tenants.plan(norm),
        "nccl_env": _nccl_env(norm, norm_devices),
        "cabling": _topology.plan(ctx.cabling, norm_devices),  # type: ignore[attr-defined]
        "warnings": list(ctx.warnings),
    }
    # The design check (issue 34): the derived plan read back as a lossless design; every violation at once.
    design = _design.check(result)
    if design["errors"]:
        raise IntentError(design["errors"])
    result["warnings"] += design["warnings"]
    result["design"] = design["rules"]
    result["summary"] = _summary(norm, norm_devices, plans, result["warnings"])
    return result


# ---------------------------------------------------------------------------
# Plans
# ---------------------------------------------------------------------------


def _dscp_map(roce: dict) -> dict[str, int]:
    """Reference 7.3: data DSCP -> data priority, CNP DSCP -> CNP priority, the rest -> 0."""
    pairs = sorted(((roce["data"]["dscp"], roce["data"]["priority"]), (roce["cnp"]["dscp"], roce["cnp"]["priority"])))
    return {str(dscp): prio for dscp, prio in pairs}


def _dscp_map_full(roce: dict, default_tc: int) -> dict[str, int]:
    """Every DSCP 0-63: the plan's DSCPs to their class, every other to default_tc."""
    full = {str(dscp): default_tc for dscp in range(64)}
    full.update(_dscp_map(roce))
    return full


def _share_bandwidth(classes: dict[int, dict], data_prio: int, data_percent: int) -> None:
    """ETS/DWRR shares (reference 1.5, 3.6, 7.3: RoCE class ~50 %, the rest
    shared): the data class gets data_percent, the other weighted classes
    split what is left evenly (the lowest class takes the remainder); strict
    classes get none, since a strict queue is served before any weight."""
    weighted = sorted(tc for tc, cls in classes.items() if not cls["strict"])
    others = [tc for tc in weighted if tc != data_prio]
    data_share = data_percent if others else 100
    rest = 100 - data_share
    for cls in classes.values():
        cls["bandwidth_percent"] = None if cls["strict"] else 0
    classes[data_prio]["bandwidth_percent"] = data_share
    for index, tc in enumerate(others):
        classes[tc]["bandwidth_percent"] = rest // len(others) + (rest % len(others) if index == 0 else 0)


def _switch_plan(intent: dict, device: dict) -> SwitchPlan:
    """Switch QoS: DSCP plan (reference 7.3), per-port headroom (7.1) and ECN (7.2)."""
    roce = intent["roce"]
    mode = roce["mode"]
    data_prio, cnp_prio = roce["data"]["priority"], roce["cnp"]["priority"]
    pfc = roce["pfc"]["priorities"]  # [] in mode ecn_only (_roce)
    marks = mode != _schema.PFC_ONLY  # pfc_only: no queue marks ECN
    classes: dict[int, dict[str, Any]] = {0: {"lossless": 0 in pfc, "ecn": marks and data_prio == 0, "strict": False}}
    for prio in pfc:
        classes[prio] = {"lossless": True, "ecn": marks and prio == data_prio, "strict": False}
    # the RoCE data class is a class of its own in every mode (ecn_only: lossy, marking ECN)
    classes[data_prio] = {"lossless": data_prio in pfc, "ecn": marks, "strict": False}
    classes[cnp_prio] = {"lossless": False, "ecn": False, "strict": roce["cnp"]["strict"]}
    _share_bandwidth(classes, data_prio, roce["data"]["bandwidth_percent"])
    hr = roce["headroom"]
    ports = {}
    for ifname, port in device["ports"].items():
        room = headroom(
            port["speed_gbps"],
            port["cable_length_m"],
            port_mtu=roce["mtu"]["switch"],
            lossless_mtu=hr["lossless_mtu_bytes"],
            cell_bytes=hr["cell_bytes"],
            small_packet_percent=hr["small_packet_percent"],
            pipeline_latency_bytes=hr["pipeline_latency_bytes"],
            mac_phy_delay_bytes=hr["mac_phy_delay_bytes"],
        )
        ports[ifname] = {
            "speed": port["speed"],
            "speed_gbps": port["speed_gbps"],
            "cable_length_m": port["cable_length_m"],
            "description": port["description"],
            "pfc_priorities": list(pfc),
        }
        if marks:
            # pfc_only: the port carries no ECN thresholds (interfaces point 1)
            ports[ifname]["ecn"] = _port_ecn(roce, port["speed_gbps"], device["platform"], device.get("queue_buffer_bytes"))
        if pfc:
            # ecn_only: no lossless priority, so no PFC headroom to reserve
            ports[ifname]["headroom"] = {
                "xoff_bytes": room["xoff_bytes"],
                "xon_bytes": room["xon_bytes"],
                "size_bytes": room["size_bytes"],
                "total_bytes": room["size_bytes"] * len(pfc),
            }
    plan: SwitchPlan = {
        "kind": "switch",
        "platform": device["platform"],
        "mode": mode,
        "trust": roce["trust"],
        "dscp_map": _dscp_map(roce),
        "default_traffic_class": 0,
        # All 64 code points, so no DSCP keeps a vendor default class (issue 13: EOS maps
        # 24-31 to the no-drop class 3 by default). Drivers that map explicitly render this.
        "dscp_map_full": _dscp_map_full(roce, 0),
        "traffic_classes": {str(tc): classes[tc] for tc in sorted(classes)},
        "pfc_priorities": list(pfc),
        "cnp": {"dscp": roce["cnp"]["dscp"], "priority": cnp_prio, "queue": cnp_prio, "strict": roce["cnp"]["strict"]},
        "ecn_queue": data_prio,
        "watchdog": dict(roce["pfc"]["watchdog"]),
        "mtu": roce["mtu"]["switch"],
        # The RoCE queue's buffer, for platforms that set ECN in percent of it (None elsewhere).
        "queue_buffer_bytes": device.get("queue_buffer_bytes"),
        "ports": ports,
        **({"junos": _junos_plan(device["junos"], classes, roce)} if device.get("junos") else {}),
    }
    if device["platform"] == "nvue":
        plan["release"] = device.get("release", _vendor_nvue.DEFAULT_RELEASE)
        # NVIDIA's QoS page ("Flow Control Buffers"): give the lossless pool its
        # memory share and the lossless priorities before PFC (_vendor_nvue).
        # ecn_only: no lossless priority, so no lossless pool (NVIDIA ties the pool to PFC: docs/vendor-nvue.md, "Fabric modes").
        if pfc:
            plan["traffic_pool"] = {
                "lossless_pool": _vendor_nvue.LOSSLESS_POOL,
                "lossless_priorities": list(pfc),
                "lossless_memory_percent": _vendor_nvue.LOSSLESS_POOL_PERCENT,
                "lossy_pool": _vendor_nvue.LOSSY_POOL,
                "lossy_priorities": [prio for prio in range(8) if prio not in pfc],
                "lossy_memory_percent": 100 - _vendor_nvue.LOSSLESS_POOL_PERCENT,
            }
        # The application-priority TLV NVIDIA's RoCE mode advertises (UDP 4791 at the RoCE priority).
        plan["lldp_app_tlv"] = {"udp_port": _vendor_nvue.ROCE_UDP_PORT, "priority": data_prio}
    if "sonic" in device:
        # SONiC: the buffer model the switch runs (static profiles with the plan's headroom, or NULL = computed; _vendor_sonic).
        plan["sonic"] = dict(device["sonic"])
    if "eos" in device:
        # EOS: the ASIC family and the queue sub-mode it takes ('uc-tx-queue' | 'tx-queue'; _vendor_eos).
        plan["eos"] = dict(device["eos"])
    return plan


def _split_percent(total: int, fixed: dict[int, int], weights: dict[int, int], first: int) -> dict[str, int]:
    """Whole percents summing to ``total``: fixed queues keep theirs, the weighted ones share
    the rest in proportion to their plan weights (queue ``first``, the data class, takes the rounding)."""
    rest = total - sum(fixed.values())
    out = dict(fixed)
    whole = sum(weights.values()) or 1
    for queue, weight in weights.items():
        out[queue] = weight * rest // whole
    if weights:
        top = first if first in weights else max(weights, key=lambda q: (weights[q], -q))
        out[top] += total - sum(out.values())
    return {str(q): out[q] for q in sorted(out)}


def _junos_plan(junos: dict, classes: dict[int, dict], roce: dict) -> JunosPlan:
    """What only Junos needs, derived here so the driver derives nothing (docs/vendor-junos.md):
    the scheduling form of the model, the media MTU (IP MTU + Ethernet header), the JVD
    shared-buffer partitions, and a transmit-rate for every queue a port uses, Junos' own
    best-effort / network-control / mcast classes included: strict queues are capped at
    STRICT_TRANSMIT_PERCENT (JVD s2-cnp), network-control and mcast get a small guaranteed
    share, and the plan's weighted classes share the rest by their plan weights. With ETS the
    unicast classes form one priority group and mcast another (a group's members share 100 %
    of the group; the groups share the port)."""
    v = _vendor_junos
    strict = {tc: v.STRICT_TRANSMIT_PERCENT for tc, cls in classes.items() if cls["strict"]}
    weights = {tc: cls["bandwidth_percent"] for tc, cls in classes.items() if not cls["strict"]}
    extra = {}
    nc_queue, mc_queue = v.DEFAULT_CLASSES["network-control"], v.DEFAULT_CLASSES["mcast"]
    if nc_queue not in classes:
        extra[nc_queue] = v.NETWORK_CONTROL_PERCENT
    if junos["scheduling"] == "port":
        transmit = _split_percent(100, {**strict, **extra, mc_queue: v.MCAST_PERCENT}, weights, roce["data"]["priority"])
        groups = None
    else:
        transmit = _split_percent(100, {**strict, **extra}, weights, roce["data"]["priority"])
        transmit[str(mc_queue)] = 100
        groups = {"unicast": 100 - v.MCAST_PERCENT, "mcast": v.MCAST_PERCENT}
    return {
        "model": junos["model"],
        "scheduling": junos["scheduling"],
        "dcbx": junos["dcbx"],
        "media_mtu": v.media_mtu(roce["mtu"]["switch"]),
        "shared_buffer": copy.deepcopy(v.SHARED_BUFFER),
        "default_classes": dict(v.DEFAULT_CLASSES),
        "transmit_percent": transmit,
        "group_percent": groups,
    }


def _nic_list(device: dict) -> list[HostNic]:
    return [HostNic(**nic) for nic in device["nics"]]


def _roce_host_plan(intent: dict, device: dict) -> RoceHostPlan:
    """NIC side of the same plan (host-ib-k8s a.1-a.5): trust, DSCP map, PFC, DCQCN, CNP, ToS, MTU."""
    roce = intent["roce"]
    pfc = roce["pfc"]["priorities"]
    enabled = roce["dcqcn"]["enabled"]
    return {
        "kind": "host",
        "transport": "roce",
        # lossless | ecn_only (pfc_priorities [], bitmap all 0) | pfc_only (dcqcn off): interfaces point 1
        "mode": roce["mode"],
        "trust": roce["trust"],
        "dscp_map": _dscp_map(roce),
        "default_priority": 0,
        "pfc_priorities": list(pfc),
        # mlnx_qos --pfc order: priority 0 first (host-ib-k8s a.2).
        "pfc_bitmap": ",".join("1" if prio in pfc else "0" for prio in range(8)),
        "dcqcn": {"enabled": enabled, "priorities": [roce["data"]["priority"]] if enabled else []},
        "cnp": {"dscp": roce["cnp"]["dscp"], "priority": roce["cnp"]["priority"]},
        "rdma_cm_tos": roce["rdma_cm_tos"],
        "traffic_class": roce_tos(roce["data"]["dscp"]),
        "roce_mode": "RoCE v2",
        "mtu": roce["mtu"]["host"],
        "gpus": device["gpus"],
        "nics": _nic_list(device),
    }


def _ib_host_plan(intent: dict, device: dict, host: str) -> IbHostPlan:
    ib = intent["infiniband"]
    pkey = None
    for part in ib["partitions"]:
        if part["name"] == ib["compute_partition"]:
            pkey = part["pkey"]
    tenant = _tenants.tenant_of(intent, host)
    if tenant is not None:
        # A tenant's host works in its tenant's partition (docs/tenants.md).
        part = tenant["partition"]
        return {
            "kind": "host",
            "transport": "infiniband",
            "service_level": part["sl"],
            "partition": part["name"],
            "pkey": part["pkey"],
            "gpus": device["gpus"],
            "nics": _nic_list(device),
        }
    return {
        "kind": "host",
        "transport": "infiniband",
        "service_level": _compute_sl(ib),
        "partition": ib["compute_partition"],
        "pkey": pkey,
        "gpus": device["gpus"],
        "nics": _nic_list(device),
    }


def _members_text(part: dict) -> str:
    return ", ".join(f"{m.get('guid') or m.get('keyword')}={m['membership']}" for m in part["members"])


def _partitions_conf(intent: dict) -> str:
    """partitions.conf, one ``;``-terminated rule per partition (host-ib-k8s b.2,
    linux-rdma/opensm doc/partition-config.txt)."""
    ib = intent["infiniband"]
    lines = [f"# lossless.fabric: partitions of fabric {intent['name']}; generated, do not edit"]
    if not any(int(p["pkey"], 16) & 0x7FFF == DEFAULT_PKEY for p in ib["partitions"]):
        lines.append("Default=0x7fff, ipoib : ALL=full ;")
    for part in ib["partitions"]:
        flags = [f"{part['name']}={part['pkey']}"]
        if part["ipoib"]:
            flags.append("ipoib")
        if part["mtu"] is not None:
            flags.append(f"mtu={IB_MTU_CODES[part['mtu']]}")
        if part["rate"] is not None:
            flags.append(f"rate={part['rate']}")
        if part["sl"] is not None:
            flags.append(f"sl={part['sl']}")
        flags.append(f"defmember={part['default_membership']}")
        lines += _rule_lines(f"{', '.join(flags)} :", _members_text(part).split(", "))
    return "\n".join(lines) + "\n"


def _rule_lines(header: str, members: list[str]) -> list[str]:
    """One rule on one line, or, past PARTITIONS_LINE_MAX (OpenSM's read buffer; a tenant's VF GUIDs make long
    rules), its members continued on the next lines, each line ending with ',' and the last with ';'."""
    line = f"{header} {', '.join(members)} ;"
    if len(line) <= PARTITIONS_LINE_MAX:
        return [line]
    out, current = [], header
    for index, member in enumerate(members):
        piece = member + (" ;" if index == len(members) - 1 else ",")
        if len(current) + 1 + len(piece) > PARTITIONS_LINE_MAX:
            out.append(current)
            current = "  " + piece
        else:
            current += " " + piece
    return out + [current]


def _qos_policy_conf(intent: dict) -> str:
    """qos-policy.conf in the full form: qos-levels (DEFAULT mandatory) and one
    qos-match-rule per partition pkey (host-ib-k8s b.3, linux-rdma/opensm
    doc/QoS_management_in_OpenSM.txt sections 2 and 5)."""
    ib = intent["infiniband"]
    lines = [f"# lossless.fabric: QoS policy of fabric {intent['name']}; generated, do not edit", "qos-levels"]
    for level in ib["qos"]["levels"]:
        name = "DEFAULT" if level["name"].lower() == "default" else level["name"]
        lines += ["    qos-level", f"        name: {name}", f"        sl: {level['sl']}", "    end-qos-level"]
    lines += ["end-qos-levels", "", "qos-match-rules"]
    for part in ib["partitions"]:
        level = part["qos_level"] or "default"
        level_name = "DEFAULT" if level.lower() == "default" else _level_name(ib, level)
        lines += [
            "    qos-match-rule",
            f"        use: partition {part['name']}",
            f"        pkey: {part['pkey']}",
            f"        qos-level-name: {level_name}",
            "    end-qos-match-rule",
        ]
    lines.append("end-qos-match-rules")
    return "\n".join(lines) + "\n"


def _level_name(ib: dict, wanted: str) -> str:
    # Level references are case-insensitive; emit the spelling the level was defined with.
    for level in ib["qos"]["levels"]:
        if level["name"].lower() == wanted.lower():
            return level["name"]
    return wanted


def _sm_plan(intent: dict, device: dict) -> SubnetManagerPlan:
    """opensm.conf keys we own (host-ib-k8s b.1) plus the two policy files."""
    ib = intent["infiniband"]
    sm, qos = ib["sm"], ib["qos"]
    priority = sm["priority"] if device["role"] == "master" else sm["standby_priority"]
    conf = {
        "routing_engine": ",".join(sm["routing_engine"]),
        "sm_priority": str(priority),
        "lmc": str(sm["lmc"]),
        "qos": "TRUE" if qos["enabled"] else "FALSE",
        "qos_max_vls": str(qos["max_vls"]),
        "qos_high_limit": str(qos["high_limit"]),
        "qos_vlarb_high": ",".join(f"{e['vl']}:{e['weight']}" for e in qos["vlarb_high"]),
        "qos_vlarb_low": ",".join(f"{e['vl']}:{e['weight']}" for e in qos["vlarb_low"]),
        "qos_ca_sl2vl": ",".join(str(vl) for vl in qos["sl2vl"]["ca"]),
        "qos_swe_sl2vl": ",".join(str(vl) for vl in qos["sl2vl"]["switch"]),
        "partition_config_file": OPENSM_PARTITIONS_FILE,
        "qos_policy_file": OPENSM_QOS_POLICY_FILE,
    }
    if sm["root_guids"]:
        conf["root_guid_file"] = OPENSM_ROOT_GUID_FILE
    return {
        "kind": "subnet_manager",
        "role": device["role"],
        "sm_priority": priority,
        "opensm_conf": dict(sorted(conf.items())),
        "partitions_conf": _partitions_conf(intent),
        "qos_policy_conf": _qos_policy_conf(intent),
        "root_guids_conf": "".join(f"{guid}\n" for guid in sm["root_guids"]),
    }


def _nccl_env(intent: dict, devices: dict) -> dict[str, str]:
    """NCCL variables every benchmark and workload gets (nccl-tests section 7).

    RoCE: NCCL_IB_TC = roce_tos(data DSCP); NCCL_IB_GID_INDEX only when
    pinned (NCCL auto-selects a RoCEv2 GID by default).  InfiniBand:
    NCCL_IB_SL = the compute partition's SL.  NCCL_IB_HCA = '=' + the sorted
    NIC names of all hosts ('=' makes every entry an exact match).
    """
    env: dict[str, str] = {}
    if intent["transport"] == "roce":
        roce = intent["roce"]
        env["NCCL_IB_TC"] = str(roce_tos(roce["data"]["dscp"]))
        if roce["gid_index"] is not None:
            env["NCCL_IB_GID_INDEX"] = str(roce["gid_index"])
    else:
        sl = _compute_sl(intent["infiniband"])
        if sl is not None:
            env["NCCL_IB_SL"] = str(sl)
    names = sorted({nic["name"] for d in devices.values() if d["kind"] == "host" for nic in d["nics"]})
    if names:
        env["NCCL_IB_HCA"] = "=" + ",".join(names)
    return dict(sorted(env.items()))


def _summary(intent: dict, devices: dict, plans: dict, warnings: list[str]) -> dict[str, Any]:
    kinds = [d["kind"] for d in devices.values()]
    hosts = [d for d in devices.values() if d["kind"] == "host"]
    summary: dict[str, Any] = {
        "name": intent["name"],
        "transport": intent["transport"],
        "switches": kinds.count("switch"),
        "hosts": kinds.count("host"),
        "subnet_managers": kinds.count("subnet_manager"),
        "nics": sum(len(d["nics"]) for d in hosts),
        "gpus": sum(d["gpus"] for d in hosts),
        "collective_targets": sum(len(v) for v in intent["targets"]["collectives"].values()),
        "warnings": len(warnings),
    }
    if intent["transport"] == "roce":
        roce = intent["roce"]
        ports = [p for plan in plans.values() if plan["kind"] == "switch" for p in plan["ports"].values()]
        sizes = [p["headroom"]["size_bytes"] for p in ports if "headroom" in p]
        summary.update(
            {
                "mode": roce["mode"],
                "ports": len(ports),
                "lossless_priorities": list(roce["pfc"]["priorities"]),
                "data_dscp": roce["data"]["dscp"],
                "cnp_dscp": roce["cnp"]["dscp"],
                "traffic_class": roce_tos(roce["data"]["dscp"]),
                "max_headroom_bytes": max(sizes) if sizes else 0,
            }
        )
    else:
        ib = intent["infiniband"]
        summary.update(
            {
                "partitions": len(ib["partitions"]),
                "compute_partition": ib["compute_partition"],
                "service_level": _compute_sl(ib),
                "routing_engine": ",".join(ib["sm"]["routing_engine"]),
            }
        )
    return summary
