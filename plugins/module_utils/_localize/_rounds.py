# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""_localize, the schedule: plan_round() (the package docstring says what the whole does)."""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._localize._base import (
    Topology,
    _gpu_rounds,
    check_settings,
)
from ansible_collections.lossless.fabric.plugins.module_utils._localize._flags import (
    _reference_of,
)
from ansible_collections.lossless.fabric.plugins.module_utils._localize._infer import (
    _observations,
    infer,
)

# ---------------------------------------------------------------------------
# Rounds
# ---------------------------------------------------------------------------


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
