# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The cabling check: the intended links (``fabric_plan`` ``cabling``) against what the devices see.

The readers (``switch_links``, ``host_links``, ``ib_links``) return, per device, one
observation per port or NIC (the shape in docs/cabling.md); ``compare`` judges every
intended link from the evidence of BOTH its ends and returns findings:

- ``ok``          both ends (or the one that reads LLDP) see each other, at the intended speed;
- ``missing``     down, or up with no neighbour, at every end that was read;
- ``wrong_peer``  an end sees someone other than its intended peer (expected X, found Y);
- ``swapped``     two links crossed: each one's end sees the other link's peer (one finding, both links);
- ``degraded``    up with the right peer, but slower than intended, or an InfiniBand width below 4X;
- ``unexpected``  a neighbour on a port in scope that has no intended peer, or a fabric device heard
                  next to the intended peer on one end;
- ``unproven``    no end proves or contradicts the link: the only neighbour heard is the right device
                  sending a port ID and description that name none of its ports (a Junos ifIndex, a
                  SONiC alias), or a neighbour that sent no system name; the finding says which;
- ``unread``      a device of the cabling gave no observation (or an end of a link none): never a pass.

A neighbour is the intended peer when its ``system`` (case-insensitive, a domain after the first
``.`` ignored) is the peer's inventory name and its ``port`` or ``port_descr`` is the peer port's
name, or - for a host NIC - the NIC's name, netdev or MAC (any of ``aa:bb..``, ``aa-bb..``,
``aabb.ccdd..``). One end that proves its peer proves the link when the other end is unread or hears
nothing; where the fields sent cannot name a port, the link is ``unproven``, with the reason from the
port ID, its subtype and the description (``_why_unproven``). Exceptions (a validated list) turn named findings into allowed ones; they stay in
the report, and an exception that matches no finding is reported as unused.

Pure Python standard library (the action plugin ``cabling_verify`` is thin glue).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "BAD_KINDS",
    "EXCEPTION_KEYS",
    "KINDS",
    "CablingInputError",
    "check_exceptions",
    "compare",
    "markdown",
    "merge_observations",
    "observations_from_readings",
    "report_files",
]

KINDS: tuple[str, ...] = ("ok", "missing", "wrong_peer", "swapped", "degraded", "unexpected", "unproven", "unread")
BAD_KINDS: tuple[str, ...] = KINDS[1:]
EXCEPTION_KEYS: tuple[str, ...] = ("end", "finding", "reason")
# The reader that gives a device's observation, by what the device is in the cabling (for messages only).
_READERS = {"switch": "switch_links, or ib_links on InfiniBand", "host": "host_links"}
_OPER = ("up", "down")
_SPEED_RE = re.compile(r"([0-9]{1,5}(?:\.[0-9]{1,3})?)G")
_WIDTH_RE = re.compile(r"([0-9]{1,2})X")
_FULL_WIDTH = 4  # InfiniBand links are 4X (IBTA; NDR 2X ports aside, unverified here): below that is degraded
# One line, no control characters: every name and reason reaches a Markdown line.
_LINE_RE = re.compile(r"[^\x00-\x1f\x7f\x85\u2028\u2029]{1,500}")
_MAC_HEX_RE = re.compile(r"[0-9a-f]{12}")


