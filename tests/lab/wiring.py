# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's physical cabling: what is really plugged into what.

A real fabric's cables are what they are; the inventory says what they should be.
The lab starts from the inventory's intended links (``ports.<port>.peer`` of each
switch, ``nics[].peer`` of each host: docs/intent.md, "Cabling") and applies the
faults in ``lab_cabling_faults``, so the simulators answer LLDP, link state and the
InfiniBand topology from cables that may differ from the intent, as real ones do.

Faults (a list; each end is ``"<host>:<port or NIC name>"``):

    - {swap: ["leaf1:swp1", "leaf1:swp2"]}   the cables plugged into these two ends trade places
    - {move: "gpu1:mlx5_0", to: "leaf2:et-0/0/5"}   the NIC's cable now ends on that switch port
    - {downgrade: "leaf1:swp1", speed: "200G"}   the link comes up at a lower speed (both ends)
    - {unplug: "leaf1:swp2"}   no cable: the link is down at both ends, no LLDP

The launcher writes ``<run_dir>/wiring.json`` at ``up``; simulators read it on every
command (``view``), so a test may rewrite it (``write``) between plays without a restart.
Pattern-generated cabling (``lossless_fabric.topology``) is not expanded here: the lab
inventories describe their links by hand.

    python tests/lab/wiring.py RUN_DIR [FAULTS_JSON]   rewrite wiring.json with these faults
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

FILE = "wiring.json"
FAULT_KINDS = ("swap", "move", "downgrade", "unplug")


class WiringError(ValueError):
    """The inventory's links or a fault make no sense; the message names the end."""


def mac(host: str, nic: str) -> str:
    """A stable, locally administered MAC for a lab host NIC (hostsim's sysfs uses the same)."""
    digest = hashlib.sha256(f"{host}/{nic}".encode()).digest()
    return "02:" + ":".join("%02x" % b for b in digest[:5])


def _end(host: str, kind: str, name: str) -> tuple[str, str, str]:
    return (str(host), kind, str(name))


def _parse_end(text: Any, ends: dict) -> tuple[str, str, str]:
    if not isinstance(text, str) or ":" not in text:
        raise WiringError(f"lab_cabling_faults: {text!r} is not '<host>:<port or NIC>'")
    host, name = text.split(":", 1)
    for kind in ("port", "nic"):
        if (host, kind, name) in ends:
            return (host, kind, name)
    raise WiringError(f"lab_cabling_faults: {text!r} names no switch port or host NIC of the lab inventory")


def intended(hostvars: dict) -> dict:
    """{'ends': {end: {'speed', 'netdev'?}}, 'links': [[a, b, speed]]} from the inventory's peers."""
    ends: dict[tuple, dict] = {}
    claims: dict[tuple, tuple] = {}
    for host, hvars in sorted(hostvars.items()):
        device = hvars.get("lossless_fabric_device")
        if not isinstance(device, dict):
            continue
        if device.get("kind") == "switch":
            for port, spec in (device.get("ports") or {}).items():
                spec = spec if isinstance(spec, dict) else {}
                here = _end(host, "port", port)
                ends[here] = {"speed": spec.get("speed")}
                peer = spec.get("peer")
                if isinstance(peer, dict) and peer.get("host"):
                    claims[here] = _end(peer["host"], "nic" if "nic" in peer else "port", peer.get("nic", peer.get("port")))
        elif device.get("kind") == "host":
            for nic in device.get("nics") or []:
                if not isinstance(nic, dict) or not nic.get("name"):
                    continue
                here = _end(host, "nic", nic["name"])
                ends[here] = {"speed": nic.get("speed"), "netdev": nic.get("netdev"), "mac": nic.get("mac") or mac(host, nic["name"])}
                peer = nic.get("peer")
                if isinstance(peer, dict) and peer.get("host"):
                    claims[here] = _end(peer["host"], "nic" if "nic" in peer else "port", peer.get("nic", peer.get("port")))
    links = []
    seen = set()
    for here, there in sorted(claims.items()):
        key = tuple(sorted((here, there)))
        if key in seen:
            continue
        seen.add(key)
        speed = ends.get(here, {}).get("speed") or ends.get(there, {}).get("speed")
        links.append([list(key[0]), list(key[1]), speed, True])
    return {"ends": ends, "links": links}


