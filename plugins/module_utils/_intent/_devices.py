# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""lossless_fabric_device: switches (ports, platforms), hosts (NICs), subnet managers."""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common._text import unsafe_reason
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _schema
from ansible_collections.lossless.fabric.plugins.module_utils._intent._checks import Ctx, _natural_key, _ok, _suggest, key_repr, type_name
from ansible_collections.lossless.fabric.plugins.module_utils._intent._contract import NIC_STACKS
from ansible_collections.lossless.fabric.plugins.module_utils._intent._derive import _is_int, _platform_ecn_defaults, parse_speed
from ansible_collections.lossless.fabric.plugins.module_utils._intent._roce import _ECN_KEYS, _port_ecn
from ansible_collections.lossless.fabric.plugins.module_utils._intent._schema import value as leaf
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import (
    _NETDEV_RE,
    _RDMA_DEV_RE,
    BAD,
    DEVICE_KINDS,
    SM_ROLES,
    Platform,
    model_ports,
    platforms,
)
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _vendor as _vendor_eos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _vendor as _vendor_junos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _vendor as _vendor_nvue
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _vendor as _vendor_sonic

# ---------------------------------------------------------------------------
# Devices
# ---------------------------------------------------------------------------

_DEVICE_KEYS = {
    "switch": ("kind", "platform", "ports", "queue_buffer_bytes", "model", "asic_family", "scheduling", "dcbx", "release", "buffer_model", "hwsku"),
    "host": ("kind", "nics", "gpus"),
    "subnet_manager": ("kind", "role"),
}
_PORT_KEYS = ("speed", "cable_length_m", "description", "peer")  # peer, and NIC rail/peer: _topology
_NIC_KEYS = ("name", "netdev", "speed", "guid", "rail", "peer", "stack", "vfs", "vf_guids", "pci")
# A PCI address as sysfs names a device (domain:bus:device.function), what the SR-IOV operator's GUID file's
# pciAddress is compared with.
_PCI_RE = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[01][0-9a-f]\.[0-7]")


def check_speed(ctx: Ctx, value: Any, path: str) -> Any:
    if value is None:
        ctx.error(path, "required")
        return BAD
    try:
        return parse_speed(value)
    except ValueError as exc:
        ctx.error(path, str(exc))
        return BAD


def _normalize_device(ctx: Ctx, raw: dict, intent: dict) -> Any:
    path = "lossless_fabric_device"
    transport = intent.get("transport")
    if not isinstance(raw, dict):
        ctx.error(path, f"{type_name(raw)} is not a mapping")
        return BAD
    kind = raw.get("kind")
    if kind is None:
        ctx.error(f"{path}.kind", f"required (one of {', '.join(DEVICE_KINDS)})")
        return BAD
    if not isinstance(kind, str) or kind not in DEVICE_KINDS:
        ctx.error(f"{path}.kind", f"{kind!r} is not a device kind ({_suggest(kind, DEVICE_KINDS) if isinstance(kind, str) else ', '.join(DEVICE_KINDS)})")
        return BAD
    ctx.mapping(raw, path, _DEVICE_KEYS[kind])
    if kind == "switch":
        if transport == "infiniband":
            ctx.error(f"{path}.kind", "'switch' but transport is 'infiniband': InfiniBand switches are managed by the subnet manager, not by this collection")
            return BAD
        return _normalize_switch(ctx, raw, path, intent)
    if kind == "subnet_manager":
        if transport == "roce":
            ctx.error(f"{path}.kind", "'subnet_manager' but transport is 'roce': a RoCE fabric has no subnet manager")
            return BAD
        role = leaf(ctx, raw, "lossless_fabric_device.role", path) if raw.get("role") is not None else BAD
        if raw.get("role") is None:
            ctx.error(f"{path}.role", f"required (one of {', '.join(SM_ROLES)})")
        return {"kind": kind, "role": role} if _ok(role) else BAD
    return _normalize_host(ctx, raw, path, transport)


