# SPDX-License-Identifier: GPL-3.0-or-later
"""Validate, plan and check the cabling of a rail-optimized fabric of about 1,000 GPU hosts (issue 16).

    .venv/bin/python bench/bench_topology.py [--units 32] [--hosts-per-unit 32] [--rails 8] [--spines 32]

The fabric: DGX SuperPOD-sized scalable units (32 hosts, 8 rails: one leaf per rail
and unit), every leaf linked once to every spine, NVUE switches, the cabling
generated from ``lossless_fabric.topology``. Prints one JSON line: hosts,
switches, links, seconds for ``validate``, ``build_plan``, and for the cabling check
(``_cabling.compare`` over every link seen from both ends, as the readers would report it:
as intended, and with ``--crossed`` host NIC pairs swapped) and its Markdown report.
Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, ".deps", "self"))

from ansible_collections.lossless.fabric.plugins.module_utils._cabling import _compare as _cabling  # noqa: E402  # pylint: disable=wrong-import-position
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan  # noqa: E402  # pylint: disable=wrong-import-position


def fabric(units: int, per_unit: int, rails: int, spines: int) -> tuple[dict, dict]:
    """The intent and every device of the fabric (hosts gpu1.., leaves leaf-su<u>-r<r>, spines spine<s>)."""
    topology = {"pattern": "rail_optimized", "scalable_units": units, "hosts_per_unit": per_unit, "rails": rails, "spines": spines, "speed": "400G"}
    intent = {"name": "bench", "transport": "roce", "topology": topology}
    port = {"speed": "400G", "cable_length_m": 10}
    devices: dict = {}
    for host in range(1, units * per_unit + 1):
        devices[f"gpu{host}"] = {"kind": "host", "nics": [{"name": f"mlx5_{r}", "netdev": f"eth{r}", "speed": "400G"} for r in range(rails)]}
    leaf_ports = {f"swp{n}": dict(port) for n in range(1, per_unit + spines + 1)}
    for unit in range(1, units + 1):
        for rail in range(rails):
            devices[f"leaf-su{unit}-r{rail}"] = {"kind": "switch", "platform": "nvue", "ports": dict(leaf_ports)}
    spine_ports = {f"swp{n}": dict(port) for n in range(1, units * rails + 1)}
    for spine in range(1, spines + 1):
        devices[f"spine{spine}"] = {"kind": "switch", "platform": "nvue", "ports": dict(spine_ports)}
    return intent, devices


def _name(end: dict) -> str:
    return end.get("port") or end.get("nic")


def observations(cabling: dict, crossed: int) -> dict:
    """What every end would report: up, the intended speed, its peer as the neighbour (a host NIC as
    lldpd sends it: the netdev as port description); the first ``crossed`` hosts' rails 0 and 1 swapped."""
    seen: dict = {}
    for link in cabling["links"]:
        for here, there in ((link["a"], link["b"]), (link["b"], link["a"])):
            neighbor = {"system": there["host"], "port": _name(there), "port_id_subtype": None, "port_descr": None, "chassis_id": None}
            seen.setdefault(here["host"], {})[_name(here)] = {"oper": "up", "speed": link["speed"], "width": None, "neighbors": [neighbor]}
    hosts = [h for h in cabling["hosts"] if cabling["hosts"][h]["rails"].get("1")][:crossed]
    for host in hosts:
        rails = cabling["hosts"][host]["rails"]
        nic0, nic1 = rails["0"], rails["1"]
        ends = seen[host]
        ends[nic0]["neighbors"], ends[nic1]["neighbors"] = ends[nic1]["neighbors"], ends[nic0]["neighbors"]
        for nic, other in ((nic0, nic1), (nic1, nic0)):
            peer = cabling["hosts"][host]["nics"][other]["peer"]
            seen[peer["host"]][peer["port"]]["neighbors"][0]["port"] = nic
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=32)
    parser.add_argument("--hosts-per-unit", type=int, default=32)
    parser.add_argument("--rails", type=int, default=8)
    parser.add_argument("--spines", type=int, default=32)
    parser.add_argument("--crossed", type=int, default=1000, help="host NIC pairs swapped in the second cabling check")
    args = parser.parse_args()
    intent, devices = fabric(args.units, args.hosts_per_unit, args.rails, args.spines)
    start = time.perf_counter()
    errors, _warnings = _plan.validate(intent, devices)
    validate_s = time.perf_counter() - start
    if errors:
        print("\n".join(errors[:20]), file=sys.stderr)
        return 1
    start = time.perf_counter()
    plan = _plan.build_plan(intent, devices)
    plan_s = time.perf_counter() - start
    cabling = plan["cabling"]
    timings = {}
    for label, crossed in (("cabling_ok", 0), ("cabling_crossed", args.crossed)):
        seen = observations(cabling, crossed)
        start = time.perf_counter()
        checked = _cabling.compare(cabling, seen)
        timings[label + "_s"] = round(time.perf_counter() - start, 3)
        timings[label + "_findings"] = {k: v for k, v in checked["summary"].items() if v and k != "links"}
        if label == "cabling_crossed":
            start = time.perf_counter()
            _cabling.markdown(checked)
            timings["report_s"] = round(time.perf_counter() - start, 3)
    result = {
        "hosts": args.units * args.hosts_per_unit,
        "switches": sum(1 for d in devices.values() if d["kind"] == "switch"),
        "links": len(cabling["links"]),
        "validate_s": round(validate_s, 3),
        "build_plan_s": round(plan_s, 3),
        **timings,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
