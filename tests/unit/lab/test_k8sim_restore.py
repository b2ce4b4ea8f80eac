# SPDX-License-Identifier: GPL-3.0-or-later
"""k8sim keeps its API objects across a restart (config key "restore"), as a real cluster keeps etcd:
same uid, resourceVersion and generation, the counter continues above them, watches from before the restart
get 410, the DaemonSet controller and the device plugin rebuild the pods and the node resources; and the
lab launcher passes the previous run's snapshot to the next run."""
from __future__ import annotations

import json
import pathlib
import re
import shutil
import sys
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import launcher  # noqa: E402  # pylint: disable=wrong-import-position
from k8sim import restore  # noqa: E402
from k8sim.client import K8sSim  # noqa: E402
from labproc import wait_for  # noqa: E402

pytest.importorskip("kubernetes")
from kubernetes import client as k8s  # noqa: E402
from kubernetes import config as k8s_config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

RES = "rdma/hca_shared_devices_a"
NIC = [{"name": "mlx5_0", "netdev": "eth2"}]
NODES = [{"name": "gpu1", "gpus": 8, "nics": NIC}, {"name": "gpu2", "gpus": 8, "nics": NIC}]
CONFIG = {"time_scale": 0.01, "nodes": NODES}
NS = "rdma-test"
RDMA_CM = {"metadata": {"name": "rdma-devices", "namespace": NS},
           "data": {"config.json": '{"configList": [{"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 63, '
                                   '"selectors": {"vendors": ["15b3"]}}]}'}}
RDMA_DS = {
    "metadata": {"name": "rdma-shared-dp-ds", "namespace": NS},
    "spec": {"selector": {"matchLabels": {"name": "rdma-shared-dp-ds"}},
             "template": {"metadata": {"labels": {"name": "rdma-shared-dp-ds"}},
                          "spec": {"nodeSelector": {"nvidia.com/gpu.present": "true"},
                                   "containers": [{"name": "k8s-rdma-shared-dp-ds",
                                                   "image": "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:v1.5.3",
                                                   "volumeMounts": [{"name": "config", "mountPath": "/k8s-rdma-shared-dev-plugin"}]}],
                                   "volumes": [{"name": "config", "configMap": {"name": "rdma-devices"}}]}}}}
NETWORK = {"apiVersion": "multinic.fms.io/v1", "kind": "MultiNicNetwork", "metadata": {"name": "multi-nic-net"},
           "spec": {"subnet": "192.168.0.0/16", "ipam": '{"type": "multi-nic-ipam"}',
                    "plugin": {"cniVersion": "0.3.0", "type": "ipvlan", "args": {"mode": "l3"}}}}
MPIJOB = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "nccl"},
          "spec": {"mpiReplicaSpecs": {
              "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{"name": "launcher", "image": "nccl-tests"}]}}},
              "Worker": {"replicas": 1, "template": {"spec": {"containers": [{"name": "worker", "image": "nccl-tests"}]}}}}}}


def apis(sim):
    api = k8s_config.new_client_from_config(config_file=sim.kubeconfig)
    return k8s.CoreV1Api(api), k8s.AppsV1Api(api), k8s.CustomObjectsApi(api)


def alloc(core) -> dict:
    return {n.metadata.name: n.status.allocatable.get(RES) for n in core.list_node().items}


def meta(obj: dict) -> tuple:
    m = obj["metadata"]
    return m["uid"], m["resourceVersion"], m.get("generation"), m["creationTimestamp"]


def first_run(tmp_path) -> tuple[pathlib.Path, dict]:
    """Create what role k8s_rdma creates (and an MPIJob), wait until the cluster settled, save the snapshot
    as the launcher plug-in does; the snapshot path and the objects as the API served them."""
    with K8sSim(CONFIG, str(tmp_path / "run1")) as sim:
        core, apps, custom = apis(sim)
        core.create_namespace({"metadata": {"name": NS}})
        core.create_namespaced_config_map(NS, RDMA_CM)
        apps.create_namespaced_daemon_set(NS, RDMA_DS)
        core.create_namespaced_secret(NS, {"metadata": {"name": "token"}, "stringData": {"t": "x"}})
        custom.create_cluster_custom_object("multinic.fms.io", "v1", "multinicnetworks", NETWORK)
        custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs", MPIJOB)
        wait_for(lambda: alloc(core) == {"gpu1": "63", "gpu2": "63"}, "both nodes to advertise %s" % RES)
        wait_for(lambda: apps.read_namespaced_daemon_set("rdma-shared-dp-ds", NS).status.number_ready == 2, "DaemonSet ready")
        wait_for(lambda: core.list_namespaced_config_map("default", label_selector="app=nccl").items, "the MPIJob's hostfile")
        saved = sim.objects()
        state = sim.state()
    path = tmp_path / "k8sim.objects.json"
    path.write_text(json.dumps(saved))
    assert saved["pods"] and saved["events"] and saved["kubeflow.org/mpijobs"]
    return path, dict(saved, _state=state)


