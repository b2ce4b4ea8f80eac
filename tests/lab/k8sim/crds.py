# SPDX-License-Identifier: GPL-3.0-or-later
"""The custom resources the emulator serves, with the part of each CRD's
structural schema the apiserver enforces that our modules can trip over
(required fields, enums, types, defaults).

Sources (read, not copied): kubeflow/mpi-operator deploy/v2beta1/mpi-operator.yaml,
foundation-model-stack/multi-nic-cni config/crd/bases/multinic.fms.io_multinicnetworks.yaml,
Mellanox/network-operator config/crd/bases/mellanox.com_nicclusterpolicies.yaml,
k8snetworkplumbingwg network-attachment-definition CRD,
k8snetworkplumbingwg/sriov-network-operator config/crd/bases (SriovNetworkNodePolicy, SriovNetworkNodeState).
"""
from __future__ import annotations

from typing import Any

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

# A tiny schema language: {"type": ..., "required": [...], "properties": {...},
# "additionalProperties": schema, "items": schema, "enum": [...], "default": value,
# "minimum": n, "preserve": True (x-kubernetes-preserve-unknown-fields)}.
_REPLICA_SPEC = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer"},
        "restartPolicy": {"type": "string"},
        "template": {"type": "object", "preserve": True},
    },
}

MPIJOB_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["mpiReplicaSpecs"],
            "properties": {
                "launcherCreationPolicy": {"type": "string", "default": "AtStartup"},
                "mpiImplementation": {"type": "string", "default": "OpenMPI",
                                      "enum": ["OpenMPI", "Intel", "MPICH"]},
                "mpiReplicaSpecs": {"type": "object", "additionalProperties": _REPLICA_SPEC},
                "runLauncherAsWorker": {"type": "boolean", "default": False},
                "runPolicy": {
                    "type": "object",
                    "properties": {
                        "activeDeadlineSeconds": {"type": "integer"},
                        "backoffLimit": {"type": "integer"},
                        "cleanPodPolicy": {"type": "string"},
                        "managedBy": {"type": "string"},
                        "schedulingPolicy": {"type": "object", "preserve": True},
                        "suspend": {"type": "boolean", "default": False},
                        "ttlSecondsAfterFinished": {"type": "integer"},
                    },
                },
                "slotsPerWorker": {"type": "integer", "default": 1},
                "sshAuthMountPath": {"type": "string", "default": "/root/.ssh"},
            },
        },
        "status": {"type": "object", "preserve": True},
    },
}

NAD_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {"config": {"type": "string"}}},
    },
}

MULTINIC_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["ipam", "plugin"],
            "properties": {
                "attachPolicy": {"type": "object", "required": ["strategy"],
                                 "properties": {"strategy": {"type": "string"}, "target": {"type": "string"}}},
                "ipam": {"type": "string"},
                "masterNets": {"type": "array", "items": {"type": "string"}},
                "multiNICIPAM": {"type": "boolean"},
                "namespaces": {"type": "array", "items": {"type": "string"}},
                "plugin": {
                    "type": "object", "required": ["cniVersion", "type"],
                    "properties": {
                        "args": {"type": "object", "additionalProperties": {"type": "string"}},
                        "capabilities": {"type": "object", "additionalProperties": {"type": "boolean"}},
                        "cniVersion": {"type": "string"},
                        "dns": {"type": "object", "preserve": True},
                        "type": {"type": "string"},
                    },
                },
                "subnet": {"type": "string"},
            },
        },
        "status": {"type": "object", "preserve": True},
    },
}

_IMAGE_SPEC_REQUIRED = ["image", "repository", "version"]
NCP_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "preserve": True,
            "properties": {
                name: {"type": "object", "required": _IMAGE_SPEC_REQUIRED, "preserve": True,
                       "properties": {"image": {"type": "string"}, "repository": {"type": "string"},
                                      "version": {"type": "string"}, "config": {"type": "string"},
                                      "useCdi": {"type": "boolean"}}}
                for name in ("ofedDriver", "rdmaSharedDevicePlugin", "sriovDevicePlugin", "ibKubernetes",
                             "nvIpam", "nicFeatureDiscovery", "docaTelemetryService")
            },
        },
        "status": {"type": "object", "preserve": True},
    },
}

