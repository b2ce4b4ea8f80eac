# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""ib_fabric_facts: parsers for infiniband-diags 44 output and the collection
plan that turns a fabric into one structured snapshot (pure; the module
injects the function that runs a command).

    ibnetdiscover            -> nodes (node GUID -> type, description, LID, port GUIDs) and links
    iblinkinfo               -> per-port state, physical state, width, speed
    sminfo                   -> the master SM (LID, GUID, priority, state)
    smpquery sl2vl/vlarb     -> per active port: SL->VL rows, VL arbitration tables
    smpquery pkeys           -> per CA port: the P_Key table
    saquery -p --pkey        -> PathRecord SL between chosen pairs, per partition
    saquery -p (tenants)     -> between ports of two tenants: PathRecords asked with no P_Key and with
                                each tenant's P_Key (none may come back: the tenants share no partition)
    perfquery                -> per active port: PMA error/traffic counters

Output shapes are the ones of host-ib-k8s.md b.4 and of the real tools
against ibsim (tests/unit/plugins/module_utils/fixtures/ib/).  Port keys are
``"<node guid>/<port>"``; GUIDs are ``0x`` + 16 lower-case hex digits.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

SECTIONS: tuple[str, ...] = ("topology", "ports", "sm", "sl2vl", "vlarb", "pkeys", "paths", "counters", "tenants")

# Per-lane signalling rate (iblinkinfo "Gbps") -> IBTA speed name, slowest first.
SPEEDS: dict[str, float] = {
    "SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.3125, "FDR": 14.0625,
    "EDR": 25.78125, "HDR": 53.125, "NDR": 106.25, "XDR": 212.5,
}
WIDTHS: dict[str, int] = {"1X": 1, "2X": 2, "4X": 4, "8X": 8, "12X": 12}

# perfquery PortCounters fields that count errors (host-ib-k8s b.4); PortXmitWait
# is a congestion indicator, not an error, and is only gated when asked.
ERROR_COUNTERS: tuple[str, ...] = (
    "SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
    "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
    "PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
)

Runner = Callable[[list], "tuple[int, str, str]"]


class IbParseError(ValueError):
    """Output a parser does not understand; the message quotes the line."""


def guid(value: str | int) -> str:
    """Normalise a GUID (``0xc42a10300010001``, ``c42a10300010001``, int) to ``0x`` + 16 hex digits."""
    number = value if isinstance(value, int) else int(value[2:] if value.lower().startswith("0x") else value, 16)
    return "0x%016x" % number


def port_key(node_guid: str, port: int | str) -> str:
    return "%s/%d" % (node_guid, int(port))


# ---------------------------------------------------------------------------
# ibnetdiscover
# ---------------------------------------------------------------------------

