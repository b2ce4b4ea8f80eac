# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.nccl_benchmark run through main(): MPIJobs against the k8sim emulator (log collected and parsed,
timeout and failure cleaned up, keep, check mode, per-label replay) and mpirun/srun against the lab's strict shims."""
from __future__ import annotations

import json
import os
import pathlib
import sys

import pytest
from ansible.module_utils.common import warnings as ansible_warnings
from ansible.module_utils.testing import patch_module_args

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse
from ansible_collections.lossless.fabric.plugins.modules import nccl_benchmark

ROOT = pathlib.Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from k8sim.client import K8sSim  # noqa: E402
from labproc import wait_for  # noqa: E402
from nccl import replay  # noqa: E402

pytest.importorskip("kubernetes")

PASSING = replay.resolve("passing")[0]
FAILING = replay.resolve("failing")[0]
# a real multi-node log with NCCL_DEBUG=INFO lines (transport and GPUDirect evidence), tests/lab/nccl/replays/
DEBUG_LOG = replay.resolve("awsefaeks_p4d_2node_efa_debug_info.txt")[0]
DEBUG_TRANSPORT = "EFA"
SHIM_BIN = ROOT / "tests" / "lab" / "nccl" / "bin"
RES = "rdma_shared_device_a"
NIC = [{"name": "mlx5_0", "netdev": "eth2"}, {"name": "mlx5_1", "netdev": "eth3"}]
DELAYS = {"pod_start": 2.0, "rdma_register": 5.0, "operator_sync": 0.5, "run_seconds": 20.0}
PLAN_ENV = {"NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_TC": "106"}
RDMA_CM = {"metadata": {"name": "rdma-devices", "namespace": "kube-system"},
           "data": {"config.json": json.dumps({"configList": [
               {"resourceName": RES, "rdmaHcaMax": 63, "selectors": {"vendors": ["15b3"]}}]})}}
RDMA_DS = {
    "metadata": {"name": "rdma-shared-dp-ds", "namespace": "kube-system"},
    "spec": {"selector": {"matchLabels": {"name": "rdma-shared-dp-ds"}},
             "template": {"metadata": {"labels": {"name": "rdma-shared-dp-ds"}},
                          "spec": {"hostNetwork": True, "containers": [{
                              "name": "k8s-rdma-shared-dp-ds", "image": "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:v1.5.3",
                              "securityContext": {"privileged": True},
                              "volumeMounts": [{"name": "config", "mountPath": "/k8s-rdma-shared-dev-plugin"}]}],
                              "volumes": [{"name": "config", "configMap": {"name": "rdma-devices",
                                                                           "items": [{"key": "config.json", "path": "config.json"}]}}]}}}}


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    """One emulated 2-node cluster with the RDMA shared device plugin, for every Kubernetes test here.
    Each test leaves it as it found it (and checks that the module did)."""
    from kubernetes import client as k8s
    from kubernetes import config as k8s_config

    nodes = [{"name": "gpu1", "gpus": 8, "nics": NIC}, {"name": "gpu2", "gpus": 8, "nics": NIC}]
    with K8sSim({"time_scale": 0.01, "delays": DELAYS, "nodes": nodes, "namespaces": ["lab"], "replay": PASSING},
                str(tmp_path_factory.mktemp("k8sim"))) as server:
        api = k8s_config.new_client_from_config(config_file=server.kubeconfig)
        core, apps = k8s.CoreV1Api(api), k8s.AppsV1Api(api)
        core.create_namespaced_config_map("kube-system", RDMA_CM)
        apps.create_namespaced_daemon_set("kube-system", RDMA_DS)
        wait_for(lambda: all(n.status.allocatable.get("rdma/" + RES) == "63" for n in core.list_node().items),
                 what="RDMA resource on both nodes", timeout=20.0)
        yield server


@pytest.fixture(autouse=True)
def _capture(monkeypatch, capsys):
    """Keep the JSON main() prints and hand it back on the SystemExit."""

    def fake_exit(code=0):
        err = SystemExit(code)
        err.result = json.loads(capsys.readouterr().out)
        raise err

    monkeypatch.setattr(sys, "exit", fake_exit)
    monkeypatch.setattr(ansible_warnings, "_global_warnings", {})
    monkeypatch.setattr(ansible_warnings, "_global_deprecations", {})


def run(args, check=False):
    """main() with ``args``; returns (failed, result)."""
    if check:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            nccl_benchmark.main()
    return exc.value.code != 0, exc.value.result


