# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""SONiC readers: the CONFIG_DB JSON of 'show runningconfiguration all' (the gathered shape), and the
tabulate tables of the link and counter show commands. Pure: no device; the driver (_driver.py)
runs the commands. Every command and form with its source: docs/vendor-sonic.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common._snapshot import natural as _natural
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _records
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _vendor as _vendor_sonic

_PORT_RE = re.compile(_records.SONIC.interface_pattern, re.ASCII)
COUNTER_COMMANDS = ("show pfc counters", "show queue counters", "show queue wredcounters", "show pfcwd stats")
LINK_COMMANDS = ("show lldp table", "show interfaces status")


def _ids(text: Any) -> list[int]:
    if not isinstance(text, str) or not text.strip():
        return []
    out = []
    for piece in text.split(","):
        piece = piece.strip()
        if not piece.isdigit():
            raise ValueError("sonic: %r is not a list of priorities" % text)
        out.append(int(piece))
    return sorted(set(out))


def _int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _ref(value: Any) -> str | None:
    """A reference field: 'name', or '[TABLE|name]' (the form of releases before 202111: plain names came with
    sonic-utilities PR #1626, first in 202111; the db_migrator fixtures in sonic-utilities tests/db_migrator_input
    show both)."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip().strip("[]").rsplit("|", maxsplit=1)[-1]


def _config_db(running: str) -> dict:
    """The CONFIG_DB document of 'show runningconfiguration all' (single ASIC: the tables at the top,
    plus 'bgpraw'; multi-ASIC: {'localhost': {...}, 'asic0': ...}: the host namespace is read)."""
    if not isinstance(running, str) or not running.strip():
        raise ValueError("sonic: the input is empty; expected the CONFIG_DB JSON of 'show runningconfiguration all'")
    text = running.strip()
    start = text.find("{")
    try:
        doc = json.loads(text[start:]) if start >= 0 else None
    except ValueError as exc:
        raise ValueError("sonic: not the CONFIG_DB JSON of 'show runningconfiguration all' (%s)" % exc) from None
    if isinstance(doc, dict) and isinstance(doc.get("localhost"), dict) and "PORT" not in doc:
        doc = doc["localhost"]
    if not isinstance(doc, dict) or not isinstance(doc.get("PORT"), dict):
        raise ValueError("sonic: not the CONFIG_DB JSON of 'show runningconfiguration all' (no PORT table)")
    return doc


def parse(running: str) -> dict:
    """The gathered shape from CONFIG_DB JSON ('show runningconfiguration all', or a config_db.json)."""
    doc = _config_db(running)

    def table(name: str) -> dict:
        value = doc.get(name) or {}
        return value if isinstance(value, dict) else {}

    qos = table("PORT_QOS_MAP")
    queues = table("QUEUE")
    schedulers = table("SCHEDULER")
    wred = table("WRED_PROFILE")
    pfcwd = table("PFC_WD")
    ports = table("PORT")
    interfaces: dict[str, dict] = {}
    used_maps: list[str] = []
    names = set(qos) | {key.split("|")[0] for key in queues} | set(ports)
    for name in sorted((n for n in names if _PORT_RE.fullmatch(n)), key=_natural):
        port = ports.get(name) or {}
        pq = qos.get(name) or {}
        mine = {key.split("|", 1)[1]: value for key, value in queues.items() if key.split("|")[0] == name and isinstance(value, dict)}
        if not pq and not mine and name not in pfcwd and "mtu" not in port and "description" not in port:
            continue
        dscp_map = _ref(pq.get("dscp_to_tc_map") or (qos.get("global") or {}).get("dscp_to_tc_map"))
        if dscp_map and dscp_map not in used_maps:
            used_maps.append(dscp_map)
        prios = _ids(pq.get("pfc_enable"))
        ecn: dict[str, dict] = {}
        strict: list[int] = []
        bandwidth: dict[str, int] = {}
        for qindex, entry in sorted(mine.items(), key=lambda kv: _natural(kv[0])):
            indexes = [int(q) for q in re.findall(r"\d+", qindex)]
            span = range(indexes[0], indexes[-1] + 1) if indexes else range(0)
            sched = schedulers.get(_ref(entry.get("scheduler"))) or {}
            profile = wred.get(_ref(entry.get("wred_profile"))) or {}
            for q in span:
                if sched.get("type") == "STRICT":
                    strict.append(q)
                elif sched.get("type") in ("DWRR", "WRR") and _int(sched.get("weight")) is not None:
                    bandwidth[str(q)] = int(sched["weight"])
                if profile.get("ecn") in _vendor_sonic.ECN_GREEN_MODES:
                    ecn[str(q)] = {
                        "min_threshold_bytes": _int(profile.get("green_min_threshold")),
                        "max_threshold_bytes": _int(profile.get("green_max_threshold")),
                        "max_probability_percent": _int(profile.get("green_drop_probability")),
                    }
        interfaces[name] = {
            "description": port.get("description"),
            "mtu": _int(port.get("mtu")),
            "trust": "dscp" if dscp_map else None,
            "pfc_enabled": bool(prios),
            "pfc_priorities": prios,
            "ecn": dict(sorted(ecn.items(), key=lambda kv: int(kv[0]))),
            "strict_queues": sorted(set(strict)),
            "bandwidth_percent": dict(sorted(bandwidth.items(), key=lambda kv: int(kv[0]))),
            "watchdog": isinstance(pfcwd.get(name), dict) and bool(pfcwd.get(name)),
        }
    dscp_map: dict[str, int] = {}
    maps = table("DSCP_TO_TC_MAP")
    for name in used_maps:
        for dscp, tc in (maps.get(name) or {}).items():
            if _int(dscp) is not None and _int(tc) is not None:
                dscp_map[str(int(dscp))] = int(tc)
    dscp_map = {d: tc for d, tc in sorted(dscp_map.items(), key=lambda kv: int(kv[0])) if tc != 0}
    watched = [pfcwd[name] for name in sorted(pfcwd, key=_natural) if name != "GLOBAL" and isinstance(pfcwd[name], dict) and name in interfaces]
    first = watched[0] if watched else {}
    return {
        "dscp_map": dscp_map,
        "watchdog": {
            "enabled": bool(watched),
            "detection_time_ms": _int(first.get("detection_time")),
            "restoration_time_ms": _int(first.get("restoration_time")),
            "action": first.get("action"),
        },
        "interfaces": interfaces,
        "switch_wide": None,
        "buffer_model": (table("DEVICE_METADATA").get("localhost") or {}).get("buffer_model"),
        "cable_length": dict(table("CABLE_LENGTH").get(_vendor_sonic.CABLE_LENGTH_KEY) or {}),
    }


def parse_counters(outputs: dict[str, str]) -> tuple[dict[str, dict], dict[str, str]]:
    ports: dict[str, dict] = {}
    errors: dict[str, str] = {}
    for command, text in outputs.items():
        reader = _COUNTER_READERS.get(" ".join(command.split()))
        if reader is None:
            # only what counter_commands asks for is read: output of anything else is refused, not dropped
            errors[command] = "sonic: not a counter command this driver reads (%s)" % ", ".join(COUNTER_COMMANDS)
            continue
        try:
            found = reader(text or "")
        except ValueError as exc:
            errors[command] = "%s; got: %s" % (exc, (text or "(no output)")[:200])
            continue
        for port, values in found.items():
            slot = ports.setdefault(port, {})
            for key, value in values.items():
                if isinstance(value, dict):
                    slot.setdefault(key, {}).update(value)
                else:
                    slot[key] = value
    for slot in ports.values():
        # the normalised total every driver gives (_snapshot.SCALAR_COUNTERS), from queuestat's EcnMarked/pkts per queue
        if isinstance(slot.get("ecn_marked"), dict):
            slot["ecn_marked_total"] = sum(slot["ecn_marked"].values())
    return ports, errors


def parse_links(outputs: dict[str, str]) -> dict:
    status, lldp = LINK_COMMANDS[1], LINK_COMMANDS[0]
    ends: dict[str, dict] = {}
    if status in outputs:
        rows = _table(outputs[status], ["Interface", "Lanes", "Speed", "MTU"])
        if rows is None:
            expected = "the table under 'Interface  Lanes  Speed  MTU  FEC  Alias  Vlan  Oper  Admin  Type  Asym PFC'"
            raise _base.LinkFormError("sonic", status, expected, outputs[status])
        for row in rows:
            oper = {"up": "up", "down": "down"}.get(row.get("Oper", ""))
            ends[row["Interface"]] = _base.end(oper, _base.speed_g(row.get("Speed")) if oper == "up" else None)
    if lldp not in outputs:
        raise _base.LinkFormError("sonic", lldp, "its output (the command was not run)")
    rows = _table(outputs[lldp], ["LocalPort", "RemoteDevice", "RemotePortID"])
    if rows is None:
        raise _base.LinkFormError("sonic", lldp, "the table under 'LocalPort  RemoteDevice  RemotePortID  Capability  RemotePortDescr'", outputs[lldp])
    for row in rows:
        ends.setdefault(row["LocalPort"], _base.end())["neighbors"].append(
            _base.neighbor(row.get("RemoteDevice"), row.get("RemotePortID"), None, row.get("RemotePortDescr"))
        )
    return ends


def _cells(line: str, groups: list[tuple[int, int]]) -> list[str]:
    """The cells of one line, cut at the ruler's dash groups (tabulate pads every cell to its column)."""
    return [line[start:end].strip() for start, end in groups]


