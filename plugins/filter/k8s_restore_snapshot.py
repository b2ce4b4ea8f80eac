# SPDX-License-Identifier: GPL-3.0-or-later
"""lossless.fabric.k8s_restore_snapshot: thin adapter over _kubernetes/_restore.snapshot."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes import _restore

DOCUMENTATION = r"""
name: k8s_restore_snapshot
short_description: The live copy of Kubernetes objects a change window will write, to put them back after a roll-back
version_added: 0.1.0
description:
  - One entry per rendered object, from the C(kubernetes.core.k8s_info) result read for it - C(object) (C(Kind ns/name)),
    C(served) (the cluster serves its kind), C(key) (apiVersion, kind, name, namespace), C(fields) (the top-level fields the
    rendered object writes) and C(live) (the object as the cluster holds it, without status and the metadata the API server
    owns; null where it does not exist).
  - Give the result to M(lossless.fabric.k8s_restore_plan) after a roll-back (docs/tenants.md, "tenant.yml").
positional: found
options:
  _input:
    description: The rendered objects (M(lossless.fabric.k8s_tenant_manifests)' lists, flattened).
    type: list
    elements: dict
    required: true
  found:
    description: The C(kubernetes.core.k8s_info) results, one per object, in order (a loop's C(results)).
    type: list
    elements: dict
    required: true
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Keep the live copies
  ansible.builtin.set_fact:
    snapshot: "{{ objects | lossless.fabric.k8s_restore_snapshot(found.results) }}"
"""

RETURN = r"""
_value:
  description: One entry per object - C(object), C(served), C(key), C(fields), C(live).
  type: list
  elements: dict
"""


def k8s_restore_snapshot(objects, found):
    try:
        return _restore.snapshot(objects, found)
    except _restore.RestoreError as exc:
        raise AnsibleFilterError("k8s_restore_snapshot: %s" % exc) from exc


class FilterModule:
    """lossless.fabric filters."""

    def filters(self):
        return {"k8s_restore_snapshot": k8s_restore_snapshot}
