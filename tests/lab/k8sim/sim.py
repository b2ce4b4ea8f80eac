# SPDX-License-Identifier: GPL-3.0-or-later
"""The simulated cluster: the store, the nodes from the config, the controller
loop, fault plans and the /_k8sim/ control API (see README.md)."""
from __future__ import annotations

import asyncio
import collections
import copy
import logging
import os
from typing import Any

from . import auth, crds, restore
from .controllers import Cluster
from .store import ApiError, Store, now_rfc3339

log = logging.getLogger("k8sim")

DEFAULT_DELAYS = {
    "pod_start": 2.0,       # scheduled pod -> containers running
    "rdma_register": 5.0,   # plugin pod running -> kubelet advertises rdma/<name>
    "operator_sync": 0.5,   # MPIJob created -> operator reconciles it
    "run_seconds": 20.0,    # launcher running -> mpirun exits
    "device_plugin_grace": 300.0,  # plugin gone -> kubelet drops the resource (at 0 until then)
    "sriov_sync": 10.0,     # SR-IOV config daemon: policy rendered -> VFs created (then rdma_register to advertise)
}
OUTCOMES = ("succeed", "fail", "hang")
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class Simulator:
    def __init__(self, config: dict, base_dir: str = ".") -> None:
        self.config = config
        self.base_dir = base_dir
        self.time_scale = float(config.get("time_scale", 1.0))
        self.delays = dict(DEFAULT_DELAYS, **(config.get("delays") or {}))
        # Static tokens + RBAC when the config has users (auth.py); otherwise every caller is the admin.
        self.auth = auth.Authenticator(auth.ADMIN_TOKEN, config.get("users"))
        self.store = Store(kube_version=str(config.get("kubernetes_version", "1.30.0")), seed=int(config.get("seed", 0)))
        self.logs: dict[tuple[str | None, str, str], bytes] = {}
        self.nodes: dict[str, dict] = {}
        for spec in config.get("nodes") or []:
            if spec["name"] in self.nodes:
                raise ValueError("duplicate node name %r" % spec["name"])
            self.nodes[spec["name"]] = dict(spec)
        # The Kubeflow MPI Operator: {"version": "0.6.0"} (default), or null when it is not installed (no CRD).
        operator = config.get("mpi_operator", {"version": crds.MPI_OPERATOR_DEFAULT})
        self.mpi_operator: str | None = None
        if operator:
            self.mpi_operator = str(operator.get("version") or crds.MPI_OPERATOR_DEFAULT)
            crds.mpijob_schema(self.mpi_operator)  # a bad version stops the start, naming the key
        # kubelet containerLogMaxSize (KubeletConfiguration, default 10Mi): the pod-log API reads the current file only,
        # so a plain read of a longer log starts at the last rotation. 0: never rotated.
        self.container_log_max_size = int(config.get("container_log_max_size", 10 * 1024 * 1024))
        mpi = config.get("mpijob") or {}
        self.default_outcome = mpi.get("outcome", "succeed")
        if self.default_outcome not in OUTCOMES:
            raise ValueError("mpijob.outcome must be one of %s" % (OUTCOMES,))
        self.next_outcomes: collections.deque = collections.deque()
        self.replay_default: dict = {}
        self.replay_jobs: dict[str, dict] = {}
        # Per-label replay rules, first match wins (contracts.md): [{"selector": {label: value}, "path": FILE or [FILES]}]
        self.replay_rules: list[dict] = []
        if config.get("replay"):
            self.replay_default = self._replay_source({"path": config["replay"]})
        for rule in config.get("replays") or []:
            self.replay_rules.append(self._replay_rule(rule))
        # The lab's performance model (tests/lab/nccl/README.md, "Performance model"): the run dir whose perf.json
        # has faults; MPIJob launcher logs are then computed for the workers' nodes instead of replayed.
        self.perf_run_dir: str | None = config.get("perf_run_dir")
        self.stopping = asyncio.Event()
        self._kick = asyncio.Event()
        self.stop_requested = asyncio.Event()
        self.cluster: Cluster | None = None
        self.restored: dict | None = None  # what the "restore" snapshot gave (GET /state)
        self._snapshot: dict | None = None
        if config.get("restore"):
            # read now: a bad file stops the start with a message naming the key and the file
            self._snapshot = restore.load(restore.resolve(str(config["restore"]), base_dir))

    # ---------------------------------------------------------------- bootstrap
    def bootstrap(self) -> None:
        """Called once the emulator registered the resources."""
        self.cluster = Cluster(self)
        saved_nodes = self._restore() if self._snapshot is not None else {}
        ns_res = self.store.resource("", "v1", "namespaces")
        for ns in list(SYSTEM_NAMESPACES) + list(self.config.get("namespaces") or []):
            if self.store.find(ns_res, None, ns) is not None:
                continue  # restored
            self.store.create(ns_res, None, {"metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}},
                                             "spec": {"finalizers": ["kubernetes"]}}, {}, internal=True)
            self.store.put_internal(ns_res, dict(self.store.find(ns_res, None, ns), status={"phase": "Active"}))
        crd_res = self.store.resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        if self.mpi_operator and self.store.find(crd_res, None, "mpijobs.kubeflow.org") is None:
            self.store.create(crd_res, None, crds.mpijob_crd(self.mpi_operator), {}, internal=True)
            # Installed with the operator long before a run starts: already Established (no status appearing
            # later, while a test compares the cluster before and after a dry run).
            crd = self.store.find(crd_res, None, "mpijobs.kubeflow.org")
            self.store.put_internal(crd_res, dict(crd, status=crds.established_status(crd["spec"], now_rfc3339())))
        node_res = self.store.resource("", "v1", "nodes")
        for i, (name, spec) in enumerate(sorted(self.nodes.items())):
            node = self._node(i, name, spec)
            saved = saved_nodes.get(name)
            if saved is None:
                self.store.create(node_res, None, node, {}, internal=True)
                continue
            # the kubelet registers again: same Node object (uid, what was set through the API), fresh status
            meta = saved["metadata"]
            node["metadata"].update(uid=meta["uid"], creationTimestamp=meta.get("creationTimestamp") or now_rfc3339(),
                                    labels=dict(meta.get("labels") or {}, **node["metadata"]["labels"]),
                                    annotations=dict(meta.get("annotations") or {}, **node["metadata"]["annotations"]))
            node["spec"] = copy.deepcopy(saved.get("spec") or node["spec"])
            self.store.load(node_res, node, changed=True)

    def rotated(self, data: bytes) -> bytes:
        """What a plain pod-log read returns of ``data``: the part after the last rotation, at line boundaries."""
        limit = self.container_log_max_size
        if not limit or len(data) <= limit:
            return data
        start = (len(data) // limit) * limit
        cut = data.rfind(b"\n", 0, start)
        return data[cut + 1:] if cut >= 0 else data

    def _restore(self) -> dict[str, dict]:
        """Load the saved objects restore.py keeps; the saved nodes by name (empty when the snapshot is not used)."""
        assert self._snapshot is not None
        snapshot, self._snapshot = self._snapshot, None
        path = restore.resolve(str(self.config["restore"]), self.base_dir)
        why = restore.node_mismatch(snapshot, list(self.nodes))
        if why:
            log.warning("restore %s: not used, another cluster (%s)", path, why)
            self.restored = {"path": path, "used": False, "reason": why}
            return {}
        kept, dropped = restore.keep(snapshot)
        for (group, plural), obj in kept:
            try:
                res = self.store.by_group_plural(group, plural)
            except KeyError:
                raise restore.RestoreError("restore %r: resource %s/%s is not served" % (path, group, plural)) from None
            if res.namespaced != bool(obj["metadata"].get("namespace")):
                raise restore.RestoreError("restore %r: %s %s: metadata.namespace %r, but %s is %s"
                                           % (path, res.gr, obj["metadata"]["name"], obj["metadata"].get("namespace"),
                                              res.gr, "namespaced" if res.namespaced else "cluster-scoped"))
            try:
                self.store.load(res, obj)
            except ValueError as exc:
                raise restore.RestoreError("restore %r: %s" % (path, exc)) from None
            if "foregroundDeletion" in (obj["metadata"].get("finalizers") or []) and obj["metadata"].get("deletionTimestamp"):
                # the foreground deletion was under way: the garbage collector resumes it
                self.store.pending.append(lambda r=res, o=obj: self.store._foreground(r, o))  # pylint: disable=protected-access
        self.store.restored(restore.max_resource_version(snapshot))
        self.restored = {"path": path, "used": True, "objects": len(kept), "dropped": dropped,
                         "resource_version": self.store.rv}
        log.warning("restore %s: %d objects (dropped %s)", path, len(kept), dropped or "none")
        return {o["metadata"]["name"]: o for o in snapshot.get(restore.NODES, [])}

    def _node(self, index: int, name: str, spec: dict) -> dict:
        gpus = int(spec.get("gpus", 0))
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                  "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}
        if gpus:
            labels["nvidia.com/gpu.present"] = "true"
        if spec.get("nics"):
            labels["feature.node.kubernetes.io/pci-15b3.present"] = "true"
        labels.update({k: str(v) for k, v in (spec.get("labels") or {}).items()})
        resources = {"cpu": str(spec.get("cpu", "64")), "memory": str(spec.get("memory", "1056000000Ki")),
                     "pods": "110", "ephemeral-storage": "1000000000Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
        if gpus:
            resources["nvidia.com/gpu"] = str(gpus)
        ts = "2024-01-01T00:00:00Z"
        return {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels,
                         "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                         "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
            "spec": {"podCIDR": "10.244.%d.0/24" % index, "podCIDRs": ["10.244.%d.0/24" % index]},
            "status": {
                "capacity": dict(resources), "allocatable": dict(resources),
                "addresses": [{"type": "InternalIP", "address": "10.0.0.%d" % (index + 1)},
                              {"type": "Hostname", "address": name}],
                "conditions": [
                    {"type": t, "status": s, "reason": r, "message": m, "lastHeartbeatTime": ts, "lastTransitionTime": ts}
                    for t, s, r, m in [
                        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                        ("Ready", "True", "KubeletReady", "kubelet is posting ready status")]],
                "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux", "osImage": "Ubuntu 22.04.4 LTS",
                             "kernelVersion": "5.15.0-105-generic", "containerRuntimeVersion": "containerd://1.7.13",
                             "kubeletVersion": "v%s" % self.store.kube_version,
                             "kubeProxyVersion": "v%s" % self.store.kube_version,
                             "machineID": "%032x" % (index + 1), "systemUUID": "%032x" % (index + 1),
                             "bootID": "%032x" % (index + 1)},
            },
        }

    def node_cfg(self, name: str) -> dict:
        return self.nodes.get(name, {})

    # ---------------------------------------------------------------- loop
    def kick(self) -> None:
        self._kick.set()

    async def run(self, tick: float = 0.05) -> None:
        loop = asyncio.get_running_loop()
        while not self.stopping.is_set():
            try:
                await asyncio.wait_for(self._kick.wait(), timeout=tick)
            except TimeoutError:
                pass
            self._kick.clear()
            try:
                for _i in range(100):  # garbage collection and foreground deletion work
                    if not self.store.pending:
                        break
                    work, self.store.pending = self.store.pending, []
                    for item in work:
                        item()
                assert self.cluster is not None
                self.cluster.reconcile(loop.time())
            except (ApiError, KeyError, ValueError, TypeError, AttributeError) as exc:
                # A controller bug must not stop the cluster; the log says what happened.
                log.exception("reconcile failed: %s", exc)

    # ---------------------------------------------------------------- plans
    def _replay_source(self, body: dict) -> dict:
        """{"path": FILE or [FILES]} or {"text": ...} -> a source; several files are served in turn, so that
        repeated launches are not byte-identical."""
        if "text" in body:
            return {"path": None, "data": body["text"].encode(), "items": [(None, body["text"].encode())], "next": 0}
        paths = body["path"] if isinstance(body["path"], list) else [body["path"]]
        if not paths:
            raise ValueError("replay path: an empty list")
        items = []
        for path in paths:
            if not os.path.isabs(path):
                path = os.path.join(self.base_dir, path)
            with open(path, "rb") as handle:
                items.append((path, handle.read()))
        return {"path": items[0][0] if len(items) == 1 else [p for p, _d in items], "data": items[0][1], "items": items,
                "next": 0}

    def _replay_rule(self, rule: dict) -> dict:
        selector = rule.get("selector")
        if not isinstance(selector, dict) or not selector or not all(isinstance(v, str) for v in selector.values()):
            raise ValueError("replays[].selector must be a non-empty mapping of label to value, got %r" % (selector,))
        return dict(self._replay_source(rule), selector=dict(selector))

    @staticmethod
    def _take(source: dict) -> tuple[str | None, bytes]:
        items = source.get("items") or [(source.get("path"), source.get("data", b""))]
        path, data = items[source.get("next", 0) % len(items)]
        source["next"] = source.get("next", 0) + 1
        return path, data

    def plan_for(self, job: dict) -> dict:
        key = "%s/%s" % (job["metadata"]["namespace"], job["metadata"]["name"])
        outcome = self.next_outcomes.popleft() if self.next_outcomes else self.default_outcome
        labels = job["metadata"].get("labels") or {}
        replay = self.replay_jobs.pop(key, None) or next(
            (r for r in self.replay_rules if all(labels.get(k) == v for k, v in r["selector"].items())), None) \
            or self.replay_default
        path, data = self._take(replay) if replay else (None, b"")
        return {"outcome": outcome, "log": data, "replay_path": path,
                "run_seconds": float(self.delays["run_seconds"]), "workers": [], "container": ""}

    def model_log(self, job: dict, workers: list[dict]) -> tuple[bytes, bool] | None:
        """(launcher log, ok) of this MPIJob from the performance model, for the nodes its worker pods run on;
        None when the lab run has no performance model (the replayed log stays)."""
        if not self.perf_run_dir:
            return None
        import traffic  # pylint: disable=import-outside-toplevel  # tests/lab/traffic.py: the launch moves the lab's counters
        from nccl import perfmodel  # pylint: disable=import-outside-toplevel  # tests/lab is on sys.path (server.py)
        try:
            traffic.record_mpijob(self.perf_run_dir, job, workers)
            fabric = perfmodel.Fabric.from_run_dir(self.perf_run_dir)
            if fabric is None:
                return None
            container = ((job["spec"]["mpiReplicaSpecs"]["Launcher"].get("template") or {}).get("spec") or {}).get(
                "containers", [{}])[0]
            argv = perfmodel.mpirun_words(list(container.get("command") or []) + list(container.get("args") or []))
            env = {e["name"]: str(e.get("value", "")) for e in container.get("env") or [] if "name" in e}
            slots = int(job["spec"].get("slotsPerWorker", 1))
            nodes = [(w.get("spec") or {}).get("nodeName") for w in workers]
            procs: dict[str, int] = {}
            left = argv["np"] if argv["np"] is not None else slots * len(nodes)
            for node in nodes:
                take = min(slots, left)
                if node and take:
                    procs[node] = procs.get(node, 0) + take
                left -= take
            launch = perfmodel.next_launch(self.perf_run_dir)
            text = perfmodel.nccl_tests_text(fabric, argv["collective"], list(procs), procs,
                                             perfmodel.parse_test_args(argv["args"]), env, launch)
        except (perfmodel.PerfModelError, OSError, ValueError, KeyError, IndexError, TypeError, RuntimeError) as exc:
            return ("lab k8sim: performance model: %s\n" % exc).encode(), False
        if argv["tag_output"]:  # mpirun --tag-output: rank 0 prints the table (as the mpirun shim does)
            text = "".join("[1,0]<stdout>:" + line for line in text.splitlines(keepends=True))
        return text.encode(), True

    # ---------------------------------------------------------------- control API
    def state(self) -> dict:
        assert self.cluster is not None
        return {
            "pid": os.getpid(),
            "time_scale": self.time_scale,
            "delays": self.delays,
            "kubernetes_version": self.store.kube_version,
            "resource_version": self.store.rv,
            "restored": self.restored,
            "nodes": {name: {"rdma_broken": bool(spec.get("rdma_broken")), "gpus": int(spec.get("gpus", 0))}
                      for name, spec in sorted(self.nodes.items())},
            "replay": self.replay_default.get("path") or ("<text>" if self.replay_default else None),
            "replay_jobs": {k: v.get("path") or "<text>" for k, v in self.replay_jobs.items()},
            "replays": [{"selector": r["selector"], "path": r.get("path") or "<text>"} for r in self.replay_rules],
            "mpijob": {"default_outcome": self.default_outcome, "next_outcomes": list(self.next_outcomes)},
            "mpijobs": {uid: {"outcome": st["outcome"], "step": st["step"], "replay": st["replay_path"],
                              "launcher_pod": st.get("launcher_pod"), "workers": st["workers"]}
                        for uid, st in self.cluster.jobs.items()},
            "rdma_plugin_errors": dict(self.cluster.plugin_errors),
        }

    def objects(self) -> dict:
        out: dict[str, list] = {}
        for (group, plural, _ns, _name), obj in sorted(self.store.objects.items(), key=lambda kv: tuple(x or "" for x in kv[0])):
            out.setdefault("%s/%s" % (group, plural) if group else plural, []).append(copy.deepcopy(obj))
        return out

    def control(self, method: str, parts: list[str], body: dict) -> Any:
        if parts == ["state"] and method == "GET":
            return self.state()
        if parts == ["objects"] and method == "GET":
            return self.objects()
        if parts == ["time_scale"] and method == "POST":
            scale = float(body["time_scale"])
            if scale <= 0:
                raise ValueError("time_scale must be > 0")
            self.time_scale = scale
            return {"time_scale": self.time_scale}
        if parts == ["delays"] and method == "POST":
            for key, value in body.items():
                if key not in DEFAULT_DELAYS:
                    raise ValueError("unknown delay %r (known: %s)" % (key, ", ".join(DEFAULT_DELAYS)))
                self.delays[key] = float(value)
            return {"delays": self.delays}
        if parts == ["replay"] and method == "POST":
            if body.get("selector") is not None:
                rule = self._replay_rule(body)
                # a rule for the same selector replaces the old one; new rules are tried first
                self.replay_rules = [rule] + [r for r in self.replay_rules if r["selector"] != rule["selector"]]
                return {"replay": rule["path"] or "<text>", "bytes": len(rule["data"]), "selector": rule["selector"]}
            source = self._replay_source(body)
            if body.get("job"):
                self.replay_jobs[body["job"]] = source
            else:
                self.replay_default = source
            return {"replay": source["path"] or "<text>", "bytes": len(source["data"]), "job": body.get("job")}
        if parts == ["kubelet"] and method == "POST":
            size = int(body["container_log_max_size"])
            if size < 0:
                raise ValueError("container_log_max_size must be >= 0")
            self.container_log_max_size = size
            return {"container_log_max_size": size}
        if parts == ["mpijob"] and method == "POST":
            outcome = body.get("outcome", "succeed")
            if outcome not in OUTCOMES:
                raise ValueError("outcome must be one of %s" % (OUTCOMES,))
            if body.get("default"):
                self.default_outcome = outcome
            else:
                self.next_outcomes.extend([outcome] * int(body.get("count", 1)))
            return {"default_outcome": self.default_outcome, "next_outcomes": list(self.next_outcomes)}
        if len(parts) == 2 and parts[0] == "nodes" and method in ("GET", "POST"):
            node = self.nodes[parts[1]]
            if method == "POST":
                if "rdma_broken" in body:
                    node["rdma_broken"] = bool(body["rdma_broken"])
            return {"name": parts[1], "rdma_broken": bool(node.get("rdma_broken"))}
        if parts == ["shutdown"] and method == "POST":
            asyncio.get_running_loop().call_later(0.05, self.request_stop)
            return {"stopping": True}
        raise KeyError("/".join(parts))

    def request_stop(self) -> None:
        """Set by SIGTERM/SIGINT or POST /_k8sim/shutdown."""
        self.stop_requested.set()
