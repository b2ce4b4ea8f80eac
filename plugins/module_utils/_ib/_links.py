# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""ib_links: the InfiniBand fabric as ``ibnetdiscover`` found it, per inventory name (pure).

``ibnetdiscover`` output is parsed by _ib.parse_ibnetdiscover (the ib_fabric_facts parser); this
module names its nodes and turns every port into one end of the cabling check (CABLING.md shape):

- a CA whose NodeDescription is ``"<hostname> <device>"`` - rdma-ndd's default ``"%h %d"``
  (rdma-core rdma-ndd/rdma-ndd.8.in.rst: "%h -- the current hostname (not including domain)",
  "%d -- the device name") - is NIC ``<device>`` of host ``<hostname>``;
- a switch is named by its NodeDescription when that is one name (ibsim, or a switch whose
  description was set to its hostname); NVIDIA switches describe themselves as
  ``"MF0;<hostname>:<model>/U1"`` (seen in public ibnetdiscover pastes, e.g.
  ``"MF0;CNTSN-POD229-QM97-IB-02:MQM9700/U1"``; not a documented format, unverified) and are named by
  the ``<hostname>`` part;
- ``node_names`` ({NodeDescription or node GUID: inventory name, or ``"<host> <device>"`` for a CA}) wins over both.
Everything else is listed in ``unmapped``; its links still show, named by their description.

Link width and speed from the port line's ``<w>x<SPEED>`` (``dump_linkwidth_compat`` /
``dump_linkspeedext_compat`` in rdma-core infiniband-diags/ibnetdiscover.c): width ``4X``, speed the
total in G = lanes x the per-lane data rate the kernel counts for that speed (drivers/infiniband/core/
sysfs.c rate_show, deci-Gb/s per lane: SDR 25, DDR 50, QDR 100, FDR10 100, FDR 140, EDR 250,
HDR 500, NDR 1000, XDR 2000): ``4xNDR`` -> 400G, ``4xFDR`` -> 56G, ``2xNDR`` -> 200G.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._ib import _facts as _ib

