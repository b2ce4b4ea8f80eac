# SPDX-License-Identifier: GPL-3.0-or-later
"""Drive _localize against the lab performance model (tests/lab/nccl/perfmodel.py): fabrics, cables, a full run.

Test helper only (production code never imports tests/lab)."""

from __future__ import annotations

import copy
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))

from nccl import fabrics  # noqa: E402  # pylint: disable=wrong-import-position
from nccl.perfmodel import Fabric  # noqa: E402  # pylint: disable=wrong-import-position

from ansible_collections.lossless.fabric.plugins.module_utils import _localize  # noqa: E402  # pylint: disable=wrong-import-position
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan  # noqa: E402  # pylint: disable=wrong-import-position


def rail_fabric(units: int, per_unit: int, rails: int = 8, spines: int = 4) -> dict:
    """The cabling of a rail-optimized fabric: gpu1.., leaf-su<u>-r<r>, spine<s> (tests/lab/nccl/fabrics.py)."""
    return fabrics.rail_optimized(units, per_unit, rails, spines)


def lab_cabling() -> dict:
    """The cabling of inventories/lab (gpu1, gpu2; leaf1 = rail 0, leaf2 = rail 1; spine1)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_intent"))
    import test_topology  # pylint: disable=import-outside-toplevel

    intent, devices = test_topology.load_inventory("lab", cabled=True)
    return _plan.build_plan(intent, copy.deepcopy(devices))["cabling"]


def cables(cabling: dict) -> list:
    """plan.cabling links as the model's cables (tests/lab/nccl/fabrics.py)."""
    return fabrics.cables(cabling)


def run(cabling: dict, faults: list, seed: int = 1, noise: float = 0.02, settings: dict | None = None, loopback: bool = True,
        hosts: list | None = None) -> tuple[dict, list, Fabric]:
    """Loopback (round 0, optional) then every round plan_round asks for, measured on the model; infer()."""
    fabric = Fabric(cables(cabling), faults, noise, seed)
    hosts = hosts or sorted(cabling["hosts"], key=_localize._natural)  # pylint: disable=protected-access
    topo = _localize.topology(cabling, hosts)
    result, history = fabrics.search(topo, fabric, settings, loopback)
    return result, history, fabric


def named(result: dict) -> set[tuple[str, str]]:
    """Every component the result accuses, ambiguity groups included."""
    out = set()
    for suspect in result["suspects"]:
        for comp in [suspect["component"]] + suspect["group"]:
            out.add((comp["kind"], comp["name"]))
    return out


def first(result: dict) -> set[tuple[str, str]]:
    """The components ranked first in each suspect entry (the representative of each group)."""
    return {(s["component"]["kind"], s["component"]["name"]) for s in result["suspects"]}