# k8snetworkplumbingwg/sriov-network-operator config/crd/bases/sriovnetwork.openshift.io_sriovnetworknodepolicies.yaml
# (commit 249e20012faf17b4f38057f29608bde2b21c5c9a; api/v1/sriovnetworknodepolicy_types.go kubebuilder markers):
# required nicSelector/nodeSelector/numVfs/resourceName, numVfs >= 0, priority 0..99, mtu >= 1, the enums and the
# deviceType default. resourceName has no pattern in the CRD: the operator's webhook checks it (operators.py).
SRIOV_POLICY_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["nicSelector", "nodeSelector", "numVfs", "resourceName"],
            "properties": {
                "bridge": {"type": "object", "preserve": True},
                "deviceType": {"type": "string", "enum": ["netdevice", "vfio-pci"], "default": "netdevice"},
                "eSwitchMode": {"type": "string", "enum": ["legacy", "switchdev"]},
                "excludeTopology": {"type": "boolean"},
                "externallyManaged": {"type": "boolean"},
                "isRdma": {"type": "boolean"},
                "linkType": {"type": "string", "enum": ["eth", "ETH", "ib", "IB"]},
                "mtu": {"type": "integer", "minimum": 1},
                "needVhostNet": {"type": "boolean"},
                "nicSelector": {"type": "object", "properties": {
                    "deviceID": {"type": "string"}, "netFilter": {"type": "string"},
                    "pfNames": {"type": "array", "items": {"type": "string"}},
                    "rootDevices": {"type": "array", "items": {"type": "string"}},
                    "vendor": {"type": "string"}}},
                "nodeSelector": {"type": "object", "additionalProperties": {"type": "string"}},
                "numVfs": {"type": "integer", "minimum": 0},
                "priority": {"type": "integer", "minimum": 0, "maximum": 99},
                "resourceName": {"type": "string"},
                "vdpaType": {"type": "string", "enum": ["virtio", "vhost"]},
            },
        },
        "status": {"type": "object", "preserve": True},
    },
}

# sriovnetwork.openshift.io_sriovnetworknodestates.yaml (same commit): written by the operator and its config daemon.
SRIOV_STATE_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "preserve": True},
        "status": {"type": "object", "preserve": True},
    },
}

# Fields of the v2beta1 MPIJob spec and the first kubeflow/mpi-operator release whose CRD has them
# (manifests/base/kubeflow.org_mpijobs.yaml at tags v0.4.0, v0.5.0, v0.6.0). An older operator's structural schema
# prunes a newer field without a word, as the apiserver prunes every unknown field of a custom resource.
MPIJOB_FIELD_SINCE = {"launcherCreationPolicy": (0, 5, 0), "runLauncherAsWorker": (0, 5, 0),
                      "runPolicy.managedBy": (0, 6, 0)}
MPI_OPERATOR_DEFAULT = "0.6.0"


def _version(text: str) -> tuple[int, ...]:
    parts = str(text).lstrip("v").split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError("mpi_operator.version %r is not a release such as 0.6.0" % (text,))
    return tuple(int(p) for p in parts)


def mpijob_schema(version: str = MPI_OPERATOR_DEFAULT) -> dict:
    """MPIJOB_SCHEMA as the CRD of that operator release has it (fields it does not know removed)."""
    import copy  # pylint: disable=import-outside-toplevel

    have = _version(version)
    schema = copy.deepcopy(MPIJOB_SCHEMA)
    for field, since in MPIJOB_FIELD_SINCE.items():
        if have < since:
            node = schema["properties"]["spec"]
            *parents, leaf = field.split(".")
            for parent in parents:
                node = node["properties"][parent]
            node["properties"].pop(leaf, None)
    return schema


def _openapi(schema: dict) -> dict:
    """Our tiny schema language back into openAPIV3Schema (type, properties, required, enum, default)."""
    out: dict[str, Any] = {k: schema[k] for k in ("type", "required", "enum", "default") if k in schema}
    if schema.get("preserve"):
        out["x-kubernetes-preserve-unknown-fields"] = True
    if "properties" in schema:
        out["properties"] = {k: _openapi(v) for k, v in schema["properties"].items()}
    if "additionalProperties" in schema:
        out["additionalProperties"] = _openapi(schema["additionalProperties"])
    return out


def mpijob_crd(version: str = MPI_OPERATOR_DEFAULT) -> dict:
    """The CustomResourceDefinition object mpijobs.kubeflow.org that the operator's manifest installs."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "mpijobs.kubeflow.org",
                         "labels": {"app.kubernetes.io/version": "v" + ".".join(map(str, _version(version)))}},
            "spec": {"group": "kubeflow.org", "scope": "Namespaced",
                     "names": {"kind": "MPIJob", "listKind": "MPIJobList", "plural": "mpijobs", "singular": "mpijob",
                               "shortNames": ["mj", "mpij"]},
                     "versions": [{"name": "v2beta1", "served": True, "storage": True, "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": _openapi(mpijob_schema(version))}}]}}


def established_status(spec: dict, ts: str) -> dict:
    """The status the apiserver's CRD controller gives a CustomResourceDefinition whose names it accepted."""
    return {
        "acceptedNames": spec.get("names") or {},
        "storedVersions": [v["name"] for v in spec.get("versions") or [] if v.get("storage")],
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": ts},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": ts},
        ],
    }


