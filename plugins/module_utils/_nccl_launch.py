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

from ansible_collections.lossless.fabric.plugins.module_utils import _intent
from ansible_collections.lossless.fabric.plugins.module_utils import _nccl_vocab as _nccl

LAUNCHERS = ("kubernetes", "mpirun", "slurm")
# Every nccl-tests binary (section 1); NGC images add the _mpi suffix (NAME_SUFFIX=_mpi).
BINARIES = tuple(coll + "_perf" for coll in _nccl.COLLECTIVES)
GDR_LEVELS = ("LOC", "PIX", "PXB", "PHB", "SYS")
DEFAULT_RDMA_RESOURCE = "rdma/rdma_shared_device_a"
DEFAULT_NAMESPACE = "nccl-benchmark"
MPIJOB_API = ("kubeflow.org", "v2beta1", "mpijobs")
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
MANAGED_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "lossless.fabric.nccl_benchmark"
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
# "<prefix>-<6 chars>-<repeat>" plus "-worker-<n>" (the operator's pod and host name) must stay a DNS-1035 label.
_PREFIX_MAX = 30
_TOKEN_LEN = 6


class _Errors(list):
    """Errors collected while checking; each names the option and the value."""

    def bad(self, key: str, value: Any, why: str) -> None:
        self.append("%s: %r %s" % (key, value, why))


def _unsafe(errors: _Errors, key: str, value: str) -> bool:
    """Refuse what could end a command line or start a second command (the intent's rule)."""
    reason = _intent.unsafe_reason(value)  # one rule for the collection
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
        return _intent.parse_size(value)
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
    if nodes is None and params.get("nodes") is None:
        errors.append("nodes: required (the node count), or give hosts")
    if spec["launcher"] == "mpirun" and not spec["hosts"]:
        errors.append("hosts: required with launcher mpirun (they form the hostfile)")
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
        "node_selector": _labels(errors, "kubernetes.node_selector", raw.get("node_selector")),
        "shm_size_limit": _string(errors, "kubernetes.shm_size_limit", raw.get("shm_size_limit"), _QUANTITY, "a quantity such as 16Gi"),
        "service_account": _string(errors, "kubernetes.service_account", raw.get("service_account"), _DNS1123, "a service account name"),
        "worker_command": _string_list(errors, "kubernetes.worker_command", raw.get("worker_command")),
    }
    if len(k["namespace"] or "") > 63:
        errors.bad("kubernetes.namespace", k["namespace"], "is longer than 63 characters")
    if k["image_pull_policy"] not in (None, "Always", "IfNotPresent", "Never"):
        errors.bad("kubernetes.image_pull_policy", k["image_pull_policy"], "is not one of Always, IfNotPresent, Never")
    if spec["launcher"] == "kubernetes" and k["image"] is None and raw.get("image") is None:
        errors.append("kubernetes.image: required with launcher kubernetes (an image with the MPI build of nccl-tests)")
    spec["kubernetes"] = k


def _check_mpirun(errors: _Errors, raw: Any, spec: dict) -> None:
    raw = raw or {}
    if not isinstance(raw, dict):
        errors.bad("mpirun", raw, "is not a mapping")
        raw = {}
    spec["mpirun"] = {
        "path": _string(errors, "mpirun.path", raw.get("path") or "mpirun", _PATH, "a program name or path"),
        "args": _string_list(errors, "mpirun.args", raw.get("args")),
        "hostfile_dir": _string(errors, "mpirun.hostfile_dir", raw.get("hostfile_dir"), _PATH, "a directory path"),
    }


def _pyxis_image(errors: _Errors, value: Any) -> str | None:
    """Pyxis names a registry with '#' (nvcr.io#nvidia/pytorch:24.05-py3); srun gets an argv, no shell, so that '#' is safe."""
    key = "slurm.container_image"
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        errors.bad(key, value, "is not a non-empty string")
        return None
    reason = _intent.unsafe_reason(value.replace("#", ""))
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


def validate(params: dict) -> tuple[dict, list[str]]:
    """Module parameters -> (spec, errors).  Nothing in spec is used when errors is not empty."""
    errors = _Errors()
    spec: dict[str, Any] = {"launcher": params.get("launcher") or "kubernetes"}
    if spec["launcher"] not in LAUNCHERS:
        errors.bad("launcher", spec["launcher"], "is not one of %s" % ", ".join(LAUNCHERS))
    spec["binary"] = _binary(errors, params.get("binary", "all_reduce_perf"))
    spec["binary_dir"] = _string(errors, "binary_dir", params.get("binary_dir"), _PATH, "a directory path")
    _check_sizes(errors, params, spec)
    _check_placement(errors, params, spec)
    spec["algo"] = _string(errors, "algo", params.get("algo"), re.compile(r"[A-Za-z0-9,:^]+"),
                           "an NCCL_ALGO value such as Ring or allreduce:ring")
    spec["gdr_level"] = params.get("gdr_level") or "PHB"
    if spec["gdr_level"] not in GDR_LEVELS:
        errors.bad("gdr_level", spec["gdr_level"], "is not one of %s" % ", ".join(GDR_LEVELS))
    spec["nccl_env"] = _env(errors, "nccl_env", params.get("nccl_env"))
    spec["env"] = _env(errors, "env", params.get("env"))
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
    """The nccl-tests command (section 3): sizes, step, iterations, warmup, one GPU per process."""
    program = spec["binary"] if not spec["binary_dir"] else spec["binary_dir"].rstrip("/") + "/" + spec["binary"]
    return [program, "-b", size_text(spec["min_bytes"]), "-e", size_text(spec["max_bytes"]), "-f", str(spec["step_factor"]),
            "-n", str(spec["iterations"]), "-w", str(spec["warmup_iterations"]), "-g", "1"]


