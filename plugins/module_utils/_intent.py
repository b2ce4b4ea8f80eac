# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The fabric intent: schema, validation and every derived value.

One description of the fabric (inventory variable ``lossless_fabric``) plus
one per device (``lossless_fabric_device``) go in; a plan comes out that
names every priority, DSCP, threshold, OpenSM file and NCCL variable each
device or benchmark gets.  Nothing downstream re-derives these values, so a
switch, a NIC and an NCCL job cannot disagree (see docs/intent.md).

Pure Python standard library: the action plugin, filters and unit tests all
import it without Ansible.
"""

from __future__ import annotations

import copy
import difflib
import math
import re
import sys
from fractions import Fraction
from typing import Any, NamedTuple

from ansible_collections.lossless.fabric.plugins.module_utils import _nccl_vocab, _topology, _vendor_junos, _vendor_nvue

__all__ = [
    "COLLECTIVES",
    "IntentError",
    "PAUSE_QUANTA",
    "PLATFORMS",
    "ROUTING_ENGINES",
    "SPEEDS",
    "Platform",
    "build_plan",
    "ecn_defaults",
    "headroom",
    "parse_size",
    "parse_speed",
    "roce_tos",
    "unsafe_reason",
    "validate",
    "validate_targets",
]

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

# IEEE 802.3 Annex 31B.3.7 pause quanta per speed (Gb/s), as tabulated in
# sonic-net/sonic-swss:cfgmgr/buffer_headroom_mellanox.lua (reference 7.1).
PAUSE_QUANTA: dict[int, int] = {10: 67, 25: 80, 40: 118, 50: 147, 100: 394, 200: 453, 400: 905, 800: 905}

# The intent names a collective by its nccl-tests binary (all_reduce_perf), as the benchmark role runs it;
# the list is the one vocabulary of _nccl_vocab (one binary per NVIDIA/nccl-tests src/<collective>.cu).
COLLECTIVES: tuple[str, ...] = _nccl_vocab.BINARIES

# OpenSM 3.3.23 routing engines (host-ib-k8s b.1); no ar_* engines upstream.
ROUTING_ENGINES: tuple[str, ...] = ("minhop", "updn", "dnup", "file", "ftree", "lash", "dor", "torus-2QoS", "nue", "dfsssp", "sssp")
# Engines that need root GUIDs when OpenSM cannot find the roots itself.
_ROOTED_ENGINES = ("updn", "ftree")

# IBTA MTU codes used by partitions.conf ``mtu=`` (host-ib-k8s b.2).
IB_MTU_CODES: dict[int, int] = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
MEMBER_KEYWORDS: tuple[str, ...] = ("ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF")
MEMBERSHIPS: tuple[str, ...] = ("full", "limited", "both")
TRANSPORTS: tuple[str, ...] = ("roce", "infiniband")
NCCL_TRANSPORTS: tuple[str, ...] = _nccl_vocab.TRANSPORTS
DEVICE_KINDS: tuple[str, ...] = ("switch", "host", "subnet_manager")
SM_ROLES: tuple[str, ...] = ("master", "standby")

# Ethernet header + one 802.1Q tag: a host frame must fit the switch MTU.
L2_OVERHEAD_BYTES = 18
# Default-partition P_Key; OpenSM always creates it (partition-config.txt).
DEFAULT_PKEY = 0x7FFF

# Debian's OpenSM file locations (host-ib-k8s b.1, verified there).
OPENSM_PARTITIONS_FILE = "/etc/opensm/partitions.conf"
OPENSM_QOS_POLICY_FILE = "/etc/opensm/qos-policy.conf"
OPENSM_ROOT_GUID_FILE = "/etc/opensm/root-guids.conf"


class Platform(NamedTuple):
    """One switch OS the collection can configure.

    ``notes`` are warning templates emitted for every switch of this platform
    (fields: ``host``, ``dscp``, ``priority``); they only fire once
    ``supported`` is True, so a known pitfall is recorded here before the
    driver exists.
    """

    name: str
    interface_pattern: str
    interface_example: str
    supported: bool = True
    notes: tuple[str, ...] = ()
    # Largest interface MTU the OS accepts (EOS: 'mtu 68-9214'; reference section 1.7).
    max_mtu: int = 9216
    # Junos takes ECN thresholds only as a fill level in percent of the queue's
    # buffer (drop-profile fill-level 0-100), so the plan needs that buffer size.
    ecn_in_percent_of_queue_buffer: bool = False


# The platform registry: adding NX-OS or SONiC means flipping ``supported``
# once its driver and template exist.
PLATFORMS: dict[str, Platform] = {
    p.name: p
    for p in (
        # Patterns are ASCII only ([0-9], never \d: \d also matches '١' or '１',
        # which would pass here and reach the switch).
        Platform("eos", r"Ethernet[0-9]+(/[0-9]+){0,2}", "Ethernet1/1", max_mtu=9214),
        Platform("nvue", r"swp[0-9]+(s[0-9]+)?", "swp1s0"),
        # Junos: max_mtu is the IP MTU; the media MTU it renders adds the 14-byte Ethernet header
        # and QFX takes at most 9216 (_vendor_junos, docs/vendor-junos.md).
        Platform(
            "junos", r"(et|xe|ge)-[0-9]+/[0-9]+/[0-9]+(:[0-9]+)?", "et-0/0/1:0", max_mtu=_vendor_junos.MAX_IP_MTU, ecn_in_percent_of_queue_buffer=True
        ),
        Platform("nxos", r"Ethernet[0-9]+/[0-9]+(/[0-9]+)?", "Ethernet1/1", supported=False),
        Platform(
            "sonic",
            r"Ethernet[0-9]+",
            "Ethernet0",
            supported=False,
            notes=(
                "{host}: platform sonic: the stock DSCP_TO_TC_MAP|AZURE puts DSCP {dscp} in a lossy traffic class "
                "(its lossless TCs 3 and 4 are fed by DSCP 3 and 4); the plan installs an explicit map, "
                "but 'config qos reload' restores the stock one and silently makes priority {priority} traffic lossy",
            ),
        ),
    )
}

# Characters that could end a CLI line, chain a second command, expand a
# variable or start a comment in some device shell or config file.
_FORBIDDEN_CHARS = frozenset(";|&$`\\#!\"'{}<>")
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_RDMA_DEV_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# IFNAMSIZ is 16 including the NUL.
_NETDEV_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,14}")
_DESCRIPTION_RE = re.compile(r"[A-Za-z0-9 ._,:/()@+=-]*")
_DESCRIPTION_MAX = 240
_GUID_RE = re.compile(r"0x[0-9A-Fa-f]{16}")
_SPEED_RE = re.compile(r"(\d+)[Gg]")
_UINT32_MAX = 2**32 - 1

_BAD: Any = object()  # marks a value that failed validation; never reaches a plan


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


# ---------------------------------------------------------------------------
# Public helpers: parsing and derivations
# ---------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    # YAML true/false are bools, and bool is an int subclass: never a number here.
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and not isinstance(value, bool) and math.isfinite(value)


parse_size = _nccl_vocab.parse_size


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
    """ecn_defaults, or for Junos the JVD fill levels as bytes of the switch's queue buffer."""
    if platform == "junos":
        return _vendor_junos.ecn_defaults_bytes(queue_buffer_bytes)
    return ecn_defaults(speed_gbps, platform)


def _eos_ecn_defaults(speed_gbps: int) -> dict[str, int]:
    from ansible_collections.lossless.fabric.plugins.module_utils import _vendor_eos  # pylint: disable=import-outside-toplevel

    return _vendor_eos.ecn_defaults(speed_gbps)


# platform -> ECN default lookup (each platform's table lives in its _vendor_<os>.py).
_ECN_DEFAULTS = {"eos": _eos_ecn_defaults, "nvue": _vendor_nvue.ecn_defaults}


def ecn_defaults(speed_gbps: int, platform: str) -> dict[str, int]:
    """Return the default ECN (WRED) marking thresholds for a port speed on a platform.

    Each platform's table lives in its vendor module (EOS: _vendor_eos, with the
    source or "unverified" of each entry; nvue: _vendor_nvue, NVIDIA's RoCE
    numbers; docs/intent.md says where each comes from).  A speed the
    platform's table lacks raises ValueError naming both.

    junos: Juniper publishes its RoCE starting values as a drop profile in percent of
    the queue buffer (fill-level 55-90 %, Juniper/jvd AI/ML backend QFX5240
    configuration; _vendor_junos), not bytes per speed: there is no byte table, so
    this raises ValueError; the plan derives Junos' bytes from the switch's
    queue_buffer_bytes (_platform_ecn_defaults).
    """
    if not _is_int(speed_gbps) or speed_gbps <= 0:
        raise ValueError(f"{speed_gbps!r} is not a speed in Gb/s")
    if platform == "junos":
        raise ValueError(
            f"junos: no ECN byte defaults for {speed_gbps}G: Juniper's starting values are fill levels "
            f"{_vendor_junos.ECN_FILL_LEVEL_PERCENT[0]}-{_vendor_junos.ECN_FILL_LEVEL_PERCENT[1]} % of the queue buffer "
            "(derived from lossless_fabric_device.queue_buffer_bytes)"
        )
    lookup = _ECN_DEFAULTS.get(platform)
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


# ---------------------------------------------------------------------------
# Validation machinery
# ---------------------------------------------------------------------------


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    return type(value).__name__


def _key_repr(key: Any) -> str:
    """Show a key inside a path: plain when harmless, repr() when it could mislead."""
    text = str(key)
    if isinstance(key, str) and text and unsafe_reason(text) is None and not set(text) & set("[] "):
        return text
    return repr(key)


def unsafe_reason(value: str) -> str | None:
    """Why a string must not reach a device CLI or file, or None when it may."""
    for char in value:
        if char in "\r\n\x85\u2028\u2029":
            return "a newline"
        if not char.isprintable() and char != " ":
            return f"a control character ({char!r})"
        if char in _FORBIDDEN_CHARS:
            return f"{char!r}, which could start a second command or a comment"
    return None