def _tables(text: str, first: list[str]) -> list[list[dict[str, str]]]:
    """Every tabulate 'simple' table (header, dash ruler, rows) whose header starts with ``first``.
    Rows end at a blank line or a line of dashes (lldpshow's footer); columns are cut at the ruler's
    dash groups (tabulate pads every cell to its column)."""
    lines = (text or "").replace("\r", "").split("\n")
    found = []
    for at in range(1, len(lines)):
        ruler = lines[at]
        if not re.fullmatch(r"\s*-+(?:  +-+)+\s*", ruler):
            continue
        groups = [(m.start(), m.end()) for m in re.finditer(r"-+", ruler)]
        header = _cells(lines[at - 1], groups)
        if header[: len(first)] != first:
            continue
        rows = []
        for line in lines[at + 1:]:
            if not line.strip() or re.fullmatch(r"\s*-+\s*", line):
                break
            rows.append(dict(zip(header, _cells(line, groups))))
        found.append(rows)
    return found


def _table(text: str, first: list[str]) -> list[dict[str, str]] | None:
    """The rows of every such table, joined; None when there is none."""
    tables = _tables(text, first)
    return [row for rows in tables for row in rows] if tables else None


def _number(cell: str) -> int | None:
    cell = (cell or "").replace(",", "").strip()
    return int(cell) if cell.isdigit() else None


