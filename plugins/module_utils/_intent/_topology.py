# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The cabling of the fabric: which port is plugged into which, described once.

Two ways in, both optional (docs/intent.md, "Cabling"):

- by hand, in each ``lossless_fabric_device``: a switch port's
  ``peer: {host: gpu1, nic: mlx5_0}`` or ``peer: {host: spine1, port: Ethernet1/1}``,
  a host NIC's ``rail`` and ``peer: {host: leaf1, port: swp1}``;
- generated, from ``lossless_fabric.topology`` with ``pattern: rail_optimized``
  (the DGX SuperPOD layout: per scalable unit one leaf per rail, NIC r of every
  host of the unit on the leaf of rail r, every leaf linked to every spine).

Both become claims "this end's peer is that end"; ``check`` refuses every
claim whose two ends disagree, any end used twice, unknown hosts, ports and
NICs, speeds that differ between the two ends, and leaves that mix rails.
``plan`` derives the links, each host's NICs by rail (NCCL_IB_HCA order), each
switch's ports in scope with their expected neighbour, and for InfiniBand the
ibdiagnet topology file.

Pure Python standard library; ``_plan`` calls ``check`` from its
normalisation and ``plan`` from ``build_plan``. The checks, tables and port
names come from the sibling modules (``_checks``, ``_tables``, ``_devices``).
"""

from __future__ import annotations

import re
import string
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common._text import unsafe_reason
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _schema
from ansible_collections.lossless.fabric.plugins.module_utils._intent._checks import _ok, _suggest, key_repr, type_name
from ansible_collections.lossless.fabric.plugins.module_utils._intent._devices import canonical_port, check_speed
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import _NAME_RE, BAD, PATTERNS, platforms

__all__ = ["check", "plan"]

_TOPOLOGY_KEYS = (
    "pattern",
    "scalable_units",
    "hosts_per_unit",
    "rails",
    "leaves_per_rail",
    "spines",
    "uplinks_per_spine",
    "speed",
    "names",
    "ports",
    "switches",
    "ib_switch_type",
)
_PATTERN_REQUIRED = ("scalable_units", "hosts_per_unit", "rails", "speed")
_NAMES_KEYS = ("host", "leaf", "spine")
_PORTS_KEYS = ("leaf_hosts", "leaf_spines", "spine_leaves")
_PORT_GROUP_KEYS = ("name", "first")
_PEER_KEYS = ("host", "port", "nic")
# Template fields each name may use; every field is a 1-based number except rail (0-based, as NIC rails).
_NAME_FIELDS = {
    "host": ("unit", "index", "host"),
    "leaf": ("unit", "rail", "leaf"),
    "spine": ("spine",),
}
_MAX_HOSTS = 100000
# An InfiniBand switch port is an 8-bit number; 0 is the switch's management port (ibsim
# takes 1-254 as well: tests/lab/ibsim/topology.py). Unverified against every switch model.
_IB_PORT_RE = re.compile(r"[1-9][0-9]{0,2}")
_IB_PORT_MAX = 254
# IBDM topology file lines "<port> -<width>-<lane speed>-> <type> <name> <port>" (ibdm-topo-file(1)
# from ibutils; NVIDIA IBUtils2 "Topology Comparison": ibdiagnet -t/--topo_file, example "-4x-25G->").
_IB_WIDTH = 4


class _End(tuple):
    """One end of a link: (host, 'port' | 'nic', name)."""

    __slots__ = ()

    def __new__(cls, host: str, kind: str, name: str) -> _End:
        return super().__new__(cls, (host, kind, name))

    def __str__(self) -> str:
        return f"{self[0]} {self[2]}"


class _Claim:
    __slots__ = ("end", "peer", "path", "prefix", "speed", "rail", "generated")

    def __init__(self, end: _End, peer: _End, path: str, prefix: str, speed: Any, rail: Any = None, generated: bool = False) -> None:
        self.end, self.peer, self.path, self.prefix, self.speed, self.rail, self.generated = end, peer, path, prefix, speed, rail, generated


class Cabling:
    """What ``check`` found: the agreed links and what ``plan`` needs."""

    def __init__(self) -> None:
        self.links: list[tuple[_End, _End, Any, Any]] = []  # (switch end, other end, speed_gbps, rail)
        self.nic_rails: dict[str, dict[str, Any]] = {}  # host -> {nic: rail or None}, in the host's NIC order
        self.ib_switches: set[str] = set()
        self.ib_switch_type: Any = None
        self.transport: Any = None


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


def _err(ctx: Any, prefix: str, path: str, message: str) -> None:
    saved, ctx.prefix = ctx.prefix, prefix
    ctx.error(path, message)
    ctx.prefix = saved


def _host_prefix(host: str) -> str:
    return f"{key_repr(str(host))}: "


def _template(ctx: Any, value: Any, path: str, fields: tuple[str, ...]) -> Any:
    """A name template such as 'leaf-su{unit}-r{rail}': only the given fields, no format specs."""
    if not isinstance(value, str) or not value:
        ctx.error(path, f"{value!r} is not a name template (a string such as {'{' + fields[0] + '}'!r})")
        return BAD
    try:
        parts = list(string.Formatter().parse(value))
    except ValueError as exc:
        ctx.error(path, f"{value!r} is not a name template ({exc})")
        return BAD
    for _text, field, spec, conv in parts:
        if field is None:
            continue
        if field not in fields or spec or conv:
            ctx.error(path, f"{value!r}: {{{field}}} is not a field of this name (fields: {', '.join('{' + f + '}' for f in fields)})")
            return BAD
    return value


def _ib_port(value: Any) -> str | None:
    text = str(value) if _is_int(value) else value
    if isinstance(text, str) and _IB_PORT_RE.fullmatch(text) and int(text) <= _IB_PORT_MAX:
        return text
    return None


def _is_int(value: Any) -> bool:
    # YAML true/false are bools, and bool is an int subclass: never a number here.
    return isinstance(value, int) and not isinstance(value, bool)


# ---------------------------------------------------------------------------
# The pattern
# ---------------------------------------------------------------------------


def _pattern(ctx: Any, raw: Any, transport: Any) -> Any:
    """Normalise lossless_fabric.topology; None when absent."""
    path = "lossless_fabric.topology"
    if raw is None:
        return None
    src = ctx.mapping(raw, path, _TOPOLOGY_KEYS)
    if not isinstance(raw, dict):
        return BAD
    out: dict[str, Any] = {}
    ok = True
    switches = src.get("switches")
    if switches is not None and transport == "roce":
        ctx.error(f"{path}.switches", "only with transport infiniband (RoCE switches are inventory hosts of kind switch)")
        ok = False
    names_list: list[str] = []
    if switches is not None:
        switches = ctx.sequence(switches, f"{path}.switches")
        if switches is BAD:
            ok = False
        else:
            for index, name in enumerate(switches):
                if _ok(ctx.name(name, f"{path}.switches[{index}]")):
                    names_list.append(name)
                else:
                    ok = False
    out["switches"] = names_list
    switch_type = src.get("ib_switch_type")
    if switch_type is not None:
        if transport == "roce":
            ctx.error(f"{path}.ib_switch_type", "only with transport infiniband")
            switch_type = BAD
        else:
            switch_type = ctx.name(switch_type, f"{path}.ib_switch_type")
    out["ib_switch_type"] = switch_type
    ok = ok and _ok(switch_type)
    pattern = src.get("pattern")
    if pattern is None:
        for key in _TOPOLOGY_KEYS:
            if key not in ("pattern", "switches", "ib_switch_type") and key in src:
                ctx.error(f"{path}.{key}", "needs pattern (rail_optimized)")
                ok = False
        out["pattern"] = None
        return out if ok else BAD
    pattern = ctx.choice(src, "pattern", path, None, PATTERNS, "a topology pattern")
    for key in _PATTERN_REQUIRED:
        if src.get(key) is None:
            ctx.error(f"{path}.{key}", "required with pattern rail_optimized")
            ok = False

    def count(key: str) -> Any:
        # the row's default, range and noun; a required key's absence is reported above, its low bound stands in
        row = _schema.BY_PATH[f"topology.{key}"]
        return ctx.integer(src, key, path, row.default if row.has_default() else row.low, row.low, row.high, row.what)

    units, per_unit, rails = count("scalable_units"), count("hosts_per_unit"), count("rails")
    leaves, spines, uplinks = count("leaves_per_rail"), count("spines"), count("uplinks_per_spine")
    speed = check_speed(ctx, src.get("speed"), f"{path}.speed") if src.get("speed") is not None else BAD
    ok = ok and _ok(pattern, units, per_unit, rails, leaves, spines, uplinks, speed)
    if _ok(per_unit, leaves) and per_unit % leaves:
        ctx.error(f"{path}.leaves_per_rail", f"{leaves!r} does not divide hosts_per_unit {per_unit} (each leaf of a rail takes the same number of hosts)")
        ok = False
    if _ok(units, per_unit) and units * per_unit > _MAX_HOSTS:
        ctx.error(f"{path}.hosts_per_unit", f"{units} units of {per_unit} hosts is more than {_MAX_HOSTS} hosts")
        ok = False
    names_src = ctx.mapping(src.get("names"), f"{path}.names", _NAMES_KEYS)
    names = {}
    for key in _NAMES_KEYS:
        names[key] = _template(ctx, names_src.get(key, _schema.BY_PATH[f"topology.names.{key}"].default), f"{path}.names.{key}", _NAME_FIELDS[key])
        ok = ok and _ok(names[key])
    ports_src = ctx.mapping(src.get("ports"), f"{path}.ports", _PORTS_KEYS)
    ports = {}
    for key in _PORTS_KEYS:
        group_path = f"{path}.ports.{key}"
        group = ctx.mapping(ports_src.get(key), group_path, _PORT_GROUP_KEYS)
        name = _template(ctx, group.get("name", _schema.BY_PATH[f"topology.ports.{key}.name"].default), f"{group_path}.name", ("n",))
        first_row = _schema.BY_PATH[f"topology.ports.{key}.first"]
        first = group.get("first", first_row.default if first_row.has_default() else None)  # None: derived below
        if first is None and key == "leaf_spines" and _ok(per_unit, leaves) and not per_unit % leaves:
            host_first = ports["leaf_hosts"]["first"]
            first = host_first + per_unit // leaves if _ok(host_first) else 1  # right after the host ports
        first = ctx.check_int(first, f"{group_path}.first", first_row.low, first_row.high, first_row.what) if first is not None else 1
        ports[key] = {"name": name, "first": first}
        ok = ok and _ok(name, first)
    out.update(
        pattern=pattern,
        scalable_units=units,
        hosts_per_unit=per_unit,
        rails=rails,
        leaves_per_rail=leaves,
        spines=spines,
        uplinks_per_spine=uplinks,
        speed=f"{speed}G" if _ok(speed) else speed,
        speed_gbps=speed,
        names=names,
        ports=ports,
    )
    return out if ok else BAD


def generate(topology: dict) -> tuple[list[tuple[str, int, str, str]], list[tuple[str, str, str, str]], list[str]]:
    """The links of a rail_optimized pattern, without any inventory.

    Returns (host_links, fabric_links, switches): host_links are
    (host, rail, leaf, leaf port), fabric_links (leaf, leaf port, spine,
    spine port), switches every leaf and spine name in order.
    Host h (0-based within its unit) of unit u goes to leaf h // (hosts_per_unit / leaves_per_rail)
    of each rail, on host port first + h % hosts_per_leaf; leaf L (in unit, rail, leaf order) links to
    spine s on uplink first + s * uplinks_per_spine + k and spine port first + L * uplinks_per_spine + k.
    """
    names, ports = topology["names"], topology["ports"]
    per_leaf = topology["hosts_per_unit"] // topology["leaves_per_rail"]
    uplinks = topology["uplinks_per_spine"]
    spines = [names["spine"].format(spine=s + 1) for s in range(topology["spines"])]
    host_links, fabric_links, leaves = [], [], []
    for unit in range(topology["scalable_units"]):
        unit_leaves = {}
        for rail in range(topology["rails"]):
            for leaf in range(topology["leaves_per_rail"]):
                name = names["leaf"].format(unit=unit + 1, rail=rail, leaf=leaf + 1)
                unit_leaves[(rail, leaf)] = name
                leaves.append(name)
        for index in range(topology["hosts_per_unit"]):
            host = names["host"].format(unit=unit + 1, index=index + 1, host=unit * topology["hosts_per_unit"] + index + 1)
            for rail in range(topology["rails"]):
                leaf = unit_leaves[(rail, index // per_leaf)]
                host_links.append((host, rail, leaf, ports["leaf_hosts"]["name"].format(n=ports["leaf_hosts"]["first"] + index % per_leaf)))
    for position, leaf in enumerate(leaves):
        for s, spine in enumerate(spines):
            for k in range(uplinks):
                leaf_port = ports["leaf_spines"]["name"].format(n=ports["leaf_spines"]["first"] + s * uplinks + k)
                spine_port = ports["spine_leaves"]["name"].format(n=ports["spine_leaves"]["first"] + position * uplinks + k)
                fabric_links.append((leaf, leaf_port, spine, spine_port))
    return host_links, fabric_links, leaves + spines


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------


class _Checker:
    def __init__(self, ctx: Any, transport: Any, raw_devices: dict, devices: dict, ib_switches: set[str]) -> None:
        self.ctx, self.transport = ctx, transport
        self.raw, self.devices = raw_devices, devices
        self.ib_switches = ib_switches
        self.claims: dict[_End, _Claim] = {}
        self.claimants: dict[_End, list[_Claim]] = {}
        self.rails: dict[str, dict[str, Any]] = {}  # host -> {nic: rail}
        self.leaf_rails: dict[str, dict[Any, list[str]]] = {}  # switch -> {rail: [what]}

    # -- ends ---------------------------------------------------------------

    def _resolve(self, peer: Any, path: str, prefix: str, own_host: str) -> Any:
        """A peer mapping -> its _End, or None after an error; devices that failed validation give None silently."""
        ctx = self.ctx
        if not isinstance(peer, dict):
            _err(ctx, prefix, path, f"{type_name(peer)} is not a peer mapping ({{host: ..., port: ...}} or {{host: ..., nic: ...}})")
            return None
        bad = False
        for key in peer:
            if key not in _PEER_KEYS:
                _err(ctx, prefix, f"{path}.{key_repr(key)}", f"unknown key ({_suggest(key, _PEER_KEYS)})")
                bad = True
        host = peer.get("host")
        if host is None:
            _err(ctx, prefix, f"{path}.host", "required (the inventory host at the other end)")
            return None
        if not isinstance(host, str) or unsafe_reason(host) or not _NAME_RE.fullmatch(host):
            _err(ctx, prefix, f"{path}.host", f"{host!r} is not a host name")
            return None
        given = [key for key in ("port", "nic") if peer.get(key) is not None]
        if len(given) != 1:
            _err(ctx, prefix, path, "give exactly one of port (a switch port) or nic (a host NIC)")
            return None
        kind = given[0]
        value = peer[kind]
        if bad:
            return None
        if host == own_host:
            _err(ctx, prefix, f"{path}.host", f"{host!r} is this device itself: a link joins two devices")
            return None
        if host in self.ib_switches:
            if kind != "port":
                _err(ctx, prefix, f"{path}.nic", f"{host!r} is an InfiniBand switch: give its port number")
                return None
            port = _ib_port(value)
            if port is None:
                _err(ctx, prefix, f"{path}.port", f"{value!r} is not an InfiniBand switch port number (1-{_IB_PORT_MAX})")
                return None
            return _End(host, "port", port)
        if host not in self.devices:
            hint = " or lossless_fabric.topology.switches" if self.transport == "infiniband" else ""
            _err(ctx, prefix, f"{path}.host", f"{host!r} is not an inventory host with lossless_fabric_device{hint}")
            return None
        device = self.devices[host]
        if not _ok(device):
            return None  # that device's own errors are reported
        if device["kind"] == "switch":
            if kind != "port":
                _err(ctx, prefix, f"{path}.nic", f"{host!r} is a switch: give its port, not a nic")
                return None
            canonical = canonical_port(platforms()[device["platform"]], value) if isinstance(value, str) and not unsafe_reason(value) else None
            if canonical is None:
                _err(ctx, prefix, f"{path}.port", f"{value!r} is not a {device['platform']} interface name of {host}")
                return None
            if canonical not in device["ports"]:
                _err(ctx, prefix, f"{path}.port", f"{value!r} is not in {host}'s lossless_fabric_device.ports")
                return None
            return _End(host, "port", canonical)
        if device["kind"] == "host":
            if kind != "nic":
                _err(ctx, prefix, f"{path}.port", f"{host!r} is a host: give its nic (RDMA device), not a port")
                return None
            if value not in [nic["name"] for nic in device["nics"]]:
                _err(ctx, prefix, f"{path}.nic", f"{value!r} is not a NIC of {host} ({', '.join(nic['name'] for nic in device['nics'])})")
                return None
            return _End(host, "nic", value)
        _err(ctx, prefix, f"{path}.host", f"{host!r} is a {device['kind']}: it has no links in the intent")
        return None

    def speed_of(self, end: _End) -> Any:
        device = self.devices.get(end[0])
        if end[0] in self.ib_switches or not _ok(device):
            return None
        if end[1] == "port":
            return device["ports"][end[2]]["speed_gbps"]
        return next(nic["speed_gbps"] for nic in device["nics"] if nic["name"] == end[2])

    def claim(self, claim: _Claim) -> None:
        known = self.claims.get(claim.end)
        if known is not None:
            if known.peer != claim.peer:
                where = "the topology pattern" if known.generated else f"{known.prefix}{known.path}"
                here = "from the topology pattern" if claim.generated else "here"
                _err(self.ctx, claim.prefix, claim.path, f"{claim.end} has peer {claim.peer} {here} but {known.peer} in {where}: describe each link once")
            return
        self.claims[claim.end] = claim
        self.claimants.setdefault(claim.peer, []).append(claim)

    # -- hand-written --------------------------------------------------------

    def read_devices(self) -> None:
        for host in sorted(self.devices, key=str):
            device, raw = self.devices[host], self.raw.get(host)
            if not _ok(device) or not isinstance(raw, dict):
                continue
            prefix = _host_prefix(host)
            if device["kind"] == "switch":
                self._read_switch(host, device, raw, prefix)
            elif device["kind"] == "host":
                self._read_host(host, device, raw, prefix)

    def _read_switch(self, host: str, device: dict, raw: dict, prefix: str) -> None:
        platform = platforms()[device["platform"]]
        for ifname, port in (raw.get("ports") or {}).items():
            if not isinstance(port, dict) or port.get("peer") is None:
                continue
            path = f"lossless_fabric_device.ports[{key_repr(ifname)}].peer"
            peer = self._resolve(port["peer"], path, prefix, host)
            canonical = canonical_port(platform, ifname)
            if peer is not None and canonical in device["ports"]:
                end = _End(host, "port", canonical)
                self.claim(_Claim(end, peer, path, prefix, device["ports"][canonical]["speed_gbps"]))

    def _read_host(self, host: str, device: dict, raw: dict, prefix: str) -> None:
        ctx = self.ctx
        rails: dict[str, Any] = {}
        seen: dict[int, int] = {}
        for index, (nic, raw_nic) in enumerate(zip(device["nics"], raw.get("nics") or [])):
            rail = raw_nic.get("rail") if isinstance(raw_nic, dict) else None
            path = f"lossless_fabric_device.nics[{index}]"
            if rail is not None:
                row = _schema.BY_PATH["lossless_fabric_device.nics[].rail"]
                if not _is_int(rail) or row.outside(rail):
                    _err(ctx, prefix, f"{path}.rail", f"{rail!r} is not {row.what} ({row.low}-{row.high})")
                    rail = None
                elif rail in seen:
                    other = f"nics[{seen[rail]}] ({device['nics'][seen[rail]]['name']})"
                    _err(ctx, prefix, f"{path}.rail", f"{rail!r} is also the rail of {other}: one NIC per rail")
                    rail = None
                else:
                    seen[rail] = index
            rails[nic["name"]] = rail
            if isinstance(raw_nic, dict) and raw_nic.get("peer") is not None:
                peer = self._resolve(raw_nic["peer"], f"{path}.peer", prefix, host)
                if peer is not None:
                    self.claim(_Claim(_End(host, "nic", nic["name"]), peer, f"{path}.peer", prefix, nic["speed_gbps"], rail))
        self.rails[host] = rails

    # -- generated -----------------------------------------------------------

    def read_pattern(self, topology: dict) -> None:
        ctx = self.ctx
        path = "lossless_fabric.topology"
        host_links, fabric_links, switches = generate(topology)
        ib = self.transport == "infiniband"
        for name in switches:
            if not _NAME_RE.fullmatch(name):
                ctx.error(f"{path}.names", f"generated switch name {name!r} is not a valid name")
                return
            if ib:
                if name in self.devices:
                    ctx.error(f"{path}.names", f"generated InfiniBand switch {name!r} is also an inventory host with lossless_fabric_device")
                    return
                self.ib_switches.add(name)
        reported: set[str] = set()

        def switch_end(switch: str, port: str) -> Any:
            if ib:
                if _ib_port(port) is None:
                    if "ib-port" not in reported:
                        ctx.error(f"{path}.ports", f"generated port {port!r} of {switch} is not an InfiniBand port number (1-{_IB_PORT_MAX})")
                        reported.add("ib-port")
                    return None
                return _End(switch, "port", port)
            device = self.devices.get(switch)
            if switch not in self.devices:
                if switch not in reported:
                    ctx.error(f"{path}.names", f"generated switch {switch!r} is not an inventory host with lossless_fabric_device")
                    reported.add(switch)
                return None
            if not _ok(device):
                return None
            if device["kind"] != "switch":
                if switch not in reported:
                    ctx.error(f"{path}.names", f"generated switch {switch!r} is a {device['kind']} in the inventory")
                    reported.add(switch)
                return None
            # Generated names are usually already the one spelling the device's ports carry.
            canonical = port if port in device["ports"] else canonical_port(platforms()[device["platform"]], port)
            if canonical is None or canonical not in device["ports"]:
                key = f"{switch} {port}"
                if key not in reported:
                    what = "is not a " + device["platform"] + " interface name" if canonical is None else f"is not in {switch}'s lossless_fabric_device.ports"
                    _err(ctx, _host_prefix(switch), "lossless_fabric_device.ports", f"{port!r} (generated by {path}) {what}")
                    reported.add(key)
                return None
            return _End(switch, "port", canonical)

        nic_cache: dict[str, Any] = {}
        for host, rail, leaf, port in host_links:
            if host not in nic_cache:
                nic_cache[host] = self._pattern_nics(host, topology["rails"], path)
            nics = nic_cache[host]
            end = switch_end(leaf, port)
            if nics is None or end is None:
                continue
            nic = _End(host, "nic", nics[rail])
            self.claim(_Claim(end, nic, path, "", topology["speed_gbps"], rail, generated=True))
            self.claim(_Claim(nic, end, path, "", topology["speed_gbps"], rail, generated=True))
            self.leaf_rails.setdefault(leaf, {}).setdefault(rail, []).append(f"{path} (rail {rail})")
        for leaf, leaf_port, spine, spine_port in fabric_links:
            a, b = switch_end(leaf, leaf_port), switch_end(spine, spine_port)
            if a is None or b is None:
                continue
            self.claim(_Claim(a, b, path, "", topology["speed_gbps"], generated=True))
            self.claim(_Claim(b, a, path, "", topology["speed_gbps"], generated=True))

    def _pattern_nics(self, host: str, rails: int, path: str) -> Any:
        """{rail: nic name} of a generated host: its NICs' rail keys, else its first ``rails`` NICs in order."""
        ctx = self.ctx
        device = self.devices.get(host)
        if host not in self.devices:
            ctx.error(f"{path}.names.host", f"generated host {host!r} is not an inventory host with lossless_fabric_device")
            return None
        if not _ok(device):
            return None
        if device["kind"] != "host":
            ctx.error(f"{path}.names.host", f"generated host {host!r} is a {device['kind']} in the inventory")
            return None
        declared = {rail: nic for nic, rail in self.rails.get(host, {}).items() if rail is not None}
        if declared:
            missing = [r for r in range(rails) if r not in declared]
            if missing:
                why = f"no NIC with rail {missing[0]} (the topology has {rails} rails: 0-{rails - 1})"
                _err(ctx, _host_prefix(host), "lossless_fabric_device.nics", why)
                return None
            return declared
        if len(device["nics"]) < rails:
            why = f"{len(device['nics'])} NICs, but the topology has {rails} rails (one NIC per rail)"
            _err(ctx, _host_prefix(host), "lossless_fabric_device.nics", why)
            return None
        for rail in range(rails):
            self.rails.setdefault(host, {})[device["nics"][rail]["name"]] = rail
        return {rail: device["nics"][rail]["name"] for rail in range(rails)}

    # -- the rules over all claims ---------------------------------------------

    def links(self) -> list[tuple[_End, _End, Any, Any]]:
        ctx = self.ctx
        out = []
        done: set[frozenset] = set()
        for end, claim in self.claims.items():
            peer = claim.peer
            others = self.claimants.get(peer, [])
            if len(others) > 1:
                if claim is others[0]:
                    who = ", ".join(f"{c.end} ({'the topology pattern' if c.generated else c.prefix + c.path})" for c in others)
                    _err(ctx, claim.prefix, claim.path, f"{peer} is the peer of {len(others)} ends: {who}; a port or NIC takes one cable")
                continue
            back = self.claims.get(peer)
            if back is not None and back.peer != end:
                where = "the topology pattern" if back.generated else f"{back.prefix}{back.path}"
                _err(ctx, claim.prefix, claim.path, f"{end} names {peer} as its peer, but {peer} names {back.peer} ({where}): the two ends disagree")
                continue
            pair = frozenset((end, peer))
            if pair in done:
                continue
            done.add(pair)
            mine, theirs = claim.speed, (back.speed if back is not None else self.speed_of(peer))
            if theirs is None:
                theirs = mine  # an InfiniBand switch described only by this end: nothing to compare
            if _ok(mine, theirs) and mine is not None and theirs is not None and mine != theirs:
                _err(ctx, claim.prefix, claim.path, f"{end} is {mine}G but its peer {peer} is {theirs}G: both ends of a link have one speed")
                continue
            # The device's own speed must match too when the claim came from the pattern.
            for side in (end, peer):
                own = self.speed_of(side)
                if own is not None and mine is not None and own != mine:
                    _err(ctx, _host_prefix(side[0]), "lossless_fabric_device", f"{side} is {own}G but the topology pattern cables it at {mine}G")
                    break
            else:
                switch, other = (end, peer) if end[1] == "port" and (peer[1] == "nic" or _natural(end) <= _natural(peer)) else (peer, end)
                rail = None
                if other[1] == "nic":
                    rail = self.rails.get(other[0], {}).get(other[2])
                    if rail is not None:
                        self.leaf_rails.setdefault(switch[0], {}).setdefault(rail, []).append(f"{other} on {switch[2]}")
                out.append((switch, other, mine, rail))
        self._rail_rule()
        return out

    def _rail_rule(self) -> None:
        for switch, rails in sorted(self.leaf_rails.items()):
            if len(rails) > 1:
                detail = "; ".join(f"rail {rail}: {', '.join(sorted(set(what))[:3])}" for rail, what in sorted(rails.items()))
                prefix = _host_prefix(switch) if switch in self.devices else ""
                path = "lossless_fabric_device.ports" if switch in self.devices else f"lossless_fabric.topology (switch {switch})"
                _err(self.ctx, prefix, path, f"NICs of {len(rails)} rails meet on this leaf ({detail}): in a rail-optimized fabric a leaf carries one rail")


