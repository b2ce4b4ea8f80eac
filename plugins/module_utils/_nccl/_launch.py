# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""What an nccl-tests launch looks like: options checked, argv and manifests built.

Pure Python, no Ansible and no Kubernetes imports; ``_nccl_runner`` does the
launching.  Facts (flags, launchers, MPIJob fields, NCCL variables) are from
shared/reference/nccl-tests.md sections 1-3 and 7; section numbers below refer
to that file.

* ``validate(params)`` -> (spec, errors): every bad option named with its
  value before anything is touched.
* ``test_argv``, ``environment``, ``mpirun_argv``, ``hostfile_text``,
  ``srun_argv``, ``namespace_manifest``, ``mpijob_manifest`` build one piece.
* ``render(spec, token)`` -> what one module run launches, per repeat.

Multi-node form only (section 1): one MPI process per GPU (``-g 1``) and
``-np`` = nodes x GPUs per node.  A plain Job with ``parallelism`` runs
independent single-node copies and is not offered.
"""
from __future__ import annotations

import re
import shlex
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common import _text
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _vocab as _nccl_vocab

LAUNCHERS = ("kubernetes", "mpirun", "slurm")
# nccl_benchmark only: nccl-tests on the managed host itself, one process driving all its GPUs (-g <gpus>), no MPI
# (section 1: "The single-node form without MPI is one process: -g 8"); Ansible runs it on every host in parallel.
LOCAL = "local"
# Every nccl-tests binary (section 1); NGC images add the _mpi suffix (NAME_SUFFIX=_mpi).
BINARIES = _nccl_vocab.BINARIES
GDR_LEVELS = ("LOC", "PIX", "PXB", "PHB", "SYS")
# NCCL_DEBUG_SUBSYS: INIT carries "NET/IB : Using ..." and "GPU Direct RDMA ...", NET the "Channel ... via NET/IB/../GDRDMA"
# lines; without the ENV, GRAPH, TUNING, COLL... chatter every rank prints less (section 7; NCCL docs, Logging:
# https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting/logging.html).
DEFAULT_DEBUG_SUBSYS = "INIT,NET"
# Where common nccl-tests images keep the binaries; appended to the launcher's PATH, which -x PATH hands to every
# rank.  /opt/nccl_tests/build: CoreWeave's nccl-tests images (coreweave/nccl-tests
# mpi-operator/nccl-test-distributed-h100-64-mpijob.yaml); /usr/local/bin: NGC PyTorch images ship the _mpi binaries
# there (https://run-ai-docs.nvidia.com/saas/tutorials/training-tutorials/nccl-tests, nvcr.io/nvidia/pytorch:26.01-py3);
# /opt/nccl-tests/build and /workspace/nccl-tests/build: a `git clone` + `make MPI=1` in an image's build
# (unverified as a convention; docs/benchmark-launch.md).
COMMON_BINARY_DIRS = ("/opt/nccl_tests/build", "/opt/nccl-tests/build", "/workspace/nccl-tests/build", "/usr/local/bin")
# Open MPI refuses to start as root unless both are set (open-mpi/ompi#6895, #6911, v4.0.2 and later); the reference
# MPIJob sets them on its root launcher (coreweave/nccl-tests mpi-operator/nccl-test-distributed-h100-64-mpijob.yaml).
RUN_AS_ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# Fields of the MPIJob this module sets and the MPI Operator release whose v2beta1 CRD has them
# (kubeflow/mpi-operator manifests/base/kubeflow.org_mpijobs.yaml at each tag): an older operator's structural
# schema would prune the field silently - launcherCreationPolicy pruned starts mpirun before the workers' sshd.
MPIJOB_FIELDS = {"launcherCreationPolicy": "v0.5.0", "mpiImplementation": "v0.4.0", "sshAuthMountPath": "v0.4.0",
                 "slotsPerWorker": "v0.4.0", "runPolicy": "v0.4.0"}
DEFAULT_RDMA_RESOURCE = "rdma/rdma_shared_device_a"
DEFAULT_NAMESPACE = "nccl-benchmark"
MPIJOB_API = ("kubeflow.org", "v2beta1", "mpijobs")
MPIJOB_CRD = "mpijobs.kubeflow.org"
MPI_OPERATOR_MIN = "v0.5.0"  # launcherCreationPolicy (see MPIJOB_FIELDS)
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
MANAGED_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "lossless.fabric.nccl_benchmark"
# One value per module run (its token): clean-up and listings touch only this run's objects.
RUN_LABEL = "lossless.fabric/run"
# Keep MPI's own traffic on TCP, out of NCCL's way (section 2: Azure, GCM, aws-k8s-tester do this).
MPIRUN_FIXED = ["--bind-to", "none", "--mca", "pml", "ob1", "--mca", "btl", "tcp,self"]

_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HOST = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?")
_IMAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@-]*")
_PATH = re.compile(r"/?[A-Za-z0-9._+-]+(/[A-Za-z0-9._+-]+)*/?")
_LABEL_KEY = re.compile(r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")
_RESOURCE = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_QUANTITY = re.compile(r"\d+(\.\d+)?(Ki|Mi|Gi|Ti|K|M|G|T)?")
_SLURM_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._,:@/+-]*")
_SUBSYS = re.compile(r"\^?[A-Za-z]+(,[A-Za-z]+)*")
_IFNAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*(/[0-9]{1,2})?")
# Multus short form, one or more of <namespace>/<network>@<interface> (k8snetworkplumbingwg network attachment
# specification v1.2 section 4.1.2); namespace and interface are optional.
_NETWORK = re.compile(r"([a-z0-9]([-a-z0-9]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?(@[A-Za-z0-9_.-]{1,15})?")
# "<prefix>-<6 chars>-<repeat>" plus "-worker-<n>" (the operator's pod and host name) must stay a DNS-1035 label.
_PREFIX_MAX = 30
_TOKEN_LEN = 6


class _Errors(list):
    """Errors collected while checking; each names the option and the value."""

    def bad(self, key: str, value: Any, why: str) -> None:
        self.append("%s: %r %s" % (key, value, why))


def _unsafe(errors: _Errors, key: str, value: str) -> bool:
    """Refuse what could end a command line or start a second command (_common/_text.py, the intent's rule too)."""
    reason = _text.unsafe_reason(value)  # one rule for the collection
    if reason:
        errors.bad(key, value, "contains %s" % reason)
        return True
    return False


def _string(errors: _Errors, key: str, value: Any, pattern: re.Pattern | None = None, what: str = "") -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        errors.bad(key, value, "is not a non-empty string")
        return None
    if _unsafe(errors, key, value):
        return None
    if pattern is not None and not pattern.fullmatch(value):
        errors.bad(key, value, "is not %s" % what)
        return None
    return value


def _int(errors: _Errors, key: str, value: Any, low: int, high: int | None = None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        errors.bad(key, value, "is not an integer")
        return None
    if value < low or (high is not None and value > high):
        errors.bad(key, value, "is out of range (%d..%s)" % (low, high if high is not None else "any"))
        return None
    return value


def _size(errors: _Errors, key: str, value: Any) -> int | None:
    try:
        return _nccl_vocab.parse_size(value)
    except ValueError as exc:
        errors.append("%s: %s" % (key, exc))
        return None


def size_text(value: int) -> str:
    """Bytes as nccl-tests' -b/-e read them: the largest exact K/M/G (powers of 1024; no T, section 3)."""
    for unit, mult in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if value and value % mult == 0:
            return "%d%s" % (value // mult, unit)
    return str(value)


def _string_list(errors: _Errors, key: str, value: Any, pattern: re.Pattern | None = None, what: str = "") -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        errors.bad(key, value, "is not a list")
        return []
    out = []
    for i, item in enumerate(value):
        if isinstance(item, int) and not isinstance(item, bool):
            item = str(item)  # YAML turns "-n 5" style arguments into numbers
        got = _string(errors, "%s[%d]" % (key, i), item, pattern, what)
        if got is not None:
            out.append(got)
    return out


def _env(errors: _Errors, key: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors.bad(key, value, "is not a mapping of variable name to value")
        return {}
    out = {}
    for name, val in value.items():
        if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
            errors.bad(key, name, "is not an environment variable name")
            continue
        if isinstance(val, bool) or val is None or isinstance(val, (dict, list)):
            errors.bad("%s.%s" % (key, name), val, "is not a string or a number")
            continue
        text = str(val)
        if not _unsafe(errors, "%s.%s" % (key, name), text):
            out[name] = text
    return out


def _labels(errors: _Errors, key: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors.bad(key, value, "is not a mapping of label to value")
        return {}
    out = {}
    for name, val in value.items():
        if not isinstance(name, str) or not _LABEL_KEY.fullmatch(name) or len(name) > 253:
            errors.bad(key, name, "is not a Kubernetes label key")
            continue
        text = str(val) if isinstance(val, (str, int)) and not isinstance(val, bool) else None
        if text is None or not _LABEL_VALUE.fullmatch(text) or len(text) > 63:
            errors.bad("%s.%s" % (key, name), val, "is not a Kubernetes label value (63 characters of [A-Za-z0-9_.-])")
            continue
        out[name] = text
    return out


def _binary(errors: _Errors, value: Any) -> str | None:
    name = _string(errors, "binary", value)
    if name is None:
        if value is None:
            errors.bad("binary", value, "is required")
        return None
    base = name[:-4] if name.endswith("_mpi") else name
    if base not in BINARIES:
        errors.bad("binary", value, "is not an nccl-tests binary (one of %s, optionally with the _mpi suffix)" % ", ".join(BINARIES))
        return None
    return name


def _check_sizes(errors: _Errors, params: dict, spec: dict) -> None:
    spec["min_bytes"] = _size(errors, "min_bytes", params.get("min_bytes", 8))
    spec["max_bytes"] = _size(errors, "max_bytes", params.get("max_bytes", "8G"))
    if spec["min_bytes"] is not None and spec["min_bytes"] < 1:
        errors.bad("min_bytes", params.get("min_bytes"), "is not a size above 0")
    if None not in (spec["min_bytes"], spec["max_bytes"]) and spec["min_bytes"] > spec["max_bytes"]:
        errors.bad("min_bytes", params.get("min_bytes"), "is above max_bytes %r" % (params.get("max_bytes"),))
    # -f 1 would never reach maxBytes; nccl-tests steps while size < max.
    spec["step_factor"] = _int(errors, "step_factor", params.get("step_factor", 2), 2, 1024)
    spec["iterations"] = _int(errors, "iterations", params.get("iterations", 20), 1, 1000000)
    spec["warmup_iterations"] = _int(errors, "warmup_iterations", params.get("warmup_iterations", 5), 0, 1000000)


def _check_placement(errors: _Errors, params: dict, spec: dict) -> None:
    spec["gpus_per_node"] = _int(errors, "gpus_per_node", params.get("gpus_per_node", 8), 1, 128)
    spec["hosts"] = _string_list(errors, "hosts", params.get("hosts"), _HOST, "a host name")
    if len(set(spec["hosts"])) != len(spec["hosts"]):
        errors.bad("hosts", params.get("hosts"), "lists a host twice")
    nodes = _int(errors, "nodes", params.get("nodes"), 1, 100000)
    if nodes is None and spec["hosts"]:
        nodes = len(spec["hosts"])
    if nodes is not None and spec["hosts"] and nodes != len(spec["hosts"]):
        errors.bad("nodes", nodes, "differs from the %d host(s) in hosts" % len(spec["hosts"]))
    if nodes is None and params.get("nodes") is None and spec["launcher"] != LOCAL:
        errors.append("nodes: required (the node count), or give hosts")
    if spec["launcher"] == "mpirun" and not spec["hosts"]:
        errors.append("hosts: required with launcher mpirun (they form the hostfile)")
    if spec["launcher"] == LOCAL:
        # each managed host benchmarks its own GPUs: the play's hosts are the nodes, one process per host
        if spec["hosts"]:
            errors.bad("hosts", params.get("hosts"), "is not used with launcher local (every managed host of the play runs its own "
                       "benchmark; limit the play's hosts instead)")
        if params.get("nodes") not in (None, 1):
            errors.bad("nodes", params.get("nodes"), "must be 1 with launcher local (one node per managed host)")
        nodes = 1
    spec["nodes"] = nodes


def _check_kubernetes(errors: _Errors, raw: Any, spec: dict) -> None:
    raw = raw or {}
    if not isinstance(raw, dict):
        errors.bad("kubernetes", raw, "is not a mapping")
        raw = {}
    k = {
        "namespace": _string(errors, "kubernetes.namespace", raw.get("namespace") or DEFAULT_NAMESPACE, _DNS1123,
                             "a namespace name (RFC 1123 label)"),
        "image": _string(errors, "kubernetes.image", raw.get("image"), _IMAGE, "a container image reference"),
        "image_pull_policy": raw.get("image_pull_policy"),
        "rdma_resource": _string(errors, "kubernetes.rdma_resource", raw.get("rdma_resource") or DEFAULT_RDMA_RESOURCE,
                                 _RESOURCE, "an extended resource name such as rdma/rdma_shared_device_a"),
        "rdma_resource_count": _int(errors, "kubernetes.rdma_resource_count", raw.get("rdma_resource_count", 1), 0, 64),
        "host_network": bool(raw.get("host_network", False)),
        "networks": _string(errors, "kubernetes.networks", raw.get("networks")),
        "run_as_user": _int(errors, "kubernetes.run_as_user", raw.get("run_as_user"), 0, 2147483647),
        "ssh_auth_mount_path": _string(errors, "kubernetes.ssh_auth_mount_path", raw.get("ssh_auth_mount_path"), _PATH,
                                       "an absolute directory path"),
        "ssh_port": _int(errors, "kubernetes.ssh_port", raw.get("ssh_port"), 1, 65535),
        "start_sshd": bool(raw.get("start_sshd", False)),
        "sshd_path": _string(errors, "kubernetes.sshd_path", raw.get("sshd_path") or "/usr/sbin/sshd", _PATH, "a program path"),
        "sshd_config": _string(errors, "kubernetes.sshd_config", raw.get("sshd_config"), _PATH, "a file path"),
        "ib_hca": raw.get("ib_hca"),
        "node_selector": _labels(errors, "kubernetes.node_selector", raw.get("node_selector")),
        "shm_size_limit": _string(errors, "kubernetes.shm_size_limit", raw.get("shm_size_limit"), _QUANTITY, "a quantity such as 16Gi"),
        "service_account": _string(errors, "kubernetes.service_account", raw.get("service_account"), _DNS1123, "a service account name"),
        "worker_command": _string_list(errors, "kubernetes.worker_command", raw.get("worker_command")),
    }
    if len(k["namespace"] or "") > 63:
        errors.bad("kubernetes.namespace", k["namespace"], "is longer than 63 characters")
    if k["image_pull_policy"] not in (None, "Always", "IfNotPresent", "Never"):
        errors.bad("kubernetes.image_pull_policy", k["image_pull_policy"], "is not one of Always, IfNotPresent, Never")
    _check_kubernetes_pod(errors, k)
    if spec["launcher"] == "kubernetes" and k["image"] is None and raw.get("image") is None:
        errors.append("kubernetes.image: required with launcher kubernetes (an image with the MPI build of nccl-tests)")
    spec["kubernetes"] = k


def _check_kubernetes_pod(errors: _Errors, k: dict) -> None:
    """The rules between the pod options: networks, the non-root user and its ssh keys, the sshd port, NCCL_IB_HCA."""
    if k["networks"] is not None:
        for item in k["networks"].split(","):
            if not _NETWORK.fullmatch(item.strip()):
                errors.bad("kubernetes.networks", k["networks"], "is not a Multus network list ([namespace/]name[@interface], comma separated)")
                k["networks"] = None
                break
    for key in ("ssh_auth_mount_path", "sshd_config"):
        if k[key] is not None and not k[key].startswith("/"):
            errors.bad("kubernetes.%s" % key, k[key], "is not an absolute path")
    if k["run_as_user"] and k["ssh_auth_mount_path"] is None:
        # the operator mounts the SSH keys at sshAuthMountPath, default /root/.ssh, which a non-root sshd never reads
        errors.append("kubernetes.ssh_auth_mount_path: required with run_as_user %d (the user's ~/.ssh, e.g. /home/mpiuser/.ssh)"
                      % k["run_as_user"])
    if k["host_network"] and k["ssh_port"] in (None, 22):
        errors.bad("kubernetes.ssh_port", k["ssh_port"], "must be set, and not 22, with host_network (the node's own sshd listens on 22)")
    if k["start_sshd"] and k["worker_command"]:
        errors.append("kubernetes.start_sshd: conflicts with kubernetes.worker_command (give one of them)")
    if k["ssh_port"] not in (None, 22) and not (k["start_sshd"] or k["worker_command"]):
        errors.bad("kubernetes.ssh_port", k["ssh_port"], "needs start_sshd or a worker_command that starts sshd on that port")
    hca = k["ib_hca"]
    if hca is not None:
        if not isinstance(hca, str):
            errors.bad("kubernetes.ib_hca", hca, "is not a string")
            k["ib_hca"] = None
        elif hca and _unsafe(errors, "kubernetes.ib_hca", hca):
            k["ib_hca"] = None
        elif hca and not re.fullmatch(r"[=^]?[A-Za-z0-9_]+(:\d+)?(,[A-Za-z0-9_]+(:\d+)?)*", hca):
            errors.bad("kubernetes.ib_hca", hca, "is not an NCCL_IB_HCA value such as =mlx5_2,mlx5_3 or ^mlx5_0")
            k["ib_hca"] = None


def _check_mpirun(errors: _Errors, raw: Any, spec: dict) -> None:
    raw = raw or {}
    if not isinstance(raw, dict):
        errors.bad("mpirun", raw, "is not a mapping")
        raw = {}
    spec["mpirun"] = {
        "path": _string(errors, "mpirun.path", raw.get("path") or "mpirun", _PATH, "a program name or path"),
        "args": _string_list(errors, "mpirun.args", raw.get("args")),
        "hostfile_dir": _string(errors, "mpirun.hostfile_dir", raw.get("hostfile_dir"), _PATH, "a directory path"),
        "if_include": _string_list(errors, "mpirun.if_include", raw.get("if_include"), _IFNAME, "an interface name or CIDR"),
    }


def _pyxis_image(errors: _Errors, value: Any) -> str | None:
    """Pyxis names a registry with '#' (nvcr.io#nvidia/pytorch:24.05-py3); srun gets an argv, no shell, so that '#' is safe."""
    key = "slurm.container_image"
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        errors.bad(key, value, "is not a non-empty string")
        return None
    reason = _text.unsafe_reason(value.replace("#", ""))
    if reason:
        errors.bad(key, value, "contains %s" % reason)
        return None
    if value.count("#") > 1 or not _IMAGE.fullmatch(value.replace("#", "/", 1)):
        errors.bad(key, value, "is not a container image reference ([USER@][REGISTRY#]IMAGE[:TAG])")
        return None
    return value


def _check_slurm(errors: _Errors, raw: Any, spec: dict) -> None:
    raw = raw or {}
    if not isinstance(raw, dict):
        errors.bad("slurm", raw, "is not a mapping")
        raw = {}
    spec["slurm"] = {
        "path": _string(errors, "slurm.path", raw.get("path") or "srun", _PATH, "a program name or path"),
        "partition": _string(errors, "slurm.partition", raw.get("partition"), _SLURM_WORD, "a partition name"),
        "account": _string(errors, "slurm.account", raw.get("account"), _SLURM_WORD, "an account name"),
        "container_image": _pyxis_image(errors, raw.get("container_image")),
        "args": _string_list(errors, "slurm.args", raw.get("args")),
    }


def validate(params: dict, launchers: tuple = LAUNCHERS) -> tuple[dict, list[str]]:
    """Module parameters -> (spec, errors).  Nothing in spec is used when errors is not empty.
    ``launchers``: those the calling module offers (nccl_benchmark adds LOCAL)."""
    errors = _Errors()
    spec: dict[str, Any] = {"launcher": params.get("launcher") or "kubernetes"}
    if spec["launcher"] not in launchers:
        errors.bad("launcher", spec["launcher"], "is not one of %s" % ", ".join(launchers))
    spec["binary"] = _binary(errors, params.get("binary", "all_reduce_perf"))
    spec["binary_dir"] = _string(errors, "binary_dir", params.get("binary_dir"), _PATH, "a directory path")
    _check_sizes(errors, params, spec)
    _check_placement(errors, params, spec)
    spec["algo"] = _string(errors, "algo", params.get("algo"), re.compile(r"[A-Za-z0-9,:^]+"),
                           "an NCCL_ALGO value such as Ring or allreduce:ring")
    # NCCL chooses the GPUDirect distance from the topology; forcing a level is the plan's (or the user's) call.
    spec["gdr_level"] = params.get("gdr_level") or None
    if spec["gdr_level"] is not None and spec["gdr_level"] not in GDR_LEVELS:
        errors.bad("gdr_level", spec["gdr_level"], "is not one of %s" % ", ".join(GDR_LEVELS))
    spec["nccl_env"] = _env(errors, "nccl_env", params.get("nccl_env"))
    spec["env"] = _env(errors, "env", params.get("env"))
    subsys = params.get("debug_subsys", DEFAULT_DEBUG_SUBSYS)
    spec["debug_subsys"] = _string(errors, "debug_subsys", subsys, _SUBSYS,
                                   "an NCCL_DEBUG_SUBSYS list such as INIT,NET") if subsys not in (None, "") else None
    spec["repeats"] = _int(errors, "repeats", params.get("repeats", 1), 1, 100)
    spec["timeout"] = _int(errors, "timeout", params.get("timeout", 1800), 1, 7 * 86400)
    spec["labels"] = _labels(errors, "labels", params.get("labels"))
    prefix = params.get("name_prefix") or default_prefix(spec["binary"] or "nccl")
    spec["name_prefix"] = _string(errors, "name_prefix", prefix, _DNS1035, "a DNS-1035 label (lower case, starts with a letter)")
    if spec["name_prefix"] and len(spec["name_prefix"]) > _PREFIX_MAX:
        errors.bad("name_prefix", prefix, "is longer than %d characters (the operator appends -worker-N)" % _PREFIX_MAX)
    _check_kubernetes(errors, params.get("kubernetes"), spec)
    _check_mpirun(errors, params.get("mpirun"), spec)
    _check_slurm(errors, params.get("slurm"), spec)
    return spec, list(errors)


def default_prefix(binary: str) -> str:
    """``all_reduce_perf`` -> ``nccl-all-reduce``: predictable, so ``kubectl get mpijobs`` shows what ran."""
    base = binary[:-4] if binary.endswith("_mpi") else binary
    base = base[:-5] if base.endswith("_perf") else base
    return ("nccl-" + base.replace("_", "-"))[:_PREFIX_MAX].rstrip("-")


def job_names(spec: dict, token: str) -> list[str]:
    """One DNS-1035 name per repeat: ``<prefix>-<token>-<n>`` (token: 6 lower-case letters/digits per module run)."""
    if not re.fullmatch(r"[a-z0-9]{%d}" % _TOKEN_LEN, token):
        raise ValueError("token %r is not %d lower-case letters or digits" % (token, _TOKEN_LEN))
    return ["%s-%s-%d" % (spec["name_prefix"], token, i + 1) for i in range(spec["repeats"])]


def ranks(spec: dict) -> int:
    return spec["nodes"] * spec["gpus_per_node"]


def test_argv(spec: dict) -> list[str]:
    """The nccl-tests command (section 3): sizes, step, iterations, warmup, one GPU per process - or, launcher local,
    one process driving every GPU of the host (``-g <gpus_per_node>``)."""
    program = spec["binary"] if not spec["binary_dir"] else spec["binary_dir"].rstrip("/") + "/" + spec["binary"]
    gpus = spec["gpus_per_node"] if spec["launcher"] == LOCAL else 1
    return [program, "-b", size_text(spec["min_bytes"]), "-e", size_text(spec["max_bytes"]), "-f", str(spec["step_factor"]),
            "-n", str(spec["iterations"]), "-w", str(spec["warmup_iterations"]), "-g", str(gpus)]


def environment(spec: dict) -> dict[str, str]:
    """The ranks' NCCL environment (section 7).

    NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS=INIT,NET is what proves transport and GPUDirect (section 8) without the
    other subsystems' lines; the plan's NCCL_* values (nccl_env), then kubernetes.ib_hca (the HCA names a pod sees)
    and the extra env override the defaults; an ``algo`` pin wins over all.  NCCL_NET_GDR_LEVEL only when asked.
    """
    env = {"NCCL_DEBUG": "INFO"}
    if spec.get("debug_subsys"):
        env["NCCL_DEBUG_SUBSYS"] = spec["debug_subsys"]
    if spec.get("gdr_level"):
        env["NCCL_NET_GDR_LEVEL"] = spec["gdr_level"]
    env.update(spec["nccl_env"])
    hca = (spec.get("kubernetes") or {}).get("ib_hca") if spec["launcher"] == "kubernetes" else None
    if hca == "":
        env.pop("NCCL_IB_HCA", None)  # every HCA the pod sees: the SR-IOV VFs the device plugin gave it
    elif hca:
        env["NCCL_IB_HCA"] = hca
    env.update(spec["env"])
    if spec["algo"]:
        env["NCCL_ALGO"] = spec["algo"]
    return dict(sorted(env.items()))


def runs_as_root(spec: dict) -> bool:
    """kubernetes: the image's user unless run_as_user says otherwise; most nccl-tests images run as root."""
    return not (spec.get("kubernetes") or {}).get("run_as_user")


def launcher_env(spec: dict) -> dict[str, str]:
    """The launcher container's environment: the ranks' variables, plus what lets mpirun start as root."""
    env = environment(spec)
    if runs_as_root(spec):
        env.update(RUN_AS_ROOT_ENV)
    return dict(sorted(env.items()))


def interface_args(spec: dict, env: dict[str, str]) -> list[str]:
    """Pin Open MPI's TCP traffic (btl) and its out-of-band channel (oob) to the plan's bootstrap interface.

    mpirun.if_include wins; otherwise NCCL_SOCKET_IFNAME gives the names: ``=eth0`` or ``eth0`` include, ``^docker,lo``
    excludes.  Open MPI takes exact interface names or CIDRs (btl_tcp_if_include / oob_tcp_if_include, ompi_info -a
    of Open MPI 4.1), so an NCCL prefix that is not an interface name needs mpirun.if_include.
    """
    names = list(spec["mpirun"].get("if_include") or [])
    mode = "include"
    if not names and env.get("NCCL_SOCKET_IFNAME"):
        value = env["NCCL_SOCKET_IFNAME"]
        if value.startswith("^"):
            mode, value = "exclude", value[1:]
        names = [n for n in value.lstrip("=").split(",") if n]
    if not names:
        return []
    joined = ",".join(names)
    return ["--mca", "btl_tcp_if_%s" % mode, joined, "--mca", "oob_tcp_if_%s" % mode, joined]


def mpirun_argv(spec: dict, env_names: list[str], hostfile: str | None = None, program: str | None = None,
                ssh_port: int | None = None) -> list[str]:
    """Open MPI mpirun (section 2): -np ranks, the hostfile, interfaces, every variable exported by name with -x.

    Ranks started over ssh get only what -x exports, so PATH and LD_LIBRARY_PATH go too (the binary and
    libnccl/libmpi are found on the workers as on the launcher).
    """
    argv = [program or spec["mpirun"]["path"], "-np", str(ranks(spec))]
    if hostfile:
        argv += ["--hostfile", hostfile]
    argv += MPIRUN_FIXED
    argv += interface_args(spec, environment(spec))
    if ssh_port and ssh_port != 22:
        argv += ["--mca", "plm_rsh_args", "-p %d" % ssh_port]
    for name in ["PATH", "LD_LIBRARY_PATH"] + [n for n in env_names if n not in ("PATH", "LD_LIBRARY_PATH")]:
        argv += ["-x", name]
    return argv + list(spec["mpirun"]["args"]) + test_argv(spec)


def hostfile_text(spec: dict) -> str:
    """Open MPI hostfile: one ``host slots=<GPUs per node>`` line per inventory host."""
    return "".join("%s slots=%d\n" % (host, spec["gpus_per_node"]) for host in spec["hosts"])


def srun_argv(spec: dict, name: str) -> list[str]:
    """Slurm with PMIx (section 2); the environment reaches the ranks through srun's default --export=ALL."""
    slurm = spec["slurm"]
    argv = [slurm["path"], "--mpi=pmix", "--job-name=%s" % name, "--nodes=%d" % spec["nodes"],
            "--ntasks-per-node=%d" % spec["gpus_per_node"], "--gpus-per-node=%d" % spec["gpus_per_node"]]
    if spec["hosts"]:
        argv.append("--nodelist=%s" % ",".join(spec["hosts"]))
    if slurm["partition"]:
        argv.append("--partition=%s" % slurm["partition"])
    if slurm["account"]:
        argv.append("--account=%s" % slurm["account"])
    if slurm["container_image"]:
        argv.append("--container-image=%s" % slurm["container_image"])
    return argv + list(slurm["args"]) + test_argv(spec)


def _metadata(spec: dict, name: str, extra: dict | None = None) -> dict:
    labels = {MANAGED_LABEL: MANAGED_BY}
    labels.update(spec["labels"])
    labels.update(extra or {})
    return {"name": name, "labels": labels}


def namespace_manifest(spec: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": spec["kubernetes"]["namespace"], "labels": {MANAGED_LABEL: MANAGED_BY}}}


def launcher_script(spec: dict) -> str:
    """The launcher's ``sh -c`` line: PATH with the common binary folders and LD_LIBRARY_PATH set, then mpirun.

    -x PATH / -x LD_LIBRARY_PATH need them in the launcher's environment; every word of mpirun's argv is quoted.
    """
    env = environment(spec)
    argv = mpirun_argv(spec, list(env), program="mpirun", ssh_port=spec["kubernetes"]["ssh_port"])
    dirs = ":".join(COMMON_BINARY_DIRS)
    return ('PATH="${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}:%s"; '
            'LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}"; export PATH LD_LIBRARY_PATH; exec %s' % (dirs, shlex.join(argv)))


def worker_command(spec: dict) -> list[str]:
    """The workers' command: sshd in the foreground when asked (start_sshd), or the user's, or the image's."""
    k = spec["kubernetes"]
    if k["worker_command"]:
        return list(k["worker_command"])  # e.g. sshd, when the image's entrypoint does not start it
    if not k["start_sshd"]:
        return []
    # -D: stay in the foreground (the container's process), -e: log to stderr (the pod log); sshd(8)
    argv = [k["sshd_path"], "-De"]
    if k["ssh_port"]:
        argv += ["-p", str(k["ssh_port"])]
    if k["sshd_config"]:
        argv += ["-f", k["sshd_config"]]
    return argv


def _container(spec: dict, role: str) -> dict:
    k = spec["kubernetes"]
    container: dict[str, Any] = {"name": role, "image": k["image"]}
    if k["image_pull_policy"]:
        container["imagePullPolicy"] = k["image_pull_policy"]
    if role == "launcher":
        # the container env reaches mpirun only; the ranks get what -x exports
        container["env"] = [{"name": n, "value": v} for n, v in launcher_env(spec).items()]
        container["command"] = ["/bin/sh", "-c", launcher_script(spec)]
        container["securityContext"] = {"allowPrivilegeEscalation": False}
        return container
    # Memory registration needs IPC_LOCK; the RDMA device plugin injects /dev/infiniband, so no privileged.
    resources = {"nvidia.com/gpu": str(spec["gpus_per_node"])}
    if k["rdma_resource_count"]:
        resources[k["rdma_resource"]] = str(k["rdma_resource_count"])
    container["resources"] = {"limits": dict(resources), "requests": dict(resources)}
    container["securityContext"] = {"privileged": False, "allowPrivilegeEscalation": False, "capabilities": {"add": ["IPC_LOCK"]}}
    container["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    command = worker_command(spec)
    if command:
        container["command"] = command
    return container


def _pod_template(spec: dict, role: str, token: str | None = None) -> dict:
    k = spec["kubernetes"]
    labels = dict(spec["labels"])
    if token:
        labels[RUN_LABEL] = token
    meta: dict[str, Any] = {"labels": labels}
    # the v2 launcher reaches the workers over SSH and reads a static hostfile: no kubectl exec, no API token
    # (kubeflow/mpi-operator proposals/scalable-robust-operator.md, "The use of ssh instead of kubectl exec")
    pod: dict[str, Any] = {"containers": [_container(spec, role)], "automountServiceAccountToken": False}
    if k["run_as_user"] is not None:
        pod["securityContext"] = {"runAsUser": k["run_as_user"]}
        if k["run_as_user"]:
            pod["securityContext"]["runAsNonRoot"] = True
    if role == "worker":
        # NCCL's shared-memory transport needs more than the runtime's 64 MiB /dev/shm.
        empty: dict[str, Any] = {"medium": "Memory"}
        if k["shm_size_limit"]:
            empty["sizeLimit"] = k["shm_size_limit"]
        pod["volumes"] = [{"name": "dshm", "emptyDir": empty}]
        if k["host_network"]:
            pod["hostNetwork"] = True
            pod["dnsPolicy"] = "ClusterFirstWithHostNet"
        if k["networks"]:
            meta["annotations"] = {"k8s.v1.cni.cncf.io/networks": k["networks"]}
        if k["node_selector"]:
            pod["nodeSelector"] = dict(k["node_selector"])
        if spec["hosts"]:
            # inventory hosts are the node names: the workers land exactly there
            pod["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": list(spec["hosts"])}]}]}}}
    if k["service_account"]:
        pod["serviceAccountName"] = k["service_account"]
    if not meta["labels"]:
        meta.pop("labels")
    return {"metadata": meta, "spec": pod} if meta else {"spec": pod}


def mpijob_manifest(spec: dict, name: str, token: str | None = None) -> dict:
    """Kubeflow MPIJob v2beta1 (section 2): one launcher running mpirun, N workers with slotsPerWorker = GPUs."""
    k = spec["kubernetes"]
    extra = {RUN_LABEL: token} if token else None
    job_spec: dict[str, Any] = {
        "slotsPerWorker": spec["gpus_per_node"],
        "mpiImplementation": "OpenMPI",
        # Running: workers go when the launcher ends, so the next repeat gets the GPUs; backoffLimit 0: one
        # attempt - a retried benchmark would hide the failure.
        "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 0},
        # with one attempt, mpirun must not start before the workers' sshd can answer
        "launcherCreationPolicy": "WaitForWorkersReady",
        "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "restartPolicy": "Never", "template": _pod_template(spec, "launcher", token)},
            "Worker": {"replicas": spec["nodes"], "restartPolicy": "Never", "template": _pod_template(spec, "worker", token)},
        },
    }
    if k["ssh_auth_mount_path"]:
        # where the operator mounts the SSH keys; a non-root user's sshd reads ~/.ssh (examples/v2beta1/pi/pi.yaml)
        job_spec["sshAuthMountPath"] = k["ssh_auth_mount_path"]
    return {"apiVersion": "/".join(MPIJOB_API[:2]), "kind": "MPIJob",
            "metadata": dict(_metadata(spec, name, extra), namespace=k["namespace"]), "spec": job_spec}


