# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/_intent/_devices.py: ``nics[].vfs`` and ``nics[].vf_guids`` (issue 37, C1),
validated whole with their key paths and carried in the host plan."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan

PF = "0x0c42a10300010001"
VF0, VF1 = "0x0C42A1030F010000", "0x0c42a1030f010001"


def ib(nic_extra=None, second=None):
    nic = {"name": "mlx5_0", "speed": "200G", "guid": PF, "pci": "0000:0c:00.0"}
    nic.update(nic_extra or {})
    devices = {"sm1": {"kind": "subnet_manager", "role": "master"}, "gpu1": {"kind": "host", "nics": [nic]}}
    if second is not None:
        devices["gpu2"] = {"kind": "host", "nics": [dict({"name": "mlx5_0", "speed": "200G", "guid": "0x0c42a10300020001", "pci": "0000:0c:00.0"}, **second)]}
    return {"name": "f", "transport": "infiniband", "infiniband": {"sm": {"routing_engine": "minhop"}}}, devices


def roce(nic_extra):
    nic = dict({"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}, **nic_extra)
    return {"name": "f", "transport": "roce"}, {"gpu1": {"kind": "host", "nics": [nic]}}


def errors(intent, devices):
    return _plan.validate(intent, devices)[0]


def test_the_host_plan_carries_vfs_and_normalized_vf_guids():
    plan = _plan.build_plan(*ib({"vfs": 2, "vf_guids": [VF0, VF1]}))
    nic = plan["devices"]["gpu1"]["nics"][0]
    assert (nic["vfs"], nic["vf_guids"]) == (2, [VF0.lower(), VF1])
    # defaults: no VFs; RoCE: vfs alone, vf_guids always []
    assert plan_nic(*ib())[1:] == (0, [])
    assert plan_nic(*roce({"vfs": 4}))[1:] == (4, [])


def plan_nic(intent, devices):
    nic = _plan.build_plan(intent, devices)["devices"]["gpu1"]["nics"][0]
    return nic["name"], nic["vfs"], nic["vf_guids"]


@pytest.mark.parametrize(
    ("extra", "path", "needle"),
    [
        ({"vfs": 2}, "nics[0].vf_guids", "0 GUIDs for vfs 2: give exactly one port GUID per VF"),
        ({"vfs": 1, "vf_guids": [VF0, VF1]}, "nics[0].vf_guids", "2 GUIDs for vfs 1"),
        ({"vf_guids": [VF0]}, "nics[0].vf_guids", "1 GUID for vfs 0"),
        ({"vfs": 2, "vf_guids": [VF0, "0x12"]}, "nics[0].vf_guids[1]", "'0x12' is not a GUID (0x followed by 16 hex digits)"),
        ({"vfs": 2, "vf_guids": [VF0, VF0.lower()]}, "nics[0].vf_guids[1]", "duplicates vf_guids[0]"),
        ({"vfs": 1, "vf_guids": [PF]}, "nics[0].vf_guids[0]", "is the NIC's own port GUID"),
        ({"vfs": 1, "vf_guids": VF0}, "nics[0].vf_guids", "is not a list"),
        ({"vfs": 128, "vf_guids": []}, "nics[0].vfs", "128 is not a VF count (0-127)"),
        ({"vfs": -1}, "nics[0].vfs", "-1 is not a VF count (0-127)"),
        ({"vfs": "2", "vf_guids": [VF0, VF1]}, "nics[0].vfs", "'2' is not a VF count"),
    ],
)
def test_vf_guids_are_refused_with_their_key_path(extra, path, needle):
    found = errors(*ib(extra))
    assert any(e.startswith(f"gpu1: lossless_fabric_device.{path}: ") and needle in e for e in found), found


def test_a_nic_with_vf_guids_needs_its_own_guid():
    intent, devices = ib({"vfs": 1, "vf_guids": [VF0]})
    del devices["gpu1"]["nics"][0]["guid"]
    assert any(e.startswith("gpu1: lossless_fabric_device.nics[0].guid: required with vf_guids") for e in errors(intent, devices))


def test_a_nic_with_vf_guids_needs_its_pci_address_in_sysfs_form():
    """The operator's GUID file names the PF by pciAddress (a pfGuid never matches an IPoIB netdev's 20-octet address)."""
    intent, devices = ib({"vfs": 1, "vf_guids": [VF0]})
    del devices["gpu1"]["nics"][0]["pci"]
    assert any(e.startswith("gpu1: lossless_fabric_device.nics[0].pci: required with vf_guids") and "pciAddress" in e
               for e in errors(intent, devices))
    for bad in ("0c:00.0", "0000:0C:00.0", "0000:0c:20.0", "0000:0c:00.8", 3):
        found = errors(*ib({"pci": bad}))
        assert any(e.startswith("gpu1: lossless_fabric_device.nics[0].pci: %r is not a PCI address" % (bad,)) for e in found), (bad, found)
    assert _plan.build_plan(*ib({"vfs": 1, "vf_guids": [VF0]}))["devices"]["gpu1"]["nics"][0]["pci"] == "0000:0c:00.0"
    assert plan_nic_pci(*roce({})) is None


def plan_nic_pci(intent, devices):
    return _plan.build_plan(intent, devices)["devices"]["gpu1"]["nics"][0]["pci"]


def test_vf_guids_on_roce_are_refused():
    found = errors(*roce({"vfs": 1, "vf_guids": [VF0]}))
    assert any(e.startswith("gpu1: lossless_fabric_device.nics[0].vf_guids: ") and "InfiniBand only" in e for e in found), found


def test_vf_guids_are_unique_in_the_fabric_and_never_a_port_guid():
    # another host's VF reuses gpu1's VF GUID; a third VF GUID is gpu1's port GUID
    intent, devices = ib({"vfs": 1, "vf_guids": [VF0]}, second={"vfs": 2, "vf_guids": [VF0, PF]})
    found = errors(intent, devices)
    assert "gpu2: lossless_fabric_device.nics[0].vf_guids[0]: '0x0c42a1030f010000' is also gpu1: lossless_fabric_device.nics[0].vf_guids[0]: " \
        "VF GUIDs are unique in the fabric" in found, found
    assert "gpu2: lossless_fabric_device.nics[0].vf_guids[1]: '0x0c42a10300010001' is a NIC's port GUID (gpu1: lossless_fabric_device.nics[0].guid): " \
        "a VF needs a GUID of its own" in found, found
    # and two NICs of one host with one VF GUID
    intent, devices = ib({"vfs": 1, "vf_guids": [VF0]})
    devices["gpu1"]["nics"].append({"name": "mlx5_1", "speed": "200G", "guid": "0x0c42a10300010101", "pci": "0000:16:00.0", "vfs": 1, "vf_guids": [VF0]})
    assert any(e.startswith("gpu1: lossless_fabric_device.nics[1].vf_guids[0]: ") and "unique in the fabric" in e for e in errors(intent, devices))


def test_every_problem_at_once():
    intent, devices = ib({"vfs": 2, "vf_guids": ["bad", PF]})
    devices = copy.deepcopy(devices)
    devices["gpu1"]["nics"].append({"name": "mlx5_1", "speed": "200G", "guid": "0x0c42a10300010101", "vfs": 200})
    found = errors(intent, devices)
    assert any("nics[0].vf_guids[0]" in e for e in found) and any("nics[1].vfs" in e for e in found), found
