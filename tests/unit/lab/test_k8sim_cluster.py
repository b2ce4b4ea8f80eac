# SPDX-License-Identifier: GPL-3.0-or-later
"""k8sim's emulated cluster through the official client: the RDMA shared
device plugin (DaemonSet + ConfigMap -> node resources), scheduling, and the
MPI Operator v2beta1 (pods, conditions, replayed launcher log, faults)."""
from __future__ import annotations

import copy
import pathlib
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from k8sim.client import K8sSim  # noqa: E402
from labproc import wait_for  # noqa: E402

pytest.importorskip("kubernetes")
from kubernetes import client as k8s  # noqa: E402
from kubernetes import config as k8s_config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "nccl-corpus" / "deepops_netop_dgxa100_2node_hdr.txt"
RES = "rdma/hca_shared_devices_a"
NIC = [{"name": "mlx5_0", "netdev": "eth2"}]
DELAYS = {"pod_start": 2.0, "rdma_register": 5.0, "operator_sync": 0.5, "run_seconds": 20.0,
          "device_plugin_grace": 20.0}

RDMA_CM = {"metadata": {"name": "rdma-devices", "namespace": "kube-system"},
           "data": {"config.json": '{"periodicUpdateInterval": 300, "configList": [{"resourceName": '
                                   '"hca_shared_devices_a", "rdmaHcaMax": 63, "selectors": {"vendors": ["15b3"]}}]}'}}
RDMA_DS = {
    "metadata": {"name": "rdma-shared-dp-ds", "namespace": "kube-system"},
    "spec": {"selector": {"matchLabels": {"name": "rdma-shared-dp-ds"}},
             "template": {"metadata": {"labels": {"name": "rdma-shared-dp-ds"}},
                          "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical",
                                   "nodeSelector": {"nvidia.com/gpu.present": "true"},
                                   "containers": [{"name": "k8s-rdma-shared-dp-ds",
                                                   "image": "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:v1.5.3",
                                                   "securityContext": {"privileged": True},
                                                   "volumeMounts": [{"name": "config", "mountPath": "/k8s-rdma-shared-dev-plugin"}]}],
                                   "volumes": [{"name": "config", "configMap": {"name": "rdma-devices",
                                                                                "items": [{"key": "config.json", "path": "config.json"}]}}]}}}}


def mpijob(name: str, workers: int = 2, rdma: bool = True) -> dict:
    limits = {"nvidia.com/gpu": 8}
    if rdma:
        limits[RES] = 1
    return {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": name},
        "spec": {"slotsPerWorker": 8, "runPolicy": {"cleanPodPolicy": "Running"},
                 "mpiReplicaSpecs": {
                     "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{
                         "name": "launcher", "image": "ghcr.io/coreweave/nccl-tests:12.2.2",
                         "command": ["mpirun", "-np", str(workers * 8), "all_reduce_perf", "-b", "8", "-e", "8G",
                                     "-f", "2", "-g", "1"]}]}}},
                     "Worker": {"replicas": workers, "template": {"spec": {"containers": [{
                         "name": "worker", "image": "ghcr.io/coreweave/nccl-tests:12.2.2",
                         "resources": {"limits": limits, "requests": limits}}]}}}}},
    }


def nodes_alloc(core) -> dict:
    return {n.metadata.name: n.status.allocatable.get(RES) for n in core.list_node().items}


def conditions(custom, name, ns="default") -> list[tuple[str, str]]:
    job = custom.get_namespaced_custom_object("kubeflow.org", "v2beta1", ns, "mpijobs", name)
    return [(c["type"], c["status"]) for c in (job.get("status") or {}).get("conditions") or []]


@pytest.fixture
def cluster(tmp_path):
    nodes = [{"name": "gpu1", "gpus": 8, "nics": NIC}, {"name": "gpu2", "gpus": 8, "nics": NIC, "rdma_broken": True},
             {"name": "cpu1", "nics": []}]
    with K8sSim({"time_scale": 0.01, "delays": DELAYS, "nodes": nodes}, str(tmp_path)) as sim:
        api = k8s_config.new_client_from_config(config_file=sim.kubeconfig)
        yield sim, k8s.CoreV1Api(api), k8s.AppsV1Api(api), k8s.CustomObjectsApi(api)