def _suggest(word: Any, choices: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    return "one of " + ", ".join(choices)


class _Ctx:
    """Collects every error and warning; ``prefix`` names the inventory host."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.prefix = ""

    def error(self, path: str, message: str) -> None:
        self.errors.append(f"{self.prefix}{path}: {message}")

    def warn(self, path: str, message: str) -> None:
        self.warnings.append(f"{self.prefix}{path}: {message}")

    # -- containers ---------------------------------------------------------

    def mapping(self, value: Any, path: str, keys: tuple[str, ...], required: tuple[str, ...] = ()) -> dict:
        """Return ``value`` as a dict (absent/null -> {}), reporting unknown and missing keys."""
        if value is None:
            value = {}
        if not isinstance(value, dict):
            self.error(path, f"{_type_name(value)} is not a mapping")
            return {}
        for key in value:
            if key not in keys:
                self.error(f"{path}.{_key_repr(key)}", f"unknown key ({_suggest(key, keys)})")
        for key in required:
            if value.get(key) is None:
                self.error(f"{path}.{key}", "required")
        return value

    def sequence(self, value: Any, path: str, min_len: int = 0, max_len: int | None = None) -> list | Any:
        if not isinstance(value, list):
            self.error(path, f"{value!r} is not a list")
            return _BAD
        if len(value) < min_len or (max_len is not None and len(value) > max_len):
            bound = f"{min_len}-{max_len}" if max_len is not None else f"at least {min_len}"
            self.error(path, f"a list of {len(value)} entries (need {bound})")
            return _BAD
        return value

    # -- scalars --------------------------------------------------------------

    def integer(self, src: dict, key: str, path: str, default: Any, low: int, high: int, what: str = "an integer", nullable: bool = False) -> Any:
        value = src.get(key, default)
        return self.check_int(value, f"{path}.{key}", low, high, what, nullable)

    def check_int(self, value: Any, path: str, low: int, high: int, what: str = "an integer", nullable: bool = False) -> Any:
        if value is None and nullable:
            return None
        if not _is_int(value) or not low <= value <= high:
            self.error(path, f"{value!r} is not {what} ({low}-{high})")
            return _BAD
        return value

    def boolean(self, src: dict, key: str, path: str, default: bool) -> Any:
        value = src.get(key, default)
        if not isinstance(value, bool):
            self.error(f"{path}.{key}", f"{value!r} is not a boolean (true or false)")
            return _BAD
        return value

    def choice(self, src: dict, key: str, path: str, default: Any, choices: tuple[str, ...], what: str, nullable: bool = False) -> Any:
        value = src.get(key, default)
        if value is None and nullable:
            return None
        if not isinstance(value, str) or value not in choices:
            self.error(f"{path}.{key}", f"{value!r} is not {what} ({_suggest(value, choices) if isinstance(value, str) else 'one of ' + ', '.join(choices)})")
            return _BAD
        return value

    def text(self, value: Any, path: str, pattern: re.Pattern, rule: str) -> Any:
        """Check a string that reaches a device: injection first, then its own pattern."""
        if not isinstance(value, str):
            self.error(path, f"{value!r} is not a string")
            return _BAD
        reason = unsafe_reason(value)
        if reason:
            self.error(path, f"{value!r} contains {reason}")
            return _BAD
        if not pattern.fullmatch(value):
            self.error(path, f"{value!r} is not {rule}")
            return _BAD
        return value

    def name(self, value: Any, path: str) -> Any:
        return self.text(value, path, _NAME_RE, "a valid name (a letter or digit, then up to 62 of A-Z a-z 0-9 . _ -)")

    def description(self, value: Any, path: str) -> Any:
        if isinstance(value, str) and len(value) > _DESCRIPTION_MAX:
            self.error(path, f"{value[:40]!r}... is {len(value)} characters long (at most {_DESCRIPTION_MAX})")
            return _BAD
        return self.text(value, path, _DESCRIPTION_RE, "a valid description (letters, digits, space and ._,:/()@+=- only)")

    def guid(self, value: Any, path: str) -> Any:
        if isinstance(value, str) and _GUID_RE.fullmatch(value):
            return value.lower()
        self.error(path, f"{value!r} is not a GUID (0x followed by 16 hex digits)")
        return _BAD


def _ok(*values: Any) -> bool:
    return all(v is not _BAD for v in values)


# ---------------------------------------------------------------------------
# Intent sections
# ---------------------------------------------------------------------------

_TOP_KEYS = ("name", "transport", "roce", "infiniband", "targets", "kubernetes", "topology")
_ROCE_KEYS = ("trust", "data", "cnp", "pfc", "ecn", "dcqcn", "mtu", "rdma_cm_tos", "gid_index", "cable_length_m", "headroom")
_ECN_KEYS = ("min_threshold_bytes", "max_threshold_bytes", "max_probability_percent")
_WATCHDOG_KEYS = ("enabled", "detection_time_ms", "restoration_time_ms", "action")
_HEADROOM_KEYS = ("cell_bytes", "small_packet_percent", "lossless_mtu_bytes", "pipeline_latency_bytes", "mac_phy_delay_bytes")
_IB_KEYS = ("sm", "qos", "partitions", "compute_partition")
_SM_KEYS = ("priority", "standby_priority", "routing_engine", "lmc", "root_guids")
_QOS_KEYS = ("enabled", "max_vls", "high_limit", "vlarb_high", "vlarb_low", "sl2vl", "levels")
_PARTITION_KEYS = ("name", "pkey", "ipoib", "mtu", "rate", "sl", "qos_level", "default_membership", "members")
_TARGET_KEYS = ("tolerance_percent", "require_transport", "require_gdr", "collectives")
_TARGET_ENTRY_KEYS = ("min_size", "max_size", "min_busbw")

_DEFAULT_SL2VL = [0, 1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7]
_DEFAULT_VLARB_HIGH = [{"vl": 0, "weight": 64}, {"vl": 3, "weight": 64}]
_DEFAULT_VLARB_LOW = [{"vl": vl, "weight": 64} for vl in range(8)]
_DEFAULT_LEVELS = [{"name": "default", "sl": 0}, {"name": "rdma", "sl": 3}]
_DEFAULT_PARTITIONS = [
    {
        "name": "gpu",
        "pkey": "0x8001",
        "ipoib": True,
        "mtu": 4096,
        "rate": None,
        "sl": 3,
        "qos_level": "rdma",
        "default_membership": "limited",
        "members": [{"keyword": "ALL_CAS", "membership": "full"}, {"keyword": "SELF", "membership": "full"}],
    }
]


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


def _sl2vl(ctx: _Ctx, value: Any, path: str, max_vls: Any) -> Any:
    if not isinstance(value, list):
        ctx.error(path, f"{value!r} is not a list of 16 VLs")
        return _BAD
    if len(value) != 16:
        ctx.error(path, f"an SL2VL map of the wrong length ({len(value)} entries; need exactly 16, one VL per SL 0-15)")
        return _BAD
    out = []
    for index, raw_vl in enumerate(value):
        vl = ctx.check_int(raw_vl, f"{path}[{index}]", 0, 15, "a VL")
        if _ok(vl, max_vls) and vl != 15 and vl >= max_vls:
            ctx.error(f"{path}[{index}]", f"VL {vl} is not below qos.max_vls {max_vls} (use 15 to drop an SL)")
            vl = _BAD
        out.append(vl)
    return out if _ok(*out) else _BAD


def _vlarb(ctx: _Ctx, value: Any, path: str, max_vls: Any) -> Any:
    entries = ctx.sequence(value, path, min_len=1, max_len=64)
    if entries is _BAD:
        return _BAD
    out = []
    for index, entry in enumerate(entries):
        item_path = f"{path}[{index}]"
        src = ctx.mapping(entry, item_path, ("vl", "weight"), required=("vl", "weight"))
        vl = ctx.check_int(src["vl"], f"{item_path}.vl", 0, 14, "a data VL") if src.get("vl") is not None else _BAD
        weight = ctx.check_int(src["weight"], f"{item_path}.weight", 0, 255, "a weight") if src.get("weight") is not None else _BAD
        if _ok(vl, max_vls) and vl >= max_vls:
            ctx.error(f"{item_path}.vl", f"{vl!r} is not below qos.max_vls {max_vls}")
            vl = _BAD
        out.append({"vl": vl, "weight": weight})
    return out if all(_ok(e["vl"], e["weight"]) for e in out) else _BAD


def _pkey(value: Any) -> int | None:
    if _is_int(value):
        number = value
    elif isinstance(value, str) and re.fullmatch(r"0[xX][0-9A-Fa-f]{1,4}", value):
        number = int(value, 16)
    else:
        return None
    if not 0 <= number <= 0xFFFF or number & 0x7FFF == 0:
        return None
    return number


def _member(ctx: _Ctx, value: Any, path: str, default_membership: Any) -> Any:
    if isinstance(value, str):
        value = {"guid": value} if value.lower().startswith("0x") else {"keyword": value}
    if not isinstance(value, dict):
        ctx.error(path, f"{value!r} is not a member (a GUID, a keyword, or a mapping with guid or keyword and membership)")
        return _BAD
    src = ctx.mapping(value, path, ("guid", "keyword", "membership"))
    membership = ctx.choice(src, "membership", path, default_membership, MEMBERSHIPS, "a membership")
    if ("guid" in src) == ("keyword" in src):
        ctx.error(path, f"{value!r} needs exactly one of guid or keyword")
        return _BAD
    if "guid" in src:
        guid = ctx.guid(src["guid"], f"{path}.guid")
        return {"guid": guid, "membership": membership} if _ok(guid, membership) else _BAD
    keyword = src["keyword"]
    if not isinstance(keyword, str) or keyword not in MEMBER_KEYWORDS:
        ctx.error(f"{path}.keyword", f"{keyword!r} is not a member keyword ({_suggest(keyword, MEMBER_KEYWORDS)})")
        return _BAD
    return {"keyword": keyword, "membership": membership} if _ok(membership) else _BAD


def _ib_section(ctx: _Ctx, raw: Any, path: str) -> dict:
    src = ctx.mapping(raw, path, _IB_KEYS)
    out: dict[str, Any] = {}

    sm_path = f"{path}.sm"
    sm = ctx.mapping(src.get("sm"), sm_path, _SM_KEYS)
    priority = ctx.integer(sm, "priority", sm_path, 14, 0, 15, "an SM priority")
    standby = ctx.integer(sm, "standby_priority", sm_path, 1, 0, 15, "an SM priority")
    if _ok(priority, standby) and standby >= priority:
        ctx.error(f"{sm_path}.standby_priority", f"{standby!r} is not below sm.priority ({priority!r}): the standby could win the election")
    engines = sm.get("routing_engine", ["ftree", "minhop"])
    if isinstance(engines, str):
        engines = [engines]
    engines = ctx.sequence(engines, f"{sm_path}.routing_engine", min_len=1)
    if engines is not _BAD:
        checked = []
        for index, engine in enumerate(engines):
            item_path = f"{sm_path}.routing_engine[{index}]"
            if not isinstance(engine, str) or engine not in ROUTING_ENGINES:
                hint = _suggest(engine, ROUTING_ENGINES) if isinstance(engine, str) else "one of " + ", ".join(ROUTING_ENGINES)
                ctx.error(item_path, f"{engine!r} is not an OpenSM 3.3.23 routing engine ({hint})")
                checked.append(_BAD)
            elif engine in checked:
                ctx.error(item_path, f"{engine!r} is listed twice")
                checked.append(_BAD)
            else:
                checked.append(engine)
        engines = checked if _ok(*checked) else _BAD
    roots = ctx.sequence(sm.get("root_guids", []), f"{sm_path}.root_guids")
    if roots is not _BAD:
        roots = [ctx.guid(guid, f"{sm_path}.root_guids[{i}]") for i, guid in enumerate(roots)]
        roots = roots if _ok(*roots) else _BAD
    out["sm"] = {
        "priority": priority,
        "standby_priority": standby,
        "routing_engine": engines,
        "lmc": ctx.integer(sm, "lmc", sm_path, 0, 0, 7, "an LMC"),
        "root_guids": roots,
    }
    if _ok(engines, roots) and not roots:
        for engine in engines:
            if engine in _ROOTED_ENGINES:
                consequence = "updn silently becomes minhop" if engine == "updn" else "ftree falls back to the next engine in the list"
                ctx.warn(
                    f"{sm_path}.routing_engine",
                    f"{engine!r} without root_guids: OpenSM must detect the roots itself; when it cannot, {consequence}",
                )

    qos_path = f"{path}.qos"
    qos = ctx.mapping(src.get("qos"), qos_path, _QOS_KEYS)
    max_vls = ctx.integer(qos, "max_vls", qos_path, 8, 1, 15, "a VL count")
    # Defaults must fit a smaller max_vls, or the one change would fail every default table.
    top_vl = max_vls - 1 if _ok(max_vls) else 7
    default_sl2vl = [min(vl, top_vl) for vl in _DEFAULT_SL2VL]
    default_high = [e for e in _DEFAULT_VLARB_HIGH if e["vl"] <= top_vl] or [{"vl": 0, "weight": 64}]
    default_low = [e for e in _DEFAULT_VLARB_LOW if e["vl"] <= top_vl]
    sl2vl_src = ctx.mapping(qos.get("sl2vl"), f"{qos_path}.sl2vl", ("ca", "switch"))
    levels_raw = ctx.sequence(qos.get("levels", copy.deepcopy(_DEFAULT_LEVELS)), f"{qos_path}.levels", min_len=1)
    levels: Any = []
    if levels_raw is not _BAD:
        seen: dict[str, int] = {}
        for index, entry in enumerate(levels_raw):
            item_path = f"{qos_path}.levels[{index}]"
            lsrc = ctx.mapping(entry, item_path, ("name", "sl"), required=("name",))
            name = ctx.name(lsrc["name"], f"{item_path}.name") if lsrc.get("name") is not None else _BAD
            sl = ctx.integer(lsrc, "sl", item_path, 0, 0, 15, "a service level")
            if _ok(name):
                if name.lower() in seen:
                    ctx.error(f"{item_path}.name", f"{name!r} duplicates levels[{seen[name.lower()]}]")
                    name = _BAD
                else:
                    seen[name.lower()] = index
            levels.append({"name": name, "sl": sl})
        if not all(_ok(level["name"], level["sl"]) for level in levels):
            levels = _BAD
        elif "default" not in seen:
            ctx.error(f"{qos_path}.levels", "no 'default' level: OpenSM requires a DEFAULT QoS level")
            levels = _BAD
    else:
        levels = _BAD
    out["qos"] = {
        "enabled": ctx.boolean(qos, "enabled", qos_path, True),
        "max_vls": max_vls,
        "high_limit": ctx.integer(qos, "high_limit", qos_path, 255, 0, 255, "a high limit"),
        "vlarb_high": _vlarb(ctx, qos.get("vlarb_high", copy.deepcopy(default_high)), f"{qos_path}.vlarb_high", max_vls),
        "vlarb_low": _vlarb(ctx, qos.get("vlarb_low", copy.deepcopy(default_low)), f"{qos_path}.vlarb_low", max_vls),
        "sl2vl": {
            "ca": _sl2vl(ctx, sl2vl_src.get("ca", list(default_sl2vl)), f"{qos_path}.sl2vl.ca", max_vls),
            "switch": _sl2vl(ctx, sl2vl_src.get("switch", list(default_sl2vl)), f"{qos_path}.sl2vl.switch", max_vls),
        },
        "levels": levels,
    }
    level_names = [lv["name"] for lv in levels] if _ok(levels) else None

    parts_raw = ctx.sequence(src.get("partitions", copy.deepcopy(_DEFAULT_PARTITIONS)), f"{path}.partitions")
    partitions: Any = []
    if parts_raw is not _BAD:
        names: dict[str, int] = {}
        pkeys: dict[int, int] = {}
        for index, entry in enumerate(parts_raw):
            partitions.append(_partition(ctx, entry, f"{path}.partitions[{index}]", level_names, names, pkeys, index, parts_raw))
    else:
        partitions = _BAD
    out["partitions"] = partitions

    compute = src.get("compute_partition")
    cpath = f"{path}.compute_partition"
    if compute is None:
        good = [p for p in partitions if _ok(p)] if _ok(partitions) else []
        compute = good[0]["name"] if good else None
    elif not isinstance(compute, str):
        ctx.error(cpath, f"{compute!r} is not a partition name")
        compute = _BAD
    elif _ok(partitions) and all(_ok(p) for p in partitions):
        defined = [p["name"] for p in partitions]
        if compute not in defined:
            hint = _suggest(compute, defined) if defined else "no partitions are defined"
            ctx.error(cpath, f"{compute!r} is not a defined partition ({hint})")
            compute = _BAD
    out["compute_partition"] = compute
    _ib_cross_checks(ctx, out, path)
    return out


def _partition(ctx: _Ctx, entry: Any, item_path: str, level_names: list | None, names: dict, pkeys: dict, index: int, raw: list) -> Any:
    psrc = ctx.mapping(entry, item_path, _PARTITION_KEYS, required=("name", "pkey", "members"))
    if not isinstance(entry, dict):
        return _BAD
    name = ctx.name(psrc["name"], f"{item_path}.name") if psrc.get("name") is not None else _BAD
    if _ok(name):
        if name in names:
            ctx.error(f"{item_path}.name", f"{name!r} duplicates partitions[{names[name]}]")
            name = _BAD
        else:
            names[name] = index
    pkey: Any = _BAD
    if psrc.get("pkey") is not None:
        number = _pkey(psrc["pkey"])
        if number is None:
            ctx.error(f"{item_path}.pkey", f"{psrc['pkey']!r} is not a P_Key (an integer or '0x' hex string, 0x0001-0x7fff after masking bit 15)")
        elif number & 0x7FFF in pkeys:
            other = pkeys[number & 0x7FFF]
            ctx.error(
                f"{item_path}.pkey",
                f"{psrc['pkey']!r} duplicates partitions[{other}] pkey {raw[other].get('pkey')!r} (bit 15 is the membership bit, not part of the key)",
            )
        else:
            pkeys[number & 0x7FFF] = index
            pkey = f"0x{number:04x}"
    mtu = psrc.get("mtu", 4096)
    if mtu is not None and (not _is_int(mtu) or mtu not in IB_MTU_CODES):
        ctx.error(f"{item_path}.mtu", f"{mtu!r} is not an IB MTU (one of {', '.join(str(m) for m in IB_MTU_CODES)})")
        mtu = _BAD
    level = psrc.get("qos_level")
    if level is not None:
        if not isinstance(level, str):
            ctx.error(f"{item_path}.qos_level", f"{level!r} is not a QoS level name")
            level = _BAD
        elif level_names is not None and level.lower() not in [n.lower() for n in level_names]:
            ctx.error(f"{item_path}.qos_level", f"{level!r} is not a defined QoS level ({_suggest(level, level_names)})")
            level = _BAD
    default_membership = ctx.choice(psrc, "default_membership", item_path, "limited", MEMBERSHIPS, "a membership")
    members_raw = ctx.sequence(psrc.get("members"), f"{item_path}.members", min_len=1) if psrc.get("members") is not None else _BAD
    members: Any = _BAD
    if members_raw is not _BAD:
        dm = default_membership if _ok(default_membership) else "limited"
        members = [_member(ctx, m, f"{item_path}.members[{i}]", dm) for i, m in enumerate(members_raw)]
        members = members if _ok(*members) else _BAD
    part = {
        "name": name,
        "pkey": pkey,
        "ipoib": ctx.boolean(psrc, "ipoib", item_path, True),
        "mtu": mtu,
        "rate": ctx.integer(psrc, "rate", item_path, None, 2, 22, "an IBTA rate code", nullable=True),
        "sl": ctx.integer(psrc, "sl", item_path, None, 0, 15, "a service level", nullable=True),
        "qos_level": level,
        "default_membership": default_membership,
        "members": members,
    }
    return part if _ok(*part.values()) else _BAD


def _level_sl(ib: dict, level_name: str | None) -> Any:
    wanted = (level_name or "default").lower()
    for level in ib["qos"]["levels"]:
        if level["name"].lower() == wanted:
            return level["sl"]
    return _BAD


def _compute_sl(ib: dict) -> Any:
    """NCCL_IB_SL: the SL the fabric gives the compute partition's PathRecords (host-ib-k8s b.3).

    With QoS on, our qos-policy.conf matches every partition's pkey to a QoS
    level, and OpenSM 3.3.23 answers PathRecords with that level's SL: the
    partition's own sl= does not show (measured against ibsim, docs/infiniband.md).
    With QoS off, partitions.conf's sl= is what the SA answers."""
    if not _ok(ib["partitions"], ib["compute_partition"], ib["qos"]["levels"], ib["qos"]["enabled"]) or ib["compute_partition"] is None:
        return None
    for part in ib["partitions"]:
        if part["name"] == ib["compute_partition"]:
            if ib["qos"]["enabled"] or part["sl"] is None:
                return _level_sl(ib, part["qos_level"])
            return part["sl"]
    return None


def _ib_cross_checks(ctx: _Ctx, ib: dict, path: str) -> None:
    if not (_ok(ib["partitions"], ib["qos"]["levels"]) and all(_ok(p) for p in ib["partitions"])):
        return
    for index, part in enumerate(ib["partitions"]):
        # with QoS on, the policy matches every partition to a level (default when it names none)
        if part["sl"] is not None and (part["qos_level"] is not None or ib["qos"]["enabled"] is True):
            level_sl = _level_sl(ib, part["qos_level"])
            if _ok(level_sl) and level_sl != part["sl"]:
                ctx.warn(
                    f"{path}.partitions[{index}].sl",
                    f"{part['sl']!r} differs from qos_level {part['qos_level'] or 'default'!r} sl {level_sl}: "
                    + (
                        f"with qos enabled PathRecords and NCCL_IB_SL use {level_sl}"
                        if ib["qos"]["enabled"]
                        else f"PathRecords and NCCL_IB_SL use {part['sl']}"
                    ),
                )
    sl = _compute_sl(ib)
    if sl is None or not _ok(sl):
        return
    for kind in ("ca", "switch"):
        table = ib["qos"]["sl2vl"][kind]
        if _ok(table) and table[sl] == 15:
            ctx.error(f"{path}.qos.sl2vl.{kind}[{sl}]", f"15 drops SL {sl}, the service level of compute_partition {ib['compute_partition']!r}")


def _targets_section(ctx: _Ctx, raw: Any, path: str, transport: Any) -> dict:
    src = ctx.mapping(raw, path, _TARGET_KEYS)
    tolerance = src.get("tolerance_percent", 5)
    if not _is_number(tolerance) or not 0 < tolerance < 100:
        ctx.error(f"{path}.tolerance_percent", f"{tolerance!r} is not a tolerance (0 < x < 100 percent)")
        tolerance = _BAD
    require = ctx.choice(src, "require_transport", path, None, NCCL_TRANSPORTS, "an NCCL transport", nullable=True)
    if require is None and transport in TRANSPORTS:
        require = {"roce": "RoCE", "infiniband": "IB"}[transport]
    cpath = f"{path}.collectives"
    colls_raw = src.get("collectives", {})
    collectives: dict[str, Any] = {}
    if colls_raw is None:
        colls_raw = {}
    if not isinstance(colls_raw, dict):
        ctx.error(cpath, f"{_type_name(colls_raw)} is not a mapping")
        colls_raw = {}
    for coll in sorted(colls_raw, key=str):
        coll_path = f"{cpath}.{_key_repr(coll)}"
        if coll not in COLLECTIVES:
            ctx.error(coll_path, f"unknown collective ({_suggest(coll, COLLECTIVES)})")
            continue
        entries = ctx.sequence(colls_raw[coll], coll_path, min_len=1)
        if entries is _BAD:
            continue
        collectives[coll] = [_target_entry(ctx, e, f"{coll_path}[{i}]") for i, e in enumerate(entries)]
    return {
        "tolerance_percent": tolerance,
        "require_transport": require,
        # null turns the GPUDirect check off (the nccl_gate role passes it so when transport checks are off)
        "require_gdr": None if src.get("require_gdr", True) is None else ctx.boolean(src, "require_gdr", path, True),
        "collectives": collectives,
    }


def validate_targets(raw: Any, path: str = "targets", transport: Any = None) -> tuple[dict, list[str]]:
    """The intent's ``targets`` section alone -> (normalized section, errors).

    The one validator of benchmark targets: ``validate`` uses it for the intent, and the gate
    (``_nccl_gate.gate_settings``) for ``fabric_targets``, so both apply the same rules.
    ``transport`` (roce/infiniband) gives the default ``require_transport``.
    """
    ctx = _Ctx()
    section = _targets_section(ctx, raw, path, transport)
    return section, ctx.errors


def _target_entry(ctx: _Ctx, entry: Any, path: str) -> Any:
    src = ctx.mapping(entry, path, _TARGET_ENTRY_KEYS, required=("min_size", "min_busbw"))
    if not isinstance(entry, dict):
        return _BAD
    sizes: dict[str, Any] = {}
    for key in ("min_size", "max_size"):
        value = src.get(key)
        if value is None:
            sizes[key] = None if key == "max_size" else _BAD
            continue
        try:
            sizes[key] = parse_size(value)
        except ValueError as exc:
            ctx.error(f"{path}.{key}", str(exc))
            sizes[key] = _BAD
            continue
        if sizes[key] == 0:
            ctx.error(f"{path}.{key}", f"{value!r} is not a size above 0")
            sizes[key] = _BAD
    low, high = sizes["min_size"], sizes["max_size"]
    if _ok(low, high) and low is not None and high is not None and low > high:
        ctx.error(f"{path}.min_size", f"{src['min_size']!r} is above max_size {src['max_size']!r}")
    busbw = src.get("min_busbw")
    if busbw is not None and (not _is_number(busbw) or busbw <= 0):
        ctx.error(f"{path}.min_busbw", f"{busbw!r} is not a positive bus bandwidth (GB/s > 0)")
        busbw = _BAD
    return {"min_size": low, "max_size": high, "min_busbw": busbw if busbw is not None else _BAD}


# ---------------------------------------------------------------------------
# Kubernetes: RDMA shared device plugin, Multi-NIC CNI / NVIDIA Network Operator
# (host-ib-k8s c.1, c.4, c.6, d). Role k8s_rdma renders its manifests from this.
# ---------------------------------------------------------------------------

K8S_CNIS: tuple[str, ...] = ("multi_nic_cni", "network_operator")
K8S_MNC_PLUGINS: tuple[str, ...] = ("macvlan", "ipvlan", "mellanox")
K8S_MNC_IPAMS: tuple[str, ...] = ("multi-nic-ipam", "whereabouts", "host-device-ipam")
K8S_ATTACH_STRATEGIES: tuple[str, ...] = ("none", "costOpt", "perfOpt", "devClass", "topology")
K8S_LINK_TYPES: tuple[str, ...] = ("ether", "infiniband")
_K8S_KEYS = ("namespace", "node_selector", "device_plugin", "cni", "multi_nic_cni", "network_operator")
_K8S_DP_KEYS = ("image", "resources")
_K8S_RESOURCE_KEYS = ("name", "prefix", "rdma_hca_max", "selectors")
_K8S_SELECTOR_KEYS = ("vendors", "device_ids", "drivers", "if_names", "link_types")
_K8S_MNC_KEYS = ("namespace", "version", "controller_image", "network")
_K8S_NET_KEYS = ("name", "plugin", "ipam", "subnet", "master_nets", "attach_policy", "namespaces", "mtu")
_K8S_ATTACH_KEYS = ("strategy", "target")
_K8S_NETOP_KEYS = ("namespace", "chart_version", "version", "repository")
# The plugin's own spellings, so a key copied from its config.json gets a precise hint.
_K8S_PLUGIN_SPELLINGS = {"rdmaHcaMax": "rdma_hca_max", "resourceName": "name", "resourcePrefix": "prefix",
                         "deviceIDs": "device_ids", "ifNames": "if_names", "linkTypes": "link_types"}

# A DNS-1123 label: namespaces, network names.
_DNS_LABEL_RE = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")
_DNS_SUBDOMAIN_RE = re.compile(r"(?=.{1,253}$)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")
# The name part of rdma/<name>: the plugin allows ^[a-zA-Z0-9_]+$ (ValidateConfigs); Kubernetes wants
# the name part of an extended resource to be at most 63 characters with an alphanumeric first and last.
_K8S_RESOURCE_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_]{0,61}[A-Za-z0-9])?")
_K8S_LABEL_KEY_RE = re.compile(
    r"(?:(?=.{1,253}/)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
)
_K8S_LABEL_VALUE_RE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")
# registry[:port]/path:tag or @sha256:digest (the distribution reference grammar, lower-case path).
_K8S_IMAGE_RE = re.compile(
    r"(?P<repo>[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@(?P<digest>sha256:[0-9a-f]{64}))?"
)
_K8S_REPOSITORY_RE = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*")
_K8S_PCI_ID_RE = re.compile(r"[0-9a-f]{4}")
_K8S_DRIVER_RE = re.compile(r"[a-z0-9_]{1,64}")
_K8S_VERSION_RE = re.compile(r"v?[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?")
_K8S_NETOP_TAG_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_K8S_TARGET_RE = re.compile(r"[0-9]+[GMK]bps")

