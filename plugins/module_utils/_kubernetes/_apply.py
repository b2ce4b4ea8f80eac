# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The k8s_rdma role's apply plan: which rendered objects go to the API server
in which call, and which a check-mode run can only list.

kubernetes.core.k8s shows a diff only when one call applies one object, so
with --diff every object is its own call; otherwise one call per component.
In check mode the API server dry-runs each object, which it cannot do for an
object whose namespace or kind (CRD) does not exist yet: those are listed as
"would create" (deferred) instead of being sent.
"""

from __future__ import annotations

from typing import Any

# The order components are applied in: the CRDs first (the role waits for them to be Established); the tenants'
# networks and RBAC last (_tenants.py), once the cluster-wide pieces exist.
ORDER = ("multi_nic_cni_crds", "device_plugin", "multi_nic_cni", "multinicnetwork", "nicclusterpolicy", "tenants")


def label(obj: dict, namespace: bool = True) -> str:
    """``Kind namespace/name`` (``Kind name`` when cluster-scoped or ``namespace`` is false): how a report names an object."""
    meta = obj.get("metadata") or {}
    where = meta["namespace"] + "/" if namespace and meta.get("namespace") else ""
    return "%s %s%s" % (obj.get("kind"), where, meta.get("name"))


def batches(manifests: dict[str, list[dict]], apis: dict[str, Any], missing_namespaces: list[str], check_mode: bool, diff_mode: bool) -> dict:
    """{'batches': [{'component', 'label', 'objects'}], 'deferred': ['Kind ns/name', ...]}.

    ``manifests``: component -> rendered objects (the 'namespaces' component is
    applied on its own, before); ``apis``: apiVersion -> kinds the cluster
    serves (k8s_cluster_info's ``apis``); ``missing_namespaces``: our
    namespaces the cluster does not have yet. A batch may be empty (every
    object deferred): the role skips it."""
    unknown = sorted(set(manifests) - set(ORDER) - {"namespaces"})
    if unknown:
        raise ValueError("components %s have no place in the apply order (%s)" % (", ".join(unknown), ", ".join(ORDER)))
    missing = set(missing_namespaces or ())
    deferred: list[str] = []
    kept: dict[str, list[int]] = {}
    for component in ORDER:
        for index, obj in enumerate(manifests.get(component) or ()):
            if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
                raise ValueError("%s[%d]: not a Kubernetes object (kind, apiVersion, metadata)" % (component, index))
            namespace = obj["metadata"].get("namespace") or ""
            served = obj.get("kind") in ((apis or {}).get(obj.get("apiVersion")) or {})
            if check_mode and (namespace in missing or not served):
                deferred.append(label(obj))
            else:
                kept.setdefault(component, []).append(index)
    out = []
    for component in ORDER:
        if component not in manifests:
            continue
        objects = manifests[component] or []
        keep = kept.get(component, [])
        if diff_mode:
            out.extend(
                {"component": component, "label": label(obj, namespace=False), "objects": [obj] if index in keep else []} for index, obj in enumerate(objects)
            )
        else:
            out.append({"component": component, "label": component, "objects": [objects[index] for index in keep]})
    return {"batches": out, "deferred": deferred}
