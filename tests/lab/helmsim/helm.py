# SPDX-License-Identifier: GPL-3.0-or-later
"""A strict ``helm`` 3 CLI shim for the lab (see README.md next to this file).

It parses the command line as helm's cobra/pflag does (flags before or after the
sub-command, ``--f=v``, ``--f v``, ``-f=v``, ``-fv``), refuses what helm refuses
with helm's own message on stderr and exit code 1, and keeps the release
state in the cluster as Helm 3's Secret storage driver does: one Secret
``sh.helm.release.v1.<name>.v<revision>`` of type ``helm.sh/release.v1`` per
revision, labels ``name``, ``owner=helm``, ``status``, ``version``, data
``release`` = base64(gzip(JSON release)). There is no network: the charts it
knows are in CATALOG (the repository URL, the chart name and its versions);
the NVIDIA network-operator chart "renders" the operator's ServiceAccount,
ClusterRole(Binding) and Deployment, which the shim creates, updates and
deletes through the API server of the kubeconfig it is given.
"""
from __future__ import annotations

import base64
import copy
import datetime
import gzip
import json
import os
import re
import sys
import time
from typing import Any

VERSION = "v3.17.3"
NGC = "https://helm.ngc.nvidia.com/nvidia"


def _netop_chart(version: str) -> dict:
    # Chart.yaml of Mellanox/network-operator deployment/network-operator (chart version without the v, appVersion with it)
    return {"apiVersion": "v2", "appVersion": "v" + version, "description": "Nvidia network operator",
            "home": "https://github.com/Mellanox/network-operator", "kubeVersion": ">= 1.21.0-0",
            "name": "network-operator", "sources": ["https://github.com/Mellanox/network-operator"],
            "type": "application", "version": version,
            "dependencies": [{"condition": "nfd.enabled", "name": "node-feature-discovery", "repository": "", "version": "0.17.3"},
                             {"condition": "sriovNetworkOperator.enabled", "name": "sriov-network-operator", "repository": "", "version": "0.1.0"}]}


# Repository URL -> chart name -> versions the lab serves (the role's pinned chart_version must be one of them).
CATALOG: dict[str, dict[str, dict[str, dict]]] = {
    NGC: {"network-operator": {v: _netop_chart(v) for v in ("25.10.0", "26.1.0", "26.4.1")}},
}
NETOP_DEFAULT_VALUES = {
    "nfd": {"enabled": True, "deployNodeFeatureRules": True},
    "sriovNetworkOperator": {"enabled": False},
    "upgradeCRDs": True,
    "operator": {"repository": "nvcr.io/nvidia/cloud-native", "image": "network-operator", "tag": None},
    # Mellanox/network-operator b06827e0 deployment/network-operator/values.yaml, key sriov-network-operator
    "sriov-network-operator": {"operator": {"resourcePrefix": "nvidia.com"},
                               "images": {"operator": "nvcr.io/nvidia/mellanox/sriov-network-operator"}},
}
STATUSES = ("deployed", "failed", "pending-install", "pending-upgrade", "pending-rollback", "superseded", "uninstalled", "uninstalling")
_DURATION = re.compile(r"^(?:[0-9]+(?:\.[0-9]+)?(?:ns|us|µs|ms|s|m|h))+$|^0$")


class HelmError(Exception):
    """Printed as helm prints an error: ``Error: <message>`` on stderr, exit 1."""


# ------------------------------------------------------------------ command line
# flag spec: long name -> (kind, shorthand); kind bool | str | list | int | dur
GLOBAL_FLAGS = {
    "debug": ("bool", ""), "kubeconfig": ("str", ""), "kube-context": ("str", ""), "namespace": ("str", "n"),
    "kube-apiserver": ("str", ""), "kube-token": ("str", ""), "kube-ca-file": ("str", ""),
    "kube-insecure-skip-tls-verify": ("bool", ""), "burst-limit": ("int", ""), "qps": ("str", ""),
    "kube-as-user": ("str", ""), "kube-as-group": ("list", ""), "registry-config": ("str", ""),
    "repository-cache": ("str", ""), "repository-config": ("str", ""), "help": ("bool", "h"),
}
_CHART_FLAGS = {"version": ("str", ""), "repo": ("str", ""), "devel": ("bool", ""), "insecure-skip-tls-verify": ("bool", ""),
                "plain-http": ("bool", ""), "username": ("str", ""), "password": ("str", ""), "ca-file": ("str", ""),
                "cert-file": ("str", ""), "key-file": ("str", ""), "verify": ("bool", ""), "keyring": ("str", ""),
                "pass-credentials": ("bool", "")}
