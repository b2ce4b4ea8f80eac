# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.k8s_tenant_isolation: thin adapter over _kubernetes/_tenants.isolation_findings."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes import _tenants as _k8s_tenants

DOCUMENTATION = r"""
name: k8s_tenant_isolation
short_description: What in one tenant's namespace names another tenant's network or group
version_added: 0.1.0
description:
  - Reads the objects found in the tenants' namespaces (NetworkAttachmentDefinitions, Pods, MPIJobs, RoleBindings) and
    returns one finding per object that names another tenant's network - its NAD, its P_Key or VLAN in a NAD config,
    a pod network annotation of another tenant's namespace, a pod or MPIJob asking for another tenant's RDMA resource
    (the SR-IOV VFs its NAD names) - or binds another tenant's group. An empty list is isolated.
positional: plan, transport
options:
  _input:
    description: The objects of the tenants' namespaces.
    type: list
    elements: dict
    required: true
  plan:
    description: The fabric plan (C(fabric_plan_result)); its C(tenants).
    type: dict
    required: true
  transport:
    description: The intent's transport, C(infiniband) or C(roce).
    type: str
    required: true
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Check the isolation
  ansible.builtin.set_fact:
    findings: "{{ objects | lossless.fabric.k8s_tenant_isolation(fabric_plan_result, fabric_plan_result.intent.transport) }}"
"""

RETURN = r"""
_value:
  description: One dict per finding - C(tenant), C(namespace), C(object), C(names) (the other tenant) and C(detail).
  type: list
  elements: dict
"""


def k8s_tenant_isolation(objects, plan, transport):
    """Findings: what in one tenant's namespace names another tenant's network or group ([] = isolated)."""
    if not isinstance(objects, list):
        raise AnsibleFilterError("k8s_tenant_isolation: needs a list of the objects of the tenants' namespaces")
    try:
        return _k8s_tenants.isolation_findings(_k8s_tenants.plan_tenants(plan), transport, objects)
    except _k8s_tenants.TenantError as exc:
        raise AnsibleFilterError("k8s_tenant_isolation: %s" % exc) from exc


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"k8s_tenant_isolation": k8s_tenant_isolation}
