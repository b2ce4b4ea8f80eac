# SPDX-License-Identifier: GPL-3.0-or-later
"""Level-triggered controllers of the emulated cluster: kubelet + scheduler
(just enough), the DaemonSet controller, the RDMA shared device plugin and the
Kubeflow MPI Operator v2beta1. Each reconcile reads the store and the clock;
all delays are device seconds multiplied by the time scale. Deterministic:
no randomness except the seeded name suffixes of the store.
"""
from __future__ import annotations

import copy
import json
import logging
import re
from typing import Any

from .operators import Operators
from .store import ApiError, Store, now_rfc3339

log = logging.getLogger("k8sim.controllers")

RDMA_IMAGE = "k8s-rdma-shared-dev-plugin"

# Open MPI's message when a rank exits non-zero (mpirun's standard help text).
OMPI_FAILURE = (
    b"--------------------------------------------------------------------------\n"
    b"Primary job  terminated normally, but 1 process returned\n"
    b"a non-zero exit code. Per user-direction, the job has been aborted.\n"
    b"--------------------------------------------------------------------------\n"
)


def _quantity(value: Any) -> float:
    """Parse a resource quantity (only the forms extended resources and CPU use)."""
    text = str(value)
    m = re.match(r"^([0-9.]+)(m|k|Ki|Mi|Gi|Ti|M|G|T)?$", text)
    if not m:
        return 0.0
    num = float(m.group(1))
    mult = {"m": 0.001, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 1024, "Mi": 1024 ** 2,
            "Gi": 1024 ** 3, "Ti": 1024 ** 4, None: 1}[m.group(2)]
    return num * mult