_DEPLOY_FLAGS = dict(_CHART_FLAGS, **{
    "wait": ("bool", ""), "wait-for-jobs": ("bool", ""), "timeout": ("dur", ""), "atomic": ("bool", ""), "force": ("bool", ""),
    "no-hooks": ("bool", ""), "create-namespace": ("bool", ""), "values": ("list", "f"), "set": ("list", ""),
    "set-string": ("list", ""), "set-json": ("list", ""), "set-file": ("list", ""), "set-literal": ("list", ""),
    "history-max": ("int", ""), "skip-crds": ("bool", ""), "dry-run": ("str?", ""), "description": ("str", ""),
    "post-renderer": ("str", ""), "skip-schema-validation": ("bool", ""), "render-subchart-notes": ("bool", ""),
    "disable-openapi-validation": ("bool", ""), "cleanup-on-fail": ("bool", ""), "labels": ("list", "l"),
    "output": ("str", "o"), "enable-dns": ("bool", ""), "take-ownership": ("bool", ""), "hide-notes": ("bool", ""),
})
_INSTALL_ONLY = {"generate-name": ("bool", "g"), "name-template": ("str", ""), "replace": ("bool", ""), "dependency-update": ("bool", "")}
_UPGRADE_ONLY = {"install": ("bool", "i"), "reset-values": ("bool", ""), "reuse-values": ("bool", ""), "reset-then-reuse-values": ("bool", "")}
COMMANDS: dict[tuple[str, ...], dict] = {
    ("version",): {"short": ("bool", ""), "template": ("str", "")},
    ("list",): {"output": ("str", "o"), "filter": ("str", "f"), "all": ("bool", "a"), "all-namespaces": ("bool", "A"),
                "short": ("bool", "q"), "deployed": ("bool", ""), "failed": ("bool", ""), "pending": ("bool", ""),
                "superseded": ("bool", ""), "uninstalled": ("bool", ""), "uninstalling": ("bool", ""), "no-headers": ("bool", ""),
                "max": ("int", "m"), "offset": ("int", ""), "reverse": ("bool", "r"), "date": ("bool", "d"),
                "selector": ("str", "l"), "time-format": ("str", "")},
    ("get", "values"): {"output": ("str", "o"), "all": ("bool", "a"), "revision": ("int", "")},
    ("get", "manifest"): {"revision": ("int", "")},
    ("show", "chart"): dict(_CHART_FLAGS),
    ("upgrade",): dict(_DEPLOY_FLAGS, **_UPGRADE_ONLY),
    ("install",): dict(_DEPLOY_FLAGS, **_INSTALL_ONLY),
    ("uninstall",): {"keep-history": ("bool", ""), "no-hooks": ("bool", ""), "wait": ("bool", ""), "timeout": ("dur", ""),
                     "dry-run": ("bool", ""), "ignore-not-found": ("bool", ""), "description": ("str", ""), "cascade": ("str", "")},
    ("status",): {"output": ("str", "o"), "revision": ("int", ""), "show-resources": ("bool", ""), "show-desc": ("bool", "")},
    ("plugin", "list"): {},
    ("repo", "update"): {"fail-on-repo-update-fail": ("bool", "")},
}
ALIASES = {"ls": "list", "un": "uninstall", "del": "uninstall", "delete": "uninstall", "inspect": "show"}
GROUPS = {"get": ("values", "manifest", "notes", "hooks", "all", "metadata"), "show": ("chart", "values", "readme", "crds", "all"),
          "plugin": ("list", "install", "uninstall", "update", "package", "verify"), "repo": ("update", "add", "list", "remove", "index")}
# Flags helm has that this shim accepts on parsing but does not emulate: using one is refused (not silently ignored).
NOT_EMULATED = {"post-renderer", "set-file", "set-json", "set-literal", "generate-name", "name-template", "replace", "dependency-update",
                "dry-run", "kube-apiserver", "kube-token", "kube-ca-file", "kube-as-user", "kube-as-group", "template", "max", "offset",
                "date", "selector", "time-format", "labels", "username", "password", "ca-file", "cert-file", "key-file", "verify",
                "keyring", "render-subchart-notes", "cleanup-on-fail", "atomic", "description", "cascade", "reset-then-reuse-values",
                "revision", "show-resources", "take-ownership"}
ARGS = {("version",): (0, 0), ("list",): (0, 0), ("get", "values"): (1, 1), ("get", "manifest"): (1, 1), ("show", "chart"): (1, 1),
        ("upgrade",): (2, 2), ("install",): (2, 2), ("uninstall",): (1, None), ("status",): (1, 1), ("plugin", "list"): (0, 0),
        ("repo", "update"): (0, None)}
USAGE = {("get", "values"): "helm get values RELEASE_NAME [flags]", ("get", "manifest"): "helm get manifest RELEASE_NAME [flags]",
         ("show", "chart"): "helm show chart [CHART] [flags]", ("upgrade",): "helm upgrade [RELEASE] [CHART] [flags]",
         ("install",): "helm install [NAME] [CHART] [flags]", ("uninstall",): "helm uninstall RELEASE_NAME [...] [flags]",
         ("status",): "helm status RELEASE_NAME [flags]", ("version",): "helm version [flags]", ("list",): "helm list [flags]",
         ("plugin", "list"): "helm plugin list [flags]", ("repo", "update"): "helm repo update [REPO1 [REPO2 ...]] [flags]"}


def _all_flags() -> dict:
    found = dict(GLOBAL_FLAGS)
    for spec in COMMANDS.values():
        found.update(spec)
    return found


def _takes_value(spec: dict, token: str) -> bool:
    """For finding the sub-command: does this flag token (without '=') consume the next argument?"""
    if token.startswith("--"):
        kind = spec.get(token[2:], ("bool", ""))[0]
    else:
        short = {v[1]: v[0] for v in spec.values() if v[1]}
        kind = short.get(token[-1:], "bool") if len(token) == 2 else "bool"
    return kind not in ("bool", "str?")


