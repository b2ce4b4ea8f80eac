# SPDX-License-Identifier: GPL-3.0-or-later
"""k8s_rdma's apply calls: component order, one object per call with --diff, check-mode deferral."""

from __future__ import annotations

import pytest

from ansible_collections.lossless.fabric.plugins.filter.k8s_apply_batches import k8s_apply_batches
from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes import _apply as _k8s_apply


def obj(kind, name, namespace=None, api="v1"):
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": meta}


CRD = obj("CustomResourceDefinition", "multinicnetworks.multinic.fms.io", api="apiextensions.k8s.io/v1")
CM = obj("ConfigMap", "rdma-devices", "kube-system")
DS = obj("DaemonSet", "rdma-shared-dp", "kube-system", api="apps/v1")
CTRL = obj("Deployment", "multi-nic-cni-operator", "multi-nic-cni-operator", api="apps/v1")
NET = obj("MultiNicNetwork", "multinic-rdma", api="multinic.fms.io/v1")
MANIFESTS = {"namespaces": [obj("Namespace", "multi-nic-cni-operator")], "multinicnetwork": [NET], "device_plugin": [CM, DS],
             "multi_nic_cni": [CTRL], "multi_nic_cni_crds": [CRD]}
APIS = {"v1": {"ConfigMap": {}, "Namespace": {}}, "apps/v1": {"DaemonSet": {}, "Deployment": {}}, "apiextensions.k8s.io/v1": {"CustomResourceDefinition": {}}}


def test_one_call_per_component_in_apply_order_and_namespaces_apart():
    out = _k8s_apply.batches(MANIFESTS, APIS, [], check_mode=False, diff_mode=False)
    assert [(b["component"], b["label"], b["objects"]) for b in out["batches"]] == [
        ("multi_nic_cni_crds", "multi_nic_cni_crds", [CRD]), ("device_plugin", "device_plugin", [CM, DS]),
        ("multi_nic_cni", "multi_nic_cni", [CTRL]), ("multinicnetwork", "multinicnetwork", [NET])]
    assert out["deferred"] == []  # a real run sends everything, even a kind the cluster does not serve yet (its CRD comes first)


def test_with_diff_one_object_per_call():
    out = _k8s_apply.batches(MANIFESTS, APIS, [], check_mode=False, diff_mode=True)
    assert [(b["label"], b["objects"]) for b in out["batches"]] == [
        ("CustomResourceDefinition multinicnetworks.multinic.fms.io", [CRD]), ("ConfigMap rdma-devices", [CM]), ("DaemonSet rdma-shared-dp", [DS]),
        ("Deployment multi-nic-cni-operator", [CTRL]), ("MultiNicNetwork multinic-rdma", [NET])]


def test_check_mode_defers_what_the_api_server_cannot_dry_run_yet():
    out = _k8s_apply.batches(MANIFESTS, APIS, ["multi-nic-cni-operator"], check_mode=True, diff_mode=False)
    # the namespace does not exist yet, and no CRD serves MultiNicNetwork yet
    assert out["deferred"] == ["Deployment multi-nic-cni-operator/multi-nic-cni-operator", "MultiNicNetwork multinic-rdma"]
    assert {b["component"]: b["objects"] for b in out["batches"]} == {
        "multi_nic_cni_crds": [CRD], "device_plugin": [CM, DS], "multi_nic_cni": [], "multinicnetwork": []}
    with_diff = _k8s_apply.batches(MANIFESTS, APIS, ["multi-nic-cni-operator"], check_mode=True, diff_mode=True)
    assert [b["label"] for b in with_diff["batches"] if not b["objects"]] == ["Deployment multi-nic-cni-operator", "MultiNicNetwork multinic-rdma"]
    assert with_diff["deferred"] == out["deferred"]


def test_the_network_operator_path():
    policy = obj("NicClusterPolicy", "nic-cluster-policy", api="mellanox.com/v1alpha1")
    out = k8s_apply_batches({"namespaces": [], "nicclusterpolicy": [policy]}, {"mellanox.com/v1alpha1": {"NicClusterPolicy": {}}}, None, False, False)
    assert out == {"batches": [{"component": "nicclusterpolicy", "label": "nicclusterpolicy", "objects": [policy]}], "deferred": []}


def test_an_unknown_component_or_object_is_refused():
    from ansible.errors import AnsibleFilterError  # pylint: disable=import-outside-toplevel

    with pytest.raises(AnsibleFilterError, match="components extra have no place in the apply order"):
        k8s_apply_batches({"extra": [CM]}, APIS, [], False, False)
    with pytest.raises(AnsibleFilterError, match=r"device_plugin\[0\]: not a Kubernetes object"):
        k8s_apply_batches({"device_plugin": ["kind: ConfigMap"]}, APIS, [], False, False)
