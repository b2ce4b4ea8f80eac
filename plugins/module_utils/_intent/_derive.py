# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Public derivations: speed names, RoCE ToS, ECN defaults per platform, PFC headroom."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import _SPEED_RE, PAUSE_QUANTA, SPEEDS, platforms

# ---------------------------------------------------------------------------
# Public helpers: parsing and derivations
# ---------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    # YAML true/false are bools, and bool is an int subclass: never a number here.
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_speed(value: str) -> int:
    """Return the speed in Gb/s of a link speed name such as ``'400G'``.

    Only the speeds in ``SPEEDS`` are accepted: headroom needs their pause quanta.
    """
    match = _SPEED_RE.fullmatch(value) if isinstance(value, str) else None
    if not match or int(match.group(1)) not in PAUSE_QUANTA:
        raise ValueError(f"{value!r} is not a link speed (one of {', '.join(SPEEDS)})")
    return int(match.group(1))


def roce_tos(dscp: int) -> int:
    """Return the RoCE ToS byte for a DSCP: ``DSCP << 2 | 2`` (ECN field ECT(0)).

    ECT(0) lets switches mark CE for DCQCN; 106 for DSCP 26.  Source:
    reference host-ib-k8s a.4 (configfs ``default_roce_tos``) and nccl-tests
    section 7 (``NCCL_IB_TC`` = DSCP x 4 + ECN bits).
    """
    if not _is_int(dscp) or not 0 <= dscp <= 63:
        raise ValueError(f"{dscp!r} is not a DSCP (0-63)")
    return dscp << 2 | 2


def _derived_ecn_defaults(speed_gbps: int) -> dict[str, int]:
    """The collection's earlier rule, kept for platforms whose vendor table is not in yet.

    Anchored at NVIDIA's Spectrum ``qos roce`` default (Kmin 150,000 B / Kmax
    1,500,000 B) taken as the 100G value, scaled linearly with speed (the
    DCQCN/HPCC ns-3 defaults do the same), Pmax 20 %.
    """
    return {
        "min_threshold_bytes": 1500 * speed_gbps,
        "max_threshold_bytes": 15000 * speed_gbps,
        "max_probability_percent": 20,
    }


def _platform_ecn_defaults(speed_gbps: int, platform: str, queue_buffer_bytes: Any = None) -> dict[str, int]:
    """ecn_defaults, or for a platform that sets ECN in percent of the queue buffer (Junos: the JVD
    fill levels) those percents as bytes of the switch's queue buffer (the record's ecn_defaults_of_buffer)."""
    record = platforms().get(platform)
    if record is not None and record.ecn_in_percent_of_queue_buffer:
        return record.ecn_defaults_of_buffer(queue_buffer_bytes)
    return ecn_defaults(speed_gbps, platform)


def ecn_defaults(speed_gbps: int, platform: str) -> dict[str, int]:
    """Return the default ECN (WRED) marking thresholds for a port speed on a platform.

    Each platform's table lives in its vendor module, reached through its platform record's
    ``ecn_defaults`` (EOS: _vendor_eos, with the source or "unverified" of each entry; nvue:
    _vendor_nvue, NVIDIA's RoCE numbers; docs/intent.md says where each comes from).  A speed
    the platform's table lacks raises ValueError naming both; a platform without a table gets
    the collection's derived rule.

    junos: Juniper publishes its RoCE starting values as a drop profile in percent of
    the queue buffer (fill-level 55-90 %, Juniper/jvd AI/ML backend QFX5240
    configuration; _vendor_junos), not bytes per speed: there is no byte table, so
    this raises ValueError; the plan derives Junos' bytes from the switch's
    queue_buffer_bytes (_platform_ecn_defaults).
    """
    if not _is_int(speed_gbps) or speed_gbps <= 0:
        raise ValueError(f"{speed_gbps!r} is not a speed in Gb/s")
    record = platforms().get(platform)
    lookup = record.ecn_defaults if record is not None else None
    if lookup is None:
        return _derived_ecn_defaults(speed_gbps)
    return lookup(speed_gbps)


def _ceil_kib(value: Fraction | int) -> int:
    return math.ceil(Fraction(value) / 1024) * 1024