def find_command(argv: list[str]) -> tuple[tuple[str, ...], list[str]]:
    """Return the sub-command path and the remaining args (cobra strips flags to find it)."""
    spec, words, i = _all_flags(), [], 0
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            break
        if tok.startswith("-") and tok != "-":
            if "=" not in tok and _takes_value(spec, tok):
                i += 1
        else:
            words.append(i)
        i += 1
    if not words:
        raise HelmError("__help__")
    first = ALIASES.get(argv[words[0]], argv[words[0]])
    known = {c[0] for c in COMMANDS} | set(GROUPS)
    if first not in known:
        raise HelmError('unknown command "%s" for "helm"\nRun \'helm --help\' for usage.' % argv[words[0]])
    path: tuple[str, ...] = (first,)
    drop = [words[0]]
    if first in GROUPS:
        if len(words) < 2:
            raise HelmError("__help__")
        sub = "list" if first in ("plugin", "repo") and argv[words[1]] == "ls" else argv[words[1]]
        if sub not in GROUPS[first]:
            raise HelmError('unknown command "%s" for "helm %s"\nRun \'helm %s --help\' for usage.' % (sub, first, first))
        path = (first, sub)
        drop.append(words[1])
        if path not in COMMANDS:
            raise HelmError("lab helm shim: 'helm %s' is not emulated" % " ".join(path))
    rest = [a for j, a in enumerate(argv) if j not in drop]
    return path, rest


def _convert(name: str, kind: str, value: str, display: str) -> Any:
    if kind in ("bool", "str?"):
        if kind == "str?" and value not in ("true", "false", "1", "0", "t", "f", "T", "F", "TRUE", "FALSE", "True", "False"):
            return value
        if value in ("1", "t", "T", "true", "TRUE", "True"):
            return True
        if value in ("0", "f", "F", "false", "FALSE", "False"):
            return False
        raise HelmError('invalid argument "%s" for "%s" flag: strconv.ParseBool: parsing "%s": invalid syntax' % (value, display, value))
    if kind == "int":
        if not re.fullmatch(r"[+-]?[0-9]+", value):
            raise HelmError('invalid argument "%s" for "%s" flag: strconv.ParseInt: parsing "%s": invalid syntax' % (value, display, value))
        return int(value)
    if kind == "dur" and not _DURATION.match(value):
        raise HelmError('invalid argument "%s" for "%s" flag: time: invalid duration "%s"' % (value, display, value))
    return value


def parse_flags(path: tuple[str, ...], args: list[str]) -> tuple[dict, list[str]]:
    """pflag rules: long and short forms, '=' or the next argument; repeated list flags add up."""
    spec = dict(GLOBAL_FLAGS, **COMMANDS[path])
    short = {v[1]: k for k, v in spec.items() if v[1]}
    flags: dict[str, Any] = {}
    positional: list[str] = []
    i = 0

    def put(name: str, value: str | None, display: str) -> int:
        kind = spec[name][0]
        used = 0
        if value is None:
            if kind in ("bool", "str?"):
                value = "true"
            elif i + 1 < len(args):
                value, used = args[i + 1], 1
            else:
                raise HelmError("flag needs an argument: %s" % display)
        # pflag names the flag with its shorthand whichever form was used
        converted = _convert(name, kind, value, "-%s, --%s" % (spec[name][1], name) if spec[name][1] else "--" + name)
        if kind == "list":
            flags.setdefault(name, []).append(converted)
        else:
            flags[name] = converted
        return used

    while i < len(args):
        tok = args[i]
        if tok == "--":
            positional += args[i + 1:]
            break
        if tok.startswith("--"):
            name, _sep, value = tok[2:].partition("=")
            if name not in spec:
                raise HelmError("unknown flag: --%s" % name)
            i += put(name, value if _sep else None, "--" + name)
        elif tok.startswith("-") and tok != "-":
            letter, rest = tok[1], tok[2:]
            if letter not in short:
                raise HelmError("unknown shorthand flag: '%s' in %s" % (letter, tok))
            name = short[letter]
            value: str | None = rest
            if rest.startswith("="):
                value = rest[1:]
            elif not rest:
                value = None
            if rest and spec[name][0] == "bool" and not tok[2:].startswith("="):
                raise HelmError("lab helm shim: combined short flags (%s) are not emulated" % tok)
            i += put(name, value, "'%s' in %s" % (letter, tok))
        else:
            positional.append(tok)
        i += 1
    for name in flags:
        if name in NOT_EMULATED:
            raise HelmError("lab helm shim: flag --%s is not emulated" % name)
    lo, hi = ARGS[path]
    cmd = "helm " + " ".join(path)
    if len(positional) < lo or (hi is not None and len(positional) > hi):
        if lo == hi:
            need = "accepts %d arg(s), received %d" % (lo, len(positional)) if lo == 0 else \
                "requires %d argument%s" % (lo, "" if lo == 1 else "s")
            msg = '"%s" %s' % (cmd, need) if lo else "unknown command %r for %r" % (positional[0], cmd)
        else:
            msg = '"%s" requires at least %d argument%s' % (cmd, lo, "" if lo == 1 else "s")
        raise HelmError('%s\n\nUsage:  %s' % (msg, USAGE[path]))
    return flags, positional


# ------------------------------------------------------------------ release encoding (pkg/storage/driver/util.go)
def encode_release(release: dict) -> str:
    return base64.b64encode(gzip.compress(json.dumps(release, separators=(",", ":")).encode(), mtime=0)).decode()


