# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""_localize, settings, errors and the topology (the package docstring says what the whole does)."""

from __future__ import annotations

import re
from typing import Any

KINDS = ("host", "nic", "link", "leaf", "uplink", "spine")

DEFAULT_SETTINGS: dict[str, Any] = {
    "repeats": 1,            # launches per pair and rail in rounds 1-3 (run one after another)
    "verify_repeats": 3,     # launches per job in a verify round
    "sigma_k": 4.0,          # flag: more than k robust sigma below the reference ...
    "min_drop_pct": 5.0,     # ... and at least this many % below it
    "noise_pct": 3.0,        # assumed run-to-run CV where a pool is too small to measure it (< min_pool values)
    "min_pool": 8,           # a pool with fewer values takes its best value as the reference
    "expected_busbw": None,  # optional floor (GB/s) for one rail of a 2-node job: anything below is slow
    "accuse_ratio": 0.6,     # slow / (slow + fast) a component needs to be accused
    "min_slow": 2,           # slow observations a component needs to be accused
    "partial_factor": 3.0,   # partial pass: slow share at least this x the background
    "ecmp_draws": 3,         # cross-leaf rounds: launches per leaf uplink aimed at (repeats raised to reach it; ECMP)
    "max_rounds": 6,         # GPU rounds at most (loopback not counted)
    "minutes_per_launch": 1.0,
    "cross_rail": True,      # a 2-host fabric may pair NIC r of one host with NIC r' of the other through a spine
}

_INT_KEYS = {"repeats": (1, 10), "ecmp_draws": (1, 20), "verify_repeats": (1, 10), "min_pool": (2, 100000), "min_slow": (1, 100), "max_rounds": (1, 50)}
_FLOAT_KEYS = {"sigma_k": (0.5, 20.0), "min_drop_pct": (0.1, 90.0), "noise_pct": (0.1, 50.0), "accuse_ratio": (0.5, 1.0),
               "partial_factor": (1.0, 100.0), "minutes_per_launch": (0.01, 1440.0)}
REASON_MAX = 200  # ours: a drain reason / annotation longer than this is refused (Slurm documents no limit we could cite)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")


class LocalizeError(ValueError):
    """Bad input: the message names the key, host or value."""


# ---------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------


