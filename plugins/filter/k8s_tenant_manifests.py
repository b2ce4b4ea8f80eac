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
positional: transport, resources, ipam, subjects
options:
  _input:
    description: The fabric plan (C(fabric_plan_result)); its C(tenants).
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
  description: C(namespaces) - the tenants' Namespaces; C(tenants) - the NADs, Roles and RoleBindings.
  type: dict
"""


def k8s_tenant_manifests(plan, transport, resources=None, ipam=None, subjects=None):
    try:
        return _k8s_tenants.manifests(_k8s_tenants.plan_tenants(plan), transport, resources or {}, ipam or {}, subjects or {})
    except _k8s_tenants.TenantError as exc:
        raise AnsibleFilterError("k8s_tenant_manifests: %s" % exc) from exc


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"k8s_tenant_manifests": k8s_tenant_manifests}
