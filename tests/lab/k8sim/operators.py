# SPDX-License-Identifier: GPL-3.0-or-later
"""Just enough of two network operators for the k8s_rdma role's waits to be real.

Multi-NIC CNI (foundation-model-stack/multi-nic-cni release-v1.3.1,
controllers/multinicnetwork_controller.go, internal/plugin/net_attach_def.go):
only while a Deployment runs the image ``multi-nic-cni-controller`` (the
operator is installed), each MultiNicNetwork gets the controller's finalizer,
one NetworkAttachmentDefinition of the same name per target namespace
(``spec.namespaces``, or every Active namespace) owned by it, and a status
(``configStatus`` Success, ``discovery``, ``routeStatus``, ``lastSyncTime``).
Plugin ``mellanox`` needs a NicClusterPolicy with a ``sriovDevicePlugin``
config; without one the status is ``Failed`` with the controller's message.
On deletion the controller deletes the NADs and drops its finalizer; with no
controller running, the network stays Terminating, as on a real cluster.

NVIDIA Network Operator (Mellanox/network-operator): only while a Deployment
runs the image ``network-operator`` (the operator is installed: the chart's
Deployment, which the lab's helm shim creates, or one a test creates as a
pre-installed operator), the NicClusterPolicy named ``nic-cluster-policy`` gets
the RDMA shared device plugin as the operator deploys it: ConfigMap
``rdma-devices`` and DaemonSet ``rdma-shared-dp-ds`` in the operator's own
namespace (the Deployment's), owned by the policy, so the cluster's
device-plugin emulation does the rest. ``status.state`` is ``ready`` once the
DaemonSet is ready on every node it selects, else ``notReady``; a policy with
another name gets ``ignore``. Other components (multus, nvIpam, ...) are
accepted and reported ready without being emulated.
"""
from __future__ import annotations

import json
from typing import Any

from . import crds
from .store import ApiError, now_rfc3339

MNC_FINALIZER = "finalizers.multinicnetwork.multinic.fms.io"
MNC_CONTROLLER_IMAGE = "multi-nic-cni-controller"
NETOP_IMAGE = "network-operator"  # nvcr.io/nvidia/cloud-native/network-operator (not sriov-network-operator)
NCP_NAME = "nic-cluster-policy"


def image_name(image: str) -> str:
    """The image's own name: no registry/repository path, tag or digest ("a.io/x/y:1" -> "y")."""
    return image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]