K8S_DEFAULTS: dict[str, Any] = {
    "namespace": "lossless-fabric",
    "node_selector": {"feature.node.kubernetes.io/pci-15b3.present": "true"},
    "device_plugin_image": "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:v1.5.3",
    "resource": "rdma_shared_device_a",
    "rdma_hca_max": 63,
    "mnc_namespace": "multi-nic-cni-operator",
    "mnc_version": "v1.3.1",
    "mnc_repository": "ghcr.io/foundation-model-stack",
    "network_name": "multinic-rdma",
    "subnet": "172.30.0.0/16",
    "netop_namespace": "nvidia-network-operator",
    "netop_chart_version": "26.4.1",
    "netop_version": "network-operator-v26.4.1",
    "netop_repository": "nvcr.io/nvidia/mellanox",
}


_K8S_NS_RULE = "a namespace name (a DNS label: at most 63 of a-z 0-9 -)"


def _k8s_text(ctx: _Ctx, src: dict, key: str, path: str, default: str, pattern: re.Pattern, rule: str) -> Any:
    return ctx.text(src.get(key, default), f"{path}.{key}", pattern, rule)


def _k8s_image(ctx: _Ctx, value: Any, path: str) -> Any:
    value = ctx.text(value, path, re.compile(r"\S+"), "an image reference")
    if not _ok(value):
        return _BAD
    match = _K8S_IMAGE_RE.fullmatch(value)
    if not match:
        ctx.error(path, f"{value!r} is not an image reference (registry/path:tag or registry/path@sha256:digest, lower-case path)")
        return _BAD
    if not (match.group("digest") or (match.group("tag") and match.group("tag") != "latest")):
        ctx.error(path, f"{value!r} is not pinned (give a tag other than 'latest', or a digest @sha256:...)")
        return _BAD
    return value


