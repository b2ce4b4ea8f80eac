# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""_localize, the flag rule: record() and loopback_round() (the package docstring says what the whole does)."""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._localize._base import (
    LocalizeError,
    Topology,
    _gpu_rounds,
    check_settings,
)

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
