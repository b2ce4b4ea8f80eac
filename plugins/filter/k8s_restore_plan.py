# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.k8s_restore_plan: thin adapter over _kubernetes/_restore.plan."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes import _restore

DOCUMENTATION = r"""
name: k8s_restore_plan
short_description: What a roll-back does to put Kubernetes objects back as a snapshot holds them
version_added: 0.1.0
description:
  - Compares each served entry of a M(lossless.fabric.k8s_restore_snapshot) with the object as the cluster holds it now
    (its C(kubernetes.core.k8s_info) result) - C(put back) where the window changed or removed it, C(deleted) where it did
    not exist before, C(unchanged) otherwise.
  - A put back replaces the fields the rendered object writes with the copy's and keeps the others as they are now, with
    the object's current resourceVersion (the API server refuses an update of a custom resource without one).
positional: now
options:
  _input:
    description: The snapshot entries.
    type: list
    elements: dict
    required: true
  now:
    description: The C(kubernetes.core.k8s_info) results, one per snapshot entry, in order.
    type: list
    elements: dict
    required: true
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: What to put back and delete
  ansible.builtin.set_fact:
    restore: "{{ snapshot | lossless.fabric.k8s_restore_plan(now.results) }}"
"""

RETURN = r"""
_value:
  description: >-
    C(entries) (per served entry - C(object), C(key), C(action)), C(put_back) (objects to replace, namespaces first) and
    C(delete) (references to delete, namespaces last).
  type: dict
"""


def k8s_restore_plan(entries, now):
    try:
        return _restore.plan(entries, now)
    except _restore.RestoreError as exc:
        raise AnsibleFilterError("k8s_restore_plan: %s" % exc) from exc


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"k8s_restore_plan": k8s_restore_plan}
