# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""NVIDIA Cumulus Linux 5.x (NVUE) readers: every form NVUE prints its configuration in (parse: the
gathered shape; missing_lines: the rendered lines 'nv config show -o commands' does not carry), and
the per-port counter and link show outputs, as JSON or text tables. Pure: no device; the driver
(_driver.py) runs the commands. Every form with its source: docs/vendor-nvue.md.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._common._snapshot import natural as _natural
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _vendor as _vendor_nvue

# NVUE qos mapping trust -> gathered trust (QoS page "Classification": l2 = 802.1p, l3 = DSCP).
# The views print 'pcp,dscp' (RoCE page); 'pcp' / 'dscp' alone are read too (unverified spellings).
_TRUST_READ = {"l3": "dscp", "l2": "pcp", "both": "pcp,dscp", "port": "port", "pcp,dscp": "pcp,dscp", "dscp": "dscp", "pcp": "pcp"}


def _roce_defaults(mode: str, mapping: dict, pfc: dict, ecn: dict, sched: dict) -> None:
    """Fill default-global with what ``nv set qos roce`` programs (the RoCE page's
    "Default RoCE Configuration" table and ``nv show qos roce``), under any value
    set explicitly. lossy-multi-tc has its own numbers: left unknown here."""
    d = _vendor_nvue.ROCE_MODE_DEFAULTS
    if mode not in d["modes"]:
        return
    m = mapping.setdefault("default-global", {"trust": None, "dscp": {}})
    m["trust"] = m["trust"] or d["trust"]
    for dscp in range(64):
        m["dscp"].setdefault(str(dscp), dscp // 8)
    if mode in d["lossless_modes"]:
        p = pfc.setdefault("default-global", {"priorities": set(), "tx": None, "rx": None})
        if not p["priorities"]:
            p["priorities"] = set(d["pfc_priorities"])
    c = ecn.setdefault("default-global", {})
    for tc in d["ecn_traffic_classes"]:
        values = c.setdefault(str(tc), {})
        values.setdefault("ecn", "enable")
        values.setdefault("min-threshold", str(d["min_threshold_bytes"]))
        values.setdefault("max-threshold", str(d["max_threshold_bytes"]))
        values.setdefault("probability", str(d["probability_percent"]))
    es = sched.setdefault("default-global", {})
    for tc, share in d["dwrr_percent"].items():
        es.setdefault(str(tc), {"mode": "dwrr", "bw-percent": str(share)})
    for tc in d["strict"]:
        es.setdefault(str(tc), {"mode": "strict"})


# Every token that follows one of these is an identifier list NVUE may
# print compressed ("swp1-2,32", "0,3", "1-3").
_ID_KEYS = frozenset(("interface", "dscp", "pcp", "switch-priority", "traffic-class"))
_PIECE = re.compile(r"([A-Za-z_]*)(\d+)(?:-([A-Za-z_]*)(\d+))?")
# An error line of nv or bash (the driver judges its own commands' output with it too).
_ERROR = re.compile(r"^\s*(?:Error\b|Invalid\b|-bash:|bash:|Usage:|usage:|Traceback)", re.MULTILINE)
_SWITCH = {"enabled": "enable", "on": "enable", "disabled": "disable", "off": "disable"}


def _split_columns(line: str) -> list[str]:
    """Columns of an NVUE text table: runs of two or more spaces separate them."""
    return [cell for cell in re.split(r" {2,}", line.strip()) if cell != ""]


def _is_ruler(line: str) -> bool:
    return bool(line.strip()) and set(line.replace(" ", "")) <= {"-"}


def _expand(token: str) -> list[str]:
    """'swp1-2,32' -> swp1 swp2 swp32; '0,3-4' -> 0 3 4; anything else as is."""
    out: list[str] = []
    prefix = ""
    for piece in token.split(","):
        match = _PIECE.fullmatch(piece)
        if not match:
            out.append(piece)
            continue
        prefix = match.group(1) or prefix
        first = int(match.group(2))
        last = int(match.group(4)) if match.group(4) is not None else first
        if last < first or last - first > 4096:
            out.append(piece)
            continue
        out.extend("%s%d" % (prefix, i) for i in range(first, last + 1))
    return out


def _tokens(line: str) -> list[str] | None:
    """Tokens of one ``nv set``/``nv unset`` line after 'nv'; the interface
    description (printed unquoted by NVUE, quoted by us) is one token."""
    text = line.strip()
    if not text.startswith(("nv set ", "nv unset ")):
        return None
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    if len(words) > 5 and words[2] == "interface" and words[4] == "description":
        words = words[:5] + [" ".join(" ".join(words[5:]).split())]
    return words[1:]


def _atoms(line: str) -> list[tuple]:
    """One line as atomic (verb, path..., value) tuples, id lists expanded and
    on/off values in one spelling (NVUE releases print enable, enabled or on)."""
    words = _tokens(line)
    if not words:
        return []
    return _word_atoms(words)


def _word_atoms(words: list[str]) -> list[tuple]:
    words = list(words)
    words[-1] = _SWITCH.get(words[-1], words[-1])
    combos: list[list[str]] = [[]]
    for index, word in enumerate(words):
        choices = _expand(word) if index > 0 and words[index - 1] in _ID_KEYS else [word]
        combos = [done + [choice] for done in combos for choice in choices]
    return [tuple(combo) for combo in combos]


def _config_atoms(text: str) -> list[tuple]:
    atoms: list[tuple] = []
    for line in text.splitlines():
        atoms.extend(atom for atom in _atoms(line) if atom[0] == "set")
    return atoms


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _on(value: Any) -> bool:
    return str(value).lower() in ("enable", "enabled", "on", "true", "yes")


def parse(running: str) -> dict:
    """The gathered shape from any form NVUE prints (docs/vendor-nvue.md):
    ``nv config show -o commands``, ``nv config show`` (YAML),
    ``nv show qos roce``, ``nv show interface <if> qos roce status``,
    ``nv show qos pfc <profile>`` and ``nv show qos congestion-control <profile>``.
    Anything else raises ValueError naming the forms expected."""
    return _parse_any(running)


def _parse_atoms(atoms: list[tuple]) -> dict:
    mapping, pfc, ecn, sched, wd_timers, ifs, roce, pools = _collect(atoms)
    shaped = _shape(mapping, pfc, ecn, sched, wd_timers, ifs)
    shaped["roce"] = roce
    shaped["traffic_pools"] = pools
    return shaped


def _collect(atoms: list[tuple]) -> tuple:
    """The configuration's profiles (RoCE's defaults filled into default-global), watchdog timers,
    interfaces, RoCE switch and traffic pools."""
    mapping: dict[str, dict] = {}
    pfc: dict[str, dict] = {}
    ecn: dict[str, dict] = {}
    sched: dict[str, dict] = {}
    wd_timers: dict[str, int | None] = {}
    ifs: dict[str, dict] = {}
    roce: dict | None = None
    pools: dict[str, dict] = {}
    for atom in atoms:
        path = atom[1:]
        if path[:2] == ("qos", "pfc-watchdog"):
            if len(path) == 4:
                wd_timers[path[2]] = _int(path[3])
        elif path[:2] == ("qos", "roce"):
            roce = roce or {"mode": "lossless"}
            if len(path) == 4 and path[2] == "mode":
                roce["mode"] = path[3]
            elif len(path) == 4 and path[2] in ("enable", "state"):
                # 'enable on|off' up to 5.14, 'state enabled|disabled' from 5.15 (QoS reference)
                roce["enabled"] = _on(path[3])
        elif path[:2] == ("qos", "traffic-pool") and len(path) >= 4:
            entry = pools.setdefault(path[2], {"memory_percent": None, "switch_priorities": []})
            if path[3] == "memory-percent" and len(path) == 5:
                entry["memory_percent"] = _int(path[4])
            elif path[3] == "switch-priority" and len(path) == 5 and _int(path[4]) is not None:
                entry["switch_priorities"] = sorted(set(entry["switch_priorities"]) | {int(path[4])})
        elif path[:1] == ("qos",) and len(path) >= 4:
            section, prof, rest = path[1], path[2], path[3:]
            if section == "mapping":
                entry = mapping.setdefault(prof, {"trust": None, "dscp": {}})
                if rest[0] == "trust" and len(rest) == 2:
                    entry["trust"] = rest[1]
                elif rest[0] == "dscp" and len(rest) == 4 and rest[2] == "switch-priority" and _int(rest[3]) is not None:
                    entry["dscp"][str(int(rest[1]))] = int(rest[3])
            elif section == "pfc":
                entry = pfc.setdefault(prof, {"priorities": set(), "tx": None, "rx": None})
                if rest[0] == "switch-priority" and len(rest) >= 2 and _int(rest[1]) is not None:
                    entry["priorities"].add(int(rest[1]))
                elif rest[0] in ("tx", "rx") and len(rest) == 2:
                    entry[rest[0]] = rest[1]
                elif rest[0] in ("cable-length", "port-buffer", "xoff-threshold", "xon-threshold") and len(rest) == 2:
                    entry[rest[0]] = _int(rest[1])
            elif section == "congestion-control" and rest[0] == "traffic-class" and len(rest) == 4:
                ecn.setdefault(prof, {}).setdefault(rest[1], {})[rest[2]] = rest[3]
            elif section == "egress-scheduler" and rest[0] == "traffic-class" and len(rest) == 4:
                sched.setdefault(prof, {}).setdefault(rest[1], {})[rest[2]] = rest[3]
        elif path[:1] == ("interface",) and len(path) >= 4:
            name, rest = path[1], path[2:]
            entry = ifs.setdefault(name, {"description": None, "mtu": None, "profiles": {}, "watchdog": None})
            if rest[0] == "description" and len(rest) == 2:
                entry["description"] = rest[1]
            elif rest[:2] == ("link", "mtu") and len(rest) == 3:
                entry["mtu"] = _int(rest[2])
            elif rest[0] == "qos" and len(rest) == 4 and rest[2] == "profile":
                entry["profiles"][rest[1]] = rest[3]
            elif rest[:2] == ("qos", "pfc-watchdog"):
                entry["watchdog"] = True if len(rest) == 2 else (_on(rest[3]) if rest[2:3] == ("state",) and len(rest) == 4 else entry["watchdog"])
    if roce is not None and roce.get("enabled", True):
        _roce_defaults(roce["mode"], mapping, pfc, ecn, sched)
    return mapping, pfc, ecn, sched, wd_timers, ifs, roce, pools


def _entry(mapping, pfc, ecn, sched, prof: dict) -> dict:
    """The effective QoS of a port bound to ``prof`` (default-global where none is named)."""
    trust = (mapping.get(prof.get("mapping", "default-global")) or {}).get("trust")
    pentry = pfc.get(prof.get("pfc", "default-global")) or {"priorities": set(), "tx": None, "rx": None}
    # PFC is off on a port only without priorities or with both directions disabled.
    directions = [pentry[key] for key in ("tx", "rx") if pentry[key] is not None]
    pfc_on = bool(pentry["priorities"]) and (not directions or any(_on(value) for value in directions))
    cc = ecn.get(prof.get("congestion-control", "default-global")) or {}
    es = sched.get(prof.get("egress-scheduler", "default-global")) or {}
    return {
        "trust": _TRUST_READ.get(trust),
        "pfc_enabled": pfc_on,
        "pfc_priorities": sorted(pentry["priorities"]) if pfc_on else [],
        "ecn": {
            tc: {
                "min_threshold_bytes": _int(values.get("min-threshold")),
                "max_threshold_bytes": _int(values.get("max-threshold")),
                "max_probability_percent": _int(values.get("probability")),
            }
            for tc, values in sorted(cc.items(), key=lambda item: int(item[0]))
            if _on(values.get("ecn"))
        },
        "strict_queues": sorted(int(tc) for tc, values in es.items() if values.get("mode") == "strict"),
        "bandwidth_percent": {
            tc: int(values["bw-percent"])
            for tc, values in sorted(es.items(), key=lambda item: int(item[0]))
            if values.get("mode", "dwrr") == "dwrr" and _int(values.get("bw-percent")) is not None
        },
    }


def _shape(mapping, pfc, ecn, sched, wd_timers, ifs) -> dict:
    interfaces: dict[str, dict] = {}
    used_maps: list[str] = []
    for name in sorted(ifs, key=_natural):
        have = ifs[name]
        prof = have["profiles"]
        relevant = have["description"] is not None or have["mtu"] is not None or prof or have["watchdog"] is not None
        if not relevant:
            continue
        mprof = prof.get("mapping", "default-global")
        if mprof not in used_maps and mprof in mapping:
            used_maps.append(mprof)
        entry = {"description": have["description"], "mtu": have["mtu"]}
        entry.update(_entry(mapping, pfc, ecn, sched, prof))
        entry["watchdog"] = bool(have["watchdog"])
        interfaces[name] = entry
    if not used_maps and "default-global" in mapping:
        used_maps.append("default-global")
    dscp_map: dict[str, int] = {}
    for prof in used_maps:
        dscp_map.update(mapping[prof]["dscp"])
    # Priority 0 is the plan's implicit "everything else" (_intent/_plan.py _dscp_map).
    dscp_map = {dscp: prio for dscp, prio in sorted(dscp_map.items(), key=lambda item: int(item[0])) if prio != 0}
    enabled = any(port["watchdog"] for port in interfaces.values())
    explicit = any(value is not None for value in wd_timers.values())
    detection = None
    if enabled or explicit:
        # NVUE defaults: polling-interval 100 ms, robustness 3 (NVUE command reference).
        polling = wd_timers.get("polling-interval")
        robustness = wd_timers.get("robustness")
        detection = (polling if polling is not None else 100) * (robustness if robustness is not None else 3)
    # What every port not bound to a profile gets: the default-global profiles
    # (and NVIDIA's RoCE defaults under them once 'nv set qos roce' is set).
    switch_wide = _entry(mapping, pfc, ecn, sched, {})
    return {
        "dscp_map": dscp_map,
        "watchdog": {"enabled": enabled, "detection_time_ms": detection, "restoration_time_ms": None, "action": "drop" if enabled else None},
        "interfaces": interfaces,
        "switch_wide": switch_wide,
    }


def missing_lines(lines: list[str], running: str) -> list[str]:
    """The rendered lines that ``running`` ('nv config show -o commands') does not carry. Pure: readback_missing's logic."""
    have = set(_config_atoms(running))
    missing = []
    for line in lines:
        atoms = _atoms(line)
        if not atoms:
            continue
        if atoms[0][0] == "set":
            if any(atom not in have for atom in atoms):
                missing.append(line)
        else:
            paths = [("set",) + atom[1:] for atom in atoms]
            if any(have_atom[: len(path)] == path for path in paths for have_atom in have):
                missing.append(line)
    return missing


# -- counters (read-only; module_utils/_switches/_counters.py) ------------------
# Per port (NVUE has no all-ports counters view), typed ahead in chunks:
# reference 3.9 / 3.9.1 (5.5+ 'counters qos' paths, confirmed against the
# CumulusNetworks/docs QoS page). '-o json' keeps exact integers where the
# tables humanise bytes ('0 Bytes'); its shape (a map keyed by priority /
# traffic class with the tables' column names, as a public NVUE collector
# reads it) is not in the NVIDIA pages, so the text tables are parsed too.
# Per-queue ECN marks exist only where egress-queue-stats has an
# 'ecn-marked-frames' column (newer releases); port-stats gives the total.
COUNTER_VIEWS = (
    ("counters qos pfc-stats", "pfc"),
    ("counters qos egress-queue-stats", "egress"),
    ("counters qos ingress-buffer-stats", "ingress"),
    ("counters qos port-stats", "port"),
    ("qos pfc-watchdog", "watchdog"),
    ("qos roce counters", "roce"),
)
_COUNTER_COMMAND = re.compile(r"^nv show interface (\S+) (.+) -o json$")


def parse_counters(outputs: dict[str, str]) -> tuple[dict[str, dict], dict[str, str]]:
    """({port: counters} in the _snapshot shape, {command: what NVUE said} for failed commands)."""
    kinds = dict(COUNTER_VIEWS)
    ports: dict[str, dict] = {}
    errors: dict[str, str] = {}
    for command, text in outputs.items():
        match = _COUNTER_COMMAND.match(command)
        if not match or match.group(2) not in kinds:
            continue
        if not text.strip() or _ERROR.search(text):
            errors[command] = text or "(no output)"
            continue
        doc = _snapshot.json_document(text)
        found = _counters_of(kinds[match.group(2)], doc if isinstance(doc, dict) else None, text)
        if found:
            ports.setdefault(match.group(1), {}).update(found)
        else:
            errors[command] = "nvue: %r: not a form this reader reads (expected %s); got: %s" % (
                command, _COUNTER_FORMS[kinds[match.group(2)]], text.strip()[:200])
    return ports, errors


# What each counter view must show for the reader to take it (the refusal names it).
_COUNTER_FORMS = {
    "pfc": "the JSON map or table by 'switch-priority' with rx/tx-pause-frames, rx/tx-pause-duration",
    "egress": "the JSON map or table by 'traffic-class' with tx-frames, tx-bytes, tx-uc-buffer-discards, wred-discards",
    "ingress": "the JSON map or table by 'priority-group' with rx-buffer-discards",
    "port": "tx-stats ecn-marked-packets (JSON) or the 'Counter Receive Transmit' table's ECN Marked Packets row",
    "watchdog": "the state and the 'traffic-class status deadlock-count' table (or its JSON)",
    "roce": "tx-stats tx-cnp-stats cnp-packets",
}


def _counters_of(kind: str, doc: dict | None, text: str) -> dict:
    def rows(first_column: str) -> dict[str, dict]:
        """{index: {column: value}}: the JSON map, else the text table whose first column is first_column."""
        if doc is not None:
            return {_snapshot.index_key(k): v for k, v in doc.items() if _snapshot.index_key(k) is not None and isinstance(v, dict)}
        for table in _column_tables(text):
            if table and first_column in table[0]:
                return {_snapshot.index_key(r[first_column]): r for r in table if _snapshot.index_key(r[first_column]) is not None}
        return {}

    def column(table: dict[str, dict], name: str) -> dict[str, int]:
        values = {index: _snapshot.human_count(row.get(name)) for index, row in table.items()}
        return {index: value for index, value in sorted(values.items(), key=lambda kv: int(kv[0])) if value is not None}

    found: dict[str, Any] = {}
    if kind == "pfc":
        table = rows("switch-priority")
        for name, key in (
            ("rx-pause-frames", "pfc_rx_frames"),
            ("tx-pause-frames", "pfc_tx_frames"),
            ("rx-pause-duration", "pfc_rx_duration"),
            ("tx-pause-duration", "pfc_tx_duration"),
        ):
            if column(table, name):
                found[key] = column(table, name)
    elif kind == "egress":
        table = rows("traffic-class")
        buffer, wred, ecn = column(table, "tx-uc-buffer-discards"), column(table, "wred-discards"), column(table, "ecn-marked-frames")
        if buffer or wred:
            found["queue_drops"] = {q: buffer.get(q, 0) + wred.get(q, 0) for q in sorted(set(buffer) | set(wred), key=int)}
        if wred:
            found["wred_drops"] = wred
        if ecn:
            found["ecn_marked"] = ecn
        # which queue carried the traffic: tx-frames / tx-bytes (reference 3.9: the egress-queue-stats columns
        # 'traffic-class tx-frames tx-bytes tx-uc-buffer-discards wred-discards'); the text table humanises
        # tx-bytes ('21.43 GB': approximate bytes), the JSON keeps the exact count
        for name, key in (("tx-frames", "queue_tx_packets"), ("tx-bytes", "queue_tx_bytes")):
            if column(table, name):
                found[key] = column(table, name)
    elif kind == "ingress":
        discards = column(rows("priority-group"), "rx-buffer-discards")
        if discards:
            found["pg_discards"] = discards
    elif kind == "port":
        value = None
        if doc is not None:
            value = _snapshot.count((doc.get("tx-stats") or {}).get("ecn-marked-packets"))
        else:
            for table in _column_tables(text):
                for row in table:
                    if row.get("Counter", "").lower().replace(" ", "-") == "ecn-marked-packets":
                        value = _snapshot.count(row.get("Transmit"))
        if value is not None:
            found["ecn_marked_total"] = value
    elif kind == "watchdog":
        if doc is not None:
            status = doc.get("status") if isinstance(doc.get("status"), dict) else {}
            table = {_snapshot.index_key(k): v for k, v in status.items() if _snapshot.index_key(k) is not None and isinstance(v, dict)}
            state_known = "state" in doc or bool(status)
        else:
            table = rows("traffic-class")
            state_known = bool(re.search(r"(?m)^state\s", text))
        storms = column(table, "deadlock-count")
        found["watchdog_storms"] = storms
        found["watchdog_status"] = {q: str(row["status"]) for q, row in sorted(table.items(), key=lambda kv: int(kv[0])) if row.get("status")}
        if not state_known and not storms:
            found = {}
    elif kind == "roce":
        value = None
        if doc is not None:
            value = _snapshot.count(((doc.get("tx-stats") or {}).get("tx-cnp-stats") or {}).get("cnp-packets"))
        else:
            match = re.search(r"(?m)^\s+cnp-packets\s+(\d+)", text)
            value = int(match.group(1)) if match else None
        if value is not None:
            found["cnp_packets"] = value
    return found


# -- links (read-only; module_utils/_switches/_links.py) -----------------
# 'nv show interface -o json': every interface -> {link: {state: {up: {}}|{down: {}}, speed: "400G"},
# lldp: {neighbor: {<id>: {chassis: {chassis-id, system-name}, port: {name, description, type}}}}}
# (NVUE's JSON tree of 'nv show interface', whose text form prints State, Speed, Remote Host and
# Remote Port: NVUE reference, Show Commands > Interface; the JSON keys from a public capture,
# tests/unit/plugins/module_utils/fixtures/links/SOURCES.md). 'nv show interface <if> lldp -o json'
# (the same lldp subtree; Show Commands > LLDP) is read too when given. docs/vendor-nvue.md.
LINK_COMMANDS = ("nv show interface -o json",)
_LLDP_COMMAND = re.compile(r"^nv show interface (\S+) lldp -o json$")


def parse_links(outputs: dict[str, str]) -> dict:
    command = LINK_COMMANDS[0]
    if command not in outputs and "nv show interface" in outputs:
        # Output captured by hand without -o json: the text table NVIDIA's reference prints.
        return _nvue_interface_table("nv show interface", outputs["nv show interface"])
    if command not in outputs:
        raise _base.LinkFormError("nvue", command, "its output (the command was not run)")
    text = outputs[command]
    doc = _snapshot.json_document(text)
    if _ERROR.search(text or "") or not isinstance(doc, dict) or not doc or not all(isinstance(v, dict) for v in doc.values()):
        raise _base.LinkFormError("nvue", command, "the JSON of 'nv show interface -o json': interface name -> {link: {state, speed}, lldp, type}", text)
    ends: dict[str, dict] = {}
    for name, entry in doc.items():
        link = entry.get("link")
        if not isinstance(link, dict):
            continue  # no link (a vrf or bond summary without one): not a port this check reads
        state = link.get("state")
        word = next(iter(state), None) if isinstance(state, dict) else state
        oper = {"up": "up", "down": "down"}.get(word) if isinstance(word, str) else None
        ends[name] = _base.end(oper, _base.speed_g(link.get("speed")) if oper == "up" else None)
        ends[name]["neighbors"] = _nvue_neighbors(command, entry.get("lldp"))
    for other, text in outputs.items():
        match = _LLDP_COMMAND.match(other)
        if match:
            lldp = _snapshot.json_document(text)
            if _ERROR.search(text or "") or not isinstance(lldp, dict):
                raise _base.LinkFormError("nvue", other, "the JSON of the interface's lldp subtree", text)
            ends.setdefault(match.group(1), _base.end())["neighbors"] = _nvue_neighbors(other, lldp)
    return ends


# -- reading every form NVUE prints (state: parsed / gathered) ---------------
# Layouts from NVIDIA's pages (docs/vendor-nvue.md): a key tree under a header
# 'operational  applied [description]' and its dash ruler, then tables, each a
# title underlined with '=', a header line, a dash ruler, rows (some releases
# print blank lines between ruler and rows). Columns are split on runs of two
# or more spaces, never on ruler positions: values are wider than the ruler in
# real output and cells hold single spaces ('146.48 KB', 'ecn, absolute').

_FORMS = (
    "nv config show -o commands (nv set lines)",
    "nv config show (YAML with '- set:')",
    "nv show qos roce",
    "nv show interface <interface> qos roce status",
    "nv show qos pfc <profile>",
    "nv show qos congestion-control <profile>",
    "nv show qos congestion-control <profile> traffic-class <n> (after its prompt line)",
    "a configuration followed by views, each after its prompt line",
)
_PROMPT_CMD = re.compile(r"^\S+@[^\s:]+(?::\S+)?:[^$#]*[$#]\s*(.*)$")
_BYTES = {"b": 1, "byte": 1, "bytes": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3}


def _unknown(why: str) -> ValueError:
    return ValueError("nvue: %s; expected one of: %s" % (why, "; ".join(_FORMS)))


def _bytes(text: str | None) -> int | None:
    """'150000', '40000 B', '146.48 KB' (KB = 1024 B, as 150,000 B prints 146.48 KB), '1.43 MB' -> bytes
    (humanised values are exact only to their two decimals)."""
    if text is None:
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", str(text))
    if not match or match.group(2).lower() not in _BYTES | {"": 1}:
        return None
    return int(round(float(match.group(1)) * _BYTES.get(match.group(2).lower(), 1)))


def _id_list(text: str | None) -> list[int]:
    if not text or text.strip() in ("-", ""):
        return []
    out: list[int] = []
    for item in _expand(text.replace(" ", "")):
        if not item.isdigit():
            raise _unknown("%r is not a list of numbers" % text)
        out.append(int(item))
    return sorted(set(out))


_CELL = re.compile(r"\S+(?: \S+)*")


def _columns(header: str, ruler: str) -> list[tuple[int, str]]:
    """[(start, name)] of a key tree's value columns, placed by the dash ruler: a header line may have lost its
    leading spaces (an output read back with its whitespace trimmed), the ruler starts at column 0 anyway."""
    names = [name.lower() for name in _split_columns(header)]
    starts = [m.start() for m in re.finditer(r"-+", ruler)]
    if len(names) == len(starts) - 1:
        return list(zip(starts[1:], names))
    return [(m.start(), m.group(0).lower()) for m in _CELL.finditer(header)]


def _text_view(text: str) -> tuple[dict, dict[str, list[dict]], dict]:
    """({dotted key: operational value}, {table title: [row dicts]}, {dotted key: applied value}) of a view.
    A key row's cells go to the column whose header starts at or before the cell ('operational', 'applied',
    'description'): a row may fill only one of them ('enable  on' is applied only, 'pfc-priority  3'
    operational only: RoCE page examples), so cells are placed by position, not counted."""
    lines = text.replace("\r", "").split("\n")
    n = len(lines)
    titles = {i for i in range(n - 1) if lines[i].strip() and re.fullmatch(r"\s*=+\s*", lines[i + 1] or "")}
    tree: dict[str, str] = {}
    applied: dict[str, str] = {}
    tables: dict[str, list[dict]] = {}
    first_title = min(titles) if titles else n
    if n > 1 and _is_ruler(lines[1]) and not lines[0].strip().startswith(("-", "=")):
        columns = _columns(lines[0], lines[1])
        stack: list[tuple[int, str]] = []
        for line in lines[2:first_title]:
            if not line.strip():
                continue
            cells = list(_CELL.finditer(line))
            indent = cells[0].start()
            key = cells[0].group(0)
            placed: dict[str, str] = {}
            for cell in cells[1:]:
                name = "operational"
                for start, header in columns:
                    if start <= cell.start() + 1:
                        name = header
                placed.setdefault(name, cell.group(0))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            dotted = ".".join([k for _i, k in stack] + [key])
            stack.append((indent, key))
            tree[dotted] = placed.get("operational", "")
            applied[dotted] = placed.get("applied", "")
    for t in sorted(titles):
        title = lines[t].strip()
        j = t + 2
        while j < n and not lines[j].strip():
            j += 1
        if j >= n or lines[j].strip() == "No Data":
            tables[title] = []
            continue
        if j + 1 >= n or not _is_ruler(lines[j + 1]):
            raise _unknown("table %r has no header line with a dash ruler under it" % title)
        header = _split_columns(lines[j])
        columns_n = len(lines[j + 1].split())
        if len(header) == columns_n - 1:
            header = [""] + header  # the unnamed index column
        rows: list[dict] = []
        k = j + 2
        while k < n:
            line = lines[k]
            if k in titles:
                break
            if line.strip():
                cells = _split_columns(line)
                if len(cells) > len(header):
                    raise _unknown("a row of table %r has more cells than its header: %r" % (title, line.strip()))
                rows.append(dict(zip(header, cells + [""] * (len(header) - len(cells)))))
            k += 1
        tables[title] = rows
    return tree, tables, applied


def _yaml_atoms(text: str) -> list[tuple]:
    import yaml  # pylint: disable=import-outside-toplevel

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        # NVIDIA's pages print the header as 'header:' without the list dash; the switch prints '- header:'.
        fixed = re.sub(r"\A\s*header:", "- header:", text, count=1)
        try:
            doc = yaml.safe_load(fixed)
        except yaml.YAMLError as exc:
            raise _unknown("not valid YAML (%s)" % str(exc).splitlines()[0]) from None
    items = doc if isinstance(doc, list) else [doc]
    sets = [item["set"] for item in items if isinstance(item, dict) and isinstance(item.get("set"), dict)]
    if not sets:
        raise _unknown("YAML without a '- set:' section")
    atoms: list[tuple] = []

    def scalar(value) -> str:
        if value is True:
            return "on"  # YAML 1.1 reads NVUE's on/off as booleans
        if value is False:
            return "off"
        return str(value)

    def walk(node: dict, path: list[str]) -> None:
        for key, value in node.items():
            here = path + [str(key)]
            if isinstance(value, dict):
                if value:
                    walk(value, here)
                else:
                    atoms.extend(_word_atoms(["set"] + here))
            elif isinstance(value, list):
                for item in value:
                    atoms.extend(_word_atoms(["set"] + here + [scalar(item)]))
            elif value is not None:
                atoms.extend(_word_atoms(["set"] + here + [scalar(value)]))

    for tree in sets:
        walk(tree, [])
    return atoms


def view_commands(running: str) -> list[str]:
    """The operational views that show what the ASIC runs for a configuration ('nv config show -o commands'
    or YAML): 'nv show qos pfc <p>' and 'nv show qos congestion-control <p>' for each profile it holds
    (default-global too once 'nv set qos roce' programs it), and 'nv show qos roce' when RoCE is on."""
    mapping, pfc, ecn, _sched, _wd, _ifs, roce, _pools = _collect(_atoms_of(running))
    del mapping
    commands = ["nv show qos pfc %s" % name for name in sorted(pfc)]
    commands += ["nv show qos congestion-control %s" % name for name in sorted(ecn)]
    if roce is not None and roce.get("enabled", True):
        commands.append("nv show qos roce")
    for command in commands:
        if not re.fullmatch(r"nv show qos [a-z-]+(?: [A-Za-z0-9_.-]+)?", command):
            raise _unknown("a profile name that is not one word: %r" % command)
    return commands


def _sections(running: str) -> list[tuple[str | None, str]]:
    """A pasted terminal session cut at its prompt lines: [(command or None, output)]; a prompt names
    the view and its port. Outputs with nothing in them are left out."""
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in running.replace("\r", "").split("\n"):
        match = _PROMPT_CMD.match(line)
        if match:
            sections.append((match.group(1).strip() or None, []))
            continue
        sections[-1][1].append(line.rstrip())
    out = []
    for command, lines in sections:
        text = "\n".join(lines).strip("\n")
        if any(line.strip() and not line.lstrip().startswith("#") for line in text.split("\n")):
            out.append((command, text))
    return out


def _parse_any(running: str) -> dict:
    if not isinstance(running, str) or not running.strip():
        raise _unknown("the input is empty")
    sections = _sections(running)
    if not sections:
        raise _unknown("nothing but a prompt")
    if len(sections) == 1:
        return _parse_one(*sections[0])
    configs: list[str] = []
    views: list[tuple[str | None, dict]] = []
    for command, text in sections:
        shaped = _parse_one(command, text)
        if shaped.get("operational"):
            views.append((command, shaped))
        else:
            configs.append(text)
    if len(configs) > 1:
        raise _unknown("%d configurations in one input (give one configuration, and views after it)" % len(configs))
    merged = _merge_views([shaped for _command, shaped in views])
    if not configs:
        return merged
    shaped = _parse_one(None, configs[0])
    # The applied state (what the ASIC runs, the views' operational column) beside the configuration, and
    # where the two differ (docs/vendor-nvue.md "Operational views").
    shaped["applied_state"] = merged
    shaped["applied_state_differs"] = _differs(_collect(_atoms_of(configs[0])), shaped, views)
    return shaped


def _atoms_of(text: str) -> list[tuple]:
    body = [line for line in text.split("\n") if line.strip() and not line.lstrip().startswith("#")]
    if all(line.startswith(("nv set ", "nv unset ")) for line in body):
        return _config_atoms(text)
    return _yaml_atoms(text)


def _parse_one(command: str | None, text: str) -> dict:
    body = [line for line in text.split("\n") if line.strip() and not line.lstrip().startswith("#")]
    if all(line.startswith(("nv set ", "nv unset ")) for line in body):
        return _parse_atoms(_config_atoms(text))
    if body[0].lstrip().startswith(("- header:", "header:", "- set:")):
        return _parse_atoms(_yaml_atoms(text))
    if len(body) > 1 and _is_ruler(body[1]) or any(re.fullmatch(r"\s*=+\s*", line) for line in body):
        tree, tables, applied = _text_view(text)
        words = (command or "").split()
        if any(title.startswith("RoCE ") for title in tables) or "trust.trust-mode" in tree or (
                set(tree) <= {"enable", "state", "mode"} and (applied.get("enable") or applied.get("state"))):
            port = words[3] if words[:3] == ["nv", "show", "interface"] and len(words) > 3 else None
            return _roce_view(tree, tables, port, applied)
        if "ECN Configurations" in tables:
            return _cc_view(tables["ECN Configurations"], words[4] if words[:4] == ["nv", "show", "qos", "congestion-control"] and len(words) > 4 else None)
        if {"ecn", "min-threshold", "max-threshold"} <= set(tree):
            if words[:4] != ["nv", "show", "qos", "congestion-control"] or len(words) != 7 or words[5] != "traffic-class":
                raise _unknown("the ECN rows of one traffic class need the prompt line that names the view "
                               "('nv show qos congestion-control <profile> traffic-class <n>')")
            return _cc_tc_view(tree, words[4], words[6])
        if {"cable-length", "rx", "tx"} <= set(tree) or "[switch-priority]" in tree:
            return _pfc_view(tree, text, words[4] if words[:4] == ["nv", "show", "qos", "pfc"] and len(words) > 4 else None)
        raise _unknown("an NVUE table this parser does not know (tables: %s; keys: %s)" % (", ".join(tables) or "none", ", ".join(list(tree)[:8]) or "none"))
    raise _unknown("the first line %r is not of a known form" % body[0][:80])


def _merge_views(shapes: list[dict]) -> dict:
    """Several views read into one structure: what each view shows, marked operational."""
    merged = _empty_shape()
    merged["operational"] = True
    for shaped in shapes:
        if shaped.get("switch_wide") is not None:
            merged["switch_wide"] = shaped["switch_wide"]
            merged["dscp_map"] = dict(shaped["dscp_map"])  # the switch-wide view prints the whole map
        else:
            for dscp, prio in shaped.get("dscp_map", {}).items():
                merged["dscp_map"].setdefault(dscp, prio)
        merged["interfaces"].update(shaped.get("interfaces") or {})
        if shaped.get("roce") is not None:
            merged["roce"] = shaped["roce"]
        for section, profiles in (shaped.get("profiles") or {}).items():
            for name, values in profiles.items():
                have = merged.setdefault("profiles", {}).setdefault(section, {}).setdefault(name, {})
                for key, value in values.items():
                    if isinstance(value, dict) and isinstance(have.get(key), dict):
                        have[key].update(value)
                    else:
                        have[key] = value
    return merged


def _human(n: int) -> str:
    # NVUE's humanised sizes (KB = 1024 B, two decimals: 150,000 B prints '146.48 KB')
    for unit, div in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if n >= div:
            return "%.2f %s" % (n / div, unit)
    return "%d B" % n


def _same_bytes(view: int | None, conf: int | None) -> bool:
    """Equal, or equal within the two decimals a humanised size keeps ('146.48 KB' is 150,000 B)."""
    return view == conf or (view is not None and conf is not None and _human(view) == _human(conf))


def _differs(collected: tuple, config: dict, views: list[tuple[str | None, dict]]) -> list[str]:
    """Where the applied state (each view's operational values) differs from the configuration, one line each."""
    mapping, pfc, ecn, _sched, _wd, _ifs, roce, _pools = collected
    found: list[str] = []

    def differ(where: str, key: str, view: Any, conf: Any) -> None:
        if view != conf:
            found.append("%s: %s: the switch runs %r, the configuration has %r" % (where, key, view, conf))

    def ecn_differ(where: str, view: dict, conf: dict, only: list[str] | None = None) -> None:
        tcs = only if only is not None else sorted(set(view) | set(conf), key=int)
        for tc in tcs:
            have, want = view.get(tc), conf.get(tc)
            if have is None or want is None:
                differ(where, "ecn[%s]" % tc, "on" if have else "off", "on" if want else "off")
                continue
            for key in ("min_threshold_bytes", "max_threshold_bytes"):
                if not _same_bytes(have[key], want[key]):
                    differ(where, "ecn[%s].%s" % (tc, key), have[key], want[key])
            differ(where, "ecn[%s].max_probability_percent" % tc, have["max_probability_percent"], want["max_probability_percent"])

    def conf_ecn(profile: str) -> dict:
        return _entry(mapping, pfc, ecn, {}, {"congestion-control": profile})["ecn"]

    for command, shaped in views:
        for name, values in ((shaped.get("profiles") or {}).get("pfc") or {}).items():
            where = "qos pfc %s" % name
            if name not in pfc:
                found.append("%s: the switch runs a profile the configuration does not hold" % where)
                continue
            want = _entry(mapping, pfc, ecn, {}, {"pfc": name})
            differ(where, "pfc_priorities", values["pfc_priorities"], want["pfc_priorities"])
            if pfc[name].get("cable-length") is not None:
                differ(where, "cable_length_m", values["cable_length_m"], pfc[name]["cable-length"])
        for name, values in ((shaped.get("profiles") or {}).get("congestion-control") or {}).items():
            where = "qos congestion-control %s" % name
            if name not in ecn:
                found.append("%s: the switch runs a profile the configuration does not hold" % where)
                continue
            words = (command or "").split()
            one = [words[6]] if len(words) == 7 and words[5] == "traffic-class" else None
            ecn_differ(where, values["ecn"], conf_ecn(name), one)
        if shaped.get("switch_wide") is not None:
            where, have, want = "qos roce", shaped["switch_wide"], config["switch_wide"]
            differ(where, "mode", (shaped.get("roce") or {}).get("mode"), (roce or {}).get("mode") if roce and roce.get("enabled", True) else None)
            for key in ("trust", "pfc_priorities", "strict_queues", "bandwidth_percent"):
                if have[key] is not None and (key != "bandwidth_percent" or have[key]):
                    differ(where, key, have[key], want[key])
            ecn_differ(where, have["ecn"], want["ecn"])
            effective = {str(d): d // 8 for d in range(64)}
            effective.update((mapping.get("default-global") or {}).get("dscp", {}))
            differ(where, "dscp_map", shaped["dscp_map"], {d: p for d, p in sorted(effective.items(), key=lambda kv: int(kv[0])) if p != 0})
        for port, have in (shaped.get("interfaces") or {}).items():
            where = "interface %s qos roce status" % port
            want = config["interfaces"].get(port) or config["switch_wide"]
            for key in ("trust", "pfc_priorities"):
                differ(where, key, have[key], want[key])
            ecn_differ(where, have["ecn"], want["ecn"], sorted(have["ecn"], key=int))
    return found


def _empty_shape() -> dict:
    return {
        "dscp_map": {},
        "watchdog": {"enabled": None, "detection_time_ms": None, "restoration_time_ms": None, "action": None},
        "interfaces": {},
        "switch_wide": None,
        "roce": None,
        "traffic_pools": {},
    }


def _roce_view(tree: dict, tables: dict, port: str | None, applied: dict | None = None) -> dict:
    """``nv show qos roce`` (switch-wide) or ``nv show interface <if> qos roce status``: the operational
    column (what the ASIC runs; 'mode' falls back to the applied column)."""
    applied = applied or {}

    def get(*keys: str) -> str | None:
        for key in keys:
            if tree.get(key) not in (None, ""):
                return tree[key]
        return None

    mode = get("mode") or applied.get("mode") or None
    switch = applied.get("enable") or applied.get("state")
    if mode is None and switch and not _on(switch):
        # RoCE off: the switch key alone (NVIDIA prints this view only with RoCE on: unverified form)
        shaped = _empty_shape()
        shaped["roce"] = {"mode": None, "enabled": False, "lldp_app_tlv": None, "pools": {}, "congestion_mode": None}
        shaped["operational"] = True
        return shaped
    if mode is None:
        raise _unknown("a RoCE view without a 'mode' line")
    prio = get("pfc.pfc-priority")
    prios = _id_list(prio)
    rx, tx = get("pfc.rx-enabled"), get("pfc.tx-enabled")
    directions = [v for v in (rx, tx) if v is not None]
    pfc_on = bool(prios) and (not directions or any(_on(v) or v == "yes" for v in directions))
    tcs = _id_list(get("congestion-control.enabled-tc"))
    ecn = {
        str(tc): {
            "min_threshold_bytes": _bytes(get("congestion-control.min-threshold")),
            "max_threshold_bytes": _bytes(get("congestion-control.max-threshold")),
            "max_probability_percent": _int(get("congestion-control.probability")),
        }
        for tc in tcs
    }
    strict: list[int] = []
    bandwidth: dict[str, int] = {}
    for row in tables.get("RoCE SP->TC mapping and ETS configurations", []):
        tc = _int(row.get("traffic-class"))
        weight = (row.get("scheduler-weight") or "").lower()
        if tc is None:
            continue
        if weight.startswith("strict"):
            strict.append(tc)
        match = re.fullmatch(r"dwrr-(\d+)%", weight)
        if match:
            bandwidth[str(tc)] = int(match.group(1))
    dscp_map: dict[str, int] = {}
    for row in tables.get("RoCE PCP/DSCP->SP mapping configurations", []):
        sp = _int(row.get("switch-prio"))
        if sp is None:
            continue
        for dscp in _id_list(row.get("dscp")):
            dscp_map[str(dscp)] = sp
    pools = {}
    for title in ("RoCE pool config", "RoCE Pool Status"):
        for row in tables.get(title, []):
            if row.get("name"):
                pools[row["name"]] = {
                    "mode": row.get("mode"),
                    "size": row.get("size"),
                    "switch_priorities": _id_list(row.get("switch-priorities")),
                    "traffic_classes": _id_list(row.get("traffic-class")),
                }
    trust_mode = get("trust.trust-mode")
    entry = {
        "trust": _TRUST_READ.get(trust_mode.replace(" ", "")) if trust_mode else None,
        "pfc_enabled": pfc_on,
        "pfc_priorities": prios if pfc_on else [],
        "ecn": ecn,
        "strict_queues": sorted(set(strict)),
        "bandwidth_percent": dict(sorted(bandwidth.items(), key=lambda kv: int(kv[0]))),
    }
    shaped = _empty_shape()
    shaped["dscp_map"] = {d: p for d, p in sorted(dscp_map.items(), key=lambda kv: int(kv[0])) if p != 0}
    lldp = None
    if get("lldp-app-tlv.protocol-id") is not None:
        lldp = {"priority": _int(get("lldp-app-tlv.priority")), "protocol_id": _int(get("lldp-app-tlv.protocol-id")), "selector": get("lldp-app-tlv.selector")}
    shaped["roce"] = {"mode": mode, "enabled": True if switch is None else _on(switch), "lldp_app_tlv": lldp, "pools": pools,
                      "congestion_mode": get("congestion-control.congestion-mode")}
    shaped["operational"] = True
    if port:
        full = {"description": None, "mtu": None}
        full.update(entry)
        full["watchdog"] = None
        shaped["interfaces"][port] = full
    else:
        shaped["switch_wide"] = entry
    return shaped


def _cc_view(rows: list[dict], profile: str | None) -> dict:
    """``nv show qos congestion-control <profile>``: the 'ECN Configurations' table."""
    ecn = {}
    for row in rows:
        tc = _int(row.get("traffic-class"))
        if tc is None:
            raise _unknown("an ECN Configurations row without a traffic class: %r" % (row,))
        if _on(row.get("ECN")):
            ecn[str(tc)] = {
                "min_threshold_bytes": _bytes(row.get("Min Th")),
                "max_threshold_bytes": _bytes(row.get("Max Th")),
                "max_probability_percent": _int(row.get("Probability")),
            }
    shaped = _empty_shape()
    shaped["profiles"] = {"congestion-control": {profile or "(unnamed)": {"ecn": ecn}}}
    shaped["operational"] = True
    return shaped


def _cc_tc_view(tree: dict, profile: str, tc: str) -> dict:
    """``nv show qos congestion-control <profile> traffic-class <n>`` (QoS page example): one traffic
    class's key rows, the operational column."""
    if _int(tc) is None:
        raise _unknown("traffic class %r is not a number" % tc)
    ecn = {}
    if _on(tree.get("ecn")):
        ecn[str(int(tc))] = {
            "min_threshold_bytes": _bytes(tree.get("min-threshold")),
            "max_threshold_bytes": _bytes(tree.get("max-threshold")),
            "max_probability_percent": _int(tree.get("probability")),
        }
    shaped = _empty_shape()
    shaped["profiles"] = {"congestion-control": {profile: {"ecn": ecn}}}
    shaped["operational"] = True
    return shaped


def _pfc_view(tree: dict, text: str, profile: str | None) -> dict:
    """``nv show qos pfc <profile>``: key rows, '[switch-priority]' once per priority (the operational column)."""
    prios = []
    lines = text.replace("\r", "").split("\n")
    applied_at = dict((name, start) for start, name in _columns(lines[0], lines[1] if len(lines) > 1 else "")).get("applied", -1)
    for line in lines:
        cells = list(_CELL.finditer(line))
        if cells and cells[0].group(0) == "[switch-priority]" and len(cells) > 1 and _int(cells[1].group(0)) is not None:
            if applied_at < 0 or cells[1].start() + 1 < applied_at:
                prios.append(int(cells[1].group(0)))
    directions = [tree.get(k) for k in ("rx", "tx") if tree.get(k)]
    shaped = _empty_shape()
    shaped["profiles"] = {"pfc": {profile or "(unnamed)": {
        "pfc_priorities": sorted(set(prios)),
        "pfc_enabled": bool(prios) and (not directions or any(_on(v) for v in directions)),
        "cable_length_m": _int(tree.get("cable-length")),
        "port_buffer_bytes": _bytes(tree.get("port-buffer")),
        "xoff_threshold_bytes": _bytes(tree.get("xoff-threshold")),
        "xon_threshold_bytes": _bytes(tree.get("xon-threshold")),
    }}}
    shaped["operational"] = True
    return shaped


def _column_tables(text: str) -> list[list[dict[str, str]]]:
    """Every header-over-dash-ruler table in a view, rows split on runs of two
    or more spaces; blank lines between the ruler and the rows (the PFC
    watchdog view prints one) do not end a table, the next header or title does."""
    lines = text.replace("\r", "").split("\n")
    n = len(lines)
    rulers = [i for i in range(1, n) if _is_ruler(lines[i]) and lines[i - 1].strip()]
    titles = {i for i in range(n - 1) if lines[i].strip() and re.fullmatch(r"\s*=+\s*", lines[i + 1])}
    tables = []
    for number, r in enumerate(rulers):
        header = _split_columns(lines[r - 1])
        columns = len(lines[r].split())
        if len(header) == columns - 1:
            header = [""] + header
        end = rulers[number + 1] - 1 if number + 1 < len(rulers) else n
        rows = []
        for k in range(r + 1, end):
            if k in titles or re.fullmatch(r"\s*=+\s*", lines[k]):
                break
            if lines[k].strip() and lines[k].strip() != "No Data":
                cells = _split_columns(lines[k])
                rows.append(dict(zip(header, cells + [""] * (len(header) - len(cells)))))
        tables.append(rows)
    return tables


# lldpd's port ID types as NVUE prints them ('ifname': NVUE JSON capture; 'mac', 'local': lldpd's names, unverified in NVUE).
_NVUE_SUBTYPES = {"ifname": "ifname", "mac": "mac", "local": "local", "ifalias": "ifalias", "ip": "network_address"}


def _nvue_neighbors(command: str, lldp: Any) -> list[dict]:
    if lldp is None:
        return []
    neighbors = lldp.get("neighbor", {}) if isinstance(lldp, dict) else None
    if not isinstance(neighbors, dict):
        raise _base.LinkFormError("nvue", command, "lldp.neighbor: a map of neighbour id -> {chassis, port}", str(lldp))
    found = []
    for ident, data in neighbors.items():
        chassis = data.get("chassis", {}) if isinstance(data, dict) else None
        port = data.get("port", {}) if isinstance(data, dict) else None
        if not isinstance(chassis, dict) or not isinstance(port, dict):
            raise _base.LinkFormError("nvue", command, "lldp.neighbor.<id> with chassis and port objects", str(data))
        kind = port.get("type")
        found.append(_base.neighbor(chassis.get("system-name") or ident, port.get("name"), _NVUE_SUBTYPES.get(kind, kind), port.get("description"),
                                    chassis.get("chassis-id")))
    return found


_TABLE_HEADER = ["Interface", "State", "Speed", "MTU", "Type", "Remote Host", "Remote Port", "Summary"]
_TABLE_RULER = re.compile(r"\s*-+\u2026?(?:\s+-+\u2026?)*\s*")


def _nvue_interface_table(command: str, text: str) -> dict:
    """The 'nv show interface' table (NVUE reference, Show Commands > Interface): one row per interface,
    Summary continuation lines with an empty Interface column. Columns are cut at the ruler's dash groups.
    NVUE shortens a long cell with '\u2026' (a server's MAC in Remote Port): such a value is not what the
    neighbour sent and is reported as null."""
    lines = (text or "").replace("\r", "").split("\n")
    at = next((i for i in range(1, len(lines)) if _TABLE_RULER.fullmatch(lines[i]) and re.split(r"\s{2,}", lines[i - 1].strip()) == _TABLE_HEADER), None)
    if at is None:
        raise _base.LinkFormError("nvue", command, "the JSON of 'nv show interface -o json', or the table under '%s'" % "  ".join(_TABLE_HEADER), text)
    starts = [m.start() for m in re.finditer(r"-+\u2026?", lines[at])]

    def cell(line: str, n: int) -> str:
        end = starts[n + 1] if n + 1 < len(starts) else len(line)
        return line[starts[n]:end].strip()

    ends: dict[str, dict] = {}
    for line in lines[at + 1:]:
        if not line.strip() or line.strip() == "...":
            continue
        name = cell(line, 0)
        if not name:
            continue  # a Summary continuation line
        state, speed, host, port = cell(line, 1), cell(line, 2), cell(line, 5), cell(line, 6)
        oper = {"up": "up", "down": "down"}.get(state)
        if oper is None:
            raise _base.LinkFormError("nvue", command, "rows '<interface> up|down <speed> ...'", line)
        here = _base.end(oper, _base.speed_g(speed) if oper == "up" else None)
        if host:
            here["neighbors"].append(_base.neighbor(None if host.endswith("\u2026") else host, None if port.endswith("\u2026") else port))
        ends[name] = here
    return ends
