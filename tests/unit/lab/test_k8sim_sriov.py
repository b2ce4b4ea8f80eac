# SPDX-License-Identifier: GPL-3.0-or-later
"""k8sim's SR-IOV Network Operator emulation and ResourceQuota admission (tests/lab/k8sim/operators.py,
controllers.py; README.md "SR-IOV Network Operator and ResourceQuota"), through the HTTP API.

Every rule here failed against the simulator before it: the SriovNetworkNodePolicy resource was not served
(404), nothing advertised VFs, resourcequotas were stored without status or admission."""
from __future__ import annotations

import json
import pathlib
import sys
import urllib.error
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from k8sim.client import K8sSim  # noqa: E402
from labproc import wait_for  # noqa: E402

OP_NS = "nvidia-network-operator"
TENANT = "lossless.fabric/tenant"
NODES = [
    {"name": "gpu1", "gpus": 8, "labels": {TENANT: "a"},
     "nics": [{"name": "mlx5_0", "netdev": "eth2", "totalvfs": 8}, {"name": "mlx5_1", "netdev": "eth3", "totalvfs": 8}]},
    {"name": "gpu2", "gpus": 8, "labels": {TENANT: "b"}, "nics": [{"name": "mlx5_0", "netdev": "eth2", "totalvfs": 8}]},
    {"name": "gpu3", "gpus": 8, "labels": {TENANT: "a"}, "nics": [{"name": "mlx5_0", "netdev": "eth2", "totalvfs": 0}]},
]
POLICIES = "/apis/sriovnetwork.openshift.io/v1/namespaces/%s/sriovnetworknodepolicies" % OP_NS
STATES = "/apis/sriovnetwork.openshift.io/v1/namespaces/%s/sriovnetworknodestates" % OP_NS
DENIED = 'admission webhook "operator-webhook.sriovnetwork.openshift.io" denied the request: '


@pytest.fixture
def sim(tmp_path):
    # time_scale 0.01: sriov_sync 0.1 s, rdma_register 0.05 s; the grace after a withdrawal 0.1 s
    with K8sSim({"time_scale": 0.01, "nodes": NODES, "namespaces": [OP_NS, "tenant-a"],
                 "delays": {"device_plugin_grace": 10.0}}, str(tmp_path / "sim")) as running:
        yield running


def call(sim, method, path, body=None):
    """(HTTP status, body, Warning headers)."""
    req = urllib.request.Request(sim.url + path, data=json.dumps(body).encode() if body is not None else None,
                                 method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read()), resp.headers.get_all("Warning") or []
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), []


def ok(sim, method, path, body=None):
    code, got, _w = call(sim, method, path, body)
    assert code in (200, 201), got
    return got


def install_operator(sim, prefix="nvidia.com"):
    """The operator's Deployment as the NVIDIA Network Operator chart's sriov-network-operator subchart makes it."""
    labels = {"app": "sriov-network-operator"}
    env = [{"name": "RESOURCE_PREFIX", "value": prefix}] if prefix else []
    ok(sim, "POST", "/apis/apps/v1/namespaces/%s/deployments" % OP_NS, {
        "metadata": {"name": "sriov-network-operator"}, "spec": {"selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels}, "spec": {"containers": [{
                "name": "sriov-network-operator", "image": "nvcr.io/nvidia/mellanox/sriov-network-operator:v26.4.0",
                "env": env}]}}}})
    wait_for(lambda: len(ok(sim, "GET", STATES)["items"]) == len(NODES), "a SriovNetworkNodeState per node")


def policy(name, tenant, pfs, num_vfs=8, resource=None, **spec):
    body = {"metadata": {"name": name}, "spec": {
        "resourceName": tenant if resource is None else resource, "nodeSelector": {TENANT: tenant}, "numVfs": num_vfs,
        "nicSelector": {"pfNames": pfs}, "isRdma": True, "linkType": "eth"}}
    body["spec"].update(spec)
    return body


def alloc(sim, node, res):
    return (ok(sim, "GET", "/api/v1/nodes/" + node)["status"].get("allocatable") or {}).get(res)


def pod(name, res, count=1, where="requests"):
    return {"metadata": {"name": name}, "spec": {"containers": [
        {"name": "c", "image": "x", "resources": {where: {res: str(count)}}}]}}


