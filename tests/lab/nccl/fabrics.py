# SPDX-License-Identifier: GPL-3.0-or-later
"""Fabrics for the performance model outside a running lab (bench/bench_localize.py, the localization unit tests).

``rail_optimized`` is the cabling ``fabric_plan`` derives for a rail-optimized intent (the same pattern as
bench/bench_topology.py): hosts gpu1.., one leaf per rail and scalable unit (leaf-su<u>-r<r>), spines spine<s>,
every leaf one uplink to each spine, 400G. ``cables`` turns a plan's cabling into the model's cables, and
``search`` runs the whole localization (loopback, every round ``plan_round`` asks for, ``infer``) on a model.
"""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
if os.path.join(ROOT, ".deps", "self") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, ".deps", "self"))

from ansible_collections.lossless.fabric.plugins.module_utils import _localize  # noqa: E402  # pylint: disable=wrong-import-position
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan  # noqa: E402  # pylint: disable=wrong-import-position


def rail_optimized(units: int, per_unit: int, rails: int = 8, spines: int = 4) -> dict:
    """plan.cabling of a rail-optimized fabric of units x per_unit hosts."""
    topology = {"pattern": "rail_optimized", "scalable_units": units, "hosts_per_unit": per_unit, "rails": rails, "spines": spines,
                "speed": "400G"}
    intent = {"name": "model", "transport": "roce", "topology": topology}
    port = {"speed": "400G", "cable_length_m": 10}
    devices: dict = {}
    for host in range(1, units * per_unit + 1):
        devices["gpu%d" % host] = {"kind": "host", "nics": [{"name": "mlx5_%d" % r, "netdev": "eth%d" % r, "speed": "400G"} for r in range(rails)]}
    for unit in range(1, units + 1):
        for rail in range(rails):
            devices["leaf-su%d-r%d" % (unit, rail)] = {"kind": "switch", "platform": "nvue",
                                                       "ports": {"swp%d" % n: dict(port) for n in range(1, per_unit + spines + 1)}}
    for spine in range(1, spines + 1):
        devices["spine%d" % spine] = {"kind": "switch", "platform": "nvue",
                                      "ports": {"swp%d" % n: dict(port) for n in range(1, units * rails + 1)}}
    return _plan.build_plan(intent, devices)["cabling"]


def cables(cabling: dict) -> list:
    """plan.cabling links as the model's cables: [[device, "port"|"nic", name], [...], speed, up]."""
    out = []
    for link in cabling["links"]:
        ends = []
        for end in (link["a"], link["b"]):
            kind = "port" if "port" in end else "nic"
            ends.append([end["host"], kind, end[kind]])
        out.append([ends[0], ends[1], link["speed"], True])
    return out


def search(topo, fabric, settings: dict | None = None, loopback: bool = True) -> tuple[dict, list]:
    """Round 0 (ib_write_bw loopback: the model's GB/s as Gbit/s) when asked, then every round ``plan_round`` asks
    for, each job measured on ``fabric`` (a perfmodel.Fabric) with its own launch key; (infer result, history)."""
    history = []
    if loopback:
        results = {"%s:%s" % (h, n): fabric.loopback_gbps(h, n, ("loopback", h, n)) * 8 for h in topo.hosts for n in topo.rails[h].values()}
        history.append(_localize.loopback_round(topo, results, None, settings))
    while True:
        planned = _localize.plan_round(topo, history, settings)
        if planned is None:
            break
        measured = {job["id"]: fabric.job_busbw([(h, job["nics"][h]) for h in job["hosts"]], (planned["number"], job["id"]))
                    for job in planned["jobs"]}
        history.append(_localize.record(planned, measured, settings))
    return _localize.infer(topo, history, settings), history
