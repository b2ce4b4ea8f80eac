# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""lossless_fabric.kubernetes: RDMA shared device plugin, Multi-NIC CNI / NVIDIA Network Operator."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common._text import unsafe_reason
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _schema
from ansible_collections.lossless.fabric.plugins.module_utils._intent._checks import Ctx, _natural_key, _ok, _suggest, key_repr
from ansible_collections.lossless.fabric.plugins.module_utils._intent._derive import _is_int
from ansible_collections.lossless.fabric.plugins.module_utils._intent._schema import value as leaf
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import (
    _NETDEV_RE,
    BAD,
    K8S_CNIS,
    K8S_LINK_TYPES,
)

# ---------------------------------------------------------------------------
# Kubernetes: RDMA shared device plugin, Multi-NIC CNI / NVIDIA Network Operator
# (host-ib-k8s c.1, c.4, c.6, d). Role k8s_rdma renders its manifests from this.
# ---------------------------------------------------------------------------

_K8S_KEYS = ("namespace", "node_selector", "device_plugin", "cni", "multi_nic_cni", "network_operator")
_K8S_DP_KEYS = ("image", "resources")
_K8S_RESOURCE_KEYS = ("name", "prefix", "rdma_hca_max", "selectors")
_K8S_SELECTOR_KEYS = ("vendors", "device_ids", "drivers", "if_names", "link_types")
_K8S_MNC_KEYS = ("namespace", "version", "controller_image", "network")
_K8S_NET_KEYS = ("name", "plugin", "ipam", "subnet", "master_nets", "attach_policy", "namespaces", "mtu")
_K8S_ATTACH_KEYS = ("strategy", "target")
_K8S_NETOP_KEYS = ("namespace", "chart_version", "version", "repository")
# The plugin's own spellings, so a key copied from its config.json gets a precise hint.
_K8S_PLUGIN_SPELLINGS = {"rdmaHcaMax": "rdma_hca_max", "resourceName": "name", "resourcePrefix": "prefix",
                         "deviceIDs": "device_ids", "ifNames": "if_names", "linkTypes": "link_types"}

# A DNS-1123 label: namespaces, network names.
_DNS_LABEL_RE = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")
_DNS_SUBDOMAIN_RE = re.compile(r"(?=.{1,253}$)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")
# The name part of rdma/<name>: the plugin allows ^[a-zA-Z0-9_]+$ (ValidateConfigs); Kubernetes wants
# the name part of an extended resource to be at most 63 characters with an alphanumeric first and last.
_K8S_RESOURCE_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_]{0,61}[A-Za-z0-9])?")
_K8S_LABEL_KEY_RE = re.compile(
    r"(?:(?=.{1,253}/)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
)
_K8S_LABEL_VALUE_RE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")
# registry[:port]/path:tag or @sha256:digest (the distribution reference grammar, lower-case path).
_K8S_IMAGE_RE = re.compile(
    r"(?P<repo>[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@(?P<digest>sha256:[0-9a-f]{64}))?"
)
_K8S_REPOSITORY_RE = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*")
_K8S_PCI_ID_RE = re.compile(r"[0-9a-f]{4}")
_K8S_DRIVER_RE = re.compile(r"[a-z0-9_]{1,64}")
_K8S_VERSION_RE = re.compile(r"v?[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?")
_K8S_NETOP_TAG_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_K8S_TARGET_RE = re.compile(r"[0-9]+[GMK]bps")