def _k8s_label_map(ctx: _Ctx, value: Any, path: str) -> Any:
    if not isinstance(value, dict) or not value:
        ctx.error(path, f"{value!r} is not a non-empty mapping of node label to value")
        return _BAD
    out: dict[str, str] = {}
    for key in sorted(value, key=str):
        item = f"{path}[{_key_repr(key)}]"
        if not isinstance(key, str) or not _K8S_LABEL_KEY_RE.fullmatch(key):
            ctx.error(item, f"{key!r} is not a label key ([prefix/]name, name at most 63 of A-Z a-z 0-9 - _ .)")
            continue
        label = value[key]
        if not isinstance(label, str) or not _K8S_LABEL_VALUE_RE.fullmatch(label):
            hint = " (quote it: YAML reads true as a boolean)" if isinstance(label, bool) else ""
            ctx.error(item, f"{label!r} is not a label value (a string of at most 63 of A-Z a-z 0-9 - _ .){hint}")
            continue
        out[key] = label
    return out if len(out) == len(value) else _BAD


def _k8s_list(ctx: _Ctx, src: dict, key: str, path: str, check: Any) -> Any:
    value = src.get(key)
    if value is None:
        return []
    items = ctx.sequence(value, f"{path}.{key}")
    if items is _BAD:
        return _BAD
    out = [check(item, f"{path}.{key}[{index}]") for index, item in enumerate(items)]
    return out if _ok(*out) else _BAD


def _k8s_pattern(ctx: _Ctx, pattern: re.Pattern, rule: str) -> Any:
    return lambda value, path: ctx.text(value, path, pattern, rule)


