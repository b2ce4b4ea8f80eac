# SPDX-License-Identifier: GPL-3.0-or-later
"""k8sim as an apiserver, through the official kubernetes Python client:
CRUD, Status errors, selectors, patches, server-side apply, deletion, watch."""
from __future__ import annotations

import json
import os
import pathlib
import signal
import sys
import time
import urllib.error
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from k8sim.client import K8sSim  # noqa: E402

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client as k8s  # noqa: E402
from kubernetes import config as k8s_config  # noqa: E402
from kubernetes import dynamic, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

NODES = [{"name": "gpu1", "gpus": 8, "nics": [{"name": "mlx5_0", "netdev": "eth2"}]},
         {"name": "gpu2", "gpus": 8, "nics": [{"name": "mlx5_0", "netdev": "eth2"}]}]


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    with K8sSim({"time_scale": 0.01, "nodes": NODES}, str(tmp_path_factory.mktemp("k8sim"))) as s:
        yield s


@pytest.fixture(scope="module")
def api(sim):
    return k8s_config.new_client_from_config(config_file=sim.kubeconfig)


def status_of(exc: ApiException) -> dict:
    return json.loads(exc.body)


def raw(sim, method: str, path: str, body=None, ctype: str = "application/json") -> tuple[int, dict]:
    """A request the typed client would refuse to send (it validates client-side)."""
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(sim.url + path, data=data, method=method,
                                 headers={"Content-Type": ctype, "Authorization": "Bearer x"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_discovery_and_nodes(api):
    assert k8s.CoreApi(api).get_api_versions().versions == ["v1"]
    dyn = dynamic.DynamicClient(api)
    mpi = dyn.resources.get(api_version="kubeflow.org/v2beta1", kind="MPIJob")
    assert mpi.namespaced and mpi.name == "mpijobs"
    assert not dyn.resources.get(api_version="multinic.fms.io/v1", kind="MultiNicNetwork").namespaced
    assert not dyn.resources.get(api_version="mellanox.com/v1alpha1", kind="NicClusterPolicy").namespaced
    nodes = k8s.CoreV1Api(api).list_node()
    assert [n.metadata.name for n in nodes.items] == ["gpu1", "gpu2"]
    assert nodes.items[0].status.allocatable["nvidia.com/gpu"] == "8"
    assert nodes.items[0].metadata.labels["nvidia.com/gpu.present"] == "true"


def test_create_get_conflict_notfound(api):
    core = k8s.CoreV1Api(api)
    cm = core.create_namespaced_config_map("default", {"metadata": {"name": "a", "labels": {"app": "x"}},
                                                       "data": {"k": "v"}})
    assert cm.metadata.uid and cm.metadata.resource_version and cm.metadata.creation_timestamp
    assert cm.metadata.namespace == "default"
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
    assert err.value.status == 409 and status_of(err.value)["reason"] == "AlreadyExists"
    assert status_of(err.value)["message"] == 'configmaps "a" already exists'
    with pytest.raises(ApiException) as err:
        core.read_namespaced_config_map("nope", "default")
    assert err.value.status == 404 and status_of(err.value)["kind"] == "Status"
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("no-such-ns", {"metadata": {"name": "a"}})
    assert err.value.status == 404 and status_of(err.value)["message"] == 'namespaces "no-such-ns" not found'
    # stale resourceVersion on replace -> 409 Conflict
    cm.data = {"k": "v2"}
    core.replace_namespaced_config_map("a", "default", cm)
    with pytest.raises(ApiException) as err:
        core.replace_namespaced_config_map("a", "default", cm)
    assert err.value.status == 409 and status_of(err.value)["reason"] == "Conflict"


def test_validation_errors(api, sim):
    core, apps = k8s.CoreV1Api(api), k8s.AppsV1Api(api)
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("default", {"metadata": {"name": "Bad_Name"}})
    assert err.value.status == 422 and status_of(err.value)["reason"] == "Invalid"
    ds = {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"a": "1"}},
                                              "template": {"metadata": {"labels": {"a": "2"}},
                                                           "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    with pytest.raises(ApiException) as err:
        apps.create_namespaced_daemon_set("default", ds)
    assert err.value.status == 422 and "`selector` does not match template `labels`" in err.value.body
    bad_type = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i",
                                                                    "securityContext": {"privileged": "yes"}}]}}
    code, body = raw(sim, "POST", "/api/v1/namespaces/default/pods", bad_type)
    assert code == 400 and body["reason"] == "BadRequest" and "privileged" in body["message"]


