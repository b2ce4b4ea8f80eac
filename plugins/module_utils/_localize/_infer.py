# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""_localize, inference: infer() and cost() (the package docstring says what the whole does)."""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._localize._base import (
    KINDS,
    Topology,
    _gpu_rounds,
    _natural,
    check_settings,
)

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
                        # a loopback test measures ib_write_bw's Gbit/s, a pair launch nccl-tests' busbw in GB/s
                        "unit": "Gb/s" if job.get("kind") == "loopback" else "GB/s",
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
                     "expected": obs[i]["expected"], "unit": obs[i]["unit"], "slow": obs[i]["slow"]} for i in idx]
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