def _normalize_switch(ctx: Ctx, raw: dict, path: str, intent: dict) -> Any:
    platform_name = raw.get("platform")
    platform: Any = BAD
    if platform_name is None:
        ctx.error(f"{path}.platform", f"required (one of {', '.join(_supported_platforms())})")
    elif not isinstance(platform_name, str) or platform_name not in platforms():
        hint = _suggest(platform_name, _supported_platforms()) if isinstance(platform_name, str) else "one of " + ", ".join(_supported_platforms())
        ctx.error(f"{path}.platform", f"{platform_name!r} is not a platform ({hint})")
    elif not platforms()[platform_name].supported:
        ctx.error(f"{path}.platform", f"{platform_name!r} is not supported yet (supported: {', '.join(_supported_platforms())})")
    else:
        platform = platforms()[platform_name]
    ports_raw = raw.get("ports", {})
    if ports_raw is None:
        ports_raw = {}
    if not isinstance(ports_raw, dict):
        ctx.error(f"{path}.ports", f"{type_name(ports_raw)} is not a mapping of interface name to port")
        return BAD
    roce = intent.get("roce") or {}
    switch_mtu = (roce.get("mtu") or {}).get("switch")
    if platform is not BAD and _is_int(switch_mtu) and switch_mtu > platform.max_mtu:
        why = platform.max_mtu_why
        ctx.error(f"{path}.platform", f"{platform.name} takes an interface MTU up to {platform.max_mtu}{why}; lossless_fabric.roce.mtu.switch is {switch_mtu}")
        platform = BAD
    row_cable = _schema.BY_PATH["roce.cable_length_m"].default  # the port's default is the intent's, or that row's
    default_cable = roce.get("cable_length_m", row_cable)
    ports: dict[str, Any] = {}
    good = True
    canonical = check_port_names(ctx, platform, ports_raw, f"{path}.ports")
    for ifname in sorted(ports_raw, key=lambda k: _natural_key(str(k))):
        port_path = f"{path}.ports[{key_repr(ifname)}]"
        if not isinstance(ifname, str) or unsafe_reason(ifname):
            good = False
            continue
        if canonical[ifname] is BAD:
            good = False
        src = ctx.mapping(ports_raw[ifname], port_path, _PORT_KEYS)
        if not isinstance(ports_raw[ifname], (dict, type(None))):
            good = False
            continue
        speed = check_speed(ctx, src.get("speed"), f"{port_path}.speed")
        cable = leaf(ctx, src, "lossless_fabric_device.ports.<ifname>.cable_length_m", port_path, default=default_cable if _ok(default_cable) else row_cable)
        description = src.get("description")
        description = ctx.description(
            _schema.BY_PATH["lossless_fabric_device.ports.<ifname>.description"].default if description is None else description, f"{port_path}.description"
        )
        good = good and _ok(speed, cable, description)
        model_checked = _ok(speed, canonical[ifname]) and platform is not BAD
        if model_checked and not _model_speed_ok(ctx, platform.name, raw.get("model"), canonical[ifname], speed, port_path):
            good = False
        junos_later = platform is not BAD and platform.ecn_in_percent_of_queue_buffer  # checked once the buffer is known
        ecn_now = _ok(speed) and roce.get("ecn") and platform is not BAD and not junos_later
        if ecn_now and not _port_ecn_ok(ctx, roce["ecn"], speed, f"{port_path}.speed", platform_name):
            good = False
        name = canonical[ifname] if _ok(canonical[ifname]) else ifname
        ports[name] = {"speed": f"{speed}G" if _ok(speed) else BAD, "speed_gbps": speed, "cable_length_m": cable, "description": description}
    buffer_path = f"{path}.queue_buffer_bytes"
    queue_buffer = raw.get("queue_buffer_bytes")
    if queue_buffer is not None:
        row = _schema.BY_PATH["lossless_fabric_device.queue_buffer_bytes"]
        queue_buffer = ctx.check_int(queue_buffer, buffer_path, row.low, row.high, row.what)
    if platform is not BAD and platform.ecn_in_percent_of_queue_buffer:
        if queue_buffer is None:
            ctx.error(
                buffer_path,
                f"required for {platform.name}: it sets ECN thresholds as a percent of the RoCE queue's buffer, so give that buffer in bytes",
            )
            queue_buffer = BAD
        elif _ok(queue_buffer):
            for ifname, port in ports.items():
                if not _ok(port["speed_gbps"]):
                    continue
                ecn = roce.get("ecn") or {}
                if not ecn or not _ok(*ecn.values()):
                    break  # the intent's ECN section has its own errors
                if not _port_ecn_ok(ctx, ecn, port["speed_gbps"], f"{path}.ports[{key_repr(ifname)}].speed", platform.name, queue_buffer):
                    queue_buffer = BAD
                    break
                port_ecn = _port_ecn(roce, port["speed_gbps"], platform.name, queue_buffer)
                top = port_ecn["max_threshold_bytes"]
                if top >= queue_buffer:
                    ctx.error(buffer_path, f"{queue_buffer!r} is not above the ECN max threshold of {ifname} ({top} bytes)")
                    queue_buffer = BAD
                    break
                # the OS's own form of thresholds in a buffer (Junos: whole fill-level percents, low < high < 100)
                why = platform.ecn_of_buffer_error and platform.ecn_of_buffer_error(port_ecn["min_threshold_bytes"], top, queue_buffer)
                if why:
                    ctx.error(buffer_path, f"{queue_buffer!r}: platform {platform.name} cannot take the ECN thresholds of {ifname}: {why}")
                    queue_buffer = BAD
                    break
    if not _roce_ok(ctx, roce, platform, ports_raw, path):
        good = False
    junos = _junos_device(ctx, raw, path, platform)
    release = _release(ctx, raw.get("release"), f"{path}.release", platform)
    sonic = _sonic_device(ctx, raw, path, platform, ports, roce)
    eos = _eos_device(ctx, raw, path, platform) if platform is not BAD else None
    if platform is not BAD:
        if raw.get("asic_family") is not None and platform.name != "eos":
            ctx.error(f"{path}.asic_family", f"{raw['asic_family']!r}: only platform eos takes asic_family")
            good = False
        if raw.get("model") is not None and platform.name not in ("eos", "junos"):
            ctx.error(f"{path}.model", f"{raw['model']!r}: only platforms eos and junos take model")
            good = False
    if not (good and _ok(platform, queue_buffer, junos, release, eos, sonic)):
        return BAD
    out = {"kind": "switch", "platform": platform.name, "ports": ports, "queue_buffer_bytes": queue_buffer}
    if junos:
        out["junos"] = junos
    if release is not None:
        out["release"] = release
    if eos is not None:
        out["eos"] = eos
    if sonic is not None:
        out["sonic"] = sonic
    return out


