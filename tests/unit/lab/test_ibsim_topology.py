# SPDX-License-Identifier: GPL-3.0-or-later
"""ibsim net-file generation from an inventory-like description (pure, no processes)."""
from __future__ import annotations

import pathlib
import re
import sys

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from ibsim import topology as t  # noqa: E402

INVENTORY = ROOT / "inventories" / "lab-ib"


def hosts(n, nics=("mlx5_0", "mlx5_1")):
    return [{"name": "gpu%d" % i, "nics": [{"name": nic} for nic in nics]} for i in range(1, n + 1)]


def parse_net(text):
    """The net file back as {nodeid: (kind, nports, guid, {port: (remote, rport)})}."""
    nodes, current, guid = {}, None, {}
    for line in text.splitlines():
        m = re.match(r"^(caguid|switchguid)=(0x[0-9a-f]{16})$", line)
        if m:
            guid[m.group(1)] = int(m.group(2), 16)
            continue
        m = re.match(r'^(Hca|Switch)\t(\d+) "([^"]+)"', line)
        if m:
            kind = m.group(1)
            current = m.group(3)
            nodes[current] = (kind, int(m.group(2)), guid["caguid" if kind == "Hca" else "switchguid"], {})
            continue
        m = re.match(r'^\[(\d+)\]\t"([^"]+)"\[(\d+)\]\t# lid 0 4xHDR$', line)
        if m:
            nodes[current][3][int(m.group(1))] = (m.group(2), int(m.group(3)))
    return nodes


def test_two_spines_four_leaves_eight_hosts():
    topo = t.build({"spines": 2, "leaves": 4, "subnet_managers": ["ufm1"], "hosts": hosts(8)})
    assert topo.switches == ["spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4"]
    assert len(topo.cas) == 1 + 16
    assert topo.sm_nodes == ["ufm1-mlx5_0"]
    net = parse_net(topo.text)
    assert len(net) == 6 + 17
    # the subnet manager's CA is the first node: ibsim's default attachment point
    assert next(iter(net)) == "ufm1-mlx5_0"
    # every link is written from both ends, consistently
    for node, (_kind, _n, _g, links) in net.items():
        for port, (remote, rport) in links.items():
            assert net[remote][3][rport] == (node, port)
    # full bipartite leaf-spine: each leaf has one link to each spine, on ports 19+ (of 36)
    for leaf in ("leaf1", "leaf2", "leaf3", "leaf4"):
        ups = {p: r for p, r in net[leaf][3].items() if r[0].startswith("spine")}
        assert sorted(r[0] for r in ups.values()) == ["spine1", "spine2"]
        assert min(ups) == 19
    # CAs round-robin over the leaves: 17 CAs -> 5/4/4/4, on the CA-facing ports
    per_leaf = [sum(1 for r in net[leaf][3].values() if not r[0].startswith("spine")) for leaf in ("leaf1", "leaf2", "leaf3", "leaf4")]
    assert per_leaf == [5, 4, 4, 4]
    assert len(topo.links()) == 17 + 8


def test_given_guids_are_the_port_guids():
    spec = {"spines": 1, "leaves": 1, "subnet_managers": [{"name": "sm", "guid": "0x0c42a10300000001"}],
            "hosts": [{"name": "gpu1", "nics": [{"name": "mlx5_0", "guid": "0x0C42A10300010001"}]}]}
    topo = t.build(spec)
    assert topo.port_guid("gpu1", "mlx5_0") == "0x0c42a10300010001"
    assert topo.port_guid("sm", "mlx5_0") == "0x0c42a10300000001"
    # ibsim: port GUID = node GUID + port number, so caguid is one below
    assert "caguid=0x0c42a10300010000\nHca\t1 \"gpu1-mlx5_0\"\t# \"gpu1 mlx5_0\"" in topo.text
    assert topo.guids()["gpu1-mlx5_0"] == "0x0c42a10300010001"


def test_generated_guids_are_deterministic_and_per_name():
    a = t.build({"spines": 2, "leaves": 2, "subnet_managers": ["sm"], "hosts": hosts(3)})
    b = t.build({"spines": 2, "leaves": 2, "subnet_managers": ["sm"], "hosts": hosts(3)})
    assert a.text == b.text
    # adding a host does not renumber the others
    c = t.build({"spines": 2, "leaves": 2, "subnet_managers": ["sm"], "hosts": hosts(4)})
    assert c.port_guid("gpu2", "mlx5_1") == a.port_guid("gpu2", "mlx5_1")
    guids = list(a.guids().values())
    assert len(set(guids)) == len(guids)
    assert all(re.match(r"^0x[0-9a-f]{16}$", g) for g in guids)
    assert a.port_guid("gpu1", "mlx5_0").endswith("01")


def test_named_switches_ports_and_uplinks():
    topo = t.build({"spines": ["s1"], "leaves": ["l1", "l2"], "switch_ports": 8, "uplinks_per_spine": 2,
                    "subnet_managers": ["sm"], "hosts": hosts(2, nics=("mlx5_0",)), "link": "4xEDR"})
    net = topo.nodes
    assert net["l1"].links[5] == ("s1", 1) and net["l1"].links[6] == ("s1", 2)
    assert net["l2"].links[5] == ("s1", 3) and net["l2"].links[6] == ("s1", 4)
    assert "# lid 0 4xEDR" in topo.text and all(n.ports == 8 for n in net.values() if n.kind == "switch")