# Per-lane data rate in Gb/s (the kernel's rate_show table; see the module docstring).
LANE_GBPS: dict[str, float] = {"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR10": 10, "FDR": 14, "EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200}
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
_DEVICE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_MF0_RE = re.compile(r"^MF0;([^:;]+):[^;]*$")
_GUID_KEY_RE = re.compile(r"^(0x)?[0-9a-fA-F]{1,16}$")


class IbLinksError(ValueError):
    """Bad input (node_names) or output no parser knows."""


def link_rate(width: str | None, speed: str | None) -> tuple[str | None, str | None]:
    """('4X', 'NDR') -> ('4X', '400G'); unknown parts -> None."""
    lanes = int(width[:-1]) if width and re.fullmatch(r"\d+X", width) else None
    lane = LANE_GBPS.get(speed or "")
    total = lanes * lane if lanes and lane else None
    text = None if total is None else ("%dG" % total if total == int(total) else "%gG" % total)
    return (width if lanes else None), text


def validate_node_names(node_names: Any) -> dict[str, str]:
    """{description or GUID: inventory name}; GUID keys are normalised to 0x + 16 hex digits."""
    if node_names is None:
        return {}
    if not isinstance(node_names, dict):
        raise IbLinksError(f"node_names: {node_names!r} is not a mapping of NodeDescription (or node GUID) to inventory name")
    out = {}
    for key, name in node_names.items():
        if not isinstance(key, str) or not key or "\n" in key:
            raise IbLinksError(f"node_names: key {key!r} is not a NodeDescription or node GUID")
        parts = name.split(" ") if isinstance(name, str) else []
        if not (len(parts) == 1 and _NAME_RE.match(parts[0])) and not (len(parts) == 2 and _NAME_RE.match(parts[0]) and _DEVICE_RE.match(parts[1])):
            raise IbLinksError(f"node_names[{key!r}]: {name!r} is not an inventory name (a switch) or '<host> <device>' (a CA)")
        out[_ib.guid(key) if key.lower().startswith("0x") and _GUID_KEY_RE.match(key) else key] = name
    return out


def name_node(node: dict, node_names: dict[str, str]) -> tuple[str | None, str | None]:
    """(inventory name, device) of one ibnetdiscover node; (None, None) when it cannot be named."""
    desc = node.get("description") or ""
    for key in (node["guid"], desc):
        if key in node_names:
            mapped = node_names[key].split(" ")
            if node["type"] == "ca":
                parts = desc.split()
                device = mapped[1] if len(mapped) == 2 else parts[1] if len(parts) == 2 and _DEVICE_RE.match(parts[1]) else None
                return mapped[0], device
            return mapped[0], None
    if node["type"] == "ca":
        parts = desc.split()
        if len(parts) == 2 and _NAME_RE.match(parts[0]) and _DEVICE_RE.match(parts[1]):
            return parts[0], parts[1]
        return None, None
    if node["type"] == "switch":
        match = _MF0_RE.match(desc)
        if match and _NAME_RE.match(match.group(1)):
            return match.group(1), None
        if _NAME_RE.match(desc):
            return desc, None
    return None, None


def _port_name(node: dict, device: str | None, port: int) -> str:
    """A switch port is its number; a CA port is its device (port 1) or '<device>/<n>' (a multi-port CA)."""
    if node["type"] == "switch" or device is None:
        return str(port)
    return device if port == 1 else "%s/%d" % (device, port)


def devices_from_topology(topo: dict, node_names: dict[str, str] | None = None) -> dict[str, Any]:
    """{devices: {inventory name: ends}, unmapped: [...]} from a parse_ibnetdiscover result."""
    node_names = node_names or {}
    names: dict[str, tuple[str, str | None]] = {}
    unmapped: list[str] = []
    owner: dict[tuple[str, str], str] = {}
    for node_guid in sorted(topo["nodes"]):
        node = topo["nodes"][node_guid]
        name, device = name_node(node, node_names)
        kind = {"ca": "CA", "switch": "switch", "router": "router"}[node["type"]]
        if name is None:
            unmapped.append(f"{kind} {node_guid} {node['description']!r}")
            continue
        key = (name, device or "")
        if key in owner:
            unmapped.append(f"{kind} {node_guid} {node['description']!r}: {name}{' ' + device if device else ''} is also {owner[key]}")
            continue
        owner[key] = node_guid
        names[node_guid] = (name, device)
    devices: dict[str, dict] = {}
    for node_guid, (name, device) in names.items():
        node = topo["nodes"][node_guid]
        ends = devices.setdefault(name, {})
        for port in range(1, int(node.get("ports_count") or 0) + 1):
            link = node["links"].get(str(port))
            local = _port_name(node, device, port)
            if link is None:
                # ibnetdiscover lists only ports with a discovered peer: no link on this port.
                ends[local] = {"oper": "down", "speed": None, "width": None, "neighbors": []}
                if node["type"] == "ca":
                    ends[local]["self"] = {"netdev": None, "mac": None, "guid": node["port_guids"].get(str(port))}
                continue
            width, speed = link_rate(link["width"], link["speed"])
            remote = topo["nodes"].get(link["remote_guid"])
            if link["remote_guid"] in names:
                rname, rdevice = names[link["remote_guid"]]
                system, rport = rname, _port_name(remote, rdevice, link["remote_port"])
            else:
                system = (remote or {}).get("description") or link["remote_guid"]
                rport = str(link["remote_port"])
            ends[local] = {"oper": "up", "speed": speed, "width": width,
                           "neighbors": [{"system": system, "port": rport, "port_id_subtype": None, "port_descr": None,
                                          "chassis_id": link["remote_guid"]}]}
            if node["type"] == "ca":
                ends[local]["self"] = {"netdev": None, "mac": None, "guid": node["port_guids"].get(str(port))}
    return {"devices": devices, "unmapped": unmapped}


def run_ib_links(params: dict, run: _ib.Runner) -> dict[str, Any]:
    """The module's result: {changed: False, devices, unmapped, commands}."""
    node_names = validate_node_names(params.get("node_names"))
    argv = ["ibnetdiscover"]
    rc, out, err = run(argv)
    if rc != 0:
        raise IbLinksError(f"ibnetdiscover failed (rc {rc}): {(err or out).strip()}")
    try:
        topo = _ib.parse_ibnetdiscover(out)
    except _ib.IbParseError as exc:
        raise IbLinksError(f"{exc}; expected ibnetdiscover's topology file (Switch/Ca/Rt node lines, each followed by its '[port]' lines)") from None
    if not topo["nodes"]:
        raise IbLinksError(f"ibnetdiscover: no node in its output {out.strip()[:120]!r}; expected its topology file")
    result = devices_from_topology(topo, node_names)
    return {"changed": False, "devices": result["devices"], "unmapped": result["unmapped"], "commands": ["ibnetdiscover"]}