def _roce_ok(ctx: Ctx, roce: dict, platform: Any, ports: dict, path: str) -> bool:
    """The intent against what this switch's OS can express: its record's roce_errors (the PFC watchdog's timers and
    action, a PFC priority; the functions its renderer refuses by) and requires_ports. Refused here, before any device,
    naming the key, the value and the platform (issue 33: an NX-OS watchdog the intent accepted was refused at render
    time, after the other switches had changed). _switches/_config.render_errors is the net under these rules."""
    if platform is BAD:
        return True
    good = True
    if platform.requires_ports and not ports:
        ctx.error(f"{path}.ports", f"empty: platform {platform.name} sets the lossless class per port and needs at least one")
        good = False
    mode = roce.get("mode") if isinstance(roce, dict) else None
    if isinstance(mode, str) and mode != _schema.LOSSLESS and mode not in (platform.roce_modes or {}):
        # issue 36: a mode the platform's vendor source does not show it running (its record's roce_modes)
        ctx.error("lossless_fabric.roce.mode", f"{mode!r}: platform {platform.name} cannot run it: no vendor source shows PFC and ECN "
                  f"set that way on {platform.name} (the modes it runs, each with its source: {sorted(platform.roce_modes or {})})")
        good = False
    for key, value, why in platform.roce_errors(roce) if platform.roce_errors else []:
        ctx.error(f"lossless_fabric.roce.{key}", f"{value!r}: platform {platform.name} cannot take it: {why}")
        good = False
    return good


