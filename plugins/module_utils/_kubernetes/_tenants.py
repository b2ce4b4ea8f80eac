# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Tenants on one fabric, the Kubernetes half: per tenant namespace, its own network attachment and the RDMA
resource, the tenant's RBAC, and the check that nothing in one tenant's namespace names another tenant's network.

Why SR-IOV and not the shared device plugin (sources read at the commits named):

- Mellanox/k8s-rdma-shared-dev-plugin hands every pod that requests its resource the same HCA (README, "shared
  mode"): the pods share the port and so its P_Key table and GID table. A pod can open a QP on any P_Key index of
  that table: the shared plugin cannot keep one tenant off another tenant's partition.
- Mellanox/ipoib-cni (bc0726f, pkg/ipoib/ipoib.go) creates an IPoIB child of ``master`` with the master's own
  P_Key (``pkey := ipoibLnk.Pkey & 0x7fff``); its config has no pkey field (README: name, type, master, mtu,
  ipam). With master = the host's P_Key child (``ib0.8002``) a pod gets IPoIB on the tenant's partition, but its
  RDMA device is still the shared HCA: IP isolation, not RDMA isolation.
- k8snetworkplumbingwg/ib-sriov-cni (543060d, README "Configuration reference"): ``type: ib-sriov``, ``pkey``
  ("used by ib-kubernetes to add pkey with guid to InfiniBand subnet manager"), ``link_state``, ``rdmaIsolation``
  (RDMA network namespace isolation), ``ibKubernetesEnabled``, ``ipam``; one VF per pod. Mellanox/ib-kubernetes
  (528f63f, pkg/utils/utils.go IbSriovCniSpec reads ``pkey``; pkg/daemon/daemon.go adds the pod's VF GUID to that
  P_Key through its subnet-manager plugin). This is the path that isolates: the VF's own GUID is a member of the
  tenant's partition only. ib-kubernetes' plugins are ``ufm`` and ``noop`` (pkg/sm/plugins): with OpenSM the
  membership of the VF GUIDs must be in partitions.conf (GUID_POOL_RANGE_START/END of ib-kubernetes' config).
  Its UFM plugin refuses a P_Key with the membership bit (``IsPKeyValid: pkey == pkey & 0x7fff``, ufm.go) and
  always adds members as ``full``: the NAD carries the 15-bit P_Key.
- RoCE: k8snetworkplumbingwg/sriov-cni's ``vlan`` field tags the pod's VF (README "Configuration reference").

What is built (``_sriov.py``): a tenant whose hosts have VFs (device data ``nics[].vfs``) gets them from the SR-IOV
Network Operator (SriovNetworkNodePolicy per tenant, resource ``<prefix>/<tenant with _>`` on its nodes only) and a
ResourceQuota keeping its pods off other tenants' VFs and off the shared plugin. With OpenSM there is no ib-kubernetes
(its plugins: ufm, noop), so the VF GUIDs are static (the operator's guids file, members of the tenant's partition)
and the NAD says ``ibKubernetesEnabled: false``: ib-sriov-cni (543060d, cmd/ib-sriov-cni/main.go
``getNetConfNetns``) with true refuses every pod whose CNI args lack ib-kubernetes' ``mellanox.infiniband.app=
configured`` ("InfiniBand status ... is not configured please check mellanox ib-kubernetes") and every VF without a
GUID from ib-kubernetes ("GUID must be provided by ib-kubernetes"); with false and no ``guid`` it leaves the VF's
GUID as the operator set it (pkg/sriov/sriov.go ``applyVFGuid`` acts only on a given GUID).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes import _sriov

# Object labels: the k8s_rdma role's own, plus the tenant's name (state absent and the isolation check select on it).
LABELS = {"app.kubernetes.io/managed-by": "lossless.fabric", "lossless.fabric/role": "k8s_rdma"}
TENANT_LABEL = "lossless.fabric/tenant"
# The Multus annotations (k8snetworkplumbingwg/multus-cni docs/how-to-use.md): a NAD's device-plugin resource,
# and a pod's list of networks.
RESOURCE_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName"
NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
NAD_API = "k8s.cni.cncf.io/v1"
# Defaults of the SR-IOV network device plugin resources (role variables override them): the names of
# Mellanox/ib-kubernetes deployment/examples/ib-crd.yaml (IB) and the sriov-network-device-plugin's RoCE example.
DEFAULT_RESOURCES = {"infiniband": "mellanox.com/mlnx_sriov_rdma_ib", "roce": "mellanox.com/mlnx_sriov_rdma_roce"}
# The tenant's permissions in its own namespace: run benchmarks (MPIJobs) and read what they make; read - never
# write - its network attachment, so a tenant cannot write a NAD naming another tenant's P_Key or VLAN.
TENANT_RULES = [
    {"apiGroups": ["kubeflow.org"], "resources": ["mpijobs"], "verbs": ["get", "list", "watch", "create", "delete", "deletecollection"]},
    {"apiGroups": [""], "resources": ["pods", "pods/log", "events"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [NAD_API.split("/", maxsplit=1)[0]], "resources": ["network-attachment-definitions"], "verbs": ["get", "list", "watch"]},
]
CNI_VERSION = "0.3.1"
_PKEY_RE = re.compile(r"0x[0-9a-fA-F]{1,4}")


class TenantError(ValueError):
    """A tenant the Kubernetes half cannot render, with the reason."""


def plan_tenants(plan: Any) -> dict:
    """The plan's ``tenants`` mapping (docs: interfaces point 5), {} when the plan has none.

    The one place that reads that shape: name -> {hosts, namespace, kubeconfig, vlan, partition, qos_level}."""
    tenants = (plan or {}).get("tenants") if isinstance(plan, dict) else None
    if tenants is None:
        return {}
    if not isinstance(tenants, dict):
        raise TenantError("the plan's tenants is %r, not a mapping of tenant name to tenant" % (tenants,))
    return tenants


def network_name(tenant: str) -> str:
    """The tenant's NetworkAttachmentDefinition: named after the tenant, so a reference to another tenant's is visible."""
    return "%s-rdma" % tenant


def group_name(tenant: str) -> str:
    """The RBAC group a tenant's credentials carry (its identity provider or token file puts users in it)."""
    return "lossless.fabric:tenant:%s" % tenant


def base_pkey(pkey: Any) -> str:
    """The 15-bit P_Key ib-kubernetes takes (IsPKeyValid: pkey == pkey & 0x7fff): 0x8002 -> 0x0002."""
    if isinstance(pkey, int) and not isinstance(pkey, bool) and 0 <= pkey <= 0xFFFF:
        value = pkey & 0x7FFF  # YAML reads an unquoted 0x8002 as the number 32770
    elif isinstance(pkey, str) and _PKEY_RE.fullmatch(pkey):
        value = int(pkey, 16) & 0x7FFF
    else:
        raise TenantError("P_Key %r is not 0x followed by 1-4 hex digits" % (pkey,))
    if value in (0, 0x7FFF):
        raise TenantError("P_Key %r is the default partition (0x7fff) or invalid: a tenant needs its own" % (pkey,))
    return "0x%04x" % value


def cni_config(name: str, tenant: dict, transport: str, ipam: dict | None, with_vfs: bool = False) -> dict:
    """The CNI config of the tenant's NetworkAttachmentDefinition (fields cited in the module docstring).

    ``with_vfs``: the tenant's VFs come from the SR-IOV operator with static GUIDs (no ib-kubernetes with OpenSM):
    ``ibKubernetesEnabled`` false (module docstring)."""
    if transport == "infiniband":
        partition = tenant.get("partition")
        if not partition:
            raise TenantError("InfiniBand tenant %s has no partition: its pods would share the default partition" % name)
        conf: dict[str, Any] = {"cniVersion": CNI_VERSION, "name": network_name(name), "type": "ib-sriov",
                                "pkey": base_pkey(partition.get("pkey")), "link_state": "enable",
                                "rdmaIsolation": True, "ibKubernetesEnabled": not with_vfs}
        if ipam:
            conf["ipam"] = ipam  # optional for ib-sriov (NCCL over IB addresses by LID/GID, not IP)
        return conf
    if not ipam:
        # sriov-cni: RoCEv2 GIDs are made from the VF's IP addresses; without IPAM the pod has no RoCEv2 GID.
        raise TenantError("RoCE tenant %s needs IPAM (RoCEv2 GIDs come from the VF's IP address): give k8s_rdma_tenant_ipam.%s" % (name, name))
    conf = {"cniVersion": CNI_VERSION, "name": network_name(name), "type": "sriov", "ipam": ipam}
    if tenant.get("vlan") is not None:
        conf["vlan"] = int(tenant["vlan"])
    return conf


def manifests(tenants: dict, transport: str, resources: dict | None = None, ipam: dict | None = None,
              subjects: dict | None = None, devices: dict | None = None, sriov: dict | None = None) -> dict:
    """{'namespaces': [Namespace...], 'tenants': [objects], 'nodes': [Node label patches]}.

    ``tenants``: per tenant with a namespace its NAD, Role, RoleBinding and, where tenants have VFs, its
    ResourceQuota; then the SriovNetworkNodePolicies (in ``sriov.namespace``). ``nodes``: merge patches of the
    VF tenants' nodes (``lossless.fabric/tenant``): patched, never applied (a Node is not ours).
    ``resources``: transport -> SR-IOV resource name of a tenant without VFs (DEFAULT_RESOURCES); ``ipam``:
    tenant -> CNI ipam dict; ``subjects``: tenant -> RBAC subjects (default: the Group ``group_name(tenant)``);
    ``devices``: the plan's ``devices`` (``nics[].vfs``); ``sriov``: {namespace, prefix, priority,
    shared_resources (the RDMA shared device plugin's ``prefix/name``s)}."""
    try:
        return _manifests(tenants, transport, resources, ipam, subjects, devices, sriov)
    except _sriov.SriovError as exc:
        raise TenantError(str(exc)) from exc


def _manifests(tenants: dict, transport: str, resources: dict | None, ipam: dict | None,
               subjects: dict | None, devices: dict | None, sriov: dict | None) -> dict:
    if transport not in ("infiniband", "roce"):
        raise TenantError("transport %r: tenants need infiniband or roce" % (transport,))
    resource = dict(DEFAULT_RESOURCES, **(resources or {}))[transport]
    sriov = sriov or {}
    prefix = _sriov.check_prefix(sriov.get("prefix") or _sriov.DEFAULT_PREFIX)
    priority = _sriov.check_priority(sriov.get("priority", _sriov.DEFAULT_PRIORITY))
    operator_ns = _sriov.check_namespace(sriov.get("namespace") or _sriov.DEFAULT_NAMESPACE)
    shared = list(sriov.get("shared_resources") or [])
    namespaces: list[dict] = []
    objects: list[dict] = []
    policies: list[dict] = []
    nodes: dict[str, dict] = {}
    node_owner: dict[str, str] = {}
    owner: dict[str, str] = {}
    vf_resource: dict[str, str] = {}
    named = [name for name in sorted(tenants) if (tenants[name] or {}).get("namespace")]
    # a tenant without a namespace has no Kubernetes half (bare-metal or its own cluster)
    for name in named:
        tenant = tenants[name] or {}
        layout = _sriov.host_vfs(name, tenant.get("hosts") or [], devices or {})
        if not layout:
            continue
        vf_resource[name] = "%s/%s" % (prefix, _sriov.resource_name(name))
        labels = dict(LABELS, **{TENANT_LABEL: name, "app.kubernetes.io/name": "tenant"})
        made, selected = _sriov.policies(name, layout, transport, operator_ns, priority, labels)
        for host in sorted(selected):
            if host in node_owner:
                raise TenantError("host %s is in tenants %s and %s, both with VFs: its node carries one %s label and the SR-IOV "
                                  "operator refuses two policies on one PF" % (host, node_owner[host], name, TENANT_LABEL))
            node_owner[host] = name
            nodes[host] = selected[host]
        policies.extend(made)
    for name in named:
        tenant = tenants[name] or {}
        ns = tenant["namespace"]
        if ns in owner:
            raise TenantError("tenants %s and %s share namespace %s: a namespace is one tenant's" % (owner[ns], name, ns))
        owner[ns] = name
        labels = dict(LABELS, **{TENANT_LABEL: name, "app.kubernetes.io/name": "tenant"})
        meta = {"namespace": ns, "labels": labels}
        namespaces.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}})
        conf = cni_config(name, tenant, transport, (ipam or {}).get(name), with_vfs=name in vf_resource)
        objects.append({"apiVersion": NAD_API, "kind": "NetworkAttachmentDefinition",
                        "metadata": dict(meta, name=network_name(name), annotations={RESOURCE_ANNOTATION: vf_resource.get(name, resource)}),
                        "spec": {"config": json.dumps(conf, sort_keys=True)}})
        objects.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                        "metadata": dict(meta, name="lossless-fabric-tenant"), "rules": TENANT_RULES})
        subj = (subjects or {}).get(name) or [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": group_name(name)}]
        objects.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                        "metadata": dict(meta, name="lossless-fabric-tenant"),
                        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "lossless-fabric-tenant"},
                        "subjects": subj})
        # Every other tenant's VFs, and (for a tenant with VFs) the shared plugin's HCA: a tenant without VFs keeps
        # the shared plugin (it is not isolated by a device plugin; docs/tenants.md says so).
        forbidden = [res for other, res in vf_resource.items() if other != name] + (shared if name in vf_resource else [])
        if forbidden:
            objects.append(_sriov.quota(ns, forbidden, labels))
    patches = [_sriov.node_patch(host, nodes[host]) for host in sorted(nodes)]
    return {"namespaces": namespaces, "tenants": objects + policies, "nodes": patches}


