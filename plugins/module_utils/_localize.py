# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Find the bad part of the fabric in a few rounds of 2-node, 1-GPU-per-node benchmarks (issue 17).

Pure logic: no Ansible, no launcher.  The caller (module ``nccl_localize``) asks
``plan_round`` for the next round, launches its jobs, hands the measured busbw to
``record`` and keeps the returned history entry; ``infer`` names the suspects.

The algorithm is ``docs/localization.md``: round 1 pairs hosts under the same
leaves (intra-leaf), round 2 pairs leaf groups across the spines (cross-leaf), or a
shifted intra-leaf matching on a single leaf group, or cross-rail pairs on a 2-host
fabric; round 3 a second cross-leaf matching where more than two leaf groups exist
and an uplink is suspected; then a verify round pairs each host-side suspect with a
known-good host (Google cluster-health-scanner's second pass).  Every job is one
rail of one pair.  Flags: robust sigma (1.4826 x MAD) and a minimum drop against
the round's reference, or an expected floor.  Inference: a greedy noise-tolerant
hitting set (slow/fast counts, ratio >= 0.6, at least 2 slow observations), then a
partial pass for ECMP uplinks and flapping links.
"""

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
    """The topology of ``hosts`` from ``fabric_plan_result.cabling`` (plugins/module_utils/_topology.py ``plan()``)."""
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


# ---------------------------------------------------------------------------
# Rounds
# ---------------------------------------------------------------------------


def _gpu_rounds(history: list[dict]) -> list[dict]:
    return [h for h in history if h.get("purpose") != "loopback"]


def _pairs_in(group: list[str], shift: int) -> list[tuple[str, str]]:
    """A matching of ``group``: (0,1),(2,3).. for shift 0, (1,2),(3,4),..,(n-1,0) for shift 1."""
    n = len(group)
    if n < 2:
        return []
    order = group[shift % n:] + group[:shift % n] if shift else group
    return [(order[i], order[i + 1]) for i in range(0, n - 1, 2)]


def _cross(groups: list[list[str]], step: int) -> tuple[list[tuple[str, str]], list[str]]:
    """Group g with group g ^ step (g ^ step < len(groups)); hosts left over are returned."""
    pairs, left = [], []
    done = set()
    for g, hosts in enumerate(groups):
        if g in done:
            continue
        other = g ^ step
        if other >= len(groups) or other in done or other == g:
            left += hosts
            done.add(g)
            continue
        done |= {g, other}
        mates = groups[other]
        k = min(len(hosts), len(mates))
        pairs += [(hosts[i], mates[i]) for i in range(k)]
        left += hosts[k:] + mates[k:]
    return pairs, left


def _same_rail_jobs(topo: Topology, pairs: list[tuple[str, str]], repeats: int) -> list[dict]:
    jobs = []
    for a, b in pairs:
        for rail in topo.rails[a]:
            if rail not in topo.rails[b]:
                continue
            for k in range(repeats):
                jobs.append(_job(topo, a, rail, b, rail, k))
    return jobs


def _job(topo: Topology, a: str, rail_a: int, b: str, rail_b: int, repeat: int) -> dict:
    nic_a, nic_b = topo.rails[a][rail_a], topo.rails[b][rail_b]
    path, comps = topo.path_components(a, nic_a, b, nic_b)
    return {"id": "", "kind": "pair", "hosts": [a, b], "rail": rail_a if rail_a == rail_b else None, "rails": {a: rail_a, b: rail_b},
            "nics": {a: nic_a, b: nic_b}, "gpu": rail_a if rail_a == rail_b else None, "gpus": {a: rail_a, b: rail_b},
            "path": path, "components": comps, "repeat": repeat,
            "line_gbps": min((g for g in (topo.nic_gbps[(a, nic_a)], topo.nic_gbps[(b, nic_b)]) if g), default=None)}


def _number(history: list[dict]) -> int:
    return len(_gpu_rounds(history)) + 1


def _finish(number: int, purpose: str, jobs: list[dict], history: list[dict]) -> dict | None:
    """The round; ``prior`` is the reference the earlier GPU rounds measured (a verify round and small pools use it)."""
    if not jobs:
        return None
    for i, job in enumerate(jobs):
        job["id"] = "r%d-j%d" % (number, i)
    out = {"number": number, "purpose": purpose, "jobs": jobs}
    prior = _reference_of(history)
    if prior:
        out["prior"] = prior
    return out


def plan_round(topo: Topology, history: list[dict], settings: dict | None = None) -> dict | None:
    """The next round to run, or None when done (see the module docstring for the schedule)."""
    cfg = check_settings(settings)
    done = _gpu_rounds(history)
    number = len(done) + 1
    if len(done) >= cfg["max_rounds"]:
        return None
    purposes = [h["purpose"] for h in done]
    if not done:
        pairs, left = [], []
        for group in topo.groups:
            pairs += _pairs_in(group, 0)
            if len(group) % 2:
                left.append(group[-1])
        pairs += _pairs_in(left, 0)
        return _finish(number, "intra-leaf", _same_rail_jobs(topo, pairs, cfg["repeats"]), history)
    if len(done) == 1:
        second = _second_round(topo, cfg)
        if second is not None:
            return _finish(number, second[0], second[1], history)
    result = infer(topo, history, cfg)
    if not result["suspects"] and not result["unexplained"]:
        return None
    if "cross-leaf-2" not in purposes and len(topo.groups) > 2 and any(
            s["component"]["kind"] in ("uplink", "spine") for s in result["suspects"]):
        pairs, left = _cross(topo.groups, 2)
        pairs += _pairs_in(left, 1)
        return _finish(number, "cross-leaf-2", _same_rail_jobs(topo, pairs, _cross_repeats(topo, cfg)), history)
    jobs = _verify_jobs(topo, history, result, cfg)
    return _finish(number, "verify", jobs, history)


def _cross_repeats(topo: Topology, cfg: dict) -> int:
    """Launches per pair and rail in a cross-leaf round: ``repeats``, raised so that each leaf's uplinks are drawn
    ``ecmp_draws`` times on average (a launch takes one uplink of its leaf: ECMP, unseen)."""
    uplinks = max((len(u) for u in topo.uplinks.values()), default=0)
    smallest = min(len(g) for g in topo.groups)
    need = -(-cfg["ecmp_draws"] * uplinks // max(smallest, 1))
    return max(cfg["repeats"], min(need, 10))


def _second_round(topo: Topology, cfg: dict) -> tuple[str, list[dict]] | None:
    """Round 2: cross-leaf (leaf groups paired across the spines), a shifted intra-leaf matching, or cross-rail."""
    groups = topo.groups
    if len(groups) > 1 and any(topo.uplinks[leaf] for leaf in topo.leaves):
        pairs, left = _cross(groups, 1)
        pairs += _pairs_in(left, 1)
        return "cross-leaf", _same_rail_jobs(topo, pairs, _cross_repeats(topo, cfg))
    if max(len(g) for g in groups) > 2:
        pairs, left = [], []
        for group in groups:
            pairs += _pairs_in(group, 1)
        return "intra-leaf-shifted", _same_rail_jobs(topo, pairs, cfg["repeats"])
    if not cfg["cross_rail"] or len(topo.hosts) != 2:
        return None
    a, b = topo.hosts
    rails = sorted(set(topo.rails[a]) & set(topo.rails[b]))
    if len(rails) < 2:
        return None
    jobs = []
    for i, rail in enumerate(rails):
        other = rails[(i + 1) % len(rails)]
        leaf_a, leaf_b = topo.leaf(a, rail), topo.leaf(b, other)
        if leaf_a != leaf_b and not (topo.spines_of[leaf_a] or topo.spines_of[leaf_b]):
            return None  # the rails' leaves are not joined by a spine: no cross-rail path
        for k in range(cfg["repeats"]):
            jobs.append(_job(topo, a, rail, b, other, k))
    return "cross-rail", jobs


def _verify_jobs(topo: Topology, history: list[dict], result: dict, cfg: dict) -> list[dict]:
    """Each host-side suspect (host, NIC, link; and the ends of unexplained slow jobs) against a known-good partner."""
    obs = _observations(history)
    dirty_hosts = set()
    for o in obs:
        if o["slow"]:
            dirty_hosts |= {c[1].split(":")[0] for c in o["components"] if c[0] == "host"}
    verified = set()
    partners_of: dict[tuple[str, int], set[str]] = {}
    for h in history:
        for job in h.get("jobs") or []:
            if job.get("kind") != "pair":
                continue
            a, b = job["hosts"]
            ra, rb = job["rails"][a], job["rails"][b]
            partners_of.setdefault((a, ra), set()).add(b)
            partners_of.setdefault((b, rb), set()).add(a)
            if h.get("purpose") == "verify":
                verified.add((a, ra))
    wanted: list[tuple[str, int]] = []
    for suspect in result["suspects"]:
        for comp in [suspect["component"]] + suspect["group"]:
            wanted += _host_rails(topo, comp)
    if not any(h.get("purpose") == "verify" for h in history):  # slow launches nothing explains: verified once
        for job_ref in result["unexplained"]:
            wanted += [(h, job_ref["rails"][h]) for h in job_ref["hosts"]]
    used: set[tuple[str, int]] = set()
    jobs: list[dict] = []
    seen = set()
    for host, rail in wanted:
        if (host, rail) in seen or (host, rail) in verified or (host, rail) in used:
            continue
        seen.add((host, rail))
        leaf = topo.leaf(host, rail)
        candidates = [h for h in topo.hosts if h != host and rail in topo.rails[h] and h not in dirty_hosts and (h, rail) not in used]
        if not candidates:
            continue
        fresh = [h for h in candidates if h not in partners_of.get((host, rail), set())] or candidates
        near = [h for h in fresh if topo.leaf(h, rail) == leaf] or fresh
        partner = near[0]
        used |= {(host, rail), (partner, rail)}
        for k in range(cfg["verify_repeats"]):
            jobs.append(_job(topo, host, rail, partner, rail, k))
    if any(h.get("purpose") in ("verify", "cross-leaf-2") for h in history):
        return jobs  # the second cross-leaf matching already drew new ECMP paths through the suspected uplinks
    # ECMP: an uplink shows in a share of the launches that may cross it; run those pairs again for more draws.
    uplinks = {(c["kind"], c["name"]) for s in result["suspects"] for c in [s["component"]] + s["group"] if c["kind"] in ("uplink", "spine")}
    slow_spine = {u["job"] for u in result["unexplained"] if u["path"] == "spine"}
    spine_jobs = [job for h in history for job in h.get("jobs") or [] if job.get("path") == "spine" and not job.get("repeat")]
    again = set()
    for job in spine_jobs:
        comps = {(c["kind"], c["name"]) for c in job["components"]}
        if job["id"] in slow_spine or comps & uplinks:
            again.add(frozenset(c for c in comps if c[0] == "leaf"))
    for job in spine_jobs:
        leaves = frozenset((c["kind"], c["name"]) for c in job["components"] if c["kind"] == "leaf")
        a, b = job["hosts"]
        ends = {(a, job["rails"][a]), (b, job["rails"][b])}
        if leaves not in again or ends & used:
            continue
        used |= ends
        for k in range(cfg["verify_repeats"]):
            jobs.append(_job(topo, a, job["rails"][a], b, job["rails"][b], k))
    return jobs


def _host_rails(topo: Topology, comp: dict) -> list[tuple[str, int]]:
    kind, name = comp["kind"], comp["name"]
    if kind == "host" and name in topo.rails:
        return [(name, r) for r in topo.rails[name]]
    if kind in ("nic", "link"):
        host, nic = name.split("~")[0].split(":", 1)
        for rail, n in topo.rails.get(host, {}).items():
            if n == nic:
                return [(host, rail)]
    return []


# ---------------------------------------------------------------------------
# Flags
# ---------------------------------------------------------------------------


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2.0


def _reference(values: list[float], cfg: dict, prior: dict | None = None) -> dict:
    """{"ratio": reference value, "sigma": robust sigma} of a pool of per-line-rate ratios: its median and
    1.4826 x MAD; a pool under ``min_pool`` values takes the best of its values and the earlier rounds' reference,
    with sigma = noise_pct of it."""
    if not values:
        return {"ratio": None, "sigma": None, "pool": 0}
    if len(values) < cfg["min_pool"]:
        ref = max(values + ([prior["ratio"]] if prior and prior.get("ratio") is not None else []))
        return {"ratio": ref, "sigma": ref * cfg["noise_pct"] / 100.0, "pool": len(values), "rule": "best of a small pool"}
    med = _median(values)
    mad = _median([abs(v - med) for v in values])
    return {"ratio": med, "sigma": 1.4826 * mad, "pool": len(values), "rule": "median"}


def _slow(ratio: float | None, ref: dict, cfg: dict, floor_ratio: float | None) -> bool:
    if ratio is None:
        return True  # a failed launch counts as slow
    if floor_ratio is not None and ratio < floor_ratio:
        return True
    if ref.get("ratio") is None:
        return False
    below = ref["ratio"] - ratio
    return below > cfg["sigma_k"] * ref["sigma"] and below >= ref["ratio"] * cfg["min_drop_pct"] / 100.0


def _line_gbs(gbps: float | None) -> float:
    """Line rate in GB/s (400 Gbit/s -> 50 GB/s); 1.0 when the speed is unknown (values are then compared raw)."""
    return gbps / 8.0 if gbps else 1.0


def _reference_of(history: list[dict]) -> dict | None:
    """The reference the GPU rounds so far measured: the latest round's own median where its pool was large
    enough, else the best reference any round had (small fabrics: a slow round cannot lower it)."""
    refs = [entry.get("reference") or {} for entry in _gpu_rounds(history) if entry.get("purpose") != "verify"]
    for ref in reversed(refs):
        if ref.get("rule") == "median":
            return ref
    refs = [r for r in refs if r.get("ratio") is not None]
    return max(refs, key=lambda r: r["ratio"]) if refs else None


def record(round_: dict, measured: dict, settings: dict | None = None) -> dict:
    """The history entry of a round: each job's busbw (GB/s, None = failed), its expectation and its flag."""
    cfg = check_settings(settings)
    if not isinstance(measured, dict):
        raise LocalizeError("measured: expected a mapping of job id to busbw, got %r" % (measured,))
    ids = {job["id"] for job in round_["jobs"]}
    for key, value in measured.items():
        if key not in ids:
            raise LocalizeError("measured.%s: no such job in round %s" % (key, round_["number"]))
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            raise LocalizeError("measured.%s: expected busbw in GB/s (a number >= 0) or null, got %r" % (key, value))
    jobs = []
    ratios = []
    for job in round_["jobs"]:
        job = dict(job)
        line = _line_gbs(job.get("line_gbps"))
        job["line_gbs"] = line
        job["busbw"] = measured.get(job["id"])
        job["ratio"] = None if job["busbw"] is None else job["busbw"] / line
        if job["ratio"] is not None:
            ratios.append(job["ratio"])
        jobs.append(job)
    prior = round_.get("prior")
    if prior and round_["purpose"] == "verify":
        ref = dict(prior, rule="earlier rounds")  # a verify round's jobs are chosen suspects: not a sample of the fabric
    else:
        ref = _reference(ratios, cfg, prior)
    floor = cfg["expected_busbw"]
    for job in jobs:
        floor_ratio = floor / job["line_gbs"] if floor else None
        job["slow"] = _slow(job["ratio"], ref, cfg, floor_ratio)
        expected = [x for x in ((ref.get("ratio") or 0) * job["line_gbs"], floor or 0) if x]
        job["expected"] = round(max(expected), 3) if expected else None
    return {"number": round_["number"], "purpose": round_["purpose"], "jobs": jobs, "reference": ref}


def loopback_round(topo: Topology, results: dict, expected_gbps: float | None = None, settings: dict | None = None) -> dict:
    """Round 0: ib_write_bw of each NIC to itself ({"host:nic": Gbit/s or None}); host and NIC only, no link."""
    cfg = check_settings(settings)
    if not isinstance(results, dict):
        raise LocalizeError("loopback: expected a mapping of 'host:nic' to Gbit/s, got %r" % (results,))
    if expected_gbps is not None and (isinstance(expected_gbps, bool) or not isinstance(expected_gbps, (int, float)) or expected_gbps <= 0):
        raise LocalizeError("loopback expected_gbps: expected a positive number or null, got %r" % (expected_gbps,))
    jobs, ratios = [], []
    for key, value in results.items():
        host, _sep, nic = str(key).partition(":")
        if (host, nic) not in topo.nic_end:
            raise LocalizeError("loopback.%s: no such host NIC in the cabling" % key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            raise LocalizeError("loopback.%s: expected Gbit/s (a number >= 0) or null, got %r" % (key, value))
        line = topo.nic_gbps.get((host, nic)) or 1.0
        ratio = None if value is None else value / line
        if ratio is not None:
            ratios.append(ratio)
        comps = topo.nic_components(host, nic)[:2]
        rail = next(r for r, n in topo.rails[host].items() if n == nic)
        jobs.append({"id": "loopback-%s:%s" % (host, nic), "kind": "loopback", "hosts": [host], "nics": {host: nic}, "rails": {host: rail},
                     "components": comps, "busbw": value, "ratio": ratio, "line_gbs": line})
    ref = _reference(ratios, cfg)
    for job in jobs:
        floor = expected_gbps / job["line_gbs"] if expected_gbps else None
        job["slow"] = _slow(job["ratio"], ref, cfg, floor)
        job["expected"] = round(max((ref.get("ratio") or 0) * job["line_gbs"], expected_gbps or 0), 3) or None
    return {"number": 0, "purpose": "loopback", "jobs": jobs, "reference": ref}


# ---------------------------------------------------------------------------
# Inference
# ---------------------------------------------------------------------------


def _observations(history: list[dict]) -> list[dict]:
    """One observation per launch (and per loopback test) with its components, slow or fast."""
    obs = []
    for entry in history:
        for job in entry.get("jobs") or []:
            if "slow" not in job:
                continue  # a planned round not recorded yet
            obs.append({"round": entry["number"], "purpose": entry["purpose"], "job": job["id"], "hosts": job["hosts"],
                        "rails": job.get("rails") or {}, "path": job.get("path"), "slow": bool(job["slow"]),
                        "busbw": job.get("busbw"), "expected": job.get("expected"),
                        "components": {(c["kind"], c["name"]) for c in job["components"]}})
    return obs


def _describe(topo: Topology, comp: tuple[str, str]) -> dict:
    kind, name = comp
    out: dict[str, Any] = {"component": {"kind": kind, "name": name}, "host": None, "rail": None, "leaf_port": None}
    if kind == "host":
        out["host"] = name
    elif kind in ("nic", "link"):
        host, nic = name.split("~")[0].split(":", 1)
        out["host"] = host
        out["rail"] = next((r for r, n in topo.rails.get(host, {}).items() if n == nic), None)
        end = topo.nic_end.get((host, nic))
        out["leaf_port"] = "%s:%s" % end if end else None
    elif kind == "uplink":
        out["leaf_port"] = name.split("~")[0]
    return out


def infer(topo: Topology, history: list[dict], settings: dict | None = None) -> dict:
    """The suspects, ranked, with their evidence; the verdict; the cost."""
    cfg = check_settings(settings)
    obs = _observations(history)
    cover: dict[tuple[str, str], list[int]] = {}
    for i, o in enumerate(obs):
        for comp in o["components"]:
            cover.setdefault(comp, []).append(i)
    slow_of = {c: sum(1 for i in idx if obs[i]["slow"]) for c, idx in cover.items()}
    unexplained = {i for i, o in enumerate(obs) if o["slow"]}
    picked: list[tuple[tuple[str, str], list, str]] = []
    taken: set = set()

    def pick(partial: bool) -> bool:
        background = len(unexplained) / float(len(obs)) if obs else 0.0
        best, best_key = None, None
        pool = {c for i in unexplained for c in obs[i]["components"]} - taken
        for comp in sorted(pool, key=lambda c: (KINDS.index(c[0]), _natural(c[1]))):
            idx = cover[comp]
            hit = sum(1 for i in idx if i in unexplained)
            share = slow_of[comp] / float(len(idx))
            if hit < cfg["min_slow"]:
                continue
            if partial:
                if share < cfg["partial_factor"] * background:
                    continue
                # consistent across partners or rounds: not one pair's repeats that ECMP happened to send the same way
                slow_idx = [i for i in idx if obs[i]["slow"]]
                if len({frozenset(obs[i]["hosts"]) for i in slow_idx}) < 2 and len({obs[i]["round"] for i in slow_idx}) < 2:
                    continue
            elif share < cfg["accuse_ratio"]:
                continue
            # partial: the most concentrated first (a spine is on every cross-leaf launch, a bad uplink on few)
            key = (share, hit, -len(idx), -KINDS.index(comp[0])) if partial else (hit, share, -len(idx), -KINDS.index(comp[0]))
            if best_key is None or key > best_key:
                best, best_key = comp, key
        if best is None:
            return False
        # cannot be told from best: the same launches, or the same slow launches with as many fast ones
        same = set(cover[best])
        slow_set = {i for i in same if obs[i]["slow"]}
        group = sorted((c for c in cover if c != best and c not in taken and (
            set(cover[c]) == same or (len(cover[c]) == len(same) and {i for i in cover[c] if obs[i]["slow"]} == slow_set))),
            key=lambda c: (KINDS.index(c[0]), _natural(c[1])))
        taken.add(best)
        taken.update(group)
        picked.append((best, group, "partial" if partial else "ratio"))
        unexplained.difference_update(cover[best])
        return True

    # Loopback is a direct test of host + NIC: a host whose every NIC is slow in loopback is host side, whatever
    # its pair jobs say (on a 2-host fabric every pair job shares the slow host, so no pair can be the reference).
    loops: dict[str, list[int]] = {}
    for i, o in enumerate(obs):
        if o["purpose"] == "loopback":
            loops.setdefault(o["hosts"][0], []).append(i)
    for host in sorted(loops, key=_natural):
        idx = loops[host]
        if len(idx) >= max(2, cfg["min_slow"]) and all(obs[i]["slow"] for i in idx):
            taken.add(("host", host))
            picked.append((("host", host), [], "loopback"))
            unexplained.difference_update(cover[("host", host)])
    while unexplained and pick(False):
        pass
    while unexplained and pick(True):
        pass
    # Prune: a pick whose slow observations the other picks all explain adds nothing (a NIC that ECMP happened to
    # put on two launches through a bad uplink, say) and is dropped, least evidence first.
    for entry in sorted(picked, key=lambda p: slow_of[p[0]]):
        own = {i for i in cover[entry[0]] if obs[i]["slow"]}
        rest = set()
        for other in picked:
            if other is not entry:
                rest.update(i for i in cover[other[0]] if obs[i]["slow"])
        if own <= rest and entry[2] != "loopback":
            picked.remove(entry)
    suspects = []
    for rank, (comp, group, rule) in enumerate(picked, 1):
        idx = cover[comp]
        entry = _describe(topo, comp)
        slow = slow_of[comp]
        evidence = [{"round": obs[i]["round"], "job": obs[i]["job"], "hosts": obs[i]["hosts"], "busbw": obs[i]["busbw"],
                     "expected": obs[i]["expected"], "slow": obs[i]["slow"]} for i in idx]
        evidence.sort(key=lambda e: (not e["slow"], e["round"], e["job"]))
        entry.update(rank=rank, slow=slow, fast=len(idx) - slow, ratio=round(slow / float(len(idx)), 3), rule=rule, partial=rule == "partial",
                     evidence=evidence[:24], group=[{"kind": k, "name": n} for k, n in group])
        suspects.append(entry)
    verified = _verified_fast(obs)
    left = []
    for i in sorted(unexplained):
        o = obs[i]
        ends = [(h, o["rails"].get(h)) for h in o["hosts"]]
        if not all(end in verified for end in ends):
            left.append({"round": o["round"], "job": o["job"], "hosts": o["hosts"], "rails": o["rails"], "busbw": o["busbw"],
                         "expected": o["expected"], "path": o["path"]})
    if suspects:
        verdict = "ambiguous" if any(s["group"] for s in suspects) else "found"
    elif left:
        verdict = "inconclusive"
    else:
        verdict = "clean"
    return {"verdict": verdict, "suspects": suspects, "unexplained": left, **cost(history, cfg)}


def _verified_fast(obs: list[dict]) -> set[tuple[str, Any]]:
    """(host, rail) ends that a verify round measured fast in every launch."""
    seen: dict[tuple[str, Any], bool] = {}
    for o in obs:
        if o["purpose"] != "verify":
            continue
        for host in o["hosts"]:
            end = (host, o["rails"].get(host))
            seen[end] = seen.get(end, True) and not o["slow"]
    return {end for end, fast in seen.items() if fast}


def cost(history: list[dict], settings: dict | None = None) -> dict:
    """GPU rounds (loopback not counted), waves (launch slots one after another: a round's repeats run in turn),
    launches, GPU-minutes (a launch = 2 GPUs x minutes_per_launch)."""
    cfg = check_settings(settings)
    rounds = _gpu_rounds(history)
    jobs = sum(len(r.get("jobs") or []) for r in rounds)
    loopback = sum(len(r.get("jobs") or []) for r in history if r.get("purpose") == "loopback")
    waves = sum(1 + max([job.get("repeat") or 0 for job in r.get("jobs") or []] + [0]) for r in rounds)
    return {"rounds": len(rounds), "waves": waves, "jobs": jobs, "gpu_minutes": round(jobs * 2 * cfg["minutes_per_launch"], 3),
            "loopback_tests": loopback}


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def component_text(comp: dict) -> str:
    """{"kind": "nic", "name": "gpu1:mlx5_1"} -> 'nic gpu1:mlx5_1' (the one name used in reports and docs)."""
    return "%s %s" % (comp["kind"], comp["name"])


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def report_markdown(result: dict) -> str:
    """The suspects, ranked, with their evidence and the cost, as Markdown."""
    lines = ["# Localization: %s" % result["verdict"], "",
             "%d rounds (%d waves of launches), %d launches, %s GPU-minutes (loopback tests: %d)."
             % (result["rounds"], result.get("waves", result["rounds"]), result["jobs"], result["gpu_minutes"], result.get("loopback_tests", 0)), ""]
    if not result["suspects"]:
        if result["verdict"] == "clean":
            lines.append("No component is slow: every launch reached its reference, or a slow one was cleared by the verify round.")
        else:
            lines.append("Slow launches that no component explains consistently (below): nothing is accused.")
    else:
        lines += ["| rank | component | leaf port | slow | fast | cannot be told from |", "|---|---|---|---|---|---|"]
        for s in result["suspects"]:
            group = ", ".join(component_text(c) for c in s["group"]) or "-"
            name = component_text(s["component"]) + (" (partial: slow in part of its launches)" if s["partial"] else "")
            lines.append("| %d | %s | %s | %d | %d | %s |" % (s["rank"], _cell(name), _cell(s["leaf_port"] or "-"), s["slow"], s["fast"], _cell(group)))
        for s in result["suspects"]:
            lines += ["", "## %d. %s" % (s["rank"], _cell(component_text(s["component"]))), "",
                      "| round | job | hosts | busbw (GB/s) | expected (GB/s) | slow |", "|---|---|---|---|---|---|"]
            for e in s["evidence"]:
                cells = (e["round"], e["job"], _cell(" ".join(e["hosts"])), "failed" if e["busbw"] is None else "%.2f" % e["busbw"],
                         "-" if e["expected"] is None else "%.2f" % e["expected"], "yes" if e["slow"] else "no")
                lines.append("| %s | %s | %s | %s | %s | %s |" % cells)
    if result["unexplained"]:
        lines += ["", "Slow launches left unexplained:", ""]
        for u in result["unexplained"]:
            cells = (u["round"], u["job"], _cell(" ".join(u["hosts"])), "failed" if u["busbw"] is None else "%.2f" % u["busbw"], u["expected"])
            lines.append("- round %s, %s (%s): %s GB/s against %s" % cells)
    return "\n".join(lines) + "\n"


def _clean(text: Any, what: str, limit: int) -> str:
    if not isinstance(text, str) or not text.strip():
        raise LocalizeError("%s: expected a non-empty string, got %r" % (what, text))
    if _CONTROL.search(text):
        raise LocalizeError("%s: %r carries a newline or control character" % (what, text))
    if len(text) > limit:
        raise LocalizeError("%s: %d characters, at most %d" % (what, len(text), limit))
    return text


def exclusion(result: dict, kind: str, reason: str) -> list[dict]:
    """What to take out of service for the accused host-side components (host, NIC, link): one entry per host.

    slurm: the argv of ``scontrol update nodename=<h> state=drain reason=<r>``; kubernetes: cordon the node and
    taint it ``lossless.fabric/localize=suspect:NoSchedule``, the reason as an annotation.  Switch-side suspects
    (leaf, uplink, spine) drain no host.  Nothing is run here."""
    if kind not in ("slurm", "kubernetes"):
        raise LocalizeError("exclude: expected 'slurm' or 'kubernetes', got %r" % (kind,))
    reason = _clean(reason, "reason", REASON_MAX)
    out, seen = [], set()
    for suspect in result.get("suspects") or []:
        for comp in [suspect["component"]] + list(suspect.get("group") or []):
            if comp["kind"] not in ("host", "nic", "link"):
                continue
            host = comp["name"].split("~")[0].split(":")[0]
            if host in seen:
                continue
            if not _NAME.match(host):
                raise LocalizeError("exclude: host %r is not a node name" % (host,))
            seen.add(host)
            why = _clean("%s (%s)" % (reason, component_text(comp)), "reason", REASON_MAX)
            entry = {"host": host, "component": comp, "rank": suspect["rank"], "ambiguous": bool(suspect.get("group"))}
            if kind == "slurm":
                entry["argv"] = ["scontrol", "update", "nodename=%s" % host, "state=drain", "reason=%s" % why]
            else:
                entry["node"] = host
                entry["cordon"] = True
                entry["taint"] = {"key": "lossless.fabric/localize", "value": "suspect", "effect": "NoSchedule"}
                entry["annotations"] = {"lossless.fabric/localize-reason": why}
            out.append(entry)
    return out


def superbench_pairwise(hosts: list[str]) -> list[list[tuple[str, str]]]:
    """SuperBench's pair-wise pattern (circle method): N-1 rounds (N odd: N, one host out per round), N/2 pairs each;
    every host meets every other exactly once."""
    if len(hosts) < 2:
        return []
    ring = list(hosts) + ([None] if len(hosts) % 2 else [])
    n = len(ring)
    rounds = []
    for _r in range(n - 1):
        pairs = [(ring[i], ring[n - 1 - i]) for i in range(n // 2)]
        rounds.append([p for p in pairs if None not in p])
        ring = [ring[0], ring[-1]] + ring[1:-1]
    return rounds