def test_restart_keeps_objects_and_rebuilds_what_controllers_own(tmp_path):
    path, saved = first_run(tmp_path)
    by_name = {(k, o["metadata"].get("namespace"), o["metadata"]["name"]): o for k, objs in saved.items() if k != "_state"
               for o in objs}
    saved_uids = {o["metadata"]["uid"] for o in by_name.values()}
    max_rv = max(int(o["metadata"]["resourceVersion"]) for o in by_name.values())
    # the plugin registers late (device seconds x 0.01 = 10 s) until the test has seen the nodes without it
    with K8sSim(dict(CONFIG, restore=str(path), delays={"rdma_register": 1000}), str(tmp_path / "run2")) as sim:
        core, apps, custom = apis(sim)
        restored = sim.state()["restored"]
        assert restored["used"] is True and restored["resource_version"] == max_rv
        assert restored["dropped"]["pods"] == len(saved["pods"]) and restored["dropped"]["kubeflow.org/mpijobs"] == 1
        # the same objects: uid, resourceVersion, generation, creationTimestamp
        api = core.api_client
        now = {(k, o["metadata"].get("namespace"), o["metadata"]["name"]): o for k, objs in sim.objects().items() for o in objs}
        for key in [("namespaces", None, NS), ("configmaps", NS, "rdma-devices"), ("secrets", NS, "token"),
                    ("multinic.fms.io/multinicnetworks", None, "multi-nic-net")]:
            assert meta(now[key]) == meta(by_name[key]), key
            assert now[key] == by_name[key], key
        # the DaemonSet's status follows its pods again (a new resourceVersion), the rest is the saved object
        key = ("apps/daemonsets", NS, "rdma-shared-dp-ds")
        assert meta(now[key])[::2] == meta(by_name[key])[::2] and now[key]["spec"] == by_name[key]["spec"]
        # the MPIJob and what its operator created are gone (the garbage collector's rule), events too
        assert not custom.list_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs")["items"]
        assert not core.list_namespaced_config_map("default", label_selector="app=nccl").items
        assert not k8s.BatchV1Api(api).list_namespaced_job("default").items
        # the DaemonSet controller creates the pods again, the plugin then advertises the resource again
        assert alloc(core) == {"gpu1": None, "gpu2": None}  # the kubelets registered again without the plugin
        sim.set_delays(rdma_register=5)
        wait_for(lambda: alloc(core) == {"gpu1": "63", "gpu2": "63"}, "the resource after the restart")
        pods = core.list_namespaced_pod(NS, label_selector="name=rdma-shared-dp-ds").items
        assert sorted(p.spec.node_name for p in pods) == ["gpu1", "gpu2"]
        assert all(p.status.phase == "Running" and p.metadata.uid not in saved_uids for p in pods)
        for node in core.list_node().items:
            assert node.metadata.uid == by_name[("nodes", None, node.metadata.name)]["metadata"]["uid"]
        every_uid = [o["metadata"]["uid"] for objs in sim.objects().values() for o in objs]
        assert len(every_uid) == len(set(every_uid))
        # writes: a no-op keeps the resourceVersion; the saved one is the precondition; the counter continues above
        cm_rv = by_name[("configmaps", NS, "rdma-devices")]["metadata"]["resourceVersion"]
        same = core.patch_namespaced_config_map("rdma-devices", NS, {"data": RDMA_CM["data"]})
        assert same.metadata.resource_version == cm_rv
        body = core.read_namespaced_config_map("rdma-devices", NS)
        body.data = {"config.json": '{"configList": []}'}
        body.metadata.resource_version = cm_rv
        written = core.replace_namespaced_config_map("rdma-devices", NS, body)
        assert int(written.metadata.resource_version) > max_rv
        with pytest.raises(ApiException) as err:
            core.replace_namespaced_config_map("rdma-devices", NS, body)  # still the old resourceVersion
        assert err.value.status == 409
        assert json.loads(err.value.body)["message"] == (
            'Operation cannot be fulfilled on configmaps "rdma-devices": the object has been modified; '
            "please apply your changes to the latest version and try again")
        # a watch cannot resume from before the restart: the history is gone (410 Expired, as after a compaction)
        url = "%s/api/v1/namespaces/%s/configmaps?watch=true&timeoutSeconds=1&resourceVersion=%s" % (sim.url, NS, int(cm_rv) - 1)
        with urllib.request.urlopen(url, timeout=5) as resp:
            line = json.loads(resp.readline())
        assert line["type"] == "ERROR" and line["object"]["code"] == 410


def test_snapshot_of_other_nodes_is_not_used(tmp_path):
    path, _saved = first_run(tmp_path)
    config = dict(CONFIG, restore=str(path), nodes=[{"name": "gpu1", "gpus": 8, "nics": NIC}])
    with K8sSim(config, str(tmp_path / "run2")) as sim:
        core, _apps, _custom = apis(sim)
        assert sim.state()["restored"] == {"path": str(path), "used": False,
                                           "reason": "saved nodes gpu1, gpu2, configured nodes gpu1"}
        assert NS not in [n.metadata.name for n in core.list_namespace().items]


