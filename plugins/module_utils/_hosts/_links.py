# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""host_links: what a GPU host's RDMA NICs see on their cables (pure; the module hands in a file
reader and a command runner).

Per NIC (``{name, netdev}``) one end in the shape of CABLING.md:
``{oper, speed, width, neighbors: [...], self: {netdev, mac}}``.

- oper/speed/mac of an Ethernet (RoCE) NIC: sysfs ``/sys/class/net/<netdev>/{operstate,speed,address}``
  (Linux Documentation/ABI/testing/sysfs-class-net: operstate is the RFC 2863 state, speed in Mb/s).
- An InfiniBand-link NIC (``/sys/class/infiniband/<dev>/ports/1/link_layer`` = ``InfiniBand``):
  ``ports/1/state`` (``"4: ACTIVE"``) and ``ports/1/rate`` (``"400 Gb/sec (4X NDR)"``), the text of
  drivers/infiniband/core/sysfs.c state_show/rate_show (``"%d%s Gb/sec (%dX%s)"``).
- LLDP as the host's agent heard it: lldpd ``lldpctl -f json`` (both its forms, see parse_lldpctl_json)
  or lldpad ``lldptool -t -n -i <netdev>`` (parse_lldptool). Firmware LLDP on ConnectX
  (mlxconfig ``LLDP_NB_*``) has no readable neighbour table we found a source for: not read (docs/hosts.md).

Every parser refuses output it does not know, naming the tool and the form it expected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

LLDP_CHOICES = ("auto", "lldpd", "lldptool", "none")
PORT = 1  # a ConnectX RDMA device per port: port 1 (as _nic.PORT)

Runner = Callable[[list], "tuple[int, str, str]"]
Reader = Callable[[str], "str | None"]

# RFC 2863 ifOperStatus names as /sys/class/net/<if>/operstate prints them (sysfs-class-net ABI).
_OPERSTATES = {"up": "up", "down": "down", "lowerlayerdown": "down", "notpresent": "down", "dormant": "down", "testing": "down", "unknown": None}
# drivers/infiniband/core/sysfs.c state_show: "%d: %s" of ib_port_state_str.
_IB_STATES = {"NOP": None, "DOWN": "down", "INIT": "down", "ARMED": "down", "ACTIVE": "up", "ACTIVE_DEFER": "up"}
_IB_STATE_RE = re.compile(r"^(\d+): ([A-Z_]+)$")
_IB_RATE_RE = re.compile(r"^(\d+)(\.5)? Gb/sec \((\d+)X(?: ([A-Z0-9]+))?\)$")
_MAC_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")  # an Ethernet MAC; an IPoIB address (20 bytes) is none


class HostLinksError(ValueError):
    """Bad input or output no parser knows; the message names the NIC, tool and form."""


def gig(value: float) -> str:
    """400.0 -> '400G'; 2.5 -> '2.5G' (the CABLING.md speed text)."""
    return "%dG" % value if value == int(value) else "%gG" % value


# ---------------------------------------------------------------------------
# sysfs
# ---------------------------------------------------------------------------


def parse_operstate(text: str | None, netdev: str) -> str | None:
    if text is None:
        return None
    state = text.strip()
    if state not in _OPERSTATES:
        raise HostLinksError(f"/sys/class/net/{netdev}/operstate: {state!r} is not an RFC 2863 state (up, down, lowerlayerdown, dormant, ...)")
    return _OPERSTATES[state]


def parse_net_speed(text: str | None, netdev: str) -> str | None:
    """sysfs speed in Mb/s; -1 (SPEED_UNKNOWN) or unreadable (EINVAL while the link is down) -> None."""
    if text is None:
        return None
    value = text.strip()
    if not re.fullmatch(r"-?\d+", value):
        raise HostLinksError(f"/sys/class/net/{netdev}/speed: {value!r} is not a speed in Mb/s")
    mbps = int(value)
    if mbps <= 0 or mbps == 0xFFFFFFFF:
        return None
    return gig(mbps / 1000)