def _natural(end: _End) -> list:
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", f"{end[0]}\0{end[2]}")]


def check(ctx: Any, raw_intent: Any, raw_devices: Any, norm: dict, devices: dict) -> Cabling:
    """Validate the cabling (hand-written peers and the pattern); errors go to ``ctx``.

    ``norm`` gets the normalised ``topology`` when the intent has one.
    """
    cabling = Cabling()
    transport = norm.get("transport")
    cabling.transport = transport
    raw_topology = raw_intent.get("topology") if isinstance(raw_intent, dict) else None
    topology = _pattern(ctx, raw_topology, transport)
    if topology is not None and _ok(topology):
        norm["topology"] = {k: v for k, v in topology.items() if k != "speed_gbps"}
        cabling.ib_switch_type = topology["ib_switch_type"]
    raw_devices = raw_devices if isinstance(raw_devices, dict) else {}
    ib_switches = set(topology["switches"]) if topology and _ok(topology) else set()
    checker = _Checker(ctx, transport, {str(k): v for k, v in raw_devices.items()}, devices, ib_switches)
    for name in ib_switches:
        if name in devices:
            ctx.error("lossless_fabric.topology.switches", f"{name!r} is also an inventory host with lossless_fabric_device")
    checker.read_devices()
    if topology and _ok(topology) and topology["pattern"]:
        checker.read_pattern(topology)
    cabling.links = checker.links()
    cabling.nic_rails = checker.rails
    cabling.ib_switches = checker.ib_switches
    if transport == "infiniband":
        # Every system name reaches the topology file: one name, no spaces or newlines.
        for name in sorted({end[0] for link in cabling.links for end in link[:2]}):
            if not _NAME_RE.fullmatch(name):
                _err(ctx, _host_prefix(name), "lossless_fabric_device", f"{name!r} cannot name a system in the InfiniBand topology file")
    if transport == "infiniband" and cabling.links and not cabling.ib_switch_type:
        ctx.error(
            "lossless_fabric.topology.ib_switch_type",
            "required when the InfiniBand cabling is described: the switch system type of the topology file"
            " (the IBNL name ibdiagnet --write_topo_file prints for your switches)",
        )
    return cabling