class CablingInputError(ValueError):
    """Input the check cannot judge; ``errors`` lists every problem, each naming the key and the value."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------


def _short(name: str) -> str:
    """A system name as compared: lower case, the domain after the first '.' dropped (not for an IPv4 address)."""
    text = str(name).strip().lower()
    if re.fullmatch(r"[0-9.]+", text):
        return text
    return text.split(".", 1)[0]


def _mac(text: Any) -> str | None:
    """A MAC in one spelling (aa:bb:cc:dd:ee:ff) from ':' / '-' / Cisco-dotted forms; None when it is not one."""
    if not isinstance(text, str):
        return None
    hexed = re.sub(r"[:.\-]", "", text.strip().lower())
    if not _MAC_HEX_RE.fullmatch(hexed) or len(text.strip()) not in (12, 14, 17):
        return None
    return ":".join(hexed[i:i + 2] for i in range(0, 12, 2))


def _key(host: str, name: str | None) -> str:
    return f"{host}:{name}" if name is not None else str(host)


def _gbps(speed: Any) -> float | None:
    match = _SPEED_RE.fullmatch(speed) if isinstance(speed, str) else None
    return float(match.group(1)) if match else None


def _width(width: Any) -> int | None:
    match = _WIDTH_RE.fullmatch(width) if isinstance(width, str) else None
    return int(match.group(1)) if match else None


def _natural(text: str) -> list:
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text)]


# ---------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------


def _check_cabling(cabling: Any) -> list[str]:
    errors: list[str] = []
    if not isinstance(cabling, dict):
        return [f"cabling: {type(cabling).__name__} is not the plan's cabling (fabric_plan_result.cabling: links, hosts, switches)"]
    links = cabling.get("links")
    if not isinstance(links, list):
        return [f"cabling.links: {links!r} is not a list of links"]
    for i, link in enumerate(links):
        if not isinstance(link, dict):
            errors.append(f"cabling.links[{i}]: {link!r} is not a link ({{a, b, rail, speed}})")
            continue
        for side in ("a", "b"):
            end = link.get(side)
            kinds = [k for k in ("port", "nic") if isinstance(end, dict) and k in end]
            if not isinstance(end, dict) or not isinstance(end.get("host"), str) or len(kinds) != 1 or not isinstance(end[kinds[0]], str):
                errors.append(f"cabling.links[{i}].{side}: {end!r} is not an end ({{host, port}} or {{host, nic}})")
        speed = link.get("speed")
        if speed is not None and _gbps(speed) is None:
            errors.append(f"cabling.links[{i}].speed: {speed!r} is not a speed like '400G'")
    switches = cabling.get("switches") or {}
    if not isinstance(switches, dict):
        errors.append(f"cabling.switches: {switches!r} is not a mapping")
    else:
        for name, switch in switches.items():
            spare = switch.get("ports_without_peer", []) if isinstance(switch, dict) else None
            if not isinstance(spare, list) or not all(isinstance(p, str) for p in spare):
                errors.append(f"cabling.switches[{name!r}].ports_without_peer: {spare!r} is not a list of port names")
    return errors


def _check_observations(observations: Any) -> list[str]:
    """The shape every reader returns (docs/cabling.md); a value out of it is an error naming its path."""
    if not isinstance(observations, dict):
        return [f"observations: {type(observations).__name__} is not a mapping of device to its ends"]
    errors: list[str] = []
    for device, ends in observations.items():
        where = f"observations[{device!r}]"
        if not isinstance(ends, dict):
            errors.append(f"{where}: {ends!r} is not a mapping of port or NIC to its observation")
            continue
        for name, seen in ends.items():
            here = f"{where}[{name!r}]"
            if not isinstance(seen, dict):
                errors.append(f"{here}: {seen!r} is not an observation ({{oper, speed, width, neighbors}})")
                continue
            if seen.get("oper") not in (*_OPER, None):
                errors.append(f"{here}.oper: {seen.get('oper')!r} is not up, down or null")
            if seen.get("speed") is not None and _gbps(seen["speed"]) is None:
                errors.append(f"{here}.speed: {seen['speed']!r} is not a speed like '400G' (or null)")
            if seen.get("width") is not None and _width(seen["width"]) is None:
                errors.append(f"{here}.width: {seen['width']!r} is not an InfiniBand width like '4X' (or null)")
            neighbors = seen.get("neighbors", [])
            if not isinstance(neighbors, list):
                errors.append(f"{here}.neighbors: {neighbors!r} is not a list")
                continue
            for j, neighbor in enumerate(neighbors):
                # The system name TLV is optional in 802.1AB: a neighbour without one is kept (it proves nothing).
                if not isinstance(neighbor, dict) or "system" not in neighbor or not isinstance(neighbor["system"], (str, type(None))):
                    errors.append(f"{here}.neighbors[{j}]: {neighbor!r} has no system name (a string, or null when the neighbour sent none)")
            me = seen.get("self")
            if me is not None and not isinstance(me, dict):
                errors.append(f"{here}.self: {me!r} is not {{netdev, mac}}")
    return errors


def check_exceptions(exceptions: Any) -> tuple[list[dict], list[str]]:
    """(the exceptions normalised, every error) - each entry {end, finding, reason}.

    ``end`` is ``<host>:<port or NIC>`` (one end of a link) or ``<host>`` (any end of that device);
    ``finding`` one of the bad findings; ``reason`` one line saying why it is allowed (an RMA, a ticket).
    """
    if exceptions is None:
        return [], []
    if not isinstance(exceptions, list):
        return [], [f"exceptions: {exceptions!r} is not a list of {{end, finding, reason}}"]
    out, errors = [], []
    for i, entry in enumerate(exceptions):
        where = f"exceptions[{i}]"
        if not isinstance(entry, dict):
            errors.append(f"{where}: {entry!r} is not {{end, finding, reason}}")
            continue
        bad = len(errors)
        for key in sorted(set(entry) - set(EXCEPTION_KEYS), key=str):
            errors.append(f"{where}.{key}: unknown key (an exception has {', '.join(EXCEPTION_KEYS)})")
        for key in EXCEPTION_KEYS:
            if key not in entry:
                errors.append(f"{where}.{key}: required")
        end, finding, reason = entry.get("end"), entry.get("finding"), entry.get("reason")
        # A port name may hold ':' itself (Junos channelized et-0/0/1:0): the host is what comes before the first one.
        if "end" in entry and not (isinstance(end, str) and _LINE_RE.fullmatch(end) and end.strip() == end and " " not in end
                                   and end.partition(":")[0] and (":" not in end or end.partition(":")[2])):
            errors.append(f"{where}.end: {end!r} is not '<host>:<port or NIC>' or '<host>'")
        if "finding" in entry and finding not in BAD_KINDS:
            errors.append(f"{where}.finding: {finding!r} is not a finding an exception can allow ({', '.join(BAD_KINDS)})")
        if "reason" in entry and not (isinstance(reason, str) and reason.strip() and _LINE_RE.fullmatch(reason)):
            errors.append(f"{where}.reason: {reason!r} is not one line saying why (a ticket, an RMA number)")
        if len(errors) == bad:
            out.append({"end": end, "finding": finding, "reason": reason.strip()})
    return out, errors


# ---------------------------------------------------------------------------
# Readers' results into observations
# ---------------------------------------------------------------------------


def merge_observations(*sources: Any) -> dict[str, dict]:
    """One {device: ends} from several readers: a device's ends are united; an end two readers saw
    keeps every neighbour (once) and the first non-null oper, speed, width and self."""
    merged: dict[str, dict] = {}
    for source in sources:
        for device, ends in (source or {}).items():
            mine = merged.setdefault(str(device), {})
            for name, seen in (ends or {}).items():
                if not isinstance(seen, dict):
                    mine[str(name)] = seen  # refused by the shape check, with its path
                    continue
                have = mine.get(str(name))
                if not isinstance(have, dict):
                    mine[str(name)] = dict(seen, neighbors=list(seen.get("neighbors") or []))
                    continue
                for field in ("oper", "speed", "width", "self"):
                    if have.get(field) is None and seen.get(field) is not None:
                        have[field] = seen[field]
                for neighbor in seen.get("neighbors") or []:
                    if neighbor not in have["neighbors"]:
                        have["neighbors"].append(neighbor)
    return merged


def observations_from_readings(readings: Any) -> tuple[dict[str, dict], dict[str, str], list[str]]:
    """(observations, unread reasons by device, errors) from registered reader results.

    ``readings`` is {inventory host: {reader: registered result}} (reader switch_links, host_links or
    ib_links; skipped or absent results are ignored). A failed or unreachable result makes its device
    unread, with the reader's message as the reason; an ib_links result's ``devices`` are every device
    of the InfiniBand fabric it read.
    """
    if readings is None:
        return {}, {}, []
    if not isinstance(readings, dict):
        return {}, {}, [f"readings: {readings!r} is not a mapping of inventory host to its readers' results"]
    sources: list[dict] = []
    reasons: dict[str, str] = {}
    errors: list[str] = []
    for host in sorted(readings, key=str):
        per_reader = readings[host]
        if per_reader is None:
            continue
        if not isinstance(per_reader, dict):
            errors.append(f"readings[{host!r}]: {per_reader!r} is not a mapping of reader to its result")
            continue
        for reader in sorted(per_reader):
            result = per_reader[reader]
            where = f"readings[{host!r}][{reader!r}]"
            if result is None or (isinstance(result, dict) and result.get("skipped")):
                continue
            if not isinstance(result, dict):
                errors.append(f"{where}: {result!r} is not a registered result")
                continue
            if result.get("failed") or result.get("unreachable"):
                why = "unreachable" if result.get("unreachable") else "failed"
                msg = " ".join(str(result.get("msg") or "no message").split())
                reasons[str(host)] = f"{reader} {why} on {host}: {msg}"
                continue
            if isinstance(result.get("ends"), dict):
                sources.append({str(host): result["ends"]})
            elif isinstance(result.get("devices"), dict):
                sources.append(result["devices"])
                unmapped = result.get("unmapped") or []
                if unmapped:
                    reasons.setdefault("__unmapped__", f"{reader} on {host} could not map: {', '.join(map(str, unmapped))}")
            else:
                errors.append(f"{where}: neither ends nor devices in the result (a {reader} result was expected)")
    return merge_observations(*sources), reasons, errors


# ---------------------------------------------------------------------------
# The comparison
# ---------------------------------------------------------------------------


class _Fabric:
    """The intended ends, and how to recognise each from a neighbour's system and port."""

    def __init__(self, cabling: dict, observations: dict, nics: dict | None) -> None:
        self.links: list[dict] = []
        self.peer_of: dict[str, str] = {}  # end key -> intended peer end key
        self.link_of: dict[str, int] = {}  # end key -> index in self.links
        self.device_links: dict[str, list[int]] = {}  # device -> indexes of its links
        self.kind: dict[str, str] = {}  # device -> switch | host
        self.ports: dict[str, dict[str, str]] = {}  # device -> {lower name or alias: name}
        self.spare: dict[str, list[str]] = {}  # switch -> ports in scope without a peer
        for link in cabling.get("links") or []:
            a, b = (self._end(link[side]) for side in ("a", "b"))
            index = len(self.links)
            self.links.append({"a": a, "b": b, "rail": link.get("rail"), "speed": link.get("speed")})
            self.peer_of[a], self.peer_of[b] = b, a
            self.link_of[a] = self.link_of[b] = index
            for end in (a, b):
                self.device_links.setdefault(end.split(":", 1)[0], []).append(index)
        for name, switch in (cabling.get("switches") or {}).items():
            self.kind.setdefault(str(name), "switch")
            for port in list((switch or {}).get("ports") or {}) + list((switch or {}).get("ports_without_peer") or []):
                self.ports.setdefault(str(name), {})[str(port).lower()] = str(port)
            self.spare[str(name)] = [str(p) for p in (switch or {}).get("ports_without_peer") or []]
        for name, host in (cabling.get("hosts") or {}).items():
            self.kind.setdefault(str(name), "host")
            for nic in (host or {}).get("nics") or {}:
                self.ports.setdefault(str(name), {})[str(nic).lower()] = str(nic)
        # A host NIC is also known by its netdev and MAC: what its own reader says, else the plan's NIC list.
        for host, per_nic in (nics or {}).items():
            for nic, ident in (per_nic or {}).items():
                self._alias(str(host), str(nic), ident)
        for host, ends in observations.items():
            if self.kind.get(host) == "switch":
                # Every port the switch reported is a port of it: a neighbour naming one out of scope is a different
                # port (a contradiction), not an unknown one.
                for port in ends:
                    self.ports.setdefault(host, {}).setdefault(str(port).lower(), str(port))
            if self.kind.get(host) == "host":
                for nic, seen in ends.items():
                    if isinstance(seen, dict) and isinstance(seen.get("self"), dict):
                        self._alias(host, str(nic), seen["self"])
        self.devices = {}
        for device in sorted(set(self.kind) | set(observations)):
            self.devices.setdefault(device.lower(), device)
            self.devices.setdefault(_short(device), device)

    def _end(self, end: dict) -> str:
        kind = "port" if "port" in end else "nic"
        self.kind.setdefault(end["host"], "switch" if kind == "port" else "host")
        self.ports.setdefault(end["host"], {})[str(end[kind]).lower()] = str(end[kind])
        return _key(end["host"], end[kind])

    def _alias(self, host: str, nic: str, ident: Any) -> None:
        if not isinstance(ident, dict):
            return
        ports = self.ports.setdefault(host, {})
        ports.setdefault(nic.lower(), nic)
        if isinstance(ident.get("netdev"), str) and ident["netdev"]:
            ports.setdefault(ident["netdev"].lower(), nic)
        mac = _mac(ident.get("mac"))
        if mac:
            ports.setdefault(mac, nic)

    def device(self, system: Any) -> str | None:
        if not isinstance(system, str) or not system.strip():
            return None
        return self.devices.get(system.strip().lower()) or self.devices.get(_short(system))

    def resolve(self, neighbor: dict) -> tuple[str | None, str | None]:
        """(device, port or NIC) the neighbour is, as far as it can be told; (None, None) for a stranger."""
        device = self.device(neighbor.get("system", ""))
        if device is None:
            return None, None
        ports = self.ports.get(device, {})
        for field in ("port", "port_descr"):
            value = neighbor.get(field)
            if not isinstance(value, str) or not value:
                continue
            name = ports.get(value.strip().lower()) or ports.get(_mac(value) or "\0")
            if name is not None:
                return device, name
        return device, None


