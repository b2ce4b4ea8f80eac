#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Thin glue: options and rendering are plugins/module_utils/_nccl_launch.py, launching is _nccl_runner.py.

from __future__ import annotations

DOCUMENTATION = r"""
module: nccl_benchmark
short_description: Launch a multi-node nccl-tests benchmark (MPIJob, mpirun or srun) and collect its logs
version_added: 0.1.0
description:
  - Runs an nccl-tests binary (C(all_reduce_perf) or another collective) across nodes, O(repeats) times in sequence,
    and returns each launch's full launcher output for M(lossless.fabric.nccl_result) to parse and gate.
  - Always the multi-node form - one MPI process per GPU (C(-g 1)), C(-np) = O(nodes) x O(gpus_per_node). A plain
    Kubernetes Job with C(parallelism) only runs independent single-node copies and is not offered.
  - O(launcher=kubernetes) creates one Kubeflow C(MPIJob) (C(kubeflow.org/v2beta1)) per launch in its namespace (created
    when missing, never deleted), waits up to O(timeout) for its
    C(Succeeded) or C(Failed) condition, reads the launcher pod's log (labels C(training.kubeflow.org/job-name) and
    C(training.kubeflow.org/job-role=launcher)) and deletes the job unless O(keep). Workers request
    C(nvidia.com/gpu) = O(gpus_per_node) and the RDMA resource, get C(IPC_LOCK) (never C(privileged)) and a
    memory-backed C(/dev/shm).
  - O(launcher=mpirun) runs Open MPI C(mpirun) on the managed host (the launcher host, over the normal Ansible
    connection) with a hostfile written from O(hosts). O(launcher=slurm) runs C(srun --mpi=pmix). Both are bounded
    by coreutils C(timeout).
  - The ranks get C(NCCL_DEBUG=INFO) with C(NCCL_DEBUG_SUBSYS=INIT,NET) (the evidence of transport and GPUDirect
    RDMA), the plan's NCCL variables from O(nccl_env) (C(NCCL_IB_HCA), C(NCCL_IB_TC) or C(NCCL_IB_SL),
    C(NCCL_IB_GID_INDEX), C(NCCL_SOCKET_IFNAME)), O(env), the O(algo) pin, and C(NCCL_NET_GDR_LEVEL) only when asked.
    mpirun exports them, C(PATH) and C(LD_LIBRARY_PATH) with C(-x) - ranks started over ssh inherit nothing else - and
    pins its own TCP and out-of-band traffic to the plan's C(NCCL_SOCKET_IFNAME).
  - O(launcher=kubernetes) checks first that the MPI Operator is installed and new enough for the manifest (its
    C(mpijobs.kubeflow.org) CRD has every field the MPIJob sets) and that enough nodes have the GPUs and
    O(kubernetes.rdma_resource) allocatable, and fails at once otherwise. It follows the launcher's log while it runs,
    so that kubelet log rotation cannot cut its head. Each run labels its objects C(lossless.fabric/run) and deletes
    only its own MPIJobs; the namespace, which other runs may share, is left in place.
  - Benchmark pods run with C(allowPrivilegeEscalation=false) and C(automountServiceAccountToken=false).
  - Every option is checked before anything is launched; a value that could carry a newline or a second command is
    refused, naming the option and the value.
  - A failed or timed-out launch is cleaned up, then fails the task with the job name, the condition's reason and
    message, and the end of the log - unless O(fail_on_error=false), which returns it with RV(launches[].status).
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.actiongroup_fabric
attributes:
  check_mode:
    support: full
    details:
      - Renders the manifests (RV(manifests)) or command lines (RV(commands)) a real run would use and launches nothing;
        it does not contact the cluster. C(changed) is V(false).
  diff_mode:
    support: none
  idempotent:
    support: none
    details:
      - A benchmark is a new measurement every time; each run launches and reports C(changed=true).
options:
  launcher:
    description:
      - How the ranks are started - a Kubeflow MPIJob (V(kubernetes)), Open MPI C(mpirun) on the managed host
        (V(mpirun)) or Slurm C(srun --mpi=pmix) on the managed host (V(slurm)).
    type: str
    choices: [kubernetes, mpirun, slurm]
    default: kubernetes
  binary:
    description:
      - The nccl-tests binary - C(all_reduce_perf), C(all_gather_perf), C(alltoall_perf), C(broadcast_perf),
        C(reduce_perf), C(reduce_scatter_perf), C(alltoallv_perf), C(scatter_perf), C(gather_perf), C(sendrecv_perf)
        or C(hypercube_perf), optionally with the C(_mpi) suffix NGC images use. It must be built with C(MPI=1).
    type: str
    default: all_reduce_perf
  binary_dir:
    description:
      - Directory of O(binary) in the image or on the nodes (for example C(/opt/nccl_tests/build)); without it the
        binary is looked up in C(PATH).
    type: str
  min_bytes:
    description: Smallest message size (C(-b)); bytes or a K, M or G suffix (powers of 1024, as nccl-tests reads it).
    type: raw
    default: 8
  max_bytes:
    description: Largest message size (C(-e)); same format as O(min_bytes). Gate targets need sizes up to here.
    type: raw
    default: 8G
  step_factor:
    description: Multiplicative size step (C(-f)), at least 2.
    type: int
    default: 2
  iterations:
    description: Timed iterations per size (C(-n)).
    type: int
    default: 20
  warmup_iterations:
    description: Warm-up iterations (C(-w)).
    type: int
    default: 5
  gpus_per_node:
    description: GPUs (and so MPI ranks) per node; the MPIJob's C(slotsPerWorker) and the workers' C(nvidia.com/gpu).
    type: int
    default: 8
  nodes:
    description:
      - Number of nodes (MPIJob workers, C(srun --nodes)). Defaults to the number of O(hosts).
      - Required unless O(hosts) is given.
    type: int
  hosts:
    description:
      - The nodes by name. V(mpirun) writes them into the hostfile (C(<host> slots=<gpus_per_node>)) and needs them;
        V(slurm) passes them as C(--nodelist); V(kubernetes) pins the workers to these node names.
    type: list
    elements: str
  algo:
    description:
      - Pin C(NCCL_ALGO), for example V(Ring) - fabric acceptance wants the ring, because tree and NVLS results can
        exceed the network's line rate.
    type: str
  gdr_level:
    description:
      - C(NCCL_NET_GDR_LEVEL) - the largest GPU-to-NIC distance at which GPUDirect RDMA is used. Too low a level turns
        GPUDirect off.
      - Unset by default - NCCL chooses from the topology; set it (or C(NCCL_NET_GDR_LEVEL) in O(nccl_env)) only when
        the plan asks for a level.
    type: str
    choices: [LOC, PIX, PXB, PHB, SYS]
  debug_subsys:
    description:
      - C(NCCL_DEBUG_SUBSYS) with C(NCCL_DEBUG=INFO). V(INIT,NET) keeps the lines that prove the transport and
        GPUDirect RDMA (C(NET/IB ... RoCE), C(GPU Direct RDMA), C(Channel ... via NET/IB/.../GDRDMA)) and drops the
        other subsystems' lines, so that every rank prints less. An empty string leaves NCCL's own default set.
    type: str
    default: INIT,NET
  nccl_env:
    description:
      - The NCCL variables the fabric plan derives, normally C(fabric_plan_result.nccl_env) (C(NCCL_IB_HCA),
        C(NCCL_IB_TC) or C(NCCL_IB_SL), C(NCCL_IB_GID_INDEX)).
    type: dict
    default: {}
  env:
    description: More environment for every rank; wins over O(nccl_env) and the defaults.
    type: dict
    default: {}
  repeats:
    description:
      - Launches in sequence, each a separate job with its own name. Each launch is one sample for
        M(lossless.fabric.nccl_compare); 5 per side make a comparison conclusive.
    type: int
    default: 1
  timeout:
    description: Seconds one launch may take, from its creation to its end, before it counts as hung.
    type: int
    default: 1800
  poll_interval:
    description: Seconds between status reads of a running MPIJob.
    type: float
    default: 5
  keep:
    description:
      - Leave each MPIJob (and a namespace this module created), or the mpirun hostfile, in place for inspection.
    type: bool
    default: false
  fail_on_error:
    description:
      - Fail the task when a launch fails or times out (after cleaning up). With V(false) the launch is returned with
        its RV(launches[].status) so that a report can still be written, and later repeats still run.
    type: bool
    default: true
  labels:
    description:
      - Labels for the MPIJob and its pods, for example C(lossless.fabric/phase=pre) during a change window.
    type: dict
    default: {}
  name_prefix:
    description:
      - Prefix of the job names, a DNS-1035 label of at most 30 characters. Each launch is named
        C(<name_prefix>-<6 random characters>-<repeat>). Default C(nccl-) plus the collective, e.g. C(nccl-all-reduce).
    type: str
  kubernetes:
    description: Settings of O(launcher=kubernetes); the connection options mirror kubernetes.core's.
    type: dict
    default: {}
    suboptions:
      kubeconfig:
        description:
          - Path of the kubeconfig file (the inventory's C(lossless_fabric_kubeconfig)). Default
            C(K8S_AUTH_KUBECONFIG), then C(~/.kube/config).
        type: path
      context:
        description: The kubeconfig context to use.
        type: str
      host:
        description: API server URL, instead of a kubeconfig.
        type: str
      api_key:
        description: Bearer token for O(kubernetes.host).
        type: str
      validate_certs:
        description: Verify the API server's certificate.
        type: bool
      ca_cert:
        description: CA certificate file of the API server.
        type: path
      namespace:
        description: The benchmark's own namespace.
        type: str
        default: nccl-benchmark
      image:
        description: Container image with Open MPI and the MPI build of nccl-tests. Required for V(kubernetes).
        type: str
      image_pull_policy:
        description: The containers' C(imagePullPolicy) - V(Always), V(IfNotPresent) or V(Never).
        type: str
      rdma_resource:
        description: The RDMA extended resource every worker requests (the RDMA shared device plugin's resource).
        type: str
        default: rdma/rdma_shared_device_a
      rdma_resource_count:
        description: How many of O(kubernetes.rdma_resource) a worker requests (V(0) requests none).
        type: int
        default: 1
      host_network:
        description: Run the workers in the host network namespace (uses the host's RoCE GIDs).
        type: bool
        default: false
      networks:
        description: Multus C(k8s.v1.cni.cncf.io/networks) annotation of the workers (the RDMA secondary network).
        type: str
      node_selector:
        description: C(nodeSelector) of the workers.
        type: dict
      shm_size_limit:
        description: C(sizeLimit) of the memory-backed C(/dev/shm), for example V(16Gi); none when unset.
        type: str
      service_account:
        description: Service account of the pods.
        type: str
      worker_command:
        description: Command of the worker containers (for example C(/usr/sbin/sshd -De)) when the image does not start sshd.
        type: list
        elements: str
      start_sshd:
        description:
          - Run C(<sshd_path> -De [-p ssh_port] [-f sshd_config]) as the workers' command, for images whose entrypoint
            does not start sshd. Conflicts with O(kubernetes.worker_command).
        type: bool
        default: false
      sshd_path:
        description: The sshd program in the image, for O(kubernetes.start_sshd).
        type: str
        default: /usr/sbin/sshd
      sshd_config:
        description: An sshd configuration file in the image (C(sshd -f)), for example a non-root user's.
        type: str
      ssh_port:
        description:
          - Port of the workers' sshd; mpirun's ssh gets it with C(--mca plm_rsh_args "-p <port>").
          - Required, and not V(22), with O(kubernetes.host_network) - the node's own sshd listens on 22. Needs
            O(kubernetes.start_sshd) or a O(kubernetes.worker_command) that starts sshd on that port.
        type: int
      run_as_user:
        description:
          - C(runAsUser) of the pods, for images with a non-root user (C(runAsNonRoot) is set with it). Needs
            O(kubernetes.ssh_auth_mount_path).
          - Unset (the image's user, normally root) or V(0) - the launcher gets C(OMPI_ALLOW_RUN_AS_ROOT=1) and
            C(OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1), without which mpirun refuses to start as root.
        type: int
      ssh_auth_mount_path:
        description:
          - The MPIJob's C(sshAuthMountPath) - where the operator mounts the SSH keys (the operator's default is
            C(/root/.ssh)); for a non-root user its C(~/.ssh), for example C(/home/mpiuser/.ssh).
        type: str
      ib_hca:
        description:
          - C(NCCL_IB_HCA) for the pods, instead of the plan's (which names the host's devices). With SR-IOV a pod sees
            its virtual functions under other C(mlx5_N) names - give those, or an empty string to let NCCL use every
            HCA the pod sees (the device plugin gave it only its own).
        type: str
      cleanup_timeout:
        description: Seconds to wait for a deleted MPIJob, its pods and the namespace to be gone.
        type: int
        default: 300
  mpirun:
    description: Settings of C(mpirun), used by O(launcher=mpirun) and in the MPIJob launcher's command.
    type: dict
    default: {}
    suboptions:
      path:
        description: The C(mpirun) program on the managed host (a name looked up in C(PATH), or a path).
        type: str
        default: mpirun
      args:
        description: More C(mpirun) arguments before the binary, for example C(--allow-run-as-root) or C(--tag-output).
        type: list
        elements: str
        default: []
      hostfile_dir:
        description: Directory on the managed host for the hostfile; default the module's temporary directory.
        type: str
      if_include:
        description:
          - Interfaces or CIDRs for Open MPI's TCP traffic and out-of-band channel (C(btl_tcp_if_include),
            C(oob_tcp_if_include)). Default - the names in C(NCCL_SOCKET_IFNAME) of the plan (C(^...) excludes).
        type: list
        elements: str
  slurm:
    description: Settings of O(launcher=slurm).
    type: dict
    default: {}
    suboptions:
      path:
        description: The C(srun) program on the managed host.
        type: str
        default: srun
      partition:
        description: C(--partition).
        type: str
      account:
        description: C(--account).
        type: str
      container_image:
        description: C(--container-image) (Pyxis), for example C(nvcr.io#nvidia/pytorch:24.05-py3).
        type: str
      args:
        description: More C(srun) options before the binary.
        type: list
        elements: str
        default: []
notes:
  - The lab (C(inventories/lab)) runs the MPIJob against the Kubernetes API emulator and replays recorded real nccl-tests
    logs; C(docs/benchmark-launch.md) says what that can and cannot show.
seealso:
  - module: lossless.fabric.nccl_result
  - module: lossless.fabric.nccl_compare
  - module: lossless.fabric.fabric_plan
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Five all_reduce launches as MPIJobs over two 8-GPU nodes, ring pinned
  lossless.fabric.nccl_benchmark:
    launcher: kubernetes
    nodes: 2
    gpus_per_node: 8
    min_bytes: 8
    max_bytes: 8G
    algo: Ring
    repeats: 5
    binary_dir: /opt/nccl_tests/build
    nccl_env: "{{ fabric_plan_result.nccl_env }}"
    labels:
      lossless.fabric/phase: pre
    kubernetes:
      kubeconfig: "{{ lossless_fabric_kubeconfig }}"
      image: ghcr.io/coreweave/nccl-tests:12.4.1-cudnn-devel-ubuntu22.04-nccl2.21.5-1-85f9143
      rdma_resource: rdma/rdma_shared_device_a
      networks: rdma-net
  register: bench

- name: Gate every launch
  lossless.fabric.nccl_result:
    content: "{{ item }}"
    fabric_targets: "{{ fabric_plan_result.intent.targets }}"
  loop: "{{ bench.logs }}"

- name: mpirun from the first GPU host over the inventory's GPU hosts
  lossless.fabric.nccl_benchmark:
    launcher: mpirun
    hosts: "{{ groups['gpu_hosts'] }}"
    binary: all_reduce_perf
    binary_dir: /opt/nccl-tests/build
    nccl_env: "{{ fabric_plan_result.nccl_env }}"
    mpirun:
      args: [--tag-output]
  delegate_to: "{{ groups['gpu_hosts'][0] }}"
  run_once: true

- name: Slurm with PMIx and a Pyxis container, results kept even when a launch fails
  lossless.fabric.nccl_benchmark:
    launcher: slurm
    nodes: 4
    binary: all_gather_perf
    repeats: 3
    fail_on_error: false
    slurm:
      partition: gpu
      container_image: nvcr.io#nvidia/pytorch:24.05-py3
"""