def node_selector_match(node: dict, pod_spec: dict) -> bool:
    labels = node["metadata"].get("labels") or {}
    for key, value in (pod_spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    if terms:
        def term_ok(term: dict) -> bool:
            for expr in term.get("matchExpressions") or []:
                key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
                val = labels.get(key)
                if op == "In" and val not in values:
                    return False
                if op == "NotIn" and val in values:
                    return False
                if op == "Exists" and key not in labels:
                    return False
                if op == "DoesNotExist" and key in labels:
                    return False
                if op in ("Gt", "Lt"):
                    try:
                        if (int(val) <= int(values[0])) if op == "Gt" else (int(val) >= int(values[0])):
                            return False
                    except (TypeError, ValueError):
                        return False
            for expr in term.get("matchFields") or []:
                if expr.get("key") == "metadata.name":
                    inside = node["metadata"]["name"] in (expr.get("values") or [])
                    if (expr.get("operator") == "In") != inside:
                        return False
            return True
        if not any(term_ok(t) for t in terms):
            return False
    return True


def pod_requests(pod_spec: dict) -> dict[str, float]:
    """Extended-resource requests of a pod (requests, or limits when no request)."""
    total: dict[str, float] = {}
    for container in pod_spec.get("containers") or []:
        res = container.get("resources") or {}
        merged = dict(res.get("limits") or {})
        merged.update(res.get("requests") or {})
        for key, value in merged.items():
            if "/" in key:
                total[key] = total.get(key, 0.0) + _quantity(value)
    return total


class Cluster:
    """The reconcilers; the Simulator calls reconcile(now) on every tick or kick."""

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.store: Store = sim.store
        self.r = {k: self.store.resource(*k) for k in [
            ("", "v1", "nodes"), ("", "v1", "pods"), ("", "v1", "configmaps"), ("", "v1", "events"),
            ("", "v1", "services"), ("", "v1", "secrets"), ("apps", "v1", "daemonsets"), ("batch", "v1", "jobs"),
            ("kubeflow.org", "v2beta1", "mpijobs")]}
        self.rdma_since: dict[tuple[str, str], float] = {}   # (node, resource) -> wanted since
        self.rdma_gone: dict[tuple[str, str], float] = {}    # (node, resource) -> plugin stopped at
        self.plugin_errors: dict[str, str] = {}              # "ns/ds" -> why the plugin pods crash
        self.pod_times: dict[str, float] = {}                # pod uid -> scheduled at
        self.jobs: dict[str, dict] = {}                      # MPIJob uid -> runner state
        self.operators = Operators(self)                     # Multi-NIC CNI, Network Operator (operators.py)
        self.r[("", "v1", "resourcequotas")] = self.store.resource("", "v1", "resourcequotas")
        self.store.admission.append(self.admit_quota)         # after the operators' webhooks, as ResourceQuota runs

    # ------------------------------------------------------------- helpers
    def scaled(self, seconds: float) -> float:
        return seconds * self.sim.time_scale

    def nodes(self) -> list[dict]:
        return self.store.select(self.r[("", "v1", "nodes")], None)

    def event(self, obj: dict, etype: str, reason: str, message: str, component: str) -> None:
        meta = obj["metadata"]
        ns = meta.get("namespace") or "default"
        body = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "%s.%s" % (meta["name"], self.store.random_suffix(16)), "namespace": ns},
            "involvedObject": {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": meta["name"],
                               "namespace": meta.get("namespace"), "uid": meta.get("uid"),
                               "resourceVersion": meta.get("resourceVersion")},
            "reason": reason, "message": message, "type": etype, "count": 1,
            "source": {"component": component}, "reportingComponent": component,
            "firstTimestamp": now_rfc3339(), "lastTimestamp": now_rfc3339(),
        }
        try:
            self.store.create(self.r[("", "v1", "events")], ns, body, {}, internal=True)
        except ApiError as exc:
            log.warning("event not recorded: %s", exc)

    def set_status(self, res_key: tuple, obj: dict, status: dict) -> dict | None:
        res = self.r[res_key]
        cur = self.store.find(res, obj["metadata"].get("namespace"), obj["metadata"]["name"])
        if cur is None or cur["metadata"]["uid"] != obj["metadata"]["uid"]:
            return None
        cur["status"] = status
        return self.store.put_internal(res, cur)

    # ------------------------------------------------------------- reconcile
    def reconcile(self, now: float) -> None:
        self.reconcile_quotas()
        self.operators.reconcile(now)
        self.reconcile_daemonsets(now)
        self.reconcile_mpijobs(now)
        self.reconcile_pods(now)

    # ------------------------------------------------------------ ResourceQuota
    # kubernetes pkg/quota/v1/evaluator/core/pods.go (the pod evaluator: pods not Succeeded/Failed count; extended
    # resources only as "requests.<name>", isExtendedResourceNameForQuota), pkg/controller/resourcequota (status.hard
    # = spec.hard, status.used for the names an evaluator tracks) and staging/src/k8s.io/apiserver/pkg/admission/
    # plugin/resourcequota/controller.go (checkRequest: quotas by status.hard, "exceeded quota: %s, requested: %s,
    # used: %s, limited: %s", admission.NewForbidden; its "status unknown for quota" is not emulated: the quota
    # controller here fills status.used in the same pass as status.hard). Only "pods" and requests.<extended>
    # are tracked here; cpu/memory/object-count quotas are stored and not enforced (see README.md).
    @staticmethod
    def _quota_tracked(name: str) -> bool:
        return name == "pods" or (name.startswith("requests.") and "/" in name and "kubernetes.io/" not in name)

    def _pod_usage(self, pod: dict) -> dict[str, float]:
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return {}
        usage = {"pods": 1.0}
        for key, value in pod_requests(pod.get("spec") or {}).items():
            usage["requests." + key] = value
        return usage

    def _quota_used(self, ns: str, names: list[str]) -> dict[str, float]:
        used = {n: 0.0 for n in names if self._quota_tracked(n)}
        for pod in self.store.select(self.r[("", "v1", "pods")], ns):
            for key, value in self._pod_usage(pod).items():
                if key in used:
                    used[key] += value
        return used

    @staticmethod
    def _qty(value: float) -> str:
        return str(int(value)) if float(value).is_integer() else str(value)

    def reconcile_quotas(self) -> None:
        res = self.r[("", "v1", "resourcequotas")]
        for rq in self.store.select(res, None):
            hard = dict((rq.get("spec") or {}).get("hard") or {})
            used = self._quota_used(rq["metadata"]["namespace"], list(hard))
            status = {"hard": hard, "used": {k: self._qty(v) for k, v in sorted(used.items())}}
            if rq.get("status") != status:
                self.store.put_internal(res, dict(rq, status=status))

    def admit_quota(self, res: Any, obj: dict, operation: str, old: dict | None, dry_run: bool) -> list[str]:
        """The ResourceQuota admission plugin on Pod CREATE (API creates and controllers' creates alike)."""
        del old
        if (res.group, res.plural) != ("", "pods") or operation != "CREATE":
            return []
        ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
        delta = self._pod_usage(obj)

        def forbidden(text: str) -> ApiError:
            return ApiError(403, "Forbidden", 'pods "%s" is forbidden: %s' % (name, text), {"name": name, "kind": "pods"})

        for rq in self.store.select(self.r[("", "v1", "resourcequotas")], ns):
            status = rq.get("status") or {}
            hard = status.get("hard") or {}
            tracked = sorted(k for k in hard if self._quota_tracked(k))
            if not tracked:
                continue  # a quota the controller has not synced yet, or one tracking nothing of a pod
            used = {k: _quantity((status.get("used") or {}).get(k, "0")) for k in tracked}
            requested = {k: v for k, v in delta.items() if k in tracked and v}
            exceeded = sorted(k for k, v in requested.items() if used[k] + v > _quantity(hard[k]))
            if exceeded:
                raise forbidden("exceeded quota: %s, requested: %s, used: %s, limited: %s" % (
                    rq["metadata"]["name"], self._pretty(requested, exceeded), self._pretty(used, exceeded),
                    self._pretty(hard, exceeded)))
            if requested and not dry_run:  # the admission plugin reserves the usage at once (not for a dry run)
                new_used = dict(status.get("used") or {})
                new_used.update({k: self._qty(used[k] + v) for k, v in requested.items()})
                self.store.put_internal(self.r[("", "v1", "resourcequotas")], dict(rq, status=dict(status, used=new_used)))
        return []

    @classmethod
    def _pretty(cls, values: dict, names: list[str]) -> str:
        """controller.go prettyPrint: name=quantity, sorted, comma-separated."""
        return ",".join("%s=%s" % (k, cls._qty(_quantity(values[k]))) for k in names)

    # ------------------------------------------------------ scheduler + kubelet
    def schedule(self, pod: dict) -> tuple[str | None, str]:
        """Pick a node as kube-scheduler would for our purposes; (node, why-not)."""
        spec = pod.get("spec") or {}
        wanted = pod_requests(spec)
        nodes = self.nodes()
        used: dict[str, dict[str, float]] = {}
        for other in self.store.select(self.r[("", "v1", "pods")], None):
            node = (other.get("spec") or {}).get("nodeName")
            if node and (other.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                for key, value in pod_requests(other.get("spec") or {}).items():
                    used.setdefault(node, {})[key] = used.setdefault(node, {}).get(key, 0.0) + value
        reasons: dict[str, int] = {}
        namespace = pod["metadata"].get("namespace")
        for node in nodes:
            if self._anti_affinity_conflict(pod, namespace, node["metadata"]["name"]):
                # kube-scheduler's InterPodAffinity filter (pkg/scheduler/framework/plugins/interpodaffinity/
                # filtering.go, ErrReasonAntiAffinityRulesNotMatch)
                reasons["node(s) didn't match pod anti-affinity rules"] = reasons.get("node(s) didn't match pod anti-affinity rules", 0) + 1
                continue
            if not node_selector_match(node, spec):
                reasons["node(s) didn't match Pod's node affinity/selector"] = \
                    reasons.get("node(s) didn't match Pod's node affinity/selector", 0) + 1
                continue
            alloc = (node.get("status") or {}).get("allocatable") or {}
            short = [k for k, v in sorted(wanted.items())
                     if _quantity(alloc.get(k, "0")) - used.get(node["metadata"]["name"], {}).get(k, 0.0) < v]
            if short:
                for k in short:
                    reasons["Insufficient %s" % k] = reasons.get("Insufficient %s" % k, 0) + 1
                continue
            return node["metadata"]["name"], ""
        detail = ", ".join("%d %s" % (n, why) for why, n in sorted(reasons.items()))
        return None, ("0/%d nodes are available: %s. preemption: 0/%d nodes are available: %d No preemption "
                      "victims found for incoming pod." % (len(nodes), detail, len(nodes), len(nodes)))

    def _anti_affinity_conflict(self, pod: dict, namespace: str | None, node: str) -> bool:
        """A required podAntiAffinity term of ``pod`` (topologyKey kubernetes.io/hostname, matchLabels, the pod's own
        namespace unless ``namespaces`` says otherwise) matched by a pod already bound to ``node``. Only the incoming
        pod's own terms are checked (not the existing pods' terms against it); other topology keys are refused."""
        affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("podAntiAffinity") or {}
        terms = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        for term in terms:
            if term.get("topologyKey") != "kubernetes.io/hostname" or set(term.get("labelSelector") or {}) - {"matchLabels"}:
                raise ValueError("k8sim: podAntiAffinity: only topologyKey kubernetes.io/hostname with matchLabels is emulated, got %r" % (term,))
            wanted = (term.get("labelSelector") or {}).get("matchLabels") or {}
            spaces = term.get("namespaces") or [namespace]
            for other in self.store.select(self.r[("", "v1", "pods")], None):
                meta = other.get("metadata") or {}
                if other is pod or meta.get("uid") == pod["metadata"].get("uid"):
                    continue
                if (other.get("spec") or {}).get("nodeName") != node or meta.get("namespace") not in spaces:
                    continue
                if (other.get("status") or {}).get("phase") in ("Succeeded", "Failed") or meta.get("deletionTimestamp"):
                    continue
                labels = meta.get("labels") or {}
                if all(labels.get(k) == v for k, v in wanted.items()):
                    return True
        return False

    def reconcile_pods(self, now: float) -> None:
        """Bind pending pods and start the containers of bound ones after a delay."""
        pods = self.r[("", "v1", "pods")]
        for pod in self.store.select(pods, None):
            status = pod.get("status") or {}
            phase = status.get("phase", "Pending")
            uid = pod["metadata"]["uid"]
            if pod["metadata"].get("deletionTimestamp") or phase != "Pending":
                continue
            spec = pod.get("spec") or {}
            if not spec.get("nodeName"):
                node, why = self.schedule(pod)
                if node is None:
                    cond = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": why,
                             "lastProbeTime": None, "lastTransitionTime": now_rfc3339()}]
                    if status.get("conditions", [{}])[0].get("message") != why:
                        self.store.put_internal(pods, dict(pod, status={"phase": "Pending", "conditions": cond,
                                                                        "qosClass": "BestEffort"}))
                    continue
                pod = copy.deepcopy(pod)
                pod["spec"]["nodeName"] = node
                pod["status"] = {"phase": "Pending", "qosClass": "BestEffort",
                                 "conditions": [{"type": "PodScheduled", "status": "True",
                                                 "lastTransitionTime": now_rfc3339()}]}
                pod = self.store.put_internal(pods, pod)
                self.pod_times[uid] = now
                continue
            self.pod_times.setdefault(uid, now)
            owned_by_ds = any(r.get("kind") == "DaemonSet" for r in pod["metadata"].get("ownerReferences") or [])
            if not owned_by_ds and now - self.pod_times[uid] >= self.scaled(self.sim.delays["pod_start"]):
                self.set_pod_phase(pod, "Running")

    def set_pod_phase(self, pod: dict, phase: str, exit_code: int = 0, waiting: str | None = None) -> dict | None:
        node = pod["spec"].get("nodeName") or ""
        idx = next((i for i, n in enumerate(sorted(n["metadata"]["name"] for n in self.nodes())) if n == node), 0)
        started = (pod.get("status") or {}).get("startTime") or now_rfc3339()
        statuses = []
        for c in pod["spec"].get("containers") or []:
            st: dict[str, Any] = {"name": c.get("name"), "image": c.get("image", ""), "imageID": "",
                                  "containerID": "containerd://%s" % pod["metadata"]["uid"].replace("-", ""),
                                  "restartCount": 0, "started": phase == "Running" and not waiting,
                                  "ready": phase == "Running" and not waiting}
            if waiting:
                st["state"] = {"waiting": {"reason": waiting, "message": "back-off restarting failed container"}}
                st["restartCount"] = 3
            elif phase == "Running":
                st["state"] = {"running": {"startedAt": started}}
            else:
                st["state"] = {"terminated": {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error",
                                              "startedAt": started, "finishedAt": now_rfc3339()}}
            statuses.append(st)
        ready = "True" if phase == "Running" and not waiting else "False"
        status = {
            "phase": phase, "hostIP": "10.0.0.%d" % (idx + 1), "podIP": "10.244.%d.%d" % (idx, 10 + len(pod["metadata"]["name"]) % 200),
            "startTime": started, "qosClass": "BestEffort", "containerStatuses": statuses,
            "conditions": [{"type": t, "status": s, "lastTransitionTime": now_rfc3339()} for t, s in
                           [("PodReadyToStartContainers", "True"), ("Initialized", "True"), ("Ready", ready),
                            ("ContainersReady", ready), ("PodScheduled", "True")]],
        }
        return self.set_status(("", "v1", "pods"), pod, status)

    # ---------------------------------------------------- DaemonSets + RDMA plugin
    def _rdma_config(self, ds: dict) -> tuple[list[dict] | None, str]:
        """The plugin's configList from the ConfigMap the DaemonSet mounts, validated as
        the plugin's ValidateConfigs does; (None, reason) when the plugin would exit."""
        spec = ds["spec"]["template"].get("spec") or {}
        cm_name = None
        for vol in spec.get("volumes") or []:
            if vol.get("configMap"):
                cm_name = vol["configMap"].get("name")
        if not cm_name:
            return None, "no ConfigMap volume: the plugin cannot read /k8s-rdma-shared-dev-plugin/config.json"
        cm = self.store.find(self.r[("", "v1", "configmaps")], ds["metadata"]["namespace"], cm_name)
        if cm is None:
            return None, 'MountVolume.SetUp failed for volume "config": configmap "%s" not found' % cm_name
        raw = (cm.get("data") or {}).get("config.json")
        if raw is None:
            return None, "open /k8s-rdma-shared-dev-plugin/config.json: no such file or directory"
        try:
            config = json.loads(raw)
        except ValueError as exc:
            return None, "error reading config: %s" % exc
        entries = config.get("configList") or []
        if not isinstance(entries, list) or not entries:
            return None, "no resources configuration found"
        seen = set()
        for conf in entries:
            name = conf.get("resourceName", "")
            if not re.match(r"^[a-zA-Z0-9_]+$", name or ""):
                return None, 'error: resource name "%s" contains invalid characters' % name
            if name in seen:
                return None, 'error: resource name "%s" already exists' % name
            seen.add(name)
            if int(conf.get("rdmaHcaMax", 0)) < 0:
                return None, "error: Invalid value for rdmaHcaMax < 0: %d" % conf["rdmaHcaMax"]
            selectors = conf.get("selectors") or {}
            if not any(selectors.get(k) for k in ("vendors", "deviceIDs", "drivers", "ifNames", "linkTypes")) \
                    and not conf.get("devices"):
                return None, ('error: configuration missmatch. neither "selectors" nor "devices" fields exits, '
                              "it is recommended to use the new \u201cselectors\u201d field")
            if any(selectors.get(k) for k in ("vendors", "deviceIDs", "drivers", "ifNames", "linkTypes")) \
                    and conf.get("devices"):
                return None, 'configuration mismatch. Cannot specify both "selectors" and "devices" fields'
        return entries, ""

    def _matching_devices(self, node_name: str, conf: dict) -> int:
        nics = self.sim.node_cfg(node_name).get("nics") or []
        sel = dict(conf.get("selectors") or {})
        if conf.get("devices"):
            sel = {"ifNames": conf["devices"]}
        count = 0
        for nic in nics:
            if sel.get("vendors") and nic.get("vendor", "15b3") not in sel["vendors"]:
                continue
            if sel.get("deviceIDs") and nic.get("device_id", "1021") not in sel["deviceIDs"]:
                continue
            if sel.get("drivers") and nic.get("driver", "mlx5_core") not in sel["drivers"]:
                continue
            if sel.get("ifNames") and nic.get("netdev") not in sel["ifNames"] and nic.get("name") not in sel["ifNames"]:
                continue
            if sel.get("linkTypes") and nic.get("link_type", "ether") not in sel["linkTypes"]:
                continue
            count += 1
        return count

    def reconcile_daemonsets(self, now: float) -> None:
        dss = self.r[("apps", "v1", "daemonsets")]
        pods = self.r[("", "v1", "pods")]
        wanted: dict[tuple[str, str], int] = {}
        nodes = self.nodes()
        for ds in self.store.select(dss, None):
            if ds["metadata"].get("deletionTimestamp"):
                continue
            tmpl = ds["spec"].get("template") or {}
            spec = tmpl.get("spec") or {}
            key = "%s/%s" % (ds["metadata"]["namespace"], ds["metadata"]["name"])
            is_rdma = any(RDMA_IMAGE in (c.get("image") or "") for c in spec.get("containers") or [])
            entries, why = self._rdma_config(ds) if is_rdma else (None, "")
            if is_rdma and entries is None:
                self.plugin_errors[key] = why
            else:
                self.plugin_errors.pop(key, None)
            selected = [n for n in nodes if node_selector_match(n, spec)]
            ready = 0
            existing = {p["spec"].get("nodeName"): p for p in self.store.select(pods, ds["metadata"]["namespace"])
                        if any(r.get("uid") == ds["metadata"]["uid"] for r in p["metadata"].get("ownerReferences") or [])}
            for node in selected:
                name = node["metadata"]["name"]
                broken = is_rdma and (entries is None or self.sim.node_cfg(name).get("rdma_broken"))
                pod = existing.get(name)
                if pod is None:
                    pod = self._create_pod(ds, tmpl, "%s-%s" % (ds["metadata"]["name"], self.store.random_suffix()),
                                           name, kind="DaemonSet")
                    self.pod_times[pod["metadata"]["uid"]] = now
                    continue
                started = now - self.pod_times.setdefault(pod["metadata"]["uid"], now) >= self.scaled(self.sim.delays["pod_start"])
                phase = (pod.get("status") or {}).get("phase")
                if started and broken:
                    waiting = ((pod.get("status") or {}).get("containerStatuses") or [{}])[0].get("state", {}).get("waiting")
                    if not waiting:
                        self.set_pod_phase(pod, "Running", waiting="CrashLoopBackOff")
                elif started and (phase != "Running" or not all(c.get("ready") for c in (pod.get("status") or {}).get("containerStatuses") or [])):
                    self.set_pod_phase(pod, "Running")
                elif started and phase == "Running":
                    ready += 1
                if is_rdma and not broken and entries:
                    for conf in entries:
                        res_name = "%s/%s" % (conf.get("resourcePrefix") or "rdma", conf["resourceName"])
                        count = int(conf.get("rdmaHcaMax", 0)) if self._matching_devices(name, conf) else 0
                        wanted[(name, res_name)] = max(wanted.get((name, res_name), 0), count)
            for node_name, pod in existing.items():  # nodes no longer selected: the controller deletes the pod
                if node_name not in {n["metadata"]["name"] for n in selected}:
                    try:
                        self.store.delete(pods, pod["metadata"]["namespace"], pod["metadata"]["name"], {}, {})
                    except ApiError:
                        pass  # already gone
            status = {"currentNumberScheduled": len(selected), "desiredNumberScheduled": len(selected),
                      "numberMisscheduled": 0, "numberReady": ready, "numberAvailable": ready,
                      "updatedNumberScheduled": len(selected), "observedGeneration": ds["metadata"].get("generation", 1)}
            if ready < len(selected):
                status["numberUnavailable"] = len(selected) - ready
            if ds.get("status") != status:
                self.set_status(("apps", "v1", "daemonsets"), ds, status)
        # the SR-IOV network device plugin's resources (operators.py reconcile_sriov ran first): one advertising path
        for key, count in self.operators.sriov_wanted.items():
            wanted[key] = max(wanted.get(key, 0), count)
        self._advertise(now, wanted)

    def _advertise(self, now: float, wanted: dict[tuple[str, str], int]) -> None:
        for key in wanted:
            self.rdma_since.setdefault(key, now)
            self.rdma_gone.pop(key, None)
        for key in list(self.rdma_since):
            if key not in wanted:
                self.rdma_since.pop(key)
                self.rdma_gone.setdefault(key, now)
        for node in self.nodes():
            name = node["metadata"]["name"]
            status = copy.deepcopy(node.get("status") or {})
            cap, alloc = status.setdefault("capacity", {}), status.setdefault("allocatable", {})
            for (nname, res_name), since in self.rdma_since.items():
                if nname == name and now - since >= self.scaled(self.sim.delays["rdma_register"]):
                    cap[res_name] = alloc[res_name] = str(wanted[(nname, res_name)])
            for (nname, res_name), gone in list(self.rdma_gone.items()):
                if nname != name:
                    continue
                if now - gone >= self.scaled(self.sim.delays["device_plugin_grace"]):
                    cap.pop(res_name, None)
                    alloc.pop(res_name, None)
                    self.rdma_gone.pop((nname, res_name))
                elif res_name in alloc:
                    alloc[res_name] = "0"
            if status != node.get("status"):
                self.set_status(("", "v1", "nodes"), node, status)

    def _create_pod(self, owner: dict, template: dict, name: str, node: str | None, kind: str,
                    extra_labels: dict | None = None) -> dict:
        tmpl = copy.deepcopy(template)
        meta = tmpl.get("metadata") or {}
        labels = dict(meta.get("labels") or {})
        labels.update(extra_labels or {})
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": owner["metadata"]["namespace"], "labels": labels,
                            "annotations": meta.get("annotations") or {},
                            "ownerReferences": [{"apiVersion": owner["apiVersion"], "kind": kind,
                                                 "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                                                 "controller": True, "blockOwnerDeletion": True}]},
               "spec": tmpl.get("spec") or {}, "status": {"phase": "Pending"}}
        if not pod["metadata"]["annotations"]:
            pod["metadata"].pop("annotations")
        if node:
            pod["spec"]["nodeName"] = node
        return self.store.create(self.r[("", "v1", "pods")], pod["metadata"]["namespace"], pod, {}, internal=True)[0]

    # ----------------------------------------------------------- MPI Operator
    def _operator_validate(self, job: dict) -> list[str]:
        """kubeflow/mpi-operator pkg/apis/kubeflow/validation (after SetDefaults_MPIJob)."""
        errs = []
        spec = job.get("spec") or {}
        specs = spec.get("mpiReplicaSpecs")
        worker = (specs or {}).get("Worker")
        replicas = (worker or {}).get("replicas")
        replicas = replicas if isinstance(replicas, int) and replicas > 0 else 1
        host = "%s-worker-%d" % (job["metadata"]["name"], replicas - 1)
        if len(host) > 63 or not re.match(r"^[a-z]([-a-z0-9]*[a-z0-9])?$", host):
            errs.append('metadata.name: Invalid value: "%s": will not able to create pod and service with invalid '
                        'DNS label "%s"' % (job["metadata"]["name"], host))
        if specs is None:
            errs.append("spec.mpiReplicaSpecs: Required value: must have replica specs")
        else:
            for role, rs in (("Launcher", specs.get("Launcher")), ("Worker", worker)):
                path = "spec.mpiReplicaSpecs[%s]" % role
                if rs is None:
                    if role == "Launcher":
                        errs.append("%s: Required value: must have Launcher replica spec" % path)
                    continue
                policy = rs.get("restartPolicy") or ("OnFailure" if role == "Launcher" else "Never")
                if policy not in ("Never", "OnFailure"):
                    errs.append('%s.restartPolicy: Unsupported value: "%s": supported values: "Never", "OnFailure"'
                                % (path, policy))
                if not ((rs.get("template") or {}).get("spec") or {}).get("containers"):
                    errs.append("%s.template.spec.containers: Required value: must define at least one container" % path)
                reps = rs.get("replicas", 1 if role == "Launcher" else 0)
                if role == "Launcher" and reps != 1:
                    errs.append("%s.replicas: Invalid value: %s: must be 1" % (path, reps))
                if role == "Worker" and reps <= 0:
                    errs.append("%s.replicas: Invalid value: %s: must be greater than or equal to 1" % (path, reps))
        policy = (spec.get("runPolicy") or {}).get("cleanPodPolicy", "None")
        if policy not in ("None", "Running", "All"):
            errs.append('spec.runPolicy.cleanPodPolicy: Unsupported value: "%s": supported values: "All", "None", '
                        '"Running"' % policy)
        return errs

    def reconcile_mpijobs(self, now: float) -> None:
        mres = self.r[("kubeflow.org", "v2beta1", "mpijobs")]
        live = set()
        for job in self.store.select(mres, None):
            uid = job["metadata"]["uid"]
            live.add(uid)
            if job["metadata"].get("deletionTimestamp"):
                continue
            state = self.jobs.get(uid)
            if state is None:
                state = self.jobs[uid] = self.sim.plan_for(job)
                state.update(seen=now, step="new")
            try:
                self._step(job, state, now)
            except ApiError as exc:
                log.warning("mpijob %s: %s", job["metadata"]["name"], exc)
        for uid in list(self.jobs):
            if uid not in live:
                self.jobs.pop(uid)

    def _conditions(self, status: dict, ctype: str, cstatus: str, reason: str, message: str) -> None:
        """updateMPIJobConditions/setCondition of the operator: replace the type,
        and Succeeded/Failed turn Running (and Failed) to False."""
        conds = status.setdefault("conditions", [])
        cur = next((c for c in conds if c["type"] == ctype), None)
        if cur and cur["status"] == cstatus and cur.get("reason") == reason:
            return
        ts = now_rfc3339()
        new = {"type": ctype, "status": cstatus, "reason": reason, "message": message,
               "lastUpdateTime": ts, "lastTransitionTime": cur["lastTransitionTime"] if cur and cur["status"] == cstatus else ts}
        out = []
        for c in conds:
            if c["type"] == ctype:
                continue
            if ctype in ("Failed", "Succeeded") and c["type"] in ("Running", "Failed"):
                c = dict(c, status="False")
            out.append(c)
        out.append(new)
        status["conditions"] = out

    def _step(self, job: dict, state: dict, now: float) -> None:
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        status = copy.deepcopy(job.get("status") or {})
        step = state["step"]
        if step == "new":
            if now - state["seen"] < self.scaled(self.sim.delays["operator_sync"]):
                return
            errs = self._operator_validate(job)
            if errs:
                text = errs[0] if len(errs) == 1 else "[%s]" % ", ".join(errs)
                self.event(job, "Warning", "ValidationError", "Found validation errors: %s" % text, "mpi-job-controller")
                state["step"] = "invalid"  # the operator does not requeue; no status is written
                return
            msg = "MPIJob %s/%s is created." % (ns, name)
            self._conditions(status, "Created", "True", "MPIJobCreated", msg)
            self.event(job, "Normal", "MPIJobCreated", msg, "mpi-job-controller")
            if (job["spec"].get("runPolicy") or {}).get("suspend"):
                self._conditions(status, "Suspended", "True", "MPIJobSuspended", "MPIJob suspended")
                status["replicaStatuses"] = {}
                self.set_status(("kubeflow.org", "v2beta1", "mpijobs"), job, status)
                state["step"] = "suspended"
                return
            status["startTime"] = now_rfc3339()
            status["replicaStatuses"] = {"Launcher": {}, "Worker": {}}
            self.set_status(("kubeflow.org", "v2beta1", "mpijobs"), job, status)
            self._create_children(job, state)
            state["step"] = "created"
            return
        if step in ("invalid", "suspended", "done"):
            return
        launcher_pod = self._launcher_pod(job, state)
        workers = [self.store.find(self.r[("", "v1", "pods")], ns, w) for w in state["workers"]]
        workers = [w for w in workers if w is not None]
        if launcher_pod is None and job["spec"].get("launcherCreationPolicy") == "WaitForWorkersReady":
            if workers and all((w.get("status") or {}).get("phase") == "Running" for w in workers):
                self._create_launcher(job, state)
            return
        if launcher_pod is None:
            return
        lphase = (launcher_pod.get("status") or {}).get("phase")
        running_workers = sum(1 for w in workers if (w.get("status") or {}).get("phase") == "Running")
        status["replicaStatuses"] = {"Launcher": {"active": 1} if lphase == "Running" else {},
                                     "Worker": {"active": running_workers} if running_workers else {}}
        if step == "created" and lphase == "Running" and running_workers == len(state["workers"]):
            modelled = self.sim.model_log(job, workers)  # the lab's performance model, for these workers' nodes
            if modelled is not None:
                state["log"] = modelled[0]
                if not modelled[1]:
                    state["outcome"] = "fail"
            self._conditions(status, "Running", "True", "MPIJobRunning", "MPIJob %s/%s is running." % (ns, name))
            self.sim.logs[(ns, launcher_pod["metadata"]["name"], state["container"])] = self._partial_log(state)
            state["step"] = "running"
            state["running_since"] = now
        elif step == "running" and state["outcome"] != "hang" and \
                now - state["running_since"] >= self.scaled(state["run_seconds"]):
            self._finish(job, state, status, launcher_pod, workers)
            return
        if status != (job.get("status") or {}):
            self.set_status(("kubeflow.org", "v2beta1", "mpijobs"), job, status)

    def _partial_log(self, state: dict) -> bytes:
        data = state["log"]
        lines = data.splitlines(keepends=True)
        # mpirun has printed the header and part of the table when a job hangs or is polled early
        return b"".join(lines[: max(1, len(lines) * 2 // 5)]) if lines else b""

    def _finish(self, job: dict, state: dict, status: dict, launcher_pod: dict, workers: list[dict]) -> None:
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        ok = state["outcome"] == "succeed"
        key = (ns, launcher_pod["metadata"]["name"], state["container"])
        self.sim.logs[key] = state["log"] if ok else state["log"] + OMPI_FAILURE
        self.set_pod_phase(launcher_pod, "Succeeded" if ok else "Failed", exit_code=0 if ok else 1)
        ljob = self.store.find(self.r[("batch", "v1", "jobs")], ns, name + "-launcher")
        ts = now_rfc3339()
        if ljob is not None:
            if ok:
                jstatus = {"succeeded": 1, "startTime": status.get("startTime"), "completionTime": ts,
                           "conditions": [{"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached",
                                           "message": "Reached expected number of succeeded pods",
                                           "lastProbeTime": ts, "lastTransitionTime": ts},
                                          {"type": "Complete", "status": "True", "reason": "CompletionsReached",
                                           "message": "Reached expected number of succeeded pods",
                                           "lastProbeTime": ts, "lastTransitionTime": ts}]}
            else:
                jstatus = {"failed": 1, "startTime": status.get("startTime"),
                           "conditions": [{"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
                                           "message": "Job has reached the specified backoff limit",
                                           "lastProbeTime": ts, "lastTransitionTime": ts},
                                          {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                                           "message": "Job has reached the specified backoff limit",
                                           "lastProbeTime": ts, "lastTransitionTime": ts}]}
            self.set_status(("batch", "v1", "jobs"), ljob, jstatus)
        status["completionTime"] = ts
        if ok:
            status["replicaStatuses"]["Launcher"] = {"succeeded": 1}
            self._conditions(status, "Succeeded", "True", "MPIJobSucceeded", "MPIJob %s/%s successfully completed." % (ns, name))
        else:
            status["replicaStatuses"]["Launcher"] = {"failed": 1}
            # updateMPIJobFailedStatus: the Job's reason + "/" + the failed pod's status.reason (empty here)
            self._conditions(status, "Failed", "True", "BackoffLimitExceeded/",
                             "Job has reached the specified backoff limit: ")
        self.set_status(("kubeflow.org", "v2beta1", "mpijobs"), job, status)
        policy = (job["spec"].get("runPolicy") or {}).get("cleanPodPolicy", "None")
        if policy in ("Running", "All"):
            for w in workers:
                try:
                    self.store.delete(self.r[("", "v1", "pods")], ns, w["metadata"]["name"], {}, {})
                except ApiError:
                    pass  # already gone
        state["step"] = "done"

    def _launcher_pod(self, job: dict, state: dict) -> dict | None:
        if not state.get("launcher_pod"):
            return None
        return self.store.find(self.r[("", "v1", "pods")], job["metadata"]["namespace"], state["launcher_pod"])

    def _owner_ref(self, job: dict) -> list[dict]:
        return [{"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "name": job["metadata"]["name"],
                 "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]

    def _create_children(self, job: dict, state: dict) -> None:
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        specs = job["spec"]["mpiReplicaSpecs"]
        worker = specs.get("Worker") or {}
        n = worker.get("replicas", 0) if worker else 0
        slots = job["spec"].get("slotsPerWorker", 1)
        hosts = "".join("%s-worker-%d.%s.%s.svc slots=%d\n" % (name, i, name, ns, slots) for i in range(n))
        owner = self._owner_ref(job)
        self.store.put_internal(self.r[("", "v1", "configmaps")], {
            "metadata": {"name": name + "-config", "namespace": ns, "ownerReferences": owner,
                         "labels": {"app": name}},
            "data": {"hostfile": hosts, "discover_hosts.sh": "#!/bin/sh\n" + "".join(
                "echo %s-worker-%d.%s.%s.svc\n" % (name, i, name, ns) for i in range(n))}})
        self.store.put_internal(self.r[("", "v1", "services")], {
            "metadata": {"name": name, "namespace": ns, "ownerReferences": owner, "labels": {"app": name}},
            "spec": {"clusterIP": "None", "selector": {"training.kubeflow.org/job-name": name,
                                                       "training.kubeflow.org/operator-name": "mpi-operator"},
                     "publishNotReadyAddresses": True}})
        self.store.put_internal(self.r[("", "v1", "secrets")], {
            "metadata": {"name": name + "-ssh", "namespace": ns, "ownerReferences": owner, "labels": {"app": name}},
            "type": "kubernetes.io/ssh-auth", "data": {"ssh-privatekey": "", "ssh-publickey": ""}})
        state["workers"] = []
        failed = False
        for i in range(n):
            labels = {"training.kubeflow.org/operator-name": "mpi-operator", "training.kubeflow.org/job-name": name,
                      "training.kubeflow.org/job-role": "worker", "training.kubeflow.org/replica-index": str(i)}
            tmpl = copy.deepcopy(worker.get("template") or {})
            tmpl.setdefault("spec", {})["hostname"] = "%s-worker-%d" % (name, i)
            tmpl["spec"]["subdomain"] = name
            tmpl["spec"]["restartPolicy"] = worker.get("restartPolicy") or "Never"
            try:
                created = self._create_pod(dict(job, apiVersion="kubeflow.org/v2beta1"), tmpl,
                                           "%s-worker-%d" % (name, i), None, "MPIJob", labels)
                state["workers"].append(created["metadata"]["name"])
            except ApiError as exc:
                self.event(job, "Warning", "MPIJobFailed", "worker pod created failed: %s" % exc.message,
                           "mpi-job-controller")
                failed = True
        if failed:
            # mpi_job_controller.go syncHandler: getOrCreateWorker's error returns before the launcher is created
            # (the real controller requeues with backoff and retries; the emulation does not retry)
            return
        if job["spec"].get("launcherCreationPolicy") != "WaitForWorkersReady":
            self._create_launcher(job, state)

    def _create_launcher(self, job: dict, state: dict) -> None:
        ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
        launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]
        tmpl = copy.deepcopy(launcher.get("template") or {})
        labels = dict((tmpl.get("metadata") or {}).get("labels") or {})
        labels.update({"training.kubeflow.org/operator-name": "mpi-operator", "training.kubeflow.org/job-name": name,
                       "training.kubeflow.org/job-role": "launcher"})
        tmpl.setdefault("metadata", {})["labels"] = labels
        tmpl.setdefault("spec", {})["hostname"] = name + "-launcher"
        tmpl["spec"]["subdomain"] = name
        tmpl["spec"]["restartPolicy"] = launcher.get("restartPolicy") or "OnFailure"
        containers = tmpl["spec"].get("containers") or [{}]
        state["container"] = containers[0].get("name", "")
        env = list(containers[0].get("env") or [])
        env += [{"name": "K_MPI_JOB_ROLE", "value": "launcher"},
                {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
                {"name": "OMPI_MCA_orte_default_hostfile", "value": "/etc/mpi/hostfile"},
                {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"},
                {"name": "OMPI_MCA_orte_set_default_slots", "value": str(job["spec"].get("slotsPerWorker", 1))}]
        containers[0]["env"] = env
        run_policy = job["spec"].get("runPolicy") or {}
        body = {"metadata": {"name": name + "-launcher", "namespace": ns, "labels": {"app": name},
                             "ownerReferences": self._owner_ref(job)},
                "spec": {"template": tmpl, "podReplacementPolicy": "Failed", "completions": 1, "parallelism": 1,
                         "backoffLimit": run_policy.get("backoffLimit", 6)}}
        if run_policy.get("activeDeadlineSeconds") is not None:
            body["spec"]["activeDeadlineSeconds"] = run_policy["activeDeadlineSeconds"]
        ljob = self.store.put_internal(self.r[("batch", "v1", "jobs")], body)
        ljob_uid = ljob["metadata"]["uid"]
        pod_labels = dict(labels)
        pod_labels.update({"batch.kubernetes.io/controller-uid": ljob_uid, "batch.kubernetes.io/job-name": name + "-launcher",
                           "controller-uid": ljob_uid, "job-name": name + "-launcher"})
        try:
            pod = self._create_pod(dict(ljob, apiVersion="batch/v1"), tmpl,
                                   "%s-launcher-%s" % (name, self.store.random_suffix()), None, "Job", pod_labels)
            state["launcher_pod"] = pod["metadata"]["name"]
            self.set_status(("batch", "v1", "jobs"), ljob,
                            {"active": 1, "startTime": now_rfc3339(), "ready": 0, "terminating": 0})
        except ApiError as exc:
            self.event(job, "Warning", "MPIJobFailed", "launcher pod created failed: %s" % exc.message,
                       "mpi-job-controller")