def k8s_args(sim, **extra):
    args = {"launcher": "kubernetes", "nodes": 2, "gpus_per_node": 8, "nccl_env": PLAN_ENV, "poll_interval": 0.05,
            "timeout": 30, "kubernetes": {"kubeconfig": sim.kubeconfig, "image": "ghcr.io/coreweave/nccl-tests:2.21.5",
                                          "rdma_resource": "rdma/" + RES, "cleanup_timeout": 20}}
    args.update(extra)
    return args


def leftovers(sim, namespace="nccl-benchmark"):
    """This namespace's MPIJobs and pods (the namespace itself stays: other runs may share it)."""
    objs = sim.objects()
    return {
        "mpijobs": [o["metadata"]["name"] for o in objs.get("kubeflow.org/mpijobs", []) if o["metadata"]["namespace"] == namespace],
        "pods": [o["metadata"]["name"] for o in objs.get("pods", []) if o["metadata"]["namespace"] == namespace],
    }


def namespace_exists(sim, namespace="nccl-benchmark"):
    return any(o["metadata"]["name"] == namespace for o in sim.objects().get("namespaces", []))


CLEAN = {"mpijobs": [], "pods": []}


# ------------------------------------------------------------------ kubernetes

def test_mpijobs_run_logs_collected_and_parsed_then_cleaned_up(sim):
    failed, result = run(k8s_args(sim, repeats=2, labels={"lossless.fabric/phase": "pre"}, algo="Ring"))
    assert not failed, result.get("msg")
    assert result["changed"] is True and result["namespace_created"] is True
    with open(PASSING, encoding="utf-8") as handle:
        expected = handle.read()
    assert [launch["status"] for launch in result["launches"]] == ["succeeded", "succeeded"]
    assert [launch["rc"] for launch in result["launches"]] == [0, 0]
    names = [launch["name"] for launch in result["launches"]]
    assert names == result["names"] and len(set(names)) == 2
    assert all(n.startswith("nccl-all-reduce-") and n.endswith("-%d" % (i + 1)) for i, n in enumerate(names))
    assert result["logs"] == [expected, expected]
    parsed = _nccl_parse.parse(result["logs"][0])
    assert parsed["complete"] and parsed["largest_size_bytes"] == 4 << 30 and parsed["oop_busbw_at_largest_size"] == 188.53
    # what was created is what was rendered: labels, env, the pinned algorithm
    job = result["manifests"][1]
    assert job["metadata"]["labels"]["lossless.fabric/phase"] == "pre"
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    assert {"name": "NCCL_ALGO", "value": "Ring"} in launcher["env"] and "-x NCCL_ALGO" in launcher["command"][2]
    assert job["metadata"]["labels"]["lossless.fabric/run"] == names[0].split("-")[-2]
    assert leftovers(sim) == CLEAN


def test_timeout_fails_and_cleans_up(sim):
    sim.next_mpijob("hang")
    failed, result = run(k8s_args(sim, timeout=1))
    assert failed
    launch = result["launches"][0]
    assert launch["status"] == "timeout" and launch["rc"] is None
    msg = result["msg"]
    assert msg.startswith("MPIJob %s timed out: " % launch["name"])
    assert "no Succeeded or Failed condition within 1s" in msg and "Running=True" in msg
    # the hung launcher printed part of the table: the message shows its last lines
    assert "last lines of the launcher log:" in msg and launch["log"] and launch["log"] in open(PASSING, encoding="utf-8").read()
    assert not _nccl_parse.parse(launch["log"])["complete"]
    assert leftovers(sim) == CLEAN


def test_failed_job_fails_with_reason_and_log_tail(sim):
    sim.next_mpijob("fail")
    failed, result = run(k8s_args(sim, repeats=3))
    assert failed
    assert len(result["launches"]) == 1  # the task fails: no more repeats after a failure
    launch = result["launches"][0]
    assert launch["status"] == "failed" and launch["rc"] == 1
    msg = result["msg"]
    assert "MPIJob %s failed: condition Failed reason BackoffLimitExceeded/: Job has reached the specified backoff limit" % launch["name"] in msg
    assert "Primary job  terminated normally, but 1 process returned" in msg
    assert leftovers(sim) == CLEAN


