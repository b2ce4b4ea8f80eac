# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Tenants on one fabric, the isolating SR-IOV path: per tenant whose hosts have virtual functions, the node label,
the SriovNetworkNodePolicy that makes the VFs and their device-plugin resource, and the ResourceQuota that keeps the
tenant's pods off every other tenant's VFs and off the RDMA shared device plugin.

Sources (read at the commits named; docs/tenants.md "Kubernetes" says what each gives):

- k8snetworkplumbingwg/sriov-network-operator at 249e200 (2026-08-06), api/v1/sriovnetworknodepolicy_types.go:
  ``resourceName``, ``nodeSelector`` (map), ``priority`` (0-99, "0 is highest": doc/api/node-policies-api.md),
  ``numVfs`` (min 0), ``nicSelector.pfNames``, ``deviceType`` (netdevice|vfio-pci), ``isRdma``, ``linkType``
  (eth|ETH|ib|IB). pkg/webhook/validate.go ``staticValidateSriovNetworkNodePolicy`` refuses a resourceName outside
  ``^[a-zA-Z0-9]([a-zA-Z0-9_-]*[a-zA-Z0-9])?$`` or over 63 characters (since f900cbcf5, 2026-07-30; before it
  ``^[a-zA-Z0-9_]+$``, 27568c7f0: we render what both accept), a nicSelector without vendor/deviceID/pfNames/
  rootDevices/netFilter, a ``pf#a-b`` range it cannot parse; ``validatePolicyForNodeState`` refuses numVfs 0 and,
  on Mellanox NICs, numVfs above ``MlxMaxVFs`` = 128; ``dynamicValidateSriovNetworkNodePolicy`` refuses a policy
  whose nodeSelector matches no node ("no matched node is selected by the nodeSelector in CR ..."): the role
  labels the nodes first; ``validatePfNames`` refuses two policies naming the same PF on one node with overlapping
  VF ranges ("VF index range in ... is overlapped with existing policy ..."): hence one tenant per node.
  The NVIDIA Network Operator's chart runs that webhook only with ``admissionControllers.enabled`` (default
  false, Mellanox/network-operator b06827e deployment/network-operator/values.yaml): what it would refuse is
  refused here, before the cluster is touched, so it never depends on the webhook.
- doc/ib-vf-guid-static-configuration.md (same commit): on InfiniBand VF i takes the i-th GUID of the host file
  ``/etc/sriov-operator/infiniband/guids`` (written by playbooks/infiniband.yml from ``nics[].vf_guids``); those GUIDs are members of
  the tenant's partition in OpenSM's partitions.conf.
- Mellanox/network-operator b06827e deployment/network-operator/values.yaml: ``sriovNetworkOperator.enabled``
  deploys the SR-IOV Network Operator; ``sriov-network-operator.operator.resourcePrefix: "nvidia.com"`` is the
  prefix of its device plugin's resources (the sub-chart's own default is ``openshift.io``,
  charts/sriov-network-operator/values.yaml; its operator.yaml passes it as env RESOURCE_PREFIX).