def test_unreadable_snapshot_stops_the_start(tmp_path):
    bad = tmp_path / "k8sim.objects.json"
    bad.write_text('{"configmaps": [{"metadata": {"name": "x"}}]}')
    with pytest.raises(RuntimeError, match=re.escape("k8sim: restore %r: a configmaps object without metadata.name, uid and "
                                                     "resourceVersion" % str(bad))):
        K8sSim(dict(CONFIG, restore=str(bad)), str(tmp_path / "run")).start()


def _obj(uid: str, name: str, ns: str | None = None, owners: tuple = (), rv: int = 10) -> dict:
    meta_ = {"name": name, "uid": uid, "resourceVersion": str(rv)}
    if ns:
        meta_["namespace"] = ns
    if owners:
        meta_["ownerReferences"] = [{"uid": o} for o in owners]
    return {"metadata": meta_}


def test_keep_follows_owners_and_namespaces():
    snapshot = {
        ("", "namespaces"): [_obj("n1", "a")],
        ("", "pods"): [_obj("p1", "pod", "a", owners=("d1",), rv=99)],  # dropped, yet the counter continues above it
        ("apps", "daemonsets"): [_obj("d1", "ds", "a")],
        ("kubeflow.org", "mpijobs"): [_obj("m1", "job", "a")],
        ("batch", "jobs"): [_obj("j1", "job-launcher", "a", owners=("m1",))],
        ("", "configmaps"): [_obj("c1", "orphan", "gone"), _obj("c2", "two-owners", "a", owners=("m1", "d1")),
                             _obj("c3", "of-the-job", "a", owners=("j1",))],
        ("", "nodes"): [_obj("x1", "gpu1")],
    }
    kept, dropped = restore.keep(snapshot)
    assert sorted(o["metadata"]["uid"] for _gp, o in kept) == ["c2", "d1", "n1"]
    assert dropped == {"pods": 1, "kubeflow.org/mpijobs": 1, "batch/jobs": 1, "configmaps": 2}
    assert restore.max_resource_version(snapshot) == 99
    assert restore.node_mismatch(snapshot, ["gpu1"]) == ""


def test_launcher_second_run_starts_with_the_first_runs_objects(tmp_path):
    inventory = tmp_path / "lab"
    shutil.copytree(ROOT / "inventories" / "lab", inventory, ignore=shutil.ignore_patterns(launcher.GENERATED))
    run_dir, report_dir = str(tmp_path / "run"), str(tmp_path / "rep")
    uids = []
    for lab_run in range(2):
        try:
            state = launcher.up(str(inventory), run_dir, report_dir)
            assert "k8sim" in state["simulators"]
            with open(tmp_path / "run" / "k8sim.state.json", encoding="utf-8") as handle:
                core = k8s.CoreV1Api(k8s_config.new_client_from_config(config_file=json.load(handle)["kubeconfig"]))
            if lab_run == 0:
                core.create_namespace({"metadata": {"name": NS}})
                core.create_namespaced_config_map(NS, RDMA_CM)
            cm = core.read_namespaced_config_map("rdma-devices", NS)
            uids.append((cm.metadata.uid, cm.metadata.resource_version, cm.data))
        finally:
            launcher.down(str(inventory), run_dir)
    assert uids[0] == uids[1]
    # make clean removes the run dir: the next run starts empty
    shutil.rmtree(run_dir)
    try:
        launcher.up(str(inventory), run_dir, report_dir)
        with open(tmp_path / "run" / "k8sim.state.json", encoding="utf-8") as handle:
            core = k8s.CoreV1Api(k8s_config.new_client_from_config(config_file=json.load(handle)["kubeconfig"]))
        assert NS not in [n.metadata.name for n in core.list_namespace().items]
    finally:
        launcher.down(str(inventory), run_dir)


def test_foreground_deletion_under_way_is_resumed(tmp_path):
    def obj(name, uid, rv, **extra):
        return {"metadata": dict({"name": name, "uid": uid, "resourceVersion": str(rv)}, **extra)}
    held = obj("held", "u-cm", 7, namespace=NS, finalizers=["foregroundDeletion"], deletionTimestamp="2026-01-01T00:00:00Z")
    snapshot = {"nodes": [obj("gpu1", "u-n1", 2), obj("gpu2", "u-n2", 3)], "namespaces": [obj(NS, "u-ns", 4)],
                "configmaps": [held, dict(obj("kept", "u-keep", 5, namespace=NS), data={"a": "b"})],
                "secrets": [obj("dependent", "u-sec", 6, namespace=NS,
                                ownerReferences=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "held", "uid": "u-cm"}])]}
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(snapshot))
    with K8sSim(dict(CONFIG, restore="snapshot.json"), str(tmp_path)) as sim:  # relative to the config file
        core, _apps, _custom = apis(sim)
        wait_for(lambda: [c.metadata.name for c in core.list_namespaced_config_map(NS).items] == ["kept"],
                 "the foreground deletion to finish")
        assert not core.list_namespaced_secret(NS).items
        kept = core.read_namespaced_config_map("kept", NS)
        assert (kept.metadata.uid, kept.metadata.resource_version, kept.data) == ("u-keep", "5", {"a": "b"})
        assert sim.state()["restored"]["objects"] == 4
