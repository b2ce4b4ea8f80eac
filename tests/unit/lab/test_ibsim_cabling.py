# SPDX-License-Identifier: GPL-3.0-or-later
"""ibsim's cables come from the lab wiring (the inventory's described IB links plus lab_cabling_faults):
the net file plugs each NIC where the wiring says, and the real ibnetdiscover, read by ib_links, shows it."""

from __future__ import annotations

import glob
import os
import pathlib
import re
import sys

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import wiring  # noqa: E402  # pylint: disable=wrong-import-position
from ibsim import topology as t  # noqa: E402  # pylint: disable=wrong-import-position
from test_ibsim_fabric import _usable  # noqa: E402  # pylint: disable=wrong-import-position

from ansible_collections.lossless.fabric.plugins.module_utils._ib import _links as _ib_links  # noqa: E402

INVENTORY = ROOT / "inventories" / "lab-ib"


def hostvars() -> dict:
    out = {}
    for path in sorted(glob.glob(str(INVENTORY / "host_vars" / "*.yml"))):
        out[os.path.basename(path)[:-4]] = yaml.safe_load(open(path, encoding="utf-8"))
    return out


def fabric_var() -> dict:
    return yaml.safe_load(open(INVENTORY / "group_vars" / "all" / "lab.yml", encoding="utf-8"))["lab_ib_fabric"]


def topology(faults=None):
    hv = hostvars()
    return t.build(t.spec_from_inventory(hv, fabric_var(), wiring.build(hv, faults)))


def cabled(topo) -> dict:
    """(CA node id) -> (switch, port, link type) from the net file."""
    out, current = {}, None
    for line in topo.text.splitlines():
        m = re.match(r'^Hca\t\d+ "([^"]+)"', line)
        if m:
            current = m.group(1)
            continue
        if line.startswith("Switch"):
            current = None
        m = re.match(r'^\[1\]\t"([^"]+)"\[(\d+)\]\t# lid 0 (\S+)$', line)
        if m and current:
            out[current] = (m.group(1), int(m.group(2)), m.group(3))
    return out


def test_lab_ib_nics_are_plugged_where_the_inventory_says():
    cables = cabled(topology())
    assert cables["gpu1-mlx5_0"] == ("leaf1", 1, "4xHDR") and cables["gpu4-mlx5_1"] == ("leaf4", 2, "4xHDR")
    assert cables["ufm1-mlx5_0"] == ("leaf1", 3, "4xHDR")  # the SM's HCA has no described link: first free CA port
    assert len(t.build(t.spec_from_inventory(hostvars(), fabric_var())).links()) == len(topology().links()) == 17  # ib_fabric_expect.links


def test_faults_swap_unplug_downgrade():
    topo = topology([{"swap": ["gpu1:mlx5_0", "gpu2:mlx5_0"]}, {"unplug": "gpu3:mlx5_1"}, {"downgrade": "gpu4:mlx5_0", "speed": "100G"}])
    cables = cabled(topo)
    assert cables["gpu1-mlx5_0"][:2] == ("leaf1", 2) and cables["gpu2-mlx5_0"][:2] == ("leaf1", 1)
    assert "gpu3-mlx5_1" not in cables
    assert cables["gpu4-mlx5_0"] == ("leaf2", 2, "4xEDR")
    assert '[2]\t"gpu4-mlx5_0"[1]\t# lid 0 4xEDR' in topo.text  # both ends of the link


def test_without_described_links_the_layout_is_the_old_one():
    hv = hostvars()
    for host in hv.values():
        for nic in host["lossless_fabric_device"].get("nics") or []:
            nic.pop("peer", None)
    spec = t.spec_from_inventory(hv, fabric_var(), wiring.build(hv))
    assert "cables" not in spec
    assert cabled(t.build(spec))["gpu1-mlx5_0"] == ("leaf2", 1, "4xHDR")  # round-robin after ufm1 on leaf1


@pytest.mark.parametrize("speed, words", [("400G", "ibsim 0.10 simulates only"), ("7G", "ibsim 0.10 simulates only")])
def test_speeds_ibsim_cannot_show_are_refused(speed, words):
    hv = hostvars()
    with pytest.raises(t.TopologyError, match=words):
        t.spec_from_inventory(hv, fabric_var(), wiring.build(hv, [{"downgrade": "gpu1:mlx5_0", "speed": speed}]))


@pytest.mark.parametrize("cable, words", [
    ({"ca": ["gpu1", "mlx5_0"], "switch": ["leaf1", 19], "link": None}, "leaf-spine port"),
    ({"ca": ["gpu1", "mlx5_0"], "switch": ["leaf9", 1], "link": None}, re.escape("is not [switch, port]")),
    ({"ca": ["gpu9", "mlx5_0"], "switch": ["leaf1", 1], "link": None}, "is not a subnet manager or host NIC"),
    ({"ca": ["gpu1", "mlx5_0"], "switch": ["leaf1", 1], "link": "4xNDR"}, "is not a link type ibsim 0.10 knows"),
])
def test_bad_cables_are_refused(cable, words):
    spec = t.spec_from_inventory(hostvars(), fabric_var())
    spec["cables"] = [cable]
    with pytest.raises(t.TopologyError, match=words):
        t.build(spec)


def test_two_cables_on_one_port_are_refused():
    spec = t.spec_from_inventory(hostvars(), fabric_var())
    spec["cables"] = [{"ca": ["gpu1", "mlx5_0"], "switch": ["leaf1", 1]}, {"ca": ["gpu2", "mlx5_0"], "switch": ["leaf1", 1]}]
    with pytest.raises(t.TopologyError, match="cabled twice"):
        t.build(spec)


@pytest.mark.skipif(_usable() is not None, reason=str(_usable()))
def test_real_ibnetdiscover_through_ib_links_shows_the_faults(tmp_path):
    from ibsim.fabric import Fabric  # noqa: PLC0415  # pylint: disable=import-outside-toplevel

    topo = topology([{"swap": ["gpu1:mlx5_0", "gpu2:mlx5_0"]}, {"downgrade": "gpu4:mlx5_0", "speed": "100G"}, {"unplug": "gpu3:mlx5_1"}])
    with Fabric(str(tmp_path / "ib"), topo) as fab:
        out = fab.run(["ibnetdiscover"]).stdout
    devices = _ib_links.run_ib_links({}, lambda argv: (0, out, ""))["devices"]
    assert devices["gpu1"]["mlx5_0"]["neighbors"][0]["system"] == "leaf1" and devices["gpu1"]["mlx5_0"]["neighbors"][0]["port"] == "2"
    assert devices["leaf1"]["1"]["neighbors"][0]["system"] == "gpu2"
    assert devices["gpu4"]["mlx5_0"]["speed"] == "100G" and devices["gpu4"]["mlx5_0"]["width"] == "4X"
    assert devices["gpu1"]["mlx5_1"]["speed"] == "200G"
    assert "mlx5_1" not in devices.get("gpu3", {})  # an unplugged HCA is not discovered