def decode_release(data: str) -> dict:
    raw = base64.b64decode(data)
    if raw[:3] == b"\x1f\x8b\x08":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def release_secret(release: dict, stamp_label: str = "createdAt") -> dict:
    """The Secret Helm 3's storage driver writes for one release revision."""
    return {
        "apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
        "metadata": {"name": "sh.helm.release.v1.%s.v%d" % (release["name"], release["version"]), "namespace": release["namespace"],
                     "labels": {"name": release["name"], "owner": "helm", "status": release["info"]["status"],
                                "version": str(release["version"]), stamp_label: str(int(time.time()))}},
        # the API carries Secret data base64-encoded; helm's value is itself base64(gzip(json))
        "data": {"release": base64.b64encode(encode_release(release).encode()).decode()},
    }


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _rfc3339(t: datetime.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z"


def _parse_time(text: str) -> datetime.datetime:
    return datetime.datetime.strptime(text[:26], "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=datetime.UTC)


def list_element(release: dict) -> dict:
    """One entry of `helm list -o yaml|json` (cmd/helm/list.go releaseElement)."""
    meta = release["chart"]["metadata"]
    updated = _parse_time(release["info"]["last_deployed"])
    return {"name": release["name"], "namespace": release["namespace"], "revision": str(release["version"]),
            "updated": updated.strftime("%Y-%m-%d %H:%M:%S.%f") + "000 +0000 UTC", "status": release["info"]["status"],
            "chart": "%s-%s" % (meta["name"], meta["version"]), "app_version": meta.get("appVersion", "")}


def status_text(release: dict) -> str:
    when = _parse_time(release["info"]["last_deployed"]).strftime("%a %b %e %H:%M:%S %Y").replace("  ", " ")
    out = ["NAME: %s" % release["name"], "LAST DEPLOYED: %s" % when, "NAMESPACE: %s" % release["namespace"],
           "STATUS: %s" % release["info"]["status"], "REVISION: %d" % release["version"], "TEST SUITE: None"]
    if release["info"].get("notes"):
        out += ["NOTES:", release["info"]["notes"].rstrip("\n")]
    return "\n".join(out) + "\n"


def table(rows: list[list[str]]) -> str:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "".join("\t".join(cell.ljust(widths[c]) for c, cell in enumerate(row)).rstrip() + "\n" for row in rows)


def dump(data: Any, fmt: str) -> str:
    import yaml  # pylint: disable=import-outside-toplevel

    if fmt == "json":
        return json.dumps(data, separators=(",", ":")) + "\n"
    return yaml.safe_dump(data, default_flow_style=False, sort_keys=True)


def _output(flags: dict) -> str:
    fmt = flags.get("output", "table")
    if fmt not in ("table", "json", "yaml"):
        raise HelmError('invalid argument "%s" for "-o, --output" flag: invalid format type' % fmt)
    return fmt


# ------------------------------------------------------------------ charts
def find_chart(ref: str, flags: dict) -> dict:
    """The chart metadata for ref (+ --repo, --version), or helm's error."""
    repo = flags.get("repo")
    want = flags.get("version", "")
    if not repo:
        if os.path.exists(ref):
            raise HelmError("lab helm shim: local chart %s is not emulated (charts come from CATALOG by --repo)" % ref)
        if "/" not in ref:
            raise HelmError("non-absolute URLs should be in form of repo_name/path_to_chart, got: %s" % ref)
        raise HelmError("repo %s not found" % ref.split("/", 1)[0])
    charts = CATALOG.get(repo.rstrip("/"))
    if charts is None:
        raise HelmError('looks like "%s" is not a valid chart repository or cannot be reached: lab helm shim has no network; '
                        "it serves %s" % (repo, ", ".join(sorted(CATALOG))))
    versions = charts.get(ref)
    if versions is None:
        raise HelmError('chart "%s" not found in %s repository' % (ref, repo))
    if not want:
        return versions[max(versions, key=lambda v: tuple(int(x) for x in v.split(".")))]
    found = versions.get(want[1:] if want.startswith("v") else want)
    if found is None:
        raise HelmError('chart "%s" version "%s" not found in %s repository' % (ref, want, repo))
    return found


def render(chart: dict, name: str, namespace: str, values: dict) -> list[dict]:
    """The objects the network-operator chart's own templates make, and the SR-IOV operator subchart's Deployment
    when ``sriovNetworkOperator.enabled`` (not NFD nor the subchart's other objects: see README)."""
    objects = _render_netop(chart, name, namespace, values)
    if (values.get("sriovNetworkOperator") or {}).get("enabled") is True:
        objects.append(_render_sriov_operator(chart, name, namespace, values.get("sriov-network-operator") or {}))
    return objects


def _render_sriov_operator(chart: dict, name: str, namespace: str, values: dict) -> dict:
    """k8snetworkplumbingwg/sriov-network-operator 249e20012 deployment/sriov-network-operator-chart: the Deployment of
    templates/operator.yaml, named by _helpers.tpl's fullname (the release name when it contains the chart name, else
    release-chart), its image ``images.operator`` and env RESOURCE_PREFIX = ``operator.resourcePrefix`` (what the
    operator's device plugin config is prefixed with); the network-operator chart's values set nvidia.com."""
    sub = "sriov-network-operator"
    full = name if sub in name else ("%s-%s" % (name, sub))[:63].rstrip("-")
    image = (values.get("images") or {}).get("operator") or ""
    if ":" not in image.rsplit("/", 1)[-1]:
        image = "%s:network-operator-%s" % (image, chart["appVersion"])
    env = [{"name": "WATCH_NAMESPACE", "value": namespace}, {"name": "OPERATOR_NAME", "value": sub},
           {"name": "RESOURCE_PREFIX", "value": str((values.get("operator") or {}).get("resourcePrefix") or "")},
           {"name": "NAMESPACE", "value": namespace}]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": full, "namespace": namespace,
                         "labels": {"app.kubernetes.io/name": sub, "app.kubernetes.io/instance": name, "app.kubernetes.io/managed-by": "Helm",
                                    "helm.sh/chart": "%s-0.1.0" % sub}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"name": sub}}, "strategy": {"type": "Recreate"},
                     "template": {"metadata": {"labels": {"name": sub}},
                                  "spec": {"serviceAccountName": full,
                                           "containers": [{"name": full, "image": image, "command": ["sriov-network-operator"],
                                                           "env": env}]}}}}


