# SPDX-License-Identifier: GPL-3.0-or-later
"""Generate an ibsim net file for a leaf-spine InfiniBand fabric (pure, no I/O).

    spec = {
        "spines": ["spine1", "spine2"],      # or a count: 2 -> spine1, spine2
        "leaves": 4,                          # leaf1..leaf4
        "switch_ports": 36,                   # ports per switch (ibsim: 1-254)
        "uplinks_per_spine": 1,               # links from every leaf to every spine
        "link": "4xHDR",                      # width x speed of every link (see LINK_RE)
        "subnet_managers": [{"name": "ufm1", "guid": None}],
        "hosts": [{"name": "gpu1", "nics": [{"name": "mlx5_0", "guid": "0x0c42a10300010001"}]}],
        # optional, from the lab wiring (cables_from_wiring): where NICs are plugged in, and which are not
        "cables": [{"ca": ["gpu1", "mlx5_0"], "switch": ["leaf1", 1], "link": "4xHDR"}],
        "uncabled": [["gpu2", "mlx5_1"]],
    }
    topo = build(spec)          # -> Topology; topo.text is the net file

Every subnet manager and every host NIC is one single-port CA (``Hca 1``),
as a ConnectX port is one RDMA device on a real host.  ``guid`` is the
*port* GUID, the one partitions.conf names; ibsim derives a CA's port GUIDs
as node GUID + port number, so the generator writes ``caguid=<guid - 1>``
before the node.  A NIC without a GUID gets a deterministic one from its
host and NIC names (stable when other hosts come and go).

Layout (a non-blocking two-tier fat tree): a CA with a ``cables`` entry is
plugged where it says, one in ``uncabled`` nowhere (ibnetdiscover does not see
it); the others are spread round-robin over the free CA ports of the leaves
(subnet managers first, then hosts in order, NICs in order);
leaf ports 1..N/2 face the CAs, N/2+1.. face the spines; spine port
``leaf_index * uplinks_per_spine + k + 1`` faces leaf ``leaf_index``.  With
no spines there must be exactly one leaf (a single-switch fabric).

ibsim limits honoured here (linux-rdma/ibsim include/ibsim.h, sim_net.c):
a node id is at most 31 characters (``sim_client_info.nodeid[32]``, what
``SIM_HOST`` can name), must not contain ``"``, ``#`` or ``@``; node GUIDs
are unique.  We additionally refuse any GUID used twice (node or port).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

# Vendor OUIs only make the GUIDs look like real ones; ibsim does not care.
CA_OUI = 0x0002C9       # Mellanox: generated CA GUIDs
SWITCH_OUI = 0x0008F1   # Voltaire/Mellanox switch OUI ibsim's own templates use
DEFAULT_SWITCH_PORTS = 36
NODEID_MAX = 31
_NODEID_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,30}$')
_GUID_RE = re.compile(r'^0x[0-9a-fA-F]{16}$')
# What Debian's ibsim 0.10 parses from an ibnetdiscover-style "# lid N 4xHDR"
# port annotation (verified: SDR..HDR come up at that speed; NDR is not known
# to 0.10 and falls back to SDR with a warning, so it is refused here).
LINK_RE = re.compile(r'^(1|4|12)x(SDR|DDR|QDR|FDR10|FDR|EDR|HDR)$')
DEFAULT_LINK = "4xHDR"


class TopologyError(ValueError):
    """The description cannot become an ibsim fabric; the message says why."""


@dataclass
class Node:
    nodeid: str                 # ibsim node id (SIM_HOST, console commands)
    kind: str                   # "switch" or "ca"
    ports: int
    node_guid: int
    description: str            # NodeDescription as ibnetdiscover shows it
    role: str                   # "spine", "leaf", "subnet_manager", "host"
    host: str | None = None     # inventory host (CAs)
    nic: str | None = None      # RDMA device name (CAs)
    links: dict[int, tuple[str, int]] = field(default_factory=dict)  # port -> (remote nodeid, remote port)

    @property
    def port_guid(self) -> int:
        """Port 1 GUID of a CA; a switch has one GUID for all ports (port 0)."""
        return self.node_guid + 1 if self.kind == "ca" else self.node_guid


@dataclass
class Topology:
    nodes: dict[str, Node]      # in net-file order; the first CA is the subnet manager
    text: str                   # the ibsim net file
    sm_nodes: list[str]         # CA node ids of the subnet managers, in order
    ca_by_nic: dict[tuple[str, str], str]   # (host, nic) -> CA node id

    @property
    def switches(self) -> list[str]:
        return [n for n, node in self.nodes.items() if node.kind == "switch"]

    @property
    def cas(self) -> list[str]:
        return [n for n, node in self.nodes.items() if node.kind == "ca"]

    def port_guid(self, host: str, nic: str) -> str:
        return guid_text(self.nodes[self.ca_by_nic[(host, nic)]].port_guid)

    def guids(self) -> dict[str, str]:
        """nodeid -> port GUID text (CAs: port 1; switches: the switch GUID)."""
        return {n: guid_text(node.port_guid) for n, node in self.nodes.items()}

    def links(self) -> list[tuple[tuple[str, int], tuple[str, int]]]:
        """Every link once, as ((nodeid, port), (nodeid, port))."""
        seen, out = set(), []
        for nodeid, node in self.nodes.items():
            for port, remote in sorted(node.links.items()):
                key = tuple(sorted([(nodeid, port), remote]))
                if key not in seen:
                    seen.add(key)
                    out.append(((nodeid, port), remote))
        return out


def guid_text(value: int) -> str:
    return "0x%016x" % value


def parse_guid(value: Any, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1 << 64:
        return value
    if isinstance(value, str) and _GUID_RE.match(value):
        number = int(value, 16)
        if number > 1:
            return number
    raise TopologyError(f"{what}: {value!r} is not a GUID ('0x' + 16 hex digits, above 0x1)")


def generated_guid(*names: str, oui: int = CA_OUI) -> int:
    """Deterministic GUID from names: OUI in the top 24 bits, 32 hash bits,
    low byte 0x01 (a CA's port 1; its node GUID then ends in 0x00)."""
    digest = hashlib.sha256("/".join(names).encode()).digest()
    return (oui << 40) | (int.from_bytes(digest[:4], "big") << 8) | 0x01


def _names(value: Any, prefix: str, what: str) -> list[str]:
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise TopologyError(f"{what}: {value} is negative")
        return [f"{prefix}{i}" for i in range(1, value + 1)]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise TopologyError(f"{what}: {value!r} is neither a count nor a list of names")


def _check_nodeid(nodeid: str, what: str) -> str:
    if not _NODEID_RE.match(nodeid):
        raise TopologyError(
            f"{what}: ibsim node id {nodeid!r} must be 1-{NODEID_MAX} characters of [A-Za-z0-9._:/+-] "
            "(SIM_HOST holds at most 31; '\"', '#', '@' and spaces are reserved)")
    return nodeid


def build(spec: dict) -> Topology:
    """The fabric of ``spec`` (see the module docstring) as a Topology."""
    if not isinstance(spec, dict):
        raise TopologyError(f"topology: {spec!r} is not a mapping")
    unknown = set(spec) - {"spines", "leaves", "switch_ports", "uplinks_per_spine", "link", "subnet_managers", "hosts", "cables", "uncabled"}
    if unknown:
        raise TopologyError(f"topology: unknown keys {sorted(unknown)}")
    spines = _names(spec.get("spines", 2), "spine", "topology.spines")
    leaves = _names(spec.get("leaves", 4), "leaf", "topology.leaves")
    nports = spec.get("switch_ports", DEFAULT_SWITCH_PORTS)
    uplinks = spec.get("uplinks_per_spine", 1)
    for key, value, low, high in (("switch_ports", nports, 2, 254), ("uplinks_per_spine", uplinks, 1, 64)):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise TopologyError(f"topology.{key}: {value!r} is not an integer {low}-{high}")
    link_type = spec.get("link", DEFAULT_LINK)
    if not isinstance(link_type, str) or not LINK_RE.match(link_type):
        raise TopologyError(f"topology.link: {link_type!r} is not a link type ibsim 0.10 knows (e.g. 4xHDR, 4xEDR, 4xQDR)")
    if not leaves:
        raise TopologyError("topology.leaves: at least one leaf is needed")
    if not spines and len(leaves) > 1:
        raise TopologyError(f"topology.spines: {len(leaves)} leaves without spines would be {len(leaves)} separate fabrics")

    # --- end nodes: (host, nic, guid, role) --------------------------------
    ends: list[tuple[str, str, int, str]] = []
    for index, sm in enumerate(spec.get("subnet_managers") or []):
        sm = {"name": sm} if isinstance(sm, str) else sm
        if not isinstance(sm, dict) or not isinstance(sm.get("name"), str):
            raise TopologyError(f"topology.subnet_managers[{index}]: {sm!r} needs a name")
        nic = sm.get("nic") or "mlx5_0"
        guid = sm.get("guid")
        guid = parse_guid(guid, f"topology.subnet_managers[{index}].guid") if guid is not None else generated_guid(sm["name"], nic)
        ends.append((sm["name"], nic, guid, "subnet_manager"))
    if not ends:
        raise TopologyError("topology.subnet_managers: at least one subnet manager is needed (OpenSM runs on its CA)")
    for hindex, host in enumerate(spec.get("hosts") or []):
        if not isinstance(host, dict) or not isinstance(host.get("name"), str):
            raise TopologyError(f"topology.hosts[{hindex}]: {host!r} needs a name")
        for nindex, nic in enumerate(host.get("nics") or []):
            what = f"topology.hosts[{hindex}].nics[{nindex}]"
            if not isinstance(nic, dict) or not isinstance(nic.get("name"), str):
                raise TopologyError(f"{what}: {nic!r} needs a name")
            guid = nic.get("guid")
            guid = parse_guid(guid, f"{what}.guid") if guid is not None else generated_guid(host["name"], nic["name"])
            ends.append((host["name"], nic["name"], guid, "host"))

    # --- nodes ----------------------------------------------------------------
    nodes: dict[str, Node] = {}
    ca_by_nic: dict[tuple[str, str], str] = {}
    owner: dict[int, str] = {}

    def claim(guid: int, who: str) -> None:
        if guid in owner:
            raise TopologyError(f"{who}: GUID {guid_text(guid)} is already used by {owner[guid]}")
        owner[guid] = who

    for host, nic, port_guid, role in ends:
        nodeid = _check_nodeid(f"{host}-{nic}", f"{host} {nic}")
        if nodeid in nodes:
            raise TopologyError(f"{host} {nic}: defined twice")
        claim(port_guid - 1, f"{host} {nic} (node GUID = port GUID - 1)")
        claim(port_guid, f"{host} {nic}")
        nodes[nodeid] = Node(nodeid, "ca", 1, port_guid - 1, f"{host} {nic}", role, host, nic)
        ca_by_nic[(host, nic)] = nodeid
    for role, names in (("spine", spines), ("leaf", leaves)):
        for name in names:
            _check_nodeid(name, f"topology.{role}")
            if name in nodes:
                raise TopologyError(f"topology: node id {name!r} is used twice")
            guid = generated_guid("switch", name, oui=SWITCH_OUI) & ~0xFF
            claim(guid, f"switch {name}")
            nodes[name] = Node(name, "switch", nports, guid, name, role)

    # --- links ---------------------------------------------------------------
    link_types: dict[tuple[str, int], str] = {}

    def link(a: str, pa: int, b: str, pb: int, kind: str | None = None) -> None:
        for node, port in ((a, pa), (b, pb)):
            if port in nodes[node].links:
                other = nodes[node].links[port]
                raise TopologyError(f"topology: {node} port {port} is cabled twice ({other[0]} port {other[1]} and {b if node == a else a})")
        nodes[a].links[pa] = (b, pb)
        nodes[b].links[pb] = (a, pa)
        if kind:
            link_types[(a, pa)] = link_types[(b, pb)] = kind

    down_ports = nports // 2 if spines else nports
    uplink_ports = {(leaf, down_ports + 1 + si * uplinks + k) for leaf in leaves for si in range(len(spines)) for k in range(uplinks)}
    uplink_ports |= {(spine, li * uplinks + k + 1) for spine in spines for li in range(len(leaves)) for k in range(uplinks)}
    placed: set[tuple[str, str]] = set()
    for index, cable in enumerate(spec.get("cables") or []):
        what = f"topology.cables[{index}]"
        ca, sw = (cable or {}).get("ca"), (cable or {}).get("switch")
        if not (isinstance(ca, (list, tuple)) and tuple(ca) in ca_by_nic):
            raise TopologyError(f"{what}.ca: {ca!r} is not a subnet manager or host NIC of the fabric")
        if not (isinstance(sw, (list, tuple)) and len(sw) == 2 and sw[0] in nodes and nodes[sw[0]].kind == "switch"):
            raise TopologyError(f"{what}.switch: {sw!r} is not [switch, port] of a switch in lab_ib_fabric ({', '.join(spines + leaves)})")
        port = sw[1]
        if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= nports:
            raise TopologyError(f"{what}.switch: port {port!r} of {sw[0]} is not 1-{nports}")
        if (sw[0], port) in uplink_ports:
            raise TopologyError(f"{what}.switch: {sw[0]} port {port} is a leaf-spine port of the lab_ib_fabric layout")
        kind = cable.get("link")
        if kind is not None and not (isinstance(kind, str) and LINK_RE.match(kind)):
            raise TopologyError(f"{what}.link: {kind!r} is not a link type ibsim 0.10 knows (e.g. 4xHDR, 4xEDR, 4xQDR)")
        link(ca_by_nic[tuple(ca)], 1, sw[0], port, kind)
        placed.add(tuple(ca))
    for index, ca in enumerate(spec.get("uncabled") or []):
        if not (isinstance(ca, (list, tuple)) and tuple(ca) in ca_by_nic):
            raise TopologyError(f"topology.uncabled[{index}]: {ca!r} is not a subnet manager or host NIC of the fabric")
        placed.add(tuple(ca))
    next_port = {leaf: 1 for leaf in leaves}
    auto = 0
    for host, nic, _guid, _role in ends:
        if (host, nic) in placed:
            continue
        leaf = leaves[auto % len(leaves)]
        auto += 1
        while next_port[leaf] in nodes[leaf].links:
            next_port[leaf] += 1
        if next_port[leaf] > down_ports:
            raise TopologyError(
                f"topology: leaf {leaf} has no free CA port for {host} {nic} "
                f"({down_ports} CA ports of {nports}; raise switch_ports or add leaves)")
        link(ca_by_nic[(host, nic)], 1, leaf, next_port[leaf])
        next_port[leaf] += 1
    if spines:
        if len(spines) * uplinks > nports - down_ports:
            raise TopologyError(f"topology: {len(spines)} spines x {uplinks} uplinks do not fit the {nports - down_ports} uplink ports of a leaf")
        if len(leaves) * uplinks > nports:
            raise TopologyError(f"topology: {len(leaves)} leaves x {uplinks} uplinks do not fit the {nports} ports of a spine")
        for li, leaf in enumerate(leaves):
            for si, spine in enumerate(spines):
                for k in range(uplinks):
                    link(leaf, down_ports + 1 + si * uplinks + k, spine, li * uplinks + k + 1)

    sm_nodes = [ca_by_nic[(h, n)] for h, n, _g, role in ends if role == "subnet_manager"]
    return Topology(nodes=nodes, text=_render(nodes, link_type, link_types), sm_nodes=sm_nodes, ca_by_nic=ca_by_nic)


def _render(nodes: dict[str, Node], link_type: str, link_types: dict | None = None) -> str:
    lines = [
        "# ibsim net file generated by tests/lab/ibsim/topology.py; do not edit.",
        "# Format: linux-rdma/ibsim net-examples (ibnetdiscover-compatible).",
        "# The first node is the default attachment point (the subnet manager's CA).",
        "",
    ]
    for nodeid, node in nodes.items():
        if node.kind == "ca":
            lines.append("caguid=%s" % guid_text(node.node_guid))
            lines.append('Hca\t%d "%s"\t# "%s"' % (node.ports, nodeid, node.description))
        else:
            lines.append("switchguid=%s" % guid_text(node.node_guid))
            lines.append('Switch\t%d "%s"\t# "%s" enhanced port 0' % (node.ports, nodeid, node.description))
        for port, (remote, rport) in sorted(node.links.items()):
            # "lid 0" is a placeholder the parser needs before the link type.
            lines.append('[%d]\t"%s"[%d]\t# lid 0 %s' % (port, remote, rport, (link_types or {}).get((nodeid, port), link_type)))
        lines.append("")
    return "\n".join(lines) + "\n"


# Total link speed (G) -> the 4x ibsim link type of that speed (lane rates: drivers/infiniband/core/sysfs.c
# rate_show). 40G is QDR (FDR10 is 40G too; ibsim's QDR is the standard one). NDR (400G) is not in ibsim 0.10.
SPEED_LINKS = {"10G": "4xSDR", "20G": "4xDDR", "40G": "4xQDR", "56G": "4xFDR", "100G": "4xEDR", "200G": "4xHDR"}


def cables_from_wiring(wiring: dict | None) -> tuple[list[dict], list[list[str]]]:
    """(cables, uncabled) of the lab wiring (tests/lab/wiring.py) for build(): every cable between a host NIC
    and an InfiniBand switch port (a switch that is no inventory device: its ports are no wiring ends), as
    cabled now - swaps, moves, downgrades and unplugs applied. Empty when the inventory describes no IB link."""
    if not wiring:
        return [], []
    known = {tuple(e["end"]) for e in wiring.get("ends") or []}
    cables, uncabled = [], []
    for a, b, speed, up in wiring.get("links") or []:
        for here, there in ((tuple(a), tuple(b)), (tuple(b), tuple(a))):
            if here[1] != "nic" or there[1] != "port" or there in known:
                continue
            if not up:
                uncabled.append([here[0], here[2]])
                continue
            if not str(there[2]).isdigit():
                raise TopologyError(f"wiring: {here[0]} {here[2]} is cabled to {there[0]} port {there[2]!r}: an InfiniBand port is a number")
            kind = None
            if speed is not None:
                kind = SPEED_LINKS.get(str(speed))
                if kind is None:
                    raise TopologyError(f"wiring: the link of {here[0]} {here[2]} is {speed}; ibsim 0.10 simulates only "
                                        f"{', '.join(SPEED_LINKS)} (4x SDR..HDR, no NDR)")
            cables.append({"ca": [here[0], here[2]], "switch": [there[0], int(there[2])], "link": kind})
    return cables, uncabled


def spec_from_inventory(hostvars: dict[str, dict], fabric: dict | None = None, wiring: dict | None = None) -> dict:
    """A build() spec from Ansible hostvars: subnet managers and hosts are the
    hosts whose ``lossless_fabric_device.kind`` says so (sorted by name);
    ``fabric`` (the lab's ``lab_ib_fabric`` variable) gives the switch layout.
    A subnet manager's port GUID may be pinned with host var ``lab_ib_port_guid``.
    ``wiring`` (the lab's wiring.json): where the inventory's described IB links plug the NICs in."""
    fabric = dict(fabric or {})
    sms, hosts = [], []
    for name in sorted(hostvars):
        hvars = hostvars[name] or {}
        device = hvars.get("lossless_fabric_device")
        if not isinstance(device, dict):
            continue
        if device.get("kind") == "subnet_manager":
            sms.append({"name": name, "guid": hvars.get("lab_ib_port_guid")})
        elif device.get("kind") == "host":
            hosts.append({"name": name, "nics": [{"name": n.get("name"), "guid": n.get("guid")} for n in device.get("nics") or []]})
    # The master SM first: OpenSM attaches to it.
    sms.sort(key=lambda sm: hostvars[sm["name"]]["lossless_fabric_device"].get("role") != "master")
    spec = {key: fabric[key] for key in ("spines", "leaves", "switch_ports", "uplinks_per_spine", "link") if key in fabric}
    spec["subnet_managers"] = sms
    spec["hosts"] = hosts
    cables, uncabled = cables_from_wiring(wiring)
    if cables or uncabled:
        spec["cables"], spec["uncabled"] = cables, uncabled
    return spec
