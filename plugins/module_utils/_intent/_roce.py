# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""lossless_fabric.roce: DSCP/priority classes, PFC, ECN, DCQCN, MTU, headroom, and their cross-key rules."""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._intent._checks import _Ctx, _ok
from ansible_collections.lossless.fabric.plugins.module_utils._intent._derive import _platform_ecn_defaults, roce_tos
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import _BAD, _UINT32_MAX, L2_OVERHEAD_BYTES

# ---------------------------------------------------------------------------
# Intent sections
# ---------------------------------------------------------------------------

_ROCE_KEYS = ("trust", "data", "cnp", "pfc", "ecn", "dcqcn", "mtu", "rdma_cm_tos", "gid_index", "cable_length_m", "headroom")
_ECN_KEYS = ("min_threshold_bytes", "max_threshold_bytes", "max_probability_percent")
_WATCHDOG_KEYS = ("enabled", "detection_time_ms", "restoration_time_ms", "action")
_HEADROOM_KEYS = ("cell_bytes", "small_packet_percent", "lossless_mtu_bytes", "pipeline_latency_bytes", "mac_phy_delay_bytes")



def _roce_section(ctx: _Ctx, raw: Any, path: str) -> dict:
    src = ctx.mapping(raw, path, _ROCE_KEYS)
    out: dict[str, Any] = {"trust": ctx.choice(src, "trust", path, "dscp", ("dscp",), "a trust mode")}

    data_path = f"{path}.data"
    data = ctx.mapping(src.get("data"), data_path, ("dscp", "priority", "bandwidth_percent"))
    out["data"] = {
        "dscp": ctx.integer(data, "dscp", data_path, 26, 0, 63, "a DSCP"),
        "priority": ctx.integer(data, "priority", data_path, 3, 0, 7, "a priority"),
        "bandwidth_percent": ctx.integer(data, "bandwidth_percent", data_path, 50, 1, 99, "a bandwidth share in percent"),
    }
    cnp_path = f"{path}.cnp"
    cnp = ctx.mapping(src.get("cnp"), cnp_path, ("dscp", "priority", "strict"))
    out["cnp"] = {
        "dscp": ctx.integer(cnp, "dscp", cnp_path, 48, 0, 63, "a DSCP"),
        "priority": ctx.integer(cnp, "priority", cnp_path, 6, 0, 7, "a priority"),
        "strict": ctx.boolean(cnp, "strict", cnp_path, True),
    }

    pfc_path = f"{path}.pfc"
    pfc = ctx.mapping(src.get("pfc"), pfc_path, ("priorities", "watchdog"))
    priorities = ctx.sequence(pfc.get("priorities", [3]), f"{pfc_path}.priorities", min_len=1, max_len=8)
    if priorities is not _BAD:
        checked = []
        for index, raw_prio in enumerate(priorities):
            item_path = f"{pfc_path}.priorities[{index}]"
            prio = ctx.check_int(raw_prio, item_path, 0, 7, "a priority")
            if prio is _BAD:
                checked.append(_BAD)
            elif prio in checked:
                ctx.error(item_path, f"{prio!r} is listed twice")
                checked.append(_BAD)
            else:
                checked.append(prio)
        priorities = sorted(p for p in checked if p is not _BAD) if _ok(*checked) else _BAD
    wd_path = f"{pfc_path}.watchdog"
    watchdog = ctx.mapping(pfc.get("watchdog"), wd_path, _WATCHDOG_KEYS)
    out["pfc"] = {
        "priorities": priorities,
        "watchdog": {
            "enabled": ctx.boolean(watchdog, "enabled", wd_path, True),
            "detection_time_ms": ctx.integer(watchdog, "detection_time_ms", wd_path, 200, 100, 5000, "a detection time in ms"),
            "restoration_time_ms": ctx.integer(watchdog, "restoration_time_ms", wd_path, 400, 100, 60000, "a restoration time in ms"),
            "action": ctx.choice(watchdog, "action", wd_path, "drop", ("drop", "forward"), "a watchdog action"),
        },
    }

    ecn_path = f"{path}.ecn"
    ecn = ctx.mapping(src.get("ecn"), ecn_path, _ECN_KEYS)
    out["ecn"] = {
        "min_threshold_bytes": ctx.integer(ecn, "min_threshold_bytes", ecn_path, None, 1, _UINT32_MAX, "a threshold in bytes", nullable=True),
        "max_threshold_bytes": ctx.integer(ecn, "max_threshold_bytes", ecn_path, None, 1, _UINT32_MAX, "a threshold in bytes", nullable=True),
        "max_probability_percent": ctx.integer(ecn, "max_probability_percent", ecn_path, None, 1, 100, "a percentage", nullable=True),
    }
    dcqcn = ctx.mapping(src.get("dcqcn"), f"{path}.dcqcn", ("enabled",))
    out["dcqcn"] = {"enabled": ctx.boolean(dcqcn, "enabled", f"{path}.dcqcn", True)}
    mtu = ctx.mapping(src.get("mtu"), f"{path}.mtu", ("switch", "host"))
    out["mtu"] = {
        "switch": ctx.integer(mtu, "switch", f"{path}.mtu", 9214, 1500, 9216, "a switch MTU"),
        "host": ctx.integer(mtu, "host", f"{path}.mtu", 9000, 1280, 9216, "a host MTU"),
    }
    out["rdma_cm_tos"] = ctx.integer(src, "rdma_cm_tos", path, None, 0, 255, "a ToS byte", nullable=True)
    out["gid_index"] = ctx.integer(src, "gid_index", path, None, 0, 255, "a GID index", nullable=True)
    out["cable_length_m"] = ctx.integer(src, "cable_length_m", path, 5, 1, 10000, "a cable length in metres")
    hr_path = f"{path}.headroom"
    hdr = ctx.mapping(src.get("headroom"), hr_path, _HEADROOM_KEYS)
    out["headroom"] = {
        "cell_bytes": ctx.integer(hdr, "cell_bytes", hr_path, 144, 32, 1024, "a cell size in bytes"),
        "small_packet_percent": ctx.integer(hdr, "small_packet_percent", hr_path, 100, 0, 100, "a percentage"),
        "lossless_mtu_bytes": ctx.integer(hdr, "lossless_mtu_bytes", hr_path, 1024, 64, 9216, "an MTU in bytes"),
        "pipeline_latency_bytes": ctx.integer(hdr, "pipeline_latency_bytes", hr_path, 18432, 0, 1048576, "a latency in bytes"),
        "mac_phy_delay_bytes": ctx.integer(hdr, "mac_phy_delay_bytes", hr_path, 800, 0, 1048576, "a delay in bytes"),
    }
    _roce_cross_checks(ctx, out, path)
    if out["rdma_cm_tos"] is None and _ok(out["data"]["dscp"]):
        out["rdma_cm_tos"] = roce_tos(out["data"]["dscp"])
    return out