def _marks(name: str, tenant: dict, transport: str) -> dict:
    """What identifies a tenant's network in another object: its NAD name, its P_Key, its VLAN."""
    marks: dict[str, Any] = {"network": network_name(name), "namespace": tenant.get("namespace")}
    partition = tenant.get("partition") or {}
    if transport == "infiniband" and partition.get("pkey"):
        marks["pkey"] = int(base_pkey(partition["pkey"]), 16)
    if transport == "roce" and tenant.get("vlan") is not None:
        marks["vlan"] = int(tenant["vlan"])
    return marks


def _networks(annotation: Any, own_ns: str) -> list[tuple[str, str]]:
    """(namespace, name) of each network of a pod's networks annotation (JSON list or "[ns/]name[@if],...")."""
    out = []
    if not annotation:
        return out
    text = str(annotation).strip()
    if text.startswith("["):
        try:
            items = json.loads(text)
        except ValueError:
            return [("?", text)]
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict):
                out.append((item.get("namespace") or own_ns, str(item.get("name"))))
        return out
    for item in text.split(","):
        item = item.strip().split("@", 1)[0]
        ns, _slash, name = item.rpartition("/")
        out.append((ns or own_ns, name))
    return out


def isolation_findings(tenants: dict, transport: str, objects: list[dict]) -> list[dict]:
    """Everything in one tenant's namespace that names another tenant's network, or binds another tenant's group.

    ``objects``: what the cluster holds in the tenants' namespaces (NADs, pods, MPIJobs, RoleBindings).
    Each finding: {tenant, namespace, object, names, detail}. [] = isolated. A tenant's resource is the one its own
    NAD names (``<tenant>-rdma`` in its namespace): a pod or MPIJob asking for another tenant's (different) resource
    names that tenant's VFs (the quota refuses it at admission; this finds what was there before the quota)."""
    marks = {name: _marks(name, t or {}, transport) for name, t in tenants.items() if (t or {}).get("namespace")}
    by_ns = {m["namespace"]: name for name, m in marks.items()}
    for obj in objects:
        meta = obj.get("metadata") or {}
        owner = by_ns.get(meta.get("namespace"))
        if obj.get("kind") == "NetworkAttachmentDefinition" and owner and meta.get("name") == network_name(owner):
            marks[owner]["resource"] = (meta.get("annotations") or {}).get(RESOURCE_ANNOTATION)
    findings = []
    for obj in objects:
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace")
        if ns not in by_ns:
            continue
        me = by_ns[ns]
        label = "%s %s/%s" % (obj.get("kind"), ns, meta.get("name"))
        for other, mark in sorted(marks.items()):
            if other == me:
                continue
            for detail in _names_other(obj, ns, mark, other, marks[me].get("resource")):
                findings.append({"tenant": me, "namespace": ns, "object": label, "names": other, "detail": detail})
    return findings


