# SPDX-License-Identifier: GPL-3.0-or-later
"""_nccl_launch: option checks, nccl-tests/mpirun/srun argv, and the MPIJob + Namespace manifests
(built-in kinds against kubernetes-validate for k8sim's Kubernetes version, the MPIJob against k8sim's CRD schema)."""
from __future__ import annotations

import copy
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _launch as L

ROOT = pathlib.Path(__file__).resolve().parents[5]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from k8sim import crds  # noqa: E402
from k8sim.sim import Simulator  # noqa: E402

PLAN_ENV = {"NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_TC": "106", "NCCL_IB_GID_INDEX": "3"}
BASE = {"launcher": "kubernetes", "nodes": 2, "gpus_per_node": 8, "min_bytes": 8, "max_bytes": "8G",
        "nccl_env": PLAN_ENV, "labels": {"lossless.fabric/phase": "pre"},
        "kubernetes": {"image": "ghcr.io/coreweave/nccl-tests:12.4.1-nccl2.21.5-1", "shm_size_limit": "16Gi"}}
DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def spec_of(**changes):
    params = copy.deepcopy(BASE)
    params.update(changes)
    spec, errors = L.validate(params)
    assert errors == []
    return spec


def errors_of(**changes):
    params = copy.deepcopy(BASE)
    params.update(changes)
    return L.validate(params)[1]


@pytest.fixture(scope="module")
def kube_version():
    """The Kubernetes version k8sim serves by default, so the schemas are the ones the emulator enforces."""
    return Simulator({}).store.kube_version


# ------------------------------------------------------------------ argv

def test_nccl_tests_argv_is_the_multi_node_form():
    spec = spec_of(min_bytes="1M", max_bytes=16 << 30, step_factor=4, iterations=50, warmup_iterations=10,
                   binary="all_gather_perf", binary_dir="/opt/nccl_tests/build/")
    assert L.test_argv(spec) == ["/opt/nccl_tests/build/all_gather_perf", "-b", "1M", "-e", "16G", "-f", "4",
                                 "-n", "50", "-w", "10", "-g", "1"]
    assert L.size_text(3000) == "3000" and L.size_text(1536) == "1536" and L.size_text(3072) == "3K"


def test_environment_precedence_and_pin():
    spec = spec_of(env={"NCCL_IB_TC": "104", "NCCL_SOCKET_IFNAME": "=eth0"}, algo="Ring", gdr_level="SYS")
    assert L.environment(spec) == {"NCCL_ALGO": "Ring", "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET",
                                   "NCCL_IB_GID_INDEX": "3", "NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_TC": "104",
                                   "NCCL_NET_GDR_LEVEL": "SYS", "NCCL_SOCKET_IFNAME": "=eth0"}
    # without a pin no NCCL_ALGO; the plan's values; no NCCL_NET_GDR_LEVEL unless asked (NCCL picks it from the topology)
    env = L.environment(spec_of())
    assert "NCCL_ALGO" not in env and env["NCCL_IB_TC"] == "106" and "NCCL_NET_GDR_LEVEL" not in env
    # the plan may ask for it through its NCCL variables
    assert L.environment(spec_of(nccl_env=dict(PLAN_ENV, NCCL_NET_GDR_LEVEL="PHB")))["NCCL_NET_GDR_LEVEL"] == "PHB"


def test_debug_subsystems_keep_the_evidence_and_can_be_widened():
    assert L.environment(spec_of())["NCCL_DEBUG_SUBSYS"] == "INIT,NET"
    assert L.environment(spec_of(debug_subsys="INIT,NET,GRAPH"))["NCCL_DEBUG_SUBSYS"] == "INIT,NET,GRAPH"
    assert "NCCL_DEBUG_SUBSYS" not in L.environment(spec_of(debug_subsys=""))  # NCCL's default set
    assert any("debug_subsys: 'INIT NET'" in e for e in errors_of(debug_subsys="INIT NET"))