def _sonic_device(ctx: Ctx, raw: dict, path: str, platform: Any, ports: dict, roce: dict) -> Any:
    """SONiC only: the buffer model (DEVICE_METADATA|localhost buffer_model: 'dynamic', the default, where the
    switch computes the lossless headroom, or 'traditional', a static BUFFER_PROFILE with the plan's headroom; the
    driver does not change it), the release branch and the hardware SKU ('show version' checks both on the switch).
    Together they decide the path GCU's validators allow; a plan with none is refused here, before any device
    (_vendor_sonic.plan_problem, docs/vendor-sonic.md)."""
    if platform is BAD:
        return None
    if platform.name != "sonic":
        for key in ("buffer_model", "hwsku"):
            if raw.get(key) is not None:
                ctx.error(f"{path}.{key}", f"applies to platform sonic only (this switch is {platform.name})")
                return BAD
        return None
    value, release, hwsku = raw.get("buffer_model"), raw.get("release"), raw.get("hwsku")
    if value is None:
        value = _vendor_sonic.DEFAULT_BUFFER_MODEL
    if not isinstance(value, str) or value not in _vendor_sonic.BUFFER_MODELS:
        ctx.error(f"{path}.buffer_model", f"{value!r} is not a SONiC buffer model (one of {', '.join(_vendor_sonic.BUFFER_MODELS)})")
        return BAD
    release = _vendor_sonic.DEFAULT_RELEASE if release is None else str(release)
    if release not in _vendor_sonic.RELEASES:
        ctx.error(f"{path}.release", f"{release!r} is not a SONiC release branch this collection knows (one of {', '.join(_vendor_sonic.RELEASES)})")
        return BAD
    if hwsku is not None and (not isinstance(hwsku, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}", hwsku)):
        ctx.error(f"{path}.hwsku", f"{hwsku!r} is not a SONiC HwSKU name (letters, digits, '-', '_', '.', '+')")
        return BAD
    ecn = roce.get("ecn") or {}
    ecn_ok = bool(ecn) and isinstance(ecn, dict) and _ok(*ecn.values())
    mode = roce.get("mode", _schema.LOSSLESS)
    if mode == _schema.PFC_ONLY:
        ecn_ok = False  # no ECN thresholds on any port (issue 36)
    triples = {tuple(sorted(_port_ecn(roce, p["speed_gbps"], "sonic").items())) for p in ports.values() if ecn_ok and _ok(p["speed_gbps"])}
    problem = _vendor_sonic.plan_problem(release, hwsku, value, triples, lossless=mode != _schema.ECN_ONLY)
    if problem:
        ctx.error(f"{path}.release", problem)
        return BAD
    return {"buffer_model": value, "release": release, "hwsku": hwsku}


def _junos_device(ctx: Ctx, raw: dict, path: str, platform: Any) -> Any:
    """model (decides which scheduling forms apply), scheduling (port | ets), dcbx; junos only."""
    if platform is BAD:
        return None
    if platform.name != "junos":
        for key in ("scheduling", "dcbx"):  # model: eos takes one too (_eos_device)
            if raw.get(key) is not None:
                ctx.error(f"{path}.{key}", f"is a junos key; platform is {platform.name}")
                return BAD
        return None
    models = tuple(sorted(_vendor_junos.MODELS))
    model = raw.get("model")
    family = _junos_family(model)
    if model is not None and family is None:
        hint = _suggest(model, models) if isinstance(model, str) else "one of " + ", ".join(models)
        ctx.error(f"{path}.model", f"{model!r} is not a Junos model we have a scheduling form for ({hint})")
        return BAD
    # Without a model: port scheduling, which every QFX takes (Juniper: the QFX switches support
    # direct port scheduling and ETS, except QFX5200/QFX5210, which support port scheduling only).
    forms = _vendor_junos.scheduling_forms(family) if family else _vendor_junos.SCHEDULING_FORMS
    scheduling = raw.get("scheduling")
    if scheduling is None:
        scheduling = forms[0]
    if not isinstance(scheduling, str) or scheduling not in forms:
        ctx.error(f"{path}.scheduling", f"{scheduling!r}: {model or 'junos'} takes {' or '.join(forms)} scheduling")
        return BAD
    dcbx = raw.get("dcbx")
    if dcbx is None:
        dcbx = _vendor_junos.default_dcbx(family)
    if not isinstance(dcbx, str) or dcbx not in _vendor_junos.DCBX_MODES:
        ctx.error(f"{path}.dcbx", f"{dcbx!r} is not a DCBX PFC mode (one of {', '.join(_vendor_junos.DCBX_MODES)})")
        return BAD
    return {"model": model, "scheduling": scheduling, "dcbx": dcbx}


def _release(ctx: Ctx, value: Any, path: str, platform: Any) -> Any:
    """NVUE: the Cumulus Linux release (command spellings and paths differ by release; _vendor_nvue). SONiC's
    release branch is read by _sonic_device."""
    if platform is BAD or platform.name == "sonic":
        return None
    if platform.name != "nvue":
        if value is not None:
            ctx.error(path, f"applies to platforms nvue and sonic only (this switch is {platform.name})")
            return BAD
        return None
    if value is None:
        return _vendor_nvue.DEFAULT_RELEASE
    try:
        _vendor_nvue.release_minor(value)
    except ValueError as exc:
        ctx.error(path, str(exc))
        return BAD
    return value


def _eos_device(ctx: Ctx, raw: dict, path: str, platform: Platform) -> Any:
    """EOS: the ASIC family (from asic_family or model) that picks the queue sub-mode (_vendor_eos)."""
    if platform.name != "eos":
        return None
    model, family = raw.get("model"), raw.get("asic_family")
    from_model = None
    if model is not None:
        try:
            from_model = _vendor_eos.family_of_model(model)
        except ValueError as exc:
            ctx.error(f"{path}.model", str(exc))
            return BAD
    if family is not None and (not isinstance(family, str) or family not in _vendor_eos.ASIC_FAMILIES):
        ctx.error(f"{path}.asic_family", f"{family!r} is not an EOS ASIC family (one of {', '.join(_vendor_eos.ASIC_FAMILIES)})")
        return BAD
    if family is not None and from_model is not None and family != from_model:
        ctx.error(f"{path}.asic_family", f"{family!r} disagrees with model {model!r} ({from_model})")
        return BAD
    family = family or from_model
    if family is None:
        # Not given: Jericho's 'tx-queue', what this collection rendered before issue 13 (so a
        # switch it configured keeps its lines) and the lab's emulated model. A wrong default
        # fails safe: EOS rejects the queue line and load() aborts the whole session.
        family = "jericho"
    # The EOS ECN defaults have no Arista source (_vendor_eos.ECN_DEFAULTS_SOURCE is None):
    # docs/intent.md and docs/vendor-eos.md say so; a warning here would fire on every lab plan.
    return {"model": model, "asic_family": family, "queue_block": _vendor_eos.QUEUE_BLOCK[family]}


def _port_ecn_ok(ctx: Ctx, ecn: dict, speed_gbps: int, path: str, platform: str, queue_buffer_bytes: Any = None) -> bool:
    """A threshold given in the intent must still sit on the right side of the one derived for this speed."""
    low, high = ecn["min_threshold_bytes"], ecn["max_threshold_bytes"]
    if not _ok(low, high, ecn.get("max_probability_percent")):
        return True  # the intent's ECN section has its own errors
    if any(ecn.get(key) is None for key in _ECN_KEYS):
        try:
            derived = _platform_ecn_defaults(speed_gbps, platform, queue_buffer_bytes)
        except ValueError as exc:
            ctx.error(path, str(exc))
            return False
    if (low is None) == (high is None):
        return True  # both derived (always ordered) or both given (checked on the intent)
    if low is not None and low >= derived["max_threshold_bytes"]:
        ctx.error(
            path,
            f"'{speed_gbps}G' derives ECN max_threshold_bytes {derived['max_threshold_bytes']}, "
            f"not above lossless_fabric.roce.ecn.min_threshold_bytes {low}: set max_threshold_bytes too",
        )
        return False
    if high is not None and high <= derived["min_threshold_bytes"]:
        ctx.error(
            path,
            f"'{speed_gbps}G' derives ECN min_threshold_bytes {derived['min_threshold_bytes']}, "
            f"not below lossless_fabric.roce.ecn.max_threshold_bytes {high}: set min_threshold_bytes too",
        )
        return False
    return True


def _model_speed_ok(ctx: Ctx, platform: str, model: Any, ifname: str, speed_gbps: int, port_path: str) -> bool:
    """A port's speed is one its model's port runs, where _tables.SWITCH_MODELS knows the model
    (from the vendor's datasheet); an unknown model, or a name no port group covers, is not checked."""
    groups = model_ports(platform, model)
    if groups is None:
        return True
    ranges = []
    for pattern, first, last, speeds in groups:
        match = re.fullmatch(pattern, ifname)
        if not match:
            continue
        number = int(match.group(1))
        if first <= number <= last:
            if speed_gbps in speeds:
                return True
            runs = ", ".join(f"{speed}G" for speed in speeds)
            ctx.error(f"{port_path}.speed", f"'{speed_gbps}G': a {model} runs port {number} ({ifname}) at {runs} only (docs/lab.md, \"Switch models\")")
            return False
        ranges.append(f"{first}-{last}")
    if ranges:
        ctx.error(port_path, f"{ifname!r} is not a port of a {model} (its ports: {', '.join(ranges)})")
        return False
    return True


def _junos_family(model: Any) -> str | None:
    """The _vendor_junos.MODELS family of a Junos model: the family itself ('qfx5220') or one of its
    SKUs as 'show version' prints them ('qfx5220-32cd', family + '-' + variant); None if unknown."""
    if not isinstance(model, str):
        return None
    if model in _vendor_junos.MODELS:
        return model
    sku = re.fullmatch(r"([a-z0-9]+)-[a-z0-9]+", model.casefold())
    return sku.group(1) if sku and sku.group(1) in _vendor_junos.MODELS else None


def canonical_port(platform: Platform, name: str) -> str | None:
    """The one spelling of an interface of ``platform`` (leading zeros dropped
    from every number: Ethernet01 and Ethernet1, swp01 and swp1 are the same
    port), or None when ``name`` is not one of its interface names. ASCII only."""
    if not name.isascii() or not re.fullmatch(platform.interface_pattern, name, re.ASCII):
        return None
    return re.sub(r"[0-9]+", lambda m: str(int(m.group())), name)


def check_port_names(ctx: Ctx, platform: Any, names: Any, path: str) -> dict:
    """Every interface name of a switch checked (injection, the platform's
    pattern) and normalised: {given name: canonical name, or BAD}. Two names
    of the same port (Ethernet01 beside Ethernet1) are refused, naming both.
    The intent and switch_config's check of a hand-written plan share it."""
    out: dict[Any, Any] = {}
    seen: dict[str, str] = {}
    for ifname in sorted(names, key=lambda k: _natural_key(str(k))):
        port_path = f"{path}[{key_repr(ifname)}]"
        if not isinstance(ifname, str):
            ctx.error(port_path, f"{ifname!r} is not an interface name")
            out[ifname] = BAD
            continue
        reason = unsafe_reason(ifname)
        if reason:
            ctx.error(port_path, f"interface name {ifname!r} contains {reason}")
            out[ifname] = BAD
            continue
        if platform is BAD:
            out[ifname] = ifname
            continue
        canonical = canonical_port(platform, ifname)
        if canonical is None:
            ctx.error(port_path, f"{ifname!r} is not a {platform.name} interface name (like {platform.interface_example})")
            out[ifname] = BAD
            continue
        if canonical in seen:
            ctx.error(port_path, f"{ifname!r} is the same port as {seen[canonical]!r} ({canonical}): give each port once")
            out[ifname] = BAD
            continue
        seen[canonical] = ifname
        out[ifname] = canonical
    return out


def _supported_platforms() -> tuple[str, ...]:
    return tuple(sorted(name for name, p in platforms().items() if p.supported))


def _normalize_host(ctx: Ctx, raw: dict, path: str, transport: Any) -> Any:
    gpus = leaf(ctx, raw, "lossless_fabric_device.gpus", path)
    nics_raw = raw.get("nics")
    if nics_raw is None:
        ctx.error(f"{path}.nics", "required (a list of RDMA NICs)")
        return BAD
    nics_raw = ctx.sequence(nics_raw, f"{path}.nics", min_len=1)
    if nics_raw is BAD:
        return BAD
    required = ("name", "netdev", "speed") if transport == "roce" else ("name", "speed")
    nics = []
    seen: dict[str, dict[str, int]] = {"name": {}, "netdev": {}}
    for index, entry in enumerate(nics_raw):
        nic_path = f"{path}.nics[{index}]"
        src = ctx.mapping(entry, nic_path, _NIC_KEYS, required=tuple(k for k in required if k != "speed"))
        if not isinstance(entry, dict):
            nics.append(BAD)
            continue
        name = ctx.text(src["name"], f"{nic_path}.name", _RDMA_DEV_RE, "an RDMA device name (like mlx5_0)") if src.get("name") is not None else BAD
        netdev = src.get("netdev")
        if netdev is not None:
            netdev = ctx.text(netdev, f"{nic_path}.netdev", _NETDEV_RE, "a network interface name (at most 15 of A-Z a-z 0-9 . _ -)")
        elif "netdev" in required:
            netdev = BAD
        for key, value in (("name", name), ("netdev", netdev)):
            if isinstance(value, str):
                if value in seen[key]:
                    ctx.error(f"{nic_path}.{key}", f"{value!r} duplicates nics[{seen[key][value]}].{key}")
                    if key == "name":
                        name = BAD
                    else:
                        netdev = BAD
                else:
                    seen[key][value] = index
        speed = check_speed(ctx, src.get("speed"), f"{nic_path}.speed")
        guid = ctx.guid(src["guid"], f"{nic_path}.guid") if src.get("guid") is not None else None
        vfs = leaf(ctx, src, "lossless_fabric_device.nics[].vfs", nic_path)
        pci = _pci(ctx, src.get("pci"), f"{nic_path}.pci")
        vf_guids = _vf_guids(ctx, src.get("vf_guids"), nic_path, transport, vfs, guid, pci)
        nic = {
            "name": name,
            "netdev": netdev,
            "speed": f"{speed}G" if _ok(speed) else BAD,
            "speed_gbps": speed,
            "guid": guid,
            "vfs": vfs,
            "vf_guids": vf_guids,
            "pci": pci,
        }
        if src.get("stack") is not None:
            # nic_qos/nic_counters take the device data's stack over the bound driver's (docs/hosts.md).
            nic["stack"] = ctx.choice(src, "stack", nic_path, None, NIC_STACKS, "a NIC stack")
        nics.append(nic if _ok(*nic.values()) else BAD)
    if not _ok(gpus, *nics):
        return BAD
    return {"kind": "host", "gpus": gpus, "nics": nics}


def _pci(ctx: Ctx, raw: Any, path: str) -> Any:
    """``nics[].pci``: a PCI address as sysfs names it (``0000:3b:00.0``), or None."""
    if raw is None:
        return None
    if isinstance(raw, str) and _PCI_RE.fullmatch(raw):
        return raw
    ctx.error(path, f"{raw!r} is not a PCI address as sysfs names it (domain:bus:device.function in lower-case hex, e.g. '0000:3b:00.0')")
    return BAD


def _vf_guids(ctx: Ctx, raw: Any, nic_path: str, transport: Any, vfs: Any, pf_guid: Any, pci: Any) -> Any:
    """``nics[].vf_guids``: on InfiniBand exactly ``vfs`` port GUIDs, VF i taking the i-th (the SR-IOV network
    operator's static GUID file gives "VF0 the GUID0, VF1 the GUID1", and with fewer GUIDs than VFs its config daemon
    fails: k8snetworkplumbingwg/sriov-network-operator doc/ib-vf-guid-static-configuration.md and
    pkg/host/internal/infiniband/ib_guid_pool.go GetVFGUID "no guid allocation found for VF id" at 249e200). Normalized
    like ``guid`` (lower case). Refused on RoCE: a RoCE VF has a MAC, not a GUID an SM puts in a partition. Unique on
    the NIC and never the NIC's own GUID here; across the fabric: check_vf_guids."""
    path = f"{nic_path}.vf_guids"
    if transport != "infiniband":
        if raw is not None and raw != []:
            ctx.error(path, f"{raw!r}: VF GUIDs are InfiniBand only (a RoCE VF is addressed by its MAC; give vfs alone)")
            return BAD
        return []
    given = [] if raw is None else ctx.sequence(raw, path)
    if given is BAD:
        return BAD
    guids = [ctx.guid(value, f"{path}[{index}]") for index, value in enumerate(given)]
    if not _ok(*guids):
        return BAD
    if _ok(vfs) and len(guids) != vfs:
        ctx.error(
            path,
            f"{len(guids)} GUID{'s' if len(guids) != 1 else ''} for vfs {vfs}: give exactly one port GUID per VF (VF i takes vf_guids[i]; "
            "the SR-IOV operator fails a VF that has no GUID in its file)",
        )
        return BAD
    if guids and pf_guid is None:
        ctx.error(f"{nic_path}.guid", "required with vf_guids: the tenant's partition lists the NIC's own port by it")
        return BAD
    if guids and pci is None:
        # pfGuid would be compared with the netdev's hardware address, 20 octets on an IPoIB PF (ib_guid_config.go
        # getPfPciAddressFromRawConfig): an 8-octet GUID never matches it, and the operator refuses the whole file.
        ctx.error(f"{nic_path}.pci", "required with vf_guids: the host's SR-IOV operator GUID file names the VFs' PF by its PCI address (pciAddress)")
        return BAD
    seen: dict[str, int] = {}
    for index, guid in enumerate(guids):
        if guid == pf_guid:
            ctx.error(f"{path}[{index}]", f"{guid!r} is the NIC's own port GUID (nics[].guid): a VF needs a GUID of its own")
            return BAD
        if guid in seen:
            ctx.error(f"{path}[{index}]", f"{guid!r} duplicates vf_guids[{seen[guid]}]")
            return BAD
        seen[guid] = index
    return guids


def check_vf_guids(ctx: Ctx, devices: dict) -> None:
    """Every VF GUID unique in the fabric and never a NIC's port GUID (two ports with one GUID: the SM cannot tell
    them apart, and a partition listing it would hold both). Run after every device is normalized."""
    pf: dict[str, str] = {}
    for host, device in sorted(devices.items()):
        if _ok(device) and device["kind"] == "host":
            for index, nic in enumerate(device["nics"]):
                if nic["guid"] is not None:
                    pf.setdefault(nic["guid"], f"{host}: lossless_fabric_device.nics[{index}].guid")
    vf: dict[str, str] = {}
    for host, device in sorted(devices.items()):
        if not (_ok(device) and device["kind"] == "host"):
            continue
        for index, nic in enumerate(device["nics"]):
            for number, guid in enumerate(nic.get("vf_guids") or []):
                where = f"{host}: lossless_fabric_device.nics[{index}].vf_guids[{number}]"
                if guid in pf:
                    ctx.error(where, f"{guid!r} is a NIC's port GUID ({pf[guid]}): a VF needs a GUID of its own")
                elif guid in vf and not vf[guid].startswith(f"{host}: lossless_fabric_device.nics[{index}]."):
                    ctx.error(where, f"{guid!r} is also {vf[guid]}: VF GUIDs are unique in the fabric")
                vf.setdefault(guid, where)