RETURN = r"""
launches:
  description: One entry per launch, in order.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The job name (also the MPIJob name).
      type: str
      sample: nccl-all-reduce-k3x9q2-1
    log:
      description: The full launcher output (the launcher pod's log, or mpirun/srun stdout then stderr).
      type: str
    rc:
      description: The launcher's exit code, or C(null) when unknown (timed out, or the pod never ran).
      type: int
    status:
      description: V(succeeded), V(failed) or V(timeout).
      type: str
    duration_s:
      description: Seconds from launch to end.
      type: float
    message:
      description: Why a launch did not succeed (condition reason and message, events, exit code).
      type: str
      returned: when the launch did not succeed
logs:
  description: The RV(launches[].log) strings in order, ready for M(lossless.fabric.nccl_result) or M(lossless.fabric.nccl_compare).
  returned: always
  type: list
  elements: str
names:
  description: The job names of the launches (rendered also in check mode).
  returned: always
  type: list
  elements: str
env:
  description: The environment every rank gets.
  returned: always
  type: dict
  sample: {NCCL_DEBUG: INFO, NCCL_DEBUG_SUBSYS: "INIT,NET", NCCL_IB_HCA: "=mlx5_0,mlx5_1", NCCL_IB_TC: "106"}
manifests:
  description: The Namespace and the MPIJobs as rendered (one MPIJob per launch).
  returned: when O(launcher=kubernetes)
  type: list
  elements: dict
commands:
  description: The command of each launch.
  returned: when O(launcher=mpirun) or O(launcher=slurm)
  type: list
  elements: dict
  contains:
    name:
      description: The launch name.
      type: str
    argv:
      description: The argument vector (run without a shell).
      type: list
      elements: str
    env:
      description: The environment added to the command's.
      type: dict
    cmdline:
      description: The same as one shell-quoted line, for people.
      type: str
    hostfile:
      description: The hostfile path (mpirun).
      type: str
    hostfile_content:
      description: The hostfile text (mpirun).
      type: str
namespace_created:
  description: Whether this run created the namespace (it is left in place; other runs may share it).
  returned: when O(launcher=kubernetes) and not in check mode
  type: bool
"""