def headroom(
    speed_gbps: int,
    cable_length_m: int,
    port_mtu: int = 9100,
    lossless_mtu: int = 1024,
    cell_bytes: int = 144,
    small_packet_percent: int = 100,
    pipeline_latency_bytes: int = 18432,
    mac_phy_delay_bytes: int = 800,
    gearbox_bytes: int = 0,
    *,
    tile_bytes: int = 0,
    xoff_extra_bytes: int = 0,
    eight_lane: bool = False,
    shared_headroom_pool: bool = False,
) -> dict[str, Any]:
    """Return the PFC headroom of one lossless priority group on one port.

    A faithful port of sonic-net/sonic-swss:cfgmgr/buffer_headroom_mellanox.lua
    (commit 422271e7e, 2026-08-01; reference switch-lossless-cli 7.1), computed
    with exact fractions so rounding never depends on float error:

    - cable bytes = 2 x L x R / v / 8, v = 1.98e8 m/s (round trip);
    - peer response = pause_quanta(speed) x 512 / 8 (IEEE 802.3 31B.3.7);
    - propagation = port MTU + cable + 2 x gearbox + MAC/PHY delay + peer response
      (+ ``tile_bytes``: speed[Gb/s] x 120 / 8 on Spectrum-4/5);
    - worst-case factor = ceil(cell / 64) when cell > 128 B, else
      ceil(2 x cell / (1 + cell)) (= 2 for any real cell size);
    - small packets are weighted by bytes, not packets:
      p_byte = 100 x 64 / ((p x 64 + (100 - p) x lossless_mtu) / 100);
      occupancy = (100 - p_byte + p_byte x factor) / 100;
    - Xoff = lossless MTU + propagation x occupancy, rounded up to 1 KiB
      (+ ``xoff_extra_bytes``: 18 KiB on Spectrum-6); without a shared headroom
      pool and below 100 % small packets, +2 KiB when still more than 2 KiB
      under the 100 % value (sonic-swss #4757);
    - Xon = pipeline latency (doubled on 8-lane ports) rounded up to 1 KiB;
    - size = Xoff + Xon (+ one port MTU on 8-lane ports), or only Xon when a
      shared headroom pool holds the Xoff part; rounded up to 1 KiB.

    ``mac_phy_delay_bytes`` defaults to 800 (the HLD's 0.8 KB); SONiC's ASIC
    table value 0.8 x 1024 = 819.2 gives the same KiB results in the worked
    table.  ``gearbox_bytes`` is the gearbox delay already in bytes (SONiC:
    speed[Mb/s] x delay[ns] / 8192).
    """
    if not _is_int(speed_gbps) or speed_gbps not in PAUSE_QUANTA:
        raise ValueError(f"{speed_gbps!r} is not a speed with a known pause quanta (one of {', '.join(str(s) for s in PAUSE_QUANTA)} Gb/s)")
    for label, value, low in (
        ("cable_length_m", cable_length_m, 0),
        ("port_mtu", port_mtu, 1),
        ("lossless_mtu", lossless_mtu, 1),
        ("cell_bytes", cell_bytes, 1),
        ("pipeline_latency_bytes", pipeline_latency_bytes, 0),
        ("mac_phy_delay_bytes", mac_phy_delay_bytes, 0),
        ("gearbox_bytes", gearbox_bytes, 0),
        ("tile_bytes", tile_bytes, 0),
        ("xoff_extra_bytes", xoff_extra_bytes, 0),
    ):
        if not _is_int(value) or value < low:
            raise ValueError(f"{label}: {value!r} is not an integer >= {low}")
    if not _is_int(small_packet_percent) or not 0 <= small_packet_percent <= 100:
        raise ValueError(f"small_packet_percent: {small_packet_percent!r} is not a percentage (0-100)")

    minimal_packet = 64
    cable = Fraction(2 * cable_length_m * speed_gbps * 10**9, 198_000_000 * 8)
    peer_response = PAUSE_QUANTA[speed_gbps] * 512 // 8
    propagation = port_mtu + cable + 2 * gearbox_bytes + mac_phy_delay_bytes + peer_response + tile_bytes
    if cell_bytes > 2 * minimal_packet:
        factor = math.ceil(Fraction(cell_bytes, minimal_packet))
    else:
        factor = math.ceil(Fraction(2 * cell_bytes, 1 + cell_bytes))
    spp = small_packet_percent
    spp_by_byte = Fraction(100 * minimal_packet * 100, spp * minimal_packet + (100 - spp) * lossless_mtu)
    occupancy = (100 - spp_by_byte + spp_by_byte * factor) / 100

    xoff = _ceil_kib(lossless_mtu + propagation * occupancy) + xoff_extra_bytes
    compensated = False
    if not shared_headroom_pool and spp != 100:
        full_small = _ceil_kib(lossless_mtu + propagation * factor)
        if xoff + 2048 < full_small:
            xoff += 2048
            compensated = True
    pipeline = pipeline_latency_bytes * 2 if eight_lane else pipeline_latency_bytes
    xon = _ceil_kib(pipeline)
    size = xon if shared_headroom_pool else xoff + xon + (port_mtu if eight_lane else 0)
    size = _ceil_kib(size)
    return {
        "xoff_bytes": xoff,
        "xon_bytes": xon,
        "size_bytes": size,
        "cable_bytes": math.ceil(cable),
        "peer_response_bytes": peer_response,
        "propagation_bytes": math.ceil(propagation),
        "worst_case_factor": factor,
        "cell_occupancy_percent": math.ceil(occupancy * 100),
        "small_packet_compensated": compensated,
    }