def _pfc_counters(text: str) -> dict[str, dict]:
    """'show pfc counters' (scripts/pfcstat): the 'Port Rx' and 'Port Tx' tables, PFC0..PFC7."""
    found: dict[str, dict] = {}
    seen = False
    for direction, key in (("Port Rx", "pfc_rx_frames"), ("Port Tx", "pfc_tx_frames")):
        rows = _table(text, [direction])
        if rows is None:
            continue
        seen = True
        for row in rows:
            values = {str(p): _number(row.get("PFC%d" % p, "")) for p in range(8)}
            found.setdefault(row[direction], {})[key] = {p: n for p, n in values.items() if n is not None}
    if not seen:
        raise ValueError("sonic: 'show pfc counters': expected the tables under 'Port Rx  PFC0 ... PFC7' and 'Port Tx  PFC0 ... PFC7'")
    return found


def _queue_table(text: str, command: str, columns: dict[str, str]) -> dict[str, dict]:
    rows = _table(text, ["Port", "TxQ"])
    if rows is None or (rows and not set(columns) <= set(rows[0])):
        raise ValueError("sonic: %r: expected the table under 'Port  TxQ  %s'" % (command, "  ".join(columns)))
    found: dict[str, dict] = {}
    for row in rows:
        match = re.fullmatch(r"UC(\d+)", row.get("TxQ", ""))
        if not match:
            continue  # MC and ALL queues: not the unicast queues the plan configures
        for column, key in columns.items():
            value = _number(row.get(column, ""))
            if value is not None:
                found.setdefault(row["Port"], {}).setdefault(key, {})[match.group(1)] = value
    return found


def _queue_counters(text: str) -> dict[str, dict]:
    """scripts/queuestat std_header 'Port TxQ Counter/pkts Counter/bytes Drop/pkts Drop/bytes' (sonic-utilities
    tests/queue_counter_test.py show_queue_counters): Counter/pkts and Counter/bytes are SAI_QUEUE_STAT_PACKETS /
    _BYTES, what the queue transmitted: which queue carried the traffic."""
    return _queue_table(
        text, "show queue counters", {"Counter/pkts": "queue_tx_packets", "Counter/bytes": "queue_tx_bytes", "Drop/pkts": "queue_drops"}
    )


def _wred_counters(text: str) -> dict[str, dict]:
    return _queue_table(text, "show queue wredcounters", {"WredDrp/pkts": "wred_drops", "EcnMarked/pkts": "ecn_marked"})


def _pfcwd_stats(text: str) -> dict[str, dict]:
    """'show pfcwd stats' (pfcwd/main.py): QUEUE 'Ethernet0:3', STATUS, 'STORM DETECTED/RESTORED' 'n/m'."""
    rows = _table(text, ["QUEUE", "STATUS", "STORM DETECTED/RESTORED"])
    if rows is None:
        raise ValueError("sonic: 'show pfcwd stats': expected the table under 'QUEUE  STATUS  STORM DETECTED/RESTORED  TX OK/DROP ...'")
    found: dict[str, dict] = {}
    for row in rows:
        match = re.fullmatch(r"(\S+):(\d+)", row.get("QUEUE", ""))
        storm = re.fullmatch(r"(\d+)/(\d+)", row.get("STORM DETECTED/RESTORED", ""))
        if not match:
            raise ValueError("sonic: 'show pfcwd stats': %r is not a '<port>:<queue>' row" % row.get("QUEUE"))
        slot = found.setdefault(match.group(1), {})
        queue = match.group(2)
        if storm:
            slot.setdefault("watchdog_storms", {})[queue] = int(storm.group(1))
            slot.setdefault("watchdog_restores", {})[queue] = int(storm.group(2))
        status = _vendor_sonic.WATCHDOG_STATUS.get(row.get("STATUS", ""))
        if status:
            slot.setdefault("watchdog_status", {})[queue] = status
    return found


_COUNTER_READERS = {
    "show pfc counters": _pfc_counters,
    "show queue counters": _queue_counters,
    "show queue wredcounters": _wred_counters,
    "show pfcwd stats": _pfcwd_stats,
}