def parse_ib_state(text: str | None, dev: str) -> str | None:
    if text is None:
        return None
    match = _IB_STATE_RE.match(text.strip())
    if not match or match.group(2) not in _IB_STATES:
        raise HostLinksError(f"/sys/class/infiniband/{dev}/ports/{PORT}/state: {text.strip()!r} is not '<n>: <STATE>' (e.g. '4: ACTIVE')")
    return _IB_STATES[match.group(2)]


def parse_ib_rate(text: str | None, dev: str) -> tuple[str | None, str | None]:
    """'400 Gb/sec (4X NDR)' -> ('400G', '4X')."""
    if text is None:
        return None, None
    match = _IB_RATE_RE.match(text.strip())
    if not match:
        raise HostLinksError(f"/sys/class/infiniband/{dev}/ports/{PORT}/rate: {text.strip()!r} is not '<n> Gb/sec (<w>X <SPEED>)' (e.g. '400 Gb/sec (4X NDR)')")
    rate = int(match.group(1)) + (0.5 if match.group(2) else 0)
    return gig(rate), "%sX" % match.group(3)


def parse_mac(text: str | None) -> str | None:
    if text is None:
        return None
    mac = text.strip().lower()
    return mac if _MAC_RE.match(mac) else None


# ---------------------------------------------------------------------------
# lldpd: lldpctl -f json / -f json0
# ---------------------------------------------------------------------------


def _neighbor(system: Any, chassis_id: Any, port_id: Any, port_subtype: Any, port_descr: Any) -> dict[str, Any]:
    def text(value: Any) -> str | None:
        return value if isinstance(value, str) and value != "" else None

    return {"system": text(system), "port": text(port_id), "port_id_subtype": text(port_subtype),
            "port_descr": text(port_descr), "chassis_id": text(chassis_id)}


_JSON_FORM = ("lldpctl -f json: {'lldp': {'interface': {IF: {...}} or [{IF: {...}}, ...]}} (lldpd >= 0.9.2),"
              " or -f json0 {'lldp': [{'interface': [{'name': IF, ...}]}]}")


def _refuse(why: str) -> HostLinksError:
    return HostLinksError(f"{why}; expected {_JSON_FORM}")


def _json0_value(node: Any, key: str) -> Any:
    """json0: every leaf is [{'value': ...}] (or [{'type':..., 'value':...}] for id)."""
    items = node.get(key) if isinstance(node, dict) else None
    if items is None:
        return None
    if not isinstance(items, list) or not items or not isinstance(items[0], dict):
        raise _refuse(f"json0 {key!r} is {items!r}, not a list of objects")
    return items[0]


def _from_json0(lldp: list) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for block in lldp:
        if not isinstance(block, dict):
            raise _refuse(f"json0 'lldp' holds {block!r}, not objects")
        interfaces = block.get("interface", [])
        if not isinstance(interfaces, list):
            raise _refuse("json0 'interface' is not a list")
        for entry in interfaces:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise _refuse(f"json0 interface entry without a name: {str(entry)[:80]}")
            chassis = _json0_value(entry, "chassis") or {}
            port = _json0_value(entry, "port") or {}
            chassis_id = _json0_value(chassis, "id") or {}
            port_id = _json0_value(port, "id") or {}
            name = _json0_value(chassis, "name") or {}
            descr = _json0_value(port, "descr") or {}
            out.setdefault(entry["name"], []).append(
                _neighbor(name.get("value"), chassis_id.get("value"), port_id.get("value"), port_id.get("type"), descr.get("value")))
    return out


def _json_chassis(chassis: Any, ifname: str) -> tuple[Any, dict]:
    """json form: {'<SysName>': {id, descr, ...}} or, when the neighbour sent no system name, {id, descr, ...}."""
    if not isinstance(chassis, dict):
        raise _refuse(f"interface {ifname}: 'chassis' is {chassis!r}")
    if isinstance(chassis.get("id"), dict) and "value" in chassis["id"]:
        return None, chassis
    if len(chassis) == 1:
        name, body = next(iter(chassis.items()))
        if isinstance(body, dict):
            return name, body
    raise _refuse(f"interface {ifname}: 'chassis' has neither an 'id' nor one system name ({', '.join(map(str, chassis))})")