def _k8s_mapping(ctx: _Ctx, value: Any, path: str, keys: tuple[str, ...]) -> dict:
    """ctx.mapping, with the plugin's camelCase names pointed at the intent's spelling."""
    if isinstance(value, dict):
        for key in [k for k in value if k in _K8S_PLUGIN_SPELLINGS and _K8S_PLUGIN_SPELLINGS[k] in keys]:
            ctx.error(f"{path}.{key}", f"unknown key (the intent spells the plugin's {key!r} as {_K8S_PLUGIN_SPELLINGS[key]!r})")
        value = {k: v for k, v in value.items() if not (k in _K8S_PLUGIN_SPELLINGS and _K8S_PLUGIN_SPELLINGS[k] in keys)}
    return ctx.mapping(value, path, keys)


def _k8s_selectors(ctx: _Ctx, raw: Any, path: str) -> Any:
    if raw is None:
        ctx.error(path, f"required (a resource needs at least one selector: {', '.join(_K8S_SELECTOR_KEYS)})")
        return _BAD
    src = _k8s_mapping(ctx, raw, path, _K8S_SELECTOR_KEYS)
    if not isinstance(raw, dict):
        return _BAD

    def pci(value: Any, item: str) -> Any:
        if _is_int(value):  # YAML reads 1021 as a number
            ctx.error(item, f"{value!r} is not a PCI ID (quote it: '{value}')")
            return _BAD
        return ctx.text(value, item, _K8S_PCI_ID_RE, "a PCI ID (4 lower-case hex digits, like '15b3' or '1021')")

    out = {
        "vendors": _k8s_list(ctx, src, "vendors", path, pci),
        "device_ids": _k8s_list(ctx, src, "device_ids", path, pci),
        "drivers": _k8s_list(ctx, src, "drivers", path, _k8s_pattern(ctx, _K8S_DRIVER_RE, "a kernel driver name (like mlx5_core)")),
        "if_names": _k8s_list(ctx, src, "if_names", path, _k8s_pattern(ctx, _NETDEV_RE, "a network interface name (at most 15 of A-Z a-z 0-9 . _ -)")),
        "link_types": _k8s_list(ctx, src, "link_types", path, lambda v, p: _k8s_choice(ctx, v, p, K8S_LINK_TYPES, "a link type")),
    }
    if not _ok(*out.values()):
        return _BAD
    if not any(out.values()):
        ctx.error(path, f"{raw!r} selects nothing (a resource needs at least one selector: {', '.join(_K8S_SELECTOR_KEYS)})")
        return _BAD
    return out


def _k8s_choice(ctx: _Ctx, value: Any, path: str, choices: tuple[str, ...], what: str) -> Any:
    if isinstance(value, str) and value in choices:
        return value
    hint = _suggest(value, choices) if isinstance(value, str) else "one of " + ", ".join(choices)
    ctx.error(path, f"{value!r} is not {what} ({hint})")
    return _BAD


def _k8s_resource(ctx: _Ctx, entry: Any, path: str) -> Any:
    src = _k8s_mapping(ctx, entry, path, _K8S_RESOURCE_KEYS)
    if not isinstance(entry, dict):
        return _BAD
    name = src.get("name")
    if name is None:
        ctx.error(f"{path}.name", "required")
        name = _BAD
    else:
        name = ctx.text(
            name,
            f"{path}.name",
            _K8S_RESOURCE_RE,
            "a resource name (the plugin takes only A-Z a-z 0-9 _, and Kubernetes wants at most 63 characters "
            "starting and ending with a letter or digit: rdma_shared_device_a, not rdma-shared-device-a)",
        )
    prefix = ctx.text(src.get("prefix", "rdma"), f"{path}.prefix", _DNS_SUBDOMAIN_RE, "a resource prefix (a DNS subdomain, like rdma)")
    if isinstance(prefix, str) and prefix.split(".")[-2:] in (["kubernetes", "io"], ["k8s", "io"]):
        ctx.error(f"{path}.prefix", f"{prefix!r} is reserved for Kubernetes' own resources")
        prefix = _BAD
    out = {
        "name": name,
        "prefix": prefix,
        "rdma_hca_max": ctx.integer(src, "rdma_hca_max", path, K8S_DEFAULTS["rdma_hca_max"], 1, 10000, "a pod count per node"),
        "selectors": _k8s_selectors(ctx, src.get("selectors"), f"{path}.selectors"),
    }
    return out if _ok(*out.values()) else _BAD


def _k8s_resources(ctx: _Ctx, raw: Any, path: str) -> Any:
    if raw is None:
        return None  # derived from the hosts' NICs once the devices are known
    entries = ctx.sequence(raw, path, min_len=1)
    if entries is _BAD:
        return _BAD
    out = [_k8s_resource(ctx, entry, f"{path}[{index}]") for index, entry in enumerate(entries)]
    seen: dict[str, int] = {}
    for index, res in enumerate(out):
        if _ok(res) and _ok(res["name"]):
            if res["name"] in seen:
                ctx.error(f"{path}[{index}].name", f"{res['name']!r} duplicates resources[{seen[res['name']]}].name")
                out[index] = _BAD
            seen.setdefault(res["name"], index)
    return out if _ok(*out) else _BAD


def _k8s_cidr(ctx: _Ctx, value: Any, path: str) -> Any:
    import ipaddress  # pylint: disable=import-outside-toplevel

    if isinstance(value, str) and unsafe_reason(value) is None:
        try:
            net = ipaddress.IPv4Network(value, strict=True)
            if "/" in value:
                return str(net)
        except ValueError:
            pass
    ctx.error(path, f"{value!r} is not an IPv4 network in CIDR form (like 172.30.0.0/16, host bits zero)")
    return _BAD


def _k8s_attach_policy(ctx: _Ctx, raw: Any, path: str) -> Any:
    src = ctx.mapping(raw, path, _K8S_ATTACH_KEYS)
    strategy = ctx.choice(src, "strategy", path, "none", K8S_ATTACH_STRATEGIES, "an attach strategy")
    target = src.get("target")
    if target is not None:
        target = ctx.text(target, f"{path}.target", _K8S_TARGET_RE, "a bandwidth target (like 200Gbps)")
    elif strategy in ("costOpt", "perfOpt"):
        ctx.error(f"{path}.target", f"required for strategy {strategy!r} (a bandwidth like 200Gbps)")
        target = _BAD
    return {"strategy": strategy, "target": target}


def _k8s_network(ctx: _Ctx, raw: Any, path: str, roce: Any) -> dict:
    src = ctx.mapping(raw, path, _K8S_NET_KEYS)
    plugin = ctx.choice(src, "plugin", path, "macvlan", K8S_MNC_PLUGINS, "a Multi-NIC CNI plugin")
    ipam = ctx.choice(src, "ipam", path, "host-device-ipam" if plugin == "mellanox" else "multi-nic-ipam", K8S_MNC_IPAMS, "a Multi-NIC CNI IPAM")
    if (plugin == "mellanox") != (ipam == "host-device-ipam") and _ok(plugin, ipam):
        ctx.error(f"{path}.ipam", f"{ipam!r} does not go with plugin {plugin!r} (host-device-ipam is the IPAM of plugin mellanox, and only of it)")
        ipam = _BAD
    subnet = src.get("subnet")
    if ipam == "host-device-ipam":
        if subnet not in (None, ""):
            ctx.error(f"{path}.subnet", f"{subnet!r} is not used by host-device-ipam (it takes the host device's own address): remove it")
            subnet = _BAD
        else:
            subnet = ""
    else:
        subnet = _k8s_cidr(ctx, K8S_DEFAULTS["subnet"] if subnet is None else subnet, f"{path}.subnet")
    name = _k8s_text(ctx, src, "name", path, K8S_DEFAULTS["network_name"], _DNS_LABEL_RE, "a network name (a DNS label: at most 63 of a-z 0-9 -)")
    label = _k8s_pattern(ctx, _DNS_LABEL_RE, _K8S_NS_RULE)
    out = {
        "name": name,
        "plugin": plugin,
        "ipam": ipam,
        "subnet": subnet,
        "master_nets": _k8s_list(ctx, src, "master_nets", path, lambda v, p: _k8s_cidr(ctx, v, p)),
        "attach_policy": _k8s_attach_policy(ctx, src.get("attach_policy"), f"{path}.attach_policy"),
        "namespaces": _k8s_list(ctx, src, "namespaces", path, label),
    }
    # A macvlan/ipvlan child takes its own MTU: default it to the host MTU of the intent (RoCE).
    host_mtu = ((roce or {}).get("mtu") or {}).get("host") if isinstance(roce, dict) else None
    mtu = src.get("mtu")
    if plugin == "mellanox":
        if mtu is not None:
            ctx.error(f"{path}.mtu", f"{mtu!r} is not used by plugin 'mellanox' (the pod gets the host device itself): remove it")
        out["mtu"] = None
    elif mtu is None:
        out["mtu"] = host_mtu if _is_int(host_mtu) else None
    else:
        out["mtu"] = ctx.check_int(mtu, f"{path}.mtu", 1280, 9216, "an MTU")
        if _ok(out["mtu"]) and _is_int(host_mtu) and out["mtu"] > host_mtu:
            ctx.error(f"{path}.mtu", f"{mtu!r} is above lossless_fabric.roce.mtu.host {host_mtu} (a child interface cannot exceed its parent)")
            out["mtu"] = _BAD
    if plugin == "mellanox":
        ctx.warn(
            f"{path}.plugin",
            "'mellanox' builds host-device attachments from the NVIDIA Network Operator's NicClusterPolicy sriovDevicePlugin "
            "resources, which cni multi_nic_cni does not deploy: install the Network Operator with sriovDevicePlugin first",
        )
    return out


def _k8s_multi_nic(ctx: _Ctx, raw: Any, path: str, roce: Any) -> dict:
    src = ctx.mapping(raw, path, _K8S_MNC_KEYS)
    version = ctx.text(src.get("version", K8S_DEFAULTS["mnc_version"]), f"{path}.version", _K8S_VERSION_RE, "a release version (like v1.3.1)")
    if _ok(version) and not version.startswith("v"):
        version = "v" + version  # release tags and image tags both carry the v
    # The controller creates its daemon's Config (multi-nicd) with the daemon image of its own release
    # (vars.DefaultDaemonImage), so pinning the controller pins the daemon too.
    image = src.get("controller_image")
    if image is None and _ok(version):
        image = f"{K8S_DEFAULTS['mnc_repository']}/multi-nic-cni-controller:{version}"
    return {
        "namespace": _k8s_text(ctx, src, "namespace", path, K8S_DEFAULTS["mnc_namespace"], _DNS_LABEL_RE, _K8S_NS_RULE),
        "version": version,
        "controller_image": _k8s_image(ctx, image, f"{path}.controller_image") if image is not None else _BAD,
        "network": _k8s_network(ctx, src.get("network"), f"{path}.network", roce),
    }