def _names_other(obj: dict, ns: str, mark: dict, other: str, own_resource: Any = None) -> list[str]:
    kind = obj.get("kind")
    out = []
    theirs = mark.get("resource")
    if theirs and theirs != own_resource and theirs in _requested(obj):
        out.append("requests tenant %s's resource %s" % (other, theirs))
    if kind == "NetworkAttachmentDefinition":
        try:
            conf = json.loads((obj.get("spec") or {}).get("config") or "{}")
        except ValueError:
            conf = {}
        pkey = conf.get("pkey")
        if "pkey" in mark and isinstance(pkey, str) and _PKEY_RE.fullmatch(pkey) and int(pkey, 16) & 0x7FFF == mark["pkey"]:
            out.append("its config carries tenant %s's P_Key %s" % (other, pkey))
        if "vlan" in mark and conf.get("vlan") == mark["vlan"]:
            out.append("its config carries tenant %s's VLAN %s" % (other, mark["vlan"]))
        if conf.get("name") == mark["network"]:
            out.append("its config is named %s, tenant %s's network" % (mark["network"], other))
    if kind == "RoleBinding":
        for subject in obj.get("subjects") or []:
            if subject.get("kind") == "Group" and subject.get("name") == group_name(other):
                out.append("binds tenant %s's group %s" % (other, group_name(other)))
            if subject.get("kind") == "ServiceAccount" and subject.get("namespace") == mark["namespace"]:
                out.append("binds a service account of tenant %s's namespace %s" % (other, mark["namespace"]))
    for annotation in _pod_annotations(obj):
        for net_ns, net in _networks(annotation, ns):
            if net_ns == mark["namespace"] or net == mark["network"]:
                out.append("attaches network %s/%s of tenant %s" % (net_ns, net, other))
    return out