- Kubernetes docs, "Resource Quotas", section "Resource quota for extended resources"
  (https://kubernetes.io/docs/concepts/policy/resource-quotas/): extended resources cannot be overcommitted,
  so only ``requests.<resource>`` quota items are allowed; ``"0"`` lets no pod of the namespace request it.
"""

from __future__ import annotations

import re
from typing import Any

SRIOV_API = "sriovnetwork.openshift.io/v1"
POLICY_KIND = "SriovNetworkNodePolicy"
# The NVIDIA Network Operator's values for its sriov-network-operator sub-chart (module docstring).
DEFAULT_PREFIX = "nvidia.com"
DEFAULT_PRIORITY = 99
# The operator's namespace: the sub-chart runs in the Network Operator's release namespace (its schema default).
DEFAULT_NAMESPACE = "nvidia-network-operator"
QUOTA_NAME = "lossless-fabric-tenant"
# A tenant whose hosts differ in their VF layout needs one policy per layout, each selecting its own nodes: the
# webhook refuses two policies of one node naming the same PF (validatePfNames), so the layout is a second label.
LAYOUT_LABEL = "lossless.fabric/tenant-vf-layout"
MLX_MAX_VFS = 128  # pkg/webhook/validate.go MlxMaxVFs
_RESOURCE_RE = re.compile(r"[a-zA-Z0-9_]+")  # the webhook before f900cbcf5
_RESOURCE_NEW_RE = re.compile(r"[a-zA-Z0-9]([a-zA-Z0-9_-]*[a-zA-Z0-9])?")  # the webhook since f900cbcf5
# Kubernetes object names and label values (https://kubernetes.io/docs/concepts/overview/working-with-objects/names/,
# .../labels/#syntax-and-character-set): a DNS subdomain; a label value of at most 63 characters.
_DNS_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE_RE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")


class SriovError(ValueError):
    """What the operator's CRD or webhook would refuse, said before the cluster is touched."""


def resource_name(tenant: str) -> str:
    """The tenant's device-plugin resource name: its name with '-' -> '_' (both webhooks accept it)."""
    name = str(tenant).replace("-", "_")
    if len(name) > 63 or not _RESOURCE_RE.fullmatch(name) or not _RESOURCE_NEW_RE.fullmatch(name):
        raise SriovError("tenant %s: resourceName %r: the SR-IOV operator's webhook takes 1-63 of a-z A-Z 0-9 _ "
                         "(starting and ending with a letter or digit): rename the tenant" % (tenant, name))
    return name


def check_prefix(prefix: Any) -> str:
    """An extended resource's prefix is a DNS subdomain outside kubernetes.io (Kubernetes "Extended resources")."""
    if not isinstance(prefix, str) or len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.fullmatch(prefix) \
            or prefix == "kubernetes.io" or prefix.endswith(".kubernetes.io"):
        raise SriovError("k8s_rdma_sriov_resource_prefix %r: a DNS subdomain outside kubernetes.io (e.g. nvidia.com)" % (prefix,))
    return prefix


def check_namespace(namespace: Any) -> str:
    """The policies' namespace: the operator respects policies in its own namespace only (validate.go warns)."""
    if not isinstance(namespace, str) or len(namespace) > 63 or not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", namespace):
        raise SriovError("k8s_rdma_sriov_namespace %r: the SR-IOV operator's namespace, a DNS label" % (namespace,))
    return namespace


def check_priority(priority: Any) -> int:
    """The CRD's priority: an integer 0-99 (kubebuilder Minimum=0, Maximum=99)."""
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 99:
        raise SriovError("k8s_rdma_sriov_priority %r: an integer 0-99 (the SriovNetworkNodePolicy CRD's range; 0 is the highest)" % (priority,))
    return priority


def host_vfs(tenant: str, hosts: list, devices: dict) -> dict:
    """host -> [(selector, value, numVfs)] of the NICs with VFs, from ``devices.<host>.nics[].vfs`` (C1; absent = 0).

    The policy selects a PF by its netdev (``nicSelector.pfNames``) or, for a NIC without a netdev (InfiniBand device
    data often has none), by its PCI address ``nics[].pci`` (``nicSelector.rootDevices``, "PCI address of SR-IoV PF":
    api/v1/sriovnetworknodepolicy_types.go)."""
    out: dict[str, list[tuple[str, str, int]]] = {}
    for host in hosts or []:
        device = devices.get(host) if isinstance(devices, dict) else None
        if not isinstance(device, dict):
            continue  # the plan has no device data for it: no VFs known (the intent checks the hosts)
        for index, nic in enumerate(device.get("nics") or []):
            vfs = (nic or {}).get("vfs", 0)
            key = "devices.%s.nics[%d].vfs" % (host, index)
            if isinstance(vfs, bool) or not isinstance(vfs, int) or vfs < 0:
                raise SriovError("tenant %s: %s is %r, not a number of VFs (0 or more)" % (tenant, key, vfs))
            if vfs == 0:
                continue
            if vfs > MLX_MAX_VFS:
                raise SriovError("tenant %s: %s is %d: the SR-IOV operator's webhook refuses numVfs above %d on Mellanox NICs"
                                 % (tenant, key, vfs, MLX_MAX_VFS))
            netdev, pci = nic.get("netdev"), nic.get("pci")
            if isinstance(netdev, str) and netdev:
                if "#" in netdev:
                    raise SriovError("tenant %s: devices.%s.nics[%d].netdev %r: '#' starts a VF range in nicSelector.pfNames"
                                     % (tenant, host, index, netdev))
                out.setdefault(host, []).append(("pfNames", netdev, vfs))
            elif isinstance(pci, str) and pci:
                out.setdefault(host, []).append(("rootDevices", pci, vfs))
            else:
                raise SriovError("tenant %s: devices.%s.nics[%d] has VFs but neither a netdev nor a pci address: the policy selects "
                                 "the NIC by its netdev (nicSelector.pfNames) or its PCI address (nicSelector.rootDevices)"
                                 % (tenant, host, index))
    return out


def _name(value: str, what: str) -> str:
    if len(value) > 253 or not _DNS_SUBDOMAIN_RE.fullmatch(value):
        raise SriovError("%s %r is not a Kubernetes object name (lower-case DNS subdomain): rename the tenant" % (what, value))
    return value


def policies(tenant: str, layout: dict, transport: str, namespace: str, priority: int, labels: dict) -> tuple[list, dict]:
    """([SriovNetworkNodePolicy], {host: node labels}) for one tenant's hosts with VFs (``host_vfs``).

    One policy per distinct numVfs among a layout's NICs (numVfs is per policy, for every PF it selects) and per
    selector kind (the webhook's validateNicModel matches a NIC against every selector given: pfNames and
    rootDevices in one policy would select no NIC that has only one of them); hosts with different layouts get a
    layout label and policies of their own, so that no node has two policies on one PF."""
    if not _LABEL_VALUE_RE.fullmatch(tenant) or len(tenant) > 63:
        raise SriovError("tenant %s: the node label lossless.fabric/tenant takes a label value (up to 63 of A-Z a-z 0-9 - _ ., "
                         "a letter or digit at both ends): rename the tenant" % tenant)
    resource = resource_name(tenant)
    layouts = sorted({tuple(sorted(nics)) for nics in layout.values()})
    nodes: dict[str, dict] = {}
    out = []
    for number, nics in enumerate(layouts, start=1):
        selector = {"lossless.fabric/tenant": tenant}
        if len(layouts) > 1:
            selector[LAYOUT_LABEL] = str(number)
        for host, host_nics in layout.items():
            if tuple(sorted(host_nics)) == nics:
                nodes[host] = dict(selector)
        for kind, num_vfs in sorted({(kind, vfs) for kind, _value, vfs in nics}, key=lambda kv: (kv[1], kv[0])):
            out.append({"apiVersion": SRIOV_API, "kind": POLICY_KIND,
                        "metadata": {"namespace": namespace, "labels": dict(labels)},
                        "spec": {"resourceName": resource, "nodeSelector": selector, "priority": priority, "numVfs": num_vfs,
                                 "nicSelector": {kind: sorted(value for k, value, vfs in nics if vfs == num_vfs and k == kind)},
                                 "deviceType": "netdevice", "isRdma": True, "linkType": "ib" if transport == "infiniband" else "eth"}})
    for index, policy in enumerate(out, start=1):
        suffix = "" if len(out) == 1 else "-%d" % index
        policy["metadata"]["name"] = _name("lossless-fabric-%s%s" % (tenant, suffix), "tenant %s: the policy name" % tenant)
    return out, nodes


def quota(namespace: str, forbidden: list, labels: dict) -> dict:
    """The ResourceQuota that lets no pod of the namespace request any of ``forbidden`` (extended resources)."""
    return {"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"namespace": namespace, "name": QUOTA_NAME, "labels": dict(labels)},
            "spec": {"hard": {"requests.%s" % res: "0" for res in sorted(set(forbidden))}}}


def node_patch(host: str, labels: dict) -> dict:
    """A Node merge patch setting (or, with None values, removing) our labels; the node itself is never ours."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": host, "labels": dict(labels)}}


def stale_node_patches(wanted: list, nodes: list) -> list:
    """Patches removing our tenant labels from nodes that carry them but are not (or no longer so) in ``wanted``.

    ``wanted``: the rendered node patches; ``nodes``: the cluster's Nodes (any labels). A node whose tenant
    label differs from the wanted one is covered by its wanted patch; one carrying a layout label it should no
    longer have gets that label removed."""
    want = {p["metadata"]["name"]: p["metadata"]["labels"] for p in wanted or []}
    out = []
    for node in nodes or []:
        meta = (node or {}).get("metadata") or {}
        have = meta.get("labels") or {}
        mine = {key: None for key in ("lossless.fabric/tenant", LAYOUT_LABEL) if key in have and key not in want.get(meta.get("name"), {})}
        if mine:
            out.append(node_patch(meta.get("name"), mine))
    return sorted(out, key=lambda p: p["metadata"]["name"])