def _k8s_network_operator(ctx: _Ctx, raw: Any, path: str) -> dict:
    src = ctx.mapping(raw, path, _K8S_NETOP_KEYS)
    return {
        "namespace": _k8s_text(ctx, src, "namespace", path, K8S_DEFAULTS["netop_namespace"], _DNS_LABEL_RE, _K8S_NS_RULE),
        "chart_version": _k8s_text(ctx, src, "chart_version", path, K8S_DEFAULTS["netop_chart_version"], _K8S_VERSION_RE, "a chart version (like 26.4.1)"),
        "version": _k8s_text(ctx, src, "version", path, K8S_DEFAULTS["netop_version"], _K8S_NETOP_TAG_RE, "an image tag (like network-operator-v26.4.1)"),
        "repository": _k8s_text(
            ctx, src, "repository", path, K8S_DEFAULTS["netop_repository"], _K8S_REPOSITORY_RE, "an image repository (like nvcr.io/nvidia/mellanox)"
        ),
    }


def _kubernetes_section(ctx: _Ctx, raw: Any, path: str, transport: Any, roce: Any) -> dict:
    src = ctx.mapping(raw, path, _K8S_KEYS)
    cni = ctx.choice(src, "cni", path, "multi_nic_cni", K8S_CNIS, "a CNI choice")
    for section in K8S_CNIS:
        if src.get(section) is not None and cni in K8S_CNIS and section != cni:
            ctx.error(f"{path}.{section}", f"present but cni is {cni!r} (remove the section)")
    if cni == "multi_nic_cni" and transport == "infiniband":
        ctx.error(
            f"{path}.cni",
            "'multi_nic_cni' attaches Ethernet interfaces (macvlan, ipvlan, host-device); transport 'infiniband' needs IPoIB: use 'network_operator'",
        )
        cni = _BAD
    dp_path = f"{path}.device_plugin"
    dp_src = ctx.mapping(src.get("device_plugin"), dp_path, _K8S_DP_KEYS)
    out: dict[str, Any] = {
        "namespace": _k8s_text(ctx, src, "namespace", path, K8S_DEFAULTS["namespace"], _DNS_LABEL_RE, _K8S_NS_RULE),
        "node_selector": _k8s_label_map(ctx, src.get("node_selector", K8S_DEFAULTS["node_selector"]), f"{path}.node_selector"),
        "cni": cni,
        "device_plugin": {"image": dp_src.get("image"), "resources": _k8s_resources(ctx, dp_src.get("resources"), f"{dp_path}.resources")},
    }
    image = out["device_plugin"]["image"]
    if cni == "multi_nic_cni":
        out["multi_nic_cni"] = _k8s_multi_nic(ctx, src.get("multi_nic_cni"), f"{path}.multi_nic_cni", roce)
    elif cni == "network_operator":
        netop = out["network_operator"] = _k8s_network_operator(ctx, src.get("network_operator"), f"{path}.network_operator")
        if image is None and _ok(netop["repository"], netop["version"]):
            # The operator's own build of the plugin (host-ib-k8s d), same tag as its other components.
            image = f"{netop['repository']}/k8s-rdma-shared-dev-plugin:{netop['version']}"
    if image is None:
        image = K8S_DEFAULTS["device_plugin_image"]
    image = _k8s_image(ctx, image, f"{dp_path}.image")
    if cni == "network_operator" and _ok(image) and "@" in image:
        ctx.error(f"{dp_path}.image", f"{image!r}: the NicClusterPolicy image spec needs a tag (repository/image:version), not a digest")
        image = _BAD
    out["device_plugin"]["image"] = image
    return out


def _kubernetes_derive(ctx: _Ctx, intent: dict, devices: dict) -> None:
    """Fill the defaults that come from the hosts: one resource selecting every host NIC's netdev."""
    k8s = intent["kubernetes"]
    resources = k8s["device_plugin"]["resources"]
    hosts = [d for d in devices.values() if _ok(d) and d["kind"] == "host"]
    netdevs = sorted({nic["netdev"] for d in hosts for nic in d["nics"] if nic["netdev"]}, key=_natural_key)
    path = "lossless_fabric.kubernetes.device_plugin.resources"
    if resources is None:
        if netdevs:
            selectors = {"vendors": [], "device_ids": [], "drivers": [], "if_names": netdevs, "link_types": []}
        else:
            link = "infiniband" if intent.get("transport") == "infiniband" else "ether"
            selectors = {"vendors": ["15b3"], "device_ids": [], "drivers": [], "if_names": [], "link_types": [link]}
        k8s["device_plugin"]["resources"] = [
            {"name": K8S_DEFAULTS["resource"], "prefix": "rdma", "rdma_hca_max": K8S_DEFAULTS["rdma_hca_max"], "selectors": selectors}
        ]
        return
    if not _ok(resources) or not netdevs:
        return
    for index, res in enumerate(resources):
        unknown = [name for name in res["selectors"]["if_names"] if name not in netdevs]
        if unknown:
            ctx.warn(f"{path}[{index}].selectors.if_names", f"{unknown!r} match no NIC netdev of the inventory hosts ({', '.join(netdevs)})")


def _normalize_intent(ctx: _Ctx, intent: Any) -> dict:
    path = "lossless_fabric"
    if intent is None:
        ctx.error(path, "required (the fabric intent is not defined)")
        return {"name": _BAD, "transport": _BAD}
    src = ctx.mapping(intent, path, _TOP_KEYS, required=("name", "transport"))
    out: dict[str, Any] = {}
    out["name"] = ctx.name(src["name"], f"{path}.name") if src.get("name") is not None else _BAD
    transport = src.get("transport")
    if transport is not None:
        transport = ctx.choice(src, "transport", path, None, TRANSPORTS, "a transport")
    else:
        transport = _BAD
    out["transport"] = transport
    for section in TRANSPORTS:
        if src.get(section) is not None and transport in TRANSPORTS and section != transport:
            ctx.error(f"{path}.{section}", f"present but transport is {transport!r} (remove the section)")
    if transport == "roce" or (transport is _BAD and src.get("roce") is not None):
        out["roce"] = _roce_section(ctx, src.get("roce"), f"{path}.roce")
    if transport == "infiniband" or (transport is _BAD and src.get("infiniband") is not None):
        out["infiniband"] = _ib_section(ctx, src.get("infiniband"), f"{path}.infiniband")
    out["targets"] = _targets_section(ctx, src.get("targets"), f"{path}.targets", transport)
    if src.get("kubernetes") is not None:
        out["kubernetes"] = _kubernetes_section(ctx, src["kubernetes"], f"{path}.kubernetes", transport, out.get("roce"))
    return out


# ---------------------------------------------------------------------------
# Devices
# ---------------------------------------------------------------------------

_DEVICE_KEYS = {
    "switch": ("kind", "platform", "ports", "queue_buffer_bytes", "model", "asic_family", "scheduling", "dcbx", "release"),
    "host": ("kind", "nics", "gpus"),
    "subnet_manager": ("kind", "role"),
}
_PORT_KEYS = ("speed", "cable_length_m", "description", "peer")  # peer, and NIC rail/peer: _topology
_NIC_KEYS = ("name", "netdev", "speed", "guid", "rail", "peer")


def _speed(ctx: _Ctx, value: Any, path: str) -> Any:
    if value is None:
        ctx.error(path, "required")
        return _BAD
    try:
        return parse_speed(value)
    except ValueError as exc:
        ctx.error(path, str(exc))
        return _BAD


def _natural_key(text: str) -> list:
    # Ethernet2 before Ethernet10, as an engineer reads a port list.
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text)]


def _normalize_device(ctx: _Ctx, raw: dict, intent: dict) -> Any:
    path = "lossless_fabric_device"
    transport = intent.get("transport")
    if not isinstance(raw, dict):
        ctx.error(path, f"{_type_name(raw)} is not a mapping")
        return _BAD
    kind = raw.get("kind")
    if kind is None:
        ctx.error(f"{path}.kind", f"required (one of {', '.join(DEVICE_KINDS)})")
        return _BAD
    if not isinstance(kind, str) or kind not in DEVICE_KINDS:
        ctx.error(f"{path}.kind", f"{kind!r} is not a device kind ({_suggest(kind, DEVICE_KINDS) if isinstance(kind, str) else ', '.join(DEVICE_KINDS)})")
        return _BAD
    ctx.mapping(raw, path, _DEVICE_KEYS[kind])
    if kind == "switch":
        if transport == "infiniband":
            ctx.error(f"{path}.kind", "'switch' but transport is 'infiniband': InfiniBand switches are managed by the subnet manager, not by this collection")
            return _BAD
        return _normalize_switch(ctx, raw, path, intent)
    if kind == "subnet_manager":
        if transport == "roce":
            ctx.error(f"{path}.kind", "'subnet_manager' but transport is 'roce': a RoCE fabric has no subnet manager")
            return _BAD
        role = ctx.choice(raw, "role", path, None, SM_ROLES, "an SM role") if raw.get("role") is not None else _BAD
        if raw.get("role") is None:
            ctx.error(f"{path}.role", f"required (one of {', '.join(SM_ROLES)})")
        return {"kind": kind, "role": role} if _ok(role) else _BAD
    return _normalize_host(ctx, raw, path, transport)