# ---------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------


def _end_dict(end: _End) -> dict[str, str]:
    return {"host": end[0], end[1]: end[2]}


def plan(cabling: Cabling, devices: dict) -> dict[str, Any]:
    """links, hosts (NICs by rail, NCCL_IB_HCA order), switches (ports in scope), ib_topology."""
    links = sorted(cabling.links, key=lambda link: (_natural(link[0]), _natural(link[1])))
    out_links = [{"a": _end_dict(a), "b": _end_dict(b), "rail": rail, "speed": f"{speed}G" if speed else None} for a, b, speed, rail in links]
    switches: dict[str, dict] = {}
    hosts: dict[str, dict] = {}
    for a, b, speed, rail in links:
        for here, there in ((a, b), (b, a)):
            entry = {"peer": _end_dict(there), "rail": rail, "speed": f"{speed}G" if speed else None}
            if here[1] == "port":
                switches.setdefault(here[0], {"ports": {}})["ports"][here[2]] = entry
            else:
                hosts.setdefault(here[0], {"nics": {}})["nics"][here[2]] = entry
    for name, sw in switches.items():
        device = devices.get(name)
        sw["ports"] = dict(sorted(sw["ports"].items(), key=lambda item: _natural(_End("", "", item[0]))))
        sw["ports_without_peer"] = [p for p in (device["ports"] if device else {}) if p not in sw["ports"]]
    for host, rails in cabling.nic_rails.items():
        if host not in hosts and all(rail is None for rail in rails.values()):
            continue  # nothing described for this host
        entry = hosts.setdefault(host, {"nics": {}})
        order = [nic for nic, rail in sorted(((n, r) for n, r in rails.items() if r is not None), key=lambda item: item[1])]
        entry["rails"] = {str(rails[nic]): nic for nic in order}
        rest = [nic for nic, rail in rails.items() if rail is None]
        entry["nccl_ib_hca"] = "=" + ",".join(order + rest) if order else None
    for host in hosts:
        hosts[host].setdefault("rails", {})
        hosts[host].setdefault("nccl_ib_hca", None)
    return {
        "links": out_links,
        "hosts": dict(sorted(hosts.items(), key=lambda item: _natural(_End(item[0], "", "")))),
        "switches": dict(sorted(switches.items(), key=lambda item: _natural(_End(item[0], "", "")))),
        "ib_topology": ib_topology_file(cabling, devices, links) if cabling.transport == "infiniband" and links else None,
    }


