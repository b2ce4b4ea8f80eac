# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/_intent/_tenants.py: lossless_fabric.tenants validated whole, the partitions
it generates (through _infiniband._partition), the default partition with tenant ports limited, fabric_plan's
``tenants`` (interfaces point 5)."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._ib import _files as _ib_files
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan, _tables

T = "lossless_fabric.tenants"
EXCLUSIVE = "a host belongs to one tenant where tenants have a partition or a VLAN (its ports would be members of both)"
GROUPS = {"all": ["ufm1", "gpu1", "gpu2", "gpu3", "gpu4"], "tenant_b": ["gpu3", "gpu4"], "sms": ["ufm1"]}


def guid(host: int, nic: int) -> str:
    return "0x0c42a103000%d0%d01" % (host, nic)


def ib_fabric():
    devices = {"ufm1": {"kind": "subnet_manager", "role": "master"}}
    for host in range(1, 5):
        devices[f"gpu{host}"] = {"kind": "host", "nics": [{"name": f"mlx5_{n}", "speed": "200G", "guid": guid(host, n)} for n in range(2)]}
    intent = {
        "name": "t",
        "transport": "infiniband",
        "infiniband": {
            "sm": {"routing_engine": "minhop"},
            "partitions": [{"name": "storage", "pkey": "0x0002", "members": [{"keyword": "SELF", "membership": "full"}, guid(1, 1), guid(3, 1)]}],
            "compute_partition": "team-a",
        },
        "tenants": [
            {"name": "team-a", "hosts": ["gpu1", "gpu2"], "namespace": "team-a", "partition": {"pkey": "0x8001"}, "qos_level": "rdma"},
            {"name": "team-b", "host_group": "tenant_b", "namespace": "team-b", "partition": {"pkey": "0x8003"}, "qos_level": "rdma"},
        ],
    }
    return intent, devices


def errors(intent, devices, groups="inventory"):
    return _plan.validate(intent, devices, GROUPS if groups == "inventory" else groups)[0]


def test_plan_tenants_is_the_interface_shape():
    plan = _plan.build_plan(*ib_fabric(), GROUPS)
    assert plan["tenants"] == {
        "team-a": {
            "hosts": ["gpu1", "gpu2"],
            "namespace": "team-a",
            "kubeconfig": None,
            "vlan": None,
            "partition": {"name": "team-a", "pkey": "0x8001", "membership": "full", "ipoib": True, "sl": 3},
            "qos_level": "rdma",
        },
        "team-b": {
            "hosts": ["gpu3", "gpu4"],
            "namespace": "team-b",
            "kubeconfig": None,
            "vlan": None,
            "partition": {"name": "team-b", "pkey": "0x8003", "membership": "full", "ipoib": True, "sl": 3},
            "qos_level": "rdma",
        },
    }
    # A tenant host works in its tenant's partition; NCCL_IB_SL from the compute partition (a tenant's may be named).
    assert (plan["devices"]["gpu3"]["partition"], plan["devices"]["gpu3"]["pkey"], plan["devices"]["gpu3"]["service_level"]) == ("team-b", "0x8003", 3)
    assert plan["nccl_env"]["NCCL_IB_SL"] == "3"
    assert plan["warnings"] == []


def test_partitions_conf_keeps_tenants_apart_in_the_default_partition():
    plan = _plan.build_plan(*ib_fabric(), GROUPS)
    lines = plan["devices"]["ufm1"]["partitions_conf"].splitlines()
    tenant_ports = ", ".join(f"{guid(h, n)}=limited" for h in range(1, 5) for n in range(2))
    # ALL=full first: OpenSM keeps the last membership given for a port (osm_prtn_add_port), so tenant ports end limited.
    assert lines[1] == f"Default=0x7fff, ipoib, defmember=full : ALL=full, SELF=full, {tenant_ports} ;"
    assert lines[2].startswith("storage=0x0002, ipoib, mtu=5, defmember=limited : SELF=full, ")
    assert lines[3] == (
        f"team-a=0x8001, ipoib, mtu=5, sl=3, defmember=full : SELF=full, {guid(1, 0)}=full, {guid(1, 1)}=full, {guid(2, 0)}=full, {guid(2, 1)}=full ;"
    )
    assert lines[4].startswith("team-b=0x8003, ipoib, mtu=5, sl=3, defmember=full : SELF=full, ")
    policy = plan["devices"]["ufm1"]["qos_policy_conf"]
    assert "        use: partition team-b\n        pkey: 0x8003\n        qos-level-name: rdma\n" in policy
    # the offline checks the opensm role runs before writing accept them
    assert _ib_files.check_files({"partitions_conf": "\n".join(lines) + "\n", "qos_policy_conf": policy}, None) == []
    tagged = [(p["name"], p.get("tenant", "-")) for p in plan["intent"]["infiniband"]["partitions"]]
    assert tagged == [("Default", None), ("storage", "-"), ("team-a", "team-a"), ("team-b", "team-b")]


