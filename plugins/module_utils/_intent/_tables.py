# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Tables: speeds, pause quanta, vocabularies, the platform registry, name patterns, IntentError."""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _vocab as _nccl_vocab
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _records

# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------

# Ethernet link speeds a lossless port may have, name -> Gb/s.
SPEEDS: dict[str, int] = {
    "10G": 10,
    "25G": 25,
    "40G": 40,
    "50G": 50,
    "100G": 100,
    "200G": 200,
    "400G": 400,
    "800G": 800,
}

# Switch models whose front-panel ports and speeds we have from the vendor, by platform and model
# (case-insensitive). Each model lists port groups: the interface name pattern whose group 1 is the
# front-panel port number, the first and last port number, and the speeds (Gb/s) an interface on
# that port may run, its own and, where the source lists them, those of its breakout lanes. The
# intent's port speeds are checked against them (_devices); a model not listed here, or an
# interface name no group's pattern matches (Junos xe-/ge- ports, EOS modular names), is accepted
# unchecked: never guessed. Sources (docs/lab.md, "Switch models"):
# - [ARISTA-7280R3] Arista, "7280R3 Switch Architecture: A Day in the Life of a Packet", System
#   Specifications: 7280PR3-24 and 7280DR3-24 each "Max 400GbE Ports 24, 100GbE 96, 50GbE 192,
#   40GbE 24, 25GbE 192, 10GbE 192" (24 ports: each runs 400G or 40G, or breaks out into 100G,
#   50G, 25G or 10G lanes; no 200GbE row). Front-panel ports are Ethernet1-24 (EOS numbering).
# - [JUNIPER-QFX5220] Juniper QFX5220 Switch Hardware Guide (https://www.juniper.net/documentation/
#   us/en/hardware/qfx5220/): QFX5220-32CD, 32 QSFP56-DD ports of 40/100/400GbE, numbered 0-31
#   (et-0/0/0 to et-0/0/31); breakout speeds: unverified, so not listed.
# - [JUNIPER-QFX5120] Juniper QFX5120 Switch Hardware Guide: QFX5120-32C, 32 QSFP28 ports of
#   40/100GbE, numbered 0-31; breakout speeds: unverified, so not listed.
# Left out: DCS-7280CR3-32P4 (32 x 100G QSFP100 + 4 x 400G OSFP, [ARISTA-7280R3]): which front-panel
# numbers its four 400G ports carry is in no source read, and a guessed range would refuse good intents.
PortGroup = tuple[str, int, int, tuple[int, ...]]  # (name pattern, first port, last port, speeds in Gb/s)
_EOS_FRONT = r"Ethernet([0-9]+)(?:/[0-9]+)?"
_JUNOS_ET = r"et-0/0/([0-9]+)(?::[0-9]+)?"
SWITCH_MODELS: dict[str, dict[str, tuple[PortGroup, ...]]] = {
    "eos": {
        "dcs-7280dr3-24": ((_EOS_FRONT, 1, 24, (400, 100, 50, 40, 25, 10)),),  # [ARISTA-7280R3]
        "dcs-7280pr3-24": ((_EOS_FRONT, 1, 24, (400, 100, 50, 40, 25, 10)),),  # [ARISTA-7280R3]
    },
    "junos": {
        "qfx5220-32cd": ((_JUNOS_ET, 0, 31, (400, 100, 40)),),  # [JUNIPER-QFX5220]
        "qfx5120-32c": ((_JUNOS_ET, 0, 31, (100, 40)),),  # [JUNIPER-QFX5120]
    },
}


def model_ports(platform: str, model: Any) -> tuple[PortGroup, ...] | None:
    """The port groups of a switch model, or None when the model is not in SWITCH_MODELS."""
    if not isinstance(model, str):
        return None
    return SWITCH_MODELS.get(platform, {}).get(model.casefold())


# IEEE 802.3 Annex 31B.3.7 pause quanta per speed (Gb/s), as tabulated in
# sonic-net/sonic-swss:cfgmgr/buffer_headroom_mellanox.lua (reference 7.1).
PAUSE_QUANTA: dict[int, int] = {10: 67, 25: 80, 40: 118, 50: 147, 100: 394, 200: 453, 400: 905, 800: 905}

# The intent names a collective by its nccl-tests binary (all_reduce_perf), as the benchmark role runs it;
# the list is the one vocabulary of _nccl_vocab (one binary per NVIDIA/nccl-tests src/<collective>.cu).
COLLECTIVES: tuple[str, ...] = _nccl_vocab.BINARIES

# OpenSM's routing engines, partition keywords, MTU codes, default P_Key and file locations are
# the subnet manager's: _ib/_opensm.py.
TRANSPORTS: tuple[str, ...] = ("roce", "infiniband")
NCCL_TRANSPORTS: tuple[str, ...] = _nccl_vocab.TRANSPORTS
DEVICE_KINDS: tuple[str, ...] = ("switch", "host", "subnet_manager")
SM_ROLES: tuple[str, ...] = ("master", "standby")

# Kubernetes vocabularies (host-ib-k8s c.1, c.4, c.6, d; _kubernetes validates with them).
K8S_CNIS: tuple[str, ...] = ("multi_nic_cni", "network_operator")
K8S_MNC_PLUGINS: tuple[str, ...] = ("macvlan", "ipvlan", "mellanox")
K8S_MNC_IPAMS: tuple[str, ...] = ("multi-nic-ipam", "whereabouts", "host-device-ipam")
K8S_ATTACH_STRATEGIES: tuple[str, ...] = ("none", "costOpt", "perfOpt", "devClass", "topology")
K8S_LINK_TYPES: tuple[str, ...] = ("ether", "infiniband")

# Cabling patterns lossless_fabric.topology generates (_topology), and the most NICs (rails) a host has.
PATTERNS: tuple[str, ...] = ("rail_optimized",)
_MAX_RAILS = 64

# Ethernet header + one 802.1Q tag: a host frame must fit the switch MTU.
L2_OVERHEAD_BYTES = 18

# The platform record and registry live with the drivers (_platforms/_base.py Platform, each
# driver's PLATFORM, _records.PLANNED): adding a platform needs no edit here.
Platform = _base.Platform
PLATFORMS: dict[str, Platform] = _records.registry()


def platforms() -> dict[str, Platform]:
    """The registry every check reads, at call time: a test that monkeypatches ``_tables.PLATFORMS``
    (a planned platform, say) is seen by every section and by _switches/_config.py."""
    return PLATFORMS


_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_RDMA_DEV_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# IFNAMSIZ is 16 including the NUL.
_NETDEV_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,14}")
_DESCRIPTION_RE = re.compile(r"[A-Za-z0-9 ._,:/()@+=-]*")
_DESCRIPTION_MAX = 240
_GUID_RE = re.compile(r"0x[0-9A-Fa-f]{16}")
_SPEED_RE = re.compile(r"(\d+)[Gg]")
UINT32_MAX = 2**32 - 1

BAD: Any = object()  # marks a value that failed validation; never reaches a plan


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


class IntentError(ValueError):
    """The intent or a device description is invalid; ``errors`` lists every problem."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))

    def __str__(self) -> str:
        return "\n".join(self.errors)
