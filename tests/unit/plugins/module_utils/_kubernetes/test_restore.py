# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/_kubernetes/_restore.py: the live copies kept before a change window and what
a roll-back puts back or deletes (playbooks/tenant.yml)."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes import _restore

NAD = {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
       "metadata": {"name": "team-b-rdma", "namespace": "team-b", "labels": {"lossless.fabric/tenant": "team-b"}},
       "spec": {"config": '{"pkey": "0x0007"}'}}
NS = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-c"}}
ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "lossless-fabric-tenant", "namespace": "team-c"},
        "rules": []}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu3", "labels": {"lossless.fabric/tenant": "team-b"}}}
POLICY = {"apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkNodePolicy",
          "metadata": {"name": "lossless-fabric-team-c", "namespace": "nvidia-network-operator"}, "spec": {"numVfs": 2}}


def live(obj, rv, **extra):
    """The object as the API server returns it: server metadata and a status."""
    out = copy.deepcopy(obj)
    out["metadata"].update({"resourceVersion": rv, "uid": "u-" + rv, "creationTimestamp": "2026-12-05T07:00:00Z",
                            "managedFields": [{"manager": "x"}], "generation": 1})
    out["status"] = {"phase": "Active"}
    out.update(extra)
    return out


def found(obj=None, api_found=True):
    return {"api_found": api_found, "resources": [obj] if obj is not None else []}


def test_snapshot_keeps_the_live_object_without_what_the_server_owns():
    before = live(dict(NAD, spec={"config": '{"pkey": "0x0003"}'}), "11")
    (entry,) = _restore.snapshot([NAD], [found(before)])
    assert entry["object"] == "NetworkAttachmentDefinition team-b/team-b-rdma"
    assert entry["served"] is True and entry["fields"] == ["metadata", "spec"]
    assert entry["key"] == {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition", "name": "team-b-rdma", "namespace": "team-b"}
    assert entry["live"] == {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
                             "metadata": {"name": "team-b-rdma", "namespace": "team-b", "labels": {"lossless.fabric/tenant": "team-b"}},
                             "spec": {"config": '{"pkey": "0x0003"}'}}
    # a missing object, and a kind the cluster does not serve
    assert [(e["served"], e["live"]) for e in _restore.snapshot([NS, POLICY], [found(), found(api_found=False)])] == [(True, None), (False, None)]


def test_a_changed_object_is_put_back_with_its_current_resource_version():
    before = live(dict(NAD, spec={"config": '{"pkey": "0x0003"}'}), "11")
    entries = _restore.snapshot([NAD], [found(before)])
    plan = _restore.plan(entries, [found(live(NAD, "42"))])
    assert plan["entries"] == [{"object": "NetworkAttachmentDefinition team-b/team-b-rdma", "key": entries[0]["key"], "action": "put back"}]
    (obj,) = plan["put_back"]
    assert obj["spec"] == {"config": '{"pkey": "0x0003"}'} and "status" not in obj
    assert obj["metadata"] == {"name": "team-b-rdma", "namespace": "team-b", "labels": {"lossless.fabric/tenant": "team-b"}, "resourceVersion": "42"}
    assert plan["delete"] == []


def test_fields_the_filter_does_not_render_keep_their_value_of_now():
    """A Node the filter labels: the label goes back, a taint set during the window stays."""
    before = live(dict(NODE, metadata={"name": "gpu3", "labels": {"lossless.fabric/tenant": "team-b"}}), "5", spec={"podCIDR": "10.0.0.0/24"})
    entries = _restore.snapshot([NODE], [found(before)])
    after = live(dict(NODE, metadata={"name": "gpu3", "labels": {"lossless.fabric/tenant": "team-c"}}), "9",
                 spec={"podCIDR": "10.0.0.0/24", "taints": [{"key": "maintenance", "effect": "NoSchedule"}]})
    (obj,) = _restore.plan(entries, [found(after)])["put_back"]
    assert obj["metadata"]["labels"] == {"lossless.fabric/tenant": "team-b"} and obj["metadata"]["resourceVersion"] == "9"
    assert obj["spec"]["taints"] == [{"key": "maintenance", "effect": "NoSchedule"}]


def test_what_did_not_exist_is_deleted_namespaces_last_and_the_rest_left_alone():
    same = live(dict(NAD), "7")
    entries = _restore.snapshot([NS, ROLE, NAD, POLICY], [found(), found(), found(same), found(api_found=False)])
    plan = _restore.plan(entries[:3], [found(live(NS, "20")), found(live(ROLE, "21")), found(live(NAD, "30"))])
    assert [(e["object"], e["action"]) for e in plan["entries"]] == [
        ("Namespace team-c", "deleted"), ("Role team-c/lossless-fabric-tenant", "deleted"),
        ("NetworkAttachmentDefinition team-b/team-b-rdma", "unchanged")]
    assert plan["delete"] == [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "lossless-fabric-tenant", "namespace": "team-c"}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-c"}}]
    assert plan["put_back"] == []
    # an object that existed and is gone now is created again from its copy (no resourceVersion to carry)
    plan = _restore.plan(entries[2:3], [found()])
    assert plan["entries"][0]["action"] == "put back" and "resourceVersion" not in plan["put_back"][0]["metadata"]
    # neither before nor now: nothing to do
    assert _restore.plan(entries[:1], [found()])["entries"][0]["action"] == "unchanged"


def test_unserved_entries_are_skipped_and_bad_input_is_refused():
    entries = _restore.snapshot([POLICY], [found(api_found=False)])
    assert _restore.plan(entries, [found()]) == {"entries": [], "put_back": [], "delete": []}
    with pytest.raises(_restore.RestoreError, match="2 objects but 1 k8s_info results"):
        _restore.snapshot([NAD, NS], [found()])
    with pytest.raises(_restore.RestoreError, match="not a Kubernetes object"):
        _restore.snapshot([{"kind": "X"}], [found()])
    with pytest.raises(_restore.RestoreError, match="not a kubernetes.core.k8s_info result"):
        _restore.snapshot([NAD], ["x"])
    with pytest.raises(_restore.RestoreError, match="found 2 objects for one name"):
        _restore.snapshot([NAD], [{"resources": [NAD, NAD]}])
    with pytest.raises(_restore.RestoreError, match="is not a snapshot entry"):
        _restore.plan([{"object": "x"}], [found()])
