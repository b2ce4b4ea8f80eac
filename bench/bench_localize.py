# SPDX-License-Identifier: GPL-3.0-or-later
"""Find the bad part (issue 17): rounds, launches and GPU-minutes to name the faulty component, and accuracy over
seeded runs, on the lab performance model (tests/lab/nccl/perfmodel.py), against SuperBench's pair-wise schedule.

    .venv/bin/python bench/bench_localize.py [--sizes 16 64 256 1024] [--runs 20]

The fabric: rail-optimized, 8 rails, scalable units of 32 hosts (16 hosts: 2 units of 8), one leaf per rail and
unit, 8 spines (every leaf one uplink to each), 400G, RoCE (ECMP: the model picks an uplink per launch, the
analyst cannot see which). Noise: log-normal sigma 0.02 per launch. Faults as ``lab_perf_faults`` writes them.
Each run: loopback (round 0, host side, no GPU), then every round ``_localize.plan_round`` asks for, measured on
the model, then ``infer``. A launch is 1 minute on 2 GPUs (1 per host). Prints one JSON line. Not a test.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".deps", "self"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))

from nccl import fabrics  # noqa: E402  # pylint: disable=wrong-import-position
from nccl.perfmodel import Fabric  # noqa: E402  # pylint: disable=wrong-import-position

from ansible_collections.lossless.fabric.plugins.module_utils import _localize  # noqa: E402  # pylint: disable=wrong-import-position

RAILS = 8
SPINES = 8
GPUS_PER_HOST = 8


def cabling_of(hosts: int) -> dict:
    units, per_unit = (2, 8) if hosts == 16 else (hosts // 32, 32)
    return fabrics.rail_optimized(units, per_unit, RAILS, SPINES)


def model(cabling: dict, faults: list, seed: int, noise: float) -> Fabric:
    return Fabric(fabrics.cables(cabling), faults, noise, seed)


def faults_for(kind: str, hosts: int, rng: random.Random) -> list:
    """A random fault of this kind (placed by the run's seed)."""

    def host() -> str:
        return "gpu%d" % rng.randint(1, hosts)

    def rail() -> int:
        return rng.randrange(RAILS)

    units = 2 if hosts == 16 else hosts // 32
    per_unit = hosts // units
    if kind == "nic":
        return [{"nic": "%s:mlx5_%d" % (host(), rail()), "factor": 0.5}]
    if kind == "host":
        return [{"host": host(), "factor": 0.6}]
    if kind == "link":
        return [{"link": "%s:mlx5_%d" % (host(), rail()), "factor": 0.5}]
    if kind in ("flap", "flap-r2"):
        return [{"flap": "%s:mlx5_%d" % (host(), rail()), "rate": 0.5, "factor": 0.3}]
    if kind == "leaf":
        return [{"leaf": "leaf-su%d-r%d" % (rng.randint(1, units), rail()), "factor": 0.7}]
    if kind == "uplink":
        return [{"uplink": "leaf-su%d-r%d:swp%d" % (rng.randint(1, units), rail(), per_unit + rng.randint(1, SPINES)), "factor": 0.5}]
    if kind == "two-nics":
        first = faults_for("nic", hosts, rng)
        while True:
            second = faults_for("nic", hosts, rng)
            if second[0]["nic"].split(":")[0] != first[0]["nic"].split(":")[0]:
                return first + second
    if kind == "nic+host":
        first = faults_for("nic", hosts, rng)
        while True:
            second = faults_for("host", hosts, rng)
            if second[0]["host"] != first[0]["nic"].split(":")[0]:
                return first + second
    return []


def localize(cabling: dict, topo: _localize.Topology, fabric: Fabric, settings: dict | None) -> dict:
    return fabrics.search(topo, fabric, settings)[0]


def score(result: dict, truth: set) -> dict:
    """exact: every fault named alone; grouped: every fault named, some inside an ambiguity group; missed: a fault
    named nowhere; false: a suspect entry (with its group) that holds no planted component."""
    entries = [{(c["kind"], c["name"]) for c in [s["component"]] + s["group"]} for s in result["suspects"]]
    named = set().union(*entries) if entries else set()
    false = sum(1 for e in entries if not e & truth)
    missed = len(truth - named)
    exact = not missed and not false and all(len(e) == 1 for e in entries) and len(entries) == len(truth)
    return {"exact": exact, "grouped": not missed and not exact, "missed": missed > 0, "false": false > 0}


def cell(size: int, cabling: dict, topo: _localize.Topology, kind: str, runs: int, noise: float, settings: dict | None) -> dict:
    counts = {"exact": 0, "grouped": 0, "missed": 0, "false": 0}
    rounds, waves, launches, minutes = [], [], [], []
    for seed in range(1, runs + 1):
        rng = random.Random("%s-%d-%d" % (kind, size, seed))
        faults = faults_for(kind, size, rng)
        fabric = model(cabling, faults, seed, noise)
        truth = {f["component"] for f in fabric.faults}
        result = localize(cabling, topo, fabric, settings)
        for key, value in score(result, truth).items():
            counts[key] += int(value)
        rounds.append(result["rounds"])
        waves.append(result["waves"])
        launches.append(result["jobs"])
        minutes.append(result["gpu_minutes"])
    return {"hosts": size, "fault": kind, "runs": runs, **counts, "rounds_mean": round(statistics.mean(rounds), 2), "rounds_max": max(rounds),
            "waves_mean": round(statistics.mean(waves), 2),
            "launches_mean": round(statistics.mean(launches), 1), "gpu_minutes_mean": round(statistics.mean(minutes), 1)}


def superbench(size: int, cabling: dict, runs: int, noise: float) -> dict:
    """SuperBench pair-wise (circle method, N-1 rounds) on the same model: every pair once, all 8 GPUs/NICs of
    both nodes per job. Flag: SuperBench's variance rule, a drop of more than 5% against the baseline (the fleet
    mean with failing values dropped until none is). The node named: the host in the most flagged pairs, alone (a
    count SuperBench leaves to the reader: its unit is the pair). One bad NIC per run."""
    hosts = sorted(cabling["hosts"], key=_localize._natural)  # pylint: disable=protected-access
    rounds = _localize.superbench_pairwise(hosts)
    found = 0
    for seed in range(1, runs + 1):
        rng = random.Random("superbench-%d-%d" % (size, seed))
        faults = faults_for("nic", size, rng)
        fabric = model(cabling, faults, seed, noise)
        values = {}
        for r, pairs in enumerate(rounds):
            for a, b in pairs:
                nics = [(h, "mlx5_%d" % k) for h in (a, b) for k in range(RAILS)]
                values[(a, b)] = fabric.job_busbw(nics, ("sb", r, a, b))
        pool = list(values.values())
        while True:
            base = statistics.mean(pool)
            kept = [v for v in pool if (v - base) / base >= -0.05]
            if len(kept) == len(pool):
                break
            pool = kept
        flagged = [p for p, v in values.items() if (v - base) / base < -0.05]
        count: dict = {}
        for pair in flagged:
            for host in pair:
                count[host] = count.get(host, 0) + 1
        top = max(count.values(), default=0)
        if [h for h, c in count.items() if c == top] == [faults[0]["nic"].split(":")[0]]:
            found += 1
    return {"hosts": size, "rounds": len(rounds), "launches": sum(len(p) for p in rounds),
            "gpu_minutes": sum(len(p) for p in rounds) * 2 * GPUS_PER_HOST, "runs": runs, "node_found": found}


KINDS = ("none", "nic", "host", "link", "flap", "flap-r2", "leaf", "uplink", "two-nics", "nic+host")
SETTINGS = {"flap-r2": {"repeats": 2}}  # a flapping link (slow in half its launches), 2 launches per pair and rail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 64, 256, 1024])
    parser.add_argument("--runs", type=int, default=20, help="seeded runs per size and fault kind (1,024 hosts: a quarter)")
    parser.add_argument("--superbench-runs", type=int, default=5)
    parser.add_argument("--superbench-max", type=int, default=256, help="largest size SuperBench is simulated at")
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--kinds", nargs="+", default=list(KINDS))
    args = parser.parse_args()
    rows, baseline = [], []
    started = time.perf_counter()
    for size in args.sizes:
        cabling = cabling_of(size)
        hosts = sorted(cabling["hosts"], key=_localize._natural)  # pylint: disable=protected-access
        topo = _localize.topology(cabling, hosts)
        runs = args.runs if size < 1024 else max(2, args.runs // 4)
        for kind in args.kinds:
            rows.append(cell(size, cabling, topo, kind, runs, args.noise, SETTINGS.get(kind)))
            print(json.dumps(rows[-1]), file=sys.stderr)
        if size <= args.superbench_max:
            baseline.append(superbench(size, cabling, args.superbench_runs, args.noise))
        else:
            launches = (size - 1) * (size // 2)
            baseline.append({"hosts": size, "rounds": size - 1, "launches": launches, "gpu_minutes": launches * 2 * GPUS_PER_HOST,
                             "runs": 0, "node_found": None})
        print(json.dumps(baseline[-1]), file=sys.stderr)
    taken = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(json.dumps({"taken_at": taken, "cores": os.cpu_count(), "rails": RAILS, "spines": SPINES,
                      "noise": args.noise, "settings": _localize.DEFAULT_SETTINGS, "rows": rows,
                      "superbench": baseline, "seconds": round(time.perf_counter() - started, 1)}))
    return 0


def render(result: dict) -> list[str]:
    """The docs/performance.md tables of a result."""
    lines = ["| hosts | fault | runs | exact | named in a group | missed | falsely accused | rounds mean / max | waves | launches | GPU-minutes |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in result["rows"]:
        lines.append("| %(hosts)d | %(fault)s | %(runs)d | %(exact)d | %(grouped)d | %(missed)d | %(false)d | %(rounds_mean).2f / %(rounds_max)d "
                     "| %(waves_mean).2f | %(launches_mean).0f | %(gpu_minutes_mean).0f |" % row)
    lines += ["", "SuperBench pair-wise on the same model (one bad NIC; 8 GPUs per node in every pair job, 1 minute a launch):", "",
              "| hosts | rounds | pair launches | GPU-minutes | runs | node named (the host in the most flagged pairs) |", "|---|---|---|---|---|---|"]
    for row in result["superbench"]:
        found = "not simulated" if not row["runs"] else "%d of %d" % (row["node_found"], row["runs"])
        lines.append("| %d | %d | %d | %d | %d | %s |" % (row["hosts"], row["rounds"], row["launches"], row["gpu_minutes"], row["runs"], found))
    return lines


if __name__ == "__main__":
    sys.exit(main())