def operator_missing_fields(crd: dict, manifest: dict) -> list[str]:
    """The spec fields ``manifest`` sets that the MPIJob CRD's v2beta1 schema lacks (an operator too old for it)."""
    for version in (crd.get("spec") or {}).get("versions") or []:
        if version.get("name") == MPIJOB_API[1]:
            props = ((((version.get("schema") or {}).get("openAPIV3Schema") or {}).get("properties") or {})
                     .get("spec") or {}).get("properties") or {}
            return [f for f in required_operator_fields(manifest) if f not in props]
    return ["(version %s)" % MPIJOB_API[1]]


def required_operator_fields(manifest: dict) -> list[str]:
    """The MPIJob spec fields of ``manifest`` whose absence from the CRD means an operator too old for it."""
    return sorted(f for f in MPIJOB_FIELDS if f in manifest.get("spec", {}))


def render(spec: dict, token: str, hostfile_path: str | None = None) -> dict:
    """Everything one module run would launch: names, and manifests (kubernetes) or commands (mpirun, slurm)."""
    names = job_names(spec, token)
    env = environment(spec)
    out: dict[str, Any] = {"names": names, "env": env}
    if spec["launcher"] == "kubernetes":
        out["manifests"] = [namespace_manifest(spec)] + [mpijob_manifest(spec, n, token) for n in names]
        return out
    commands = []
    for name in names:
        if spec["launcher"] == "mpirun":
            argv = mpirun_argv(spec, list(env), hostfile_path)
            cmd = {"name": name, "argv": argv, "hostfile": hostfile_path, "hostfile_content": hostfile_text(spec)}
        elif spec["launcher"] == LOCAL:
            # no MPI: the environment reaches the one process directly
            cmd = {"name": name, "argv": test_argv(spec)}
        else:
            argv = srun_argv(spec, name)
            cmd = {"name": name, "argv": argv}
        commands.append(with_env(cmd, env))
    out["commands"] = commands
    return out


