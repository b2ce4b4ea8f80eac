# SPDX-License-Identifier: GPL-3.0-or-later
"""k8sim's operator emulation (tests/lab/k8sim/operators.py): CRDs become Established, the
Multi-NIC CNI controller acts only while it is deployed (finalizer, net-attach-defs, status,
the mellanox failure, Terminating without a controller), and the Network Operator deploys
the RDMA plugin from nic-cluster-policy, in its own namespace, only while its Deployment runs."""
from __future__ import annotations

import json
import pathlib
import sys
import time
import urllib.error
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from k8sim.client import K8sSim  # noqa: E402
from k8sim.operators import image_name  # noqa: E402
from labproc import wait_for  # noqa: E402

NODES = [{"name": n, "gpus": 8, "nics": [{"name": "mlx5_0", "netdev": "eth2"}]} for n in ("gpu1", "gpu2")]
MNC = "/apis/multinic.fms.io/v1/multinicnetworks"
NCP = "/apis/mellanox.com/v1alpha1/nicclusterpolicies"
CONTROLLER = {"metadata": {"name": "controller"}, "spec": {
    "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [
        {"name": "manager", "image": "ghcr.io/foundation-model-stack/multi-nic-cni-controller:v1.3.1"}]}}}}
NETOP_NS = "netop-elsewhere"
NETOP_IMAGE = "nvcr.io/nvidia/cloud-native/network-operator:v26.4.1"  # the chart's Deployment (tests/lab/helmsim)


def operator(name, image, replicas=1):
    """A Deployment as the Network Operator's chart makes it (or another operator's)."""
    labels = {"app.kubernetes.io/name": name}
    return {"metadata": {"name": name}, "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": {
        "metadata": {"labels": labels}, "spec": {"containers": [{"name": name, "image": image, "command": ["/manager"]}]}}}}


def network(name, plugin="macvlan", namespaces=None):
    spec = {"ipam": '{"type":"multi-nic-ipam","hostBlock":8,"interfaceBlock":2,"vlanMode":"l2"}', "multiNICIPAM": True,
            "subnet": "172.30.0.0/16", "plugin": {"cniVersion": "0.3.1", "type": plugin}}
    if namespaces:
        spec["namespaces"] = namespaces
    return {"metadata": {"name": name}, "spec": spec}


@pytest.fixture
def sim(tmp_path):
    with K8sSim({"time_scale": 0.01, "nodes": NODES}, str(tmp_path / "sim")) as running:
        yield running