def _ib_lane(speed_gbps: Any) -> str:
    # 4x links: the topology file gives the per-lane rate ('-4x-25G->' for a 100G EDR link in
    # NVIDIA's example); 50G (HDR) and 100G (NDR) per lane follow the same rule, unverified.
    lane = speed_gbps / _IB_WIDTH
    return f"{int(lane)}G" if lane == int(lane) else f"{lane:g}G"


def ib_topology_file(cabling: Cabling, devices: dict, links: list) -> str:
    """The ibdiagnet -t/--topo_file text (IBDM topology file): one section per system.

    Switch ports are 'P<n>'; a host is one system of type 'HCA_<NICs>' whose NIC i
    (1-based, the order of lossless_fabric_device.nics) is 'U<i>/P1', as in NVIDIA's
    example (HCA_3 dgx1 U1/P1). That ibdiagnet numbers a host's CAs in that order is unverified.
    """
    nic_index = {host: {nic["name"]: i + 1 for i, nic in enumerate(dev["nics"])} for host, dev in devices.items() if dev and dev["kind"] == "host"}
    sections: dict[str, list[tuple[str, _End, Any]]] = {}
    for a, b, speed, _rail in links:
        sections.setdefault(a[0], []).append((_ib_port_name(a, nic_index), b, speed))
        sections.setdefault(b[0], []).append((_ib_port_name(b, nic_index), a, speed))

    def system_type(name: str) -> str:
        if name in cabling.ib_switches:
            return str(cabling.ib_switch_type)
        return f"HCA_{len(nic_index.get(name, {}))}"

    lines = [
        "# lossless.fabric: intended InfiniBand cabling; generated, do not edit",
        "# format: IBDM topology file (ibdm-topo-file(1)); ibdiagnet --topo_file compares it with the discovered fabric",
    ]
    for name in sorted(sections, key=lambda n: (n not in cabling.ib_switches, _natural(_End(n, "", "")))):
        lines.append("")
        lines.append(f"{system_type(name)} {name}")
        for port, peer, speed in sorted(sections[name], key=lambda item: _natural(_End("", "", item[0]))):
            lines.append(f"   {port} -{_IB_WIDTH}x-{_ib_lane(speed)}-> {system_type(peer[0])} {peer[0]} {_ib_port_name(peer, nic_index)}")
    return "\n".join(lines) + "\n"


def _ib_port_name(end: _End, nic_index: dict) -> str:
    if end[1] == "port":
        return f"P{end[2]}"
    return f"U{nic_index[end[0]][end[2]]}/P1"
