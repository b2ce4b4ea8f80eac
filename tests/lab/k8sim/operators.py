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

SR-IOV Network Operator (k8snetworkplumbingwg/sriov-network-operator, commit
249e20012faf17b4f38057f29608bde2b21c5c9a): only while a Deployment runs the image
``sriov-network-operator``, (a) its validating webhook ``operator-webhook.sriovnetwork.openshift.io``
(bindata/manifests/operator-webhook/003-webhook.yaml) checks SriovNetworkNodePolicy creates and updates with
pkg/webhook/validate.go's rules and texts; (b) the config daemon keeps one SriovNetworkNodeState per node in the
operator's namespace (status.interfaces: the node's SR-IOV capable NICs, totalvfs > 0) and, after the scaled delay
``sriov_sync``, applies the policies of that namespace whose nodeSelector matches the node: a NIC named in
nicSelector.pfNames (``<pf>`` or ``<pf>#<first>-<last>``) gets numVfs VFs and the device plugin advertises
``<RESOURCE_PREFIX>/<resourceName>`` = the VFs matched (numVfs, or the range's size), through the cluster's one
advertising mechanism (controllers._advertise: rdma_register delay, device_plugin_grace on withdrawal). A policy
asking more VFs than a NIC's totalvfs fails the generic plugin's configSriovPFDevice
(pkg/host/internal/sriov/sriov.go "cannot config SRIOV device: NumVfs (%d) is larger than TotalVfs (%d)"); in the
operator's default configurationMode ``daemon`` a failed apply leaves the node state ``InProgress``
(pkg/daemon/daemon.go sets InProgress before applying and returns the error; only the systemd mode writes
``Failed`` with lastSyncError), and nothing is advertised. Not emulated: the mutating webhook's defaults other than
the CRD's, the Mellanox plugin's firmware TotalVfs change and node reboot, rootDevices/vendor/deviceID selection of
VFs, drain.
"""
from __future__ import annotations

import json
import re
from typing import Any

from . import crds
from .store import ApiError, now_rfc3339

MNC_FINALIZER = "finalizers.multinicnetwork.multinic.fms.io"
MNC_CONTROLLER_IMAGE = "multi-nic-cni-controller"
NETOP_IMAGE = "network-operator"  # nvcr.io/nvidia/cloud-native/network-operator (not sriov-network-operator)
NCP_NAME = "nic-cluster-policy"

SRIOV_IMAGE = "sriov-network-operator"  # the operator's image (deployment/sriov-network-operator-chart values.yaml)
SRIOV_WEBHOOK = "operator-webhook.sriovnetwork.openshift.io"  # bindata/manifests/operator-webhook/003-webhook.yaml
# deployment/sriov-network-operator-chart values.yaml operator.resourcePrefix (the chart always sets RESOURCE_PREFIX;
# the NVIDIA Network Operator chart's sriov-network-operator subchart sets "nvidia.com")
SRIOV_DEFAULT_PREFIX = "openshift.io"
MLX_MAX_VFS = 128  # pkg/webhook/validate.go MlxMaxVFs
_SRIOV_RESOURCE_NAME = re.compile(r"^[a-zA-Z0-9]([a-zA-Z0-9_-]*[a-zA-Z0-9])?$")  # validate.go resourceNameRegexp


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
        self.r["sriovp"] = res("sriovnetwork.openshift.io", "v1", "sriovnetworknodepolicies")
        self.r["sriovs"] = res("sriovnetwork.openshift.io", "v1", "sriovnetworknodestates")
        self.seen: dict[str, float] = {}  # uid -> first seen (operator_sync delay)
        self.sriov_wanted: dict[tuple[str, str], int] = {}  # (node, prefix/resourceName) -> VFs the plugin advertises
        self.sriov_since: dict[str, tuple[str, float]] = {}  # node -> (desired config, since): the daemon's sync delay
        self.store.admission.append(self.admit_sriov_policy)

    def reconcile(self, now: float) -> None:
        self.reconcile_crds()
        self.reconcile_multinic(now)
        self.reconcile_nicclusterpolicy(now)
        self.reconcile_sriov(now)

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

    # ----------------------------------------------------- SR-IOV Network Operator

    def sriov_operator(self) -> tuple[dict | None, str]:
        dep = self._deployment_running(SRIOV_IMAGE)
        if dep is None:
            return None, ""
        for cont in ((dep["spec"].get("template") or {}).get("spec") or {}).get("containers") or []:
            if image_name(cont.get("image") or "") == SRIOV_IMAGE:
                for env in cont.get("env") or []:
                    if env.get("name") == "RESOURCE_PREFIX" and env.get("value"):
                        return dep, str(env["value"])
        return dep, SRIOV_DEFAULT_PREFIX

    def admit_sriov_policy(self, res: Any, obj: dict, operation: str, old: dict | None, dry_run: bool) -> list[str]:
        """The operator's validating webhook on CREATE/UPDATE (validateSriovNetworkNodePolicy); a denial as the
        apiserver returns it (apiserver webhookerrors.ToStatusErr: 400, the webhook's Status reason, its message
        'admission webhook "<name>" denied the request: <reason>')."""
        del operation, old, dry_run  # CREATE and UPDATE alike; the new object is checked against the other policies
        if (res.group, res.plural) != ("sriovnetwork.openshift.io", "sriovnetworknodepolicies"):
            return []
        operator, _prefix = self.sriov_operator()
        if operator is None:
            return []  # no operator, no webhook configuration
        warnings = []
        ns = operator["metadata"]["namespace"]
        name = obj["metadata"]["name"]
        if obj["metadata"].get("namespace") != ns:
            warnings.append(name + " is created or updated but not used. Only policy in %s namespace is respected." % ns)
        why = sriov_static_error(obj) or self.sriov_dynamic_error(obj, ns)
        if why:
            raise ApiError(400, why, 'admission webhook "%s" denied the request: %s' % (SRIOV_WEBHOOK, why))
        return warnings

    def sriov_dynamic_error(self, policy: dict, ns: str) -> str:
        """validate.go dynamicValidateSriovNetworkNodePolicy: nodes by nodeSelector, their SriovNetworkNodeState
        interfaces, the numVfs limits, and VF ranges overlapping another policy of the operator's namespace."""
        spec = policy.get("spec") or {}
        name = policy["metadata"]["name"]
        num = int(spec.get("numVfs") or 0)
        nodes = [n for n in self.cluster.nodes() if _policy_selects_node(policy, n)]
        if not nodes:
            return "no matched node is selected by the nodeSelector in CR %s" % name
        others = [p for p in self.store.select(self.r["sriovp"], ns) if p["metadata"]["name"] != name]
        selected = False
        for node in nodes:
            state = self.store.find(self.r["sriovs"], ns, node["metadata"]["name"])
            for iface in ((state or {}).get("status") or {}).get("interfaces") or []:
                if not _policy_selects_nic(policy, iface):
                    continue
                selected = True
                if num == 0:
                    return "numVfs(%d) in CR %s is not allowed" % (num, name)
                limit = MLX_MAX_VFS if iface.get("vendor") == "15b3" else int(iface.get("totalvfs") or 0)
                if num > limit and iface.get("vendor") in ("15b3", "8086"):
                    return "numVfs(%d) in CR %s exceed the maximum allowed value(%d) interface(%s)" % (
                        num, name, limit, iface.get("name"))
                if spec.get("externallyManaged"):  # the VFs exist already: the policy must fit them
                    if num > int(iface.get("numVfs") or 0):
                        return ("numVfs(%d) in CR %s is higher than the virtual functions allocated for the PF "
                                "externally value(%d)" % (num, name, int(iface.get("numVfs") or 0)))
                    if spec.get("linkType") and spec["linkType"].lower() != str(iface.get("linkType", "")).lower():
                        return ("LinkType(%s) in CR %s is not equal to the LinkType for the PF externally value(%s)"
                                % (spec["linkType"], name, iface.get("linkType")))
            for other in others:
                why = _pf_overlap(policy, other) if _policy_selects_node(other, node) else ""
                if why:
                    return why
        if not selected:
            return "no supported NIC is selected by the nicSelector in CR %s" % name
        return ""

    def reconcile_sriov(self, now: float) -> None:
        operator, prefix = self.sriov_operator()
        if operator is None:
            self.sriov_wanted = {}
            return
        ns = operator["metadata"]["namespace"]
        policies = sorted((p for p in self.store.select(self.r["sriovp"], ns) if not p["metadata"].get("deletionTimestamp")),
                          key=lambda p: (int((p.get("spec") or {}).get("priority", 99)), p["metadata"]["name"]))
        wanted: dict[tuple[str, str], int] = {}
        for node in self.cluster.nodes():
            node_name = node["metadata"]["name"]
            ifaces = self._sriov_interfaces(node_name)
            config, counts, error = self._sriov_desired(node, ifaces, policies, prefix)
            key = json.dumps(config, sort_keys=True)
            since = self.sriov_since.get(node_name)
            if since is None or since[0] != key:
                since = self.sriov_since[node_name] = (key, now)
            applied = not error and now - since[1] >= self.cluster.scaled(self.cluster.sim.delays["sriov_sync"])
            state = self.store.find(self.r["sriovs"], ns, node_name)
            if state is None:
                state = self.store.put_internal(self.r["sriovs"], {
                    "metadata": {"name": node_name, "namespace": ns}, "spec": {"interfaces": config}})
            elif (state.get("spec") or {}).get("interfaces") != config:
                state = self.store.put_internal(self.r["sriovs"], dict(state, spec={"interfaces": config}))
            old_status = state.get("status") or {}
            numvfs = {c["name"]: c["numVfs"] for c in config} if applied else {}
            status = {"interfaces": [dict(i, numVfs=numvfs[i["name"]]) if numvfs.get(i["name"]) else i for i in ifaces],
                      "syncStatus": "Succeeded" if applied else "InProgress"}
            if old_status.get("lastSyncError") and not applied:  # kept while InProgress (daemon.go updateSyncState)
                status["lastSyncError"] = old_status["lastSyncError"]
            if status != old_status:
                self.store.put_internal(self.r["sriovs"], dict(state, status=status))
            if applied:
                for res_name, count in counts.items():
                    wanted[(node_name, res_name)] = count
        self.sriov_wanted = wanted

    def _sriov_interfaces(self, node_name: str) -> list[dict]:
        """What the config daemon discovers (status.interfaces): the SR-IOV capable PFs (totalvfs > 0)."""
        out = []
        for nic in self.cluster.sim.node_cfg(node_name).get("nics") or []:
            total = int(nic.get("totalvfs") or 0)
            if total <= 0 or not nic.get("netdev"):
                continue
            out.append({"name": nic["netdev"], "pciAddress": nic.get("pci") or "", "vendor": nic.get("vendor", "15b3"),
                        "deviceID": nic.get("device_id", "1021"), "driver": nic.get("driver", "mlx5_core"),
                        "linkType": "IB" if nic.get("link_type") == "infiniband" else "ETH", "totalvfs": total})
        return out

    def _sriov_desired(self, node: dict, ifaces: list[dict], policies: list[dict],
                       prefix: str) -> tuple[list[dict], dict[str, int], str]:
        """The node state's spec.interfaces the operator renders (numVfs, vfGroups), the VFs per resource, and the
        daemon's error applying it (configSriovPFDevice)."""
        config: dict[str, dict] = {}
        counts: dict[str, int] = {}
        error = ""
        for policy in policies:
            if not _policy_selects_node(policy, node):
                continue
            spec = policy.get("spec") or {}
            for iface in ifaces:
                if not _policy_selects_nic(policy, iface):
                    continue
                first, last = _vfs_on(policy, iface["name"])
                entry = config.setdefault(iface["name"], {"name": iface["name"], "pciAddress": iface["pciAddress"],
                                                          "numVfs": 0, "vfGroups": []})
                entry["numVfs"] = max(entry["numVfs"], int(spec.get("numVfs") or 0))
                if spec.get("linkType"):
                    entry["linkType"] = spec["linkType"]
                entry["vfGroups"].append({"resourceName": spec.get("resourceName"), "policyName": policy["metadata"]["name"],
                                          "deviceType": spec.get("deviceType", "netdevice"), "isRdma": bool(spec.get("isRdma")),
                                          "vfRange": "%d-%d" % (first, last)})
                res_name = "%s/%s" % (prefix, spec.get("resourceName"))
                counts[res_name] = counts.get(res_name, 0) + max(0, last - first + 1)
                if entry["numVfs"] > iface["totalvfs"] and not error:
                    error = "cannot config SRIOV device: NumVfs (%d) is larger than TotalVfs (%d)" % (
                        entry["numVfs"], iface["totalvfs"])
        return [config[k] for k in sorted(config)], counts, error


# ----------------------------------------------------------- SR-IOV Network Operator helpers
def parse_pf(pf: str) -> tuple[str, int, int]:
    """api/v1/helper.go ParseVfRange: "ib0" -> ("ib0", -1, -1); "ib0#2-5" -> ("ib0", 2, 5)."""
    if "#" not in pf:
        return pf, -1, -1
    name, rng = pf.split("#", 1)
    first, last = rng.split("-", 1)
    return name, int(first), int(last)


def _pf_static_error(pf: str, num_vfs: int) -> str:
    """validate.go staticValidateSriovNetworkNodePolicy, the pfNames loop (its texts, its order)."""
    fields = pf.split("#")
    if len(fields) != 2:
        return "failed to parse %s PF name in nicSelector, probably incorrect separator character usage" % pf
    rng = fields[1].split("-")
    if len(rng) != 2:
        return "failed to parse %s PF name nicSelector, probably incorrect range character usage" % pf
    if not re.match(r"^[+-]?[0-9]+$", rng[0]):
        return "failed to parse %s PF name nicSelector, start range is incorrect" % pf
    if not re.match(r"^[+-]?[0-9]+$", rng[1]):
        return "failed to parse %s PF name nicSelector, end range is incorrect" % pf
    if int(rng[1]) < int(rng[0]):
        return "failed to parse %s PF name nicSelector, end range shall not be smaller than start range" % pf
    if not int(rng[1]) < num_vfs:
        return "failed to parse %s PF name nicSelector, end range exceeds the maximum VF index " % pf
    return ""


def sriov_static_error(policy: dict) -> str:
    """validate.go staticValidateSriovNetworkNodePolicy (the rules our policies can trip; texts verbatim)."""
    spec = policy.get("spec") or {}
    name = policy["metadata"]["name"]
    res_name = spec.get("resourceName") or ""
    if not res_name:
        return "resource name must not be empty"
    if len(res_name) > 63:
        return "resource name %s must be no more than %d characters" % (_go_quote(res_name), 63)
    if not _SRIOV_RESOURCE_NAME.match(res_name):
        return ("resource name %s is invalid: must consist of alphanumeric characters or hyphens, and must start and "
                "end with an alphanumeric character (e.g. 'myresource', 'net-device-1'), see "
                "https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names" % _go_quote(res_name))
    sel = spec.get("nicSelector") or {}
    if not any(sel.get(k) for k in ("vendor", "deviceID", "pfNames", "rootDevices", "netFilter")):
        return ("at least one of these parameters (vendor, deviceID, pfNames, rootDevices or netFilter) has to be "
                "defined in nicSelector in CR %s" % name)
    if sel.get("netFilter") and any(sel.get(k) for k in ("vendor", "deviceID", "pfNames", "rootDevices")):
        return "nicSelector fields vendor, deviceID, pfNames, and rootDevices are not allowed when netFilter is specified"
    for pf in sel.get("pfNames") or []:
        if "#" in pf:
            why = _pf_static_error(pf, int(spec.get("numVfs") or 0))
            if why:
                return why
    if spec.get("deviceType") == "vfio-pci" and spec.get("isRdma"):
        return ("'deviceType: vfio-pci' conflicts with 'isRdma: true'; Set 'deviceType' to (string)'netdevice' Or "
                "Set 'isRdma' to (bool)'false'")
    if spec.get("linkType") and spec["linkType"].lower() != "eth" and spec.get("eSwitchMode") == "switchdev":
        return "'eSwitchMode: switchdev' can be used only with ethernet links"
    return ""


def _go_quote(text: str) -> str:
    """Go's %q of a plain string."""
    return json.dumps(text)


def _policy_selects_node(policy: dict, node: dict) -> bool:
    """api/v1 helper.go (SriovNetworkNodePolicy) Selected: every nodeSelector label equal on the node."""
    labels = node["metadata"].get("labels") or {}
    return all(labels.get(k) == v for k, v in ((policy.get("spec") or {}).get("nodeSelector") or {}).items())


def _policy_selects_nic(policy: dict, iface: dict) -> bool:
    """validate.go validateNicModel / helper.go Selected for pfNames, vendor, deviceID, rootDevices."""
    sel = (policy.get("spec") or {}).get("nicSelector") or {}
    if sel.get("vendor") and sel["vendor"] != iface.get("vendor"):
        return False
    if sel.get("deviceID") and sel["deviceID"] != iface.get("deviceID"):
        return False
    if sel.get("rootDevices") and iface.get("pciAddress") not in sel["rootDevices"]:
        return False
    if sel.get("pfNames") and iface.get("name") not in [parse_pf(p)[0] for p in sel["pfNames"]]:
        return False
    return True


def _pf_overlap(current: dict, previous: dict) -> str:
    """validate.go validatePfNames for one other policy: the first PF name both policies share decides; no range is
    -1..-1 (ParseVfRange), so two policies naming the same PF without ranges overlap."""
    for cur in ((current.get("spec") or {}).get("nicSelector") or {}).get("pfNames") or []:
        cur_name, cur_first, cur_last = parse_pf(cur)
        for pre in ((previous.get("spec") or {}).get("nicSelector") or {}).get("pfNames") or []:
            pre_name, pre_first, pre_last = parse_pf(pre)
            if cur_name == pre_name:
                if cur_last < pre_first or cur_first > pre_last:
                    return ""
                return "VF index range in %s is overlapped with existing policy %s" % (cur, previous["metadata"]["name"])
    return ""


def _vfs_on(policy: dict, nic_name: str) -> tuple[int, int]:
    """(first, last) VF index this policy takes on the PF: its pfNames range, else 0..numVfs-1."""
    num = int((policy.get("spec") or {}).get("numVfs") or 0)
    for pf in ((policy.get("spec") or {}).get("nicSelector") or {}).get("pfNames") or []:
        name, first, last = parse_pf(pf)
        if name == nic_name and first >= 0:
            return first, last
    return 0, num - 1