def test_fail_on_error_false_returns_the_failure_and_continues(sim, monkeypatch):
    warned = []
    # where a warning ends up depends on what else the test process imported; the module's call is what counts
    monkeypatch.setattr(nccl_benchmark.AnsibleModule, "warn", lambda self, text, **kw: warned.append(text))
    sim.next_mpijob("fail")
    failed, result = run(k8s_args(sim, repeats=2, fail_on_error=False))
    assert not failed
    assert [launch["status"] for launch in result["launches"]] == ["failed", "succeeded"]
    assert "BackoffLimitExceeded" in result["launches"][0]["message"]
    assert warned == ["MPIJob %s failed: %s" % (result["launches"][0]["name"], result["launches"][0]["message"])]
    assert leftovers(sim) == CLEAN


def test_keep_leaves_job_and_namespace(sim):
    from kubernetes import client as k8s
    from kubernetes import config as k8s_config

    failed, result = run(k8s_args(sim, keep=True))
    assert not failed, result.get("msg")
    name = result["launches"][0]["name"]
    assert leftovers(sim)["mpijobs"] == [name] and namespace_exists(sim)
    api = k8s_config.new_client_from_config(config_file=sim.kubeconfig)
    k8s.CustomObjectsApi(api).delete_namespaced_custom_object("kubeflow.org", "v2beta1", "nccl-benchmark", "mpijobs", name)
    wait_for(lambda: leftovers(sim) == CLEAN, what="the kept MPIJob to go", timeout=20.0)


def test_a_run_cleans_up_only_its_own_jobs_and_leaves_the_shared_namespace(sim):
    """Issue 15: two runs share the namespace; one's clean-up must not delete the other's MPIJob."""
    from kubernetes import client as k8s
    from kubernetes import config as k8s_config

    failed, other = run(k8s_args(sim, keep=True, name_prefix="other-run"))   # another run's job, still there
    assert not failed, other.get("msg")
    failed, result = run(k8s_args(sim, repeats=2))
    assert not failed, result.get("msg")
    assert leftovers(sim)["mpijobs"] == other["names"] and namespace_exists(sim)
    assert result["names"][0].split("-")[-2] != other["names"][0].split("-")[-2]  # each run its own token
    api = k8s_config.new_client_from_config(config_file=sim.kubeconfig)
    k8s.CustomObjectsApi(api).delete_namespaced_custom_object("kubeflow.org", "v2beta1", "nccl-benchmark", "mpijobs", other["names"][0])
    wait_for(lambda: leftovers(sim) == CLEAN, what="the other run's MPIJob to go", timeout=20.0)


def test_existing_namespace_is_not_deleted(sim):
    failed, result = run(k8s_args(sim, kubernetes=dict(k8s_args(sim)["kubernetes"], namespace="lab")))
    assert not failed, result.get("msg")
    assert result["namespace_created"] is False
    assert leftovers(sim, "lab") == CLEAN and namespace_exists(sim, "lab")


def test_check_mode_renders_and_creates_nothing(sim):
    before = sim.objects()
    failed, result = run(k8s_args(sim, repeats=2), check=True)
    assert not failed
    assert result["changed"] is False and result["launches"] == [] and result["logs"] == []
    assert [m["kind"] for m in result["manifests"]] == ["Namespace", "MPIJob", "MPIJob"]
    assert sim.objects() == before


def test_per_label_replay_picks_the_post_log(sim):
    sim.set_replay(FAILING, selector={"lossless.fabric/phase": "post"})
    try:
        for phase, path in (("pre", PASSING), ("post", FAILING)):
            failed, result = run(k8s_args(sim, labels={"lossless.fabric/phase": phase}))
            assert not failed, result.get("msg")
            with open(path, encoding="utf-8") as handle:
                assert result["logs"] == [handle.read()]
        assert _nccl_parse.parse(result["logs"][0])["oop_busbw_at_largest_size"] == 22.92
    finally:
        sim.set_replay(PASSING, selector={"lossless.fabric/phase": "post"})


def test_bad_input_fails_before_contact(sim):
    before = sim.objects()
    failed, result = run(k8s_args(sim, binary="all_reduce_perf;reboot", labels={"lossless.fabric/phase": "a b"}))
    assert failed
    assert result["errors"] == ["binary: 'all_reduce_perf;reboot' contains ';', which could start a second command or a comment",
                                "labels.lossless.fabric/phase: 'a b' is not a Kubernetes label value (63 characters of [A-Za-z0-9_.-])"]
    assert sim.objects() == before