def check_settings(raw: dict | None) -> dict:
    """DEFAULT_SETTINGS overlaid with ``raw``; every value checked (the error names the key and the value)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise LocalizeError("settings: expected a mapping, got %r" % (raw,))
    out = dict(DEFAULT_SETTINGS)
    for key, value in raw.items():
        if key not in DEFAULT_SETTINGS:
            raise LocalizeError("settings.%s: unknown setting (known: %s)" % (key, ", ".join(sorted(DEFAULT_SETTINGS))))
        if value is None and key != "expected_busbw":
            continue  # None = the default
        if key in _INT_KEYS:
            low, high = _INT_KEYS[key]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise LocalizeError("settings.%s: expected an integer %d..%d, got %r" % (key, low, high, value))
        elif key in _FLOAT_KEYS:
            low, high = _FLOAT_KEYS[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise LocalizeError("settings.%s: expected a number %g..%g, got %r" % (key, low, high, value))
            value = float(value)
        elif key == "expected_busbw":
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
                raise LocalizeError("settings.expected_busbw: expected a positive number (GB/s) or null, got %r" % (value,))
        elif key == "cross_rail":
            if not isinstance(value, bool):
                raise LocalizeError("settings.cross_rail: expected true or false, got %r" % (value,))
        out[key] = value
    return out


# ---------------------------------------------------------------------------
# Topology
# ---------------------------------------------------------------------------


def _speed_gbps(speed: Any) -> float | None:
    """'400G' -> 400.0 (Gbit/s); None when not given."""
    if speed is None:
        return None
    match = re.match(r"^(\d+(?:\.\d+)?)G$", str(speed))
    if not match:
        raise LocalizeError("cabling: speed %r is not of the form <n>G" % (speed,))
    return float(match.group(1))


class Topology:
    """The hosts, their rails, leaves and uplinks, as ``fabric_plan_result.cabling`` describes them."""

    def __init__(self) -> None:
        self.hosts: list[str] = []
        self.rails: dict[str, dict[int, str]] = {}          # host -> rail -> nic
        self.nic_end: dict[tuple[str, str], tuple[str, str]] = {}   # (host, nic) -> (leaf, port)
        self.nic_gbps: dict[tuple[str, str], float | None] = {}
        self.leaves: set[str] = set()
        self.uplinks: dict[str, list[tuple[str, str, str]]] = {}     # leaf -> [(port, spine, spine_port)]
        self.spines_of: dict[str, set[str]] = {}
        self.groups: list[list[str]] = []                    # hosts sharing the same leaves, in order

    def leaf(self, host: str, rail: int) -> str:
        return self.nic_end[(host, self.rails[host][rail])][0]

    def nic_components(self, host: str, nic: str) -> list[dict]:
        leaf, port = self.nic_end[(host, nic)]
        return [{"kind": "host", "name": host}, {"kind": "nic", "name": "%s:%s" % (host, nic)},
                {"kind": "link", "name": "%s:%s~%s:%s" % (host, nic, leaf, port)}]

    def path_components(self, a: str, nic_a: str, b: str, nic_b: str) -> tuple[str, list[dict]]:
        """The components every launch between (a, nic_a) and (b, nic_b) may cross: 'leaf' or 'spine' path."""
        comps = self.nic_components(a, nic_a) + self.nic_components(b, nic_b)
        leaf_a, leaf_b = self.nic_end[(a, nic_a)][0], self.nic_end[(b, nic_b)][0]
        comps.append({"kind": "leaf", "name": leaf_a})
        if leaf_a == leaf_b:
            return "leaf", comps
        comps.append({"kind": "leaf", "name": leaf_b})
        common = self.spines_of[leaf_a] & self.spines_of[leaf_b]
        spines = common or (self.spines_of[leaf_a] | self.spines_of[leaf_b])
        for leaf in (leaf_a, leaf_b):
            for port, spine, spine_port in self.uplinks[leaf]:
                if spine in spines:
                    comps.append({"kind": "uplink", "name": "%s:%s~%s:%s" % (leaf, port, spine, spine_port)})
        comps += [{"kind": "spine", "name": s} for s in sorted(spines, key=_natural)]
        return "spine", comps


def _natural(text: str) -> list:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", str(text))]


def topology(cabling: dict, hosts: list[str]) -> Topology:
    """The topology of ``hosts`` from ``fabric_plan_result.cabling`` (plugins/module_utils/_intent/_topology.py ``plan()``)."""
    if not isinstance(cabling, dict) or not isinstance(cabling.get("hosts"), dict) or not isinstance(cabling.get("switches"), dict):
        raise LocalizeError("cabling: expected fabric_plan_result.cabling with 'hosts' and 'switches' mappings, got %r" % (type(cabling).__name__,))
    if not isinstance(hosts, list) or len(hosts) < 2:
        raise LocalizeError("hosts: at least 2 hosts are needed to pair, got %r" % (hosts,))
    topo = Topology()
    switches = cabling["switches"]
    for host in hosts:
        if not isinstance(host, str) or not _NAME.match(host):
            raise LocalizeError("hosts: %r is not a host name" % (host,))
        if host in topo.rails:
            raise LocalizeError("hosts: %s is listed twice" % host)
        entry = cabling["hosts"].get(host)
        if not entry or not entry.get("rails"):
            raise LocalizeError("cabling.hosts.%s: no rails described (every host to localize needs its NICs' rails and peers)" % host)
        rails = {}
        for rail, nic in entry["rails"].items():
            try:
                index = int(rail)
            except (TypeError, ValueError):
                raise LocalizeError("cabling.hosts.%s.rails: rail %r is not a number" % (host, rail)) from None
            nic_entry = (entry.get("nics") or {}).get(nic)
            peer = (nic_entry or {}).get("peer") or {}
            if "port" not in peer or peer.get("host") not in switches:
                raise LocalizeError("cabling.hosts.%s.nics.%s: no switch port as peer (got %r)" % (host, nic, peer or None))
            rails[index] = nic
            topo.nic_end[(host, nic)] = (peer["host"], peer["port"])
            topo.nic_gbps[(host, nic)] = _speed_gbps(nic_entry.get("speed"))
            topo.leaves.add(peer["host"])
        topo.rails[host] = dict(sorted(rails.items()))
        topo.hosts.append(host)
    for leaf in topo.leaves:
        ups = []
        for port, entry in (switches[leaf].get("ports") or {}).items():
            peer = entry.get("peer") or {}
            if "port" in peer and peer.get("host") in switches:
                peer_ports = switches[peer["host"]].get("ports") or {}
                if any("nic" in (p.get("peer") or {}) for p in peer_ports.values()):
                    continue  # a leaf-leaf cable (peer link), not an uplink
                ups.append((port, peer["host"], peer["port"]))
        topo.uplinks[leaf] = sorted(ups, key=lambda u: _natural(u[0]))
        topo.spines_of[leaf] = {u[1] for u in ups}
    by_key: dict[tuple, list[str]] = {}
    for host in topo.hosts:
        key = tuple(topo.leaf(host, r) for r in topo.rails[host])
        by_key.setdefault(key, []).append(host)
    topo.groups = [sorted(g, key=_natural) for _key, g in sorted(by_key.items(), key=lambda kv: [_natural(x) for x in kv[0]])]
    return topo


def _gpu_rounds(history: list[dict]) -> list[dict]:
    return [h for h in history if h.get("purpose") != "loopback"]