def test_policy_advertises_vfs_on_its_nodes_only_while_the_operator_runs(sim):
    assert ok(sim, "POST", POLICIES, policy("lossless-fabric-a", "a", ["eth2", "eth3#0-3"]))
    assert not wait_for_none(sim)  # no operator: nothing renders the policy, no node state, nothing advertised
    install_operator(sim)
    wait_for(lambda: alloc(sim, "gpu1", "nvidia.com/a") == "12", "8 VFs of eth2 + VFs 0-3 of eth3 on gpu1")
    assert alloc(sim, "gpu2", "nvidia.com/a") is None  # another tenant's node
    assert alloc(sim, "gpu3", "nvidia.com/a") is None  # the tenant's node without an SR-IOV capable NIC
    assert ok(sim, "GET", POLICIES + "/lossless-fabric-a")["spec"]["deviceType"] == "netdevice"  # the CRD's default
    state = ok(sim, "GET", STATES + "/gpu1")
    assert state["status"]["syncStatus"] == "Succeeded"
    assert {i["name"]: i.get("numVfs") for i in state["status"]["interfaces"]} == {"eth2": 8, "eth3": 8}
    # externally managed: the VFs now exist (8), but the policy's link type is not the PF's
    code, got, _w = call(sim, "POST", POLICIES, policy("ext", "a", ["eth2#0-1"], resource="ext", externallyManaged=True,
                                                       linkType="ib"))
    assert (code, got["message"]) == (400, DENIED + "LinkType(ib) in CR ext is not equal to the LinkType for the PF "
                                                    "externally value(ETH)")
    assert [(i["name"], i["numVfs"], [g["vfRange"] for g in i["vfGroups"]]) for i in state["spec"]["interfaces"]] == \
        [("eth2", 8, ["0-7"]), ("eth3", 8, ["0-3"])]
    assert {i["name"]: i["totalvfs"] for i in state["status"]["interfaces"]} == {"eth2": 8, "eth3": 8}
    assert ok(sim, "GET", STATES + "/gpu3")["status"]["interfaces"] == []
    # scheduling honours the advertised VFs
    ok(sim, "POST", "/api/v1/namespaces/tenant-a/pods", pod("fits", "nvidia.com/a", 2))
    assert wait_for(lambda: ok(sim, "GET", "/api/v1/namespaces/tenant-a/pods/fits")["spec"].get("nodeName")) == "gpu1"
    ok(sim, "POST", "/api/v1/namespaces/tenant-a/pods", pod("too-many", "nvidia.com/a", 11))
    cond = wait_for(lambda: (ok(sim, "GET", "/api/v1/namespaces/tenant-a/pods/too-many").get("status") or {}).get("conditions"),
                    "PodScheduled False")
    assert cond[0]["message"].startswith("0/3 nodes are available: 3 Insufficient nvidia.com/a.")
    # the policy deleted: the plugin withdraws the resource (0 during the grace, then gone)
    ok(sim, "DELETE", POLICIES + "/lossless-fabric-a")
    wait_for(lambda: alloc(sim, "gpu1", "nvidia.com/a") is None, "nvidia.com/a withdrawn")


def wait_for_none(sim):
    """What a short wait shows without the operator: any node state or advertised VF (the sim's timers are 0.1 s)."""
    try:
        return wait_for(lambda: ok(sim, "GET", STATES)["items"] or alloc(sim, "gpu1", "nvidia.com/a"), "x", timeout=0.5)
    except AssertionError:
        return None


def test_resource_prefix_comes_from_the_operator_deployment(sim):
    install_operator(sim, prefix=None)  # no RESOURCE_PREFIX: the chart's default openshift.io
    ok(sim, "POST", POLICIES, policy("p", "b", ["eth2"], num_vfs=4, resource="tenant_b"))
    wait_for(lambda: alloc(sim, "gpu2", "openshift.io/tenant_b") == "4", "openshift.io/tenant_b on gpu2")