def _render_netop(chart: dict, name: str, namespace: str, values: dict) -> list[dict]:
    """The network-operator chart's own templates: ServiceAccount, ClusterRole(Binding), the operator's Deployment."""
    op = values.get("operator") or {}
    image = "%s/%s:%s" % (op.get("repository"), op.get("image"), op.get("tag") or chart["appVersion"])
    labels = {"app.kubernetes.io/name": chart["name"], "app.kubernetes.io/instance": name, "app.kubernetes.io/managed-by": "Helm",
              "app.kubernetes.io/version": chart["appVersion"], "helm.sh/chart": "%s-%s" % (chart["name"], chart["version"])}
    full = name if chart["name"] in name else "%s-%s" % (name, chart["name"])

    def meta(obj_name: str, ns: str | None) -> dict:
        out: dict = {"name": obj_name, "labels": dict(labels)}
        if ns:
            out["namespace"] = ns
        return out

    sel = {"app.kubernetes.io/name": chart["name"], "app.kubernetes.io/instance": name}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(full, namespace)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": meta(full, None),
         "rules": [{"apiGroups": ["mellanox.com"], "resources": ["*"], "verbs": ["*"]},
                   {"apiGroups": ["", "apps"], "resources": ["configmaps", "daemonsets", "pods", "nodes"], "verbs": ["*"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": meta(full, None),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": full},
         "subjects": [{"kind": "ServiceAccount", "name": full, "namespace": namespace}]},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(full, namespace),
         "spec": {"replicas": 1, "selector": {"matchLabels": sel},
                  "template": {"metadata": {"labels": sel},
                               "spec": {"serviceAccountName": full,
                                        "containers": [{"name": chart["name"], "image": image, "command": ["/manager"],
                                                        "args": ["--leader-elect"]}]}}}},
    ]


def manifest_text(objects: list[dict]) -> str:
    import yaml  # pylint: disable=import-outside-toplevel

    def source(obj: dict) -> str:
        if obj["metadata"].get("labels", {}).get("app.kubernetes.io/name") == "sriov-network-operator":
            return "network-operator/charts/sriov-network-operator/templates/operator.yaml"
        return "network-operator/templates/%s.yaml" % obj["kind"].lower()

    return "".join("---\n# Source: %s\n%s" % (source(o), yaml.safe_dump(o, sort_keys=False)) for o in objects)


def merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in over.items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else copy.deepcopy(value)
    return out


def _scalar(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    return text


def user_values(flags: dict) -> dict:
    """-f/--values files (later wins), then --set / --set-string (strvals: a.b=c,d=e)."""
    import yaml  # pylint: disable=import-outside-toplevel

    values: dict = {}
    for path in flags.get("values", []):
        try:
            with open(path, encoding="utf-8") as handle:
                data = yaml.safe_load(handle)
        except OSError:
            raise HelmError("open %s: no such file or directory" % path) from None
        except yaml.YAMLError as exc:
            raise HelmError("failed to parse %s: error converting YAML to JSON: %s" % (path, str(exc).splitlines()[0])) from None
        if data is None:
            continue
        if not isinstance(data, dict):
            raise HelmError("failed to parse %s: error unmarshaling JSON: json: cannot unmarshal %s into Go value of type map[string]interface {}"
                            % (path, "array" if isinstance(data, list) else "string"))
        values = merge(values, data)
    for kind in ("set", "set-string"):
        for expr in flags.get(kind, []):
            for pair in expr.split(","):
                key, sep, raw = pair.partition("=")
                if not sep or not key:
                    raise HelmError('failed parsing --%s data: key "%s" has no value' % (kind, pair))
                node = values
                parts = key.split(".")
                for part in parts[:-1]:
                    node = node.setdefault(part, {})
                node[parts[-1]] = raw if kind == "set-string" else _scalar(raw)
    return values


# ------------------------------------------------------------------ the cluster
class Cluster:
    """The API server of the kubeconfig (kubernetes client's ApiClient, raw REST)."""

    def __init__(self, flags: dict, environ: dict) -> None:
        from kubernetes import config  # pylint: disable=import-outside-toplevel

        path = flags.get("kubeconfig") or environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
        context = flags.get("kube-context") or environ.get("HELM_KUBECONTEXT") or None
        if not os.path.exists(path):
            raise HelmError('Kubernetes cluster unreachable: stat %s: no such file or directory' % path)
        try:
            self.api = config.new_client_from_config(config_file=path, context=context)
            contexts, active = config.list_kube_config_contexts(config_file=path)
        except Exception as exc:  # noqa: BLE001  # pylint: disable=broad-exception-caught  # reported as helm does
            raise HelmError("Kubernetes cluster unreachable: %s" % exc) from None
        ctx = next((c for c in contexts if c["name"] == context), active) if context else active
        self.namespace = flags.get("namespace") or environ.get("HELM_NAMESPACE") or (ctx or {}).get("context", {}).get("namespace") or "default"

    def call(self, method: str, path: str, body: Any = None, query: list | None = None) -> tuple[int, Any]:
        import urllib3  # pylint: disable=import-outside-toplevel
        from kubernetes.client.rest import ApiException  # pylint: disable=import-outside-toplevel

        try:
            req = self.api.param_serialize(method, path, query_params=query or [], body=body, auth_settings=["BearerToken"],
                                           header_params={"Content-Type": "application/json", "Accept": "application/json"})
            resp = self.api.call_api(*req[:4])
            status, raw = resp.status, resp.read()
        except ApiException as exc:
            status, raw = exc.status, exc.body
        except urllib3.exceptions.HTTPError as exc:
            raise HelmError("Kubernetes cluster unreachable: %s" % exc) from None
        try:
            return status, json.loads(raw or b"{}")
        except ValueError:
            return status, {"message": raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)}

    def must(self, method: str, path: str, body: Any = None, query: list | None = None, what: str = "") -> Any:
        status, data = self.call(method, path, body, query)
        if status >= 300:
            raise HelmError("%s%s" % (what, data.get("message") or status))
        return data