# Imports follow the documentation blocks, as in every Ansible module (STYLE.md point 5).
import copy  # noqa: E402
import os  # noqa: E402
import secrets  # noqa: E402
import string  # noqa: E402

from ansible.module_utils.basic import AnsibleModule, env_fallback  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils import _nccl_launch, _nccl_runner  # noqa: E402

ARGUMENT_SPEC = {
    "launcher": {"type": "str", "choices": ["kubernetes", "mpirun", "slurm"], "default": "kubernetes"},
    "binary": {"type": "str", "default": "all_reduce_perf"},
    "binary_dir": {"type": "str"},
    "min_bytes": {"type": "raw", "default": 8},
    "max_bytes": {"type": "raw", "default": "8G"},
    "step_factor": {"type": "int", "default": 2},
    "iterations": {"type": "int", "default": 20},
    "warmup_iterations": {"type": "int", "default": 5},
    "gpus_per_node": {"type": "int", "default": 8},
    "nodes": {"type": "int"},
    "hosts": {"type": "list", "elements": "str"},
    "algo": {"type": "str"},
    "gdr_level": {"type": "str", "choices": ["LOC", "PIX", "PXB", "PHB", "SYS"]},
    "debug_subsys": {"type": "str", "default": "INIT,NET"},
    "nccl_env": {"type": "dict", "default": {}},
    "env": {"type": "dict", "default": {}},
    "repeats": {"type": "int", "default": 1},
    "timeout": {"type": "int", "default": 1800},
    "poll_interval": {"type": "float", "default": 5},
    "keep": {"type": "bool", "default": False},
    "fail_on_error": {"type": "bool", "default": True},
    "labels": {"type": "dict", "default": {}},
    "name_prefix": {"type": "str"},
    "kubernetes": {"type": "dict", "default": {}, "options": {
        "kubeconfig": {"type": "path", "fallback": (env_fallback, ["K8S_AUTH_KUBECONFIG"])},
        "context": {"type": "str"},
        "host": {"type": "str"},
        "api_key": {"type": "str", "no_log": True},
        "validate_certs": {"type": "bool"},
        "ca_cert": {"type": "path"},
        "namespace": {"type": "str", "default": "nccl-benchmark"},
        "image": {"type": "str"},
        "image_pull_policy": {"type": "str"},  # checked in _nccl_launch: choices on a dict default {} trip over None
        "rdma_resource": {"type": "str", "default": "rdma/rdma_shared_device_a"},
        "rdma_resource_count": {"type": "int", "default": 1},
        "host_network": {"type": "bool", "default": False},
        "networks": {"type": "str"},
        "node_selector": {"type": "dict"},
        "shm_size_limit": {"type": "str"},
        "service_account": {"type": "str"},
        "worker_command": {"type": "list", "elements": "str"},
        "start_sshd": {"type": "bool", "default": False},
        "sshd_path": {"type": "str", "default": "/usr/sbin/sshd"},
        "sshd_config": {"type": "str"},
        "ssh_port": {"type": "int"},
        "run_as_user": {"type": "int"},
        "ssh_auth_mount_path": {"type": "str"},
        "ib_hca": {"type": "str"},
        "cleanup_timeout": {"type": "int", "default": 300},
    }},
    "mpirun": {"type": "dict", "default": {}, "options": {
        "path": {"type": "str", "default": "mpirun"},
        "args": {"type": "list", "elements": "str", "default": []},
        "hostfile_dir": {"type": "str"},
        "if_include": {"type": "list", "elements": "str"},
    }},
    "slurm": {"type": "dict", "default": {}, "options": {
        "path": {"type": "str", "default": "srun"},
        "partition": {"type": "str"},
        "account": {"type": "str"},
        "container_image": {"type": "str"},
        "args": {"type": "list", "elements": "str", "default": []},
    }},
}

