# SPDX-License-Identifier: GPL-3.0-or-later
"""_kubernetes/_tenants.py: the tenants' NADs (ib-sriov with the 15-bit P_Key, sriov with the VLAN), their RBAC,
the plan reader, and the isolation check."""

from __future__ import annotations

import copy
import json

import pytest

from ansible_collections.lossless.fabric.plugins.filter.k8s_tenant_isolation import k8s_tenant_isolation
from ansible_collections.lossless.fabric.plugins.filter.k8s_tenant_manifests import k8s_tenant_manifests
from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes import _tenants as T

IB = {"team-a": {"hosts": ["gpu1"], "namespace": "team-a", "kubeconfig": None, "vlan": None, "qos_level": None,
                 "partition": {"name": "team-a", "pkey": "0x8002", "membership": "full", "ipoib": True}},
      "team-b": {"hosts": ["gpu2"], "namespace": "team-b", "kubeconfig": None, "vlan": None, "qos_level": None,
                 "partition": {"name": "team-b", "pkey": "0x8003", "membership": "limited", "ipoib": False}},
      "bare": {"hosts": ["gpu3"], "namespace": None, "kubeconfig": None, "vlan": None, "qos_level": None,
               "partition": {"name": "bare", "pkey": "0x8004", "membership": "full", "ipoib": False}}}
ROCE = {"team-a": dict(IB["team-a"], partition=None, vlan=101), "team-b": dict(IB["team-b"], partition=None, vlan=102)}
IPAM = {"team-a": {"type": "whereabouts", "range": "10.101.0.0/24"}, "team-b": {"type": "whereabouts", "range": "10.102.0.0/24"}}


def nad_config(out, ns):
    nad = next(o for o in out["tenants"] if o["kind"] == "NetworkAttachmentDefinition" and o["metadata"]["namespace"] == ns)
    return nad, json.loads(nad["spec"]["config"])


def test_infiniband_one_ib_sriov_network_per_tenant_with_its_15_bit_pkey():
    out = T.manifests(IB, "infiniband")
    assert [n["metadata"]["name"] for n in out["namespaces"]] == ["team-a", "team-b"]  # no namespace, no Kubernetes half
    nad, conf = nad_config(out, "team-a")
    assert nad["metadata"]["name"] == "team-a-rdma"
    assert nad["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/resourceName": "mellanox.com/mlnx_sriov_rdma_ib"}
    assert conf == {"cniVersion": "0.3.1", "name": "team-a-rdma", "type": "ib-sriov", "pkey": "0x0002", "link_state": "enable",
                    "rdmaIsolation": True, "ibKubernetesEnabled": True}
    assert nad_config(out, "team-b")[1]["pkey"] == "0x0003"
    binding = next(o for o in out["tenants"] if o["kind"] == "RoleBinding" and o["metadata"]["namespace"] == "team-b")
    assert binding["subjects"] == [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "lossless.fabric:tenant:team-b"}]
    role = next(o for o in out["tenants"] if o["kind"] == "Role" and o["metadata"]["namespace"] == "team-a")
    nad_rule = next(r for r in role["rules"] if "network-attachment-definitions" in r["resources"])
    assert nad_rule["verbs"] == ["get", "list", "watch"]  # a tenant never writes its network
    assert all(o["metadata"]["labels"]["lossless.fabric/tenant"] in ("team-a", "team-b") for o in out["tenants"] + out["namespaces"])


def test_roce_sriov_with_the_tenants_vlan_and_ipam_required():
    out = T.manifests(ROCE, "roce", ipam=IPAM, resources={"roce": "nvidia.com/roce_vf"})
    nad, conf = nad_config(out, "team-b")
    assert conf == {"cniVersion": "0.3.1", "name": "team-b-rdma", "type": "sriov", "vlan": 102, "ipam": IPAM["team-b"]}
    assert nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == "nvidia.com/roce_vf"
    with pytest.raises(T.TenantError, match="RoCE tenant team-a needs IPAM"):
        T.manifests(ROCE, "roce")