def _shown(neighbor: dict, fabric: _Fabric) -> str:
    device, name = fabric.resolve(neighbor)
    if device is not None and name is not None:
        return _key(device, name)
    port = neighbor.get("port") or neighbor.get("port_descr") or "?"
    extra = f" ({neighbor['port_descr']})" if neighbor.get("port_descr") and neighbor.get("port_descr") != port else ""
    system = neighbor.get("system") or "(no system name)"
    return f"{system} port {port}{extra}"


def _why_unproven(neighbor: dict, device: str | None) -> str:
    """Why a neighbour's fields cannot name the intended peer's port (issue 32): from its port ID, the ID's
    subtype (IEEE 802.1AB LldpPortIdSubtype, as the readers give it) and its port description."""
    if device is None:
        chassis = neighbor.get("chassis_id")
        shown = _mac(chassis) or chassis
        return "no system name sent" + (f" (chassis ID {shown}, which the intent does not name)" if shown else " and no chassis ID")
    port, subtype, descr = neighbor.get("port"), neighbor.get("port_id_subtype"), neighbor.get("port_descr")
    kind = f" (subtype {subtype})" if subtype else ""
    if not port:
        pid = "no port ID"
    elif subtype == "local" and str(port).isdigit():
        pid = f"port ID {port!r}{kind} is a locally assigned number, not an interface name (Junos sends the SNMP ifIndex)"
    elif subtype == "mac" or _mac(port):
        pid = f"port ID {port!r}{kind} is a MAC the intent does not know for {device}"
    else:
        pid = f"port ID {port!r}{kind} names no port of {device} the intent knows"
    described = f"the port description {descr!r} names none either" if descr else "no port description was sent"
    return f"{pid}, and {described}"


