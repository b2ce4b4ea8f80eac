# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""SONiC rendering: the plan as JSON Patch operations, one per line, each adding one CONFIG_DB leaf
(``{"op": "add", "path": "/PORT/Ethernet0/mtu", "value": "9100"}``), and back (the leaves of the
rendered lines, the CONFIG_DB a switch holding them prints). Pure: no device. The driver
(_driver.py) loads these lines; every form with its source: docs/vendor-sonic.md.
"""

from __future__ import annotations

import json
import re

from ansible_collections.lossless.fabric.plugins.module_utils._common._snapshot import natural as _natural
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _records
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _vendor as _vendor_sonic

MAP = _vendor_sonic.MAP_NAME
_PORT_RE = re.compile(_records.SONIC.interface_pattern, re.ASCII)
_NAME_RE = re.compile(_vendor_sonic.NAME_PATTERN, re.ASCII)
# A CONFIG_DB path segment we write: table names, keys (Ethernet0|3, Ethernet0|3-4) and field names.
_SEGMENT_RE = re.compile(r"[A-Za-z0-9_|.-]{1,64}", re.ASCII)

# plan trust -> what SONiC classifies by: a port trusts DSCP when PORT_QOS_MAP binds a dscp_to_tc_map.
TRUST = {"dscp": "dscp_to_tc_map"}


def _op(path: list[str], value: str) -> str:
    for segment in path:
        if not _SEGMENT_RE.fullmatch(segment):
            raise ValueError("sonic: %r is not a CONFIG_DB table, key or field name we write" % (segment,))
    return json.dumps({"op": "add", "path": "/" + "/".join(path), "value": str(value)}, ensure_ascii=True)


def _remove(path: list[str]) -> str:
    """A JSON Patch remove of one CONFIG_DB key (/TABLE/key) or field (/TABLE/key/field): what a fabric mode takes
    out (issue 36). The driver sends it only where the switch holds the path (RFC 6902: removing a missing path fails)."""
    for segment in path:
        if not _SEGMENT_RE.fullmatch(segment):
            raise ValueError("sonic: %r is not a CONFIG_DB table, key or field name we write" % (segment,))
    return json.dumps({"op": "remove", "path": "/" + "/".join(path)}, ensure_ascii=True)


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs of priorities: [3, 4, 6] -> [(3, 4), (6, 6)] (BUFFER_PG pg_num is 'X' or 'X-Y')."""
    runs: list[list[int]] = []
    for number in sorted(set(numbers)):
        if runs and runs[-1][1] == number - 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    return [(run[0], run[1]) for run in runs]


def _pg(run: tuple[int, int]) -> str:
    return "%d" % run[0] if run[0] == run[1] else "%d-%d" % run


# The first rendered line: what the switch must say it is ('show version'), checked before the patch.
_EXPECT_RE = re.compile(r"# sonic release (\S+) hwsku (\S+)")


def header(release: str, hwsku: str | None) -> str:
    """The expectation line: a bash comment naming the release branch and the HwSKU the plan was made for
    ('-': no HwSKU given); the driver checks 'show version' against it and never sends it."""
    return "# sonic release %s hwsku %s" % (release, hwsku or "-")


def expectation(lines: list[str]) -> tuple[str, str | None] | None:
    """(release, hwsku or None) of the rendered lines' expectation line, None when there is none."""
    for line in lines:
        match = _EXPECT_RE.fullmatch(line)
        if match:
            return match.group(1), None if match.group(2) == "-" else match.group(2)
    return None


