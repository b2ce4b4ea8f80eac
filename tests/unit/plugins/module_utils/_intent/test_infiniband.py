# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/_intent/_infiniband.py: the SR-IOV network operator's static VF GUID file of
an InfiniBand host (vf_guid_file, issue 37 C2). The file's form is the operator's code's
(k8snetworkplumbingwg/sriov-network-operator at 249e200, pkg/host/internal/infiniband/ib_guid_config.go: JSON tags
pciAddress, pfGuid, guids, guidsRange; guid.go ParseGUID = net.ParseMAC of eight octets)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _infiniband, _plan


def lab_like_plan():
    devices = {"sm1": {"kind": "subnet_manager", "role": "master"}, "gpu1": {"kind": "host", "nics": [
        {"name": "mlx5_0", "speed": "200G", "guid": "0x0C42A10300010001", "pci": "0000:0c:00.0", "vfs": 2,
         "vf_guids": ["0x0c42a1030f010000", "0x0c42a1030f010001"]},
        {"name": "mlx5_1", "speed": "200G", "guid": "0x0c42a10300010101"},
    ]}}
    intent = {"name": "f", "transport": "infiniband", "infiniband": {"sm": {"routing_engine": "minhop"}}}
    return _plan.build_plan(intent, devices)["devices"]["gpu1"]


def test_the_file_lists_each_pf_by_its_pci_address_with_its_vf_guids_in_vf_order():
    text = _infiniband.vf_guid_file(lab_like_plan())
    assert text == (
        "[\n"
        "  {\n"
        '    "pciAddress": "0000:0c:00.0",\n'
        '    "guids": [\n'
        '      "0c:42:a1:03:0f:01:00:00",\n'
        '      "0c:42:a1:03:0f:01:00:01"\n'
        "    ]\n"
        "  }\n"
        "]\n"
    )
    # the operator's own keys, never the doc example's snake_case (Go's encoding/json would leave them unread), and
    # pciAddress, not pfGuid: a pfGuid is compared with the IPoIB netdev's 20-octet hardware address, never 8 octets
    entry = json.loads(text)[0]
    assert set(entry) == {"pciAddress", "guids"}
    assert _infiniband.SRIOV_GUID_FILE == "/etc/sriov-operator/infiniband/guids"


def test_no_vf_guids_no_file():
    plan = lab_like_plan()
    for nic in plan["nics"]:
        nic.update(vfs=0, vf_guids=[])
    assert _infiniband.vf_guid_file(plan) == ""


@pytest.mark.parametrize(
    ("plan", "needle"),
    [
        ({"kind": "subnet_manager"}, "not a host plan"),
        ({"kind": "host", "transport": "infiniband", "nics": [{"name": "mlx5_0", "guid": "0x0c42a10300010001"}]}, "a plan from before issue 37"),
        ({"kind": "host", "transport": "roce", "nics": [{"vfs": 1, "vf_guids": ["0x0c42a1030f010000"], "guid": None}]}, "a roce host has no VF GUIDs"),
        ({"kind": "host", "transport": "infiniband", "nics": [{"vfs": 1, "vf_guids": ["0c:42"], "guid": "0x0c42a10300010001"}]}, "'0c:42' is not a GUID"),
        ({"kind": "host", "transport": "infiniband", "nics": [{"vfs": 1, "vf_guids": ["0x0c42a1030f010000"], "guid": "0x0c42a10300010001"}]},
         "without the NIC's pci address"),
    ],
)
def test_a_plan_that_is_not_the_plans_is_refused(plan, needle):
    with pytest.raises(ValueError, match=needle):
        _infiniband.vf_guid_file(plan)