def _look(fabric: _Fabric, observations: dict, end: str) -> dict:
    """What one end of an intended link saw: state unknown | down | none | match | other | unproven."""
    host, name = end.split(":", 1)
    out: dict[str, Any] = {"end": end, "oper": None, "speed": None, "width": None, "found": [], "extra": [], "pairs": []}
    if host not in observations:
        out.update(state="unknown", text=f"{host} not read")
        return out
    seen = observations[host].get(name)
    if not isinstance(seen, dict):
        out.update(state="unknown", text=f"{host} said nothing of {name}")
        return out
    out.update(oper=seen.get("oper"), speed=seen.get("speed"), width=seen.get("width"))
    if seen.get("oper") == "down":
        # lldpd keeps a neighbour until its TTL runs out: a down link's neighbours are history.
        out.update(state="down", text=f"{end} down")
        return out
    peer = fabric.peer_of.get(end)
    peer_host = peer.split(":", 1)[0] if peer else None
    match, others, unproven = False, [], []
    for neighbor in seen.get("neighbors") or []:
        device, port = fabric.resolve(neighbor)
        if device is not None and port is not None:
            out["pairs"].append(_key(device, port))
        if peer is not None and device is not None and _key(device, port) == peer:
            match = True
        elif peer is not None and neighbor.get("system") in (None, ""):
            # No system name (an optional TLV): it cannot be told who this is, so it neither proves nor contradicts.
            unproven.append(f"{_shown(neighbor, fabric)}, unproven: {_why_unproven(neighbor, None)}")
        elif peer is not None and device == peer_host and port is None:
            if fabric.kind.get(device) == "host" and device not in observations:
                # The peer host was not read, so its NICs' MACs are unknown: the system is right, the NIC unproven
                # (the unread host fails the check anyway).
                match = True
            else:
                # The right device, but a port ID that names none of its ports (an ifindex, a MAC of another NIC):
                # not a contradiction, not a proof either.
                unproven.append(f"{_shown(neighbor, fabric)}, unproven: {_why_unproven(neighbor, device)}")
        else:
            others.append(_shown(neighbor, fabric))
    if match:  # anyone else heard beside the peer is reported by _extra_neighbours
        out.update(state="match", text=f"{end} sees {peer}")
    elif others:
        out["found"] = others
        out.update(state="other", text=f"{end} sees {', '.join(others)}")
    elif unproven:
        out["found"] = unproven
        out.update(state="unproven", text=f"{end} sees {'; '.join(unproven)}")
    else:
        out.update(state="none", text=f"{end} {'up' if seen.get('oper') == 'up' else 'state unknown'}, no LLDP neighbour")
    return out