def _ops(lines: list[str]) -> list[tuple[str, list[str], str | None]]:
    """The rendered lines as (op, path segments, value): 'add' of one /TABLE/key/field value, 'remove' of one
    /TABLE/key or /TABLE/key/field (value None); the expectation line left out. ValueError on any other line."""
    out: list[tuple[str, list[str], str | None]] = []
    for line in lines:
        if _EXPECT_RE.fullmatch(line):
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            raise ValueError("sonic: %r is not a JSON Patch operation" % line[:120]) from None
        if isinstance(doc, dict) and doc.get("op") == "remove" and set(doc) == {"op", "path"} and isinstance(doc["path"], str):
            path = doc["path"].split("/")[1:]
            if len(path) not in (2, 3) or not all(_SEGMENT_RE.fullmatch(p) for p in path):
                raise ValueError("sonic: %r is not a /TABLE/key or /TABLE/key/field path" % doc["path"])
            out.append(("remove", path, None))
            continue
        if not isinstance(doc, dict) or doc.get("op") != "add" or not isinstance(doc.get("path"), str) or not isinstance(doc.get("value"), str):
            raise ValueError("sonic: %r is not an add of one CONFIG_DB value" % line[:120])
        path = doc["path"].split("/")[1:]
        if len(path) != 3 or not all(_SEGMENT_RE.fullmatch(p) for p in path):
            raise ValueError("sonic: %r is not a /TABLE/key/field path" % doc["path"])
        out.append(("add", path, doc["value"]))
    return out


def removals(lines: list[str]) -> list[list[str]]:
    """The paths the rendered lines remove (/TABLE/key or /TABLE/key/field segments)."""
    return [path for op, path, _value in _ops(lines) if op == "remove"]


def _leaves(lines: list[str]) -> list[tuple[list[str], str]]:
    """The rendered lines' adds as (path segments, value), the expectation line and removes left out; ValueError on a
    line that is not one of our ops."""
    return [(path, value) for op, path, value in _ops(lines) if op == "add" and value is not None]