def test_mpirun_argv_and_hostfile():
    spec = spec_of(launcher="mpirun", nodes=None, hosts=["gpu1", "gpu2"], mpirun={"args": ["--tag-output"]})
    env = L.environment(spec)
    argv = L.mpirun_argv(spec, list(env), "/tmp/x.hostfile")
    assert argv[:5] == ["mpirun", "-np", "16", "--hostfile", "/tmp/x.hostfile"]
    assert argv[5:13] == ["--bind-to", "none", "--mca", "pml", "ob1", "--mca", "btl", "tcp,self"]
    exported = [argv[i + 1] for i, a in enumerate(argv) if a == "-x"]
    # ranks started over ssh see only what -x exports: the binary's and libraries' paths, then the NCCL variables
    assert exported == ["PATH", "LD_LIBRARY_PATH"] + sorted(env)
    assert argv[argv.index("--tag-output") + 1] == "all_reduce_perf"
    assert L.hostfile_text(spec) == "gpu1 slots=8\ngpu2 slots=8\n"
    rendered = L.render(spec, "abc123", "/tmp/x.hostfile")
    cmd = rendered["commands"][0]
    assert cmd["argv"] == argv and cmd["env"] == env and cmd["hostfile_content"] == L.hostfile_text(spec)
    assert "NCCL_IB_HCA==mlx5_0,mlx5_1 " in cmd["cmdline"] and "mpirun -np 16" in cmd["cmdline"]


@pytest.mark.parametrize("socket_ifname, if_include, expected", [
    (None, None, []),
    ("=eth0", None, ["--mca", "btl_tcp_if_include", "eth0", "--mca", "oob_tcp_if_include", "eth0"]),
    ("eth0,eth1", None, ["--mca", "btl_tcp_if_include", "eth0,eth1", "--mca", "oob_tcp_if_include", "eth0,eth1"]),
    ("^docker,lo", None, ["--mca", "btl_tcp_if_exclude", "docker,lo", "--mca", "oob_tcp_if_exclude", "docker,lo"]),
    ("=eth0", ["10.0.0.0/24"], ["--mca", "btl_tcp_if_include", "10.0.0.0/24", "--mca", "oob_tcp_if_include", "10.0.0.0/24"]),
])
def test_bootstrap_and_mpi_interfaces_pinned_from_the_plan(socket_ifname, if_include, expected):
    plan = dict(PLAN_ENV, NCCL_SOCKET_IFNAME=socket_ifname) if socket_ifname else PLAN_ENV
    spec = spec_of(launcher="mpirun", nodes=None, hosts=["gpu1", "gpu2"], nccl_env=plan,
                   mpirun={"if_include": if_include} if if_include else {})
    argv = L.mpirun_argv(spec, list(L.environment(spec)), "/tmp/h")
    fixed_end = argv.index("tcp,self") + 1
    assert argv[fixed_end:fixed_end + len(expected)] == expected
    if socket_ifname:
        assert L.environment(spec)["NCCL_SOCKET_IFNAME"] == socket_ifname  # NCCL's bootstrap uses the same
    if not expected:
        assert not any("_if_" in a for a in argv)


def test_srun_argv():
    spec = spec_of(launcher="slurm", nodes=4, hosts=None,
                   slurm={"partition": "gpu", "container_image": "nvcr.io#nvidia/pytorch:24.05-py3", "args": ["--label"]})
    argv = L.srun_argv(spec, "nccl-all-reduce-abc123-1")
    assert argv[:6] == ["srun", "--mpi=pmix", "--job-name=nccl-all-reduce-abc123-1", "--nodes=4",
                        "--ntasks-per-node=8", "--gpus-per-node=8"]
    assert "--partition=gpu" in argv and "--container-image=nvcr.io#nvidia/pytorch:24.05-py3" in argv
    assert argv[argv.index("--label") + 1:] == L.test_argv(spec)


# ------------------------------------------------------------------ manifests

