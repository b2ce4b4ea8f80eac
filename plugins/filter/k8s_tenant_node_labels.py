# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.k8s_tenant_node_labels: thin adapter over _kubernetes/_sriov.stale_node_patches."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes import _sriov

DOCUMENTATION = r"""
name: k8s_tenant_node_labels
short_description: Node patches removing tenant labels that no tenant wants any more
version_added: 0.1.0
description:
  - From the cluster's Nodes, merge patches (C(null) values) removing C(lossless.fabric/tenant) and
    C(lossless.fabric/tenant-vf-layout) from every node that carries one the wanted patches do not set - a host
    that left its tenant, or every labelled node with C(wanted) empty (k8s_rdma state absent).
positional: wanted
options:
  _input:
    description: The cluster's Nodes (kubernetes.core.k8s_info resources).
    type: list
    elements: dict
    required: true
  wanted:
    description: The node patches M(lossless.fabric.k8s_tenant_manifests) returned as C(nodes).
    type: list
    elements: dict
    required: true
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Labels to remove
  ansible.builtin.set_fact:
    stale: "{{ nodes.resources | lossless.fabric.k8s_tenant_node_labels(tenant_objects.nodes) }}"
"""

RETURN = r"""
_value:
  description: Node merge patches, one per node that loses a label.
  type: list
  elements: dict
"""


def k8s_tenant_node_labels(nodes, wanted):
    if not isinstance(nodes, list) or not isinstance(wanted, list):
        raise AnsibleFilterError("k8s_tenant_node_labels: nodes and wanted must be lists, not %s and %s" % (type(nodes).__name__, type(wanted).__name__))
    return _sriov.stale_node_patches(wanted, nodes)


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"k8s_tenant_node_labels": k8s_tenant_node_labels}