def obj_path(obj: dict, with_name: bool = True) -> str:
    """REST path of a manifest object (the kinds the catalog's charts render)."""
    group, _sep, version = obj["apiVersion"].rpartition("/")
    plural = {"ServiceAccount": "serviceaccounts", "Deployment": "deployments", "ClusterRole": "clusterroles",
              "ClusterRoleBinding": "clusterrolebindings", "Namespace": "namespaces"}[obj["kind"]]
    base = "/apis/%s/%s" % (group, version) if group else "/api/%s" % version
    ns = obj["metadata"].get("namespace")
    path = base + ("/namespaces/%s" % ns if ns else "") + "/" + plural
    return path + "/" + obj["metadata"]["name"] if with_name else path


def _describe(obj: dict) -> str:
    ns = obj["metadata"].get("namespace")
    return '%s "%s"%s' % (obj["kind"], obj["metadata"]["name"], ' in namespace "%s"' % ns if ns else "")


class Releases:
    """Helm 3's Secret storage driver."""

    def __init__(self, cluster: Cluster, namespace: str | None) -> None:
        self.cluster = cluster
        self.namespace = namespace

    def _path(self, namespace: str | None) -> str:
        return "/api/v1/namespaces/%s/secrets" % namespace if namespace else "/api/v1/secrets"

    def all(self, name: str | None = None) -> list[dict]:
        sel = "owner=helm" + (",name=%s" % name if name else "")
        data = self.cluster.must("GET", self._path(self.namespace), query=[("labelSelector", sel)], what="list: failed to list: ")
        out = []
        for item in data.get("items") or []:
            try:
                out.append(decode_release(base64.b64decode(item["data"]["release"]).decode()))
            except (KeyError, ValueError, OSError):
                continue  # helm logs and skips what it cannot decode
        return sorted(out, key=lambda r: (r["namespace"], r["name"], r["version"]))

    def history(self, name: str) -> list[dict]:
        return [r for r in self.all(name) if r["name"] == name]

    def last(self, name: str) -> dict | None:
        hist = self.history(name)
        return hist[-1] if hist else None

    def create(self, release: dict, what: str) -> None:
        secret = release_secret(release)
        self.cluster.must("POST", self._path(release["namespace"]), secret, what=what + "create: failed to create: ")

    def update(self, release: dict) -> None:
        secret = release_secret(release, "modifiedAt")
        self.cluster.must("PUT", self._path(release["namespace"]) + "/" + secret["metadata"]["name"], secret, what="update: failed to update: ")

    def delete(self, release: dict) -> None:
        self.cluster.must("DELETE", self._path(release["namespace"]) + "/sh.helm.release.v1.%s.v%d" % (release["name"], release["version"]))


# ------------------------------------------------------------------ commands
def cmd_version(flags: dict, _args: list[str], _environ: dict) -> str:
    if flags.get("short"):
        return VERSION + "+g365fa63\n"
    return 'version.BuildInfo{Version:"%s", GitCommit:"365fa639fcbbe6d4ae3f6e1b4c1b4bdabed9dd10", GitTreeState:"clean", GoVersion:"go1.23.7"}\n' % VERSION


def cmd_plugin_list(_flags: dict, _args: list[str], _environ: dict) -> str:
    return "NAME\tVERSION\tDESCRIPTION\n"  # no plugins (no helm-diff): kubernetes.core.helm uses its default check


def cmd_repo_update(_flags: dict, _args: list[str], _environ: dict) -> str:
    raise HelmError("no repositories found. You must add one before updating")


def cmd_show_chart(flags: dict, args: list[str], _environ: dict) -> str:
    return dump(find_chart(args[0], flags), "yaml")