def test_mpijob_shape():
    spec = spec_of(hosts=["gpu1", "gpu2"], nodes=None, algo="Ring")
    job = L.mpijob_manifest(spec, "nccl-all-reduce-abc123-1", "abc123")
    assert job["apiVersion"] == "kubeflow.org/v2beta1" and job["kind"] == "MPIJob"
    assert job["metadata"]["namespace"] == "nccl-benchmark"
    assert job["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "lossless.fabric.nccl_benchmark",
                                         "lossless.fabric/phase": "pre", "lossless.fabric/run": "abc123"}
    js = job["spec"]
    assert js["slotsPerWorker"] == 8 and js["runPolicy"] == {"cleanPodPolicy": "Running", "backoffLimit": 0}
    assert js["launcherCreationPolicy"] == "WaitForWorkersReady" and "sshAuthMountPath" not in js
    launcher, worker = js["mpiReplicaSpecs"]["Launcher"], js["mpiReplicaSpecs"]["Worker"]
    assert launcher["replicas"] == 1 and worker["replicas"] == 2
    for tmpl in (launcher["template"], worker["template"]):
        assert tmpl["metadata"]["labels"] == {"lossless.fabric/phase": "pre", "lossless.fabric/run": "abc123"}
        # issue 15: no privilege escalation, no API token in a benchmark pod
        assert tmpl["spec"]["automountServiceAccountToken"] is False
        assert tmpl["spec"]["containers"][0]["securityContext"]["allowPrivilegeEscalation"] is False
    lc = launcher["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in lc["env"]}
    # the image runs as root: mpirun refuses to start unless both are set
    assert env == {"NCCL_ALGO": "Ring", "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET", "NCCL_IB_GID_INDEX": "3",
                   "NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_TC": "106",
                   "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    assert lc["command"][:2] == ["/bin/sh", "-c"] and len(lc["command"]) == 3
    mpirun = shlex.split(lc["command"][2].split("exec ", 1)[1])
    assert mpirun[:3] == ["mpirun", "-np", "16"] and "--hostfile" not in mpirun  # the operator provides the hostfile
    assert mpirun[-13:] == L.test_argv(spec)
    exported = [mpirun[i + 1] for i, a in enumerate(mpirun) if a == "-x"]
    assert exported == ["PATH", "LD_LIBRARY_PATH"] + sorted(L.environment(spec))  # not the OMPI_ALLOW_* (mpirun's own)
    wc = worker["template"]["spec"]["containers"][0]
    assert "env" not in wc  # ranks started over ssh never see a container env
    assert wc["resources"]["limits"] == wc["resources"]["requests"] == {"nvidia.com/gpu": "8", "rdma/rdma_shared_device_a": "1"}
    assert wc["securityContext"] == {"privileged": False, "allowPrivilegeEscalation": False, "capabilities": {"add": ["IPC_LOCK"]}}
    assert wc["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
    assert worker["template"]["spec"]["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}]
    terms = worker["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["gpu1", "gpu2"]
    assert "resources" not in lc  # the launcher holds no GPU
    assert "command" not in wc  # the image's entrypoint (sshd) unless asked


def test_launcher_script_runs_mpirun_with_path_and_libraries(tmp_path):
    """Run the launcher's sh -c line with a stand-in mpirun that prints its argv and environment."""
    fake = tmp_path / "bin" / "mpirun"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n"
                    "printf 'PATH=%s\\n' \"$PATH\"\nprintf 'LD=%s\\n' \"${LD_LIBRARY_PATH-unset}\"\n")
    fake.chmod(0o755)
    spec = spec_of(env={"NCCL_IB_QPS_PER_CONNECTION": "4"})
    command = L.mpijob_manifest(spec, "n")["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
    env = {"PATH": "%s:/usr/bin:/bin" % fake.parent}
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[:3] == ["-np", "16", "--bind-to"]
    assert out[out.index("-e") + 1] == "8G" and out[-3] == "1"
    path = next(line for line in out if line.startswith("PATH="))[5:].split(":")
    assert path[:3] == [str(fake.parent), "/usr/bin", "/bin"] and path[3:] == list(L.COMMON_BINARY_DIRS)
    assert "LD=" in out  # set (empty here), so -x LD_LIBRARY_PATH always has a value to export
    assert ["-x", "NCCL_IB_QPS_PER_CONNECTION"] == out[out.index("NCCL_IB_QPS_PER_CONNECTION") - 1:out.index("NCCL_IB_QPS_PER_CONNECTION") + 1]


def test_non_root_image_gets_its_user_and_ssh_keys_path():
    """kubeflow/mpi-operator examples/v2beta1/pi/pi.yaml: runAsUser 1000, sshAuthMountPath /home/mpiuser/.ssh,
    workers run /usr/sbin/sshd -De -f /home/mpiuser/.sshd_config."""
    kube = dict(BASE["kubernetes"], run_as_user=1000, ssh_auth_mount_path="/home/mpiuser/.ssh", start_sshd=True,
                sshd_config="/home/mpiuser/.sshd_config")
    job = L.mpijob_manifest(spec_of(kubernetes=kube), "n")
    assert job["spec"]["sshAuthMountPath"] == "/home/mpiuser/.ssh"
    for rs in job["spec"]["mpiReplicaSpecs"].values():
        assert rs["template"]["spec"]["securityContext"] == {"runAsUser": 1000, "runAsNonRoot": True}
    lenv = {e["name"] for e in job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["env"]}
    assert not lenv & set(L.RUN_AS_ROOT_ENV)  # nothing to allow for a non-root mpirun
    wc = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    assert wc["command"] == ["/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"]
    assert crds.validate(copy.deepcopy(job), crds.MPIJOB_SCHEMA) == []
    # run_as_user 0 is root: the allow variables come back
    root = L.launcher_env(spec_of(kubernetes=dict(BASE["kubernetes"], run_as_user=0)))
    assert root["OMPI_ALLOW_RUN_AS_ROOT"] == root["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"
    assert any("kubernetes.ssh_auth_mount_path: required with run_as_user 1000" in e
               for e in errors_of(kubernetes=dict(BASE["kubernetes"], run_as_user=1000)))


def test_host_network_sshd_on_its_own_port():
    kube = dict(BASE["kubernetes"], host_network=True, ssh_port=2222, start_sshd=True)
    job = L.mpijob_manifest(spec_of(kubernetes=kube), "n")
    wc = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    assert wc["command"] == ["/usr/sbin/sshd", "-De", "-p", "2222"]
    script = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"][2]
    mpirun = shlex.split(script.split("exec ", 1)[1])
    i = mpirun.index("plm_rsh_args")
    assert mpirun[i - 1:i + 2] == ["--mca", "plm_rsh_args", "-p 2222"]  # Open MPI's ssh gets the port
    errors = errors_of(kubernetes=dict(BASE["kubernetes"], host_network=True))
    assert any("kubernetes.ssh_port: None must be set, and not 22, with host_network" in e for e in errors), errors
    assert any("needs start_sshd" in e for e in errors_of(kubernetes=dict(BASE["kubernetes"], ssh_port=2222)))
    assert any("conflicts with kubernetes.worker_command" in e
               for e in errors_of(kubernetes=dict(BASE["kubernetes"], start_sshd=True, worker_command=["sshd"])))


def test_ib_hca_for_the_devices_a_pod_sees():
    # SR-IOV: the pod sees its VFs (other mlx5_N names than the host's PFs); "" lets NCCL use every HCA it sees
    env = L.environment(spec_of(kubernetes=dict(BASE["kubernetes"], ib_hca="")))
    assert "NCCL_IB_HCA" not in env and env["NCCL_IB_TC"] == "106"
    env = L.environment(spec_of(kubernetes=dict(BASE["kubernetes"], ib_hca="=mlx5_4,mlx5_5")))
    assert env["NCCL_IB_HCA"] == "=mlx5_4,mlx5_5"
    assert L.environment(spec_of())["NCCL_IB_HCA"] == "=mlx5_0,mlx5_1"  # the plan's otherwise
    assert any("kubernetes.ib_hca: 'mlx5 0' is not an NCCL_IB_HCA value" in e
               for e in errors_of(kubernetes=dict(BASE["kubernetes"], ib_hca="mlx5 0")))


@pytest.mark.parametrize("networks, ok", [
    ("rdma-net", True), ("kube-system/rdma-net", True), ("lab/rdma-a@net1,lab/rdma-b@net2", True),
    ("Lab/rdma", False), ("a/b/c", False), ("rdma-net@", False),
])
def test_multus_network_names(networks, ok):
    errors = errors_of(kubernetes=dict(BASE["kubernetes"], networks=networks))
    assert (errors == []) is ok, errors
    if ok:
        tmpl = L.mpijob_manifest(spec_of(kubernetes=dict(BASE["kubernetes"], networks=networks)), "n")
        assert tmpl["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["metadata"]["annotations"] == {
            "k8s.v1.cni.cncf.io/networks": networks}


@pytest.mark.parametrize("release, missing", [("0.6.0", []), ("0.5.0", []), ("0.4.0", ["launcherCreationPolicy"])])
def test_operator_too_old_for_the_manifest(release, missing):
    """The CRD as kubeflow/mpi-operator installs it at each release (k8sim's copy of its spec fields)."""
    crd = crds.mpijob_crd(release)
    assert L.operator_missing_fields(crd, L.mpijob_manifest(spec_of(), "n")) == missing
    no_v2 = copy.deepcopy(crd)
    no_v2["spec"]["versions"][0]["name"] = "v1"
    assert L.operator_missing_fields(no_v2, L.mpijob_manifest(spec_of(), "n")) == ["(version v2beta1)"]


def test_operator_fields_the_manifest_needs():
    job = L.mpijob_manifest(spec_of(), "n")
    assert L.required_operator_fields(job) == ["launcherCreationPolicy", "mpiImplementation", "runPolicy", "slotsPerWorker"]
    kube = dict(BASE["kubernetes"], run_as_user=1000, ssh_auth_mount_path="/home/mpiuser/.ssh")
    assert "sshAuthMountPath" in L.required_operator_fields(L.mpijob_manifest(spec_of(kubernetes=kube), "n"))


def test_rdma_resource_options():
    spec = spec_of(kubernetes=dict(BASE["kubernetes"], rdma_resource="rdma/hca_shared_devices_a", rdma_resource_count=2,
                                   host_network=True, ssh_port=2222, start_sshd=True, networks="rdma-net",
                                   node_selector={"rack": "r1"}))
    worker = L.mpijob_manifest(spec, "n")["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    assert worker["spec"]["containers"][0]["resources"]["limits"]["rdma/hca_shared_devices_a"] == "2"
    assert worker["spec"]["hostNetwork"] is True and worker["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert worker["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/networks": "rdma-net"}
    assert worker["spec"]["nodeSelector"] == {"rack": "r1"}
    none = spec_of(kubernetes=dict(BASE["kubernetes"], rdma_resource_count=0))
    limits = L.mpijob_manifest(none, "n")["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]
    assert limits["limits"] == {"nvidia.com/gpu": "8"}


def test_builtin_kinds_pass_kubernetes_validate(kube_version):
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    spec = spec_of(hosts=["gpu1", "gpu2"], nodes=None, algo="Ring",
                   kubernetes=dict(BASE["kubernetes"], networks="rdma-net", node_selector={"rack": "r1"},
                                   service_account="nccl", worker_command=["/usr/sbin/sshd", "-De"],
                                   image_pull_policy="IfNotPresent"))
    rendered = L.render(spec, "abc123")
    namespace = rendered["manifests"][0]
    assert namespace["kind"] == "Namespace"
    kubernetes_validate.validate(namespace, kube_version, strict=True)
    for job in rendered["manifests"][1:]:
        for role, rs in job["spec"]["mpiReplicaSpecs"].items():
            # a pod template is a Pod's metadata and spec; the operator adds restartPolicy from the replica spec
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": dict(rs["template"].get("metadata") or {}, name=role.lower()),
                   "spec": dict(rs["template"]["spec"], restartPolicy=rs["restartPolicy"])}
            kubernetes_validate.validate(pod, kube_version, strict=True)


def test_kubernetes_validate_catches_a_broken_template(kube_version):
    """The check above can fail: a number where the schema wants a string is refused."""
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    from kubernetes_validate.utils import ValidationError

    rs = L.mpijob_manifest(spec_of(), "n")["spec"]["mpiReplicaSpecs"]["Launcher"]
    rs["template"]["spec"]["containers"][0]["command"][1] = 16
    with pytest.raises(ValidationError):
        kubernetes_validate.validate({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": rs["template"]["spec"]},
                                     kube_version, strict=True)


def test_mpijob_matches_the_crd_schema_and_operator_names():
    for nodes in (1, 2, 64):
        spec = spec_of(nodes=nodes, repeats=3)
        for name in L.job_names(spec, "k3x9q2"):
            job = L.mpijob_manifest(spec, name)
            assert crds.validate(copy.deepcopy(job), crds.MPIJOB_SCHEMA) == []
            pruned = copy.deepcopy(job)
            assert crds.prune(pruned, crds.MPIJOB_SCHEMA) == [] and pruned == job  # no field the CRD would drop
            host = "%s-worker-%d" % (name, nodes - 1)   # what the operator's validation checks
            assert DNS1035.fullmatch(host) and len(host) <= 63
    # the schema check itself can fail
    broken = L.mpijob_manifest(spec_of(), "n")
    broken["spec"]["slotsPerWorker"] = "8"
    assert crds.validate(broken, crds.MPIJOB_SCHEMA) != []


def test_job_names_unique_predictable_dns1035():
    spec = spec_of(repeats=5)
    names = L.job_names(spec, "k3x9q2")
    assert names == ["nccl-all-reduce-k3x9q2-%d" % i for i in range(1, 6)]
    assert len(set(names)) == 5 and all(DNS1035.fullmatch(n) for n in names)
    assert L.default_prefix("alltoallv_perf_mpi") == "nccl-alltoallv"
    assert spec_of(name_prefix="acceptance", repeats=1)["name_prefix"] == "acceptance"
    with pytest.raises(ValueError, match="token"):
        L.job_names(spec, "ABC")


def test_check_mode_render_is_complete():
    rendered = L.render(spec_of(repeats=2), "abc123")
    assert rendered["names"] == ["nccl-all-reduce-abc123-1", "nccl-all-reduce-abc123-2"]
    assert [m["kind"] for m in rendered["manifests"]] == ["Namespace", "MPIJob", "MPIJob"]
    assert L.launcher_selector("x") == "training.kubeflow.org/job-name=x,training.kubeflow.org/job-role=launcher"


# ------------------------------------------------------------------ bad input

@pytest.mark.parametrize("changes, expected", [
    ({"binary": "all_reduce"}, "binary: 'all_reduce' is not an nccl-tests binary"),
    ({"binary": "all_reduce_perf;reboot"}, "binary: 'all_reduce_perf;reboot' contains ';'"),
    ({"binary_dir": "/opt/x\n/bin"}, "binary_dir: '/opt/x\\n/bin' contains a newline"),
    ({"min_bytes": "1T"}, "min_bytes: '1T' is not a size"),
    ({"max_bytes": "1GB"}, "max_bytes: '1GB' is not a size"),
    ({"min_bytes": "16G", "max_bytes": "8G"}, "min_bytes: '16G' is above max_bytes '8G'"),
    ({"min_bytes": 0}, "min_bytes: 0 is not a size above 0"),
    ({"step_factor": 1}, "step_factor: 1 is out of range"),
    ({"iterations": 0}, "iterations: 0 is out of range"),
    ({"gpus_per_node": 0}, "gpus_per_node: 0 is out of range"),
    ({"nodes": None}, "nodes: required"),
    ({"nodes": 3, "hosts": ["gpu1", "gpu2"]}, "nodes: 3 differs from the 2 host(s)"),
    ({"hosts": ["gpu1", "gpu1"], "nodes": None}, "hosts: ['gpu1', 'gpu1'] lists a host twice"),
    ({"hosts": ["gpu1 gpu2"], "nodes": None}, "hosts[0]: 'gpu1 gpu2' is not a host name"),
    ({"launcher": "mpirun"}, "hosts: required with launcher mpirun"),
    ({"algo": "Ring$(id)"}, "algo: 'Ring$(id)' contains '$'"),
    ({"env": {"NCCL_X": "a\nb"}}, "env.NCCL_X: 'a\\nb' contains a newline"),
    ({"env": {"BAD-NAME": "1"}}, "env: 'BAD-NAME' is not an environment variable name"),
    ({"nccl_env": {"NCCL_IB_HCA": "mlx5_0; rm -rf /"}}, "nccl_env.NCCL_IB_HCA: 'mlx5_0; rm -rf /' contains ';'"),
    ({"labels": {"lossless.fabric/phase": "pre post"}}, "labels.lossless.fabric/phase: 'pre post' is not a Kubernetes label value"),
    ({"name_prefix": "Nccl"}, "name_prefix: 'Nccl' is not a DNS-1035 label"),
    ({"name_prefix": "n" * 31}, "is longer than 30 characters"),
    ({"repeats": 0}, "repeats: 0 is out of range"),
    ({"gdr_level": "5"}, "gdr_level: '5' is not one of LOC, PIX, PXB, PHB, SYS"),
    ({"kubernetes": {}}, "kubernetes.image: required with launcher kubernetes"),
    ({"kubernetes": {"image": "x", "namespace": "Bench"}}, "kubernetes.namespace: 'Bench' is not a namespace name"),
    ({"kubernetes": {"image": "x", "rdma_resource": "rdma_shared"}}, "kubernetes.rdma_resource: 'rdma_shared' is not an extended resource"),
    ({"kubernetes": {"image": "x", "image_pull_policy": "Sometimes"}}, "kubernetes.image_pull_policy: 'Sometimes' is not one of"),
    ({"kubernetes": {"image": "x", "networks": "net`id`"}}, "kubernetes.networks: 'net`id`' contains '`'"),
    ({"mpirun": {"args": ["--mca", "btl", "tcp;id"]}}, "mpirun.args[2]: 'tcp;id' contains ';'"),
    ({"mpirun": {"path": "mpirun && id"}}, "mpirun.path: 'mpirun && id' contains '&'"),
    ({"launcher": "slurm", "slurm": {"container_image": "a#b#c"}}, "slurm.container_image: 'a#b#c' is not a container image"),
    ({"launcher": "slurm", "slurm": {"partition": "gpu|id"}}, "slurm.partition: 'gpu|id' contains '|'"),
    ({"launcher": "job"}, "launcher: 'job' is not one of kubernetes, mpirun, slurm"),
])
def test_bad_input_names_key_and_value(changes, expected):
    errors = errors_of(**changes)
    assert any(expected in e for e in errors), errors


def test_every_error_at_once():
    errors = errors_of(binary="x", min_bytes="1T", repeats=0, env={"A": "\n"})
    assert len(errors) == 4


# ------------------------------------------------------------------ launcher local (issue 35)

LOCAL = L.LAUNCHERS + (L.LOCAL,)


def test_local_is_offered_only_where_the_module_adds_it():
    params = dict(copy.deepcopy(BASE), launcher="local", nodes=None)
    _spec, errors = L.validate(params)
    assert errors[0] == "launcher: 'local' is not one of kubernetes, mpirun, slurm"   # nccl_localize's view
    spec, errors = L.validate(params, LOCAL)
    assert errors == [] and spec["nodes"] == 1


def test_local_argv_is_one_process_driving_every_gpu():
    params = dict(copy.deepcopy(BASE), launcher="local", nodes=None, gpus_per_node=8, binary_dir="/opt/nccl-tests/build")
    spec, _errors = L.validate(params, LOCAL)
    rendered = L.render(spec, "abc123")
    cmd = rendered["commands"][0]
    assert cmd["argv"] == ["/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2", "-n", "20", "-w", "5", "-g", "8"]
    assert "mpirun" not in cmd["cmdline"] and "hostfile" not in cmd
    assert cmd["env"]["NCCL_IB_HCA"] == "=mlx5_0,mlx5_1" and cmd["env"]["NCCL_DEBUG"] == "INFO"   # the plan's NCCL environment


@pytest.mark.parametrize("changes, expected", [
    ({"hosts": ["gpu1"]}, "hosts: ['gpu1'] is not used with launcher local"),
    ({"nodes": 2}, "nodes: 2 must be 1 with launcher local"),
])
def test_local_refuses_multi_node_options(changes, expected):
    params = dict(copy.deepcopy(BASE), launcher="local", nodes=None)
    params.update(changes)
    _spec, errors = L.validate(params, LOCAL)
    assert any(e.startswith(expected) for e in errors), errors