_AUTH_KEYS = ("kubeconfig", "context", "host", "api_key", "validate_certs", "ca_cert")


def _token() -> str:
    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _i in range(6))


def _run_kubernetes(module: AnsibleModule, spec: dict, rendered: dict, result: dict) -> list:
    params = module.params
    kube = params["kubernetes"]
    runner = _nccl_runner.KubernetesRunner(spec, {k: kube.get(k) for k in _AUTH_KEYS}, poll_interval=params["poll_interval"],
                                           cleanup_timeout=kube["cleanup_timeout"])
    launches = result["launches"]
    try:
        result.update(runner.run(rendered, params["timeout"], params["keep"], params["fail_on_error"], launches))
    except _nccl_runner.LaunchError as exc:
        result["changed"] = bool(launches) or runner.created_namespace
        result["namespace_created"] = runner.created_namespace
        _finish(result)
        module.fail_json(msg=str(exc), **result)
    result["changed"] = True
    for warning in runner.warnings:
        module.warn(warning)
    return launches


def _run_command(module: AnsibleModule, spec: dict, rendered: dict, result: dict) -> list:
    params = module.params
    timeout_bin = module.get_bin_path("timeout", required=True)
    runner = _nccl_runner.CommandRunner(lambda argv, env: module.run_command(argv, environ_update=env), timeout_bin)
    hostfile = rendered["commands"][0].get("hostfile")
    launches = result["launches"]
    try:
        if hostfile:
            with open(hostfile, "w", encoding="utf-8") as handle:
                handle.write(rendered["commands"][0]["hostfile_content"])
        runner.run(rendered["commands"], params["timeout"], params["fail_on_error"], launches)
        result["changed"] = bool(launches)
    except OSError as exc:
        _finish(result)
        module.fail_json(msg="mpirun.hostfile_dir: cannot write the hostfile %s: %s" % (hostfile, exc.strerror or exc), **result)
    finally:
        if hostfile and not params["keep"] and os.path.exists(hostfile):
            os.unlink(hostfile)
    return launches