def cmd_list(flags: dict, _args: list[str], environ: dict) -> str:
    fmt = _output(flags)
    cluster = Cluster(flags, environ)
    releases = Releases(cluster, None if flags.get("all-namespaces") else cluster.namespace).all()
    latest: dict = {}
    for rel in releases:
        latest[(rel["namespace"], rel["name"])] = rel
    wanted = {s for s in ("deployed", "failed", "superseded", "uninstalled", "uninstalling") if flags.get(s)}
    if flags.get("pending"):
        wanted |= {"pending-install", "pending-upgrade", "pending-rollback"}
    if flags.get("all"):
        wanted = set(STATUSES) - {"uninstalled"} | wanted  # --all: every status but uninstalled unless asked for
    wanted = wanted or {"deployed", "failed"}
    try:
        pattern = re.compile(flags.get("filter", ""))
    except re.error as exc:
        raise HelmError("error parsing regexp: %s: `%s`" % (exc.msg, flags.get("filter"))) from None
    rows = [r for r in latest.values() if r["info"]["status"] in wanted and pattern.search(r["name"])]
    rows.sort(key=lambda r: r["name"])
    if flags.get("short"):
        return "".join(r["name"] + "\n" for r in rows) if fmt == "table" else dump([r["name"] for r in rows], fmt)
    elems = [list_element(r) for r in rows]
    if fmt != "table":
        return dump(elems, fmt)
    head = [] if flags.get("no-headers") else [["NAME", "NAMESPACE", "REVISION", "UPDATED", "STATUS", "CHART", "APP VERSION"]]
    body = [[e["name"], e["namespace"], e["revision"], e["updated"], e["status"], e["chart"], e["app_version"]] for e in elems]
    return table(head + body) if head + body else ""


def _release_or_fail(flags: dict, name: str, environ: dict) -> dict:
    cluster = Cluster(flags, environ)
    rel = Releases(cluster, cluster.namespace).last(name)
    if rel is None:
        raise HelmError("release: not found")
    return rel


def cmd_get_values(flags: dict, args: list[str], environ: dict) -> str:
    fmt = _output(flags)
    rel = _release_or_fail(flags, args[0], environ)
    values = merge(rel["chart"].get("values") or {}, rel.get("config") or {}) if flags.get("all") else rel.get("config")
    if fmt == "table":
        return ("COMPUTED VALUES:\n" if flags.get("all") else "USER-SUPPLIED VALUES:\n") + dump(values or None, "yaml")
    return dump(values or None, fmt)


def cmd_get_manifest(flags: dict, args: list[str], environ: dict) -> str:
    return _release_or_fail(flags, args[0], environ)["manifest"]


def cmd_status(flags: dict, args: list[str], environ: dict) -> str:
    fmt = _output(flags)
    rel = _release_or_fail(flags, args[0], environ)
    if fmt == "table":
        return status_text(rel)
    shown = dict(rel, chart={"metadata": rel["chart"]["metadata"], "values": rel["chart"].get("values")})
    return dump(shown, fmt)


def _duration(text: str) -> float:
    total = 0.0
    for num, unit in re.findall(r"([0-9.]+)(ns|us|µs|ms|s|m|h)", text):
        total += float(num) * {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}[unit]
    return total