def test_unreachable_kubeconfig_fails_clearly(tmp_path):
    failed, result = run({"nodes": 2, "kubernetes": {"kubeconfig": str(tmp_path / "missing"), "image": "x"}})
    assert failed and result["msg"].startswith("kubernetes.kubeconfig %s: " % (tmp_path / "missing"))


# ------------------------------------------------------------------ mpirun / srun through the lab shims

@pytest.fixture
def shim_env(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", "%s:%s" % (SHIM_BIN, os.environ["PATH"]))
    for var in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
        monkeypatch.delenv(var, raising=False)  # only what the module sets
    monkeypatch.setenv("LAB_NCCL_RECORD", str(tmp_path / "record.jsonl"))
    for var in ("LAB_NCCL_REPLAY", "LAB_NCCL_CONFIG", "LAB_NCCL_OUTCOME"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def records(tmp_path):
    return [json.loads(line) for line in (tmp_path / "record.jsonl").read_text().splitlines()]


def mpirun_args(tmp_path, **extra):
    args = {"launcher": "mpirun", "hosts": ["gpu1", "gpu2"], "nccl_env": PLAN_ENV, "algo": "Ring", "timeout": 30,
            "mpirun": {"hostfile_dir": str(tmp_path), "args": ["--tag-output"]}}
    args.update(extra)
    return args


def test_mpirun_through_the_shim(shim_env, monkeypatch):
    monkeypatch.setenv("LAB_NCCL_REPLAY", "failing")
    failed, result = run(mpirun_args(shim_env, repeats=2))
    assert not failed, result.get("msg")
    assert [launch["status"] for launch in result["launches"]] == ["succeeded", "succeeded"]
    parsed = _nccl_parse.parse(result["logs"][0])   # --tag-output prefixes: the parser strips them
    assert result["logs"][0].startswith("[1,0]<stdout>:") and parsed["oop_busbw_at_largest_size"] == 22.92
    rec = records(shim_env)
    assert len(rec) == 2 and rec[0]["np"] == 16 and rec[0]["hosts"] == {"gpu1": 8, "gpu2": 8}
    env = dict(rec[0]["env"])
    assert str(SHIM_BIN) in env.pop("PATH") and "LD_LIBRARY_PATH" in env  # exported to the remote ranks
    env.pop("LD_LIBRARY_PATH")
    assert env == {"NCCL_ALGO": "Ring", "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET", "NCCL_IB_HCA": "=mlx5_0,mlx5_1",
                   "NCCL_IB_TC": "106"}
    assert rec[0]["bind_to"] == "none" and ["pml", "ob1"] in rec[0]["mca"]
    assert rec[0]["replay"] == FAILING
    assert not list(shim_env.glob("*.hostfile"))  # removed after the run (keep is false)
    assert result["commands"][0]["argv"][:3] == ["mpirun", "-np", "16"]
    # the strict shim refuses root as mpirun does: the module lets a root launcher start it
    if os.geteuid() == 0:
        assert result["commands"][0]["env"]["OMPI_ALLOW_RUN_AS_ROOT"] == "1"
        assert "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " in result["commands"][0]["cmdline"]


def test_mpirun_rejected_argument_fails_with_the_tools_words(shim_env):
    failed, result = run(mpirun_args(shim_env, mpirun={"hostfile_dir": str(shim_env), "args": ["--bogus"]}))
    assert failed
    assert result["launches"][0]["status"] == "failed" and result["launches"][0]["rc"] == 1
    assert 'mpirun: Error: unknown option "--bogus"' in result["msg"] and "launch %s failed: mpirun exited with rc 1" % (
        result["launches"][0]["name"]) in result["msg"]


def test_mpirun_hang_times_out(shim_env, monkeypatch):
    monkeypatch.setenv("LAB_NCCL_OUTCOME", "hang")
    failed, result = run(mpirun_args(shim_env, timeout=1))
    assert failed
    launch = result["launches"][0]
    assert launch["status"] == "timeout" and launch["rc"] is None
    assert "did not finish within 1s" in result["msg"] and not _nccl_parse.parse(launch["log"])["complete"]


def test_mpirun_check_mode_runs_nothing(shim_env):
    failed, result = run(mpirun_args(shim_env), check=True)
    assert not failed and result["changed"] is False and result["launches"] == []
    assert result["commands"][0]["hostfile_content"] == "gpu1 slots=8\ngpu2 slots=8\n"
    assert not (shim_env / "record.jsonl").exists() and not list(shim_env.glob("*.hostfile"))


def test_srun_through_the_shim(shim_env):
    failed, result = run({"launcher": "slurm", "nodes": 2, "hosts": ["gpu1", "gpu2"], "nccl_env": PLAN_ENV,
                          "slurm": {"partition": "gpu", "args": ["--label"]}})
    assert not failed, result.get("msg")
    assert result["logs"][0].startswith("0: ")
    parsed = _nccl_parse.parse(result["logs"][0])
    assert parsed["complete"] and parsed["oop_busbw_at_largest_size"] == 188.53
    rec = records(shim_env)[0]
    assert rec["ranks"] == 16 and rec["nodelist"] == ["gpu1", "gpu2"] and rec["env"]["NCCL_IB_TC"] == "106"


def test_srun_unknown_option_is_rejected(shim_env):
    failed, result = run({"launcher": "slurm", "nodes": 2, "slurm": {"args": ["--gpu-bind=closest"]}})
    assert failed and "srun: unrecognized option '--gpu-bind=closest'" in result["msg"]


def test_rdma_resource_not_allocatable_fails_before_any_launch(sim):
    """Issue 14: a cluster without the device plugin fails at once, not after every launch's timeout."""
    kube = dict(k8s_args(sim)["kubernetes"], rdma_resource="rdma/hca_missing")
    before = leftovers(sim)
    failed, result = run(k8s_args(sim, timeout=600, repeats=5, kubernetes=kube))
    assert failed and result["launches"] == []
    assert result["msg"] == ("kubernetes: 2 worker(s) need nvidia.com/gpu 8 and rdma/hca_missing 1 allocatable, but only 0 of 2 "
                             "node(s) in the cluster have it - gpu1: rdma/hca_missing none (needs 1); gpu2: rdma/hca_missing "
                             "none (needs 1); is the RDMA device plugin (role k8s_rdma) running there?")
    assert leftovers(sim) == before == CLEAN
    # pinned hosts count only themselves: one GPU node too few
    failed, result = run(k8s_args(sim, nodes=None, hosts=["gpu1", "gpu9"]))
    assert failed and "only 1 of 2 node(s) of hosts gpu1, gpu9 have it - gpu9: not a node of the cluster;" in result["msg"], result["msg"]


def test_unschedulable_workers_time_out_with_the_schedulers_words(sim):
    # allocatable, but more than a node has free: the scheduler says so, the timeout message repeats it
    failed, result = run(k8s_args(sim, timeout=1, gpus_per_node=8, nodes=3))
    assert failed and "only 2 of 2 node(s)" in result["msg"]  # three workers never fit two nodes: caught before too
    failed, result = run(k8s_args(sim, timeout=1, kubernetes=dict(k8s_args(sim)["kubernetes"], rdma_resource_count=64)))
    assert failed and result["launches"] == [] and "rdma/rdma_shared_device_a 63 (needs 64)" in result["msg"]
    assert leftovers(sim) == CLEAN


@pytest.mark.parametrize("operator, expected", [
    (None, "kubernetes: the MPI Operator is not installed: no CustomResourceDefinition mpijobs.kubeflow.org "
           "(install kubeflow/mpi-operator v0.5.0 or later, deploy/v2beta1/mpi-operator.yaml)"),
    ({"version": "0.4.0"}, "kubernetes: the MPI Operator is too old for this MPIJob: CustomResourceDefinition mpijobs.kubeflow.org "
                           "v2beta1 has no spec.launcherCreationPolicy (spec.launcherCreationPolicy since v0.5.0); upgrade "
                           "kubeflow/mpi-operator"),
])
def test_missing_or_old_mpi_operator_fails_before_any_launch(tmp_path, operator, expected):
    nodes = [{"name": "gpu1", "gpus": 8, "nics": NIC}, {"name": "gpu2", "gpus": 8, "nics": NIC}]
    with K8sSim({"time_scale": 0.01, "delays": DELAYS, "nodes": nodes, "replay": PASSING, "mpi_operator": operator},
                str(tmp_path)) as server:
        failed, result = run(k8s_args(server, kubernetes=dict(k8s_args(server)["kubernetes"], rdma_resource_count=0)))
        assert failed and result["msg"] == expected and result["launches"] == []
        assert not namespace_exists(server)  # nothing created


def test_log_larger_than_the_rotation_size_keeps_its_head(sim, tmp_path):
    """kubelet rotates a container log at containerLogMaxSize: a plain read after the launch returns the last file only.
    The module follows the launcher's log while it runs and keeps the first lines (the NET/IB and GPUDirect evidence)."""
    from kubernetes import client as k8s
    from kubernetes import config as k8s_config

    with open(DEBUG_LOG, encoding="utf-8") as handle:
        text = handle.read()
    size = len(text.encode()) // 3 + 1000  # two rotations; the current file holds the last ~22 KB
    sim.set_replay(DEBUG_LOG)
    sim.set_log_max_size(size)
    try:
        failed, result = run(k8s_args(sim, keep=True))
        assert not failed, result.get("msg")
        assert result["logs"] == [text] and len(text.encode()) > size
        parsed = _nccl_parse.parse(result["logs"][0])
        assert parsed["transport"] == DEBUG_TRANSPORT and parsed["gdr_active"] is True
        # the same pod read the plain way, as a run that does not follow it would: the head is gone
        api = k8s_config.new_client_from_config(config_file=sim.kubeconfig)
        plain = k8s.CoreV1Api(api).read_namespaced_pod_log(result["launches"][0]["launcher_pod"], "nccl-benchmark",
                                                           container="launcher")
        assert 0 < len(plain.encode()) <= size and text.endswith(plain) and not text.startswith(plain)
        head = _nccl_parse.parse(plain)
        assert head["transport"] != DEBUG_TRANSPORT or head["gdr_active"] is not True
    finally:
        sim.set_log_max_size(10 * 1024 * 1024)
        sim.set_replay(PASSING)
        k8s.CustomObjectsApi(k8s_config.new_client_from_config(config_file=sim.kubeconfig)).delete_namespaced_custom_object(
            "kubeflow.org", "v2beta1", "nccl-benchmark", "mpijobs", result["names"][0])
        wait_for(lambda: leftovers(sim) == CLEAN, what="the kept MPIJob to go", timeout=20.0)


# ------------------------------------------------------------------ launcher local through the lab's node binaries

NODE_BIN = ROOT / "tests" / "lab" / "nccl" / "nodebin"


def local_args(**extra):
    args = {"launcher": "local", "gpus_per_node": 8, "min_bytes": "1G", "max_bytes": "2G", "binary_dir": str(NODE_BIN),
            "nccl_env": PLAN_ENV, "timeout": 30}
    args.update(extra)
    return args


def test_local_runs_one_process_over_all_gpus(shim_env, monkeypatch):
    monkeypatch.setenv("LAB_NODE_HOST", "gpu1")
    failed, result = run(local_args(repeats=2))
    assert not failed, result.get("msg")
    assert [launch["status"] for launch in result["launches"]] == ["succeeded", "succeeded"]
    parsed = _nccl_parse.parse(result["logs"][0])
    assert (parsed["ranks"], parsed["nodes"], parsed["gpus_per_node"]) == (8, 1, 8) and parsed["complete"]
    rec = records(shim_env)
    assert len(rec) == 2 and rec[0]["argv"][-2:] == ["-g", "8"] and rec[0]["host"] == "gpu1"
    assert rec[0]["env"]["NCCL_IB_TC"] == "106" and rec[0]["env"]["NCCL_DEBUG"] == "INFO"


def test_local_more_gpus_than_the_node_has_fails_with_nccl_tests_words(shim_env):
    failed, result = run(local_args(gpus_per_node=16))
    assert failed
    assert "Invalid number of GPUs: 16 requested but only 8 were found." in result["launches"][0]["log"]
    assert result["launches"][0]["rc"] == 5


def test_local_hang_is_bounded_by_timeout(shim_env, monkeypatch):
    monkeypatch.setenv("LAB_NCCL_OUTCOME", "hang")
    failed, result = run(local_args(timeout=1))
    assert failed and result["launches"][0]["status"] == "timeout"


def test_local_check_mode_renders_the_command(shim_env):
    failed, result = run(local_args(), check=True)
    assert not failed and result["launches"] == []
    assert result["commands"][0]["argv"][0] == str(NODE_BIN / "all_reduce_perf") and result["commands"][0]["argv"][-1] == "8"
    assert not (shim_env / "record.jsonl").exists()


def test_local_refuses_hosts(shim_env):
    failed, result = run(local_args(hosts=["gpu1", "gpu2"]))
    assert failed and "is not used with launcher local" in result["msg"]