def with_env(command: dict, env: dict[str, str]) -> dict:
    """``command`` with this environment, and its one-line form for people."""
    command["env"] = dict(sorted(env.items()))
    command["cmdline"] = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in command["env"].items()) + " " + shlex.join(command["argv"])
    return command


def launcher_selector(name: str) -> str:
    """Label selector of an MPIJob's launcher pod (the operator's labels)."""
    return "%s=%s,%s=launcher" % (JOB_NAME_LABEL, name, JOB_ROLE_LABEL)


def log_tail(text: str, lines: int = 20) -> str:
    return "\n".join((text or "").rstrip("\n").splitlines()[-lines:])


# ---------------------------------------------------------------------------- tenant
TENANT_LABEL = "lossless.fabric/tenant"
TENANT_KEYS = ("name", "namespace", "kubeconfig", "networks", "rdma_resource")


def with_tenant(params: dict) -> tuple[dict, list[str]]:
    """Module parameters with the ``tenant`` option folded into ``kubernetes`` and ``labels``: the launch runs as
    the tenant - its kubeconfig (its own credentials), its namespace, its network attachment and RDMA resource.

    Refused: another launcher than kubernetes (mpirun/srun run on the hosts, outside any tenant's credentials), a
    ``kubernetes`` value that contradicts the tenant's, a network of another namespace (a tenant's pods attach only
    to its own namespace's networks). Returns (params, errors); params unchanged without a tenant."""
    tenant = params.get("tenant")
    if not tenant:
        return params, []
    errors = _Errors()
    name = _string(errors, "tenant.name", tenant.get("name"), _DNS1123, "a tenant name (RFC 1123 label)")
    namespace = _string(errors, "tenant.namespace", tenant.get("namespace"), _DNS1123, "a namespace name (RFC 1123 label)")
    if name is None or namespace is None:
        errors.append("tenant: needs name and namespace (the tenant's own namespace, from the plan's tenants)")
        return params, list(errors)
    if (params.get("launcher") or "kubernetes") != "kubernetes":
        errors.bad("launcher", params.get("launcher"), "must be kubernetes with tenant (mpirun and srun run outside the tenant's credentials)")
    kube = dict(params.get("kubernetes") or {})
    for key in ("namespace", "kubeconfig", "networks", "rdma_resource"):
        value = tenant.get(key)
        if value is None:
            continue
        given = kube.get(key)
        default = {"namespace": DEFAULT_NAMESPACE, "rdma_resource": DEFAULT_RDMA_RESOURCE}.get(key)
        # the tenant's kubeconfig replaces the admin's (which K8S_AUTH_KUBECONFIG may have filled in)
        if key != "kubeconfig" and given not in (None, value, default):
            errors.bad("kubernetes.%s" % key, given, "contradicts tenant %s's %s %r" % (name, key, value))
        kube[key] = value
    for item in (kube.get("networks") or "").split(","):
        net_ns = item.strip().split("@", 1)[0].rpartition("/")[0]
        if net_ns and net_ns != namespace:
            errors.bad("kubernetes.networks", kube.get("networks"), "names network %s of namespace %s, not tenant %s's namespace %s"
                       % (item.strip(), net_ns, name, namespace))
    labels = dict(params.get("labels") or {})
    if labels.get(TENANT_LABEL) not in (None, name):
        errors.bad("labels.%s" % TENANT_LABEL, labels[TENANT_LABEL], "contradicts tenant %s" % name)
    labels[TENANT_LABEL] = name
    return dict(params, kubernetes=kube, labels=labels), list(errors)