# group/version/plural -> discovery info and schema
CRDS: dict[str, dict[str, Any]] = {
    "kubeflow.org/v2beta1/mpijobs": {
        "kind": "MPIJob", "singular": "mpijob", "namespaced": True, "shortnames": ["mj", "mpij"],
        "subresources": ["status"], "schema": MPIJOB_SCHEMA,
    },
    "k8s.cni.cncf.io/v1/network-attachment-definitions": {
        "kind": "NetworkAttachmentDefinition", "singular": "network-attachment-definition",
        "namespaced": True, "shortnames": ["net-attach-def"], "subresources": [], "schema": NAD_SCHEMA,
    },
    "multinic.fms.io/v1/multinicnetworks": {
        "kind": "MultiNicNetwork", "singular": "multinicnetwork", "namespaced": False, "shortnames": [],
        "subresources": ["status"], "schema": MULTINIC_SCHEMA,
    },
    "sriovnetwork.openshift.io/v1/sriovnetworknodepolicies": {
        "kind": "SriovNetworkNodePolicy", "singular": "sriovnetworknodepolicy", "namespaced": True, "shortnames": [],
        "subresources": ["status"], "schema": SRIOV_POLICY_SCHEMA,
    },
    "sriovnetwork.openshift.io/v1/sriovnetworknodestates": {
        "kind": "SriovNetworkNodeState", "singular": "sriovnetworknodestate", "namespaced": True, "shortnames": [],
        "subresources": ["status"], "schema": SRIOV_STATE_SCHEMA,
    },
    "mellanox.com/v1alpha1/nicclusterpolicies": {
        "kind": "NicClusterPolicy", "singular": "nicclusterpolicy", "namespaced": False, "shortnames": ["ncp"],
        "subresources": ["status"], "schema": NCP_SCHEMA,
    },
}

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def _type_ok(value: Any, typ: str) -> bool:
    if typ == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if typ == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[typ])


def _go_repr(value: Any) -> str:
    if isinstance(value, str):
        return '"%s"' % value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def validate(obj: dict, schema: dict, path: str = "") -> list[dict]:
    """Causes in the apiserver's shape: {reason, message, field}; also applies defaults in place."""
    causes: list[dict] = []
    typ = schema.get("type")
    field = path or "<root>"
    if typ and not _type_ok(obj, typ):
        kind = type(obj).__name__
        gotype = {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
                  "dict": "object", "list": "array"}.get(kind, kind)
        causes.append({"reason": "FieldValueInvalid", "field": field,
                       "message": 'Invalid value: "%s": %s in body must be of type %s: "%s"'
                                  % (gotype, field, typ, gotype)})
        return causes
    if "enum" in schema and obj not in schema["enum"]:
        causes.append({"reason": "FieldValueNotSupported", "field": field,
                       "message": "Unsupported value: %s: supported values: %s"
                                  % (_go_repr(obj), ", ".join(_go_repr(v) for v in schema["enum"]))})
    if "minimum" in schema and isinstance(obj, (int, float)) and obj < schema["minimum"]:
        causes.append({"reason": "FieldValueInvalid", "field": field,
                       "message": "Invalid value: %s: %s in body should be greater than or equal to %s"
                                  % (obj, field, schema["minimum"])})
    if "maximum" in schema and isinstance(obj, (int, float)) and obj > schema["maximum"]:
        causes.append({"reason": "FieldValueInvalid", "field": field,
                       "message": "Invalid value: %s: %s in body should be less than or equal to %s"
                                  % (obj, field, schema["maximum"])})
    if typ == "object" and isinstance(obj, dict):
        props = schema.get("properties", {})
        for key, sub in props.items():
            if key not in obj and "default" in sub:
                obj[key] = sub["default"]
        for req in schema.get("required", []):
            if req not in obj or obj[req] is None:
                child = "%s.%s" % (path, req) if path else req
                causes.append({"reason": "FieldValueRequired", "field": child, "message": "Required value"})
        for key, value in obj.items():
            child = "%s.%s" % (path, key) if path else key
            if key in props:
                if value is not None:
                    causes.extend(validate(value, props[key], child))
            elif "additionalProperties" in schema and value is not None:
                causes.extend(validate(value, schema["additionalProperties"], "%s[%s]" % (path, key)))
    if typ == "array" and isinstance(obj, list) and "items" in schema:
        for i, item in enumerate(obj):
            causes.extend(validate(item, schema["items"], "%s[%d]" % (path, i)))
    return causes


def prune(obj: dict, schema: dict) -> list[str]:
    """Drop fields the structural schema does not know (as the apiserver prunes CRs);
    returns the dropped paths for a warning."""
    dropped: list[str] = []

    def walk(value: Any, sch: dict, path: str) -> None:
        if not isinstance(value, dict) or sch.get("preserve"):
            if isinstance(value, list) and "items" in sch:
                for i, item in enumerate(value):
                    walk(item, sch["items"], "%s[%d]" % (path, i))
            return
        props = sch.get("properties")
        addl = sch.get("additionalProperties")
        for key in list(value):
            child = "%s.%s" % (path, key) if path else key
            if props is not None and key in props:
                walk(value[key], props[key], child)
            elif addl is not None:
                walk(value[key], addl, child)
            elif props is not None:
                del value[key]
                dropped.append(child)

    top = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    walk(top, schema, "")
    for key in list(obj):
        if key not in ("apiVersion", "kind", "metadata") and key not in top:
            del obj[key]
    for key, value in top.items():
        obj[key] = value
    return dropped