# The defaults of the schema rows (_schema.LEAVES); the two that are not a key's own default
# (the derived resource's name, the controller image's repository) are the rows' prose too.
K8S_DEFAULTS: dict[str, Any] = {
    "namespace": _schema.BY_PATH["kubernetes.namespace"].default,
    "node_selector": dict(_schema.BY_PATH["kubernetes.node_selector"].default),
    "device_plugin_image": _schema.BY_PATH["kubernetes.device_plugin.image"].default,
    "resource": "rdma_shared_device_a",
    "prefix": _schema.BY_PATH["kubernetes.device_plugin.resources[].prefix"].default,
    "rdma_hca_max": _schema.BY_PATH["kubernetes.device_plugin.resources[].rdma_hca_max"].default,
    "mnc_namespace": _schema.BY_PATH["kubernetes.multi_nic_cni.namespace"].default,
    "mnc_version": _schema.BY_PATH["kubernetes.multi_nic_cni.version"].default,
    "mnc_repository": "ghcr.io/foundation-model-stack",
    "network_name": _schema.BY_PATH["kubernetes.multi_nic_cni.network.name"].default,
    "subnet": _schema.BY_PATH["kubernetes.multi_nic_cni.network.subnet"].default,
    "netop_namespace": _schema.BY_PATH["kubernetes.network_operator.namespace"].default,
    "netop_chart_version": _schema.BY_PATH["kubernetes.network_operator.chart_version"].default,
    "netop_version": _schema.BY_PATH["kubernetes.network_operator.version"].default,
    "netop_repository": _schema.BY_PATH["kubernetes.network_operator.repository"].default,
}


_K8S_NS_RULE = "a namespace name (a DNS label: at most 63 of a-z 0-9 -)"


def _k8s_text(ctx: Ctx, src: dict, key: str, path: str, default: str, pattern: re.Pattern, rule: str) -> Any:
    return ctx.text(src.get(key, default), f"{path}.{key}", pattern, rule)


def _k8s_image(ctx: Ctx, value: Any, path: str) -> Any:
    value = ctx.text(value, path, re.compile(r"\S+"), "an image reference")
    if not _ok(value):
        return BAD
    match = _K8S_IMAGE_RE.fullmatch(value)
    if not match:
        ctx.error(path, f"{value!r} is not an image reference (registry/path:tag or registry/path@sha256:digest, lower-case path)")
        return BAD
    if not (match.group("digest") or (match.group("tag") and match.group("tag") != "latest")):
        ctx.error(path, f"{value!r} is not pinned (give a tag other than 'latest', or a digest @sha256:...)")
        return BAD
    return value


def _k8s_label_map(ctx: Ctx, value: Any, path: str) -> Any:
    if not isinstance(value, dict) or not value:
        ctx.error(path, f"{value!r} is not a non-empty mapping of node label to value")
        return BAD
    out: dict[str, str] = {}
    for key in sorted(value, key=str):
        item = f"{path}[{key_repr(key)}]"
        if not isinstance(key, str) or not _K8S_LABEL_KEY_RE.fullmatch(key):
            ctx.error(item, f"{key!r} is not a label key ([prefix/]name, name at most 63 of A-Z a-z 0-9 - _ .)")
            continue
        label = value[key]
        if not isinstance(label, str) or not _K8S_LABEL_VALUE_RE.fullmatch(label):
            hint = " (quote it: YAML reads true as a boolean)" if isinstance(label, bool) else ""
            ctx.error(item, f"{label!r} is not a label value (a string of at most 63 of A-Z a-z 0-9 - _ .){hint}")
            continue
        out[key] = label
    return out if len(out) == len(value) else BAD


def _k8s_list(ctx: Ctx, src: dict, key: str, path: str, check: Any) -> Any:
    value = src.get(key)
    if value is None:
        return []
    items = ctx.sequence(value, f"{path}.{key}")
    if items is BAD:
        return BAD
    out = [check(item, f"{path}.{key}[{index}]") for index, item in enumerate(items)]
    return out if _ok(*out) else BAD


def _k8s_pattern(ctx: Ctx, pattern: re.Pattern, rule: str) -> Any:
    return lambda value, path: ctx.text(value, path, pattern, rule)


