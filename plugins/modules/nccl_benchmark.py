#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Thin glue: options and rendering are plugins/module_utils/_nccl/_launch.py, launching is _nccl/_runner.py,
# the launch glue both nccl modules share (runner, hostfile, token) is _nccl/_jobs.py.

from __future__ import annotations

DOCUMENTATION = r"""
module: nccl_benchmark
short_description: Launch an nccl-tests benchmark (MPIJob, mpirun, srun, or on each node) and collect its logs
version_added: 0.1.0
description:
  - Runs an nccl-tests binary (C(all_reduce_perf) or another collective) across nodes, O(repeats) times in sequence,
    and returns each launch's full launcher output for M(lossless.fabric.nccl_result) to parse and gate.
  - The multi-node launchers use one MPI process per GPU (C(-g 1)), C(-np) = O(nodes) x O(gpus_per_node). A plain
    Kubernetes Job with C(parallelism) only runs independent single-node copies and is not offered.
  - O(launcher=kubernetes) creates one Kubeflow C(MPIJob) (C(kubeflow.org/v2beta1)) per launch in its namespace (created
    when missing, never deleted), waits up to O(timeout) for its
    C(Succeeded) or C(Failed) condition, reads the launcher pod's log (labels C(training.kubeflow.org/job-name) and
    C(training.kubeflow.org/job-role=launcher)) and deletes the job unless O(keep). Workers request
    C(nvidia.com/gpu) = O(gpus_per_node) and the RDMA resource, get C(IPC_LOCK) (never C(privileged)) and a
    memory-backed C(/dev/shm).
  - O(launcher=local) runs the single-node form instead - one process per managed host driving all its GPUs - to
    measure each node's own baseline before any network test.
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
  - lossless.fabric._nccl_launch
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
        (V(mpirun)), Slurm C(srun --mpi=pmix) on the managed host (V(slurm)), or V(local).
      - V(local) is the node baseline - nccl-tests runs directly on each managed host of the play, one process driving
        all O(gpus_per_node) GPUs (C(-g <gpus_per_node>)), no MPI, every host in parallel (the play's forks), bounded by
        coreutils C(timeout) like mpirun and srun, with the same NCCL environment. It measures NVLink/NVSwitch (and
        PCIe) inside the node, not the network. O(hosts) is not used and O(nodes) is 1. Any nccl-tests build works
        (C(MPI=1) or not).
    type: str
    choices: [kubernetes, mpirun, slurm, local]
    default: kubernetes
  min_bytes:
    description: Smallest message size (C(-b)); bytes or a K, M or G suffix (powers of 1024, as nccl-tests reads it).
    type: raw
    default: 8
  max_bytes:
    description: Largest message size (C(-e)); same format as O(min_bytes). Gate targets need sizes up to here.
    type: raw
    default: 8G
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
  repeats:
    description:
      - Launches in sequence, each a separate job with its own name. Each launch is one sample for
        M(lossless.fabric.nccl_compare); 5 per side make a comparison conclusive.
    type: int
    default: 1
  fail_on_error:
    description:
      - Fail the task when a launch fails or times out (after cleaning up). With V(false) the launch is returned with
        its RV(launches[].status) so that a report can still be written, and later repeats still run.
    type: bool
    default: true
  tenant:
    description:
      - Run as a tenant of the fabric (C(docs/tenants.md)) - its entry in C(fabric_plan_result.tenants) plus its
        network. The launch then uses the tenant's C(kubeconfig) (its own credentials, in place of O(kubernetes.kubeconfig)),
        its C(namespace), its C(networks) (its NetworkAttachmentDefinition, C(<name>-rdma)) and C(rdma_resource), and
        labels its MPIJobs C(lossless.fabric/tenant=<name>).
      - Refused with another launcher than V(kubernetes), with a O(kubernetes) value that contradicts the tenant's, and
        with a network of another namespace. The namespace is neither read nor created (onboarding made it; a tenant's
        credentials reach its own namespace only).
    type: dict
    suboptions:
      name:
        description: The tenant's name.
        type: str
      namespace:
        description: The tenant's namespace.
        type: str
      kubeconfig:
        description: The tenant's kubeconfig.
        type: path
      networks:
        description: The tenant's network attachment(s), in the form of O(kubernetes.networks).
        type: str
      rdma_resource:
        description: The RDMA resource the tenant's pods request, in the form of O(kubernetes.rdma_resource).
        type: str
  name_prefix:
    description:
      - Prefix of the job names, a DNS-1035 label of at most 30 characters. Each launch is named
        C(<name_prefix>-<6 random characters>-<repeat>). Default C(nccl-) plus the collective, e.g. C(nccl-all-reduce).
    type: str
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

- name: Node baseline - every GPU host runs all_reduce over its own 8 GPUs (one process, -g 8), in parallel
  lossless.fabric.nccl_benchmark:
    launcher: local
    gpus_per_node: 8
    min_bytes: 1G
    max_bytes: 8G
    binary_dir: /opt/nccl-tests/build
    nccl_env: "{{ fabric_plan_result.nccl_env }}"
    timeout: 600
  register: node_bench

# 460 GB/s all_reduce busbw on one 8 x H100 node: the threshold of Azure's ND H100 v5 health checks (issue 35);
# measure your own GPUs' baseline for other models
- name: Gate each node's baseline on the target of its GPU model
  lossless.fabric.nccl_result:
    content: "{{ node_bench.logs[0] }}"
    targets:
      - min_size: 1G
        min_busbw: 460
        gpu_model: NVIDIA H100 80GB HBM3

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
  returned: when O(launcher=mpirun), O(launcher=slurm) or O(launcher=local)
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
import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule, env_fallback  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _jobs as _nccl_jobs  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _launch as _nccl_launch  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _runner as _nccl_runner  # noqa: E402

# The launch options are _nccl_jobs.LAUNCH_ARGUMENT_SPEC (doc fragment _nccl_launch); these are this module's own.
ARGUMENT_SPEC = _nccl_jobs.argument_spec({
    # the shared launchers plus local (nccl_localize, which needs node pairs, does not offer it)
    "launcher": {"type": "str", "choices": list(_nccl_launch.LAUNCHERS + (_nccl_launch.LOCAL,)), "default": "kubernetes"},
    "min_bytes": {"type": "raw", "default": 8},
    "max_bytes": {"type": "raw", "default": "8G"},
    "gpus_per_node": {"type": "int", "default": 8},
    "nodes": {"type": "int"},
    "hosts": {"type": "list", "elements": "str"},
    "repeats": {"type": "int", "default": 1},
    "fail_on_error": {"type": "bool", "default": True},
    "name_prefix": {"type": "str"},
    "tenant": {"type": "dict", "options": {k: {"type": "path" if k == "kubeconfig" else "str"} for k in _nccl_launch.TENANT_KEYS}},
}, (env_fallback, ["K8S_AUTH_KUBECONFIG"]))


def _run_kubernetes(module: AnsibleModule, params: dict, spec: dict, rendered: dict, result: dict) -> list:
    runner = _nccl_jobs.kubernetes_runner(spec, params)
    launches = result["launches"]
    try:
        result.update(_nccl_jobs.run_kubernetes(runner, rendered, params["timeout"], params["keep"], params["fail_on_error"],
                                                launches))
    except _nccl_runner.LaunchError as exc:
        result["changed"] = bool(launches) or runner.created_namespace
        result["namespace_created"] = runner.created_namespace
        _finish(result)
        module.fail_json(msg=str(exc), **result)
    result["changed"] = True
    for warning in runner.warnings:
        module.warn(warning)
    return launches


def _run_command(module: AnsibleModule, rendered: dict, result: dict) -> list:
    params = module.params
    runner = _nccl_jobs.command_runner(module.run_command, module.get_bin_path("timeout", required=True))
    launches = result["launches"]
    try:
        _nccl_jobs.run_commands(runner, rendered, params["timeout"], params["keep"], params["fail_on_error"], launches)
        result["changed"] = bool(launches)
    except _nccl_jobs.HostfileError as exc:
        _finish(result)
        module.fail_json(msg=str(exc), **result)
    return launches


def _finish(result: dict) -> None:
    result["logs"] = [launch["log"] for launch in result["launches"]]


def main() -> None:
    # AnsibleModule fills suboption defaults into a dict default in place: keep the module-level spec pristine
    module = AnsibleModule(argument_spec=_nccl_jobs.argument_spec(ARGUMENT_SPEC), supports_check_mode=True)
    params, errors = _nccl_launch.with_tenant(module.params)
    spec, more = _nccl_launch.validate(params, _nccl_launch.LAUNCHERS + (_nccl_launch.LOCAL,))
    errors += more
    if params.get("tenant"):
        spec["tenant"] = params["tenant"]["name"]
    if errors:
        module.fail_json(msg="\n".join(errors), errors=errors)

    rendered = _nccl_jobs.render(spec, _nccl_jobs.token(), module.tmpdir, os.geteuid() == 0)
    result = {"changed": False, "launches": [], "logs": [], "names": rendered["names"], "env": rendered["env"]}
    result.update({k: rendered[k] for k in ("manifests", "commands") if k in rendered})
    if module.check_mode:
        module.exit_json(**result)

    if spec["launcher"] == "kubernetes":
        launches = _run_kubernetes(module, params, spec, rendered, result)
    else:
        launches = _run_command(module, rendered, result)
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