def _finish(result: dict) -> None:
    result["logs"] = [launch["log"] for launch in result["launches"]]


def main() -> None:
    # AnsibleModule fills suboption defaults into a dict default in place: keep the module-level spec pristine
    module = AnsibleModule(argument_spec=copy.deepcopy(ARGUMENT_SPEC), supports_check_mode=True)
    spec, errors = _nccl_launch.validate(module.params)
    if errors:
        module.fail_json(msg="\n".join(errors), errors=errors)

    token = _token()
    hostfile = None
    if spec["launcher"] == "mpirun":
        # the run's token in the name: two runs sharing hostfile_dir never share a hostfile
        hostfile = os.path.join(spec["mpirun"]["hostfile_dir"] or module.tmpdir, "%s-%s.hostfile" % (spec["name_prefix"], token))
    rendered = _nccl_launch.render(spec, token, hostfile)
    if spec["launcher"] == "mpirun" and os.geteuid() == 0:
        # mpirun refuses to start as root without them (the launcher host's user is root)
        for command in rendered["commands"]:
            _nccl_launch.with_env(command, dict(command["env"], **_nccl_launch.RUN_AS_ROOT_ENV))
    result = {"changed": False, "launches": [], "logs": [], "names": rendered["names"], "env": rendered["env"]}
    result.update({k: rendered[k] for k in ("manifests", "commands") if k in rendered})
    if module.check_mode:
        module.exit_json(**result)

    if spec["launcher"] == "kubernetes":
        launches = _run_kubernetes(module, spec, rendered, result)
    else:
        launches = _run_command(module, spec, rendered, result)
    _finish(result)
    bad = [launch for launch in launches if launch["status"] != "succeeded"]
    kind = "MPIJob" if spec["launcher"] == "kubernetes" else "launch"
    if bad and module.params["fail_on_error"]:
        module.fail_json(msg="\n".join(_nccl_runner.outcome_message(launch, kind) for launch in bad), **result)
    for launch in bad:
        module.warn(_nccl_runner.outcome_message(launch, kind).splitlines()[0])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