def test_label_and_field_selectors(api):
    core = k8s.CoreV1Api(api)
    for name, labels in (("s1", {"tier": "a", "role": "x"}), ("s2", {"tier": "b"}), ("s3", {"tier": "a"})):
        core.create_namespaced_config_map("default", {"metadata": {"name": name, "labels": labels}})

    def names(sel):
        return sorted(i.metadata.name for i in core.list_namespaced_config_map("default", label_selector=sel).items)

    assert names("tier=a") == ["s1", "s3"]
    assert names("tier in (a,b),!role") == ["s2", "s3"]
    assert names("tier!=a,tier") == ["s2"]
    got = core.list_namespaced_config_map("default", field_selector="metadata.name=s2").items
    assert [i.metadata.name for i in got] == ["s2"]
    with pytest.raises(ApiException) as err:
        core.list_namespaced_config_map("default", field_selector="data.x=1")
    assert err.value.status == 400 and "field label not supported" in err.value.body
    lst = core.list_config_map_for_all_namespaces()
    assert lst.kind == "ConfigMapList" and lst.api_version == "v1"


def test_patches_status_subresource_and_generation(api):
    apps = k8s.AppsV1Api(api)
    ds = {"metadata": {"name": "g"}, "spec": {"selector": {"matchLabels": {"a": "1"}},
                                              "template": {"metadata": {"labels": {"a": "1"}},
                                                           "spec": {"containers": [{"name": "c", "image": "i1"}]}}}}
    created = apps.create_namespaced_daemon_set("default", ds)
    assert created.metadata.generation == 1
    # strategic merge: containers merged by name
    patched = apps.patch_namespaced_daemon_set("g", "default", {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "env": [{"name": "X", "value": "1"}]}]}}}})
    assert patched.spec.template.spec.containers[0].image == "i1"
    assert patched.spec.template.spec.containers[0].env[0].name == "X"
    assert patched.metadata.generation == 2
    # a no-op patch changes neither the generation nor (on an object no controller touches) the resourceVersion
    again = apps.patch_namespaced_daemon_set("g", "default", {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "env": [{"name": "X", "value": "1"}]}]}}}})
    assert again.metadata.generation == 2
    core = k8s.CoreV1Api(api)
    cm = core.create_namespaced_config_map("default", {"metadata": {"name": "noop"}, "data": {"a": "1"}})
    assert core.patch_namespaced_config_map("noop", "default", {"data": {"a": "1"}}).metadata.resource_version == \
        cm.metadata.resource_version
    # status through the main resource is ignored; through /status it sticks
    apps.patch_namespaced_daemon_set("g", "default", {"status": {"numberReady": 42}})
    assert (apps.read_namespaced_daemon_set_status("g", "default").status.number_ready or 0) != 42
    apps.patch_namespaced_daemon_set_status("g", "default", {"status": {
        "numberReady": 42, "currentNumberScheduled": 0, "desiredNumberScheduled": 0, "numberMisscheduled": 0}})
    # (the DaemonSet controller rewrites status from the nodes soon after)
    apps.delete_namespaced_daemon_set("g", "default")