def _apply(cluster: Cluster, objects: list[dict], name: str, namespace: str, failed: str) -> None:
    """Create or replace the rendered objects. As Helm 3, first refuse if any of them exists and is not this release's."""
    current = []
    for obj in objects:
        status, cur = cluster.call("GET", obj_path(obj))
        if status >= 300 and status != 404:
            raise HelmError(failed + (cur.get("message") or str(status)))
        ann = cur["metadata"].get("annotations") or {} if status != 404 else {}
        if status != 404 and ((cur["metadata"].get("labels") or {}).get("app.kubernetes.io/managed-by") != "Helm"
                              or ann.get("meta.helm.sh/release-name") != name or ann.get("meta.helm.sh/release-namespace") != namespace):
            raise HelmError("%sUnable to continue with install: %s exists and cannot be imported into the current release: "
                            "invalid ownership metadata" % (failed, _describe(obj)))
        current.append(None if status == 404 else cur)
    for obj, cur in zip(objects, current):
        body = copy.deepcopy(obj)
        body["metadata"]["annotations"] = {"meta.helm.sh/release-name": name, "meta.helm.sh/release-namespace": namespace}
        if cur is None:
            cluster.must("POST", obj_path(obj, False), body, what=failed)
        else:
            body["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
            cluster.must("PUT", obj_path(obj), body, what=failed)


def _wait(cluster: Cluster, objects: list[dict], gone: bool, timeout: float, failed: str) -> None:
    """--wait: until every object exists (k8sim runs no Deployment rollout: see README) or, for uninstall, is gone."""
    deadline = time.monotonic() + timeout
    for obj in objects:
        while True:
            status, _body = cluster.call("GET", obj_path(obj))
            if (status == 404) == gone:
                break
            if time.monotonic() > deadline:
                raise HelmError(failed + "context deadline exceeded")
            time.sleep(0.2)


def _check_namespace(cluster: Cluster, namespace: str, create: bool, failed: str) -> None:
    status, _body = cluster.call("GET", "/api/v1/namespaces/" + namespace)
    if status != 404:
        return
    if not create:
        raise HelmError('%screate: failed to create: namespaces "%s" not found' % (failed, namespace))
    cluster.must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": namespace, "labels": {"name": namespace}}}, what=failed)


def cmd_deploy(flags: dict, args: list[str], environ: dict, install_cmd: bool) -> str:
    name, ref = args
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", name) or len(name) > 53:
        raise HelmError('invalid release name, must match regex ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ '
                        'and the length must not be longer than 53')
    _output(flags)
    cluster = Cluster(flags, environ)
    store = Releases(cluster, cluster.namespace)
    hist = store.history(name)
    last = hist[-1] if hist else None
    # helm 3: upgrade -i installs only when there is no history at all; install refuses any history (without --replace)
    upgrading = not install_cmd and last is not None
    failed = "UPGRADE FAILED: " if upgrading else "INSTALLATION FAILED: "
    if not install_cmd and (last is None and not flags.get("install") or last is not None and last["info"]["status"] == "uninstalled"):
        raise HelmError('UPGRADE FAILED: "%s" has no deployed releases' % name)
    if install_cmd and last is not None:
        raise HelmError("INSTALLATION FAILED: cannot re-use a name that is still in use")
    chart = find_chart(ref, flags)
    supplied = user_values(flags)
    reuse = flags.get("reuse-values") or (upgrading and not flags.get("reset-values") and not supplied)
    config = merge(last.get("config") or {}, supplied) if reuse and upgrading else supplied
    _check_namespace(cluster, cluster.namespace, bool(flags.get("create-namespace")), failed)
    objects = render(chart, name, cluster.namespace, merge(NETOP_DEFAULT_VALUES, config))
    now = _rfc3339(_now())
    release = {"name": name, "namespace": cluster.namespace, "version": (hist[-1]["version"] + 1) if hist else 1,
               "info": {"first_deployed": last["info"]["first_deployed"] if upgrading else now, "last_deployed": now, "deleted": "",
                        "description": "Upgrade complete" if upgrading else "Install complete", "status": "deployed",
                        "notes": "Get Network Operator deployed resources by running the following commands:\n\n"
                                 "$ kubectl -n %s get pods\n" % cluster.namespace},
               "chart": {"metadata": chart, "lock": None, "templates": [], "values": NETOP_DEFAULT_VALUES, "schema": None, "files": []},
               "config": config, "manifest": manifest_text(objects)}
    _apply(cluster, objects, name, cluster.namespace, failed)
    if upgrading:
        keep = {(o["kind"], o["metadata"]["name"]) for o in objects}
        import yaml  # pylint: disable=import-outside-toplevel

        for old in (o for o in yaml.safe_load_all(last["manifest"]) if o and (o["kind"], o["metadata"]["name"]) not in keep):
            cluster.call("DELETE", obj_path(old))
    if flags.get("wait"):
        _wait(cluster, objects, False, _duration(flags.get("timeout", "5m0s")), failed)
    store.create(release, failed)
    if upgrading:
        last["info"]["status"] = "superseded"
        store.update(last)
    hist_max = flags.get("history-max", 10)
    if upgrading and hist_max > 0:
        for old in hist[:max(0, len(hist) + 1 - hist_max)]:
            store.delete(old)
    fmt = flags.get("output", "table")
    if fmt != "table":
        return dump(release, fmt)
    head = 'Release "%s" has been upgraded. Happy Helming!\n' % name if upgrading else \
        ('Release "%s" does not exist. Installing it now.\n' % name if not install_cmd else "")
    return head + status_text(release)


def cmd_uninstall(flags: dict, args: list[str], environ: dict) -> str:
    import yaml  # pylint: disable=import-outside-toplevel

    cluster = Cluster(flags, environ)
    store = Releases(cluster, cluster.namespace)
    out = []
    for name in args:
        hist = store.history(name)
        if not hist or hist[-1]["info"]["status"] == "uninstalled":
            if flags.get("ignore-not-found"):
                continue
            raise HelmError("uninstall: Release not loaded: %s: release: not found" % name)
        last = hist[-1]
        objects = [o for o in yaml.safe_load_all(last["manifest"]) if o]
        for obj in reversed(objects):
            status, body = cluster.call("DELETE", obj_path(obj))
            if status >= 300 and status != 404:
                raise HelmError("uninstallation completed with 1 error(s): %s" % body.get("message"))
        if flags.get("wait"):
            _wait(cluster, objects, True, _duration(flags.get("timeout", "5m0s")), "uninstallation completed with 1 error(s): ")
        if flags.get("keep-history"):
            last["info"].update(status="uninstalled", deleted=_rfc3339(_now()), description="Uninstallation complete")
            store.update(last)
        else:
            for rel in hist:
                store.delete(rel)
        out.append('release "%s" uninstalled\n' % name)
    return "".join(out)


HANDLERS = {
    ("version",): cmd_version, ("plugin", "list"): cmd_plugin_list, ("repo", "update"): cmd_repo_update,
    ("show", "chart"): cmd_show_chart, ("list",): cmd_list, ("get", "values"): cmd_get_values,
    ("get", "manifest"): cmd_get_manifest, ("status",): cmd_status, ("uninstall",): cmd_uninstall,
    ("upgrade",): lambda f, a, e: cmd_deploy(f, a, e, False), ("install",): lambda f, a, e: cmd_deploy(f, a, e, True),
}


def run(argv: list[str], environ: dict | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``helm <argv>``."""
    environ = dict(os.environ) if environ is None else environ
    try:
        path, rest = find_command(argv)
        flags, args = parse_flags(path, rest)
        if flags.get("help"):
            return 0, "Usage:\n  %s\n" % USAGE[path], ""
        return 0, HANDLERS[path](flags, args, environ), ""
    except HelmError as exc:
        msg = str(exc)
        if msg == "__help__":
            return 0, "The Kubernetes package manager (lab shim, tests/lab/helmsim)\n\nUsage:\n  helm [command]\n", ""
        return 1, "", "Error: %s\n" % msg


def main(argv: list[str]) -> int:
    code, out, err = run(argv)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