def environment(spec: dict) -> dict[str, str]:
    """The ranks' NCCL environment (section 7).

    NCCL_DEBUG=INFO is what proves transport and GPUDirect (section 8); the plan's NCCL_* values (nccl_env) and
    the extra env override the defaults; an ``algo`` pin wins over both.
    """
    env = {"NCCL_DEBUG": "INFO", "NCCL_NET_GDR_LEVEL": spec["gdr_level"]}
    env.update(spec["nccl_env"])
    env.update(spec["env"])
    if spec["algo"]:
        env["NCCL_ALGO"] = spec["algo"]
    return dict(sorted(env.items()))


def mpirun_argv(spec: dict, env_names: list[str], hostfile: str | None = None, program: str | None = None) -> list[str]:
    """Open MPI mpirun (section 2): -np ranks, the hostfile, each variable exported by name with -x."""
    argv = [program or spec["mpirun"]["path"], "-np", str(ranks(spec))]
    if hostfile:
        argv += ["--hostfile", hostfile]
    argv += MPIRUN_FIXED
    for name in env_names:
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


def _container(spec: dict, role: str, env: dict[str, str]) -> dict:
    k = spec["kubernetes"]
    container: dict[str, Any] = {"name": role, "image": k["image"],
                                 "env": [{"name": n, "value": v} for n, v in env.items()]}
    if k["image_pull_policy"]:
        container["imagePullPolicy"] = k["image_pull_policy"]
    if role == "launcher":
        container["command"] = mpirun_argv(spec, list(env), program="mpirun")
        return container
    # Memory registration needs IPC_LOCK; the RDMA device plugin injects /dev/infiniband, so no privileged.
    resources = {"nvidia.com/gpu": str(spec["gpus_per_node"])}
    if k["rdma_resource_count"]:
        resources[k["rdma_resource"]] = str(k["rdma_resource_count"])
    container["resources"] = {"limits": dict(resources), "requests": dict(resources)}
    container["securityContext"] = {"privileged": False, "capabilities": {"add": ["IPC_LOCK"]}}
    container["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    if k["worker_command"]:
        container["command"] = list(k["worker_command"])  # e.g. sshd, when the image's entrypoint does not start it
    return container


def _pod_template(spec: dict, role: str, env: dict[str, str]) -> dict:
    k = spec["kubernetes"]
    meta: dict[str, Any] = {"labels": dict(spec["labels"])}
    pod: dict[str, Any] = {"containers": [_container(spec, role, env)]}
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


def mpijob_manifest(spec: dict, name: str) -> dict:
    """Kubeflow MPIJob v2beta1 (section 2): one launcher running mpirun, N workers with slotsPerWorker = GPUs."""
    env = environment(spec)
    return {
        "apiVersion": "/".join(MPIJOB_API[:2]), "kind": "MPIJob",
        "metadata": dict(_metadata(spec, name), namespace=spec["kubernetes"]["namespace"]),
        "spec": {
            "slotsPerWorker": spec["gpus_per_node"],
            "mpiImplementation": "OpenMPI",
            # Running: workers go when the launcher ends, so the next repeat gets the GPUs; backoffLimit 0: one
            # attempt - a retried benchmark would hide the failure.
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 0},
            # with one attempt, mpirun must not start before the workers' sshd can answer
            "launcherCreationPolicy": "WaitForWorkersReady",
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "restartPolicy": "Never", "template": _pod_template(spec, "launcher", env)},
                "Worker": {"replicas": spec["nodes"], "restartPolicy": "Never", "template": _pod_template(spec, "worker", env)},
            },
        },
    }


def render(spec: dict, token: str, hostfile_path: str | None = None) -> dict:
    """Everything one module run would launch: names, and manifests (kubernetes) or commands (mpirun, slurm)."""
    names = job_names(spec, token)
    env = environment(spec)
    out: dict[str, Any] = {"names": names, "env": env}
    if spec["launcher"] == "kubernetes":
        out["manifests"] = [namespace_manifest(spec)] + [mpijob_manifest(spec, n) for n in names]
        return out
    commands = []
    for name in names:
        if spec["launcher"] == "mpirun":
            argv = mpirun_argv(spec, list(env), hostfile_path)
            cmd = {"name": name, "argv": argv, "hostfile": hostfile_path, "hostfile_content": hostfile_text(spec)}
        else:
            argv = srun_argv(spec, name)
            cmd = {"name": name, "argv": argv}
        cmd["env"] = env
        cmd["cmdline"] = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env.items()) + " " + shlex.join(argv)
        commands.append(cmd)
    out["commands"] = commands
    return out


def launcher_selector(name: str) -> str:
    """Label selector of an MPIJob's launcher pod (the operator's labels)."""
    return "%s=%s,%s=launcher" % (JOB_NAME_LABEL, name, JOB_ROLE_LABEL)


def log_tail(text: str, lines: int = 20) -> str:
    return "\n".join((text or "").rstrip("\n").splitlines()[-lines:])
