# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""lossless_fabric.roce: DSCP/priority classes, PFC, ECN, DCQCN, MTU, headroom, and their cross-key rules."""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _schema
from ansible_collections.lossless.fabric.plugins.module_utils._intent._checks import Ctx, _ok
from ansible_collections.lossless.fabric.plugins.module_utils._intent._derive import _platform_ecn_defaults, roce_tos
from ansible_collections.lossless.fabric.plugins.module_utils._intent._schema import value as leaf
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import BAD, L2_OVERHEAD_BYTES

# ---------------------------------------------------------------------------
# RoCE
# ---------------------------------------------------------------------------

_ROCE_KEYS = ("mode", "trust", "data", "cnp", "pfc", "ecn", "dcqcn", "mtu", "rdma_cm_tos", "gid_index", "cable_length_m", "headroom")
_ECN_KEYS = ("min_threshold_bytes", "max_threshold_bytes", "max_probability_percent")
_WATCHDOG_KEYS = ("enabled", "detection_time_ms", "restoration_time_ms", "action")
_HEADROOM_KEYS = ("cell_bytes", "small_packet_percent", "lossless_mtu_bytes", "pipeline_latency_bytes", "mac_phy_delay_bytes")


def _roce_section(ctx: Ctx, raw: Any, path: str) -> dict:
    src = ctx.mapping(raw, path, _ROCE_KEYS)
    mode = leaf(ctx, src, "roce.mode", path)
    out: dict[str, Any] = {"mode": mode, "trust": leaf(ctx, src, "roce.trust", path)}

    data_path = f"{path}.data"
    data = ctx.mapping(src.get("data"), data_path, ("dscp", "priority", "bandwidth_percent"))
    out["data"] = {
        "dscp": leaf(ctx, data, "roce.data.dscp", data_path),
        "priority": leaf(ctx, data, "roce.data.priority", data_path),
        "bandwidth_percent": leaf(ctx, data, "roce.data.bandwidth_percent", data_path),
    }
    cnp_path = f"{path}.cnp"
    cnp = ctx.mapping(src.get("cnp"), cnp_path, ("dscp", "priority", "strict"))
    out["cnp"] = {
        "dscp": leaf(ctx, cnp, "roce.cnp.dscp", cnp_path),
        "priority": leaf(ctx, cnp, "roce.cnp.priority", cnp_path),
        "strict": leaf(ctx, cnp, "roce.cnp.strict", cnp_path),
    }

    pfc_path = f"{path}.pfc"
    pfc = ctx.mapping(src.get("pfc"), pfc_path, ("priorities", "watchdog"))
    row = _schema.BY_PATH["roce.pfc.priorities"]
    if mode == _schema.ECN_ONLY:
        priorities = _ecn_only_priorities(ctx, pfc.get("priorities"), f"{pfc_path}.priorities")
    else:
        priorities = ctx.sequence(pfc.get("priorities", list(row.default)), f"{pfc_path}.priorities", min_len=row.min_len, max_len=row.max_len)
    if priorities is not BAD:
        checked = []
        for index, raw_prio in enumerate(priorities):
            item_path = f"{pfc_path}.priorities[{index}]"
            prio = ctx.check_int(raw_prio, item_path, row.low, row.high, row.what)
            if prio is BAD:
                checked.append(BAD)
            elif prio in checked:
                ctx.error(item_path, f"{prio!r} is listed twice")
                checked.append(BAD)
            else:
                checked.append(prio)
        priorities = sorted(p for p in checked if p is not BAD) if _ok(*checked) else BAD
    wd_path = f"{pfc_path}.watchdog"
    watchdog = ctx.mapping(pfc.get("watchdog"), wd_path, _WATCHDOG_KEYS)
    if mode == _schema.ECN_ONLY:
        # no PFC, so nothing to watch: the watchdog is off (and no driver renders it); asking for it is a contradiction
        enabled = leaf(ctx, watchdog, "roce.pfc.watchdog.enabled", wd_path, default=False)
        if enabled is True:
            ctx.error(f"{wd_path}.enabled", "true: mode ecn_only has no PFC, so there is no pause for a watchdog to watch (remove it)")
            enabled = BAD
    else:
        enabled = leaf(ctx, watchdog, "roce.pfc.watchdog.enabled", wd_path)
    out["pfc"] = {
        "priorities": priorities,
        "watchdog": {
            "enabled": enabled,
            "detection_time_ms": leaf(ctx, watchdog, "roce.pfc.watchdog.detection_time_ms", wd_path),
            "restoration_time_ms": leaf(ctx, watchdog, "roce.pfc.watchdog.restoration_time_ms", wd_path),
            "action": leaf(ctx, watchdog, "roce.pfc.watchdog.action", wd_path),
        },
    }

    ecn_path = f"{path}.ecn"
    ecn = ctx.mapping(src.get("ecn"), ecn_path, _ECN_KEYS)
    out["ecn"] = {
        "min_threshold_bytes": leaf(ctx, ecn, "roce.ecn.min_threshold_bytes", ecn_path),
        "max_threshold_bytes": leaf(ctx, ecn, "roce.ecn.max_threshold_bytes", ecn_path),
        "max_probability_percent": leaf(ctx, ecn, "roce.ecn.max_probability_percent", ecn_path),
    }
    dcqcn = ctx.mapping(src.get("dcqcn"), f"{path}.dcqcn", ("enabled",))
    if mode == _schema.PFC_ONLY:
        # no switch marks ECN, so no NIC receives a mark to answer with a CNP: DCQCN off on the hosts
        for key in _ECN_KEYS:
            if out["ecn"][key] is not None and out["ecn"][key] is not BAD:
                ctx.error(f"{ecn_path}.{key}", f"{out['ecn'][key]!r}: mode pfc_only marks no ECN (remove the ECN thresholds)")
                out["ecn"][key] = BAD
        enabled = leaf(ctx, dcqcn, "roce.dcqcn.enabled", f"{path}.dcqcn", default=False)
        if enabled is True:
            ctx.error(f"{path}.dcqcn.enabled", "true: mode pfc_only marks no ECN, so DCQCN never gets a congestion notification (remove it)")
            enabled = BAD
        out["dcqcn"] = {"enabled": enabled}
    else:
        out["dcqcn"] = {"enabled": leaf(ctx, dcqcn, "roce.dcqcn.enabled", f"{path}.dcqcn")}
    mtu = ctx.mapping(src.get("mtu"), f"{path}.mtu", ("switch", "host"))
    out["mtu"] = {
        "switch": leaf(ctx, mtu, "roce.mtu.switch", f"{path}.mtu"),
        "host": leaf(ctx, mtu, "roce.mtu.host", f"{path}.mtu"),
    }
    out["rdma_cm_tos"] = leaf(ctx, src, "roce.rdma_cm_tos", path)
    out["gid_index"] = leaf(ctx, src, "roce.gid_index", path)
    out["cable_length_m"] = leaf(ctx, src, "roce.cable_length_m", path)
    hr_path = f"{path}.headroom"
    hdr = ctx.mapping(src.get("headroom"), hr_path, _HEADROOM_KEYS)
    out["headroom"] = {
        "cell_bytes": leaf(ctx, hdr, "roce.headroom.cell_bytes", hr_path),
        "small_packet_percent": leaf(ctx, hdr, "roce.headroom.small_packet_percent", hr_path),
        "lossless_mtu_bytes": leaf(ctx, hdr, "roce.headroom.lossless_mtu_bytes", hr_path),
        "pipeline_latency_bytes": leaf(ctx, hdr, "roce.headroom.pipeline_latency_bytes", hr_path),
        "mac_phy_delay_bytes": leaf(ctx, hdr, "roce.headroom.mac_phy_delay_bytes", hr_path),
    }
    _roce_cross_checks(ctx, out, path)
    if out["rdma_cm_tos"] is None and _ok(out["data"]["dscp"]):
        out["rdma_cm_tos"] = roce_tos(out["data"]["dscp"])
    return out