@pytest.mark.parametrize("change, message", [
    ({"team-b": dict(IB["team-b"], namespace="team-a")}, "tenants team-a and team-b share namespace team-a"),
    ({"team-b": dict(IB["team-b"], partition=None)}, "InfiniBand tenant team-b has no partition"),
    ({"team-b": dict(IB["team-b"], partition={"pkey": "0xffff"})}, "default partition"),
    ({"team-b": dict(IB["team-b"], partition={"pkey": "8003"})}, "is not 0x followed by"),
])
def test_refused_tenants(change, message):
    with pytest.raises(T.TenantError, match=message):
        T.manifests(dict(IB, **change), "infiniband")


def test_a_pkey_yaml_read_as_a_number_is_the_same_pkey():
    assert T.base_pkey(0x8002) == T.base_pkey("0x8002") == "0x0002"
    with pytest.raises(T.TenantError):
        T.base_pkey(True)


def test_plan_reader_and_filter_errors():
    assert T.plan_tenants({"devices": {}}) == {}
    assert T.plan_tenants({"tenants": IB}) is IB
    with pytest.raises(T.TenantError):
        T.plan_tenants({"tenants": ["team-a"]})
    assert k8s_tenant_manifests({"tenants": IB}, "infiniband")["namespaces"][0]["metadata"]["name"] == "team-a"
    with pytest.raises(Exception, match="k8s_tenant_manifests: transport 'ethernet'"):
        k8s_tenant_manifests({"tenants": IB}, "ethernet")


def test_isolation_clean_then_each_way_of_naming_another_tenants_network():
    objects = T.manifests(IB, "infiniband")["tenants"]
    assert T.isolation_findings(IB, "infiniband", objects) == []
    stolen = copy.deepcopy(nad_config(T.manifests(IB, "infiniband"), "team-b")[0])
    stolen["metadata"].update(namespace="team-a", name="other")
    pod = {"kind": "Pod", "metadata": {"namespace": "team-a", "name": "p", "annotations": {"k8s.v1.cni.cncf.io/networks": "team-b/team-b-rdma"}}}
    job = {"kind": "MPIJob", "metadata": {"namespace": "team-b", "name": "j"}, "spec": {"mpiReplicaSpecs": {"Worker": {"template": {
        "metadata": {"annotations": {"k8s.v1.cni.cncf.io/networks": json.dumps([{"name": "team-a-rdma", "namespace": "team-a"}])}}}}}}}
    binding = {"kind": "RoleBinding", "metadata": {"namespace": "team-b", "name": "rb"},
               "subjects": [{"kind": "Group", "name": "lossless.fabric:tenant:team-a"}]}
    found = k8s_tenant_isolation(objects + [stolen, pod, job, binding], {"tenants": IB}, "infiniband")
    assert sorted((f["object"], f["names"], f["detail"]) for f in found) == [
        ("MPIJob team-b/j", "team-a", "attaches network team-a/team-a-rdma of tenant team-a"),
        ("NetworkAttachmentDefinition team-a/other", "team-b", "its config carries tenant team-b's P_Key 0x0003"),
        ("NetworkAttachmentDefinition team-a/other", "team-b", "its config is named team-b-rdma, tenant team-b's network"),
        ("Pod team-a/p", "team-b", "attaches network team-b/team-b-rdma of tenant team-b"),
        ("RoleBinding team-b/rb", "team-a", "binds tenant team-a's group lossless.fabric:tenant:team-a"),
    ]


def test_isolation_roce_vlan():
    objects = T.manifests(ROCE, "roce", ipam=IPAM)["tenants"]
    rogue = {"kind": "NetworkAttachmentDefinition", "metadata": {"namespace": "team-a", "name": "x"},
             "spec": {"config": json.dumps({"type": "sriov", "vlan": 102})}}
    found = T.isolation_findings(ROCE, "roce", objects + [rogue])
    assert [(f["object"], f["detail"]) for f in found] == [("NetworkAttachmentDefinition team-a/x", "its config carries tenant team-b's VLAN 102")]
