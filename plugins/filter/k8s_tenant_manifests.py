# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.k8s_tenant_manifests: thin adapter over _kubernetes/_tenants.manifests."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes import _tenants as _k8s_tenants

DOCUMENTATION = r"""
name: k8s_tenant_manifests
short_description: Each tenant's namespace, network attachment and RBAC, from the fabric plan
version_added: 0.1.0
description:
  - From the plan's C(tenants) (M(lossless.fabric.fabric_plan)), per tenant with a namespace - its Namespace, its
    NetworkAttachmentDefinition C(<tenant>-rdma) (InfiniBand - C(ib-sriov) with the tenant's 15-bit P_Key for
    ib-kubernetes; RoCE - C(sriov) with the tenant's VLAN where the intent gives one), and a Role and RoleBinding that let
    the tenant's group run MPIJobs and read, never write, its network attachment. C(docs/tenants.md) says why SR-IOV.
  - Per tenant whose hosts have virtual functions (the plan's C(devices.<host>.nics[].vfs)) - a SriovNetworkNodePolicy
    C(lossless-fabric-<tenant>) (resource C(<prefix>/<tenant with _>) on the tenant's nodes only), its NAD naming that
    resource (InfiniBand - C(ibKubernetesEnabled) false, static VF GUIDs with OpenSM), the ResourceQuota
    C(lossless-fabric-tenant) of every tenant namespace (no request of another tenant's VFs, nor of the shared device
    plugin's resources by a tenant with VFs), and C(nodes) - merge patches labelling its nodes
    C(lossless.fabric/tenant=<tenant>) (kubernetes.core.k8s state patched; never applied).
  - Refuses, naming tenant, key and value, what the SR-IOV operator's CRD or webhook would refuse.
positional: transport, resources, ipam, subjects, sriov
options:
  _input:
    description: The fabric plan (C(fabric_plan_result)); its C(tenants) and C(devices) (without C(devices) no tenant has VFs).
    type: dict
    required: true
  transport:
    description: The intent's transport, C(infiniband) or C(roce).
    type: str
    required: true
  resources:
    description: Transport to the SR-IOV device plugin resource a tenant's NAD names.
    type: dict
  ipam:
    description: Tenant name to the CNI C(ipam) of its network (required for RoCE).
    type: dict
  subjects:
    description: Tenant name to its RBAC subjects (default - the Group C(lossless.fabric:tenant:<name>)).
    type: dict
  sriov:
    description:
      - C(namespace) - the SR-IOV Network Operator's namespace (default C(nvidia-network-operator)); C(prefix) - its
        resource prefix (default C(nvidia.com)); C(priority) - the policies' priority 0-99 (default 99);
        C(shared_resources) - the RDMA shared device plugin's resources (C(prefix/name)) a tenant with VFs may not request.
    type: dict
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Render the tenants' objects
  ansible.builtin.set_fact:
    tenant_objects: "{{ fabric_plan_result | lossless.fabric.k8s_tenant_manifests(fabric_plan_result.intent.transport) }}"
"""

RETURN = r"""
_value:
  description:
    - C(namespaces) - the tenants' Namespaces; C(tenants) - the NADs, Roles, RoleBindings, ResourceQuotas and
      SriovNetworkNodePolicies, each labelled C(lossless.fabric/tenant); C(nodes) - Node label merge patches.
  type: dict
"""


def k8s_tenant_manifests(plan, transport, resources=None, ipam=None, subjects=None, sriov=None):
    try:
        devices = plan.get("devices") if isinstance(plan, dict) else None
        return _k8s_tenants.manifests(_k8s_tenants.plan_tenants(plan), transport, resources or {}, ipam or {}, subjects or {},
                                      devices or {}, sriov or {})
    except _k8s_tenants.TenantError as exc:
        raise AnsibleFilterError("k8s_tenant_manifests: %s" % exc) from exc


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"k8s_tenant_manifests": k8s_tenant_manifests}