def _k8s_mapping(ctx: Ctx, value: Any, path: str, keys: tuple[str, ...]) -> dict:
    """ctx.mapping, with the plugin's camelCase names pointed at the intent's spelling."""
    if isinstance(value, dict):
        for key in [k for k in value if k in _K8S_PLUGIN_SPELLINGS and _K8S_PLUGIN_SPELLINGS[k] in keys]:
            ctx.error(f"{path}.{key}", f"unknown key (the intent spells the plugin's {key!r} as {_K8S_PLUGIN_SPELLINGS[key]!r})")
        value = {k: v for k, v in value.items() if not (k in _K8S_PLUGIN_SPELLINGS and _K8S_PLUGIN_SPELLINGS[k] in keys)}
    return ctx.mapping(value, path, keys)


def _k8s_selectors(ctx: Ctx, raw: Any, path: str) -> Any:
    if raw is None:
        ctx.error(path, f"required (a resource needs at least one selector: {', '.join(_K8S_SELECTOR_KEYS)})")
        return BAD
    src = _k8s_mapping(ctx, raw, path, _K8S_SELECTOR_KEYS)
    if not isinstance(raw, dict):
        return BAD

    def pci(value: Any, item: str) -> Any:
        if _is_int(value):  # YAML reads 1021 as a number
            ctx.error(item, f"{value!r} is not a PCI ID (quote it: '{value}')")
            return BAD
        return ctx.text(value, item, _K8S_PCI_ID_RE, "a PCI ID (4 lower-case hex digits, like '15b3' or '1021')")

    out = {
        "vendors": _k8s_list(ctx, src, "vendors", path, pci),
        "device_ids": _k8s_list(ctx, src, "device_ids", path, pci),
        "drivers": _k8s_list(ctx, src, "drivers", path, _k8s_pattern(ctx, _K8S_DRIVER_RE, "a kernel driver name (like mlx5_core)")),
        "if_names": _k8s_list(ctx, src, "if_names", path, _k8s_pattern(ctx, _NETDEV_RE, "a network interface name (at most 15 of A-Z a-z 0-9 . _ -)")),
        "link_types": _k8s_list(ctx, src, "link_types", path, lambda v, p: _k8s_choice(ctx, v, p, K8S_LINK_TYPES, "a link type")),
    }
    if not _ok(*out.values()):
        return BAD
    if not any(out.values()):
        ctx.error(path, f"{raw!r} selects nothing (a resource needs at least one selector: {', '.join(_K8S_SELECTOR_KEYS)})")
        return BAD
    return out


def _k8s_choice(ctx: Ctx, value: Any, path: str, choices: tuple[str, ...], what: str) -> Any:
    if isinstance(value, str) and value in choices:
        return value
    hint = _suggest(value, choices) if isinstance(value, str) else "one of " + ", ".join(choices)
    ctx.error(path, f"{value!r} is not {what} ({hint})")
    return BAD


def _k8s_resource(ctx: Ctx, entry: Any, path: str) -> Any:
    src = _k8s_mapping(ctx, entry, path, _K8S_RESOURCE_KEYS)
    if not isinstance(entry, dict):
        return BAD
    name = src.get("name")
    if name is None:
        ctx.error(f"{path}.name", "required")
        name = BAD
    else:
        name = ctx.text(
            name,
            f"{path}.name",
            _K8S_RESOURCE_RE,
            "a resource name (the plugin takes only A-Z a-z 0-9 _, and Kubernetes wants at most 63 characters "
            "starting and ending with a letter or digit: rdma_shared_device_a, not rdma-shared-device-a)",
        )
    prefix = ctx.text(src.get("prefix", K8S_DEFAULTS["prefix"]), f"{path}.prefix", _DNS_SUBDOMAIN_RE, "a resource prefix (a DNS subdomain, like rdma)")
    if isinstance(prefix, str) and prefix.split(".")[-2:] in (["kubernetes", "io"], ["k8s", "io"]):
        ctx.error(f"{path}.prefix", f"{prefix!r} is reserved for Kubernetes' own resources")
        prefix = BAD
    out = {
        "name": name,
        "prefix": prefix,
        "rdma_hca_max": leaf(ctx, src, "kubernetes.device_plugin.resources[].rdma_hca_max", path),
        "selectors": _k8s_selectors(ctx, src.get("selectors"), f"{path}.selectors"),
    }
    return out if _ok(*out.values()) else BAD