WEBHOOK_CASES = [
    (policy("p", "a", ["eth2"], resource="tenant-a_"),
     'resource name "tenant-a_" is invalid: must consist of alphanumeric characters or hyphens, and must start and end '
     "with an alphanumeric character (e.g. 'myresource', 'net-device-1'), see "
     "https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names"),
    (policy("p", "a", ["eth2"], resource=""), "resource name must not be empty"),
    (policy("p", "a", ["eth2"], resource="r" * 64), 'resource name "%s" must be no more than 63 characters' % ("r" * 64)),
    (policy("p", "a", ["eth2"], nicSelector={"pfNames": ["eth2"], "netFilter": "openstack/NetworkID:x"}),
     "nicSelector fields vendor, deviceID, pfNames, and rootDevices are not allowed when netFilter is specified"),
    (policy("p", "a", ["eth2#1#2"]),
     "failed to parse eth2#1#2 PF name in nicSelector, probably incorrect separator character usage"),
    (policy("p", "a", ["eth2#1"]), "failed to parse eth2#1 PF name nicSelector, probably incorrect range character usage"),
    (policy("p", "a", ["eth2#x-3"]), "failed to parse eth2#x-3 PF name nicSelector, start range is incorrect"),
    (policy("p", "a", ["eth2#1-y"]), "failed to parse eth2#1-y PF name nicSelector, end range is incorrect"),
    (policy("p", "a", ["eth2"], linkType="ib", eSwitchMode="switchdev"),
     "'eSwitchMode: switchdev' can be used only with ethernet links"),
    (policy("p", "a", []),
     "at least one of these parameters (vendor, deviceID, pfNames, rootDevices or netFilter) has to be defined in "
     "nicSelector in CR p"),
    (policy("p", "a", ["eth2#0-8"]), "failed to parse eth2#0-8 PF name nicSelector, end range exceeds the maximum VF index "),
    (policy("p", "a", ["eth2#3-1"]),
     "failed to parse eth2#3-1 PF name nicSelector, end range shall not be smaller than start range"),
    (policy("p", "a", ["eth2"], deviceType="vfio-pci"),
     "'deviceType: vfio-pci' conflicts with 'isRdma: true'; Set 'deviceType' to (string)'netdevice' Or Set 'isRdma' "
     "to (bool)'false'"),
    (policy("p", "nobody", ["eth2"]), "no matched node is selected by the nodeSelector in CR p"),
    (policy("p", "a", ["eth9"]), "no supported NIC is selected by the nicSelector in CR p"),
    (policy("p", "a", ["eth2"], num_vfs=0), "numVfs(0) in CR p is not allowed"),
    (policy("p", "a", ["eth2"], num_vfs=200), "numVfs(200) in CR p exceed the maximum allowed value(128) interface(eth2)"),
]


def test_webhook_denies_with_the_operators_text(sim):
    """One cluster for all cases (a simulator start each would cost more than the cases)."""
    for body, _why in WEBHOOK_CASES:  # no operator, no webhook: each policy is stored
        code, got, _w = call(sim, "POST", POLICIES, body)
        assert code == 201, got
        ok(sim, "DELETE", POLICIES + "/p")
    install_operator(sim)
    for body, why in WEBHOOK_CASES:
        code, got, _w = call(sim, "POST", POLICIES, body)
        assert (code, got.get("message"), got.get("reason")) == (400, DENIED + why, why), body


def test_webhook_overlap_and_namespace_warning(sim):
    install_operator(sim)
    ok(sim, "POST", POLICIES, policy("first", "a", ["eth3#0-3"]))
    ok(sim, "POST", POLICIES, policy("second", "a", ["eth3#4-7"], resource="other"))  # disjoint ranges of one PF
    code, got, _w = call(sim, "POST", POLICIES, policy("third", "a", ["eth3#2-5"], resource="third"))
    assert (code, got["message"]) == (400, DENIED + "VF index range in eth3#2-5 is overlapped with existing policy first")
    # no range is -1..-1 (ParseVfRange): two whole-PF policies overlap; a whole-PF one beside a range does not
    ok(sim, "POST", POLICIES, policy("e2", "a", ["eth2"], resource="e2"))
    code, got, _w = call(sim, "POST", POLICIES, policy("e2b", "a", ["eth2"], resource="e2b"))
    assert (code, got["message"]) == (400, DENIED + "VF index range in eth2 is overlapped with existing policy e2")
    # externally managed VFs: the policy must fit what the PF has (none yet) and its link type
    code, got, _w = call(sim, "POST", POLICIES, policy("ext", "a", ["eth2"], resource="ext", externallyManaged=True))
    assert (code, got["message"]) == (400, DENIED + "numVfs(8) in CR ext is higher than the virtual functions allocated "
                                                    "for the PF externally value(0)")
    code, got, warnings = call(sim, "POST", POLICIES.replace(OP_NS, "tenant-a"), policy("elsewhere", "b", ["eth2"]))
    assert code == 201 and warnings == ['299 - "elsewhere is created or updated but not used. Only policy in %s '
                                        'namespace is respected."' % OP_NS]


