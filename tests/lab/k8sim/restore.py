# SPDX-License-Identifier: GPL-3.0-or-later
"""Which objects of a saved snapshot (GET /_k8sim/objects) a restarted cluster starts with.

A real cluster keeps its API objects in etcd across a restart of the control
plane and the kubelets, while what controllers own at run time is rebuilt.
Here:

- kept as saved (uid, resourceVersion, generation, creationTimestamp, status):
  every object the users and roles created (namespaces, ConfigMaps,
  DaemonSets, Deployments, CRDs, custom resources, Services, Secrets, ...),
  and what the operators own (net-attach-defs, the Network Operator's
  ConfigMap and DaemonSet), which they keep reconciling;
- dropped: pods and events (the DaemonSet controller creates the pods again,
  the device plugin then advertises its resource again), and MPIJobs: the
  emulated MPI Operator's run (outcome, replayed launcher log) lives in the
  process and cannot be resumed (nccl_benchmark deletes its jobs anyway);
- then, as the garbage collector would: objects whose owners are all gone and
  namespaced objects whose namespace is gone;
- nodes are registered again from the config (status, allocatable without the
  device-plugin resources), keeping the saved uid, creationTimestamp, spec,
  labels and annotations (the configured labels win).
"""
from __future__ import annotations

import json
import os

# group/plural of what the controllers own at run time (see the docstring)
TRANSIENT = {("", "pods"), ("", "events"), ("events.k8s.io", "events"), ("kubeflow.org", "mpijobs")}
NODES = ("", "nodes")


class RestoreError(ValueError):
    """The snapshot cannot be used; the message names the config key and the file."""


def group_plural(key: str) -> tuple[str, str]:
    """A key of GET /_k8sim/objects: 'configmaps' or 'apps/daemonsets'."""
    group, _sep, plural = key.rpartition("/")
    return group, plural


def load(path: str) -> dict[tuple[str, str], list[dict]]:
    """The snapshot file as {(group, plural): [objects]}; RestoreError when it is not one."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise RestoreError("restore %r: %s" % (path, exc)) from None
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise RestoreError("restore %r: not a snapshot of GET /_k8sim/objects ({resource: [objects]})" % path)
    out: dict[tuple[str, str], list[dict]] = {}
    for key, objects in data.items():
        for obj in objects:
            meta = obj.get("metadata") if isinstance(obj, dict) else None
            if not isinstance(meta, dict) or not all(meta.get(k) for k in ("name", "uid", "resourceVersion")):
                raise RestoreError("restore %r: a %s object without metadata.name, uid and resourceVersion: %s"
                                   % (path, key, json.dumps(obj)[:200]))
            try:
                int(meta["resourceVersion"])
            except (TypeError, ValueError):
                raise RestoreError("restore %r: %s %s: resourceVersion %r is not a number"
                                   % (path, key, meta["name"], meta["resourceVersion"])) from None
        out[group_plural(key)] = objects
    return out


def max_resource_version(snapshot: dict[tuple[str, str], list[dict]]) -> int:
    """Over every saved object, dropped ones included: new writes continue above it."""
    return max((int(o["metadata"]["resourceVersion"]) for objs in snapshot.values() for o in objs), default=0)


def node_mismatch(snapshot: dict[tuple[str, str], list[dict]], node_names: list[str]) -> str:
    """Why the snapshot belongs to another cluster ('' when its nodes are the config's)."""
    saved = sorted(o["metadata"]["name"] for o in snapshot.get(NODES, []))
    if saved != sorted(node_names):
        return "saved nodes %s, configured nodes %s" % (", ".join(saved) or "none", ", ".join(sorted(node_names)) or "none")
    return ""


def keep(snapshot: dict[tuple[str, str], list[dict]]) -> tuple[list[tuple[tuple[str, str], dict]], dict[str, int]]:
    """The objects to start with (nodes excluded) and how many of each resource were dropped."""
    node_uids = {o["metadata"]["uid"] for o in snapshot.get(NODES, [])}
    kept = [(gp, obj) for gp, objs in sorted(snapshot.items()) if gp not in TRANSIENT and gp != NODES for obj in objs]
    while True:
        uids = node_uids | {obj["metadata"]["uid"] for _gp, obj in kept}
        namespaces = {obj["metadata"]["name"] for gp, obj in kept if gp == ("", "namespaces")}
        still = [(gp, obj) for gp, obj in kept
                 if (not obj["metadata"].get("namespace") or obj["metadata"]["namespace"] in namespaces)
                 and (not obj["metadata"].get("ownerReferences")
                      or any(ref.get("uid") in uids for ref in obj["metadata"]["ownerReferences"]))]
        if len(still) == len(kept):
            break
        kept = still
    dropped: dict[str, int] = {}
    kept_uids = {obj["metadata"]["uid"] for _gp, obj in kept}
    for (group, plural), objs in snapshot.items():
        gone = sum(1 for o in objs if o["metadata"]["uid"] not in kept_uids)
        if gone and (group, plural) != NODES:
            dropped["%s/%s" % (group, plural) if group else plural] = gone
    return kept, dropped


def resolve(path: str, base_dir: str) -> str:
    return path if os.path.isabs(path) else os.path.join(base_dir, path)
