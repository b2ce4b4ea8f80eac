# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab-launcher plug-in of k8sim, driven through the launcher's own Context and down()."""
from __future__ import annotations

import json
import pathlib
import sys
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import launcher  # noqa: E402  # pylint: disable=wrong-import-position
from k8sim.plugin import Kubernetes  # noqa: E402

DEVICE = {"kind": "host", "gpus": 8, "nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}]}


def FakeContext(run_dir: str, inventory_data: dict):  # pylint: disable=invalid-name  # stands where a class stood
    """The launcher's own Context (its start_server is what the plug-in calls)."""
    return launcher.Context(run_dir, run_dir, inventory_data)


def inventory(**extra) -> dict:
    hostvars = {"gpu1": {"lossless_fabric_device": DEVICE},
                "gpu2": {"lossless_fabric_device": dict(DEVICE, gpus=4), "lab_k8sim_rdma_broken": True},
                "leaf1": {"lossless_fabric_device": {"kind": "switch"}}}
    for hv in hostvars.values():
        hv.update(extra)
    return {"_meta": {"hostvars": hostvars}, "all": {"children": ["ungrouped", "gpu_hosts"]}}


def test_wanted():
    plugin = Kubernetes()
    assert not plugin.wanted(FakeContext("/nonexistent", inventory()))
    assert plugin.wanted(FakeContext("/nonexistent", inventory(lab_kubernetes=True)))
    inv = inventory()
    inv["kubernetes"] = {"hosts": ["gpu1"]}
    assert plugin.wanted(FakeContext("/nonexistent", inv))


def test_nic_totalvfs_from_device_data_else_the_lab_knob():
    """Contract C1/C4: a NIC's SR-IOV totalvfs is device data nics[].vfs when > 0, else lab_k8sim_totalvfs (default 0)."""
    inv = inventory()
    inv["_meta"]["hostvars"]["gpu1"]["lossless_fabric_device"] = dict(DEVICE, nics=[
        dict(DEVICE["nics"][0], vfs=4), {"name": "mlx5_1", "netdev": "eth3", "speed": "400G"}])
    inv["_meta"]["hostvars"]["gpu1"]["lab_k8sim_totalvfs"] = 16
    nodes = {n["name"]: n for n in Kubernetes().config(FakeContext("/nonexistent", inv))["nodes"]}
    assert [(nic["netdev"], nic["totalvfs"]) for nic in nodes["gpu1"]["nics"]] == [("eth2", 4), ("eth3", 16)]
    assert [(nic["netdev"], nic["totalvfs"]) for nic in nodes["gpu2"]["nics"]] == [("eth2", 0)]


def test_start_returns_inventory_vars_and_stops(tmp_path):
    ctx = FakeContext(str(tmp_path), inventory(lab_kubernetes=True, lab_k8sim_time_scale=0.01))
    plugin = Kubernetes()
    assert [n["name"] for n in plugin.config(ctx)["nodes"]] == ["gpu1", "gpu2"]
    try:
        got = plugin.start(ctx)
        kubeconfig = got["all"]["lab_kubeconfig"]
        assert json.load(open(kubeconfig, encoding="utf-8"))["clusters"][0]["cluster"]["server"] == got["all"]["lab_k8sim_url"]
        with urllib.request.urlopen(got["all"]["lab_k8sim_control"] + "/state", timeout=5) as resp:
            state = json.loads(resp.read())
        assert state["nodes"] == {"gpu1": {"rdma_broken": False, "gpus": 8}, "gpu2": {"rdma_broken": True, "gpus": 4}}
        plugin.before_stop(str(tmp_path))
        objects = json.loads((tmp_path / "k8sim.objects.json").read_text())
        assert [n["metadata"]["name"] for n in objects["nodes"]] == ["gpu1", "gpu2"]
    finally:
        assert launcher.down(str(tmp_path), str(tmp_path)) == ["k8sim"]
    assert not (tmp_path / "k8sim.state.json").exists()
