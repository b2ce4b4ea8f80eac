# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""NVIDIA Cumulus Linux 5.x (NVUE) vendor data: pure tables, each with its source.

Sources (CumulusNetworks/docs, rendered at docs.nvidia.com/networking-ethernet-software/):
- RoCE: content/cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE.md
  ("Default RoCE Configuration" table, ``nv show qos roce`` output).
- QoS: content/cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/_index.md
  ("Flow Control Buffers", "Traffic Pools", "Congestion Control (ECN)", "PFC Watchdog").
- Command reference: content/nvue-reference/Set-and-Unset-Commands/QoS.md and LLDP.md.
- Release notes of the 5.15 command changes (``service lldp`` -> ``system lldp``):
  content/cumulus-linux-515/Whats-New/_index.md ("CL5.14.0 and Earlier | CL5.15 and Later" tables).
See docs/vendor-nvue.md for every command and what is still unverified.
"""

from __future__ import annotations

import re

# Cumulus Linux 5.x releases this collection knows (the user guide has one
# tree per release, cumulus-linux-50 ... cumulus-linux-517). A release outside
# this list is refused rather than guessed.
RELEASES: tuple[str, ...] = tuple("5.%d" % minor for minor in range(0, 18))
DEFAULT_RELEASE = "5.14"
_RELEASE_RE = re.compile(r"5\.(\d{1,2})(?:\.\d{1,3})?")


def release_minor(release: str) -> int:
    """'5.14' or '5.14.0' -> 14; ValueError for anything not in RELEASES."""
    match = _RELEASE_RE.fullmatch(release) if isinstance(release, str) else None
    if not match or "5.%d" % int(match.group(1)) not in RELEASES:
        raise ValueError("%r is not a Cumulus Linux 5.x release (one of %s, optionally with a patch number like 5.14.0)" % (release, ", ".join(RELEASES)))
    return int(match.group(1))


def ecn_switch_value(release: str) -> str:
    """The on-spelling of ``qos congestion-control ... traffic-class N ecn``.

    The 5.14 user guide sets ``ecn disable`` and shows ``enable`` in its ECN
    tables; the current command reference (5.15 and later pages) sets
    ``ecn enabled``. The same release renamed ``qos roce enable on`` to
    ``qos roce state enabled`` ("In Cumulus Linux 5.14 and earlier, you
    specify enable on ..."). Whether 5.15+ still accepts the old ``enable``
    is unverified, so the release's own spelling is sent.
    """
    return "enabled" if release_minor(release) >= 15 else "enable"


def lldp_service_path(release: str) -> str | None:
    """Where the global application-priority TLV table lives, or None before 5.9.

    ``nv set service lldp application-tlv ...`` was introduced in 5.9.0
    (LLDP.md version history); 5.15 moved ``service lldp`` to ``system lldp``.
    """
    minor = release_minor(release)
    if minor < 9:
        return None
    return "system lldp" if minor >= 15 else "service lldp"


# RoCEv2's IANA UDP destination port: the application TLV NVIDIA's RoCE mode
# advertises is "UDP, Protocol:4791, Priority: 3" (RoCE page, default table;
# ``nv show qos roce``: lldp-app-tlv priority 3, protocol-id 4791, selector UDP).
ROCE_UDP_PORT = 4791

# ECN defaults per link speed. NVIDIA states one set of RoCE numbers for every
# Spectrum port, not a table per speed: ``nv show qos roce`` prints
# min-threshold 146.48 KB (150,000 B), max-threshold 1.43 MB (1,500,000 B) and
# probability 100, and the QoS page's default-global ECN profile is the same
# 150000 / 1500000 bytes. The table therefore repeats the same values for each
# speed the intent accepts (nothing per speed is documented, so nothing is
# scaled).
_ROCE_ECN = {"min_threshold_bytes": 150_000, "max_threshold_bytes": 1_500_000, "max_probability_percent": 100}
ECN_DEFAULTS: dict[int, dict[str, int]] = {speed: dict(_ROCE_ECN) for speed in (10, 25, 40, 50, 100, 200, 400, 800)}

# Buffer pool split for lossless priorities. The QoS page ("Flow Control
# Buffers") configures the lossless pool before PFC and its example gives each
# pool 50 %; NVUE's default is 100 % to default-lossy, and the total must not
# exceed 100 %. No other split is recommended in NVIDIA's pages.
LOSSLESS_POOL = "default-lossless"
LOSSY_POOL = "default-lossy"
LOSSLESS_POOL_PERCENT = 50

# Ranges NVIDIA states (command reference QoS.md unless noted). None = NVIDIA
# states no range; the simulator then accepts any positive integer and says so.
RANGES: dict[str, tuple[int, int] | None] = {
    "pfc cable-length": (1, 100000),
    "congestion-control probability": (1, 100),
    "egress-scheduler bw-percent": (1, 100),
    "traffic-pool memory-percent": (0, 100),  # "0 and 100" is stated for advance-buffer pools; traffic-pool states only "must not exceed 100%" in total
    "congestion-control min-threshold": None,
    "congestion-control max-threshold": None,
    "pfc-watchdog polling-interval": None,
    "pfc-watchdog robustness": None,
    "interface link mtu": (552, 9216),  # NVUE-CLI.md: 'Interface MTU (default:9216 | integer:552 - 9216)'
    "lldp application-tlv priority": (0, 7),  # unverified: a switch priority; LLDP.md states no range
}


def ecn_defaults(speed_gbps: int) -> dict[str, int]:
    """NVIDIA's RoCE ECN numbers for a port speed; ValueError for a speed not in the table."""
    if speed_gbps not in ECN_DEFAULTS:
        raise ValueError("platform nvue has no ECN default for %r Gb/s (known: %s)" % (speed_gbps, ", ".join(str(s) for s in sorted(ECN_DEFAULTS))))
    return dict(ECN_DEFAULTS[speed_gbps])


# What ``nv set qos roce`` programs (RoCE page, "Default RoCE Configuration" and the
# ``nv show qos roce`` example): trust pcp,dscp; SP3 -> TC3 (RoCE), SP6 -> TC6 (CNP),
# other SPs -> TC0; ETS TC6 strict, TC3 and TC0 DWRR 50 %; ECN on TC 0,3 at
# 150,000 / 1,500,000 B, probability 100; PFC on SP3 in the lossless modes.
ROCE_MODE_DEFAULTS = {
    "modes": ("lossless", "lossless-single-ipool", "lossy"),
    "lossless_modes": ("lossless", "lossless-single-ipool"),
    "trust": "both",
    "pfc_priorities": (3,),
    "ecn_traffic_classes": (0, 3),
    "min_threshold_bytes": 150_000,
    "max_threshold_bytes": 1_500_000,
    "probability_percent": 100,
    "dwrr_percent": {0: 50, 3: 50},
    "strict": (6,),
}

# lossless_fabric.roce.mode (issue 36) -> the source that NVUE runs it; _records.NVUE.roce_modes (docs/vendor-nvue.md, "Fabric modes").
ROCE_MODES = {
    "lossless": "NVIDIA Cumulus Linux user guide, 'RDMA over Converged Ethernet - RoCE' (lossless mode: PFC and ECN)",
    "ecn_only": "NVIDIA Cumulus Linux user guide, 'RDMA over Converged Ethernet - RoCE', Default RoCE Configuration table: lossy mode "
                "keeps ECN on traffic class 3 and does not enable PFC on switch priority 3",
    "pfc_only": "NVIDIA Cumulus Linux user guide, 'Quality of Service' (PFC profiles and congestion-control profiles are separate "
                "objects bound per interface): PFC without a congestion-control profile",
}