_NODE_RE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-([0-9a-fA-F]+)"\s*(?:#\s*"(.*?)"(.*))?$')
# "[1]	"H-0c42a10300010000"[1](c42a10300010001) 		# "gpu1 mlx5_0" lid 6 4xHDR"   (switch port)
# "[1](c42a10300010001) 	"S-0008f1332e695c00"[1]		# lid 6 lmc 0 "leaf2" lid 3 4xHDR"  (CA port)
_PORT_RE = re.compile(
    # remote: "[N]" then "[ext N]" (ibnetdiscover -g) then "(guid)" - " (guid)" with a space on a CA port line whose
    # peer is a CA (rdma-core infiniband-diags/ibnetdiscover.c out_switch_port / out_ca_port).
    r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?(?:\[ext \d+\])?\s+"([SHR])-([0-9a-fA-F]+)"\[(\d+)\](?:\[ext \d+\])?(?:\s?\(([0-9a-fA-F]+)\))?\s*(?:#\s*(.*))?$'
)
_LINK_RE = re.compile(r"\b(\d+)x([A-Z0-9]+)\s*$")
_LID_RE = re.compile(r"\blid (\d+)")


def parse_ibnetdiscover(text: str) -> dict[str, Any]:
    """Nodes and links of an ``ibnetdiscover`` topology dump."""
    nodes: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" in line.split()[0] and not line.startswith("["):
            continue
        match = _NODE_RE.match(line)
        if match:
            kind, nports, _prefix, hexguid, desc, rest = match.groups()
            node_guid = guid(hexguid)
            lid = _LID_RE.search(rest or "")
            current = nodes.setdefault(node_guid, {
                "guid": node_guid, "type": {"Switch": "switch", "Ca": "ca", "Rt": "router"}[kind],
                "ports_count": int(nports), "description": desc or "", "lid": int(lid.group(1)) if lid else None,
                "port_guids": {}, "links": {},
            })
            continue
        match = _PORT_RE.match(line)
        if match and current is not None:
            _port_line(current, match)
            continue
        raise IbParseError("ibnetdiscover: unexpected line %r" % raw)
    return {"nodes": nodes, "links": _links(nodes)}


def _port_line(node: dict, match: re.Match) -> None:
    port, local_pg, _rprefix, rguid, rport, remote_pg, comment = match.groups()
    comment, port = comment or "", str(int(port))
    link = _LINK_RE.search(comment)
    entry = {"remote_guid": guid(rguid), "remote_port": int(rport),
             "width": ("%sX" % link.group(1)) if link else None, "speed": link.group(2) if link else None}
    if remote_pg:
        entry["remote_port_guid"] = guid(remote_pg)
    # String port keys: the snapshot travels as JSON (Ansible), whose keys are strings.
    node["links"][port] = entry
    if local_pg:
        node["port_guids"][port] = guid(local_pg)
        lid = _LID_RE.search(comment)   # a CA port line starts with its own "lid N"
        if lid and node["type"] != "switch":
            node.setdefault("port_lids", {})[port] = int(lid.group(1))
            if node["lid"] is None:
                node["lid"] = int(lid.group(1))


def _links(nodes: dict) -> list[dict[str, Any]]:
    seen = set()
    links = []
    for node_guid in sorted(nodes):
        for port, entry in sorted(nodes[node_guid]["links"].items(), key=lambda kv: int(kv[0])):
            a, b = (node_guid, int(port)), (entry["remote_guid"], entry["remote_port"])
            key = tuple(sorted((a, b)))
            if key in seen:
                continue
            seen.add(key)
            links.append({
                "a": {"guid": a[0], "port": a[1], "description": nodes[a[0]]["description"]},
                "b": {"guid": b[0], "port": b[1], "description": nodes.get(b[0], {}).get("description", "")},
                "width": entry["width"], "speed": entry["speed"],
            })
    return links


# ---------------------------------------------------------------------------
# iblinkinfo
# ---------------------------------------------------------------------------

# "      0x0c42a10300010001      6    1[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>       3    1[  ] "leaf2" (...)"
# "           3    2[  ] ==(                Down/ Polling)==>             [  ] "" ( )"
_LINKINFO_RE = re.compile(
    r"^\s*(?:(0x[0-9a-fA-F]+)\s+)?(\d+)\s+(\d+)\[[^\]]*\]\s+==\(\s*(?:(\d+X)\s+([\d.]+)\s+Gbps\s+)?(\w+)\s*/\s*(\w+)\s*\)==>"
    r"\s*(?:(\d+)\s+(\d+))?"
)


def parse_iblinkinfo(text: str) -> list[dict[str, Any]]:
    """One entry per port line: lid, port, state, physical state, width, speed (name and per-lane Gbps), peer."""
    ports = []
    for raw in text.splitlines():
        if not raw.strip() or re.match(r"^(CA|Switch|Router):", raw.strip()):
            continue
        match = _LINKINFO_RE.match(raw)
        if not match:
            raise IbParseError("iblinkinfo: unexpected line %r" % raw)
        pguid, lid, port, width, gbps, state, phys, peer_lid, peer_port = match.groups()
        ports.append({
            "port_guid": guid(pguid) if pguid else None, "lid": int(lid), "port": int(port), "state": state,
            "physical_state": phys, "width": width, "speed_gbps": float(gbps) if gbps else None,
            "speed": speed_name(float(gbps)) if gbps else None,
            "peer_lid": int(peer_lid) if peer_lid else None, "peer_port": int(peer_port) if peer_port else None,
        })
    return ports


def speed_name(gbps: float) -> str | None:
    for name, rate in SPEEDS.items():
        if abs(rate - gbps) < 0.01:
            return name
    return None


# ---------------------------------------------------------------------------
# sminfo, smpquery, saquery, perfquery
# ---------------------------------------------------------------------------

_SMINFO_RE = re.compile(r"sm lid (\d+) sm guid (0x[0-9a-fA-F]+), activity count (\d+) priority (\d+) state (\d+) (\w+)")


def parse_sminfo(text: str) -> dict[str, Any]:
    match = _SMINFO_RE.search(text)
    if not match:
        raise IbParseError("sminfo: no SM in %r" % text.strip())
    lid, sm_guid, activity, priority, state, name = match.groups()
    return {"lid": int(lid), "guid": guid(sm_guid), "activity_count": int(activity), "priority": int(priority),
            "state": int(state), "state_name": name.replace("SMINFO_", "").lower()}


_SL2VL_ROW_RE = re.compile(r"^ports: in\s+(\d+), out\s+(\d+):\s*\|((?:\s*\d+\|){16})\s*$")


def parse_sl2vl(text: str) -> dict[str, list[int]]:
    """``smpquery sl2vl``: in-port (as a string) -> 16 VLs (one per SL)."""
    rows: dict[str, list[int]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _SL2VL_ROW_RE.match(line)
        if not match:
            raise IbParseError("smpquery sl2vl: unexpected line %r" % raw)
        rows[match.group(1)] = [int(v) for v in match.group(3).split("|") if v.strip()]
    if not rows:
        raise IbParseError("smpquery sl2vl: no table in %r" % text.strip())
    return rows


def parse_vlarb(text: str) -> dict[str, Any]:
    """``smpquery vlarb``: high/low tables as [{vl, weight}] (every entry, zeros included) and the caps."""
    out: dict[str, Any] = {"high": [], "low": [], "high_cap": None, "low_cap": None}
    caps = re.search(r"LowCap (\d+) HighCap (\d+)", text)
    if caps:
        out["low_cap"], out["high_cap"] = int(caps.group(1)), int(caps.group(2))
    table = None
    vls: list[int] = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("# Low priority"):
            table = "low"
        elif line.startswith("# High priority"):
            table = "high"
        elif line.startswith("VL") and table:
            vls = [int(v, 16) for v in line.split(":", 1)[1].split("|") if v.strip()]
        elif line.startswith("WEIGHT") and table:
            weights = [int(v, 16) for v in line.split(":", 1)[1].split("|") if v.strip()]
            if len(weights) != len(vls):
                raise IbParseError("smpquery vlarb: %d VLs but %d weights" % (len(vls), len(weights)))
            out[table] += [{"vl": vl, "weight": w} for vl, w in zip(vls, weights)]
    if not out["high"] and not out["low"]:
        raise IbParseError("smpquery vlarb: no table in %r" % text.strip())
    return out


def parse_pkeys(text: str) -> dict[str, Any]:
    """``smpquery pkeys``: the non-zero P_Keys in table order, and the capacity."""
    pkeys = []
    capacity = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        match = re.match(r"^\d+:\s+((?:0x[0-9a-fA-F]{4}\s*)+)$", line)
        if match:
            pkeys += [p.lower() for p in match.group(1).split() if int(p, 16) != 0]
            continue
        match = re.match(r"^(\d+) pkeys capacity", line)
        if match:
            capacity = int(match.group(1))
            continue
        raise IbParseError("smpquery pkeys: unexpected line %r" % raw)
    return {"pkeys": pkeys, "capacity": capacity}


def parse_path_records(text: str) -> list[dict[str, Any]]:
    """``saquery -p``: every PathRecord dump as a dict of its fields (ints where hex/decimal)."""
    records: list[dict[str, Any]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("PathRecord dump"):
            records.append({})
            continue
        match = re.match(r"^(\w+)\.{2,}(\S+)$", line)
        if match and records:
            key, value = match.groups()
            records[-1][key] = _number(value)
    return records


def parse_perfquery(text: str) -> dict[str, int]:
    counters: dict[str, int] = {}
    for raw in text.splitlines():
        match = re.match(r"^(\w+):\.*(\S+)$", raw.strip())
        if match:
            value = _number(match.group(2))
            if isinstance(value, int):
                counters[match.group(1)] = value
    if not counters:
        raise IbParseError("perfquery: no counters in %r" % text.strip())
    return counters


def _number(value: str) -> Any:
    try:
        return int(value, 16) if value.lower().startswith("0x") else int(value)
    except ValueError:
        return value


# ---------------------------------------------------------------------------
# Collection: which commands, in which order (the module supplies ``run``)
# ---------------------------------------------------------------------------


class Collector:
    """Gather the sections asked for; every failed command is kept in ``errors``."""

    def __init__(self, run: Runner, sections: list[str] | tuple[str, ...] = SECTIONS, paths: list[dict] | None = None,
                 partitions: list[dict] | None = None) -> None:
        self.run = run
        self.sections = list(sections)
        self.paths = list(paths or [])
        self.partitions = list(partitions or [])
        self.errors: list[dict[str, Any]] = []
        self.commands = 0

    def _cmd(self, argv: list[str], parser: Callable[[str], Any]) -> Any:
        self.commands += 1
        rc, out, err = self.run(argv)
        if rc != 0:
            self.errors.append({"command": " ".join(argv), "rc": rc, "stderr": (err or out).strip()})
            return None
        try:
            return parser(out)
        except IbParseError as exc:
            self.errors.append({"command": " ".join(argv), "rc": rc, "stderr": str(exc)})
            return None

    def collect(self) -> dict[str, Any]:
        topo = self._cmd(["ibnetdiscover"], parse_ibnetdiscover)
        if topo is None:
            raise IbCollectError(self.errors[-1])
        facts: dict[str, Any] = {"collected": list(self.sections), "nodes": topo["nodes"], "links": topo["links"]}
        facts["summary"] = summary(topo)
        active = self._active_ports(topo)
        steps = (("ports", self._ports), ("sm", self._sm), ("sl2vl", self._sl2vl), ("vlarb", self._vlarb),
                 ("pkeys", self._pkeys), ("paths", self._paths), ("counters", self._counters), ("tenants", self._tenants))
        for name, step in steps:
            if name in self.sections:
                facts[name] = step(topo, active)
        facts["errors"] = self.errors
        facts["commands_run"] = self.commands
        return facts

    @staticmethod
    def _active_ports(topo: dict) -> list[tuple[str, int, int]]:
        """(node guid, port, lid) of every linked port; switch ports use the switch's LID."""
        out = []
        for node_guid, node in sorted(topo["nodes"].items()):
            for port in sorted(node["links"], key=int):
                lid = node.get("port_lids", {}).get(port, node["lid"])
                if lid is not None:
                    out.append((node_guid, int(port), lid))
        return out

    def _ports(self, topo: dict, _active: list) -> dict[str, Any]:
        rows = self._cmd(["iblinkinfo"], parse_iblinkinfo) or []
        by_lid = {}
        for node_guid, node in topo["nodes"].items():
            for port, lid in node.get("port_lids", {}).items():
                by_lid[(lid, int(port))] = node_guid
            if node["type"] == "switch" and node["lid"] is not None:
                by_lid[node["lid"]] = node_guid
        ports = {}
        for row in rows:
            node_guid = by_lid.get((row["lid"], row["port"])) or by_lid.get(row["lid"])
            if node_guid is None:
                continue  # a node ibnetdiscover did not reach (it came up in between)
            ports[port_key(node_guid, row["port"])] = dict(row, node=node_guid)
        return ports

    def _sm(self, _topo: dict, _active: list) -> Any:
        return self._cmd(["sminfo"], parse_sminfo)

    def _sl2vl(self, topo: dict, active: list) -> dict[str, Any]:
        out = {}
        for node_guid, port, lid in active:
            table = self._cmd(["smpquery", "sl2vl", str(lid), str(port)], parse_sl2vl)
            if table is not None:
                out[port_key(node_guid, port)] = {"type": topo["nodes"][node_guid]["type"], "rows": table}
        return out

    def _vlarb(self, topo: dict, active: list) -> dict[str, Any]:
        out = {}
        for node_guid, port, lid in active:
            table = self._cmd(["smpquery", "vlarb", str(lid), str(port)], parse_vlarb)
            if table is not None:
                out[port_key(node_guid, port)] = dict(table, type=topo["nodes"][node_guid]["type"])
        return out

    def _pkeys(self, topo: dict, active: list) -> dict[str, Any]:
        out = {}
        for node_guid, port, lid in active:
            node = topo["nodes"][node_guid]
            if node["type"] == "switch":
                continue  # CA ports are where membership lives; switch tables mirror them (enforcement)
            table = self._cmd(["smpquery", "pkeys", str(lid), str(port)], parse_pkeys)
            if table is not None:
                pg = node["port_guids"].get(str(port), node_guid)
                out[pg] = dict(table, node=node_guid, port=port, description=node["description"])
        return out

    def _paths(self, topo: dict, _active: list) -> list[dict[str, Any]]:
        lids = port_lids(topo)
        pairs = list(self.paths) + choose_paths(self.partitions, lids)
        out = []
        for pair in pairs:
            src, dst, pkey = guid(pair["src"]), guid(pair["dst"]), pair["pkey"]
            entry: dict[str, Any] = {"src": src, "dst": dst, "pkey": pkey, "partition": pair.get("partition")}
            if src not in lids or dst not in lids:
                entry.update(found=False, error="port not in the fabric")
                out.append(entry)
                continue
            records = self._cmd(["saquery", "-p", "--pkey", pkey, "--src-to-dst", "%d:%d" % (lids[src], lids[dst])],
                                parse_path_records)
            if records is None:
                entry.update(found=False, error="saquery failed")
            elif not records:
                entry.update(found=False)
            else:
                rec = records[0]
                entry.update(found=True, sl=rec.get("sl"), mtu=rec.get("mtu"), rate=rec.get("rate"),
                             record_pkey="0x%04x" % rec["pkey"] if isinstance(rec.get("pkey"), int) else None)
            out.append(entry)
        return out

    def _path_record(self, src: str, dst: str, lids: dict[str, int], pkey: str | None) -> dict[str, Any]:
        """Ask the SA for a PathRecord from ``src`` to ``dst`` (port GUIDs), for ``pkey`` or, with None, for any
        partition the two share (the SA picks one in which at least one of them is a full member)."""
        entry: dict[str, Any] = {"src": src, "dst": dst, "pkey": pkey}
        if src not in lids or dst not in lids:
            entry.update(found=None, error="port not in the fabric")
            return entry
        argv = ["saquery", "-p"] + (["--pkey", pkey] if pkey else []) + ["--src-to-dst", "%d:%d" % (lids[src], lids[dst])]
        records = self._cmd(argv, parse_path_records)
        if records is None:
            entry.update(found=None, error="saquery failed")
        else:
            # An empty answer (rc 0, no "PathRecord dump") is the SA's "no path": verified against ibsim + OpenSM 3.3.23.
            entry["found"] = bool(records)
            if records:
                pk = records[0].get("pkey")
                entry.update(record_pkey="0x%04x" % pk if isinstance(pk, int) else None, sl=records[0].get("sl"))
        return entry

    def _tenants(self, topo: dict, _active: list) -> list[dict[str, Any]]:
        """For every two tenants (partitions of ``partitions`` marked ``tenant``): from the first port of one in
        the fabric to the first of the other, a PathRecord asked with no P_Key, with the first tenant's and
        with the second's; the verification expects none of them (ib_fabric_verify check ``tenants``)."""
        lids = port_lids(topo)
        firsts = []
        for part in self.partitions:
            if not part.get("tenant"):
                continue
            ports = [guid(m["guid"]) for m in part.get("members") or [] if m.get("guid")]
            present = [g for g in ports if g in lids]
            firsts.append((part["tenant"], pkey_text(part["pkey"]), present[0] if present else (ports[0] if ports else None)))
        out = []
        for index, (tenant_a, pkey_a, port_a) in enumerate(firsts):
            for tenant_b, pkey_b, port_b in firsts[index + 1:]:
                if port_a is None or port_b is None:
                    continue
                for pkey in (None, pkey_a, pkey_b):
                    out.append(dict(self._path_record(port_a, port_b, lids, pkey), src_tenant=tenant_a, dst_tenant=tenant_b))
        return out

    def _counters(self, _topo: dict, active: list) -> dict[str, Any]:
        out = {}
        for node_guid, port, lid in active:
            counters = self._cmd(["perfquery", str(lid), str(port)], parse_perfquery)
            if counters is not None:
                out[port_key(node_guid, port)] = counters
        return out


class IbCollectError(RuntimeError):
    """The topology itself could not be read: nothing else can be collected."""

    def __init__(self, error: dict) -> None:
        super().__init__("%s failed (rc %s): %s" % (error["command"], error["rc"], error["stderr"]))
        self.error = error


def port_lids(topo: dict) -> dict[str, int]:
    """CA port GUID -> LID."""
    out = {}
    for node in topo["nodes"].values():
        for port, lid in node.get("port_lids", {}).items():
            pg = node["port_guids"].get(port)
            if pg:
                out[pg] = lid
    return out


def summary(topo: dict) -> dict[str, int]:
    nodes = topo["nodes"].values()
    return {
        "switches": sum(1 for n in nodes if n["type"] == "switch"),
        "cas": sum(1 for n in nodes if n["type"] == "ca"),
        "routers": sum(1 for n in nodes if n["type"] == "router"),
        "links": len(topo["links"]),
    }


def choose_paths(partitions: list[dict], lids: dict[str, int]) -> list[dict[str, Any]]:
    """One pair per partition: its first two GUID members that are in the fabric, a full member first
    (two limited members have no path by design)."""
    pairs = []
    for part in partitions:
        members = [(guid(m["guid"]), m.get("membership")) for m in part.get("members") or [] if m.get("guid")]
        present = [m for m in members if m[0] in lids]
        full = [g for g, ms in present if ms in ("full", "both")]
        if not full or len(present) < 2:
            continue
        src = full[0]
        dst = next(g for g, _ms in present if g != src)
        pairs.append({"src": src, "dst": dst, "pkey": pkey_text(part["pkey"]), "partition": part.get("name")})
    return pairs


def pkey_text(value: Any) -> str:
    number = value if isinstance(value, int) else int(str(value), 16)
    return "0x%04x" % number