def test_an_intent_default_partition_is_kept_when_it_leaves_tenants_limited():
    intent, devices = ib_fabric()
    intent["infiniband"]["partitions"].append({"name": "Default", "pkey": "0x7fff", "members": ["ALL", {"keyword": "SELF", "membership": "full"}]})
    conf = _plan.build_plan(intent, devices, GROUPS)["devices"]["ufm1"]["partitions_conf"]
    assert conf.count("0x7fff") == 1 and "Default=0x7fff, ipoib, mtu=5, defmember=limited : ALL=limited, SELF=full ;" in conf


def test_without_tenants_nothing_changes():
    intent, devices = ib_fabric()
    del intent["tenants"]
    intent["infiniband"]["compute_partition"] = "storage"
    plan = _plan.build_plan(intent, devices)
    assert plan["tenants"] == {}
    assert plan["devices"]["ufm1"]["partitions_conf"].splitlines()[1] == "Default=0x7fff, ipoib : ALL=full ;"


def test_roce_tenants_with_vlans_and_namespaces():
    intent = {"name": "r", "transport": "roce", "tenants": [
        {"name": "a", "hosts": ["gpu1"], "vlan": 101, "namespace": "a"},
        {"name": "b", "hosts": ["gpu2"], "vlan": 102, "namespace": "a", "kubeconfig": "/etc/vc-b/kubeconfig"},
    ]}
    devices = {f"gpu{h}": {"kind": "host", "nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}]} for h in (1, 2)}
    plan = _plan.build_plan(intent, devices)
    assert plan["tenants"]["b"] == {"hosts": ["gpu2"], "namespace": "a", "kubeconfig": "/etc/vc-b/kubeconfig", "vlan": 102,
                                    "partition": None, "qos_level": None}
    bad = copy.deepcopy(intent)
    bad["tenants"][1].update(vlan=101, kubeconfig=None, hosts=["gpu1"], partition={"pkey": "0x8002"}, qos_level="rdma")
    bad["tenants"].append({"name": "c", "hosts": ["gpu2"], "kubeconfig": "relative/path", "vlan": 4095, "namespace": "Team_C"})
    together = roce_together()
    assert errors(bad, devices) == [
        f"{T}[1].partition: a partition is InfiniBand only (a RoCE tenant may have a vlan)",
        f"{T}[1].qos_level: 'rdma': a QoS level is InfiniBand only (RoCE traffic classes come from lossless_fabric.roce)",
        f"{T}[2].namespace: 'Team_C' is not a namespace name (a DNS label: at most 63 of a-z 0-9 -)",
        f"{T}[2].kubeconfig: 'relative/path' is not an absolute path (/ then letters, digits and ._/+@=,- only)",
        f"{T}[2].vlan: 4095 is not a VLAN ID (1-4094)",
        # the rules across tenants still check the fields that passed
        *together,
    ]
    bad["tenants"] = bad["tenants"][:2]
    del bad["tenants"][1]["partition"], bad["tenants"][1]["qos_level"]
    assert errors(bad, devices) == together


def roce_together():
    return [
        f"{T}[1].vlan: 101 duplicates tenants[0].vlan: two tenants on one VLAN share a broadcast domain",
        f"{T}[1].namespace: 'a' duplicates tenants[0].namespace in the fabric's cluster",
        f"{T}[1].hosts[0]: 'gpu1' is also in tenant 'a' (tenants[0]): a host belongs to one tenant where tenants have a partition or a VLAN "
        "(its ports would be members of both)",
    ]


def test_kubernetes_only_tenants_may_share_hosts():
    # Kubernetes-only tenants (no VLAN) may share hosts: namespaces share nodes.
    devices = {f"gpu{h}": {"kind": "host", "nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}]} for h in (1, 2)}
    shared = {"name": "r", "transport": "roce", "tenants": [{"name": "a", "hosts": ["gpu1"]}, {"name": "b", "hosts": ["gpu1", "gpu2"]}]}
    assert errors(shared, devices) == []


def test_hosts_and_groups_are_resolved_and_checked():
    intent, devices = ib_fabric()
    intent["tenants"][0]["hosts"] = ["gpu1", "ufm1", "gpu9", "gpu1", 7]
    intent["tenants"][1]["host_group"] = "tenant_c"
    intent["tenants"].append({"name": "c", "hosts": ["gpu2"], "host_group": "sms", "partition": {"pkey": 5}})
    intent["tenants"].append({"name": "d", "host_group": "sms", "partition": {"pkey": 6}})
    intent["tenants"].append({"name": "e", "partition": {"pkey": 7}})
    assert errors(intent, devices) == [
        f"{T}[0].hosts[1]: 'ufm1' is not a GPU host of the fabric (it is a subnet_manager)",
        f"{T}[0].hosts[2]: 'gpu9' is not a GPU host of the fabric (did you mean 'gpu4'?)",
        f"{T}[0].hosts[3]: 'gpu1' is listed twice",
        f"{T}[0].hosts[4]: 7 is not an inventory host name",
        f"{T}[1].host_group: 'tenant_c' is not an inventory group (did you mean 'tenant_b'?)",
        f"{T}[2]: give hosts or host_group, not both",
        f"{T}[3].host_group: 'sms' holds no GPU host of the fabric (no member has lossless_fabric_device of kind host)",
        f"{T}[4].hosts: required (or host_group): the tenant's GPU hosts",
    ]
    intent, devices = ib_fabric()
    assert errors(intent, devices, None) == [
        f"{T}[1].host_group: 'tenant_b': no inventory groups were given to resolve it (fabric_plan passes them; or list hosts)"
    ]


def test_infiniband_rules_name_their_key_paths():
    intent, devices = ib_fabric()
    intent["tenants"][1]["partition"] = {"pkey": "0x0001", "membership": "half", "ipoib": "yes"}
    intent["tenants"].append({"name": "team-c", "hosts": ["gpu2"], "partition": {"pkey": "0xffff"}, "vlan": 3, "qos_level": "rdmaa"})
    intent["tenants"].append({"name": "team-a", "hosts": ["gpu4"], "partition": {"pkey": "0x0002", "name": "storage"}})
    intent["tenants"].append({"name": "team-e", "hosts": ["gpu4"]})
    assert errors(intent, devices) == [
        f"{T}[1].partition.membership: 'half' is not a tenant membership (one of full, limited)",
        f"{T}[1].partition.ipoib: 'yes' is not a boolean (true or false)",
        f"{T}[2].vlan: 3: a VLAN is RoCE only (an InfiniBand tenant is kept apart by its partition)",
        f"{T}[2].partition.pkey: '0xffff' is the default partition's P_Key (every port is in it): give the tenant a P_Key of its own",
        f"{T}[2].qos_level: 'rdmaa' is not a defined QoS level (did you mean 'rdma'?)",
        f"{T}[4].partition: required on InfiniBand: the partition (its P_Key) keeps the tenant's ports apart from the other tenants'",
        f"{T}[2].hosts[0]: 'gpu2' is also in tenant 'team-a' (tenants[0]): {EXCLUSIVE}",
        f"{T}[3].name: 'team-a' duplicates tenants[0].name",
        f"{T}[3].hosts[0]: 'gpu4' is also in tenant 'team-b' (tenants[1]): {EXCLUSIVE}",
        f"{T}[4].hosts[0]: 'gpu4' is also in tenant 'team-b' (tenants[1]): {EXCLUSIVE}",
        f"{T}[3].partition.name: 'storage' duplicates lossless_fabric.infiniband.partitions[0]",
        f"{T}[3].partition.pkey: '0x0002' duplicates lossless_fabric.infiniband.partitions[0] pkey '0x0002' "
        "(bit 15 is the membership bit, not part of the key)",
    ]


def test_exclusive_hosts_and_guids():
    intent, devices = ib_fabric()
    intent["tenants"][1]["host_group"] = "all"
    del devices["gpu4"]["nics"][1]["guid"]
    assert errors(intent, devices) == [
        f"{T}[1].host_group: 'gpu1' is also in tenant 'team-a' (tenants[0]): a host belongs to one tenant where tenants have a partition or a "
        "VLAN (its ports would be members of both)",
        f"{T}[1].host_group: 'gpu2' is also in tenant 'team-a' (tenants[0]): a host belongs to one tenant where tenants have a partition or a "
        "VLAN (its ports would be members of both)",
        "gpu4: lossless_fabric_device.nics[1].guid: required: gpu4 is in tenant 'team-b' (lossless_fabric.tenants[1]), whose partition "
        "lists its ports by GUID",
    ]


@pytest.mark.parametrize(
    "members, pkey, culprit",
    [
        (["ALL_CAS"], "0x0002", None),                                                    # every tenant port limited: allowed
        ([{"keyword": "ALL_CAS", "membership": "full"}], "0x0002", "ALL_CAS=full"),      # two tenants, full: refused
        ([{"guid": guid(1, 0), "membership": "full"}, guid(3, 0)], "0x0002", f"{guid(1, 0)}=full"),
        ([{"guid": guid(1, 0), "membership": "full"}, {"guid": guid(1, 0), "membership": "limited"}, guid(3, 0)], "0x0002", None),  # last wins
        ([{"guid": guid(1, 0), "membership": "full"}, {"guid": guid(2, 0), "membership": "full"}], "0x0002", None),  # one tenant only
        ([{"keyword": "ALL", "membership": "full"}], "0x7fff", "ALL=full"),               # the default partition left open
        ([{"keyword": "ALL", "membership": "full"}, {"guid": guid(3, 0), "membership": "both"}], "0x7fff", "ALL=full"),
    ],
)
def test_a_partition_through_which_two_tenants_meet_is_refused(members, pkey, culprit):
    intent, devices = ib_fabric()
    intent["infiniband"]["partitions"] = [{"name": "shared", "pkey": pkey, "members": members}]
    intent["infiniband"]["compute_partition"] = None
    found = errors(intent, devices)
    if culprit is None:
        assert found == []
        return
    index = [m if isinstance(m, str) else f"{m.get('guid') or m.get('keyword')}={m['membership']}" for m in members].index(culprit)
    assert len(found) == 1 and found[0].startswith(f"lossless_fabric.infiniband.partitions[0].members[{index}]: {culprit} makes tenant "), found
    assert "the tenants reach each other through it" in found[0]
    assert ("the default partition must not be left open to tenants" in found[0]) == (pkey == "0x7fff")


def test_the_default_schema_partition_shared_by_two_tenants_is_refused():
    intent, devices = ib_fabric()
    del intent["infiniband"]["partitions"], intent["infiniband"]["compute_partition"]
    with pytest.raises(_tables.IntentError) as exc:
        _plan.build_plan(intent, devices, GROUPS)
    assert exc.value.errors[0].startswith(
        "lossless_fabric.infiniband.partitions[0].members[0]: ALL_CAS=full makes tenant 'team-a' a full member of partition 'gpu' (pkey 0x8001)"
    )


def test_limited_tenants_and_the_schema_rows():
    intent, devices = ib_fabric()
    intent["tenants"][0]["partition"].update(membership="limited", ipoib=False, name="a-part")
    intent["infiniband"]["compute_partition"] = "a-part"   # compute_partition may name a tenant's partition
    plan = _plan.build_plan(intent, devices, GROUPS)
    assert plan["tenants"]["team-a"]["partition"] == {"name": "a-part", "pkey": "0x8001", "membership": "limited", "ipoib": False, "sl": 3}
    line = next(x for x in plan["devices"]["ufm1"]["partitions_conf"].splitlines() if x.startswith("a-part="))
    assert line.startswith(f"a-part=0x8001, mtu=5, sl=3, defmember=limited : SELF=full, {guid(1, 0)}=limited, ")
    intent["infiniband"]["compute_partition"] = "nowhere"
    assert errors(intent, devices) == ["lossless_fabric.infiniband.compute_partition: 'nowhere' is not a defined partition (one of storage, a-part, team-b)"]


def vf(host: int, nic: int, index: int) -> str:
    return "0x0c42a1030f%02x%02x%02x" % (host, nic, index)


def with_vfs(intent, devices, hosts=(1, 2, 3, 4), count=2):
    for host in hosts:
        for number, nic in enumerate(devices[f"gpu{host}"]["nics"]):
            nic.update(vfs=count, vf_guids=[vf(host, number, i) for i in range(count)], pci="0000:%02x:00.0" % (0x0c + number))
    return intent, devices


def test_vf_guids_are_members_of_their_tenants_partition_and_limited_in_the_default_one():
    """Issue 37 C2: the hosts' VF GUIDs with the tenant's membership, after its port GUIDs (the same member list);
    the default partition lists them limited; every other tenant's partition has none of them."""
    plan = _plan.build_plan(*with_vfs(*ib_fabric()), GROUPS)
    lines = plan["devices"]["ufm1"]["partitions_conf"].splitlines()
    team_a = next(x for x in lines if x.startswith("team-a="))
    ports_a = [guid(h, n) for h in (1, 2) for n in range(2)]
    vfs_a = [vf(h, n, i) for h in (1, 2) for n in range(2) for i in range(2)]
    assert team_a == "team-a=0x8001, ipoib, mtu=5, sl=3, defmember=full : SELF=full, " + ", ".join(f"{g}=full" for g in ports_a + vfs_a) + " ;"
    team_b = next(x for x in lines if x.startswith("team-b="))
    assert not any(g in team_b for g in vfs_a) and vf(3, 0, 0) + "=full" in team_b
    everyone = sorted([guid(h, n) for h in range(1, 5) for n in range(2)] + [vf(h, n, i) for h in range(1, 5) for n in range(2) for i in range(2)])
    assert lines[1] == "Default=0x7fff, ipoib, defmember=full : ALL=full, SELF=full, " + ", ".join(f"{g}=limited" for g in everyone) + " ;"
    # marked vf in the plan's partitions (the preflight and ib_fabric_verify read the mark), the ports not
    members = {m["guid"]: m for p in plan["intent"]["infiniband"]["partitions"] if p["name"] in ("team-a", "Default") for m in p["members"] if "guid" in m}
    assert all(members[g].get("vf") is True for g in vfs_a) and not any(members[g].get("vf") for g in ports_a)
    assert _ib_files.check_partitions_conf(plan["devices"]["ufm1"]["partitions_conf"]) == []


def test_a_limited_tenant_gives_its_vfs_limited_membership():
    intent, devices = with_vfs(*ib_fabric())
    intent["tenants"][0]["partition"]["membership"] = "limited"
    conf = _plan.build_plan(intent, devices, GROUPS)["devices"]["ufm1"]["partitions_conf"]
    line = next(x for x in conf.splitlines() if x.startswith("team-a="))
    assert f"{vf(1, 0, 0)}=limited" in line and "=full" not in line.replace("SELF=full", "")


def test_a_shared_partition_making_a_tenant_vf_full_is_refused():
    """A VF GUID is a tenant port for the shared-partition rule too: full in storage with another tenant's port in it."""
    intent, devices = with_vfs(*ib_fabric())
    intent["infiniband"]["partitions"][0]["members"].append({"guid": vf(1, 0, 0), "membership": "full"})
    found = errors(intent, devices)
    assert any(e.startswith("lossless_fabric.infiniband.partitions[0].members[3]: ") and f"{vf(1, 0, 0)}=full makes tenant 'team-a' a full member" in e
               for e in found), found


def test_a_tenant_without_vfs_keeps_its_partition_as_before():
    """Hosts without VF GUIDs: the partition lists the port GUIDs only (what the plan wrote before issue 37 C2)."""
    before = _plan.build_plan(*ib_fabric(), GROUPS)["devices"]["ufm1"]["partitions_conf"]
    intent, devices = with_vfs(*ib_fabric(), hosts=(3, 4))
    after = _plan.build_plan(intent, devices, GROUPS)["devices"]["ufm1"]["partitions_conf"]
    team_a = [x for x in after.splitlines() if x.startswith("team-a=")]
    assert team_a == [x for x in before.splitlines() if x.startswith("team-a=")]
