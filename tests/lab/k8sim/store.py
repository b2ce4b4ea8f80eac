# SPDX-License-Identifier: GPL-3.0-or-later
"""In-memory object store with the apiserver semantics our modules rely on.

Everything here runs on the emulator's single asyncio loop, so no locks: each
verb is one synchronous call and therefore atomic. Errors are ApiError with
the Status body a real apiserver sends (reason, code, message format).
"""
from __future__ import annotations

import collections
import copy
import datetime
import json
import random
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import crds

# Kinds whose apiserver strategy keeps metadata.generation (a spec counter).
# Simplification: every resource with a status subresource, plus CRs.
_NO_GENERATION = {("", "nodes"), ("", "namespaces"), ("", "pods"), ("", "configmaps"), ("", "secrets"),
                  ("", "events"), ("", "services"), ("", "serviceaccounts")}
# Resources whose default garbage-collection policy is Orphan (kept for
# backwards compatibility by the apiserver): batch/v1 Job, v1 ReplicationController.
_ORPHAN_BY_DEFAULT = {("batch", "jobs"), ("", "replicationcontrollers")}

# Strategic-merge keys (patchMergeKey) of the list fields our manifests use.
_MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
    "volumes": "name", "volumeMounts": "mountPath", "ports": "containerPort", "imagePullSecrets": "name",
    "conditions": "type", "ownerReferences": "uid", "hostAliases": "ip", "volumeDevices": "devicePath",
    "envFrom": None, "tolerations": None, "args": None, "command": None,
}
_MERGE_PRIMITIVE_LISTS = {"finalizers"}

_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


class ApiError(Exception):
    """An error the apiserver would return, with its Status body."""

    def __init__(self, code: int, reason: str, message: str, details: dict | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict:
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": self.message, "reason": self.reason, "code": self.code}
        if self.details is not None:
            body["details"] = self.details
        return body


@dataclass
class Res:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    subresources: set = field(default_factory=set)
    schema: dict | None = None  # CRDs only
    singular: str = ""

    @property
    def crd(self) -> bool:
        return self.schema is not None

    @property
    def api_version(self) -> str:
        return "%s/%s" % (self.group, self.version) if self.group else self.version

    @property
    def gr(self) -> str:
        """group-qualified resource as in messages: configmaps, mpijobs.kubeflow.org"""
        return "%s.%s" % (self.plural, self.group) if self.group else self.plural

    @property
    def qualified_kind(self) -> str:
        return "%s.%s" % (self.kind, self.group) if self.group else self.kind

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources


def now_rfc3339() -> str:
    return datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------- selectors
_REQ = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*(?:(==|=|!=)\s*([A-Za-z0-9_.-]*)|\s+(in|notin)\s*\(([^)]*)\))?\s*$")


def parse_label_selector(text: str) -> list[tuple[str, str, list[str]]]:
    """'a=b,c!=d,e in (x,y),!f,g' -> [(key, op, values)]; raises ApiError 400 like the apiserver."""
    reqs: list[tuple[str, str, list[str]]] = []
    if not text or not text.strip():
        return reqs
    # split on commas not inside parentheses
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for part in parts:
        m = _REQ.match(part)
        if not m:
            raise ApiError(400, "BadRequest", "unable to parse requirement: found '%s', expected: identifier" % part.strip())
        neg, key, op, value, setop, setvals = m.groups()
        if neg:
            if op or setop:
                raise ApiError(400, "BadRequest", "unable to parse requirement: %r" % part.strip())
            reqs.append((key, "!", []))
        elif op:
            reqs.append((key, "!=" if op == "!=" else "=", [value]))
        elif setop:
            reqs.append((key, setop, [v.strip() for v in setvals.split(",") if v.strip()]))
        else:
            reqs.append((key, "exists", []))
    return reqs


def labels_match(labels: dict, reqs: list[tuple[str, str, list[str]]]) -> bool:
    labels = labels or {}
    for key, op, values in reqs:
        present = key in labels
        if op == "=" and labels.get(key) != values[0]:
            return False
        if op == "!=" and present and labels[key] == values[0]:
            return False
        if op == "in" and (not present or labels[key] not in values):
            return False
        if op == "notin" and present and labels[key] in values:
            return False
        if op == "exists" and not present:
            return False
        if op == "!" and present:
            return False
    return True


def match_label_selector_object(labels: dict, selector: dict | None) -> bool:
    """metav1.LabelSelector {matchLabels, matchExpressions} (empty selects everything)."""
    if not selector:
        return True
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _field_value(obj: dict, path: str) -> Any:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