def _pod_specs(obj: dict) -> list[dict]:
    """The pod spec of a pod, or those of the pod templates of an MPIJob."""
    if obj.get("kind") == "Pod":
        return [obj.get("spec") or {}]
    if obj.get("kind") == "MPIJob":
        specs = ((obj.get("spec") or {}).get("mpiReplicaSpecs") or {}).values()
        return [((s or {}).get("template") or {}).get("spec") or {} for s in specs]
    return []


def _requested(obj: dict) -> set:
    """Every resource a pod (or an MPIJob's pods) requests or limits, in any container."""
    out: set = set()
    for spec in _pod_specs(obj):
        for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            resources = (container or {}).get("resources") or {}
            for key in ("requests", "limits"):
                out.update((resources.get(key) or {}).keys())
    return out


def _pod_annotations(obj: dict) -> list[Any]:
    """The networks annotations of a pod, or of the pod templates of an MPIJob."""
    if obj.get("kind") == "Pod":
        return [((obj.get("metadata") or {}).get("annotations") or {}).get(NETWORKS_ANNOTATION)]
    if obj.get("kind") == "MPIJob":
        specs = ((obj.get("spec") or {}).get("mpiReplicaSpecs") or {}).values()
        return [(((s or {}).get("template") or {}).get("metadata") or {}).get("annotations", {}).get(NETWORKS_ANNOTATION) for s in specs]
    return []