def _k8s_resources(ctx: Ctx, raw: Any, path: str) -> Any:
    if raw is None:
        return None  # derived from the hosts' NICs once the devices are known
    entries = ctx.sequence(raw, path, min_len=1)
    if entries is BAD:
        return BAD
    out = [_k8s_resource(ctx, entry, f"{path}[{index}]") for index, entry in enumerate(entries)]
    seen: dict[str, int] = {}
    for index, res in enumerate(out):
        if _ok(res) and _ok(res["name"]):
            if res["name"] in seen:
                ctx.error(f"{path}[{index}].name", f"{res['name']!r} duplicates resources[{seen[res['name']]}].name")
                out[index] = BAD
            seen.setdefault(res["name"], index)
    return out if _ok(*out) else BAD


def _k8s_cidr(ctx: Ctx, value: Any, path: str) -> Any:
    if isinstance(value, str) and unsafe_reason(value) is None:
        try:
            net = ipaddress.IPv4Network(value, strict=True)
            if "/" in value:
                return str(net)
        except ValueError:
            pass
    ctx.error(path, f"{value!r} is not an IPv4 network in CIDR form (like 172.30.0.0/16, host bits zero)")
    return BAD


def _k8s_attach_policy(ctx: Ctx, raw: Any, path: str) -> Any:
    src = ctx.mapping(raw, path, _K8S_ATTACH_KEYS)
    strategy = leaf(ctx, src, "kubernetes.multi_nic_cni.network.attach_policy.strategy", path)
    target = src.get("target")
    if target is not None:
        target = ctx.text(target, f"{path}.target", _K8S_TARGET_RE, "a bandwidth target (like 200Gbps)")
    elif strategy in ("costOpt", "perfOpt"):
        ctx.error(f"{path}.target", f"required for strategy {strategy!r} (a bandwidth like 200Gbps)")
        target = BAD
    return {"strategy": strategy, "target": target}


def _k8s_network(ctx: Ctx, raw: Any, path: str, roce: Any) -> dict:
    src = ctx.mapping(raw, path, _K8S_NET_KEYS)
    plugin = leaf(ctx, src, "kubernetes.multi_nic_cni.network.plugin", path)
    ipam = leaf(ctx, src, "kubernetes.multi_nic_cni.network.ipam", path, default="host-device-ipam" if plugin == "mellanox" else "multi-nic-ipam")
    if (plugin == "mellanox") != (ipam == "host-device-ipam") and _ok(plugin, ipam):
        ctx.error(f"{path}.ipam", f"{ipam!r} does not go with plugin {plugin!r} (host-device-ipam is the IPAM of plugin mellanox, and only of it)")
        ipam = BAD
    subnet = src.get("subnet")
    if ipam == "host-device-ipam":
        if subnet not in (None, ""):
            ctx.error(f"{path}.subnet", f"{subnet!r} is not used by host-device-ipam (it takes the host device's own address): remove it")
            subnet = BAD
        else:
            subnet = ""
    else:
        subnet = _k8s_cidr(ctx, K8S_DEFAULTS["subnet"] if subnet is None else subnet, f"{path}.subnet")
    name = _k8s_text(ctx, src, "name", path, K8S_DEFAULTS["network_name"], _DNS_LABEL_RE, "a network name (a DNS label: at most 63 of a-z 0-9 -)")
    label = _k8s_pattern(ctx, _DNS_LABEL_RE, _K8S_NS_RULE)
    out = {
        "name": name,
        "plugin": plugin,
        "ipam": ipam,
        "subnet": subnet,
        "master_nets": _k8s_list(ctx, src, "master_nets", path, lambda v, p: _k8s_cidr(ctx, v, p)),
        "attach_policy": _k8s_attach_policy(ctx, src.get("attach_policy"), f"{path}.attach_policy"),
        "namespaces": _k8s_list(ctx, src, "namespaces", path, label),
    }
    # A macvlan/ipvlan child takes its own MTU: default it to the host MTU of the intent (RoCE).
    host_mtu = ((roce or {}).get("mtu") or {}).get("host") if isinstance(roce, dict) else None
    mtu = src.get("mtu")
    if plugin == "mellanox":
        if mtu is not None:
            ctx.error(f"{path}.mtu", f"{mtu!r} is not used by plugin 'mellanox' (the pod gets the host device itself): remove it")
        out["mtu"] = None
    elif mtu is None:
        out["mtu"] = host_mtu if _is_int(host_mtu) else None
    else:
        row = _schema.BY_PATH["kubernetes.multi_nic_cni.network.mtu"]
        out["mtu"] = ctx.check_int(mtu, f"{path}.mtu", row.low, row.high, row.what)
        if _ok(out["mtu"]) and _is_int(host_mtu) and out["mtu"] > host_mtu:
            ctx.error(f"{path}.mtu", f"{mtu!r} is above lossless_fabric.roce.mtu.host {host_mtu} (a child interface cannot exceed its parent)")
            out["mtu"] = BAD
    if plugin == "mellanox":
        ctx.warn(
            f"{path}.plugin",
            "'mellanox' builds host-device attachments from the NVIDIA Network Operator's NicClusterPolicy sriovDevicePlugin "
            "resources, which cni multi_nic_cni does not deploy: install the Network Operator with sriovDevicePlugin first",
        )
    return out