CRD_CASES = [
    ({"priority": 100}, "spec.priority: Invalid value: 100: spec.priority in body should be less than or equal to 99"),
    ({"linkType": "infiniband"}, 'spec.linkType: Unsupported value: "infiniband": supported values: "eth", "ETH", "ib", "IB"'),
    ({"numVfs": -1}, "spec.numVfs: Invalid value: -1: spec.numVfs in body should be greater than or equal to 0"),
]


def test_crd_schema_refusals(sim):
    for spec, message in CRD_CASES:
        code, got, _w = call(sim, "POST", POLICIES, policy("p", "a", ["eth2"], **spec))
        assert (code, got["message"]) == (422, 'SriovNetworkNodePolicy.sriovnetwork.openshift.io "p" is invalid: ' + message)
    body = policy("p", "a", ["eth2"])
    del body["spec"]["numVfs"]
    code, got, _w = call(sim, "POST", POLICIES, body)
    assert (code, got["message"]) == (422, 'SriovNetworkNodePolicy.sriovnetwork.openshift.io "p" is invalid: '
                                           "spec.numVfs: Required value")


def test_more_vfs_than_totalvfs_never_syncs(sim):
    """Mellanox: the webhook allows up to 128 VFs; the config daemon's generic apply refuses more than sriov_totalvfs,
    and in the default configurationMode (daemon) the node state stays InProgress; nothing is advertised."""
    install_operator(sim)
    ok(sim, "POST", POLICIES, policy("lossless-fabric-b", "b", ["eth2"], num_vfs=16))
    wait_for(lambda: ok(sim, "GET", STATES + "/gpu2")["spec"].get("interfaces"), "the policy rendered for gpu2")
    assert wait_for_none_on(sim, "gpu2", "nvidia.com/b") is None
    state = ok(sim, "GET", STATES + "/gpu2")
    assert state["status"]["syncStatus"] == "InProgress" and "lastSyncError" not in state["status"]
    assert ok(sim, "GET", STATES + "/gpu1")["status"]["syncStatus"] == "Succeeded"  # other nodes are unaffected


def wait_for_none_on(sim, node, res):
    try:
        return wait_for(lambda: alloc(sim, node, res), res, timeout=0.5)
    except AssertionError:
        return None


QUOTAS = "/api/v1/namespaces/tenant-a/resourcequotas"
REFUSED = ('pods "%s" is forbidden: exceeded quota: lossless-fabric-tenant, requested: requests.nvidia.com/b=1, '
           "used: requests.nvidia.com/b=0, limited: requests.nvidia.com/b=0")


def quota(hard, name="lossless-fabric-tenant"):
    return {"metadata": {"name": name}, "spec": {"hard": hard}}


def test_quota_refuses_another_tenants_resource(sim):
    ok(sim, "POST", QUOTAS, quota({"requests.nvidia.com/b": "0", "requests.rdma/shared": "0", "requests.nvidia.com/a": "2"}))
    got = wait_for(lambda: ok(sim, "GET", QUOTAS + "/lossless-fabric-tenant").get("status"), "the quota's status")
    assert got == {"hard": {"requests.nvidia.com/a": "2", "requests.nvidia.com/b": "0", "requests.rdma/shared": "0"},
                   "used": {"requests.nvidia.com/a": "0", "requests.nvidia.com/b": "0", "requests.rdma/shared": "0"}}
    code, body, _w = call(sim, "POST", "/api/v1/namespaces/tenant-a/pods", pod("steal", "nvidia.com/b"))
    assert (code, body["reason"], body["message"]) == (403, "Forbidden", REFUSED % "steal")
    # limits alone: extended resources' requests default to the limits, the same refusal
    code, body, _w = call(sim, "POST", "/api/v1/namespaces/tenant-a/pods", pod("steal2", "nvidia.com/b", where="limits"))
    assert (code, body["message"]) == (403, REFUSED % "steal2")
    # a dry run is admitted (or refused) the same way and reserves nothing
    ok(sim, "POST", "/api/v1/namespaces/tenant-a/pods?dryRun=All", pod("dry", "nvidia.com/a", 2))
    assert ok(sim, "GET", QUOTAS + "/lossless-fabric-tenant")["status"]["used"]["requests.nvidia.com/a"] == "0"
    ok(sim, "POST", "/api/v1/namespaces/tenant-a/pods", pod("own", "nvidia.com/a", 2))  # its own resource, within hard
    assert ok(sim, "GET", QUOTAS + "/lossless-fabric-tenant")["status"]["used"]["requests.nvidia.com/a"] == "2"
    code, body, _w = call(sim, "POST", "/api/v1/namespaces/tenant-a/pods", pod("more", "nvidia.com/a"))
    assert (code, body["message"]) == (403, 'pods "more" is forbidden: exceeded quota: lossless-fabric-tenant, requested: '
                                            "requests.nvidia.com/a=1, used: requests.nvidia.com/a=2, limited: requests.nvidia.com/a=2")