def render(plan: dict) -> list[str]:
    """One JSON Patch add per CONFIG_DB leaf, every value from the plan (docs/vendor-sonic.md)."""
    if plan["trust"] not in TRUST:
        raise ValueError("trust %r has no SONiC mapping (only %s)" % (plan["trust"], ", ".join(sorted(TRUST))))
    ports = plan["ports"]
    if not ports:
        raise ValueError("the plan has no ports")
    v = _vendor_sonic
    sonic = plan.get("sonic") or {}
    release = sonic.get("release") or v.DEFAULT_RELEASE
    if release not in v.RELEASES:
        raise ValueError("release %r is not one of %s" % (release, ", ".join(v.RELEASES)))
    hwsku = sonic.get("hwsku")
    classes = {int(tc): cls for tc, cls in plan["traffic_classes"].items()}
    default_tc = int(plan["default_traffic_class"])
    model = sonic.get("buffer_model", v.DEFAULT_BUFFER_MODEL)
    # mode pfc_only (issue 36): ports without ECN thresholds get no WRED profile on the RoCE queue
    triples = {(int(p["ecn"]["min_threshold_bytes"]), int(p["ecn"]["max_threshold_bytes"]), int(p["ecn"]["max_probability_percent"]))
               for p in ports.values() if p.get("ecn")}
    lossless_plan = any(port["pfc_priorities"] for port in ports.values())
    problem = v.plan_problem(release, hwsku, model, triples, lossless=lossless_plan)
    if problem:
        raise ValueError(problem)
    lines: list[str] = [header(release, hwsku)]
    full = plan.get("dscp_map_full") or {str(d): plan["dscp_map"].get(str(d), default_tc) for d in range(64)}
    for dscp in sorted(full, key=int):
        lines.append(_op(["DSCP_TO_TC_MAP", MAP, str(int(dscp))], str(int(full[dscp]))))
    for tc in range(8):
        queue = tc if tc in classes else default_tc
        lines.append(_op(["TC_TO_QUEUE_MAP", MAP, str(tc)], str(queue)))
    lossless = sorted({int(p) for port in ports.values() for p in port["pfc_priorities"]})
    for tc in range(8):
        lines.append(_op(["TC_TO_PRIORITY_GROUP_MAP", MAP, str(tc)], str(tc if tc in lossless else 0)))
    for prio in range(8):
        lines.append(_op(["MAP_PFC_PRIORITY_TO_QUEUE", MAP, str(prio)], str(prio)))
    schedulers: dict[int, str] = {}
    for tc in sorted(classes):
        cls = classes[tc]
        if cls["strict"]:
            name = "LF_STRICT"
            fields = [("type", "STRICT")]
        else:
            weight = int(cls["bandwidth_percent"])
            if not v.WEIGHT_RANGE[0] <= weight <= v.WEIGHT_RANGE[1]:
                raise ValueError("traffic class %d: DWRR weight %d is outside SONiC's %d..%d" % ((tc, weight) + v.WEIGHT_RANGE))
            # One scheduler per weight (sonic-scheduler.yang has no create-only marker: the name is only ours).
            name = "LF_DWRR_%d" % weight
            fields = [("type", "DWRR"), ("weight", str(weight))]
        schedulers[tc] = name
        for field, value in fields:
            line = _op(["SCHEDULER", name, field], value)
            if line not in lines:
                lines.append(line)
    ecn_queue = int(plan["ecn_queue"])
    wred: dict[str, str] = {}
    for name in sorted(ports, key=_natural):
        ecn = ports[name].get("ecn")
        if not ecn or not classes.get(ecn_queue, {}).get("ecn"):
            continue
        key = (int(ecn["min_threshold_bytes"]), int(ecn["max_threshold_bytes"]), int(ecn["max_probability_percent"]))
        if release in v.WRED_GUARDED:
            # 202305-202505: GCU lets only the green thresholds of an existing profile change (AZURE_LOSSLESS up to
            # 202411), ecnconfig changes existing profiles only: the stock lossless profile carries the plan's values
            # (its ecn mode and wred_green_enable are the template's: ecn_all, true; qos_config.j2).
            profile = v.STOCK_WRED_PROFILE
            fields = list(zip(v.WRED_TUNABLE, (str(key[0]), str(key[1]), str(key[2]))))
        else:
            profile = "LF_ECN_%d_%d_%d" % key
            if not _NAME_RE.fullmatch(profile):
                raise ValueError("port %s: WRED profile name %r is longer than SONiC's 32 characters" % (name, profile))
            fields = [("ecn", v.ECN_MODE), ("wred_green_enable", "true"), ("green_min_threshold", str(key[0])),
                      ("green_max_threshold", str(key[1])), ("green_drop_probability", str(key[2]))]
        wred[name] = profile
        for field, value in fields:
            line = _op(["WRED_PROFILE", profile, field], value)
            if line not in lines:
                lines.append(line)
    if model not in v.BUFFER_MODELS:
        raise ValueError("buffer_model %r is not one of %s" % (model, ", ".join(v.BUFFER_MODELS)))
    watchdog = plan["watchdog"]
    for name in sorted(ports, key=_natural):
        port = ports[name]
        if not _PORT_RE.fullmatch(name):
            raise ValueError("port %r is not a SONiC port name (%s)" % (name, _records.SONIC.interface_example))
        description = port.get("description") or ""
        _base.check_cli_line("sonic render", description)
        lines.append(_op(["PORT", name, "mtu"], str(int(plan["mtu"]))))
        if description:
            lines.append(_op(["PORT", name, "description"], description))
        prios = sorted(int(p) for p in port["pfc_priorities"])
        for field in ("dscp_to_tc_map", "tc_to_queue_map", "tc_to_pg_map", "pfc_to_queue_map"):
            lines.append(_op(["PORT_QOS_MAP", name, field], MAP))
        # mode ecn_only: pfc_enable "" and pfcwd_sw_enable "" (sonic-buildimage sonic-port-qos-map.yang, pattern
        # '([0-7](,[0-7])*)?': "Empty string is allowed to disable PFC on all queues" / "... to disable watchdog on all
        # queues"); no PFC_WD entry is written
        lines.append(_op(["PORT_QOS_MAP", name, "pfc_enable"], ",".join(str(p) for p in prios)))
        if not prios:
            lines.append(_op(["PORT_QOS_MAP", name, "pfcwd_sw_enable"], ""))
        elif watchdog["enabled"]:
            # sonic-swss pfcwdorch.cpp (202205+) watches only the TCs of pfcwd_sw_enable (qosorch.cpp); the stock
            # qos_config.j2 writes it next to pfc_enable. Set with PFC, before the watchdog entries (pfcwd start).
            lines.append(_op(["PORT_QOS_MAP", name, "pfcwd_sw_enable"], ",".join(str(p) for p in prios)))
        for tc in sorted(classes):
            lines.append(_op(["QUEUE", "%s|%d" % (name, tc), "scheduler"], schedulers[tc]))
        if name in wred:
            lines.append(_op(["QUEUE", "%s|%d" % (name, ecn_queue), "wred_profile"], wred[name]))
        else:
            # mode pfc_only: the RoCE queue marks no ECN, so no WRED profile on it (one left from a lossless plan is removed)
            lines.append(_remove(["QUEUE", "%s|%d" % (name, ecn_queue), "wred_profile"]))
        if not prios:
            # mode ecn_only: no watchdog entry on the port (the driver stops it with 'pfcwd stop', as GCU refuses the
            # PFC_WD table: _driver.split) and no lossless PG of the RoCE class (BUFFER_PG, traditional or dynamic)
            lines.append(_remove(["PFC_WD", name]))
            lines.append(_remove(["BUFFER_PG", "%s|%d" % (name, ecn_queue)]))
        if watchdog["enabled"] and prios:
            lines.append(_op(["PFC_WD", name, "action"], str(watchdog["action"])))
            lines.append(_op(["PFC_WD", name, "detection_time"], str(int(watchdog["detection_time_ms"]))))
            lines.append(_op(["PFC_WD", name, "restoration_time"], str(int(watchdog["restoration_time_ms"]))))
        lines.append(_op(["CABLE_LENGTH", v.CABLE_LENGTH_KEY, name], "%dm" % int(port["cable_length_m"])))
        room = port.get("headroom") or {}
        if model == "traditional" and prios:
            # buffermgrd (sonic-swss cfgmgr/buffermgr.cpp doSpeedUpdateTask) points BUFFER_PG at
            # pg_lossless_<speed>_<cable>_profile on every PORT change and creates that profile only when absent:
            # a profile of that name with the plan's headroom survives, any other name is replaced.
            speed = _base.speed_g(port.get("speed"))
            if not speed or not speed.endswith("G"):
                raise ValueError("port %s: speed %r is not a speed in G (the lossless profile is named by it)" % (name, port.get("speed")))
            profile = "pg_lossless_%d_%dm_profile" % (int(speed[:-1]) * 1000, int(port["cable_length_m"]))
            for field, value in (("pool", v.LOSSLESS_POOL), ("size", str(int(room["size_bytes"]))), ("xoff", str(int(room["xoff_bytes"]))),
                                 ("xon", str(int(room["xon_bytes"]))), ("dynamic_th", v.LOSSLESS_DYNAMIC_TH)):
                line = _op(["BUFFER_PROFILE", profile, field], value)
                if line not in lines:
                    lines.append(line)
        else:
            profile = "NULL"  # the dynamic model: the switch computes the headroom (dynamic buffer HLD)
        for run in _runs(prios):
            lines.append(_op(["BUFFER_PG", "%s|%s" % (name, _pg(run)), "profile"], profile))
    for line in lines:
        _base.check_cli_line("sonic render", line)
    return lines


def running_of(lines: list[str]) -> str:
    """The CONFIG_DB JSON of a switch holding exactly the rendered leaves (and one PORT entry each)."""
    doc: dict[str, dict] = {}
    for (table, key, field), value in _leaves(lines):
        doc.setdefault(table, {}).setdefault(key, {})[field] = value
    doc.setdefault("PORT", {})
    if _vendor_sonic.STOCK_WRED_PROFILE in doc.get("WRED_PROFILE", {}):
        # the stock profile's template fields (qos_config.j2), which the plan leaves as they are
        doc["WRED_PROFILE"][_vendor_sonic.STOCK_WRED_PROFILE].update(ecn=_vendor_sonic.ECN_MODE, wred_green_enable="true")
    return json.dumps(doc, indent=4, sort_keys=True)
