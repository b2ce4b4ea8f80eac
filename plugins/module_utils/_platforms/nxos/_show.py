# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Cisco NX-OS show-command readers for links and counters: pure functions, no netmiko.

The NX-OS driver (_platforms/nxos/_driver.py) delegates its static methods to these, with the same names
and signatures as _base.Driver's:

    link_commands(ports)      show lldp neighbors detail, show interface status
    parse_links(outputs)      -> ends (the _base links shape); LinkFormError on a form not read
    counter_commands(ports)   show interface priority-flow-control detail, show queuing interface <port> per port
    parse_counters(outputs)   -> ({port: counters} in the _counters shape, {command: error})

Every form read is a real published NX-OS output (tests/unit/plugins/module_utils/_platforms/
fixtures/nxos/SOURCES.md; docs/vendor-nxos.md). What NX-OS does not print is left out of a port's
counters, so the snapshot lists it in not_available (never a 0): NX-OS prints no ECN-marked count
(ecn_marked, ecn_marked_total), no WRED-only drop count (its 'WRED/AFD & Tail Drop Pkts' is the
queue's drops: queue_drops), no watchdog storm count in these commands.

Interface names are printed 'Ethernet1/1' and, abbreviated, 'Eth1/1': both are reported as
'Ethernet1/1' (the configuration's and the plan's spelling); other interfaces keep their name.
"""

from __future__ import annotations

import re

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _vendor as _vendor_nxos

PLATFORM = _vendor_nxos.PLATFORM
_PORT_RE = re.compile(_vendor_nxos.INTERFACE_PATTERN, re.ASCII)
_ETH_RE = re.compile(r"(?:%s|Ethernet)([0-9]+/[0-9]+(?:/[0-9]+)?)" % "|".join(_vendor_nxos.ETHERNET_ABBREVIATIONS), re.ASCII | re.IGNORECASE)

LLDP = "show lldp neighbors detail"
STATUS = "show interface status"
LINK_COMMANDS = (LLDP, STATUS)

PFC_DETAIL = "show interface priority-flow-control detail"
PFC_SUMMARY = "show interface priority-flow-control"
QUEUING = "show queuing interface %s"
_QUEUING_RE = re.compile(r"show queuing interface (\S+)", re.ASCII)


def canonical(name: str) -> str:
    """'Eth1/1', 'Ethernet1/1' -> 'Ethernet1/1'; any other interface name as printed."""
    match = _ETH_RE.fullmatch(name.strip())
    return "Ethernet" + match.group(1) if match else name.strip()


def _lines(text: str | None) -> list[str]:
    return (text or "").replace("\r", "").split("\n")


# ---------------------------------------------------------------------------
# links
# ---------------------------------------------------------------------------


def link_commands(ports: list[str] | None = None) -> list[str]:
    """Both commands show every port; parse_links reports them all."""
    return list(LINK_COMMANDS)


# 'show interface status' header (ntc-templates/genieparser captures), and a row: Port, Name (free text,
# '--' for none, may run into the next column), Status, Vlan, Duplex, Speed, Type (may be empty or hold spaces).
_STATUS_HEADER = re.compile(r"\s*Port\s+Name\s+Status\s+Vlan\s+Duplex\s+Speed\s+Type\s*")
_STATUS_ROW = re.compile(
    r"(?P<port>\S+)\s+(?:(?P<name>.*?)\s+)??(?P<status>\S+)\s+(?P<vlan>\S+)\s+(?P<duplex>full|half|auto)\s+(?P<speed>\S+)(?:\s+(?P<type>.*?))?\s*"
)
_DASHES = re.compile(r"\s*-{10,}\s*")
_OTHER_HEADER = re.compile(r"\s*Interface\s+Name\s+Status\s+Reason\b.*")  # the tunnel table (ntc 'tunnel' capture)


def _speed(cell: str) -> str | None:
    """'100G', 'a-10G' -> '100G'/'10G'; plain numbers are Mb/s ('1000' -> '1G', '100' -> None); 'auto' -> None."""
    cell = cell.strip()
    plain = re.fullmatch(r"(?:a-)?([0-9]+)", cell)
    return _base.speed_g("%sM" % plain.group(1)) if plain else _base.speed_g(cell)


def _interface_status(text: str) -> dict[str, dict]:
    ends: dict[str, dict] = {}
    seen = False
    inside = False
    expected = "the table under 'Port  Name  Status  Vlan  Duplex  Speed  Type'"
    for line in _lines(text):
        if _STATUS_HEADER.fullmatch(line):
            seen = inside = True
            continue
        if not line.strip() or _OTHER_HEADER.fullmatch(line):
            inside = False
            continue
        if _DASHES.fullmatch(line) or not inside:
            continue
        row = _STATUS_ROW.fullmatch(line)
        if not row:
            raise _base.LinkFormError(PLATFORM, STATUS, expected + " (a row it does not read: %r)" % line.strip())
        status = row.group("status")
        oper = "up" if status in _vendor_nxos.STATUS_UP else "down" if status in _vendor_nxos.STATUS_DOWN else None
        ends[canonical(row.group("port"))] = _base.end(oper, _speed(row.group("speed")) if oper == "up" else None)
    if not seen:
        raise _base.LinkFormError(PLATFORM, STATUS, expected, text)
    return ends


# 'show lldp neighbors detail': one block per neighbour, 'Chassis id:' first; 'null' and 'not advertised'
# are how NX-OS prints a TLV the neighbour did not send (fixtures/nxos: genieparser/ntc captures).
_LLDP_FIELD = re.compile(r"\s*(Chassis id|Port id|Local Port id|Port Description|System Name|Total entries displayed):\s*(.*?)\s*")
_LLDP_HEADER = re.compile(r"\s*Capability codes:\s*")
_NOT_SENT = ("null", "not advertised")


def _lldp_value(value: str | None) -> str | None:
    return None if value is None or value.strip().lower() in _NOT_SENT else value


def _lldp(text: str) -> list[tuple[str, dict]]:
    expected = "'Chassis id:' blocks with 'Local Port id:' (after the 'Capability codes:' header)"
    blocks: list[dict[str, str]] = []
    header = False
    total = None
    for line in _lines(text):
        if _LLDP_HEADER.fullmatch(line):
            header = True
            continue
        field = _LLDP_FIELD.fullmatch(line)
        if not field:
            continue
        key, value = field.group(1), field.group(2)
        if key == "Total entries displayed":
            if not value.isdigit():
                raise _base.LinkFormError(PLATFORM, LLDP, expected, line)
            total = int(value)
        elif key == "Chassis id":
            blocks.append({key: value})
        elif not blocks:
            raise _base.LinkFormError(PLATFORM, LLDP, expected + " (%r before any 'Chassis id:')" % line.strip(), text)
        else:
            blocks[-1][key] = value
    if not header and not blocks and total is None:
        raise _base.LinkFormError(PLATFORM, LLDP, expected, text)
    if total is not None and total != len(blocks):
        raise _base.LinkFormError(PLATFORM, LLDP, expected + " (it says %d entries and shows %d: cut short?)" % (total, len(blocks)), text)
    found = []
    for block in blocks:
        local = block.get("Local Port id")
        if not local:
            raise _base.LinkFormError(PLATFORM, LLDP, expected + " (a neighbour without 'Local Port id:': cut short?)", text)
        # NX-OS prints the port ID without its subtype: port_id_subtype stays None.
        found.append((canonical(local), _base.neighbor(
            _lldp_value(block.get("System Name")), _lldp_value(block.get("Port id")), None,
            _lldp_value(block.get("Port Description")), _lldp_value(block.get("Chassis id")))))
    return found


def parse_links(outputs: dict[str, str]) -> dict:
    """{command: output} of link_commands -> ends. The status table gives every port's oper state and
    speed (speed only when up); LLDP adds the neighbours. LinkFormError for a form not read."""
    ends: dict[str, dict] = {}
    if STATUS in outputs:
        ends = _interface_status(outputs[STATUS])
    if LLDP not in outputs:
        raise _base.LinkFormError(PLATFORM, LLDP, "its output (the command was not run)")
    for port, neighbor in _lldp(outputs[LLDP]):
        ends.setdefault(port, _base.end())["neighbors"].append(neighbor)
    return ends


# ---------------------------------------------------------------------------
# counters
# ---------------------------------------------------------------------------


def counter_commands(ports: list[str] | None = None) -> list[str]:
    """The PFC detail (every port at once) and one 'show queuing interface <port>' per port: the queue
    counters are shown per interface, so the ports must be given."""
    if not ports:
        raise ValueError("ports: NX-OS shows queue counters per interface ('show queuing interface <port>'); give the ports (or lossless_fabric_device.ports)")
    for name in ports:
        if not isinstance(name, str) or not _PORT_RE.fullmatch(name):
            raise ValueError("ports: %r is not an NX-OS Ethernet interface name (%s)" % (name, _vendor_nxos.INTERFACE_EXAMPLE))
    return [PFC_DETAIL] + [QUEUING % name for name in ports]


def _merge(ports: dict[str, dict], found: dict[str, dict], fill_only: bool = False) -> None:
    for port, values in found.items():
        slot = ports.setdefault(port, {})
        for key, value in values.items():
            if isinstance(value, dict):
                target = slot.setdefault(key, {})
                for index, number in value.items():
                    if not fill_only or index not in target:
                        target[index] = number
            elif not fill_only or key not in slot:
                slot[key] = value


def parse_counters(outputs: dict[str, str]) -> tuple[dict[str, dict], dict[str, str]]:
    """{command: output} -> ({port: counters}, {command: what is wrong with its output}).
    The PFC per-priority counts come from 'show interface priority-flow-control detail' (the summary
    form gives only totals); 'show queuing interface <port>' gives the queue drops per qos-group and,
    where the PFC command gave none for that port, its 'PFC Statistics' per-CoS counts."""
    ports: dict[str, dict] = {}
    errors: dict[str, str] = {}
    later: list[tuple[str, dict[str, dict]]] = []
    for command, text in outputs.items():
        plain = " ".join(command.split())
        queuing = _QUEUING_RE.fullmatch(plain)
        try:
            if plain == PFC_DETAIL:
                _merge(ports, _pfc_detail(text or ""))
            elif plain == PFC_SUMMARY:
                _merge(ports, _pfc_summary(text or ""))
            elif queuing:
                later.append((command, {canonical(queuing.group(1)): _queuing(text or "", command, canonical(queuing.group(1)))}))
            else:
                errors[command] = "nxos: not a counter command this parser reads (%s, %s, %s)" % (PFC_DETAIL, PFC_SUMMARY, QUEUING % "<port>")
        except ValueError as exc:
            errors[command] = "%s; got: %s" % (exc, " ".join((text or "(no output)").split())[:200])
    for _command, found in later:
        # the PFC command's per-priority counts win; the queuing command's PFC table only fills what it lacks
        _merge(ports, found, fill_only=True)
    return ports, errors


def _int(cell: str) -> int:
    return int(cell.replace(",", "").strip())


# 'show interface priority-flow-control detail' (fixtures/nxos: Nexus 93180FX2): per interface
#   Ethernet1/51 / Admin Mode: On / Oper Mode: On / VL bitmap: (20) / Total Rx PFC Frames: 0 / Total Tx PFC Frames: 150
#   |  Priority0  | ... |  Priority7  |  then  Rx  |n |n ...  and  Tx  |n |n ...
_PFC_PORT = re.compile(r"(\S+)\s*")
_PFC_FIELD = re.compile(r"\s+(Admin Mode|Oper Mode|VL bitmap|Total Rx PFC Frames|Total Tx PFC Frames):\s*(.*?)\s*")
_PFC_PRIORITIES = re.compile(r"\s*\|\s*Priority0\s*\|(?:\s*Priority[1-7]\s*\|){7}\s*")
_PFC_ROW = re.compile(r"\s*(Rx|Tx)\s*\|(.*)")


def _pfc_detail(text: str) -> dict[str, dict]:
    expected = ("nxos: %r: expected per-interface blocks ('Ethernet1/1', 'Admin Mode:', ..., the 'Priority0..7' table "
                "with an 'Rx' and a 'Tx' row)" % PFC_DETAIL)
    found: dict[str, dict] = {}
    port = None
    header = False
    for line in _lines(text):
        if not line.strip() or _DASHES.fullmatch(line):
            continue
        if _PFC_FIELD.fullmatch(line):
            if port is None:
                raise ValueError(expected + " (a field before any interface line)")
            continue
        if _PFC_PRIORITIES.fullmatch(line):
            if port is None:
                raise ValueError(expected + " (the priority table before any interface line)")
            header = True
            continue
        row = _PFC_ROW.fullmatch(line)
        if row:
            cells = [cell.strip() for cell in row.group(2).split("|")]
            if port is None or not header or len(cells) != 8 or not all(re.fullmatch(r"[0-9]+", cell) for cell in cells):
                raise ValueError(expected + " (a row it does not read: %r)" % line.strip())
            key = "pfc_rx_frames" if row.group(1) == "Rx" else "pfc_tx_frames"
            found[port][key] = {str(p): int(cell) for p, cell in enumerate(cells)}
            continue
        name = _PFC_PORT.fullmatch(line)
        if name and not line[:1].isspace():
            _complete(found, port, expected)
            port, header = canonical(name.group(1)), False
            found[port] = {}
            continue
        raise ValueError(expected + " (a line it does not read: %r)" % line.strip())
    if not found:
        raise ValueError(expected)
    _complete(found, port, expected)
    return found


def _complete(found: dict[str, dict], port: str | None, expected: str) -> None:
    if port is not None and set(found[port]) != {"pfc_rx_frames", "pfc_tx_frames"}:
        raise ValueError(expected + " (%s has no %s row: cut short?)" % (port, "Rx" if "pfc_rx_frames" not in found[port] else "Tx"))


# 'show interface priority-flow-control' (fixtures/nxos: UCS FI NX-OS, Nexus 5000): between '=' rules
#   Port               Mode Oper(VL bmap)  RxPPP      TxPPP
#   Ethernet1/1/1      Auto On  (8)       0          0
_PFC_SUMMARY_HEADER = re.compile(r"\s*Port\s+Mode\s+Oper\(VL bmap\)\s+RxPPP\s+TxPPP\s*")
_PFC_SUMMARY_ROW = re.compile(r"(\S+)\s+(Auto|On|Off)\s+(On|Off)(?:\s*\(\s*[0-9A-Fa-fx]+\s*\))?\s+([0-9]+)\s+([0-9]+)\s*", re.IGNORECASE)


def _pfc_summary(text: str) -> dict[str, dict]:
    expected = "nxos: %r: expected the table under 'Port  Mode Oper(VL bmap)  RxPPP  TxPPP'" % PFC_SUMMARY
    found: dict[str, dict] = {}
    inside = False
    for line in _lines(text):
        if _PFC_SUMMARY_HEADER.fullmatch(line):
            inside = True
            continue
        if not inside or not line.strip() or re.fullmatch(r"\s*=+\s*", line):
            continue
        row = _PFC_SUMMARY_ROW.fullmatch(line)
        if not row:
            raise ValueError(expected + " (a row it does not read: %r)" % line.strip())
        # RxPPP / TxPPP: PFC frames of all priorities together (no per-priority split in this form)
        found[canonical(row.group(1))] = {"pfc_rx_frames_total": int(row.group(4)), "pfc_tx_frames_total": int(row.group(5))}
    if not inside:
        raise ValueError(expected)
    return found


# 'show queuing interface <port>' (fixtures/nxos: Nexus 93180FX2): egress 'QOS GROUP <n>' tables
#   |                   Tx Pkts |       202328436|               0|        (Unicast | Multicast)
#   |                   Tx Byts |    203884632744|               0|
#   | WRED/AFD & Tail Drop Pkts |               0|               0|        ('WRED & Tail Drop Pkts' before cloud-scale: unverified)
# and the ingress 'PFC Statistics' table
#   PFC_COS QOS_Group   TxPause             TxCount   RxPause             RxCount
#         5         5  Inactive                 150  Inactive                   0
_QOS_GROUP = re.compile(r"\|\s*QOS GROUP ([0-7])\s*\|")
_OTHER_GROUP = re.compile(r"\|\s*[A-Z]+ QOS GROUP\s*\|")  # CONTROL / SPAN QOS GROUP: not a plan queue
_QUEUE_ROW = re.compile(r"\|\s*([^|]*?)\s*\|\s*([0-9]+)\s*\|\s*([0-9]+)\s*\|")
_QUEUE_COLUMNS = re.compile(r"\|\s*\|\s*Unicast\s*\|\s*Multicast\s*\|")
_DROP_LABELS = ("WRED/AFD & Tail Drop Pkts", "WRED & Tail Drop Pkts")
# 'Tx Pkts' / 'Tx Byts' rows of each egress QOS GROUP table (fixtures/nxos show_queuing_interface_e1_51_qos_group_5.txt,
# a Nexus 93180FX2 in a public article: fixtures/nxos/SOURCES.md)
_TX_LABELS = {"Tx Pkts": "queue_tx_packets", "Tx Byts": "queue_tx_bytes"}
_FOR_PORT = re.compile(r"\s*(?:Egress|Ingress) Queuing for (\S+?)(?:\s+\[\w+\])?\s*")
_PFC_STATS = re.compile(r"\s*PFC Statistics\s*")
_PFC_STATS_HEADER = re.compile(r"\s*PFC_COS\s+QOS_Group\s+TxPause\s+TxCount\s+RxPause\s+RxCount\s*")
_PFC_STATS_ROW = re.compile(r"\s*([0-7])\s+(\S+)\s+(Active|Inactive)\s+([0-9]+)\s+(Active|Inactive)\s+([0-9]+)\s*")


def _queuing(text: str, command: str, port: str) -> dict:
    expected = ("nxos: %r: expected the egress 'QOS GROUP <n>' tables ('Tx Pkts', 'WRED/AFD & Tail Drop Pkts') "
                "or the ingress 'PFC Statistics' table ('PFC_COS QOS_Group TxPause TxCount RxPause RxCount')" % command)
    counters: dict[str, dict] = {}
    group = None
    groups = 0
    pfc = None  # None: no PFC table; 'header': expecting its header; 'rows': inside
    for line in _lines(text):
        stripped = line.strip()
        for_port = _FOR_PORT.fullmatch(line)
        if for_port:
            if canonical(for_port.group(1)) != port:
                raise ValueError(expected + " (it shows %s, not %s)" % (for_port.group(1), port))
            continue
        if pfc == "header":
            if _DASHES.fullmatch(line) or stripped.startswith("TxPPP:"):
                continue
            if not _PFC_STATS_HEADER.fullmatch(line):
                raise ValueError(expected + " (after 'PFC Statistics': %r)" % stripped)
            pfc = "rows"
            continue
        if pfc == "rows":
            if not stripped:
                continue  # the end of the output before the closing rule is reported below (cut short)
            if _DASHES.fullmatch(line):
                pfc = "done"
                continue
            row = _PFC_STATS_ROW.fullmatch(line)
            if not row:
                raise ValueError(expected + " (a PFC row it does not read: %r)" % stripped)
            counters.setdefault("pfc_tx_frames", {})[row.group(1)] = int(row.group(4))
            counters.setdefault("pfc_rx_frames", {})[row.group(1)] = int(row.group(6))
            continue
        if _PFC_STATS.fullmatch(line):
            pfc = "header"
            continue
        if _QOS_GROUP.fullmatch(stripped):
            group = _QOS_GROUP.fullmatch(stripped).group(1)
            groups += 1
            continue
        if _OTHER_GROUP.fullmatch(stripped):
            group = None
            continue
        if stripped.startswith("|") and group is not None and not _QUEUE_COLUMNS.fullmatch(stripped):
            row = _QUEUE_ROW.fullmatch(stripped)
            if not row:
                raise ValueError(expected + " (a QOS GROUP %s row it does not read: %r)" % (group, stripped))
            if row.group(1) in _DROP_LABELS:
                counters.setdefault("queue_drops", {})[group] = int(row.group(2))  # the Unicast column
            elif row.group(1) in _TX_LABELS:
                # what the qos-group's queue transmitted (the Unicast column: RoCE is unicast)
                counters.setdefault(_TX_LABELS[row.group(1)], {})[group] = int(row.group(2))
    if pfc in ("header", "rows"):
        raise ValueError(expected + " (the 'PFC Statistics' table is cut short)")
    if not groups and pfc is None:
        raise ValueError(expected)
    return counters