def apply_faults(wiring: dict, faults: Any) -> dict:
    """The wiring with the faults applied, in order."""
    ends = wiring["ends"]
    links = [[tuple(a), tuple(b), speed, up] for a, b, speed, up in wiring["links"]]
    for i, fault in enumerate(faults or []):
        if not isinstance(fault, dict) or len(set(fault) & set(FAULT_KINDS)) != 1:
            raise WiringError(f"lab_cabling_faults[{i}]: {fault!r} is not one of {', '.join(FAULT_KINDS)}")

        def find(end: tuple, i: int = i) -> tuple[int, int]:
            for n, link in enumerate(links):
                for side in (0, 1):
                    if link[side] == end:
                        return n, side
            raise WiringError(f"lab_cabling_faults[{i}]: no cable is plugged into {end[0]}:{end[2]}")

        if "swap" in fault:
            pair = fault["swap"]
            if not isinstance(pair, list) or len(pair) != 2:
                raise WiringError(f"lab_cabling_faults[{i}].swap: {pair!r} is not two ends")
            x, y = (_parse_end(e, ends) for e in pair)
            (nx, sx), (ny, sy) = find(x), find(y)
            links[nx][sx], links[ny][sy] = y, x
        elif "move" in fault:
            src, dst = _parse_end(fault["move"], ends), _parse_end(fault.get("to"), ends)
            for m, link in enumerate(links):
                if dst in link[:2]:
                    links.pop(m)  # whatever was plugged in there is unplugged
                    break
            n, side = find(src)
            links[n][1 - side] = dst
        elif "downgrade" in fault:
            n, _side = find(_parse_end(fault["downgrade"], ends))
            links[n][2] = fault.get("speed")
        else:
            n, _side = find(_parse_end(fault["unplug"], ends))
            links[n][3] = False
    return {"ends": ends, "links": [[list(a), list(b), speed, up] for a, b, speed, up in links]}


def build(hostvars: dict, faults: Any = None) -> dict:
    """The JSON-able wiring: the intended links, and the links as cabled (with the faults)."""
    base = intended(hostvars)
    wiring = apply_faults(base, faults)
    return {
        "ends": [{"end": list(end), **info} for end, info in sorted(wiring["ends"].items())],
        "intended": base["links"],
        "links": wiring["links"],
        "faults": list(faults or []),
    }


def refault(run_dir: str, faults: Any) -> dict:
    """Rewrite <run_dir>/wiring.json: the intended links with these faults (none: as intended)."""
    current = load(run_dir)
    if current is None:
        raise WiringError(f"no {FILE} in {run_dir}: start the lab first")
    ends = {tuple(e["end"]): {k: v for k, v in e.items() if k != "end"} for e in current["ends"]}
    wiring = apply_faults({"ends": ends, "links": current["intended"]}, faults)
    new = dict(current, links=wiring["links"], faults=list(faults or []))
    write(run_dir, new)
    return new


def write(run_dir: str, wiring: dict) -> str:
    path = os.path.join(run_dir, FILE)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(wiring, handle, indent=1)
    os.replace(tmp, path)
    return path


def load(run_dir: str) -> dict | None:
    try:
        with open(os.path.join(run_dir, FILE), encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return None


def view(wiring: dict | None, host: str) -> dict[str, dict]:
    """What one device's own ports/NICs see: {local name: {'oper', 'speed', 'peer'}}.

    ``peer`` is None when nothing is plugged in (or the link is down), else the far end:
    ``{'host', 'port'}`` for a switch port, ``{'host', 'nic', 'netdev', 'mac'}`` for a host NIC.
    Every port or NIC of the device that the inventory lists appears, cabled or not.
    """
    if not wiring:
        return {}
    info = {tuple(e["end"]): e for e in wiring["ends"]}
    out: dict[str, dict] = {}
    for end in info:
        if end[0] == host:
            out[end[2]] = {"oper": "down", "speed": None, "peer": None}
    for a, b, speed, up in wiring["links"]:
        for here, there in ((tuple(a), tuple(b)), (tuple(b), tuple(a))):
            if here[0] != host:
                continue
            if not up:
                out[here[2]] = {"oper": "down", "speed": None, "peer": None}
                continue
            far = info.get(there, {})
            peer = {"host": there[0], there[1]: there[2]}
            if there[1] == "nic":
                peer.update({"netdev": far.get("netdev"), "mac": far.get("mac")})
            out[here[2]] = {"oper": "up", "speed": speed, "peer": peer}
    return out


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print("usage: wiring.py RUN_DIR [FAULTS_JSON]", file=sys.stderr)
        return 2
    try:
        refault(argv[0], json.loads(argv[1]) if len(argv) == 2 else [])
    except WiringError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