def _roce_cross_checks(ctx: _Ctx, roce: dict, path: str) -> None:
    data, cnp, pfc, ecn = roce["data"], roce["cnp"], roce["pfc"], roce["ecn"]
    prios = pfc["priorities"]
    if _ok(data["dscp"], cnp["dscp"]) and data["dscp"] == cnp["dscp"]:
        ctx.error(f"{path}.cnp.dscp", f"{cnp['dscp']!r} equals data.dscp: one DSCP mapped to two classes")
    if _ok(data["priority"], cnp["priority"]) and data["priority"] == cnp["priority"]:
        ctx.error(f"{path}.cnp.priority", f"{cnp['priority']!r} equals data.priority: CNPs must not share the lossless data class")
    elif _ok(cnp["priority"], prios) and cnp["priority"] in prios:
        ctx.error(f"{path}.cnp.priority", f"{cnp['priority']!r} is in pfc.priorities {prios!r}: CNPs must stay lossy, a paused CNP cannot slow a sender")
    if _ok(data["priority"], prios) and data["priority"] not in prios:
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
    if pfc["watchdog"]["enabled"] is False:
        ctx.warn(f"{path}.pfc.watchdog.enabled", "false: a PFC storm or deadlock can freeze the lossless class fabric-wide")
    if cnp["strict"] is False:
        ctx.warn(f"{path}.cnp.strict", "false: CNPs queue behind other traffic and DCQCN reacts late")
    if _ok(data["priority"]) and data["priority"] == 0:
        ctx.warn(f"{path}.data.priority", "0 is also the class of every unmapped DSCP: all that traffic becomes lossless")
    if _ok(cnp["priority"]) and cnp["priority"] == 0:
        ctx.warn(f"{path}.cnp.priority", "0 is also the class of every unmapped DSCP: CNPs lose their own queue")
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
