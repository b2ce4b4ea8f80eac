# SPDX-License-Identifier: GPL-3.0-or-later
"""Authentication (static bearer tokens) and RBAC authorization, as kube-apiserver does them with
``--token-auth-file`` and ``--authorization-mode=RBAC``.

Config ``users``: [{"token", "user", "groups"}] - the rows of a token file
(kubernetes.io docs "Authenticating", Static Token File: token,user,uid,"group1,group2").
Without ``users`` the emulator keeps its old mode: every request is the admin (AlwaysAllow).
With ``users``:
- the kubeconfig's own token is the admin, in group ``system:masters`` (allowed everything, as the
  apiserver's built-in superuser group);
- a request whose bearer token is unknown gets 401 with the apiserver's Status
  (``message: Unauthorized, reason: Unauthorized``);
- every other user is authorized by the stored RBAC objects: a RoleBinding in the request's namespace
  or a ClusterRoleBinding, whose subject is the user, one of its groups (every authenticated user is
  also in ``system:authenticated``) or its service account, and whose Role/ClusterRole has a rule with the
  request's API group, resource (``pods/log`` for a subresource, ``*``), verb and resourceNames;
- a denied request gets 403 Forbidden with the text of staging/src/k8s.io/apiserver/pkg/endpoints/handlers/
  responsewriters/errors.go (forbiddenMessage): ``User "u" cannot list resource "pods" in API group "" in the
  namespace "ns"`` (``at the cluster scope`` without a namespace), inside apimachinery's NewForbidden:
  ``<resource>[.<group>] ["<name>" ]is forbidden: <that>``, details {name, group, kind: resource}.
- the discovery paths (/api, /apis, /version, /openapi) are open to authenticated users (the built-in ClusterRole
  system:discovery is bound to system:authenticated).
"""

from __future__ import annotations

from typing import Any

from .store import ApiError

# The token of the kubeconfig server.py writes (the admin).
ADMIN_TOKEN = "k8sim-dummy-token"
MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
RBAC_GROUP = "rbac.authorization.k8s.io"


class Identity:
    def __init__(self, user: str, groups: list[str]) -> None:
        self.user = user
        self.groups = list(groups) + ([AUTHENTICATED] if AUTHENTICATED not in groups else [])

    @property
    def master(self) -> bool:
        return MASTERS in self.groups


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized", None)


class Authenticator:
    """Bearer token -> Identity; None when authentication is off (no ``users`` configured)."""

    def __init__(self, admin_token: str, users: list[dict] | None) -> None:
        self.enabled = bool(users)
        self.tokens: dict[str, Identity] = {admin_token: Identity("k8sim-admin", [MASTERS])}
        for row in users or []:
            if not isinstance(row, dict) or not row.get("token") or not row.get("user"):
                raise ValueError("users: each entry needs token and user (and optional groups): %r" % (row,))
            if row["token"] in self.tokens:
                raise ValueError("users: token of %s is used twice" % row["user"])
            self.tokens[row["token"]] = Identity(str(row["user"]), [str(g) for g in row.get("groups") or []])

    def identify(self, authorization: str | None) -> Identity | None:
        if not self.enabled:
            return None
        scheme, _space, token = (authorization or "").partition(" ")
        ident = self.tokens.get(token.strip()) if scheme.lower() == "bearer" else None
        if ident is None:
            raise unauthorized()
        return ident


def verb_of(method: str, name: str | None, params: dict) -> str:
    """The request's RBAC verb (kubernetes.io docs "Authorization", Determine the Request Verb)."""
    watch = str(params.get("watch", "")).lower() in ("1", "true")
    return {"GET": ("watch" if watch else "list") if name is None else ("watch" if watch else "get"),
            "HEAD": "list" if name is None else "get", "POST": "create", "PUT": "update", "PATCH": "patch",
            "DELETE": "deletecollection" if name is None else "delete"}.get(method, method.lower())


def _subject_matches(subject: dict, ident: Identity) -> bool:
    kind = subject.get("kind")
    if kind == "User":
        return subject.get("name") == ident.user
    if kind == "Group":
        return subject.get("name") in ident.groups
    if kind == "ServiceAccount":
        return ident.user == "system:serviceaccount:%s:%s" % (subject.get("namespace"), subject.get("name"))
    return False


def _rule_allows(rule: dict, group: str, resource: str, verb: str, name: str | None) -> bool:
    def has(values: Any, want: str) -> bool:
        return isinstance(values, list) and ("*" in values or want in values)

    if not (has(rule.get("apiGroups"), group) and has(rule.get("resources"), resource) and has(rule.get("verbs"), verb)):
        return False
    names = rule.get("resourceNames") or []
    return not names or (name is not None and name in names)


def allowed(store: Any, ident: Identity, group: str, resource: str, verb: str, ns: str | None, name: str | None) -> bool:
    if ident.master:
        return True
    roles = store.resource(RBAC_GROUP, "v1", "roles")
    cluster_roles = store.resource(RBAC_GROUP, "v1", "clusterroles")
    bindings: list[tuple[dict, str | None]] = [(b, None) for b in store.select(store.resource(RBAC_GROUP, "v1", "clusterrolebindings"), None)]
    if ns:
        bindings += [(b, ns) for b in store.select(store.resource(RBAC_GROUP, "v1", "rolebindings"), ns)]
    for binding, where in bindings:
        if not any(_subject_matches(s, ident) for s in binding.get("subjects") or []):
            continue
        ref = binding.get("roleRef") or {}
        if ref.get("kind") == "Role" and where:
            role = store.find(roles, where, ref.get("name"))
        elif ref.get("kind") == "ClusterRole":
            role = store.find(cluster_roles, None, ref.get("name"))
        else:
            role = None
        if role and any(_rule_allows(rule, group, resource, verb, name) for rule in role.get("rules") or []):
            return True
    return False


def forbidden(ident: Identity, group: str, plural: str, sub: str | None, verb: str, ns: str | None, name: str | None) -> ApiError:
    resource = plural + ("/" + sub if sub else "")
    what = 'User "%s" cannot %s resource "%s" in API group "%s"' % (ident.user, verb, resource, group)
    what += ' in the namespace "%s"' % ns if ns else " at the cluster scope"
    qualified = plural + ("." + group if group else "")
    message = ('%s "%s" is forbidden: %s' % (qualified, name, what)) if name else "%s is forbidden: %s" % (qualified, what)
    return ApiError(403, "Forbidden", message, {"name": name, "group": group, "kind": plural} if name else {"group": group, "kind": plural})