def test_rdma_plugin_advertises_and_broken_node_does_not(cluster):
    sim, core, apps, _custom = cluster
    core.create_namespaced_config_map("kube-system", RDMA_CM)
    apps.create_namespaced_daemon_set("kube-system", RDMA_DS)
    wait_for(lambda: nodes_alloc(core)["gpu1"] == "63", what="gpu1 to advertise %s" % RES)
    time.sleep(0.3)
    assert nodes_alloc(core) == {"gpu1": "63", "gpu2": None, "cpu1": None}  # cpu1: not selected
    ds = apps.read_namespaced_daemon_set("rdma-shared-dp-ds", "kube-system")
    assert (ds.status.desired_number_scheduled, ds.status.number_ready) == (2, 1)
    pods = {p.spec.node_name: p for p in core.list_namespaced_pod("kube-system", label_selector="name=rdma-shared-dp-ds").items}
    assert sorted(pods) == ["gpu1", "gpu2"]
    assert pods["gpu2"].status.container_statuses[0].state.waiting.reason == "CrashLoopBackOff"
    # repair gpu2 through the control API
    sim.break_rdma("gpu2", False)
    wait_for(lambda: nodes_alloc(core)["gpu2"] == "63", what="gpu2 after repair")
    # deleting the DaemonSet: allocatable drops to 0 at once, the resource goes after the kubelet's grace
    apps.delete_namespaced_daemon_set("rdma-shared-dp-ds", "kube-system")
    wait_for(lambda: nodes_alloc(core)["gpu1"] == "0", what="allocatable 0 after the plugin stopped")
    wait_for(lambda: nodes_alloc(core)["gpu1"] is None, what="resource removed after the grace period")
    wait_for(lambda: not core.list_namespaced_pod("kube-system").items, what="plugin pods garbage-collected")


def test_rdma_plugin_config_errors_and_hca_max_default(cluster):
    sim, core, apps, _custom = cluster
    cm = copy.deepcopy(RDMA_CM)
    cm["data"]["config.json"] = '{"configList": [{"resourceName": "bad-name", "rdmaHcaMax": 5, "selectors": {"vendors": ["15b3"]}}]}'
    core.create_namespaced_config_map("kube-system", cm)
    apps.create_namespaced_daemon_set("kube-system", RDMA_DS)
    errors = wait_for(lambda: sim.state()["rdma_plugin_errors"], what="the plugin error")
    assert errors == {"kube-system/rdma-shared-dp-ds": 'error: resource name "bad-name" contains invalid characters'}
    # no rdmaHcaMax: the plugin's Go zero value, i.e. 0 shared devices
    config = '{"configList": [{"resourceName": "hca_shared_devices_a", "selectors": {"ifNames": ["eth2"]}}]}'
    core.patch_namespaced_config_map("rdma-devices", "kube-system", {"data": {"config.json": config}})
    wait_for(lambda: nodes_alloc(core)["gpu1"] == "0", what="a zero-capacity resource")
    assert sim.state()["rdma_plugin_errors"] == {}


def _rdma_ready(sim, core, apps):
    sim.break_rdma("gpu2", False)
    core.create_namespaced_config_map("kube-system", RDMA_CM)
    apps.create_namespaced_daemon_set("kube-system", RDMA_DS)
    wait_for(lambda: nodes_alloc(core)["gpu1"] == "63" and nodes_alloc(core)["gpu2"] == "63", what="RDMA on both nodes")


def test_mpijob_succeeds_and_replays_the_log(cluster):
    sim, core, apps, custom = cluster
    if CORPUS.exists():
        sim.set_replay(str(CORPUS))
        expected = CORPUS.read_bytes()
    else:
        expected = b"# nccl-tests stand-in\n#  Avg bus bandwidth    : 180.5\n"
        sim.set_replay(text=expected.decode())
    _rdma_ready(sim, core, apps)
    custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs", mpijob("nccl"))
    wait_for(lambda: ("Running", "True") in conditions(custom, "nccl"), what="Running")
    pods = core.list_namespaced_pod("default", label_selector="training.kubeflow.org/job-name=nccl").items
    names = sorted(p.metadata.name for p in pods)
    assert names[1:] == ["nccl-worker-0", "nccl-worker-1"] and names[0].startswith("nccl-launcher-")
    assert {p.spec.node_name for p in pods if "worker" in p.metadata.name} == {"gpu1", "gpu2"}
    wait_for(lambda: ("Succeeded", "True") in conditions(custom, "nccl"), timeout=10, what="Succeeded")
    assert conditions(custom, "nccl") == [("Created", "True"), ("Running", "False"), ("Succeeded", "True")]
    job = custom.get_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs", "nccl")
    assert job["status"]["conditions"][-1]["reason"] == "MPIJobSucceeded"
    launcher = core.list_namespaced_pod("default", label_selector="training.kubeflow.org/job-role=launcher").items[0]
    assert launcher.metadata.labels["training.kubeflow.org/job-name"] == "nccl"
    assert launcher.status.phase == "Succeeded"
    text = core.read_namespaced_pod_log(launcher.metadata.name, "default", _preload_content=False).data
    assert text == expected
    # cleanPodPolicy Running: the workers are gone; the launcher Job says Complete
    wait_for(lambda: not core.list_namespaced_pod("default", label_selector="training.kubeflow.org/job-role=worker").items,
             what="workers cleaned up")
    ljob = k8s.BatchV1Api(core.api_client).read_namespaced_job("nccl-launcher", "default")
    assert [c.type for c in ljob.status.conditions if c.status == "True"][-1] == "Complete"
    # deleting the MPIJob garbage-collects the launcher Job and its pod
    custom.delete_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs", "nccl")
    wait_for(lambda: not core.list_namespaced_pod("default").items, what="pods collected")