def _k8s_multi_nic(ctx: Ctx, raw: Any, path: str, roce: Any) -> dict:
    src = ctx.mapping(raw, path, _K8S_MNC_KEYS)
    version = ctx.text(src.get("version", K8S_DEFAULTS["mnc_version"]), f"{path}.version", _K8S_VERSION_RE, "a release version (like v1.3.1)")
    if _ok(version) and not version.startswith("v"):
        version = "v" + version  # release tags and image tags both carry the v
    # The controller creates its daemon's Config (multi-nicd) with the daemon image of its own release
    # (vars.DefaultDaemonImage), so pinning the controller pins the daemon too.
    image = src.get("controller_image")
    if image is None and _ok(version):
        image = f"{K8S_DEFAULTS['mnc_repository']}/multi-nic-cni-controller:{version}"
    return {
        "namespace": _k8s_text(ctx, src, "namespace", path, K8S_DEFAULTS["mnc_namespace"], _DNS_LABEL_RE, _K8S_NS_RULE),
        "version": version,
        "controller_image": _k8s_image(ctx, image, f"{path}.controller_image") if image is not None else BAD,
        "network": _k8s_network(ctx, src.get("network"), f"{path}.network", roce),
    }


def _k8s_network_operator(ctx: Ctx, raw: Any, path: str) -> dict:
    src = ctx.mapping(raw, path, _K8S_NETOP_KEYS)
    return {
        "namespace": _k8s_text(ctx, src, "namespace", path, K8S_DEFAULTS["netop_namespace"], _DNS_LABEL_RE, _K8S_NS_RULE),
        "chart_version": _k8s_text(ctx, src, "chart_version", path, K8S_DEFAULTS["netop_chart_version"], _K8S_VERSION_RE, "a chart version (like 26.4.1)"),
        "version": _k8s_text(ctx, src, "version", path, K8S_DEFAULTS["netop_version"], _K8S_NETOP_TAG_RE, "an image tag (like network-operator-v26.4.1)"),
        "repository": _k8s_text(
            ctx, src, "repository", path, K8S_DEFAULTS["netop_repository"], _K8S_REPOSITORY_RE, "an image repository (like nvcr.io/nvidia/mellanox)"
        ),
    }