def _ecn_only_priorities(ctx: Ctx, raw: Any, path: str) -> Any:
    """Mode ecn_only: no PFC priority anywhere (absent or [] in the intent; [] in the plan)."""
    if raw is None or raw == []:
        return []
    ctx.error(path, f"{raw!r}: mode ecn_only has no PFC (remove pfc.priorities, or choose mode lossless or pfc_only)")
    return BAD


def _roce_cross_checks(ctx: Ctx, roce: dict, path: str) -> None:
    data, cnp, pfc, ecn = roce["data"], roce["cnp"], roce["pfc"], roce["ecn"]
    prios = pfc["priorities"]
    if _ok(data["dscp"], cnp["dscp"]) and data["dscp"] == cnp["dscp"]:
        ctx.error(f"{path}.cnp.dscp", f"{cnp['dscp']!r} equals data.dscp: one DSCP mapped to two classes")
    if _ok(data["priority"], cnp["priority"]) and data["priority"] == cnp["priority"]:
        ctx.error(f"{path}.cnp.priority", f"{cnp['priority']!r} equals data.priority: CNPs must not share the lossless data class")
    elif _ok(cnp["priority"], prios) and cnp["priority"] in prios:
        ctx.error(f"{path}.cnp.priority", f"{cnp['priority']!r} is in pfc.priorities {prios!r}: CNPs must stay lossy, a paused CNP cannot slow a sender")
    mode = roce.get("mode", _schema.LOSSLESS)
    if mode != _schema.ECN_ONLY and _ok(data["priority"], prios) and data["priority"] not in prios:
        ctx.error(f"{path}.data.priority", f"{data['priority']!r} is not in pfc.priorities {prios!r}: RoCE data would be lossy")
    low, high = ecn["min_threshold_bytes"], ecn["max_threshold_bytes"]
    if _ok(low, high) and low is not None and high is not None and low >= high:
        ctx.error(f"{path}.ecn.min_threshold_bytes", f"{low!r} is not below max_threshold_bytes ({high!r})")
    share = data["bandwidth_percent"]
    if _ok(share, data["priority"], cnp["priority"], cnp["strict"], prios):
        # The classes _share_bandwidth gives a weight: each needs at least 1 % (0 % is refused by the switches).
        weighted = ({0} | set(prios) | {cnp["priority"]}) - ({cnp["priority"]} if cnp["strict"] else set())
        others = len(weighted - {data["priority"]})
        if others and 100 - share < others:
            ctx.error(f"{path}.data.bandwidth_percent", f"{share!r} leaves {100 - share} % for {others} other weighted classes: each needs at least 1 %")
    mtu = roce["mtu"]
    if _ok(mtu["host"], mtu["switch"]) and mtu["host"] > mtu["switch"] - L2_OVERHEAD_BYTES:
        ctx.error(
            f"{path}.mtu.host",
            f"{mtu['host']!r} exceeds mtu.switch {mtu['switch']} - {L2_OVERHEAD_BYTES} (Ethernet + 802.1Q header) = {mtu['switch'] - L2_OVERHEAD_BYTES}",
        )

    # Warnings: legal but usually a mistake.
    if _ok(prios) and len(prios) > 2:
        ctx.warn(
            f"{path}.pfc.priorities",
            f"{prios!r}: {len(prios)} lossless priorities; headroom is reserved per priority on every port, keep one (at most two)",
        )
    if pfc["watchdog"]["enabled"] is False and mode != _schema.ECN_ONLY:
        ctx.warn(f"{path}.pfc.watchdog.enabled", "false: a PFC storm or deadlock can freeze the lossless class fabric-wide")
    if cnp["strict"] is False:
        ctx.warn(f"{path}.cnp.strict", "false: CNPs queue behind other traffic and DCQCN reacts late")
    if _ok(data["priority"]) and data["priority"] == 0:
        ctx.warn(f"{path}.data.priority", "0 is also the class of every unmapped DSCP: all that traffic becomes lossless")
    if _ok(cnp["priority"]) and cnp["priority"] == 0:
        ctx.warn(f"{path}.cnp.priority", "0 is also the class of every unmapped DSCP: CNPs lose their own queue")
    if mode == _schema.PFC_ONLY:
        ctx.warn(f"{path}.mode", "pfc_only: no ECN marking and no DCQCN, PFC alone stops the senders: congestion spreads upstream as pauses")
    tos = roce["rdma_cm_tos"]
    if _ok(tos, data["dscp"]) and tos is not None and tos >> 2 != data["dscp"]:
        if tos == 0:
            ctx.warn(f"{path}.rdma_cm_tos", "0: RDMA-CM traffic (rping, NVMe-oF, some MPIs) runs outside the lossless priority")
        else:
            ctx.warn(
                f"{path}.rdma_cm_tos",
                f"{tos!r} carries DSCP {tos >> 2}, not data.dscp {data['dscp']}: RDMA-CM traffic runs outside the lossless priority",
            )


def _port_ecn(roce: dict, speed_gbps: int, platform: str, queue_buffer_bytes: Any = None) -> dict[str, int]:
    """Intent values win; nulls are filled from the platform's defaults for the port speed."""
    if all(roce["ecn"][key] is not None for key in _ECN_KEYS):
        return {key: roce["ecn"][key] for key in _ECN_KEYS}
    derived = _platform_ecn_defaults(speed_gbps, platform, queue_buffer_bytes)
    return {key: roce["ecn"][key] if roce["ecn"][key] is not None else derived[key] for key in _ECN_KEYS}
