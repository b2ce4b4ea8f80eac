# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.k8s_apply_batches: thin adapter over _k8s_apply.batches."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes import _apply as _k8s_apply

DOCUMENTATION = r"""
name: k8s_apply_batches
short_description: The k8s_rdma role's apply calls - which objects go in which kubernetes.core.k8s call
version_added: 0.1.0
description:
  - Splits the rendered objects of each component into the calls the role makes, in apply order (the Multi-NIC CNI CRDs
    first) - one call per component, or one per object with O(diff_mode) (M(kubernetes.core.k8s) shows a diff only for a
    call that applies one object).
  - With O(check_mode), an object whose namespace or kind the cluster does not have yet cannot be dry-run by the API
    server; it is left out of its call and listed in C(deferred) (shown as "would create").
positional: apis, missing_namespaces, check_mode, diff_mode
options:
  _input:
    description: Component name to its rendered objects.
    type: dict
    required: true
  apis:
    description: API version to the kinds the cluster serves (C(apis) of M(kubernetes.core.k8s_cluster_info)).
    type: dict
    required: true
  missing_namespaces:
    description: Namespaces of the role that the cluster does not have yet.
    type: list
    elements: str
    required: true
  check_mode:
    description: The run is a check-mode run.
    type: bool
    required: true
  diff_mode:
    description: The run shows diffs.
    type: bool
    required: true
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Plan the apply calls
  ansible.builtin.set_fact:
    batches: "{{ manifests | lossless.fabric.k8s_apply_batches(cluster.apis, [], ansible_check_mode, ansible_diff_mode) }}"
"""

RETURN = r"""
_value:
  description:
    - C(batches) - a list of C(component), C(label) (the component, or C(Kind namespace/name) per object) and C(objects)
      (possibly empty, when every object of the call is deferred); C(deferred) - C(Kind namespace/name) of each object
      a check-mode run cannot dry-run yet.
  type: dict
"""


def k8s_apply_batches(manifests, apis, missing_namespaces, check_mode, diff_mode):
    if not isinstance(manifests, dict) or not isinstance(apis, dict):
        raise AnsibleFilterError("k8s_apply_batches: needs the rendered manifests (dict) and the cluster's apis (dict)")
    try:
        return _k8s_apply.batches(manifests, apis, list(missing_namespaces or []), bool(check_mode), bool(diff_mode))
    except ValueError as exc:
        raise AnsibleFilterError("k8s_apply_batches: %s" % exc) from exc


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"k8s_apply_batches": k8s_apply_batches}