def _speed_text(look: dict) -> str:
    parts = [look["speed"] or "speed unknown"]
    if look.get("width"):
        parts.append(look["width"])
    return f"{look['end']} at {' '.join(parts)}"


def _link_finding(fabric: _Fabric, link: dict, looks: tuple[dict, dict]) -> dict:
    states = {look["state"] for look in looks}
    expected = f"{link['a']} - {link['b']}" + (f" at {link['speed']}" if link.get("speed") else "")
    finding = {"a": link["a"], "b": link["b"], "rail": link["rail"], "speed": link["speed"], "links": [dict(link)],
               "ends": [link["a"], link["b"]], "expected": expected}
    if states == {"unknown"}:
        return dict(finding, finding="unread", found="; ".join(look["text"] for look in looks))
    if "other" in states:
        return dict(finding, finding="wrong_peer", found="; ".join(look["text"] for look in looks if look["state"] != "unknown"))
    if "down" in states:
        return dict(finding, finding="missing", found="; ".join(look["text"] for look in looks))
    if "match" not in states and "unproven" in states:
        return dict(finding, finding="unproven", found="; ".join(look["text"] for look in looks))
    if "match" not in states:
        return dict(finding, finding="missing", found="; ".join(look["text"] for look in looks))
    intended = _gbps(link.get("speed"))
    slow = [look for look in looks if look["state"] == "match" or look["oper"] == "up"]
    degraded = [look for look in slow if (intended is not None and _gbps(look["speed"]) is not None and _gbps(look["speed"]) < intended)
                or (_width(look["width"]) is not None and _width(look["width"]) < _FULL_WIDTH)]
    if degraded:
        width = f", {_FULL_WIDTH}X" if any(look["width"] for look in looks) else ""
        return dict(finding, finding="degraded", expected=f"{expected}{width}",
                    found="; ".join(_speed_text(look) for look in looks if look["state"] != "unknown"))
    unknown_speed = intended is not None and all(_gbps(look["speed"]) is None for look in looks)
    found = "; ".join(look["text"] for look in looks if look["state"] == "match")
    speeds = [look["speed"] for look in looks if look["speed"]]
    found += f" at {speeds[0]}" if speeds else (" (speed not reported by either end)" if unknown_speed else "")
    return dict(finding, finding="ok", found=found)


