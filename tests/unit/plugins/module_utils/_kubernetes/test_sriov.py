# SPDX-License-Identifier: GPL-3.0-or-later
"""_kubernetes/_sriov.py through _tenants.manifests: per tenant whose hosts have VFs, the node label patch, the
SriovNetworkNodePolicy, the NAD naming the tenant's own resource (ibKubernetesEnabled false with OpenSM), the
ResourceQuota keeping every tenant off the others' VFs and a VF tenant off the shared plugin; and the refusals of
what the SR-IOV operator's CRD or webhook would refuse (pkg/webhook/validate.go at 249e200)."""

from __future__ import annotations

import copy
import json

import pytest

from ansible_collections.lossless.fabric.plugins.filter.k8s_tenant_manifests import k8s_tenant_manifests
from ansible_collections.lossless.fabric.plugins.filter.k8s_tenant_node_labels import k8s_tenant_node_labels
from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes import _sriov as S
from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes import _tenants as T


def _tenant(hosts, pkey, vlan=None):
    return {"hosts": hosts, "namespace": hosts and None, "kubeconfig": None, "vlan": vlan, "qos_level": "rdma",
            "partition": {"name": "x", "pkey": pkey, "membership": "full", "ipoib": False} if pkey else None}


TENANTS = {"team-a": dict(_tenant(["gpu1", "gpu2"], "0x8001"), namespace="team-a"),
           "team-b": dict(_tenant(["gpu3"], "0x8003"), namespace="team-b"),
           "team-c": dict(_tenant(["gpu4"], "0x8005"), namespace="team-c")}  # no VFs: today's NAD


def _nics(*vfs):
    return [{"name": "mlx5_%d" % i, "netdev": "ib%d" % i, "guid": "0x0c42a1030001%04x" % i, "vfs": n} for i, n in enumerate(vfs)]


DEVICES = {"gpu1": {"kind": "host", "nics": _nics(8, 8)}, "gpu2": {"kind": "host", "nics": _nics(8, 8)},
           "gpu3": {"kind": "host", "nics": _nics(4, 0)}, "gpu4": {"kind": "host", "nics": [{"name": "mlx5_0", "netdev": "ib0"}]}}
SRIOV = {"namespace": "nvidia-network-operator", "prefix": "nvidia.com", "shared_resources": ["rdma/rdma_shared_device_a"]}


def render(tenants=None, devices=None, transport="infiniband", **kw):
    return T.manifests(tenants or TENANTS, transport, devices=DEVICES if devices is None else devices, sriov=dict(SRIOV, **kw))


def find(out, kind, ns=None):
    return [o for o in out["tenants"] if o["kind"] == kind and (ns is None or o["metadata"].get("namespace") == ns)]