def test_mpijob_fail_hang_and_unschedulable(cluster):
    sim, core, apps, custom = cluster
    sim.set_replay(text="# nThread 1 nGpus 1\n#  Rank  0 Group  0 Pid 1 on gpu1 device  0\n")
    _rdma_ready(sim, core, apps)
    sim.next_mpijob("fail")
    sim.next_mpijob("hang")
    custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs", mpijob("bad", workers=1))
    wait_for(lambda: ("Failed", "True") in conditions(custom, "bad"), what="Failed")
    job = custom.get_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs", "bad")
    assert job["status"]["conditions"][-1]["reason"].startswith("BackoffLimitExceeded")
    launcher = core.list_namespaced_pod("default", label_selector="training.kubeflow.org/job-name=bad,"
                                                                  "training.kubeflow.org/job-role=launcher").items[0]
    assert launcher.status.phase == "Failed"
    assert b"non-zero exit code" in core.read_namespaced_pod_log(launcher.metadata.name, "default",
                                                                 _preload_content=False).data
    custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs", mpijob("stuck", workers=1))
    wait_for(lambda: ("Running", "True") in conditions(custom, "stuck"), what="Running")
    time.sleep(0.6)  # three times the run time
    assert conditions(custom, "stuck") == [("Created", "True"), ("Running", "True")]
    # three workers cannot fit on two RDMA nodes with 8 GPUs each
    custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs", mpijob("big", workers=3))

    def pending_reason():
        try:
            pod = core.read_namespaced_pod("big-worker-2", "default")
        except ApiException:
            return None  # the operator has not created it yet
        conds = pod.status.conditions or []
        return conds[0].message if conds and conds[0].reason == "Unschedulable" else None
    why = wait_for(pending_reason, what="an unschedulable worker")
    assert why.startswith("0/3 nodes are available:") and "Insufficient nvidia.com/gpu" in why
    assert "Insufficient %s" % RES in why


def test_mpijob_without_launcher_is_accepted_then_rejected_by_the_operator(cluster):
    _sim, core, _apps, custom = cluster
    body = mpijob("nolauncher")
    del body["spec"]["mpiReplicaSpecs"]["Launcher"]
    custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs", body)
    event = wait_for(lambda: [e for e in core.list_namespaced_event("default").items
                              if e.reason == "ValidationError"], what="the ValidationError event")[0]
    assert event.type == "Warning" and event.involved_object.name == "nolauncher"
    assert "spec.mpiReplicaSpecs[Launcher]: Required value: must have Launcher replica spec" in event.message
    time.sleep(0.2)
    assert conditions(custom, "nolauncher") == [] and not core.list_namespaced_pod("default").items
    with pytest.raises(ApiException) as err:  # what the apiserver itself rejects: the CRD schema
        custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs",
                                               {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                                                "metadata": {"name": "nospecs"}, "spec": {}})
    assert err.value.status == 422


def test_required_pod_anti_affinity_spreads_pods_one_per_node(cluster):
    """nccl_localize pins a 2-worker MPIJob's workers to two hosts with a required podAntiAffinity on the job's
    labels; kube-scheduler never binds two of them to one node (InterPodAffinity filter)."""
    _sim, core, _apps, _custom = cluster
    labels = {"training.kubeflow.org/job-name": "pair", "training.kubeflow.org/job-role": "worker"}
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}]}}

    def pod(name: str) -> dict:
        limits = {"nvidia.com/gpu": "1"}
        return {"metadata": {"name": name, "labels": labels},
                "spec": {"affinity": anti, "containers": [{"name": "w", "image": "busybox", "resources": {"limits": limits, "requests": limits}}]}}

    for name in ("w0", "w1", "w2"):
        core.create_namespaced_pod("default", pod(name))

    def bound():
        return {p.metadata.name: p.spec.node_name for p in core.list_namespaced_pod("default").items if p.spec.node_name}
    placed = wait_for(lambda: bound() if len(bound()) == 2 else None, what="two pods bound")
    assert sorted(placed.values()) == ["gpu1", "gpu2"]  # one per GPU node, never both on one

    def pending_reason():
        third = [p for p in core.list_namespaced_pod("default").items if not p.spec.node_name][0]
        conds = third.status.conditions or []
        return conds[0].message if conds and conds[0].reason == "Unschedulable" else None
    why = wait_for(pending_reason, what="the third pod unschedulable")
    assert "2 node(s) didn't match pod anti-affinity rules" in why and "Insufficient nvidia.com/gpu" in why