def _swaps(fabric: _Fabric, findings: list[dict], looks: list[tuple[dict, dict]]) -> None:
    """Merge two wrong_peer links that crossed (a1 sees b2's place, a2 sees b1's) into one swapped finding."""
    pairs: dict[str, set[str]] = {}  # end -> the ends it is seen cabled to (by either side)
    for a_look, b_look in looks:
        for look in (a_look, b_look):
            if look["state"] in ("match", "other"):
                for other in look["pairs"]:
                    pairs.setdefault(look["end"], set()).add(other)
                    pairs.setdefault(other, set()).add(look["end"])
    done: set[int] = set()
    for i, finding in enumerate(findings):
        if finding is None or finding["finding"] != "wrong_peer" or i in done:
            continue
        link = fabric.links[i]
        for here, there in ((link["a"], link["b"]), (link["b"], link["a"])):
            partner = None
            for y in sorted(pairs.get(here, ())):
                j = fabric.link_of.get(y)
                if j is None or j == i or j in done or findings[j] is None or findings[j]["finding"] != "wrong_peer":
                    continue
                z = fabric.peer_of[y]
                if there in pairs.get(z, ()):
                    partner = (j, y, z)
                    break
            if partner is None:
                continue
            j, y, z = partner
            first, second = sorted((i, j))
            l1, l2 = fabric.links[first], fabric.links[second]
            merged = {
                "finding": "swapped", "a": l1["a"], "b": l1["b"], "rail": l1["rail"], "speed": l1["speed"],
                "links": [dict(l1), dict(l2)], "ends": [l1["a"], l1["b"], l2["a"], l2["b"]],
                "expected": f"{l1['a']} - {l1['b']} and {l2['a']} - {l2['b']}",
                "found": f"crossed: {here} - {y} and {z} - {there} ({findings[first]['found']}; {findings[second]['found']})",
            }
            if l1["rail"] != l2["rail"]:
                merged["rail"] = [l1["rail"], l2["rail"]]
            findings[first] = merged
            findings[second] = None
            done.update((i, j))
            break