def test_a_tenant_with_vfs_gets_its_policy_label_resource_and_quota():
    out = render()
    (pa,), (pb,) = [[p for p in find(out, "SriovNetworkNodePolicy") if p["metadata"]["labels"]["lossless.fabric/tenant"] == t]
                    for t in ("team-a", "team-b")]
    assert pa["apiVersion"] == "sriovnetwork.openshift.io/v1"
    assert pa["metadata"]["name"] == "lossless-fabric-team-a" and pa["metadata"]["namespace"] == "nvidia-network-operator"
    assert pa["spec"] == {"resourceName": "team_a", "nodeSelector": {"lossless.fabric/tenant": "team-a"}, "priority": 99, "numVfs": 8,
                          "nicSelector": {"pfNames": ["ib0", "ib1"]}, "deviceType": "netdevice", "isRdma": True, "linkType": "ib"}
    assert pb["spec"]["numVfs"] == 4 and pb["spec"]["nicSelector"] == {"pfNames": ["ib0"]}  # the NIC without VFs is not selected
    # the nodes of the VF tenants only, merge patches of the tenant label (team-c has no VFs: its node is left alone)
    assert out["nodes"] == [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": h, "labels": {"lossless.fabric/tenant": t}}}
                            for h, t in (("gpu1", "team-a"), ("gpu2", "team-a"), ("gpu3", "team-b"))]
    nad = find(out, "NetworkAttachmentDefinition", "team-a")[0]
    assert nad["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/resourceName": "nvidia.com/team_a"}
    conf = json.loads(nad["spec"]["config"])
    assert conf["ibKubernetesEnabled"] is False and conf["pkey"] == "0x0001"  # static GUIDs: no ib-kubernetes with OpenSM
    # a tenant without VFs keeps today's NAD (the role variable's resource, ib-kubernetes)
    nad_c = find(out, "NetworkAttachmentDefinition", "team-c")[0]
    assert nad_c["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == "mellanox.com/mlnx_sriov_rdma_ib"
    assert json.loads(nad_c["spec"]["config"])["ibKubernetesEnabled"] is True
    quotas = {q["metadata"]["namespace"]: q for q in find(out, "ResourceQuota")}
    assert quotas["team-a"]["metadata"]["name"] == "lossless-fabric-tenant"
    assert quotas["team-a"]["spec"]["hard"] == {"requests.nvidia.com/team_b": "0", "requests.rdma/rdma_shared_device_a": "0"}
    assert quotas["team-b"]["spec"]["hard"] == {"requests.nvidia.com/team_a": "0", "requests.rdma/rdma_shared_device_a": "0"}
    # without VFs: kept off the VF tenants' resources, not off the shared plugin (docs: not isolated by a device plugin)
    assert quotas["team-c"]["spec"]["hard"] == {"requests.nvidia.com/team_a": "0", "requests.nvidia.com/team_b": "0"}
    # every object says whose it is (tenant.yml snapshots and restores them by kind/namespace/name)
    assert all(o["metadata"]["labels"]["lossless.fabric/tenant"] in TENANTS for o in out["tenants"])


def test_without_device_data_nothing_changes():
    plain = T.manifests(TENANTS, "infiniband")
    assert plain == render(devices={}) and plain["nodes"] == [] and not find(plain, "ResourceQuota")
    assert k8s_tenant_manifests({"tenants": TENANTS}, "infiniband") == plain


def test_the_filter_reads_the_plans_devices_and_options():
    out = k8s_tenant_manifests({"tenants": TENANTS, "devices": DEVICES}, "infiniband", {}, {}, {},
                               {"namespace": "sriov-network-operator", "prefix": "example.com", "priority": 10})
    policy = find(out, "SriovNetworkNodePolicy")[0]
    assert policy["metadata"]["namespace"] == "sriov-network-operator" and policy["spec"]["priority"] == 10
    assert find(out, "NetworkAttachmentDefinition", "team-b")[0]["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == "example.com/team_b"


def test_roce_policy_is_eth_and_the_nad_names_the_vf_resource():
    roce = {"team-a": dict(TENANTS["team-a"], partition=None, vlan=101)}
    devices = {h: {"kind": "host", "nics": [{"name": "mlx5_0", "netdev": "eth2", "vfs": 2}]} for h in ("gpu1", "gpu2")}
    out = T.manifests(roce, "roce", ipam={"team-a": {"type": "whereabouts", "range": "10.1.0.0/24"}}, devices=devices, sriov=SRIOV)
    policy = find(out, "SriovNetworkNodePolicy")[0]
    assert policy["spec"]["linkType"] == "eth" and policy["spec"]["nicSelector"] == {"pfNames": ["eth2"]}
    nad = find(out, "NetworkAttachmentDefinition")[0]
    assert json.loads(nad["spec"]["config"])["vlan"] == 101
    assert nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == "nvidia.com/team_a"
    # alone with VFs: only the shared plugin is forbidden
    assert find(out, "ResourceQuota")[0]["spec"]["hard"] == {"requests.rdma/rdma_shared_device_a": "0"}


def test_a_nic_without_netdev_is_selected_by_its_pci_address_in_a_policy_of_its_own():
    # InfiniBand device data as inventories/lab-ib gives it: no netdev, the PF's pci (required with vf_guids)
    devices = dict(DEVICES, gpu3={"kind": "host", "nics": [{"name": "mlx5_0", "pci": "0000:0c:00.0", "vfs": 2},
                                                           {"name": "mlx5_1", "pci": "0000:16:00.0", "vfs": 2},
                                                           {"name": "mlx5_2", "netdev": "ib2", "pci": "0000:20:00.0", "vfs": 2}]})
    out = render(devices=devices)
    mine = [p for p in find(out, "SriovNetworkNodePolicy") if p["metadata"]["labels"]["lossless.fabric/tenant"] == "team-b"]
    # pfNames and rootDevices are never in one policy: the webhook matches a NIC against every selector given
    assert [(p["metadata"]["name"], p["spec"]["numVfs"], p["spec"]["nicSelector"]) for p in mine] == [
        ("lossless-fabric-team-b-1", 2, {"pfNames": ["ib2"]}),
        ("lossless-fabric-team-b-2", 2, {"rootDevices": ["0000:0c:00.0", "0000:16:00.0"]})]


def test_hosts_that_differ_get_a_policy_per_layout_on_a_layout_label():
    devices = dict(DEVICES, gpu2={"kind": "host", "nics": _nics(16, 4)})
    out = render(devices=devices)
    mine = [p for p in find(out, "SriovNetworkNodePolicy") if p["metadata"]["labels"]["lossless.fabric/tenant"] == "team-a"]
    got = [(p["metadata"]["name"], p["spec"]["nodeSelector"], p["spec"]["numVfs"], p["spec"]["nicSelector"]["pfNames"]) for p in mine]
    layout = "lossless.fabric/tenant-vf-layout"
    assert got == [("lossless-fabric-team-a-1", {"lossless.fabric/tenant": "team-a", layout: "1"}, 8, ["ib0", "ib1"]),
                   ("lossless-fabric-team-a-2", {"lossless.fabric/tenant": "team-a", layout: "2"}, 4, ["ib1"]),
                   ("lossless-fabric-team-a-3", {"lossless.fabric/tenant": "team-a", layout: "2"}, 16, ["ib0"])]
    assert {p["spec"]["resourceName"] for p in mine} == {"team_a"}  # one resource: the device plugin pools them
    labels = {p["metadata"]["name"]: p["metadata"]["labels"] for p in out["nodes"]}
    assert labels["gpu1"] == {"lossless.fabric/tenant": "team-a", layout: "1"} and labels["gpu2"][layout] == "2"
    # no node has two policies naming one PF (the webhook's validatePfNames would refuse the second)
    for host in ("gpu1", "gpu2"):
        pfs = [pf for p in mine if all(labels[host].get(k) == v for k, v in p["spec"]["nodeSelector"].items())
               for pf in p["spec"]["nicSelector"]["pfNames"]]
        assert sorted(pfs) == ["ib0", "ib1"]


@pytest.mark.parametrize("change, message", [
    ({"devices": {"gpu3": {"nics": [{"name": "mlx5_0", "netdev": "ib0", "vfs": -1}]}}}, r"tenant team-b: devices.gpu3.nics\[0\].vfs is -1"),
    ({"devices": {"gpu3": {"nics": [{"name": "mlx5_0", "netdev": "ib0", "vfs": "4"}]}}}, r"devices.gpu3.nics\[0\].vfs is '4'"),
    ({"devices": {"gpu3": {"nics": [{"name": "mlx5_0", "netdev": "ib0", "vfs": 129}]}}}, r"vfs is 129: .* above 128 on Mellanox"),
    ({"devices": {"gpu3": {"nics": [{"name": "mlx5_0", "netdev": None, "vfs": 4}]}}}, r"nics\[0\] has VFs but neither a netdev nor a pci address"),
    ({"devices": {"gpu3": {"nics": [{"name": "mlx5_0", "netdev": "ib0#1-2", "vfs": 4}]}}}, r"'#' starts a VF range"),
    ({"tenants": {"team.b": dict(TENANTS["team-b"], namespace="team-b")}}, r"tenant team.b: resourceName 'team.b'"),
    ({"tenants": {"Team-B": dict(TENANTS["team-b"], namespace="team-b")}}, r"tenant Team-B: the policy name 'lossless-fabric-Team-B'"),
    ({"tenants": {"team-b-": dict(TENANTS["team-b"], namespace="team-b")}}, r"tenant team-b-: resourceName 'team_b_'"),
    ({"tenants": {"x": dict(TENANTS["team-a"], hosts=["gpu1"], namespace="x"), "y": dict(TENANTS["team-a"], hosts=["gpu1"], namespace="y")}},
     r"host gpu1 is in tenants x and y, both with VFs"),
    ({"sriov": {"priority": 100}}, r"k8s_rdma_sriov_priority 100: an integer 0-99"),
    ({"sriov": {"priority": True}}, r"k8s_rdma_sriov_priority True"),
    ({"sriov": {"prefix": "kubernetes.io"}}, r"k8s_rdma_sriov_resource_prefix 'kubernetes.io'"),
    ({"sriov": {"prefix": "Nvidia.com"}}, r"k8s_rdma_sriov_resource_prefix 'Nvidia.com'"),
    ({"sriov": {"namespace": "Operator"}}, r"k8s_rdma_sriov_namespace 'Operator'"),
])
def test_refused_before_the_cluster_is_touched(change, message):
    tenants = change.get("tenants", TENANTS)
    devices = dict(DEVICES, **change.get("devices", {}))
    with pytest.raises(T.TenantError, match=message):
        T.manifests(tenants, "infiniband", devices=devices, sriov=dict(SRIOV, **change.get("sriov", {})))
    with pytest.raises(Exception, match="k8s_tenant_manifests: "):
        k8s_tenant_manifests({"tenants": tenants, "devices": devices}, "infiniband", {}, {}, {}, dict(SRIOV, **change.get("sriov", {})))


def test_stale_node_labels_are_removed_and_wanted_ones_kept():
    wanted = render()["nodes"]
    nodes = [{"metadata": {"name": "gpu1", "labels": {"lossless.fabric/tenant": "team-a", "kubernetes.io/hostname": "gpu1"}}},
             {"metadata": {"name": "gpu4", "labels": {"lossless.fabric/tenant": "team-a", "lossless.fabric/tenant-vf-layout": "2"}}},
             {"metadata": {"name": "gpu3", "labels": {"lossless.fabric/tenant": "team-z", "lossless.fabric/tenant-vf-layout": "1"}}},
             {"metadata": {"name": "cpu1", "labels": {"kubernetes.io/hostname": "cpu1"}}}]
    assert k8s_tenant_node_labels(nodes, wanted) == [
        # gpu3: its tenant label is set by its wanted patch; the layout label it no longer has is removed
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu3", "labels": {"lossless.fabric/tenant-vf-layout": None}}},
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": "gpu4", "labels": {"lossless.fabric/tenant": None, "lossless.fabric/tenant-vf-layout": None}}}]
    # state absent: nothing wanted, every label of ours goes
    assert [p["metadata"]["name"] for p in k8s_tenant_node_labels(nodes, [])] == ["gpu1", "gpu3", "gpu4"]
    with pytest.raises(Exception, match="k8s_tenant_node_labels: nodes and wanted must be lists"):
        k8s_tenant_node_labels({"resources": []}, wanted)


def test_rendering_does_not_change_its_inputs():
    tenants, devices = copy.deepcopy(TENANTS), copy.deepcopy(DEVICES)
    render(tenants, devices)
    assert tenants == TENANTS and devices == DEVICES
    assert S.resource_name("team-a") == "team_a"


def test_the_isolation_check_finds_a_pod_or_mpijob_asking_for_another_tenants_vfs():
    objects = render()["tenants"]
    assert T.isolation_findings(TENANTS, "infiniband", objects) == []
    pod = {"kind": "Pod", "metadata": {"namespace": "team-a", "name": "p"},
           "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/team_b": 1}}}]}}
    job = {"kind": "MPIJob", "metadata": {"namespace": "team-b", "name": "j"}, "spec": {"mpiReplicaSpecs": {"Worker": {"template": {
        "spec": {"containers": [{"name": "w", "resources": {"requests": {"nvidia.com/team_b": 1, "nvidia.com/team_a": 1}}}]}}}}}}
    # team-c has no VFs: its NAD's resource (the role variable's) is not another tenant's VFs for anyone
    mine = {"kind": "Pod", "metadata": {"namespace": "team-c", "name": "q"},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"mellanox.com/mlnx_sriov_rdma_ib": 1}}}]}}
    found = T.isolation_findings(TENANTS, "infiniband", objects + [pod, job, mine])
    assert sorted((f["object"], f["names"], f["detail"]) for f in found) == [
        ("MPIJob team-b/j", "team-a", "requests tenant team-a's resource nvidia.com/team_a"),
        ("Pod team-a/p", "team-b", "requests tenant team-b's resource nvidia.com/team_b"),
    ]