def call(sim, method, path, body=None):
    ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
    req = urllib.request.Request(sim.url + path, data=json.dumps(body).encode() if body is not None else None,
                                 method=method, headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise


def test_crd_becomes_established(sim):
    crd = {"metadata": {"name": "widgets.example.com"}, "spec": {
        "group": "example.com", "scope": "Namespaced", "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
    call(sim, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    got = wait_for(lambda: (call(sim, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
                            .get("status") or {}).get("conditions"), "Established")
    assert {c["type"]: c["status"] for c in got} == {"NamesAccepted": "True", "Established": "True"}


def test_multinic_network_needs_the_controller(sim):
    call(sim, "POST", MNC, network("net1", namespaces=["default"]))
    time.sleep(0.3)
    net = call(sim, "GET", MNC + "/net1")
    assert "status" not in net and "finalizers" not in net["metadata"]  # nobody acts on it yet
    call(sim, "POST", "/apis/apps/v1/namespaces/default/deployments", CONTROLLER)
    net = wait_for(lambda: (call(sim, "GET", MNC + "/net1").get("status") or {}).get("configStatus") and call(sim, "GET", MNC + "/net1"),
                   "configStatus")
    assert net["status"]["configStatus"] == "Success" and net["status"]["routeStatus"] == "Success"
    assert net["status"]["discovery"] == {"existDaemon": 2, "infoAvailable": 2, "cidrProcessed": 2}
    assert net["metadata"]["finalizers"] == ["finalizers.multinicnetwork.multinic.fms.io"]
    nad = call(sim, "GET", "/apis/k8s.cni.cncf.io/v1/namespaces/default/network-attachment-definitions/net1")
    assert nad["metadata"]["ownerReferences"][0]["uid"] == net["metadata"]["uid"]
    config = json.loads(nad["spec"]["config"])
    assert (config["type"], config["plugin"]["type"], config["ipam"]["type"]) == ("multi-nic", "macvlan", "multi-nic-ipam")
    assert call(sim, "GET", "/apis/k8s.cni.cncf.io/v1/namespaces/kube-system/network-attachment-definitions/net1") is None

    # deletion: the controller removes the net-attach-defs, then its finalizer
    call(sim, "DELETE", MNC + "/net1")
    wait_for(lambda: call(sim, "GET", MNC + "/net1") is None, "net1 gone")
    assert call(sim, "GET", "/apis/k8s.cni.cncf.io/v1/namespaces/default/network-attachment-definitions/net1") is None

    # without the controller a network with the finalizer stays Terminating
    call(sim, "POST", MNC, network("net2"))
    wait_for(lambda: call(sim, "GET", MNC + "/net2")["metadata"].get("finalizers"), "finalizer")
    call(sim, "DELETE", "/apis/apps/v1/namespaces/default/deployments/controller")
    call(sim, "DELETE", MNC + "/net2")
    time.sleep(0.3)
    assert call(sim, "GET", MNC + "/net2")["metadata"].get("deletionTimestamp")


def test_mellanox_plugin_needs_sriov_resources(sim):
    call(sim, "POST", "/apis/apps/v1/namespaces/default/deployments", CONTROLLER)
    call(sim, "POST", MNC, network("hd", plugin="mellanox"))
    status = wait_for(lambda: (call(sim, "GET", MNC + "/hd").get("status") or {}).get("configStatus") and call(sim, "GET", MNC + "/hd")["status"],
                      "status")
    assert status["configStatus"] == "Failed"
    assert status["message"] == "Failed to create hd: failed to get resource annotation from sriov plugin config"


def test_network_operator_deploys_the_plugin_from_the_policy(sim):
    policy = {"metadata": {"name": "nic-cluster-policy"}, "spec": {"rdmaSharedDevicePlugin": {
        "image": "k8s-rdma-shared-dev-plugin", "repository": "nvcr.io/nvidia/mellanox", "version": "network-operator-v26.4.1",
        "config": json.dumps({"configList": [{"resourceName": "rdma_a", "rdmaHcaMax": 7, "selectors": {"ifNames": ["eth2"]}}]})}}}
    call(sim, "POST", NCP, policy)
    call(sim, "POST", NCP, dict(policy, metadata={"name": "other"}))
    # neither the operator's namespace alone, nor another operator, nor the operator scaled to 0 acts on the policy
    call(sim, "POST", "/api/v1/namespaces", {"metadata": {"name": "nvidia-network-operator"}})
    call(sim, "POST", "/api/v1/namespaces", {"metadata": {"name": NETOP_NS}})
    call(sim, "POST", "/apis/apps/v1/namespaces/%s/deployments" % NETOP_NS,
         operator("sriov-network-operator", "nvcr.io/nvidia/mellanox/sriov-network-operator:network-operator-v26.4.1"))
    call(sim, "POST", "/apis/apps/v1/namespaces/%s/deployments" % NETOP_NS, operator("network-operator", NETOP_IMAGE, replicas=0))
    time.sleep(0.3)
    assert "status" not in call(sim, "GET", NCP + "/nic-cluster-policy") and "status" not in call(sim, "GET", NCP + "/other")
    assert "apps/daemonsets" not in sim.objects()
    call(sim, "PATCH", "/apis/apps/v1/namespaces/%s/deployments/network-operator" % NETOP_NS, {"spec": {"replicas": 1}})
    wait_for(lambda: (call(sim, "GET", NCP + "/nic-cluster-policy").get("status") or {}).get("state") == "ready", "ready", 20)
    assert call(sim, "GET", NCP + "/other")["status"]["state"] == "ignore"
    # the operator deploys its operands in its own namespace (the Deployment's)
    ds = call(sim, "GET", "/apis/apps/v1/namespaces/%s/daemonsets/rdma-shared-dp-ds" % NETOP_NS)
    assert ds["spec"]["template"]["spec"]["containers"][0]["image"] == \
        "nvcr.io/nvidia/mellanox/k8s-rdma-shared-dev-plugin:network-operator-v26.4.1"
    assert call(sim, "GET", "/apis/apps/v1/namespaces/nvidia-network-operator/daemonsets/rdma-shared-dp-ds") is None
    wait_for(lambda: all((n["status"]["allocatable"].get("rdma/rdma_a") == "7") for n in sim.objects()["nodes"]), "rdma/rdma_a")
    # broken node: the policy goes notReady
    sim.break_rdma("gpu2")
    call(sim, "DELETE", "/api/v1/namespaces/%s/pods?labelSelector=app%%3Drdma-shared-dp" % NETOP_NS)
    wait_for(lambda: call(sim, "GET", NCP + "/nic-cluster-policy")["status"]["state"] == "notReady", "notReady", 20)
    # deleting the policy garbage-collects what the operator made for it
    call(sim, "DELETE", NCP + "/nic-cluster-policy")
    wait_for(lambda: call(sim, "GET", "/apis/apps/v1/namespaces/%s/daemonsets/rdma-shared-dp-ds" % NETOP_NS) is None, "GC")


@pytest.mark.parametrize("image, name", [
    ("nvcr.io/nvidia/cloud-native/network-operator:v26.4.1", "network-operator"),
    ("nvcr.io/nvidia/mellanox/sriov-network-operator:v1", "sriov-network-operator"),
    ("registry.local:5000/network-operator@sha256:0123", "network-operator"),
    ("multi-nic-cni-controller", "multi-nic-cni-controller"),
])
def test_image_name_is_the_last_path_part_without_tag_or_digest(image, name):
    assert image_name(image) == name