def test_custom_resource_strategic_merge_is_415_and_json_patch(api, sim):
    custom = k8s.CustomObjectsApi(api)
    nad = {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
           "metadata": {"name": "rdma-net"}, "spec": {"config": '{"cniVersion":"0.3.1","type":"macvlan"}'}}
    custom.create_namespaced_custom_object("k8s.cni.cncf.io", "v1", "default", "network-attachment-definitions", nad)
    path = "/apis/k8s.cni.cncf.io/v1/namespaces/default/network-attachment-definitions/rdma-net"
    code, _body = raw(sim, "PATCH", path, [{"op": "replace", "path": "/spec/config", "value": "{}"}],
                      "application/json-patch+json")
    assert code == 200
    got = custom.get_namespaced_custom_object("k8s.cni.cncf.io", "v1", "default", "network-attachment-definitions", "rdma-net")
    assert got["spec"]["config"] == "{}"
    code, body = raw(sim, "PATCH", path, {"spec": {"config": "x"}}, "application/strategic-merge-patch+json")
    assert code == 415 and body["reason"] == "UnsupportedMediaType"
    # a PUT of a custom resource must carry its resourceVersion (customResourceStrategy: no unconditional update)
    bare = {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition", "metadata": {"name": "rdma-net"},
            "spec": {"config": "{}"}}
    code, body = raw(sim, "PUT", path, bare)
    assert (code, body["reason"]) == (422, "Invalid")
    assert body["message"] == ('network-attachment-definitions.k8s.cni.cncf.io "rdma-net" is invalid: metadata.resourceVersion: '
                               'Invalid value: 0x0: must be specified for an update')
    bare["metadata"]["resourceVersion"] = got["metadata"]["resourceVersion"]
    assert raw(sim, "PUT", path, bare)[0] == 200
    # a built-in kind (a ConfigMap) allows the unconditional update
    k8s.CoreV1Api(api).create_namespaced_config_map("default", {"metadata": {"name": "cm-put"}, "data": {"a": "1"}})
    assert raw(sim, "PUT", "/api/v1/namespaces/default/configmaps/cm-put",
               {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-put"}, "data": {"a": "2"}})[0] == 200
    # cluster-scoped CRs: no namespace
    custom.create_cluster_custom_object("multinic.fms.io", "v1", "multinicnetworks", {
        "apiVersion": "multinic.fms.io/v1", "kind": "MultiNicNetwork", "metadata": {"name": "mn"},
        "spec": {"ipam": "{}", "plugin": {"cniVersion": "0.3.0", "type": "mellanox"}}})
    with pytest.raises(ApiException) as err:
        custom.create_cluster_custom_object("multinic.fms.io", "v1", "multinicnetworks", {
            "apiVersion": "multinic.fms.io/v1", "kind": "MultiNicNetwork", "metadata": {"name": "bad"},
            "spec": {"plugin": {"type": "mellanox"}}})
    body = status_of(err.value)
    assert err.value.status == 422
    assert sorted(c["field"] for c in body["details"]["causes"]) == ["spec.ipam", "spec.plugin.cniVersion"]


def test_invalid_mpijob_is_422(api):
    custom = k8s.CustomObjectsApi(api)
    bad = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "bad"},
           "spec": {"slotsPerWorker": "eight", "mpiImplementation": "LAM"}}
    with pytest.raises(ApiException) as err:
        custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs", bad)
    body = status_of(err.value)
    assert err.value.status == 422 and body["reason"] == "Invalid"
    assert body["message"].startswith('MPIJob.kubeflow.org "bad" is invalid: [')
    fields = {c["field"]: c["message"] for c in body["details"]["causes"]}
    assert fields["spec.mpiReplicaSpecs"] == "Required value"
    assert fields["spec.mpiImplementation"].startswith('Unsupported value: "LAM": supported values: "OpenMPI"')
    assert "must be of type integer" in fields["spec.slotsPerWorker"]