def test_quota_hard_names(sim):
    code, body, _w = call(sim, "POST", QUOTAS, quota({"gpus": "0"}, name="bad"))
    assert (code, body["message"]) == (422, 'ResourceQuota "bad" is invalid: spec.hard[gpus]: Invalid value: "gpus": '
                                            "must be a standard resource for quota")
    # limits.<extended> is a valid name, but the pod evaluator tracks only requests.<extended>: stored, never enforced
    ok(sim, "POST", QUOTAS, quota({"limits.nvidia.com/b": "0"}, name="limits-only"))
    got = wait_for(lambda: ok(sim, "GET", QUOTAS + "/limits-only").get("status"), "the quota's status")
    assert got == {"hard": {"limits.nvidia.com/b": "0"}, "used": {}}
    ok(sim, "POST", "/api/v1/namespaces/tenant-a/pods", pod("passes", "nvidia.com/b", where="limits"))
    code, body, _w = call(sim, "POST", QUOTAS, quota({"requests.nvidia.com/b": "-1"}, name="neg"))
    assert (code, body["message"]) == (422, 'ResourceQuota "neg" is invalid: spec.hard[requests.nvidia.com/b]: Invalid '
                                            'value: "-1": must be greater than or equal to 0')
    # the pod count is tracked too
    ok(sim, "POST", QUOTAS, quota({"pods": "1"}, name="count"))
    wait_for(lambda: ok(sim, "GET", QUOTAS + "/count").get("status") == {"hard": {"pods": "1"}, "used": {"pods": "1"}},
             "pods used 1")
    code, body, _w = call(sim, "POST", "/api/v1/namespaces/tenant-a/pods", pod("second", "nvidia.com/b"))
    assert (code, body["message"]) == (403, 'pods "second" is forbidden: exceeded quota: count, requested: pods=1, used: '
                                            "pods=1, limited: pods=1")


def test_mpijob_workers_refused_by_quota(sim):
    """Two workers asking 1 each against hard 1: the first is admitted and reserved at once, the second refused in the
    same controller pass; the operator records the 403 and creates no launcher."""
    ok(sim, "POST", QUOTAS, quota({"requests.nvidia.com/b": "1"}))
    wait_for(lambda: ok(sim, "GET", QUOTAS + "/lossless-fabric-tenant").get("status"), "the quota's status")
    worker = {"name": "worker", "image": "x", "resources": {"limits": {"nvidia.com/b": 1}}}
    launcher = {"name": "launcher", "image": "x", "command": ["mpirun", "all_reduce_perf"]}
    ok(sim, "POST", "/apis/kubeflow.org/v2beta1/namespaces/tenant-a/mpijobs", {
        "metadata": {"name": "j"}, "spec": {"mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": {"containers": [launcher]}}},
            "Worker": {"replicas": 2, "template": {"spec": {"containers": [worker]}}}}}})
    events = wait_for(lambda: [e for e in ok(sim, "GET", "/api/v1/namespaces/tenant-a/events")["items"]
                               if e["reason"] == "MPIJobFailed"], "the operator's event")
    assert [e["message"] for e in events] == [
        'worker pod created failed: pods "j-worker-1" is forbidden: exceeded quota: lossless-fabric-tenant, requested: '
        "requests.nvidia.com/b=1, used: requests.nvidia.com/b=1, limited: requests.nvidia.com/b=1"]
    assert [p["metadata"]["name"] for p in ok(sim, "GET", "/api/v1/namespaces/tenant-a/pods")["items"]] == ["j-worker-0"]
    assert ok(sim, "GET", "/apis/batch/v1/namespaces/tenant-a/jobs")["items"] == []