class Operators:
    """Reconcilers called from controllers.Cluster.reconcile."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.store = cluster.store
        res = self.store.resource
        self.r = {
            "mnc": res("multinic.fms.io", "v1", "multinicnetworks"),
            "ncp": res("mellanox.com", "v1alpha1", "nicclusterpolicies"),
            "nad": res("k8s.cni.cncf.io", "v1", "network-attachment-definitions"),
            "deploy": res("apps", "v1", "deployments"),
            "ds": res("apps", "v1", "daemonsets"),
            "cm": res("", "v1", "configmaps"),
            "ns": res("", "v1", "namespaces"),
            "crd": res("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
        }
        self.seen: dict[str, float] = {}  # uid -> first seen (operator_sync delay)

    def reconcile(self, now: float) -> None:
        self.reconcile_crds()
        self.reconcile_multinic(now)
        self.reconcile_nicclusterpolicy(now)

    def _synced(self, obj: dict, now: float) -> bool:
        first = self.seen.setdefault(obj["metadata"]["uid"], now)
        return now - first >= self.cluster.scaled(self.cluster.sim.delays["operator_sync"])

    # ------------------------------------------------------------ CRDs
    def reconcile_crds(self) -> None:
        for crd in self.store.select(self.r["crd"], None):
            spec = crd.get("spec") or {}
            if crd["metadata"].get("deletionTimestamp") or (crd.get("status") or {}).get("conditions"):
                continue
            self.store.put_internal(self.r["crd"], dict(crd, status=crds.established_status(spec, now_rfc3339())))

    # ------------------------------------------------------------ Multi-NIC CNI
    def _deployment_running(self, image: str) -> dict | None:
        """The first Deployment (not being deleted, not scaled to 0) with a container running this image name."""
        for dep in self.store.select(self.r["deploy"], None):
            spec = dep.get("spec") or {}
            containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
            if dep["metadata"].get("deletionTimestamp") or spec.get("replicas", 1) == 0:
                continue
            if any(image_name(c.get("image") or "") == image for c in containers):
                return dep
        return None

    def _namespaces(self, net: dict) -> list[str]:
        wanted = (net.get("spec") or {}).get("namespaces") or []
        if wanted:
            return [ns for ns in wanted if self.store.find(self.r["ns"], None, ns) is not None]
        # The store gives namespaces created through the API no status.phase; the apiserver would say Active.
        return [ns["metadata"]["name"] for ns in self.store.select(self.r["ns"], None)
                if (ns.get("status") or {}).get("phase", "Active") == "Active" and not ns["metadata"].get("deletionTimestamp")]

    def _sriov_resources(self) -> list[str]:
        names = []
        for ncp in self.store.select(self.r["ncp"], None):
            raw = ((ncp.get("spec") or {}).get("sriovDevicePlugin") or {}).get("config")
            try:
                names += [r.get("resourceName") for r in json.loads(raw or "{}").get("resourceList") or []]
            except (ValueError, AttributeError):
                continue
        return [n for n in names if n]

    def _nad_config(self, net: dict) -> str:
        spec = net.get("spec") or {}
        plugin = dict(spec.get("plugin") or {})
        try:
            ipam = json.loads(spec.get("ipam") or "{}")
        except ValueError:
            ipam = {}
        # NetToDef: the multi-nic meta plugin wraps the main plugin and the IPAM
        return json.dumps({"cniVersion": "0.3.0", "name": net["metadata"]["name"], "type": "multi-nic",
                           "subnet": spec.get("subnet", ""), "masterNets": spec.get("masterNets") or [],
                           "multiNICIPAM": bool(spec.get("multiNICIPAM")), "daemonPort": 11000,
                           "ipam": ipam, "plugin": plugin}, separators=(",", ":"))

    def _ensure(self, res_key: str, body: dict) -> dict:
        """Create or update what a controller owns, keeping the object's status (no write when equal)."""
        meta = body["metadata"]
        cur = self.store.find(self.r[res_key], meta.get("namespace"), meta["name"])
        if cur is None:
            return self.store.put_internal(self.r[res_key], body)
        new = dict(cur, **{k: v for k, v in body.items() if k != "metadata"})
        new["metadata"] = dict(cur["metadata"], labels=meta.get("labels") or cur["metadata"].get("labels"),
                               ownerReferences=meta.get("ownerReferences"))
        if not new["metadata"]["labels"]:
            new["metadata"].pop("labels")
        return cur if new == cur else self.store.put_internal(self.r[res_key], new)

    def _owner(self, obj: dict, api_version: str) -> list[dict]:
        return [{"apiVersion": api_version, "kind": obj["kind"], "name": obj["metadata"]["name"],
                 "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]

    def reconcile_multinic(self, now: float) -> None:
        if self._deployment_running(MNC_CONTROLLER_IMAGE) is None:
            return
        nodes = [n for n in self.cluster.nodes() if self.cluster.sim.node_cfg(n["metadata"]["name"]).get("nics")]
        for net in self.store.select(self.r["mnc"], None):
            if not self._synced(net, now):
                continue
            try:
                self._reconcile_network(net, len(nodes))
            except ApiError as exc:
                self.cluster.event(net, "Warning", "ReconcileError", exc.message, "multi-nic-cni-operator")

    def _reconcile_network(self, net: dict, daemons: int) -> None:
        meta = net["metadata"]
        name = meta["name"]
        if meta.get("deletionTimestamp"):
            for nad in self.store.select(self.r["nad"], None, field_selector="metadata.name=%s" % name):
                if any(ref.get("uid") == meta["uid"] for ref in nad["metadata"].get("ownerReferences") or []):
                    self.store.delete(self.r["nad"], nad["metadata"]["namespace"], name, {}, {})
            if MNC_FINALIZER in (meta.get("finalizers") or []):
                body = dict(net, metadata=dict(meta, finalizers=[f for f in meta["finalizers"] if f != MNC_FINALIZER]))
                self.store.replace(self.r["mnc"], None, name, body, {})
            return
        if MNC_FINALIZER not in (meta.get("finalizers") or []):
            body = dict(net, metadata=dict(meta, finalizers=[*(meta.get("finalizers") or []), MNC_FINALIZER]))
            net = self.store.replace(self.r["mnc"], None, name, body, {})[0]
        spec = net.get("spec") or {}
        status = dict(net.get("status") or {})
        status.update({"discovery": {"existDaemon": daemons, "infoAvailable": daemons, "cidrProcessed": daemons if spec.get("multiNICIPAM") else 0},
                       "computeResults": status.get("computeResults") or [], "lastSyncTime": status.get("lastSyncTime") or now_rfc3339(),
                       "routeStatus": "Success" if spec.get("multiNICIPAM") else "N/A", "message": status.get("message", "")})
        if (spec.get("plugin") or {}).get("type") == "mellanox" and not self._sriov_resources():
            status.update(configStatus="Failed", message="Failed to create %s: failed to get resource annotation from sriov plugin config" % name)
        else:
            status["configStatus"] = "Success"
            for ns in self._namespaces(net):
                self._ensure("nad", {
                    "metadata": {"name": name, "namespace": ns, "ownerReferences": self._owner(net, "multinic.fms.io/v1")},
                    "spec": {"config": self._nad_config(net)}})
        if status != (net.get("status") or {}):
            self.store.put_internal(self.r["mnc"], dict(net, status=status))

    # ----------------------------------------------------- NVIDIA Network Operator
    def reconcile_nicclusterpolicy(self, now: float) -> None:
        operator = self._deployment_running(NETOP_IMAGE)
        if operator is None:
            return  # the operator is not installed: nothing acts on the policy, it gets no status
        ns = operator["metadata"]["namespace"]  # the operator deploys its operands in its own namespace
        for ncp in self.store.select(self.r["ncp"], None):
            if ncp["metadata"].get("deletionTimestamp") or not self._synced(ncp, now):
                continue
            if ncp["metadata"]["name"] != NCP_NAME:
                status = {"state": "ignore", "reason": "NicClusterPolicy with name %s exists" % NCP_NAME}
            else:
                status = self._apply_policy(ncp, ns)
            if status != ncp.get("status"):
                self.store.put_internal(self.r["ncp"], dict(ncp, status=status))

    def _apply_policy(self, ncp: dict, ns: str) -> dict:
        spec = ncp.get("spec") or {}
        applied = []
        rdma = spec.get("rdmaSharedDevicePlugin")
        if rdma:
            applied.append({"name": "state-RDMA-device-plugin", "state": self._rdma_plugin(ncp, rdma, ns)})
        for key, state in (("secondaryNetwork", "state-multus-cni"), ("nvIpam", "state-nv-ipam-cni")):
            if spec.get(key):
                applied.append({"name": state, "state": "ready"})
        ready = all(a["state"] == "ready" for a in applied)
        return {"state": "ready" if ready else "notReady", "appliedStates": applied}

    def _rdma_plugin(self, ncp: dict, rdma: dict, ns: str) -> str:
        owner = self._owner(ncp, "mellanox.com/v1alpha1")
        labels = {"app": "rdma-shared-dp", "nvidia.network-operator.state": "state-RDMA-device-plugin"}
        self._ensure("cm", {"metadata": {"name": "rdma-devices", "namespace": ns, "ownerReferences": owner, "labels": labels},
                            "data": {"config.json": rdma.get("config") or ""}})
        pod_spec = {
            "hostNetwork": True, "priorityClassName": "system-node-critical",
            "containers": [{"name": "rdma-shared-dp", "image": "%s/%s:%s" % (rdma["repository"], rdma["image"], rdma["version"]),
                            "securityContext": {"privileged": True},
                            "volumeMounts": [{"name": "config", "mountPath": "/k8s-rdma-shared-dev-plugin"}]}],
            "volumes": [{"name": "config", "configMap": {"name": "rdma-devices", "items": [{"key": "config.json", "path": "config.json"}]}}],
        }
        if (ncp.get("spec") or {}).get("nodeAffinity"):
            pod_spec["affinity"] = {"nodeAffinity": ncp["spec"]["nodeAffinity"]}
        ds = self._ensure("ds", {
            "metadata": {"name": "rdma-shared-dp-ds", "namespace": ns, "ownerReferences": owner, "labels": labels},
            "spec": {"selector": {"matchLabels": {"app": "rdma-shared-dp"}},
                     "template": {"metadata": {"labels": {"app": "rdma-shared-dp"}}, "spec": pod_spec}}})
        status = ds.get("status") or {}
        desired = status.get("desiredNumberScheduled", 0)
        return "ready" if desired and status.get("numberReady") == desired else "notReady"