def test_server_side_apply_creates_then_merges(api, sim):
    path = "/api/v1/namespaces/default/configmaps/ssa"
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: '1'\n"
    code, status = raw(sim, "PATCH", path, body, "application/apply-patch+yaml")  # fieldManager is required
    assert code == 422 and "fieldManager: Required value" in status["message"]
    code, _body = raw(sim, "PATCH", path + "?fieldManager=test", body, "application/apply-patch+yaml")
    assert code == 201
    code, _body = raw(sim, "PATCH", path + "?fieldManager=test", body.replace("a: '1'", "b: '2'"),
                      "application/apply-patch+yaml")
    assert code == 200
    assert k8s.CoreV1Api(api).read_namespaced_config_map("ssa", "default").data == {"a": "1", "b": "2"}


def test_delete_propagation_and_finalizers(api):
    core = k8s.CoreV1Api(api)
    owner = core.create_namespaced_config_map("default", {"metadata": {"name": "owner"}})
    ref = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}]
    for name in ("dep1", "dep2"):
        core.create_namespaced_config_map("default", {"metadata": {"name": name, "ownerReferences": ref}})
    core.delete_namespaced_config_map("owner", "default", body={"propagationPolicy": "Orphan"})
    time.sleep(0.3)
    assert core.read_namespaced_config_map("dep1", "default").metadata.owner_references is None
    owner = core.create_namespaced_config_map("default", {"metadata": {"name": "owner2"}})
    core.patch_namespaced_config_map("dep2", "default", {"metadata": {"ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner2", "uid": owner.metadata.uid}]}})
    core.delete_namespaced_config_map("owner2", "default")  # Background (default for ConfigMaps)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if "dep2" not in [c.metadata.name for c in core.list_namespaced_config_map("default").items]:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the garbage collector did not delete the dependent")
    # finalizers hold an object with a deletionTimestamp until they are removed
    core.create_namespaced_config_map("default", {"metadata": {"name": "fin", "finalizers": ["example.com/x"]}})
    core.delete_namespaced_config_map("fin", "default")
    held = core.read_namespaced_config_map("fin", "default")
    assert held.metadata.deletion_timestamp is not None
    core.patch_namespaced_config_map("fin", "default", {"metadata": {"finalizers": None}})
    with pytest.raises(ApiException) as err:
        core.read_namespaced_config_map("fin", "default")
    assert err.value.status == 404


def test_watch_initial_and_live_events(api):
    core = k8s.CoreV1Api(api)
    core.create_namespace({"metadata": {"name": "watched"}})
    core.create_namespaced_config_map("watched", {"metadata": {"name": "w0", "labels": {"w": "y"}}})
    w = watch.Watch()
    seen = []
    for event in w.stream(core.list_namespaced_config_map, "watched", label_selector="w=y", timeout_seconds=5):
        seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 1:
            core.create_namespaced_config_map("watched", {"metadata": {"name": "w1", "labels": {"w": "y"}}})
            core.create_namespaced_config_map("watched", {"metadata": {"name": "other"}})
            core.delete_namespaced_config_map("w0", "watched")
        if len(seen) == 3:
            w.stop()
    assert seen == [("ADDED", "w0"), ("ADDED", "w1"), ("DELETED", "w0")]
    # a watch that starts from a resourceVersion gets only what came after it
    rv = core.list_namespaced_config_map("watched").metadata.resource_version
    core.create_namespaced_config_map("watched", {"metadata": {"name": "w2"}})
    events = list(watch.Watch().stream(core.list_namespaced_config_map, "watched", resource_version=rv, timeout_seconds=1))
    assert [(e["type"], e["object"].metadata.name) for e in events] == [("ADDED", "w2")]


def test_sigterm_stops_cleanly(tmp_path):
    s = K8sSim({"nodes": NODES}, str(tmp_path))
    s.start()
    state_file = tmp_path / "k8sim.state.json"
    assert state_file.exists()
    pid = s.info["pid"]
    os.kill(pid, signal.SIGTERM)
    assert s.proc.wait(10) == 0
    assert not state_file.exists()
    s.proc = None
