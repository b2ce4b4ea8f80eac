# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Launch glue shared by the modules nccl_benchmark and nccl_localize.

``_nccl_launch`` validates and renders, ``_nccl_runner`` launches; this file holds what sits between them
and the module: the shared launch options (LAUNCH_ARGUMENT_SPEC, documented in
plugins/doc_fragments/_nccl_launch.py), the run token, the hostfile path, the run-as-root environment of
mpirun, and one run of the rendered launches through a runner (hostfile written first and removed after).
No Ansible import: the modules pass ``run_command`` (AnsibleModule.run_command), their temporary
directory and the effective user id.
"""
from __future__ import annotations

import copy
import os
import secrets
import string
from collections.abc import Callable
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _launch as _nccl_launch
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _runner as _nccl_runner

# The options both modules take (plugins/doc_fragments/_nccl_launch.py documents them).
LAUNCH_ARGUMENT_SPEC: dict[str, dict[str, Any]] = {
    "launcher": {"type": "str", "choices": ["kubernetes", "mpirun", "slurm"], "default": "kubernetes"},
    "binary": {"type": "str", "default": "all_reduce_perf"},
    "binary_dir": {"type": "str"},
    "step_factor": {"type": "int", "default": 2},
    "iterations": {"type": "int", "default": 20},
    "warmup_iterations": {"type": "int", "default": 5},
    "algo": {"type": "str"},
    "gdr_level": {"type": "str", "choices": ["LOC", "PIX", "PXB", "PHB", "SYS"]},
    "debug_subsys": {"type": "str", "default": "INIT,NET"},
    "nccl_env": {"type": "dict", "default": {}},
    "env": {"type": "dict", "default": {}},
    "timeout": {"type": "int", "default": 1800},
    "poll_interval": {"type": "float", "default": 5},
    "keep": {"type": "bool", "default": False},
    "labels": {"type": "dict", "default": {}},
    "kubernetes": {"type": "dict", "default": {}, "options": {
        "kubeconfig": {"type": "path"},  # argument_spec() adds the K8S_AUTH_KUBECONFIG fallback
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

AUTH_KEYS = ("kubeconfig", "context", "host", "api_key", "validate_certs", "ca_cert")


class HostfileError(OSError):
    """The mpirun hostfile could not be written; the message names mpirun.hostfile_dir and the path."""


def argument_spec(own: dict, kubeconfig_fallback: Any = None) -> dict:
    """A module's argument spec: the shared launch options, then its own (which win); a fresh copy.

    ``kubeconfig_fallback`` is AnsibleModule's ``(env_fallback, ["K8S_AUTH_KUBECONFIG"])`` (kubernetes.core's).
    """
    spec = copy.deepcopy(LAUNCH_ARGUMENT_SPEC)
    if kubeconfig_fallback is not None:
        spec["kubernetes"]["options"]["kubeconfig"]["fallback"] = kubeconfig_fallback
    spec.update(copy.deepcopy(own))
    return spec


def token() -> str:
    """6 lower-case letters or digits: the run's part of every job name (and of the mpirun hostfile's name)."""
    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _i in range(6))


def render(spec: dict, tok: str, tmpdir: str, as_root: bool) -> dict:
    """``_nccl_launch.render`` with the hostfile path (mpirun) and, for a root launcher, what lets mpirun start."""
    hostfile = None
    if spec["launcher"] == "mpirun":
        # the run's token in the name: two runs sharing hostfile_dir never share a hostfile
        hostfile = os.path.join(spec["mpirun"]["hostfile_dir"] or tmpdir, "%s-%s.hostfile" % (spec["name_prefix"], tok))
    rendered = _nccl_launch.render(spec, tok, hostfile)
    if spec["launcher"] == "mpirun" and as_root:
        # mpirun refuses to start as root without them (the launcher host's user is root)
        for command in rendered["commands"]:
            _nccl_launch.with_env(command, dict(command["env"], **_nccl_launch.RUN_AS_ROOT_ENV))
    return rendered


def kubernetes_runner(spec: dict, params: dict, **kwargs: Any) -> _nccl_runner.KubernetesRunner:
    """A runner for MPIJobs in ``spec``'s namespace, authenticated with the module's kubernetes options."""
    kube = params.get("kubernetes") or {}
    return _nccl_runner.KubernetesRunner(spec, {k: kube.get(k) for k in AUTH_KEYS}, poll_interval=params["poll_interval"],
                                         cleanup_timeout=kube.get("cleanup_timeout", 300), **kwargs)


def run_kubernetes(runner: _nccl_runner.KubernetesRunner, rendered: dict, timeout: int, keep: bool, fail_on_error: bool,
                   launches: list) -> dict:
    """Every MPIJob of ``rendered`` in turn; appends to ``launches``. Raises _nccl_runner.LaunchError."""
    return runner.run(rendered, timeout, keep, fail_on_error, launches)


def command_runner(run_command: Callable[..., tuple[int, str, str]], timeout_bin: str) -> _nccl_runner.CommandRunner:
    """mpirun/srun through ``run_command(argv, environ_update=env)`` (AnsibleModule.run_command)."""
    return _nccl_runner.CommandRunner(lambda argv, env: run_command(argv, environ_update=env), timeout_bin)


def run_commands(runner: _nccl_runner.CommandRunner, rendered: dict, timeout: int, keep: bool, fail_on_error: bool,
                 launches: list) -> None:
    """Write the hostfile (mpirun), run every command in turn (appended to ``launches``), remove the hostfile
    unless ``keep``. Raises HostfileError when the hostfile cannot be written."""
    hostfile = rendered["commands"][0].get("hostfile")
    try:
        if hostfile:
            try:
                with open(hostfile, "w", encoding="utf-8") as handle:
                    handle.write(rendered["commands"][0]["hostfile_content"])
            except OSError as exc:
                raise HostfileError("mpirun.hostfile_dir: cannot write the hostfile %s: %s" % (hostfile, exc.strerror or exc)) from None
        runner.run(rendered["commands"], timeout, fail_on_error, launches)
    finally:
        if hostfile and not keep and os.path.exists(hostfile):
            os.unlink(hostfile)


def spread_workers(manifest: dict) -> dict:
    """One worker per node: a required pod anti-affinity on the node name among the job's own workers.

    A job of 1-GPU workers pinned to two nodes (nodeAffinity In [a, b]) could otherwise put both workers on one
    node, and measure its NVLink instead of the network. The operator labels the workers with the job name and
    role (the labels ``launcher_selector`` reads for the launcher).
    """
    name = manifest["metadata"]["name"]
    template = manifest["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    affinity = template.setdefault("spec", {}).setdefault("affinity", {})
    affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {_nccl_launch.JOB_NAME_LABEL: name, _nccl_launch.JOB_ROLE_LABEL: "worker"}},
        "topologyKey": "kubernetes.io/hostname"}]}
    return manifest


def launch_one(spec: dict, params: dict, rendered: dict, run_command: Callable[..., tuple[int, str, str]] | None = None,
               timeout_bin: str | None = None, runner: Any = None) -> dict:
    """The single launch of ``rendered`` (repeats 1); a launcher error is returned as a failed launch, not raised.

    kubernetes: connect and launch only - the module checked the operator and the nodes and made the namespace
    once, before the first round. ``runner`` replaces the real one (tests).
    """
    name = rendered["names"][0]
    try:
        if spec["launcher"] == "kubernetes":
            runner = runner or kubernetes_runner(spec, params)
            if getattr(runner, "core", None) is None:
                runner.connect()
            return runner.launch(name, spread_workers(rendered["manifests"][1]), spec["timeout"], bool(params.get("keep")))
        runner = runner or command_runner(run_command, timeout_bin)
        launches: list = []
        run_commands(runner, rendered, spec["timeout"], bool(params.get("keep")), False, launches)
        return launches[0]
    except (_nccl_runner.LaunchError, HostfileError) as exc:
        return {"name": name, "status": "failed", "rc": None, "log": "", "duration_s": None, "message": str(exc)}