def test_single_switch_fabric():
    topo = t.build({"spines": 0, "leaves": ["sw1"], "switch_ports": 4, "subnet_managers": ["sm"], "hosts": hosts(3, ("mlx5_0",))})
    assert sorted(topo.nodes["sw1"].links) == [1, 2, 3, 4]


@pytest.mark.parametrize("spec, message", [
    ({"spines": 0, "leaves": 2, "subnet_managers": ["sm"]}, "separate fabrics"),
    ({"spines": 1, "leaves": 1, "hosts": hosts(1)}, "at least one subnet manager"),
    ({"spines": 1, "leaves": 1, "switch_ports": 4, "subnet_managers": ["sm"], "hosts": hosts(1)}, "no free CA port"),
    ({"spines": 3, "leaves": 1, "switch_ports": 4, "subnet_managers": ["sm"]}, "uplink ports"),
    ({"spines": 1, "leaves": 1, "subnet_managers": ["sm"], "link": "4xNDR"}, "4xNDR"),
    ({"spines": 1, "leaves": 1, "subnet_managers": ["sm"], "switch_ports": 300}, "switch_ports"),
    ({"spines": 1, "leaves": 1, "subnet_managers": ["sm"], "hosts": [{"name": "g", "nics": [{"name": "m", "guid": "0x12"}]}]}, "not a GUID"),
    ({"spines": 1, "leaves": 1, "subnet_managers": ["a-very-long-subnet-manager-host-name"]}, "31"),
    ({"spines": 1, "leaves": 1, "subnet_managers": ["sm"], "hosts": [{"name": 'g"1', "nics": [{"name": "m"}]}]}, "node id"),
    ({"spines": 1, "leaves": 1, "subnet_managers": ["sm"], "spine_count": 1}, "unknown keys"),
])
def test_refused(spec, message):
    with pytest.raises(t.TopologyError, match=re.escape(message)):
        t.build(spec)


def test_guid_collisions_are_refused():
    # node GUID = port GUID - 1: consecutive port GUIDs would give one CA the other's GUID
    spec = {"spines": 1, "leaves": 1, "subnet_managers": ["sm"], "hosts": [
        {"name": "g", "nics": [{"name": "a", "guid": "0x0000000000001001"}, {"name": "b", "guid": "0x0000000000001002"}]}]}
    with pytest.raises(t.TopologyError, match="already used by g a"):
        t.build(spec)
    spec["hosts"][0]["nics"][1]["guid"] = "0x0000000000001001"
    with pytest.raises(t.TopologyError, match="0x0000000000001000 is already used|0x0000000000001001 is already used"):
        t.build(spec)


def _inventory_hostvars():
    """hostvars of inventories/lab-ib without Ansible: host_vars + group_vars/all."""
    group = {}
    for path in sorted((INVENTORY / "group_vars" / "all").glob("*.yml")):
        group.update(yaml.safe_load(path.read_text()))
    out = {}
    for path in sorted((INVENTORY / "host_vars").glob("*.yml")):
        out[path.stem] = dict(group, **yaml.safe_load(path.read_text()))
    return out


def test_lab_ib_inventory_partition_members_are_fabric_ports():
    hostvars = _inventory_hostvars()
    spec = t.spec_from_inventory(hostvars, hostvars["ufm1"]["lab_ib_fabric"])
    topo = t.build(spec)
    assert topo.sm_nodes == ["ufm1-mlx5_0"]
    assert len(topo.switches) == 6 and len(topo.cas) == 9
    ports = set(topo.guids().values())
    members = [m for part in hostvars["ufm1"]["lossless_fabric"]["infiniband"]["partitions"] for m in part["members"]
               if isinstance(m, str)]
    assert members and all(m.lower() in ports for m in members)
    for host in ("gpu1", "gpu2", "gpu3", "gpu4"):
        for nic in hostvars[host]["lossless_fabric_device"]["nics"]:
            assert topo.port_guid(host, nic["name"]) == nic["guid"]


def test_spec_from_inventory_puts_the_master_first():
    hv = {
        "b-standby": {"lossless_fabric_device": {"kind": "subnet_manager", "role": "standby"}},
        "z-master": {"lossless_fabric_device": {"kind": "subnet_manager", "role": "master"}, "lab_ib_port_guid": "0x0000000000000101"},
        "gpu1": {"lossless_fabric_device": {"kind": "host", "nics": [{"name": "mlx5_0", "speed": "200G"}]}},
        "leafx": {"ansible_host": "1.2.3.4"},
    }
    spec = t.spec_from_inventory(hv, {"spines": 1, "leaves": 2, "other": 1})
    assert [sm["name"] for sm in spec["subnet_managers"]] == ["z-master", "b-standby"]
    assert spec["subnet_managers"][0]["guid"] == "0x0000000000000101"
    assert spec["hosts"] == [{"name": "gpu1", "nics": [{"name": "mlx5_0", "guid": None}]}]
    assert "other" not in spec
    assert t.build(spec).sm_nodes == ["z-master-mlx5_0", "b-standby-mlx5_0"]