def _normalize_switch(ctx: _Ctx, raw: dict, path: str, intent: dict) -> Any:
    platform_name = raw.get("platform")
    platform: Any = _BAD
    if platform_name is None:
        ctx.error(f"{path}.platform", f"required (one of {', '.join(_supported_platforms())})")
    elif not isinstance(platform_name, str) or platform_name not in PLATFORMS:
        hint = _suggest(platform_name, _supported_platforms()) if isinstance(platform_name, str) else "one of " + ", ".join(_supported_platforms())
        ctx.error(f"{path}.platform", f"{platform_name!r} is not a platform ({hint})")
    elif not PLATFORMS[platform_name].supported:
        ctx.error(f"{path}.platform", f"{platform_name!r} is not supported yet (supported: {', '.join(_supported_platforms())})")
    else:
        platform = PLATFORMS[platform_name]
    ports_raw = raw.get("ports", {})
    if ports_raw is None:
        ports_raw = {}
    if not isinstance(ports_raw, dict):
        ctx.error(f"{path}.ports", f"{_type_name(ports_raw)} is not a mapping of interface name to port")
        return _BAD
    roce = intent.get("roce") or {}
    switch_mtu = (roce.get("mtu") or {}).get("switch")
    if platform is not _BAD and _is_int(switch_mtu) and switch_mtu > platform.max_mtu:
        why = (
            f" (mtu.switch is the IP MTU; Junos' media MTU adds the {_vendor_junos.L2_OVERHEAD_BYTES}-byte Ethernet header"
            f" and QFX takes at most {_vendor_junos.MEDIA_MTU_MAX})"
            if platform.name == "junos"
            else ""
        )
        ctx.error(f"{path}.platform", f"{platform.name} takes an interface MTU up to {platform.max_mtu}{why}; lossless_fabric.roce.mtu.switch is {switch_mtu}")
        platform = _BAD
    default_cable = roce.get("cable_length_m", 5)
    ports: dict[str, Any] = {}
    good = True
    canonical = check_port_names(ctx, platform, ports_raw, f"{path}.ports")
    for ifname in sorted(ports_raw, key=lambda k: _natural_key(str(k))):
        port_path = f"{path}.ports[{_key_repr(ifname)}]"
        if not isinstance(ifname, str) or unsafe_reason(ifname):
            good = False
            continue
        if canonical[ifname] is _BAD:
            good = False
        src = ctx.mapping(ports_raw[ifname], port_path, _PORT_KEYS)
        if not isinstance(ports_raw[ifname], (dict, type(None))):
            good = False
            continue
        speed = _speed(ctx, src.get("speed"), f"{port_path}.speed")
        cable = ctx.integer(src, "cable_length_m", port_path, default_cable if _ok(default_cable) else 5, 1, 10000, "a cable length in metres")
        description = src.get("description")
        description = ctx.description("" if description is None else description, f"{port_path}.description")
        good = good and _ok(speed, cable, description)
        junos_later = platform is not _BAD and platform.ecn_in_percent_of_queue_buffer  # checked once the buffer is known
        ecn_now = _ok(speed) and roce.get("ecn") and platform is not _BAD and not junos_later
        if ecn_now and not _port_ecn_ok(ctx, roce["ecn"], speed, f"{port_path}.speed", platform_name):
            good = False
        name = canonical[ifname] if _ok(canonical[ifname]) else ifname
        ports[name] = {"speed": f"{speed}G" if _ok(speed) else _BAD, "speed_gbps": speed, "cable_length_m": cable, "description": description}
    buffer_path = f"{path}.queue_buffer_bytes"
    queue_buffer = raw.get("queue_buffer_bytes")
    if queue_buffer is not None:
        queue_buffer = ctx.check_int(queue_buffer, buffer_path, 1024, 2**40, "a buffer size in bytes")
    if platform is not _BAD and platform.ecn_in_percent_of_queue_buffer:
        if queue_buffer is None:
            ctx.error(
                buffer_path,
                f"required for {platform.name}: it sets ECN thresholds as a percent of the RoCE queue's buffer, so give that buffer in bytes",
            )
            queue_buffer = _BAD
        elif _ok(queue_buffer):
            for ifname, port in ports.items():
                if not _ok(port["speed_gbps"]):
                    continue
                ecn = roce.get("ecn") or {}
                if not ecn or not _ok(*ecn.values()):
                    break  # the intent's ECN section has its own errors
                if not _port_ecn_ok(ctx, ecn, port["speed_gbps"], f"{path}.ports[{_key_repr(ifname)}].speed", platform.name, queue_buffer):
                    queue_buffer = _BAD
                    break
                top = _port_ecn(roce, port["speed_gbps"], platform.name, queue_buffer)["max_threshold_bytes"]
                if top >= queue_buffer:
                    ctx.error(buffer_path, f"{queue_buffer!r} is not above the ECN max threshold of {ifname} ({top} bytes)")
                    queue_buffer = _BAD
                    break
    junos = _junos_device(ctx, raw, path, platform)
    release = _release(ctx, raw.get("release"), f"{path}.release", platform)
    eos = _eos_device(ctx, raw, path, platform) if platform is not _BAD else None
    if platform is not _BAD:
        if raw.get("asic_family") is not None and platform.name != "eos":
            ctx.error(f"{path}.asic_family", f"{raw['asic_family']!r}: only platform eos takes asic_family")
            good = False
        if raw.get("model") is not None and platform.name not in ("eos", "junos"):
            ctx.error(f"{path}.model", f"{raw['model']!r}: only platforms eos and junos take model")
            good = False
    if not (good and _ok(platform, queue_buffer, junos, release, eos)):
        return _BAD
    out = {"kind": "switch", "platform": platform.name, "ports": ports, "queue_buffer_bytes": queue_buffer}
    if junos:
        out["junos"] = junos
    if release is not None:
        out["release"] = release
    if eos is not None:
        out["eos"] = eos
    return out


def _junos_device(ctx: _Ctx, raw: dict, path: str, platform: Any) -> Any:
    """model (decides which scheduling forms apply), scheduling (port | ets), dcbx; junos only."""
    if platform is _BAD:
        return None
    if platform.name != "junos":
        for key in ("scheduling", "dcbx"):  # model: eos takes one too (_eos_device)
            if raw.get(key) is not None:
                ctx.error(f"{path}.{key}", f"is a junos key; platform is {platform.name}")
                return _BAD
        return None
    models = tuple(sorted(_vendor_junos.MODELS))
    model = raw.get("model")
    if model is not None and (not isinstance(model, str) or model not in _vendor_junos.MODELS):
        hint = _suggest(model, models) if isinstance(model, str) else "one of " + ", ".join(models)
        ctx.error(f"{path}.model", f"{model!r} is not a Junos model we have a scheduling form for ({hint})")
        return _BAD
    # Without a model: port scheduling, which every QFX takes (Juniper: the QFX switches support
    # direct port scheduling and ETS, except QFX5200/QFX5210, which support port scheduling only).
    forms = _vendor_junos.scheduling_forms(model) if model else _vendor_junos.SCHEDULING_FORMS
    scheduling = raw.get("scheduling")
    if scheduling is None:
        scheduling = forms[0]
    if not isinstance(scheduling, str) or scheduling not in forms:
        ctx.error(f"{path}.scheduling", f"{scheduling!r}: {model or 'junos'} takes {' or '.join(forms)} scheduling")
        return _BAD
    dcbx = raw.get("dcbx")
    if dcbx is None:
        dcbx = _vendor_junos.default_dcbx(model)
    if not isinstance(dcbx, str) or dcbx not in _vendor_junos.DCBX_MODES:
        ctx.error(f"{path}.dcbx", f"{dcbx!r} is not a DCBX PFC mode (one of {', '.join(_vendor_junos.DCBX_MODES)})")
        return _BAD
    return {"model": model, "scheduling": scheduling, "dcbx": dcbx}


def _release(ctx: _Ctx, value: Any, path: str, platform: Any) -> Any:
    """NVUE only: the Cumulus Linux release (command spellings and paths differ by release; _vendor_nvue)."""
    if platform is _BAD:
        return None
    if platform.name != "nvue":
        if value is not None:
            ctx.error(path, f"applies to platform nvue only (this switch is {platform.name})")
            return _BAD
        return None
    if value is None:
        return _vendor_nvue.DEFAULT_RELEASE
    try:
        _vendor_nvue.release_minor(value)
    except ValueError as exc:
        ctx.error(path, str(exc))
        return _BAD
    return value


def _eos_device(ctx: _Ctx, raw: dict, path: str, platform: Platform) -> Any:
    """EOS: the ASIC family (from asic_family or model) that picks the queue sub-mode (_vendor_eos)."""
    if platform.name != "eos":
        return None
    from ansible_collections.lossless.fabric.plugins.module_utils import _vendor_eos  # pylint: disable=import-outside-toplevel

    model, family = raw.get("model"), raw.get("asic_family")
    from_model = None
    if model is not None:
        try:
            from_model = _vendor_eos.family_of_model(model)
        except ValueError as exc:
            ctx.error(f"{path}.model", str(exc))
            return _BAD
    if family is not None and (not isinstance(family, str) or family not in _vendor_eos.ASIC_FAMILIES):
        ctx.error(f"{path}.asic_family", f"{family!r} is not an EOS ASIC family (one of {', '.join(_vendor_eos.ASIC_FAMILIES)})")
        return _BAD
    if family is not None and from_model is not None and family != from_model:
        ctx.error(f"{path}.asic_family", f"{family!r} disagrees with model {model!r} ({from_model})")
        return _BAD
    family = family or from_model
    if family is None:
        # Not given: Jericho's 'tx-queue', what this collection rendered before issue 13 (so a
        # switch it configured keeps its lines) and the lab's emulated model. A wrong default
        # fails safe: EOS rejects the queue line and load() aborts the whole session.
        family = "jericho"
    # The EOS ECN defaults have no Arista source (_vendor_eos.ECN_DEFAULTS_SOURCE is None):
    # docs/intent.md and docs/vendor-eos.md say so; a warning here would fire on every lab plan.
    return {"model": model, "asic_family": family, "queue_block": _vendor_eos.QUEUE_BLOCK[family]}


def _port_ecn_ok(ctx: _Ctx, ecn: dict, speed_gbps: int, path: str, platform: str, queue_buffer_bytes: Any = None) -> bool:
    """A threshold given in the intent must still sit on the right side of the one derived for this speed."""
    low, high = ecn["min_threshold_bytes"], ecn["max_threshold_bytes"]
    if not _ok(low, high, ecn.get("max_probability_percent")):
        return True  # the intent's ECN section has its own errors
    if any(ecn.get(key) is None for key in _ECN_KEYS):
        try:
            derived = _platform_ecn_defaults(speed_gbps, platform, queue_buffer_bytes)
        except ValueError as exc:
            ctx.error(path, str(exc))
            return False
    if (low is None) == (high is None):
        return True  # both derived (always ordered) or both given (checked on the intent)
    if low is not None and low >= derived["max_threshold_bytes"]:
        ctx.error(
            path,
            f"'{speed_gbps}G' derives ECN max_threshold_bytes {derived['max_threshold_bytes']}, "
            f"not above lossless_fabric.roce.ecn.min_threshold_bytes {low}: set max_threshold_bytes too",
        )
        return False
    if high is not None and high <= derived["min_threshold_bytes"]:
        ctx.error(
            path,
            f"'{speed_gbps}G' derives ECN min_threshold_bytes {derived['min_threshold_bytes']}, "
            f"not below lossless_fabric.roce.ecn.max_threshold_bytes {high}: set min_threshold_bytes too",
        )
        return False
    return True


def canonical_port(platform: Platform, name: str) -> str | None:
    """The one spelling of an interface of ``platform`` (leading zeros dropped
    from every number: Ethernet01 and Ethernet1, swp01 and swp1 are the same
    port), or None when ``name`` is not one of its interface names. ASCII only."""
    if not name.isascii() or not re.fullmatch(platform.interface_pattern, name, re.ASCII):
        return None
    return re.sub(r"[0-9]+", lambda m: str(int(m.group())), name)