def _kubernetes_section(ctx: Ctx, raw: Any, path: str, transport: Any, roce: Any) -> dict:
    src = ctx.mapping(raw, path, _K8S_KEYS)
    cni = leaf(ctx, src, "kubernetes.cni", path)
    for section in K8S_CNIS:
        if src.get(section) is not None and cni in K8S_CNIS and section != cni:
            ctx.error(f"{path}.{section}", f"present but cni is {cni!r} (remove the section)")
    if cni == "multi_nic_cni" and transport == "infiniband":
        ctx.error(
            f"{path}.cni",
            "'multi_nic_cni' attaches Ethernet interfaces (macvlan, ipvlan, host-device); transport 'infiniband' needs IPoIB: use 'network_operator'",
        )
        cni = BAD
    dp_path = f"{path}.device_plugin"
    dp_src = ctx.mapping(src.get("device_plugin"), dp_path, _K8S_DP_KEYS)
    out: dict[str, Any] = {
        "namespace": _k8s_text(ctx, src, "namespace", path, K8S_DEFAULTS["namespace"], _DNS_LABEL_RE, _K8S_NS_RULE),
        "node_selector": _k8s_label_map(ctx, src.get("node_selector", K8S_DEFAULTS["node_selector"]), f"{path}.node_selector"),
        "cni": cni,
        "device_plugin": {"image": dp_src.get("image"), "resources": _k8s_resources(ctx, dp_src.get("resources"), f"{dp_path}.resources")},
    }
    image = out["device_plugin"]["image"]
    if cni == "multi_nic_cni":
        out["multi_nic_cni"] = _k8s_multi_nic(ctx, src.get("multi_nic_cni"), f"{path}.multi_nic_cni", roce)
    elif cni == "network_operator":
        netop = out["network_operator"] = _k8s_network_operator(ctx, src.get("network_operator"), f"{path}.network_operator")
        if image is None and _ok(netop["repository"], netop["version"]):
            # The operator's own build of the plugin (host-ib-k8s d), same tag as its other components.
            image = f"{netop['repository']}/k8s-rdma-shared-dev-plugin:{netop['version']}"
    if image is None:
        image = K8S_DEFAULTS["device_plugin_image"]
    image = _k8s_image(ctx, image, f"{dp_path}.image")
    if cni == "network_operator" and _ok(image) and "@" in image:
        ctx.error(f"{dp_path}.image", f"{image!r}: the NicClusterPolicy image spec needs a tag (repository/image:version), not a digest")
        image = BAD
    out["device_plugin"]["image"] = image
    return out


def _kubernetes_derive(ctx: Ctx, intent: dict, devices: dict) -> None:
    """Fill the defaults that come from the hosts: one resource selecting every host NIC's netdev."""
    k8s = intent["kubernetes"]
    resources = k8s["device_plugin"]["resources"]
    hosts = [d for d in devices.values() if _ok(d) and d["kind"] == "host"]
    netdevs = sorted({nic["netdev"] for d in hosts for nic in d["nics"] if nic["netdev"]}, key=_natural_key)
    path = "lossless_fabric.kubernetes.device_plugin.resources"
    if resources is None:
        if netdevs:
            selectors = {"vendors": [], "device_ids": [], "drivers": [], "if_names": netdevs, "link_types": []}
        else:
            link = "infiniband" if intent.get("transport") == "infiniband" else "ether"
            selectors = {"vendors": ["15b3"], "device_ids": [], "drivers": [], "if_names": [], "link_types": [link]}
        k8s["device_plugin"]["resources"] = [
            {"name": K8S_DEFAULTS["resource"], "prefix": K8S_DEFAULTS["prefix"], "rdma_hca_max": K8S_DEFAULTS["rdma_hca_max"], "selectors": selectors}
        ]
        return
    if not _ok(resources) or not netdevs:
        return
    for index, res in enumerate(resources):
        unknown = [name for name in res["selectors"]["if_names"] if name not in netdevs]
        if unknown:
            ctx.warn(f"{path}[{index}].selectors.if_names", f"{unknown!r} match no NIC netdev of the inventory hosts ({', '.join(netdevs)})")
