# SPDX-License-Identifier: GPL-3.0-or-later
"""k8sim's MPI Operator presence and release, and the kubelet's log rotation, through the official client:
what nccl_benchmark's preflight and log collection rely on.

- The operator's CRD mpijobs.kubeflow.org per release: kubeflow/mpi-operator manifests/base/kubeflow.org_mpijobs.yaml
  at v0.4.0 has no spec.launcherCreationPolicy, v0.5.0 has it; the apiserver prunes a field the CRD does not know.
- No operator: no CRD, the group is not served (404).
- containerLogMaxSize (KubeletConfiguration, default 10Mi): a plain pod-log read returns the current file only;
  a follower attached while the container runs gets every line.
"""
from __future__ import annotations

import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from k8sim import crds  # noqa: E402
from k8sim.client import K8sSim  # noqa: E402
from k8sim.sim import Simulator  # noqa: E402
from labproc import wait_for  # noqa: E402

pytest.importorskip("kubernetes")
from kubernetes import client as k8s  # noqa: E402
from kubernetes import config as k8s_config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

LOG = ROOT / "tests" / "data" / "nccl-corpus" / "awsefaeks_p4d_2node_efa_debug_info.txt"
DELAYS = {"pod_start": 2.0, "operator_sync": 0.5, "run_seconds": 20.0}
NODES = [{"name": "gpu1", "gpus": 8}]


def job(name: str) -> dict:
    container = {"name": "launcher", "image": "x", "command": ["mpirun", "-np", "8", "all_reduce_perf"]}
    worker = {"name": "worker", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 8}}}
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": name},
            "spec": {"slotsPerWorker": 8, "launcherCreationPolicy": "WaitForWorkersReady",
                     "runPolicy": {"cleanPodPolicy": "Running"},
                     "mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": {"spec": {"containers": [container]}}},
                                         "Worker": {"replicas": 1, "template": {"spec": {"containers": [worker]}}}}}}


def apis(server):
    api = k8s_config.new_client_from_config(config_file=server.kubeconfig)
    return k8s.CoreV1Api(api), k8s.CustomObjectsApi(api), k8s.ApiextensionsV1Api(api)


def spec_props(crd) -> set:
    version = next(v for v in crd.spec.versions if v.name == "v2beta1")
    return set(version.schema.open_apiv3_schema.properties["spec"].properties)


def test_release_schemas_follow_the_operator_manifests():
    assert "launcherCreationPolicy" not in crds.mpijob_schema("0.4.0")["properties"]["spec"]["properties"]
    assert "launcherCreationPolicy" in crds.mpijob_schema("v0.5.0")["properties"]["spec"]["properties"]
    assert "managedBy" in crds.mpijob_schema("0.6.0")["properties"]["spec"]["properties"]["runPolicy"]["properties"]
    assert "managedBy" not in crds.mpijob_schema("0.5.0")["properties"]["spec"]["properties"]["runPolicy"]["properties"]
    with pytest.raises(ValueError, match="mpi_operator.version 'latest'"):
        Simulator({"mpi_operator": {"version": "latest"}})


@pytest.mark.parametrize("version, has_policy", [("0.6.0", True), ("0.4.0", False)])
def test_crd_of_the_installed_release_and_pruning(tmp_path, version, has_policy):
    with K8sSim({"time_scale": 0.01, "delays": DELAYS, "nodes": NODES, "mpi_operator": {"version": version}},
                str(tmp_path)) as server:
        core, custom, ext = apis(server)
        crd = ext.read_custom_resource_definition("mpijobs.kubeflow.org")
        assert ("launcherCreationPolicy" in spec_props(crd)) is has_policy
        assert crd.metadata.labels["app.kubernetes.io/version"] == "v" + version
        made = custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs", job("j"))
        # an operator too old for the field: the apiserver drops it, nobody says so
        assert ("launcherCreationPolicy" in made["spec"]) is has_policy


def test_no_operator_no_crd_and_no_mpijobs(tmp_path):
    with K8sSim({"time_scale": 0.01, "delays": DELAYS, "nodes": NODES, "mpi_operator": None}, str(tmp_path)) as server:
        core, custom, ext = apis(server)
        with pytest.raises(ApiException) as exc:
            ext.read_custom_resource_definition("mpijobs.kubeflow.org")
        assert exc.value.status == 404
        with pytest.raises(ApiException) as exc:
            custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs", job("j"))
        assert exc.value.status == 404 and "could not find the requested resource" in exc.value.body


def test_rotation_cuts_plain_reads_but_not_a_follower(tmp_path):
    text = LOG.read_bytes()
    size = len(text) // 4 + 1000  # three rotations, the current file holds the last ~14 KB
    with K8sSim({"time_scale": 0.01, "delays": DELAYS, "nodes": NODES, "replay": str(LOG), "container_log_max_size": size},
                str(tmp_path)) as server:
        core, custom, _ext = apis(server)
        custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs", job("j"))
        selector = "training.kubeflow.org/job-name=j,training.kubeflow.org/job-role=launcher"

        def launcher():
            pods = core.list_namespaced_pod("default", label_selector=selector).items
            return pods[0] if pods and pods[0].status.phase == "Running" else None

        wait_for(launcher, what="the launcher to run", timeout=20.0)
        pod = launcher().metadata.name
        resp = core.read_namespaced_pod_log(pod, "default", container="launcher", follow=True, _preload_content=False,
                                            _request_timeout=30)
        followed = b"".join(resp.stream(65536))
        assert followed == text  # from the first line to the last
        plain = core.read_namespaced_pod_log(pod, "default", container="launcher").encode()
        assert 0 < len(plain) <= size and text.endswith(plain) and not text.startswith(plain)
        assert b"NET/OFI Selected Provider is efa" in text[:len(text) - len(plain)]  # the evidence was in the head
        server.set_log_max_size(0)  # never rotated: the whole log again
        assert core.read_namespaced_pod_log(pod, "default", container="launcher").encode() == text