def _from_json(lldp: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    unknown = set(lldp) - {"interface"}
    if unknown:
        raise _refuse(f"'lldp' has {', '.join(sorted(unknown))}")
    interfaces = lldp.get("interface", [])
    # One interface (one neighbour): an object; several: a list of one-key objects (json_writer.c cleanup).
    entries = interfaces if isinstance(interfaces, list) else [interfaces]
    for entry in entries:
        if not isinstance(entry, dict):
            raise _refuse(f"'interface' holds {entry!r}")
        for ifname, body in entry.items():
            if not isinstance(body, dict) or not ({"chassis", "port", "via"} & set(body)):
                raise _refuse(f"interface {ifname}: {str(body)[:80]} has no chassis/port")
            system, chassis = _json_chassis(body.get("chassis", {}), ifname)
            port = body.get("port", {})
            if not isinstance(port, dict):
                raise _refuse(f"interface {ifname}: 'port' is {port!r}")
            chassis_id = chassis.get("id") if isinstance(chassis.get("id"), dict) else {}
            port_id = port.get("id") if isinstance(port.get("id"), dict) else {}
            out.setdefault(ifname, []).append(_neighbor(system, chassis_id.get("value"), port_id.get("value"), port_id.get("type"), port.get("descr")))
    return out


def parse_lldpctl_json(text: str) -> dict[str, list[dict]]:
    """{interface: [neighbour, ...]} from ``lldpctl -f json`` or ``-f json0``.

    json (lldpd src/client/json_writer.c, json_element_cleanup): a one-element array becomes its
    element and an object with a ``name`` becomes ``{name: object}``, so one interface is an object
    and several a list; a chassis with a system name is ``{SysName: {...}}``, without one ``{id: ...}``.
    json0 (lldpcli(8): "the structure of the JSON object is not affected by the number of interfaces
    or the number of neighbors"): lists everywhere, ``name`` a key. No neighbour: ``{"lldp": {}}`` / ``[{}]``.
    Several neighbours on one interface: that interface appears once per neighbour.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _refuse(f"output is not JSON ({exc}): {text.strip()[:80]!r}") from None
    if not isinstance(data, dict) or set(data) != {"lldp"}:
        raise _refuse(f"top level is {str(data)[:80]!r}, not {{'lldp': ...}}")
    lldp = data["lldp"]
    if isinstance(lldp, list):
        return _from_json0(lldp)
    if isinstance(lldp, dict):
        return _from_json(lldp)
    raise _refuse(f"'lldp' is {lldp!r}")


# ---------------------------------------------------------------------------
# lldpad: lldptool -t -n -i IF
# ---------------------------------------------------------------------------

# intel/openlldp lldp_mand_clif.c print_chassis_id / print_port_id: "<prefix>: <value>".
_PORT_ID_FORMS = (
    ("MAC: ", "mac"), ("IPv4: ", "ip"), ("IPv6: ", "ip"), ("Interface Alias: ", "ifalias"), ("Port Component: ", "port"),
    ("Ifname: ", "ifname"), ("Local: ", "local"), ("Agent Circuit ID: ", "agentcid"),
)
_CHASSIS_ID_FORMS = (
    ("MAC: ", "mac"), ("IPv4: ", "ip"), ("IPv6: ", "ip"), ("Chassis Component: ", "chassis"), ("IfAlias: ", "ifalias"),
    ("Port Component: ", "port"), ("Ifname: ", "ifname"), ("Local: ", "local"),
)
# lldptool_cmds.c print_cmd_response: "<print_status(status)> <ifname>" when the command did not succeed.
_LLDPTOOL_ERRORS = ("Device not found or inactive", "Agent instance for device not found", "Invalid command", "Invalid parameters",
                    "Failed", "Command not applicable", "Access denied", "TLV does not support agent type")
_LLDPTOOL_FORM = "lldptool -t -n -i IF: TLV name lines ('Chassis ID TLV' first) each followed by a tab-indented value, or nothing (no neighbour)"


def _id_value(line: str, forms: tuple, what: str, netdev: str) -> tuple[str, str]:
    for prefix, subtype in forms:
        if line.startswith(prefix):
            return line[len(prefix):].strip(), subtype
    raise HostLinksError(f"lldptool -t -n -i {netdev}: {what} {line!r} is not one of {', '.join(p.strip() for p, _s in forms)}; expected {_LLDPTOOL_FORM}")


def parse_lldptool(text: str, netdev: str) -> list[dict]:
    """The neighbour (at most one: lldpad keeps one received LLDPDU per agent, lldp/ports.c) of ``lldptool -t -n -i IF``."""
    lines = [line.rstrip("\n") for line in text.splitlines() if line.strip()]
    if not lines:
        return []  # get_neighbor_tlvs: no frame received -> success with no TLV (lldp/ports.c)
    first = lines[0].strip()
    for error in _LLDPTOOL_ERRORS:
        if first.startswith(error):
            raise HostLinksError(f"lldptool -t -n -i {netdev}: {first}")
    tlvs: list[tuple[str, list[str]]] = []
    for line in lines:
        if line[0] in " \t":
            if not tlvs:
                raise HostLinksError(f"lldptool -t -n -i {netdev}: value {line.strip()!r} before any TLV name; expected {_LLDPTOOL_FORM}")
            tlvs[-1][1].append(line.strip())
        else:
            tlvs.append((line.strip(), []))
    if tlvs[0][0] != "Chassis ID TLV":
        raise HostLinksError(f"lldptool -t -n -i {netdev}: starts with {tlvs[0][0]!r}, not 'Chassis ID TLV'; expected {_LLDPTOOL_FORM}")
    found: dict[str, list[str]] = {}
    for name, values in tlvs:
        found.setdefault(name, values)
    if "Port ID TLV" not in found or not found["Port ID TLV"] or not found["Chassis ID TLV"]:
        raise HostLinksError(f"lldptool -t -n -i {netdev}: no Chassis ID or Port ID value; expected {_LLDPTOOL_FORM}")
    chassis_id, _csub = _id_value(found["Chassis ID TLV"][0], _CHASSIS_ID_FORMS, "Chassis ID", netdev)
    port_id, port_sub = _id_value(found["Port ID TLV"][0], _PORT_ID_FORMS, "Port ID", netdev)
    system = (found.get("System Name TLV") or [None])[0]
    descr = (found.get("Port Description TLV") or [None])[0]
    return [_neighbor(system, chassis_id, port_id, port_sub, descr)]


# ---------------------------------------------------------------------------
# The task
# ---------------------------------------------------------------------------


def validate_nics(nics: Any) -> list[dict[str, str]]:
    """nics: [{name, netdev}]; names and netdevs are plain interface names (they reach argv and paths)."""
    if not isinstance(nics, list) or not nics:
        raise HostLinksError(f"nics: {nics!r} is not a non-empty list of {{name, netdev}}")
    out, seen = [], set()
    for index, nic in enumerate(nics):
        if not isinstance(nic, dict) or not nic.get("name"):
            raise HostLinksError(f"nics[{index}]: {nic!r} needs a name (the RDMA device, e.g. mlx5_0)")
        for key in ("name", "netdev"):
            value = nic.get(key)
            if value is not None and (not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_.:@-]{1,64}", value) or value in (".", "..")):
                raise HostLinksError(f"nics[{index}].{key}: {value!r} is not a device name")
        if nic["name"] in seen:
            raise HostLinksError(f"nics[{index}].name: {nic['name']!r} is listed twice")
        seen.add(nic["name"])
        out.append({"name": nic["name"], "netdev": nic.get("netdev")})
    return out


def _netdev_of(read_dir: Callable[[str], list], nic: dict) -> str | None:
    if nic.get("netdev"):
        return nic["netdev"]
    found = read_dir(f"/sys/class/infiniband/{nic['name']}/device/net")
    return found[0] if found else None


def read_end(nic: dict, read: Reader, read_dir: Callable[[str], list]) -> dict[str, Any]:
    """One NIC's oper, speed, width and self from sysfs (no LLDP)."""
    name = nic["name"]
    netdev = _netdev_of(read_dir, nic)
    link_layer = read(f"/sys/class/infiniband/{name}/ports/{PORT}/link_layer")
    end: dict[str, Any] = {"oper": None, "speed": None, "width": None, "neighbors": [], "self": {"netdev": netdev, "mac": None}}
    if link_layer is not None and link_layer.strip() == "InfiniBand":
        end["oper"] = parse_ib_state(read(f"/sys/class/infiniband/{name}/ports/{PORT}/state"), name)
        speed, width = parse_ib_rate(read(f"/sys/class/infiniband/{name}/ports/{PORT}/rate"), name)
        end["speed"], end["width"] = (speed, width) if end["oper"] == "up" else (None, None)
    elif netdev:
        end["oper"] = parse_operstate(read(f"/sys/class/net/{netdev}/operstate"), netdev)
        end["speed"] = parse_net_speed(read(f"/sys/class/net/{netdev}/speed"), netdev) if end["oper"] == "up" else None
    if netdev:
        end["self"]["mac"] = parse_mac(read(f"/sys/class/net/{netdev}/address"))
    return end


def lldp_source(choice: str, which: Callable[[str], Any]) -> str:
    if choice not in LLDP_CHOICES:
        raise HostLinksError(f"lldp: {choice!r} is not one of {', '.join(LLDP_CHOICES)}")
    if choice != "auto":
        return choice
    if which("lldpctl"):
        return "lldpd"
    if which("lldptool"):
        return "lldptool"
    return "none"


def run_host_links(params: dict, read: Reader, read_dir: Callable[[str], list], run: Runner, which: Callable[[str], Any]) -> dict[str, Any]:
    """The module's result: {changed: False, ends, lldp_source, commands}.

    LLDP is asked first and sysfs read after it, so link state is never older than the neighbours.
    """
    nics = validate_nics(params.get("nics"))
    source = lldp_source(params.get("lldp") or "auto", which)
    netdevs = {nic["name"]: _netdev_of(read_dir, nic) for nic in nics}
    heard: dict[str, list] = {}
    commands: list[str] = []
    # LLDP is an Ethernet protocol: an InfiniBand-link port (its netdev is IPoIB) is not asked.
    ib = {name for name in netdevs if (read(f"/sys/class/infiniband/{name}/ports/{PORT}/link_layer") or "").strip() == "InfiniBand"}
    wanted = sorted({netdev for name, netdev in netdevs.items() if netdev and name not in ib})
    if source == "lldpd" and wanted:
        argv = ["lldpctl", "-f", "json", *wanted]
        commands.append(" ".join(argv))
        rc, out, err = run(argv)
        if rc != 0:
            raise HostLinksError(f"{' '.join(argv)} failed (rc {rc}): {(err or out).strip()}")
        heard = parse_lldpctl_json(out)
    elif source == "lldptool":
        for netdev in wanted:
            argv = ["lldptool", "-t", "-n", "-i", netdev]
            commands.append(" ".join(argv))
            rc, out, err = run(argv)
            if rc != 0:
                raise HostLinksError(f"{' '.join(argv)} failed (rc {rc}): {(err or out).strip()}")
            heard[netdev] = parse_lldptool(out, netdev)
    ends = {}
    for nic in nics:
        end = read_end(dict(nic, netdev=netdevs[nic["name"]]), read, read_dir)
        end["neighbors"] = heard.get(netdevs[nic["name"]], []) if netdevs[nic["name"]] else []
        ends[nic["name"]] = end
    return {"changed": False, "ends": ends, "lldp_source": source, "commands": commands}