def _unexpected(fabric: _Fabric, observations: dict) -> list[dict]:
    out = []
    in_links = set(fabric.link_of)
    for device in sorted(observations, key=_natural):
        if device not in fabric.kind:
            continue
        spare = set(fabric.spare.get(device, []))
        for name in sorted(observations[device], key=_natural):
            end = _key(device, name)
            seen = observations[device][name]
            if end in in_links or not isinstance(seen, dict) or seen.get("oper") == "down":
                continue
            neighbors = seen.get("neighbors") or []
            if name in spare:
                strangers = neighbors  # a port in scope without a peer: anyone there is unexpected
                why = "no neighbour (the intent gives this port no peer)"
            else:
                # Another port or NIC of a device of the cabling: only devices of the cabling there are news (an OOB
                # switch on eth0 is not, nor an undescribed InfiniBand spine the fabric reader saw).
                strangers = [n for n in neighbors if fabric.device(n.get("system", "")) in fabric.kind]
                why = "no fabric device (this end has no link in the intent)"
            if strangers:
                out.append({"finding": "unexpected", "a": end, "b": None, "rail": None, "speed": None, "links": [], "ends": [end],
                            "expected": why, "found": f"{end} sees {', '.join(_shown(n, fabric) for n in strangers)}"})
    return out


def _extra_neighbours(looks: list[tuple[dict, dict]], fabric: _Fabric, observations: dict) -> list[dict]:
    """A fabric device heard next to the intended peer on one end (a second cable through a hub, a stale neighbour)."""
    out = []
    for pair in looks:
        for look in pair:
            if look["state"] != "match":
                continue
            host, name = look["end"].split(":", 1)
            peer = fabric.peer_of[look["end"]]
            extra = []
            for neighbor in observations[host][name].get("neighbors") or []:
                device, port = fabric.resolve(neighbor)
                if device not in fabric.kind or _key(device, port) == peer or (port is None and device == peer.split(":", 1)[0]):
                    continue
                extra.append(_shown(neighbor, fabric))
            if extra:
                link = fabric.links[fabric.link_of[look["end"]]]
                out.append({"finding": "unexpected", "a": look["end"], "b": peer, "rail": link["rail"], "speed": link["speed"], "links": [dict(link)],
                            "ends": [look["end"]], "expected": f"only {peer}", "found": f"{look['end']} also sees {', '.join(extra)}"})
    return out


def _unread(fabric: _Fabric, observations: dict, reasons: dict) -> list[dict]:
    out = []
    for device in sorted(fabric.kind, key=_natural):
        if device in observations:
            continue
        links = [fabric.links[i] for i in fabric.device_links.get(device, [])]
        why = reasons.get(device) or "no reader result for it (not in the play, or its reader did not run)"
        if reasons.get("__unmapped__") and fabric.kind[device] == "switch":
            why += f"; {reasons['__unmapped__']}"
        out.append({"finding": "unread", "a": device, "b": None, "rail": None, "speed": None, "device": device, "links": [dict(x) for x in links],
                    "ends": [device],  # an exception allows a whole unread device by its name only
                    "expected": f"an observation of {device} ({_READERS[fabric.kind[device]]}) for {len(links)} link(s)",
                    "found": f"nothing: {why}"})
    return out


def _allow(findings: list[dict], exceptions: list[dict]) -> list[dict]:
    """Mark the findings the exceptions name as allowed; the exceptions that matched none."""
    used = [False] * len(exceptions)
    for finding in findings:
        finding.setdefault("allowed", False)
        finding.setdefault("reason", None)
        if finding["finding"] == "ok":
            continue
        for i, exc in enumerate(exceptions):
            if exc["finding"] != finding["finding"]:
                continue
            hit = exc["end"] in finding["ends"] if ":" in exc["end"] else any(e.split(":", 1)[0] == exc["end"] for e in finding["ends"])
            if hit:
                used[i] = True
                if not finding["allowed"]:
                    finding.update(allowed=True, reason=exc["reason"])
    return [dict(exc, index=i) for i, exc in enumerate(exceptions) if not used[i]]


