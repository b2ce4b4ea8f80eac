# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Putting Kubernetes objects back as they were before a change window (playbooks/tenant.yml's roll-back).

Before the window, each object the change will write is read (``kubernetes.core.k8s_info``, one result per object)
and kept as it is (``snapshot``). After a roll-back each is read again and compared with its copy (``plan``): put
back where the window changed or removed it, deleted where it did not exist before, left alone where it is as it
was. Generic by apiVersion/kind/namespace/name, so every kind the tenants' filter renders is covered without naming
it.

A put back is a replace (PUT), not a merge, so what the window added goes too: the fields the rendered object has
(metadata, spec, rules, subjects...: what the window's apply wrote) as the copy has them, the others as they are
now (a Node the filter labels keeps a cordon or taint made meanwhile). It carries the resourceVersion the object has
now: the API server refuses an update of a custom resource without one ("metadata.resourceVersion: Invalid value:
0x0: must be specified for an update": kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/generic/
registry/store.go Update, apiextensions-apiserver pkg/registry/customresource/strategy.go AllowUnconditionalUpdate
false), and an object someone changed in between is then a 409 Conflict, not overwritten blind.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._kubernetes._apply import label

# The metadata the API server owns (an update must not carry them from an old copy), and the status subresource (an
# update of the object does not write it).
SERVER_METADATA = ("resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "selfLink")


class RestoreError(ValueError):
    """Input the snapshot or the plan cannot use, with the reason."""


def live_copy(obj: dict) -> dict:
    """The object without its status and without the metadata the API server owns."""
    out = {key: value for key, value in obj.items() if key != "status"}
    out["metadata"] = {key: value for key, value in (obj.get("metadata") or {}).items() if key not in SERVER_METADATA}
    return out


def _read(result: Any, where: str) -> tuple[bool, dict | None]:
    """(served, the object or None) from one ``kubernetes.core.k8s_info`` result (``api_found``, ``resources``)."""
    if not isinstance(result, dict) or not isinstance(result.get("resources", []), list):
        raise RestoreError("%s: not a kubernetes.core.k8s_info result (api_found, resources): %r" % (where, result))
    resources = result.get("resources") or []
    if len(resources) > 1:
        raise RestoreError("%s: k8s_info found %d objects for one name" % (where, len(resources)))
    return bool(result.get("api_found", True)), (resources[0] if resources else None)


def _pairs(objects: Any, results: Any, what: str) -> list[tuple[Any, Any]]:
    if not isinstance(objects, list) or not isinstance(results, list):
        raise RestoreError("%s: needs a list of objects and a list of k8s_info results" % what)
    if len(objects) != len(results):
        raise RestoreError("%s: %d objects but %d k8s_info results (one per object, in order)" % (what, len(objects), len(results)))
    return list(zip(objects, results))


def snapshot(rendered: list, found: list) -> list[dict]:
    """One entry per rendered object: ``object`` (label), ``served`` (the cluster serves its kind; one that it does
    not, a CRD not installed, cannot exist and is neither put back nor deleted), ``key`` (apiVersion, kind, name,
    namespace), ``fields`` (the top-level fields the rendered object writes) and ``live`` (the copy, or None where it
    does not exist). ``found[i]`` is the k8s_info result for ``rendered[i]``."""
    out = []
    for index, (obj, result) in enumerate(_pairs(rendered, found, "snapshot")):
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict) or not obj.get("kind"):
            raise RestoreError("snapshot: object %d is not a Kubernetes object (apiVersion, kind, metadata)" % index)
        served, live = _read(result, label(obj))
        meta = obj["metadata"]
        out.append({"object": label(obj), "served": served,
                    "key": {"apiVersion": obj.get("apiVersion"), "kind": obj["kind"], "name": meta.get("name"),
                            "namespace": meta.get("namespace")},
                    "fields": [key for key in obj if key not in ("apiVersion", "kind", "status")],
                    "live": live_copy(live) if live is not None else None})
    return out


def plan(entries: list, now: list) -> dict:
    """What the roll-back does: ``entries`` (per served snapshot entry: ``object``, ``key``, ``action`` - ``put back``,
    ``deleted`` or ``unchanged``), ``put_back`` (the objects to replace, in snapshot order: namespaces first) and
    ``delete`` (references to delete, namespaces last). ``now[i]`` is the k8s_info result for ``entries[i]``'s key,
    read after the roll-back of the subnet managers' files."""
    actions, put_back, delete = [], [], []
    for entry, result in _pairs(entries, now, "plan"):
        if not isinstance(entry, dict) or not {"object", "served", "key", "fields", "live"} <= set(entry):
            raise RestoreError("plan: %r is not a snapshot entry" % (entry,))
        if not entry["served"]:
            continue
        _served, raw = _read(result, entry["object"])
        live = entry["live"]
        current = live_copy(raw) if raw is not None else None
        if current is not None and live is not None:
            want = {key: value for key, value in current.items() if key not in entry["fields"]}
            want.update({key: value for key, value in live.items() if key in entry["fields"]})
            action = "unchanged" if want == current else "put back"
        else:
            want = live
            action = "unchanged" if live is None and current is None else ("put back" if live is not None else "deleted")
        actions.append({"object": entry["object"], "key": entry["key"], "action": action})
        if action == "put back":
            obj = dict(want)
            if raw is not None:
                obj["metadata"] = dict(obj["metadata"], resourceVersion=raw["metadata"]["resourceVersion"])
            put_back.append(obj)
        elif action == "deleted":
            key = entry["key"]
            ref = {"apiVersion": key["apiVersion"], "kind": key["kind"], "metadata": {"name": key["name"]}}
            if key.get("namespace"):
                ref["metadata"]["namespace"] = key["namespace"]
            delete.append(ref)
    delete.sort(key=lambda ref: ref["kind"] == "Namespace")  # stable: namespaces last, the rest in snapshot order
    return {"entries": actions, "put_back": put_back, "delete": delete}