def check_port_names(ctx: _Ctx, platform: Any, names: Any, path: str) -> dict:
    """Every interface name of a switch checked (injection, the platform's
    pattern) and normalised: {given name: canonical name, or _BAD}. Two names
    of the same port (Ethernet01 beside Ethernet1) are refused, naming both.
    The intent and switch_config's check of a hand-written plan share it."""
    out: dict[Any, Any] = {}
    seen: dict[str, str] = {}
    for ifname in sorted(names, key=lambda k: _natural_key(str(k))):
        port_path = f"{path}[{_key_repr(ifname)}]"
        if not isinstance(ifname, str):
            ctx.error(port_path, f"{ifname!r} is not an interface name")
            out[ifname] = _BAD
            continue
        reason = unsafe_reason(ifname)
        if reason:
            ctx.error(port_path, f"interface name {ifname!r} contains {reason}")
            out[ifname] = _BAD
            continue
        if platform is _BAD:
            out[ifname] = ifname
            continue
        canonical = canonical_port(platform, ifname)
        if canonical is None:
            ctx.error(port_path, f"{ifname!r} is not a {platform.name} interface name (like {platform.interface_example})")
            out[ifname] = _BAD
            continue
        if canonical in seen:
            ctx.error(port_path, f"{ifname!r} is the same port as {seen[canonical]!r} ({canonical}): give each port once")
            out[ifname] = _BAD
            continue
        seen[canonical] = ifname
        out[ifname] = canonical
    return out


def _supported_platforms() -> tuple[str, ...]:
    return tuple(sorted(name for name, p in PLATFORMS.items() if p.supported))


def _normalize_host(ctx: _Ctx, raw: dict, path: str, transport: Any) -> Any:
    gpus = ctx.integer(raw, "gpus", path, 8, 1, 16, "a GPU count")
    nics_raw = raw.get("nics")
    if nics_raw is None:
        ctx.error(f"{path}.nics", "required (a list of RDMA NICs)")
        return _BAD
    nics_raw = ctx.sequence(nics_raw, f"{path}.nics", min_len=1)
    if nics_raw is _BAD:
        return _BAD
    required = ("name", "netdev", "speed") if transport == "roce" else ("name", "speed")
    nics = []
    seen: dict[str, dict[str, int]] = {"name": {}, "netdev": {}}
    for index, entry in enumerate(nics_raw):
        nic_path = f"{path}.nics[{index}]"
        src = ctx.mapping(entry, nic_path, _NIC_KEYS, required=tuple(k for k in required if k != "speed"))
        if not isinstance(entry, dict):
            nics.append(_BAD)
            continue
        name = ctx.text(src["name"], f"{nic_path}.name", _RDMA_DEV_RE, "an RDMA device name (like mlx5_0)") if src.get("name") is not None else _BAD
        netdev = src.get("netdev")
        if netdev is not None:
            netdev = ctx.text(netdev, f"{nic_path}.netdev", _NETDEV_RE, "a network interface name (at most 15 of A-Z a-z 0-9 . _ -)")
        elif "netdev" in required:
            netdev = _BAD
        for key, value in (("name", name), ("netdev", netdev)):
            if isinstance(value, str):
                if value in seen[key]:
                    ctx.error(f"{nic_path}.{key}", f"{value!r} duplicates nics[{seen[key][value]}].{key}")
                    if key == "name":
                        name = _BAD
                    else:
                        netdev = _BAD
                else:
                    seen[key][value] = index
        speed = _speed(ctx, src.get("speed"), f"{nic_path}.speed")
        guid = ctx.guid(src["guid"], f"{nic_path}.guid") if src.get("guid") is not None else None
        nic = {"name": name, "netdev": netdev, "speed": f"{speed}G" if _ok(speed) else _BAD, "speed_gbps": speed, "guid": guid}
        nics.append(nic if _ok(*nic.values()) else _BAD)
    if not _ok(gpus, *nics):
        return _BAD
    return {"kind": "host", "gpus": gpus, "nics": nics}


# ---------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------


def _normalize(intent: Any, devices: Any) -> tuple[dict, dict, _Ctx]:
    ctx = _Ctx()
    norm = _normalize_intent(ctx, intent)
    norm_devices: dict[str, Any] = {}
    if devices is None:
        devices = {}
    if not isinstance(devices, dict):
        ctx.error("devices", f"{_type_name(devices)} is not a mapping of inventory host to lossless_fabric_device")
        devices = {}
    _fabric_mtu_default(ctx, intent, norm, devices)
    for host in sorted(devices, key=str):
        raw = devices[host]
        if raw is None:
            continue  # a host without lossless_fabric_device is not ours
        ctx.prefix = f"{_key_repr(str(host))}: "
        device = _normalize_device(ctx, raw, norm)
        norm_devices[str(host)] = device
        if _ok(device) and device["kind"] == "switch":
            _platform_notes(ctx, str(host), device, norm)
    ctx.prefix = ""
    ctx.cabling = _topology.check(sys.modules[__name__], ctx, intent, devices, norm, norm_devices)  # type: ignore[attr-defined]
    if "kubernetes" in norm:
        _kubernetes_derive(ctx, norm, norm_devices)
    if norm.get("transport") == "infiniband":
        roles = [d["role"] for d in norm_devices.values() if _ok(d) and d["kind"] == "subnet_manager"]
        if not roles and not any(not _ok(d) for d in norm_devices.values()):
            ctx.warn("devices", "no device of kind subnet_manager: no OpenSM configuration will be planned")
        if roles.count("master") > 1:
            ctx.warn("devices", f"{roles.count('master')} subnet managers with role master share one priority: the election falls back to the lowest port GUID")
    return norm, norm_devices, ctx


def _fabric_mtu_default(ctx: _Ctx, intent: Any, norm: dict, devices: dict) -> None:
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


def _platform_notes(ctx: _Ctx, host: str, device: dict, intent: dict) -> None:
    roce = intent.get("roce")
    if not roce or not _ok(roce["data"]["dscp"], roce["data"]["priority"]):
        return
    for note in PLATFORMS[device["platform"]].notes:
        ctx.warnings.append(note.format(host=host, dscp=roce["data"]["dscp"], priority=roce["data"]["priority"]))


def validate(intent: Any, devices: Any) -> tuple[list[str], list[str]]:
    """Validate the intent and every device description; return ``(errors, warnings)``.

    Every problem is reported, each naming its full key path and value;
    device problems start with the inventory host name.
    """
    _norm, _devices, ctx = _normalize(intent, devices)
    return list(ctx.errors), list(ctx.warnings)


def build_plan(intent: Any, devices: Any) -> dict[str, Any]:
    """Validate, then derive everything each device and benchmark needs.

    Raises ``IntentError`` with every error.  Returns ``{'intent', 'devices',
    'nccl_env', 'warnings', 'summary'}``; see docs/intent.md for each shape.
    """
    norm, norm_devices, ctx = _normalize(intent, devices)
    if ctx.errors:
        raise IntentError(ctx.errors)
    plans: dict[str, Any] = {}
    for host, device in norm_devices.items():
        if device["kind"] == "switch":
            plans[host] = _switch_plan(norm, device)
        elif device["kind"] == "host":
            plans[host] = _roce_host_plan(norm, device) if norm["transport"] == "roce" else _ib_host_plan(norm, device)
        else:
            plans[host] = _sm_plan(norm, device)
    return {
        "intent": norm,
        "devices": plans,
        "nccl_env": _nccl_env(norm, norm_devices),
        "cabling": _topology.plan(ctx.cabling, norm_devices),  # type: ignore[attr-defined]
        "warnings": list(ctx.warnings),
        "summary": _summary(norm, norm_devices, plans, ctx.warnings),
    }


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


def _port_ecn(roce: dict, speed_gbps: int, platform: str, queue_buffer_bytes: Any = None) -> dict[str, int]:
    """Intent values win; nulls are filled from the platform's defaults for the port speed."""
    if all(roce["ecn"][key] is not None for key in _ECN_KEYS):
        return {key: roce["ecn"][key] for key in _ECN_KEYS}
    derived = _platform_ecn_defaults(speed_gbps, platform, queue_buffer_bytes)
    return {key: roce["ecn"][key] if roce["ecn"][key] is not None else derived[key] for key in _ECN_KEYS}


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


def _switch_plan(intent: dict, device: dict) -> dict[str, Any]:
    """Switch QoS: DSCP plan (reference 7.3), per-port headroom (7.1) and ECN (7.2)."""
    roce = intent["roce"]
    data_prio, cnp_prio = roce["data"]["priority"], roce["cnp"]["priority"]
    pfc = roce["pfc"]["priorities"]
    classes: dict[int, dict[str, Any]] = {0: {"lossless": 0 in pfc, "ecn": data_prio == 0, "strict": False}}
    for prio in pfc:
        classes[prio] = {"lossless": True, "ecn": prio == data_prio, "strict": False}
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
            "ecn": _port_ecn(roce, port["speed_gbps"], device["platform"], device.get("queue_buffer_bytes")),
            "headroom": {
                "xoff_bytes": room["xoff_bytes"],
                "xon_bytes": room["xon_bytes"],
                "size_bytes": room["size_bytes"],
                "total_bytes": room["size_bytes"] * len(pfc),
            },
        }
    plan = {
        "kind": "switch",
        "platform": device["platform"],
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


def _junos_plan(junos: dict, classes: dict[int, dict], roce: dict) -> dict[str, Any]:
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


def _nic_list(device: dict) -> list[dict[str, Any]]:
    return [dict(nic) for nic in device["nics"]]


def _roce_host_plan(intent: dict, device: dict) -> dict[str, Any]:
    """NIC side of the same plan (host-ib-k8s a.1-a.5): trust, DSCP map, PFC, DCQCN, CNP, ToS, MTU."""
    roce = intent["roce"]
    pfc = roce["pfc"]["priorities"]
    enabled = roce["dcqcn"]["enabled"]
    return {
        "kind": "host",
        "transport": "roce",
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


def _ib_host_plan(intent: dict, device: dict) -> dict[str, Any]:
    ib = intent["infiniband"]
    pkey = None
    for part in ib["partitions"]:
        if part["name"] == ib["compute_partition"]:
            pkey = part["pkey"]
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
        lines.append(f"{', '.join(flags)} : {_members_text(part)} ;")
    return "\n".join(lines) + "\n"


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


def _sm_plan(intent: dict, device: dict) -> dict[str, Any]:
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
        sizes = [p["headroom"]["size_bytes"] for plan in plans.values() if plan["kind"] == "switch" for p in plan["ports"].values()]
        summary.update(
            {
                "ports": len(sizes),
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