_FIELD_LABELS = {
    "*": {"metadata.name", "metadata.namespace"},
    ("", "pods"): {"spec.nodeName", "status.phase", "spec.restartPolicy", "spec.schedulerName",
                   "spec.serviceAccountName", "status.podIP", "status.nominatedNodeName"},
    ("", "events"): {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                     "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                     "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"},
    ("", "nodes"): {"spec.unschedulable"},
    ("batch", "jobs"): {"status.successful"},
}


def parse_field_selector(res: Res, text: str) -> list[tuple[str, bool, str]]:
    reqs = []
    if not text:
        return reqs
    allowed = _FIELD_LABELS["*"] | _FIELD_LABELS.get((res.group, res.plural), set())
    for part in text.split(","):
        m = re.match(r"^\s*([A-Za-z.]+)\s*(==|=|!=)\s*(.*?)\s*$", part)
        if not m:
            raise ApiError(400, "BadRequest", "invalid selector: '%s'; can't understand '%s'" % (text, part))
        key, op, value = m.groups()
        if key not in allowed:
            raise ApiError(400, "BadRequest", 'field label not supported: %s' % key)
        reqs.append((key, op == "!=", value))
    return reqs


def fields_match(obj: dict, reqs: list[tuple[str, bool, str]]) -> bool:
    for key, negate, value in reqs:
        got = _field_value(obj, key)
        got = "" if got is None else str(got).lower() if isinstance(got, bool) else str(got)
        if (got == value) == negate:
            return False
    return True


# ---------------------------------------------------------------- patches
def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge(target: Any, patch: Any, key: str | None = None) -> Any:
    """The strategic merge patch of the built-in types, for the list fields we use
    (merge by patchMergeKey); other lists are replaced; null deletes."""
    if isinstance(patch, dict):
        if patch.get("$patch") == "replace":
            return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
        result = copy.deepcopy(target) if isinstance(target, dict) else {}
        for k, value in patch.items():
            if k.startswith("$setElementOrder/") or k == "$retainKeys":
                continue
            if value is None:
                result.pop(k, None)
            else:
                result[k] = strategic_merge(result.get(k), value, k)
        return result
    if isinstance(patch, list):
        merge_key = _MERGE_KEYS.get(key or "")
        if key in _MERGE_PRIMITIVE_LISTS and isinstance(target, list):
            out = list(target)
            for item in patch:
                if item not in out:
                    out.append(item)
            return out
        if merge_key and isinstance(target, list) and all(isinstance(i, dict) for i in patch):
            out = copy.deepcopy(target)
            for item in patch:
                kval = item.get(merge_key)
                idx = next((i for i, cur in enumerate(out) if isinstance(cur, dict) and cur.get(merge_key) == kval), None)
                if item.get("$patch") == "delete":
                    if idx is not None:
                        out.pop(idx)
                    continue
                if idx is None:
                    out.append(strategic_merge({}, item))
                else:
                    out[idx] = strategic_merge(out[idx], item)
            return out
        return copy.deepcopy(patch)
    return copy.deepcopy(patch)


_QUANTITY_MAPS = {"limits", "requests", "capacity", "allocatable", "hard", "used", "overhead"}


def canonical_quantities(obj: Any, parent: str = "") -> None:
    """The apiserver serialises resource.Quantity as a string: 8 -> "8", 0.5 -> "500m"."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if parent in _QUANTITY_MAPS and isinstance(value, (int, float)) and not isinstance(value, bool):
                obj[key] = str(int(value)) if float(value).is_integer() else "%dm" % round(value * 1000)
            else:
                canonical_quantities(value, key)
    elif isinstance(obj, list):
        for item in obj:
            canonical_quantities(item, parent)


# ---------------------------------------------------------------- the store
# kubernetes pkg/apis/core/helper (standardQuotaResources, IsStandardQuotaResourceName): the names without a '/'
# a ResourceQuota may limit. Names with a '/' (extended resources, "requests.nvidia.com/x" or "limits.nvidia.com/x")
# pass validation as qualified names; the pod evaluator only tracks "requests.<extended>" (pkg/quota/v1/evaluator/
# core/pods.go isExtendedResourceNameForQuota), so "limits.<extended>" is stored and never enforced.
_STANDARD_QUOTA = {"cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
                   "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
                   "services", "replicationcontrollers", "resourcequotas", "secrets", "persistentvolumeclaims",
                   "configmaps", "services.nodeports", "services.loadbalancers"}


def _quota_hard_causes(hard: dict) -> list[dict]:
    """pkg/apis/core/validation ValidateResourceQuotaSpec: ValidateResourceQuotaResourceName (isInvalidQuotaResource
    "must be a standard resource for quota") and ValidateNonnegativeQuantity, per spec.hard key."""
    causes = []
    for key, value in sorted(hard.items()):
        field_ = "spec.hard[%s]" % key
        if "/" not in key and key not in _STANDARD_QUOTA and not key.startswith(("hugepages-", "requests.hugepages-")):
            causes.append({"reason": "FieldValueInvalid", "field": field_,
                           "message": 'Invalid value: "%s": must be a standard resource for quota' % key})
        if str(value).startswith("-"):
            causes.append({"reason": "FieldValueInvalid", "field": field_,
                           "message": 'Invalid value: "%s": must be greater than or equal to 0' % value})
    return causes


class Store:
    """Objects keyed by (group, plural, namespace, name); resourceVersion is a
    global counter; every change is an event (kept in a bounded log for watches
    that resume from a resourceVersion)."""

    def __init__(self, kube_version: str = "1.30.0", seed: int = 0) -> None:
        self.resources: dict[tuple[str, str, str], Res] = {}  # (group, version, plural)
        self.objects: dict[tuple[str, str, str | None, str], dict] = {}
        self.rv = 1000
        self.events: collections.deque = collections.deque(maxlen=5000)  # (rv, gr-key, type, obj)
        self.listeners: list[Callable[[str, Res, dict], None]] = []
        self.kube_version = kube_version
        self.rng = random.Random(seed)
        self.pending: list[Callable[[], None]] = []  # deferred GC work, run by the emulator
        self._validator = None
        self.seed = seed
        # Watches cannot resume from before this resourceVersion (the restored snapshot has no event history).
        self.compacted_rv = 0
        self._restored_uids: set[str] = set()
        # Validating admission after object validation, as the apiserver orders it (validating webhooks, then
        # ResourceQuota: AllOrderedPlugins). hook(res, obj, operation, old, dry_run) -> warnings; raises ApiError to deny.
        self.admission: list[Callable[[Res, dict, str, dict | None, bool], list[str]]] = []

    # -- resources -------------------------------------------------------
    def add_resource(self, res: Res) -> None:
        self.resources[(res.group, res.version, res.plural)] = res

    def resource(self, group: str, version: str, plural: str) -> Res:
        res = self.resources.get((group, version, plural))
        if res is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource", {})
        return res

    def by_group_plural(self, group: str, plural: str) -> Res:
        """The one served version of a group-resource (objects are keyed by group and plural)."""
        for res in self.resources.values():
            if (res.group, res.plural) == (group, plural):
                return res
        raise KeyError("%s/%s" % (group, plural) if group else plural)

    def by_kind(self, api_version: str, kind: str) -> Res:
        group, _sep, version = api_version.rpartition("/")
        for res in self.resources.values():
            if res.group == group and res.version == version and res.kind == kind:
                return res
        raise KeyError("%s %s" % (api_version, kind))

    # -- helpers ---------------------------------------------------------
    def _next_rv(self) -> str:
        self.rv += 1
        return str(self.rv)

    def new_uid(self) -> str:
        while True:
            uid = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
            if uid not in self._restored_uids:
                return uid

    # -- restore (restore.py chooses the objects) ------------------------------
    def load(self, res: Res, obj: dict, changed: bool = False) -> None:
        """Put a saved object back as it was: uid, resourceVersion, generation, status and all;
        changed: it differs from the saved one (a new resourceVersion and a MODIFIED event)."""
        meta = obj["metadata"]
        key = self._key(res, meta.get("namespace"), meta["name"])
        if key in self.objects:
            raise ValueError("restore: %s %s is saved twice" % (res.gr, meta["name"]))
        obj = dict(copy.deepcopy(obj), apiVersion=res.api_version, kind=res.kind)
        self._restored_uids.add(meta["uid"])
        if changed:
            obj["metadata"]["resourceVersion"] = self._next_rv()
        self.rv = max(self.rv, int(obj["metadata"]["resourceVersion"]))
        self.objects[key] = obj
        if changed:
            self._emit("MODIFIED", res, obj)

    def restored(self, max_rv: int) -> None:
        """After load(): the counter continues above every saved resourceVersion, watches from before get 410,
        and the seeded uids and name suffixes differ from the run that saved the snapshot (same seed, new sequence)."""
        self.rv = max(self.rv, max_rv)
        self.compacted_rv = self.rv
        self.rng = random.Random("%d/%d" % (self.seed, self.rv))

    def random_suffix(self, n: int = 5) -> str:
        alphabet = "bcdfghjklmnpqrstvwxz2456789"  # the apiserver's generateName alphabet
        return "".join(self.rng.choice(alphabet) for _i in range(n))

    @staticmethod
    def _key(res: Res, ns: str | None, name: str) -> tuple[str, str, str | None, str]:
        return (res.group, res.plural, ns if res.namespaced else None, name)

    def _emit(self, etype: str, res: Res, obj: dict) -> None:
        rv = int(obj["metadata"]["resourceVersion"])
        self.events.append((rv, (res.group, res.plural), etype, copy.deepcopy(obj)))
        for listener in list(self.listeners):
            listener(etype, res, obj)

    def _view(self, res: Res, obj: dict) -> dict:
        out = copy.deepcopy(obj)
        out["apiVersion"] = res.api_version
        out["kind"] = res.kind
        return out

    def _not_found(self, res: Res, name: str) -> ApiError:
        details = {"name": name, "kind": res.plural}
        if res.group:
            details["group"] = res.group
        return ApiError(404, "NotFound", '%s "%s" not found' % (res.gr, name), details)

    def _check_namespace(self, res: Res, ns: str | None) -> None:
        if res.namespaced:
            if not ns:
                raise ApiError(404, "NotFound", "the server could not find the requested resource", {})
            if ("", "namespaces", None, ns) not in self.objects:
                raise ApiError(404, "NotFound", 'namespaces "%s" not found' % ns,
                               {"name": ns, "kind": "namespaces"})
        elif ns:
            raise ApiError(404, "NotFound", "the server could not find the requested resource", {})

    def _invalid(self, res: Res, name: str, causes: list[dict]) -> ApiError:
        if len(causes) == 1:
            text = "%s: %s" % (causes[0]["field"], causes[0]["message"])
        else:
            text = "[%s]" % ", ".join("%s: %s" % (c["field"], c["message"]) for c in causes)
        return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (res.qualified_kind, name, text),
                        {"name": name, "group": res.group, "kind": res.kind, "causes": causes})

    # -- validation ------------------------------------------------------
    def validate(self, res: Res, obj: dict, strict: bool = False) -> list[str]:
        """Raise ApiError 400/422 as the apiserver does; returns warnings."""
        meta = obj.get("metadata") or {}
        name = meta.get("name") or meta.get("generateName") or ""
        causes: list[dict] = []
        warnings: list[str] = []
        if not meta.get("name"):
            causes.append({"reason": "FieldValueRequired", "field": "metadata.name",
                           "message": "Required value: name or generateName is required"})
        else:
            pattern = _DNS1123_LABEL if res.plural in ("namespaces", "services") else _DNS1123_SUBDOMAIN
            if not pattern.match(meta["name"]) or len(meta["name"]) > 253:
                what = "RFC 1123 label" if pattern is _DNS1123_LABEL else "RFC 1123 subdomain"
                causes.append({"reason": "FieldValueInvalid", "field": "metadata.name",
                               "message": 'Invalid value: "%s": a lowercase %s must consist of lower case '
                                          "alphanumeric characters, '-' or '.', and must start and end with "
                                          "an alphanumeric character" % (meta["name"], what)})
        for value in (meta.get("labels") or {}).values():
            if not isinstance(value, str) or not _LABEL_VALUE.match(value) or len(value) > 63:
                causes.append({"reason": "FieldValueInvalid", "field": "metadata.labels",
                               "message": 'Invalid value: "%s": a valid label must be an empty string or '
                                          "consist of alphanumeric characters, '-', '_' or '.'" % value})
        if res.crd:
            causes.extend(crds.validate(obj, res.schema))
            dropped = crds.prune(obj, res.schema)
            if dropped:
                if strict:
                    raise ApiError(400, "BadRequest", ".%s: field not declared in schema" % dropped[0])
                warnings.extend('unknown field "%s"' % d for d in dropped)
        else:
            canonical_quantities(obj)
            warnings.extend(self._validate_builtin(res, obj, name, strict))
            causes.extend(self._semantic_builtin(res, obj))
        if causes:
            raise self._invalid(res, name, causes)
        return warnings

    def _validate_builtin(self, res: Res, obj: dict, name: str, strict: bool) -> list[str]:
        try:
            import kubernetes_validate  # pylint: disable=import-outside-toplevel
            from kubernetes_validate.utils import SchemaNotFoundError, ValidationError  # pylint: disable=import-outside-toplevel
        except ImportError:
            return []
        probe = dict(obj, apiVersion=res.api_version, kind=res.kind)
        probe.pop("status", None)
        try:
            kubernetes_validate.validate(probe, self.kube_version, strict=False)
        except SchemaNotFoundError:
            return []
        except ValidationError as exc:
            path = ".".join(str(p) for p in exc.path)
            err = exc.caught_exception if hasattr(exc, "caught_exception") else exc
            validator = getattr(err, "validator", "")
            if validator == "required":
                missing = re.findall(r"'([^']+)' is a required property", exc.message)
                field_ = ".".join(x for x in (path, missing[0] if missing else "") if x)
                raise self._invalid(res, name, [{"reason": "FieldValueRequired", "field": field_,
                                                 "message": "Required value"}]) from None
            raise ApiError(400, "BadRequest", '%s in version "%s" cannot be handled as a %s: %s: %s'
                           % (res.kind, res.version, res.kind, path, exc.message)) from None
        if not strict:
            return []
        try:
            kubernetes_validate.validate(probe, self.kube_version, strict=True)
        except ValidationError as exc:
            path = ".".join(str(p) for p in exc.path)
            unknown = re.findall(r"'([^']+)' was unexpected", exc.message)
            raise ApiError(400, "BadRequest", 'strict decoding error: unknown field "%s"'
                           % ".".join(x for x in (path, unknown[0] if unknown else "") if x)) from None
        except SchemaNotFoundError:
            pass
        return []

    @staticmethod
    def _semantic_builtin(res: Res, obj: dict) -> list[dict]:
        causes = []
        spec = obj.get("spec") or {}
        if (res.group, res.plural) in (("apps", "daemonsets"), ("apps", "deployments"),
                                       ("apps", "replicasets"), ("apps", "statefulsets")):
            selector = spec.get("selector")
            labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
            if not selector:
                causes.append({"reason": "FieldValueRequired", "field": "spec.selector", "message": "Required value"})
            elif not match_label_selector_object(labels, selector):
                causes.append({"reason": "FieldValueInvalid", "field": "spec.template.metadata.labels",
                               "message": "Invalid value: %s: `selector` does not match template `labels`"
                                          % json.dumps(labels, sort_keys=True)})
        if (res.group, res.plural) == ("", "resourcequotas"):
            causes.extend(_quota_hard_causes(spec.get("hard") or {}))
        if (res.group, res.plural) == ("", "configmaps"):
            for section in ("data", "binaryData"):
                for key in (obj.get(section) or {}):
                    if not re.match(r"^[-._a-zA-Z0-9]+$", key):
                        causes.append({"reason": "FieldValueInvalid", "field": "%s[%s]" % (section, key),
                                       "message": "Invalid value: \"%s\": a valid config key must consist of "
                                                  "alphanumeric characters, '-', '_' or '.'" % key})
        return causes

    # -- verbs -----------------------------------------------------------
    def get(self, res: Res, ns: str | None, name: str) -> dict:
        self._check_scope(res, ns)
        obj = self.objects.get(self._key(res, ns, name))
        if obj is None:
            raise self._not_found(res, name)
        return self._view(res, obj)

    def _check_scope(self, res: Res, ns: str | None) -> None:
        if not res.namespaced and ns:
            raise ApiError(404, "NotFound", "the server could not find the requested resource", {})

    def select(self, res: Res, ns: str | None, label_selector: str = "", field_selector: str = "") -> list[dict]:
        lreqs = parse_label_selector(label_selector)
        freqs = parse_field_selector(res, field_selector)
        out = []
        for (group, plural, ons, _name), obj in sorted(self.objects.items(), key=lambda kv: (kv[0][2] or "", kv[0][3])):
            if (group, plural) != (res.group, res.plural):
                continue
            if ns and res.namespaced and ons != ns:
                continue
            if not labels_match(obj["metadata"].get("labels"), lreqs) or not fields_match(obj, freqs):
                continue
            out.append(obj)
        return out

    def list(self, res: Res, ns: str | None, params: dict) -> dict:
        self._check_scope(res, ns)
        selected = self.select(res, ns, params.get("labelSelector", ""), params.get("fieldSelector", ""))
        items = [self._view(res, o) for o in selected]
        for item in items:  # list items carry no kind/apiVersion in a real List
            item.pop("kind", None)
            item.pop("apiVersion", None)
        return {"kind": res.kind + "List", "apiVersion": res.api_version,
                "metadata": {"resourceVersion": str(self.rv)}, "items": items}

    def create(self, res: Res, ns: str | None, body: Any, params: dict, internal: bool = False) -> tuple[dict, list[str]]:
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "the body of the request was in an unknown format")
        self._check_scope(res, ns)
        obj = copy.deepcopy(body)
        if obj.get("kind") and obj.get("kind") != res.kind or obj.get("apiVersion") and obj.get("apiVersion") != res.api_version:
            raise ApiError(400, "BadRequest", "the API version in the data (%s) does not match the expected API version (%s)"
                           % (obj.get("apiVersion"), res.api_version) if obj.get("apiVersion") != res.api_version else
                           "%s in version \"%s\" cannot be handled as a %s: no kind \"%s\" is registered for version \"%s\""
                           % (res.kind, res.version, res.kind, obj.get("kind"), res.api_version))
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise ApiError(400, "BadRequest", "metadata must be an object")
        if res.namespaced:
            if meta.get("namespace") and ns and meta["namespace"] != ns:
                raise ApiError(400, "BadRequest", "the namespace of the provided object does not match the "
                                                  "namespace sent on the request")
            ns = ns or meta.get("namespace")
            meta["namespace"] = ns
            self._check_namespace(res, ns)
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + self.random_suffix()
        strict = params.get("fieldValidation") == "Strict"
        if res.has_status and not internal:
            obj.pop("status", None)
        warnings = self.validate(res, obj, strict)
        for hook in self.admission:
            warnings.extend(hook(res, obj, "CREATE", None, params.get("dryRun") == "All"))
        key = self._key(res, ns, meta["name"])
        if key in self.objects:
            details = {"name": meta["name"], "kind": res.plural}
            if res.group:
                details["group"] = res.group
            raise ApiError(409, "AlreadyExists", '%s "%s" already exists' % (res.gr, meta["name"]), details)
        for server_field in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "generation",
                             "managedFields", "selfLink"):
            meta.pop(server_field, None)
        obj["apiVersion"] = res.api_version
        obj["kind"] = res.kind
        meta["uid"] = self.new_uid()
        meta["creationTimestamp"] = now_rfc3339()
        if self._has_generation(res):
            meta["generation"] = 1
        if params.get("dryRun") == "All":
            meta["resourceVersion"] = str(self.rv)
            return self._view(res, obj), warnings
        meta["resourceVersion"] = self._next_rv()
        self.objects[key] = obj
        self._emit("ADDED", res, obj)
        return self._view(res, obj), warnings

    def _has_generation(self, res: Res) -> bool:
        return res.crd or ((res.group, res.plural) not in _NO_GENERATION and res.has_status)

    def _write(self, res: Res, ns: str | None, name: str, new: dict, sub: str | None,
               params: dict, check_rv: str | None = None) -> tuple[dict, list[str]]:
        """Store a full new version of an existing object (PUT/PATCH), with the
        status-subresource split, generation, no-op detection and finalizers."""
        key = self._key(res, ns, name)
        old = self.objects[key]
        new = copy.deepcopy(new)
        if not isinstance(new, dict) or not isinstance(new.get("metadata", {}), dict):
            raise ApiError(400, "BadRequest", "the body of the request was in an unknown format")
        meta = new.setdefault("metadata", {})
        if meta.get("name") not in (None, name):
            raise ApiError(400, "BadRequest", "the name of the object (%s) does not match the name on the URL (%s)"
                           % (meta.get("name"), name))
        if check_rv and check_rv != old["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has been modified; '
                                            "please apply your changes to the latest version and try again" % (res.gr, name),
                           {"name": name, "group": res.group, "kind": res.plural})
        if sub == "status":
            merged = copy.deepcopy(old)
            if "status" in new:
                merged["status"] = new["status"]
            else:
                merged.pop("status", None)
            new = merged
        elif res.has_status:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        # server-owned metadata survives every write
        for server_field in ("uid", "creationTimestamp", "deletionTimestamp", "generation", "namespace"):
            if server_field in old["metadata"]:
                new["metadata"][server_field] = old["metadata"][server_field]
            else:
                new["metadata"].pop(server_field, None)
        new["metadata"]["name"] = name
        new["apiVersion"] = res.api_version
        new["kind"] = res.kind
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        strict = params.get("fieldValidation") == "Strict"
        warnings = self.validate(res, new, strict) if sub != "status" else []
        if sub != "status":
            for hook in self.admission:
                warnings.extend(hook(res, new, "UPDATE", old, params.get("dryRun") == "All"))
        spec_changed = {k: v for k, v in old.items() if k not in ("metadata", "status", "apiVersion", "kind")} != \
            {k: v for k, v in new.items() if k not in ("metadata", "status", "apiVersion", "kind")}
        if self._has_generation(res) and spec_changed:
            new["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1
        if old.get("metadata", {}).get("deletionTimestamp") and len(new["metadata"].get("finalizers") or []) > \
                len(old["metadata"].get("finalizers") or []):
            raise ApiError(422, "Invalid", '%s "%s" is invalid: metadata.finalizers: Forbidden: no new finalizers can '
                                           "be added if the object is being deleted" % (res.qualified_kind, name))
        if new == old:  # a no-op write: no new resourceVersion, no event
            return self._view(res, old), warnings
        if params.get("dryRun") == "All":
            return self._view(res, new), warnings
        new["metadata"]["resourceVersion"] = self._next_rv()
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            self.objects.pop(key)
            self._emit("DELETED", res, new)
            self._after_delete(res, new, self._default_policy(res))
            return self._view(res, new), warnings
        self.objects[key] = new
        self._emit("MODIFIED", res, new)
        return self._view(res, new), warnings

    def replace(self, res: Res, ns: str | None, name: str, body: Any, params: dict, sub: str | None = None) -> tuple[dict, list[str]]:
        self._check_scope(res, ns)
        key = self._key(res, ns, name)
        if key not in self.objects:
            raise self._not_found(res, name)
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "the body of the request was in an unknown format")
        rv = (body.get("metadata") or {}).get("resourceVersion")
        if not rv and res.crd:
            # A custom resource's strategy does not allow an unconditional update (apiextensions-apiserver
            # pkg/registry/customresource/strategy.go AllowUnconditionalUpdate false), so the generic store refuses a
            # PUT without resourceVersion (apiserver pkg/registry/generic/registry/store.go Update: field.Invalid of
            # the uint64 0, printed 0x0; the kind there is the resource's plural with its group).
            message = "Invalid value: 0x0: must be specified for an update"
            raise ApiError(422, "Invalid", '%s.%s "%s" is invalid: metadata.resourceVersion: %s' % (res.plural, res.group, name, message),
                           {"name": name, "group": res.group, "kind": res.plural,
                            "causes": [{"reason": "FieldValueInvalid", "message": message, "field": "metadata.resourceVersion"}]})
        return self._write(res, ns, name, body, sub, params, check_rv=rv or None)

    def patch(self, res: Res, ns: str | None, name: str, raw: bytes, content_type: str, params: dict,
              sub: str | None = None) -> tuple[dict, list[str], bool]:
        """Returns (object, warnings, created)."""
        self._check_scope(res, ns)
        ctype = (content_type or "").split(";")[0].strip()
        key = self._key(res, ns, name)
        if ctype == "application/apply-patch+yaml":
            return self._apply(res, ns, name, raw, params, sub)
        if ctype not in ("application/json-patch+json", "application/merge-patch+json",
                         "application/strategic-merge-patch+json"):
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted "
                           "media types include: application/json-patch+json, application/merge-patch+json, "
                           "application/apply-patch+yaml")
        if ctype == "application/strategic-merge-patch+json" and res.crd:
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted "
                           "media types include: application/json-patch+json, application/merge-patch+json, "
                           "application/apply-patch+yaml")
        if key not in self.objects:
            raise self._not_found(res, name)
        try:
            patch = json.loads(raw.decode() or "null")
        except ValueError as exc:
            raise ApiError(400, "BadRequest", "error decoding patch: %s" % exc) from None
        old = self._view(res, self.objects[key])
        if ctype == "application/json-patch+json":
            import jsonpatch  # pylint: disable=import-outside-toplevel
            if not isinstance(patch, list):
                raise ApiError(400, "BadRequest", "json: cannot unmarshal object into Go value of type jsonpatch.Patch")
            try:
                new = jsonpatch.apply_patch(old, patch)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
                raise ApiError(422, "Invalid", str(exc)) from None
        elif not isinstance(patch, dict):
            raise ApiError(400, "BadRequest", "the body of the request was in an unknown format")
        elif ctype == "application/merge-patch+json":
            new = merge_patch(old, patch)
        else:
            new = strategic_merge(old, patch)
        rv = (patch.get("metadata") or {}).get("resourceVersion") if isinstance(patch, dict) else None
        obj, warnings = self._write(res, ns, name, new, sub, params, check_rv=rv)
        return obj, warnings, False

    def _apply(self, res: Res, ns: str | None, name: str, raw: bytes, params: dict, sub: str | None) -> tuple[dict, list[str], bool]:
        """Server-side apply, simplified: no field ownership or conflicts; the
        applied configuration is merged into the live object (strategic merge
        for built-ins, JSON merge for CRs) and an absent object is created."""
        if not params.get("fieldManager"):
            raise ApiError(422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                                           "is required for apply patch")
        try:
            import yaml  # pylint: disable=import-outside-toplevel
            body = yaml.safe_load(raw.decode() or "{}")
        except Exception as exc:  # noqa: BLE001  # yaml raises many types; the apiserver says 400 for all
            raise ApiError(400, "BadRequest", "error decoding YAML: %s" % exc) from None
        if not isinstance(body, dict) or not body.get("apiVersion") or not body.get("kind"):
            raise ApiError(400, "BadRequest", "invalid object type: /, Kind=")
        if body.get("apiVersion") != res.api_version or body.get("kind") != res.kind:
            raise ApiError(400, "BadRequest", "the API version or kind in the applied object does not match the URL")
        meta = body.setdefault("metadata", {})
        if meta.get("name") and meta["name"] != name:
            raise ApiError(400, "BadRequest", "the name of the object (%s) does not match the name on the URL (%s)"
                           % (meta["name"], name))
        meta["name"] = name
        key = self._key(res, ns, name)
        if key not in self.objects:
            if sub:
                raise self._not_found(res, name)
            obj, warnings = self.create(res, ns, body, params)
            return obj, warnings, True
        old = self._view(res, self.objects[key])
        new = merge_patch(old, body) if res.crd else strategic_merge(old, body)
        obj, warnings = self._write(res, ns, name, new, sub, params)
        return obj, warnings, False

    # -- deletion ----------------------------------------------------------
    def _default_policy(self, res: Res) -> str:
        return "Orphan" if (res.group, res.plural) in _ORPHAN_BY_DEFAULT else "Background"

    def delete(self, res: Res, ns: str | None, name: str, options: dict, params: dict) -> tuple[dict, int]:
        """Returns (body, http status): 200 with the object when it is gone,
        202 with the object while finalizers (incl. foregroundDeletion) hold it."""
        self._check_scope(res, ns)
        key = self._key(res, ns, name)
        obj = self.objects.get(key)
        if obj is None:
            raise self._not_found(res, name)
        policy = options.get("propagationPolicy") or params.get("propagationPolicy")
        if policy is None and options.get("orphanDependents") is not None:
            policy = "Orphan" if options["orphanDependents"] else "Background"
        policy = policy or self._default_policy(res)
        if policy not in ("Orphan", "Background", "Foreground"):
            raise ApiError(422, "Invalid", 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported '
                                           'value: "%s": supported values: "Foreground", "Background", "Orphan", "nil"' % policy)
        pre = options.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != obj["metadata"]["uid"] or \
                pre.get("resourceVersion") and pre["resourceVersion"] != obj["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": Precondition failed' % (res.gr, name),
                           {"name": name, "group": res.group, "kind": res.plural})
        if params.get("dryRun") == "All":
            return self._view(res, obj), 200
        finalizers = list(obj["metadata"].get("finalizers") or [])
        if policy == "Foreground" and self.dependents(obj["metadata"]["uid"]) and "foregroundDeletion" not in finalizers:
            finalizers.append("foregroundDeletion")
        if finalizers:
            if obj["metadata"].get("deletionTimestamp") and finalizers == obj["metadata"].get("finalizers"):
                return self._view(res, obj), 202
            new = copy.deepcopy(obj)
            new["metadata"]["finalizers"] = finalizers
            new["metadata"].setdefault("deletionTimestamp", now_rfc3339())
            new["metadata"].setdefault("deletionGracePeriodSeconds", 0)
            new["metadata"]["resourceVersion"] = self._next_rv()
            self.objects[key] = new
            self._emit("MODIFIED", res, new)
            if "foregroundDeletion" in finalizers:
                self.pending.append(lambda: self._foreground(res, new))
            return self._view(res, new), 202
        self.objects.pop(key)
        gone = copy.deepcopy(obj)
        gone["metadata"]["resourceVersion"] = self._next_rv()
        self._emit("DELETED", res, gone)
        self._after_delete(res, gone, policy)
        return self._view(res, gone), 200

    def dependents(self, uid: str) -> list[tuple[Res, dict]]:
        found = []
        for (group, plural, _ns, _name), obj in list(self.objects.items()):
            if any(ref.get("uid") == uid for ref in obj["metadata"].get("ownerReferences") or []):
                res = next(r for r in self.resources.values() if (r.group, r.plural) == (group, plural))
                found.append((res, obj))
        return found

    def _after_delete(self, res: Res, obj: dict, policy: str) -> None:
        uid = obj["metadata"]["uid"]
        if res.plural == "namespaces" and not res.group:
            self.pending.append(lambda: self._purge_namespace(obj["metadata"]["name"]))
        if policy == "Orphan":
            for dres, dep in self.dependents(uid):
                refs = [r for r in dep["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
                new = copy.deepcopy(dep)
                if refs:
                    new["metadata"]["ownerReferences"] = refs
                else:
                    new["metadata"].pop("ownerReferences", None)
                self._write(dres, dep["metadata"].get("namespace"), dep["metadata"]["name"], new, None, {})
        else:
            self.pending.append(lambda: self._collect(uid))

    def _collect(self, uid: str) -> None:
        """The garbage collector: delete what the gone owner owned (background)."""
        for dres, dep in self.dependents(uid):
            live = [r for r in dep["metadata"].get("ownerReferences") or [] if r.get("uid") != uid
                    and self._uid_exists(r.get("uid"))]
            if live:
                continue
            try:
                self.delete(dres, dep["metadata"].get("namespace"), dep["metadata"]["name"],
                            {"propagationPolicy": "Background"}, {})
            except ApiError:
                pass  # already gone: another deletion got there first

    def _uid_exists(self, uid: str | None) -> bool:
        return any(o["metadata"].get("uid") == uid for o in self.objects.values())

    def _foreground(self, res: Res, owner: dict) -> None:
        uid = owner["metadata"]["uid"]
        for dres, dep in self.dependents(uid):
            try:
                self.delete(dres, dep["metadata"].get("namespace"), dep["metadata"]["name"],
                            {"propagationPolicy": "Foreground"}, {})
            except ApiError:
                pass  # already gone
        if self.dependents(uid):
            self.pending.append(lambda: self._foreground(res, owner))
            return
        key = self._key(res, owner["metadata"].get("namespace"), owner["metadata"]["name"])
        cur = self.objects.get(key)
        if cur is None or cur["metadata"]["uid"] != uid:
            return
        new = copy.deepcopy(cur)
        new["metadata"]["finalizers"] = [f for f in cur["metadata"].get("finalizers") or [] if f != "foregroundDeletion"]
        if not new["metadata"]["finalizers"]:
            new["metadata"].pop("finalizers")
        self._write(res, owner["metadata"].get("namespace"), owner["metadata"]["name"], new, None, {})

    def _purge_namespace(self, ns: str) -> None:
        for (group, plural, ons, name) in list(self.objects):
            if ons == ns:
                res = next(r for r in self.resources.values() if (r.group, r.plural) == (group, plural))
                try:
                    self.delete(res, ns, name, {"propagationPolicy": "Background"}, {})
                except ApiError:
                    pass  # already gone

    def delete_collection(self, res: Res, ns: str | None, options: dict, params: dict) -> dict:
        self._check_scope(res, ns)
        items = []
        for obj in self.select(res, ns, params.get("labelSelector", ""), params.get("fieldSelector", "")):
            body, _unused = self.delete(res, obj["metadata"].get("namespace"), obj["metadata"]["name"], options, params)
            body.pop("kind", None)
            body.pop("apiVersion", None)
            items.append(body)
        return {"kind": res.kind + "List", "apiVersion": res.api_version,
                "metadata": {"resourceVersion": str(self.rv)}, "items": items}

    # -- internal writes for controllers (no validation of server-owned parts) ----
    def put_internal(self, res: Res, obj: dict) -> dict:
        """Create or fully replace an object as a controller would (status included)."""
        meta = obj["metadata"]
        key = self._key(res, meta.get("namespace"), meta["name"])
        if key not in self.objects:
            created, _unused = self.create(res, meta.get("namespace"), obj, {}, internal=True)
            return created
        old = self.objects[key]
        new = copy.deepcopy(obj)
        new["apiVersion"] = res.api_version
        new["kind"] = res.kind
        for server_field in ("uid", "creationTimestamp", "generation", "resourceVersion"):
            if server_field in old["metadata"]:
                new["metadata"][server_field] = old["metadata"][server_field]
        if new == old:
            return self._view(res, old)
        new["metadata"]["resourceVersion"] = self._next_rv()
        self.objects[key] = new
        self._emit("MODIFIED", res, new)
        return self._view(res, new)

    def find(self, res: Res, ns: str | None, name: str) -> dict | None:
        obj = self.objects.get(self._key(res, ns, name))
        return self._view(res, obj) if obj is not None else None

    def events_since(self, rv: int, res: Res) -> list[tuple[int, str, dict]] | None:
        """Events after rv for res, or None when rv is older than the kept log (410 Gone)."""
        if self.events and rv < self.events[0][0] - 1 and rv < self.rv or rv < self.compacted_rv:
            return None
        return [(erv, etype, obj) for erv, gr, etype, obj in self.events
                if erv > rv and gr == (res.group, res.plural)]