def compare(cabling: Any, observations: Any, exceptions: Any = None, nics: Any = None, unread_reasons: Any = None) -> dict:
    """Judge every intended link; raises CablingInputError (every problem at once) on input it cannot judge.

    ``nics`` ({host: {nic: {netdev, mac}}}, optional) names host NICs as their switches' LLDP shows them
    when the host's own observation has no ``self``; ``unread_reasons`` ({device: why}) says why a device
    gave no observation. Returns {findings, summary, unused_exceptions, failed, verdict}.
    """
    allowed_list, errors = check_exceptions(exceptions)
    errors = _check_cabling(cabling) + _check_observations(observations) + errors
    if nics is not None and not isinstance(nics, dict):
        errors.append(f"nics: {nics!r} is not a mapping of host to {{nic: {{netdev, mac}}}}")
    if errors:
        raise CablingInputError(errors)
    observations = {str(k): {str(n): v for n, v in ends.items()} for k, ends in observations.items()}
    fabric = _Fabric(cabling, observations, nics)
    looks = [(_look(fabric, observations, link["a"]), _look(fabric, observations, link["b"])) for link in fabric.links]
    findings: list[Any] = [_link_finding(fabric, link, pair) for link, pair in zip(fabric.links, looks)]
    _swaps(fabric, findings, looks)
    findings = [f for f in findings if f is not None]
    findings += _extra_neighbours(looks, fabric, observations)
    findings += _unexpected(fabric, observations)
    findings += _unread(fabric, observations, dict(unread_reasons or {}))
    unused = _allow(findings, allowed_list)
    summary = {kind: sum(1 for f in findings if f["finding"] == kind) for kind in KINDS}
    summary["allowed"] = sum(1 for f in findings if f["allowed"])
    summary["links"] = len(fabric.links)
    summary["unused_exceptions"] = len(unused)
    bad = [f for f in findings if f["finding"] != "ok" and not f["allowed"]]
    return {"findings": findings, "summary": summary, "unused_exceptions": unused, "failed": bool(bad),
            "verdict": "failed" if bad else "passed"}


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    return " ".join(str(value).split()).replace("|", "\\|")


def _line(finding: dict) -> str:
    allowed = f"allowed: {finding['reason']}" if finding["allowed"] else "no"
    return "| " + " | ".join(_cell(v) for v in (finding["finding"], finding["a"], finding["b"], finding["rail"], finding["expected"],
                                                finding["found"], allowed)) + " |"


def markdown(result: dict, title: str = "Cabling check") -> str:
    """The page a person takes to the data hall: one line per bad link (allowed ones marked)."""
    summary = result["summary"]
    lines = [f"# {_cell(title)}", "",
             f"Verdict: **{result['verdict']}** - {summary['links']} intended links; "
             + ", ".join(f"{kind} {summary[kind]}" for kind in KINDS) + f"; allowed {summary['allowed']}.", ""]
    bad = [f for f in result["findings"] if f["finding"] != "ok"]
    if bad:
        lines += ["| Finding | End A | End B | Rail | Expected | Found | Allowed |", "|---|---|---|---|---|---|---|"]
        lines += [_line(f) for f in bad]
    else:
        lines.append("Every intended link is cabled as the intent says.")
    if result["unused_exceptions"]:
        lines += ["", "Exceptions that matched no finding (remove them, or fix the end they name):", ""]
        lines += [f"- exceptions[{e['index']}]: {_cell(e['end'])} {e['finding']} ({_cell(e['reason'])})" for e in result["unused_exceptions"]]
    return "\n".join(lines) + "\n"


def report_json(result: dict, title: str = "Cabling check") -> str:
    doc = {"title": title, "verdict": result["verdict"], "summary": result["summary"], "findings": result["findings"],
           "unused_exceptions": result["unused_exceptions"]}
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def report_files(result: dict, name: str = "cabling", title: str = "Cabling check") -> dict[str, bytes]:
    """{file name: bytes}: <name>.json and <name>.md; the same result gives the same bytes."""
    return {f"{name}.json": report_json(result, title).encode("utf-8"), f"{name}.md": markdown(result, title).encode("utf-8")}
