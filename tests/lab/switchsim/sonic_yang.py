# SPDX-License-Identifier: GPL-3.0-or-later
"""The SONiC YANG checks the simulator enforces on CONFIG_DB (SONiC 202505).

Each table below is transcribed from sonic-net/sonic-buildimage branch 202505
(ff3c0c9f686a), src/sonic-yang-models/yang-models/sonic-<table>.yang and
yang-templates/sonic-types.yang.j2: field names, types, ranges, patterns (YANG patterns
match the whole value), enumerations, mandatory leaves, leafrefs and must conditions.
Only these tables are modelled; a patch that touches any other table is refused the way
GCU refuses a table without a YANG model (docs/vendor-sonic.md "Simulator").

Errors are raised as YangError(text) with libyang 1's message forms as SONiC prints them
(sonic_yang_ext.py loadData: "Data Loading Failed\\n<libyang message>"; a public capture in
sonic-net/sonic-buildimage issue 19485 shows the pattern form). Where a leaf has an
error-message in its YANG, libyang prints that text instead (the YANG files' own words).
"""
from __future__ import annotations

import re
from typing import Any


class YangError(Exception):
    """One YANG violation: str() is the text SONiC prints after 'Data Loading Failed\\n'."""


# --- leaf types -----------------------------------------------------------------------------
# ("uint", lo, hi, emsg) | ("int", lo, hi, emsg) | ("pattern", regex, emsg) | ("enum", values)
# | ("string", min_len, max_len, emsg) | ("leafref", table, yang_path) | ("union", [types])
# | ("bool",)  (YANG boolean: true|false)

MAP_NAME = ("pattern", "[a-zA-Z0-9]{1}([-a-zA-Z0-9_]{0,31})", None)
TC = ("uint", 0, 15, "Invalid Traffic Class")                     # stypes:tc_type
DSCP = ("pattern", "6[0-3]|[1-5][0-9]?|[0-9]?", "Invalid DSCP")
PRIO_LIST = ("pattern", "([0-7](,[0-7])*)?", None)                # PORT_QOS_MAP pfc_enable
U64 = ("uint", 0, 18446744073709551615, None)
U32 = ("uint", 0, 4294967295, None)
BOOL = ("bool",)


def _ref(table: str, module: str, prefix: str) -> tuple:
    return ("leafref", table, f"/{prefix}:{module}/{prefix}:{table}/{prefix}:{table}_LIST/{prefix}:name")


PORT_REF = _ref("PORT", "sonic-port", "port")

# Type 1 maps (sonic_yang_ext Type_1_list_maps_model): CONFIG_DB {name: {key: value}}.
TYPE1_MAPS: dict[str, dict] = {
    # sonic-dscp-tc-map.yang
    "DSCP_TO_TC_MAP": {"key": ("dscp", DSCP), "value": ("tc", TC)},
    # sonic-tc-queue-map.yang
    "TC_TO_QUEUE_MAP": {"key": ("tc", TC), "value": ("qindex", ("pattern", "[0-9]?", "Invalid queue index"))},
    # sonic-tc-priority-group-map.yang
    "TC_TO_PRIORITY_GROUP_MAP": {"key": ("tc", TC), "value": ("pg", ("pattern", "[0-7]?", "Invalid Priority Group"))},
    # sonic-pfc-priority-queue-map.yang
    "MAP_PFC_PRIORITY_TO_QUEUE": {"key": ("pfc_priority", ("pattern", "[0-7]?", "Invalid pfc priority")),
                                  "value": ("qindex", ("pattern", "[0-7]?", "Invalid queue index"))},
    # sonic-pfc-priority-priority-group-map.yang
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": {"key": ("pfc_priority", ("pattern", "[0-7]?", "Invalid pfc priority")),
                                           "value": ("pg", ("pattern", "[0-7]?", "Invalid Priority Group"))},
    # sonic-dot1p-tc-map.yang
    "DOT1P_TO_TC_MAP": {"key": ("dot1p", ("pattern", "[0-7]?", "Invalid DOT1P")), "value": ("tc", TC)},
    # sonic-tc-dscp-map.yang
    "TC_TO_DSCP_MAP": {"key": ("tc", TC), "value": ("dscp", DSCP)},
    # sonic-cable-length.yang (key: a PORT name)
    "CABLE_LENGTH": {"name": ("pattern", "[a-zA-Z0-9]{1}([-a-zA-Z0-9_]{0,31})", "Invalid cable length list name."),
                     "key": ("port", ("leafref", "PORT", "/port:sonic-port/port:PORT/port:PORT_LIST/port:name")),
                     "value": ("length", ("pattern", "[0-9]+m", "Invalid cable length."))},
}
TYPE1_MODULE = {"DSCP_TO_TC_MAP": ("sonic-dscp-tc-map", "dtm"), "TC_TO_QUEUE_MAP": ("sonic-tc-queue-map", "tqm"),
                "TC_TO_PRIORITY_GROUP_MAP": ("sonic-tc-priority-group-map", "tpgm"),
                "MAP_PFC_PRIORITY_TO_QUEUE": ("sonic-pfc-priority-queue-map", "ppqm"),
                "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": ("sonic-pfc-priority-priority-group-map", "pppgm"),
                "DOT1P_TO_TC_MAP": ("sonic-dot1p-tc-map", "dot1ptm"), "TC_TO_DSCP_MAP": ("sonic-tc-dscp-map", "tdm"),
                "CABLE_LENGTH": ("sonic-cable-length", "cable-length")}


def _map_ref(table: str) -> tuple:
    module, prefix = TYPE1_MODULE[table]
    return _ref(table, module, prefix)


# Lists: {"keys": [(name, type)], "fields": {name: type}, "mandatory": [...], "musts": [fn]}
LISTS: dict[str, dict] = {
    # sonic-port.yang (202505: speed 1..800000)
    "PORT": {
        "keys": [("name", ("string", 1, 128, None))],
        "fields": {
            "alias": ("string", 1, 128, None), "lanes": ("string", 1, 128, None),
            "description": ("string", 0, 255, None), "speed": ("uint", 1, 800000, None),
            "mtu": ("uint", 68, 9216, None), "admin_status": ("enum", ("up", "down")),
            "index": ("uint", 0, 65535, None), "fec": ("pattern", "rs|fc|none|auto", None),
            "autoneg": ("pattern", "on|off", None), "link_training": ("pattern", "on|off", None),
            "pfc_asym": ("pattern", "on|off", None), "role": ("pattern", "Ext|Int|Inb|Rec|Dpc", None),
            "subport": ("uint", 0, 8, None), "dhcp_rate_limit": U32, "asic_port_name": ("string", 0, None, None),
            "tpid": ("pattern", "0x8100|0x9100|0x9200|0x88a8|0x88A8", None),
            "dom_polling": ("enum", ("enabled", "disabled")), "mux_cable": BOOL, "fast_linkup": BOOL,
            "core_id": ("string", 1, 16, None), "core_port_id": ("string", 1, 16, None),
            "num_voq": ("string", 1, 16, None),
        },
        "mandatory": ["lanes", "speed"],
    },
    # sonic-port-qos-map.yang
    "PORT_QOS_MAP": {
        "keys": [("ifname", ("union", [("pattern", "global", None), PORT_REF]))],
        "fields": {
            "tc_to_pg_map": _map_ref("TC_TO_PRIORITY_GROUP_MAP"), "tc_to_queue_map": _map_ref("TC_TO_QUEUE_MAP"),
            "pfc_enable": PRIO_LIST, "pfcwd_sw_enable": PRIO_LIST,
            "pfc_to_queue_map": _map_ref("MAP_PFC_PRIORITY_TO_QUEUE"),
            "pfc_to_pg_map": _map_ref("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"),
            "dscp_to_tc_map": _map_ref("DSCP_TO_TC_MAP"), "tc_to_dscp_map": _map_ref("TC_TO_DSCP_MAP"),
            "dot1p_to_tc_map": _map_ref("DOT1P_TO_TC_MAP"),
            "scheduler": _ref("SCHEDULER", "sonic-scheduler", "sch"),
        },
    },
    # sonic-wred-profile.yang
    "WRED_PROFILE": {
        "keys": [("name", MAP_NAME)],
        "fields": {
            **{f"{c}_{m}_threshold": U64 for c in ("green", "yellow", "red") for m in ("min", "max")},
            "ecn": ("enum", ("ecn_none", "ecn_green", "ecn_yellow", "ecn_red", "ecn_green_yellow",
                             "ecn_green_red", "ecn_yellow_red", "ecn_all")),
            **{f"wred_{c}_enable": BOOL for c in ("green", "yellow", "red")},
            **{f"{c}_drop_probability": ("uint", 0, 100, None) for c in ("green", "yellow", "red")},
        },
    },
    # sonic-scheduler.yang
    "SCHEDULER": {
        "keys": [("name", ("string", 0, None, None))],
        "fields": {"type": ("enum", ("DWRR", "WRR", "STRICT")), "weight": ("uint", 1, 100, None),
                   "priority": ("uint", 0, 9, None), "meter_type": ("enum", ("packets", "bytes")),
                   "cir": U64, "pir": U64, "cbs": U32, "pbs": U32},
    },
    # sonic-queue.yang (QUEUE_LIST; DEVICE_METADATA switch_type is not voq here)
    "QUEUE": {
        "keys": [("ifname", ("union", [PORT_REF, ("pattern", "CPU", None)])), ("qindex", ("string", 0, None, None))],
        "fields": {"scheduler": _ref("SCHEDULER", "sonic-scheduler", "sch"),
                   "wred_profile": _ref("WRED_PROFILE", "sonic-wred-profile", "wrd")},
    },
    # sonic-pfcwd.yang (202505: POLL_INTERVAL 100..3000, no pfc_stat_history)
    "PFC_WD": {
        "keys": [("ifname", ("union", [PORT_REF, ("pattern", "GLOBAL", "Invalid interface name")]))],
        "fields": {"action": ("enum", ("drop", "forward", "alert")),
                   "detection_time": ("uint", 100, 5000, None), "restoration_time": ("uint", 100, 60000, None),
                   "POLL_INTERVAL": ("uint", 100, 3000, None)},
    },
    # sonic-buffer-pool.yang
    "BUFFER_POOL": {
        "keys": [("name", ("string", 0, None, None))],
        "fields": {"type": ("enum", ("ingress", "egress", "both")), "mode": ("enum", ("static", "dynamic")),
                   "size": U64, "xoff": U64, "percentage": ("uint", 0, 255, None)},
        "mandatory": ["type", "mode"],
    },
    # sonic-buffer-profile.yang
    "BUFFER_PROFILE": {
        "keys": [("name", ("string", 0, None, None))],
        "fields": {"static_th": U64, "dynamic_th": ("int", -8, 7, None), "size": U64,
                   "pool": _ref("BUFFER_POOL", "sonic-buffer-pool", "bpl"), "xon_offset": U64, "xon": U64,
                   "xoff": U64, "headroom_type": ("enum", ("static", "dynamic")),
                   "packet_discard_action": ("enum", ("drop", "trim"))},
        "mandatory": ["size", "pool"],
    },
    # sonic-buffer-pg.yang
    "BUFFER_PG": {
        "keys": [("port", PORT_REF), ("pg_num", ("pattern", "[0-7]((-)[0-7])?", "Invalid Buffer PG number"))],
        "fields": {"profile": ("union", [_ref("BUFFER_PROFILE", "sonic-buffer-profile", "bpf"), ("pattern", "NULL", None)])},
    },
}

# sonic-device_metadata.yang: DEVICE_METADATA is a container with one container 'localhost'.
DEVICE_METADATA_FIELDS: dict[str, tuple] = {
    "hwsku": ("string", 1, 255, None), "hostname": ("string", 1, 63, None), "platform": ("string", 1, 255, None),
    "mac": ("pattern", "[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}", None),
    "default_bgp_status": ("enum", ("up", "down")), "default_pfcwd_status": ("enum", ("disable", "enable")),
    "bgp_asn": ("string", 0, None, None), "deployment_id": U32,
    "docker_routing_config_mode": ("pattern", "separated|unified|split|split-unified", None),
    "type": ("pattern", "ToRRouter|LeafRouter|SpineChassisFrontendRouter|ChassisBackendRouter|ASIC|MgmtToRRouter|"
             "MgmtLeafRouter|MgmtSpineRouter|MgmtAccessRouter|LowerMgmtAggregator|UpperMgmtAggregator|SpineRouter|"
             "UpperSpineRouter|FabricSpineRouter|BackEndToRRouter|BackEndLeafRouter|EPMS|MgmtTsToR|BmcMgmtToRRouter|"
             "SonicHost|SmartSwitchDPU|not-provisioned", None),
    "buffer_model": ("pattern", "dynamic|traditional", None),
    "synchronous_mode": ("enum", ("enable", "disable")), "yang_config_validation": ("enum", ("enable", "disable")),
    "timezone": ("string", 1, 255, None), "region": ("string", 0, None, None), "cloudtype": ("string", 0, None, None),
}

MODELLED_TABLES = frozenset(["DEVICE_METADATA", *LISTS, *TYPE1_MAPS])


def _constraint(value: str, restriction: str, emsg: str | None) -> YangError:
    # libyang 1 LYE_NOCONSTR, replaced by the restriction's error-message when the YANG has one.
    return YangError(emsg or f'Value "{value}" does not satisfy the constraint "{restriction}" (range, length, or pattern).')


def _invalid(value: str, leaf: str) -> YangError:
    # libyang 1 LYE_INVAL (enumeration / union / boolean / number out of the base type) -- wording unverified
    return YangError(f'Invalid value "{value}" in "{leaf}" element.')


def check_leaf(ltype: tuple, value: Any, leaf: str, config: dict) -> None:
    """Raise YangError when `value` (CONFIG_DB form, stringified as sonic_yang_ext does) is not of `ltype`."""
    text = str(value)
    kind = ltype[0]
    if kind in ("uint", "int"):
        lo, hi, emsg = ltype[1], ltype[2], ltype[3]
        if not re.fullmatch(r"[+-]?\d+", text.strip()):
            # sonic_yang_ext _yangConvert: int(val, 10) raises first for uint leaves
            raise ValueError(f"invalid literal for int() with base 10: {text!r}")
        number = int(text)
        if kind == "uint" and number < 0:
            raise _invalid(text, leaf)
        if not lo <= number <= hi:
            raise _constraint(text, f"{lo}..{hi}", emsg)
        return
    if kind == "pattern":
        if not re.fullmatch(ltype[1], text):
            raise _constraint(text, ltype[1], ltype[2])
        return
    if kind == "enum":
        if text not in ltype[1]:
            raise _invalid(text, leaf)
        return
    if kind == "bool":
        if text not in ("true", "false"):
            raise _invalid(text, leaf)
        return
    if kind == "string":
        lo, hi, emsg = ltype[1], ltype[2], ltype[3]
        if len(text) < lo or (hi is not None and len(text) > hi):
            raise _constraint(text, f"{lo}..{hi}", emsg)
        return
    if kind == "leafref":
        if text not in (config.get(ltype[1]) or {}):
            raise YangError(f'Leafref "{ltype[2]}" of value "{text}" points to a non-existing leaf.')
        return
    if kind == "union":
        for member in ltype[1]:
            try:
                check_leaf(member, value, leaf, config)
                return
            except (YangError, ValueError):
                continue
        raise _invalid(text, leaf)
    raise AssertionError(kind)


class NotParsed(Exception):
    """A key sonic_yang_ext could not translate (unknown field, non-number in a uint)."""


def validate(config: dict) -> None:
    """YANG-check the modelled tables of a CONFIG_DB dict. Raises YangError (libyang's words) or
    NotParsed(table, keys, exceptions) (sonic_yang_ext's 'All Keys are not parsed')."""
    for table in sorted(config):
        if table not in MODELLED_TABLES:
            continue
        rows = config[table]
        if not isinstance(rows, dict):
            raise YangError(f'Invalid value "{rows}" in "{table}" element.')
        if table == "DEVICE_METADATA":
            _check_metadata(rows, config)
        elif table in TYPE1_MAPS:
            _check_type1(table, rows, config)
        else:
            _check_list(table, rows, config)
    _musts(config)


def _check_metadata(rows: dict, config: dict) -> None:
    bad = [k for k in rows if k != "localhost"]
    errors = []
    for key, fields in rows.items():
        if key != "localhost" or not isinstance(fields, dict):
            continue
        for field, value in fields.items():
            if field not in DEVICE_METADATA_FIELDS:
                errors.append(repr(field))
                bad.append(key)
                continue
            check_leaf(DEVICE_METADATA_FIELDS[field], value, field, config)
    if bad:
        raise NotParsed("DEVICE_METADATA", sorted(set(bad)), errors)


def _check_type1(table: str, rows: dict, config: dict) -> None:
    spec = TYPE1_MAPS[table]
    for name, entries in rows.items():
        check_leaf(spec.get("name", MAP_NAME), name, "name", config)
        if not isinstance(entries, dict):
            raise _invalid(str(entries), spec["key"][0])
        for key, value in entries.items():
            check_leaf(spec["key"][1], key, spec["key"][0], config)
            check_leaf(spec["value"][1], value, spec["value"][0], config)


def _check_list(table: str, rows: dict, config: dict) -> None:
    spec = LISTS[table]
    keys = spec["keys"]
    not_parsed: list[str] = []
    errors: list[str] = []
    for pkey, fields in rows.items():
        parts = pkey.split("|")
        if len(parts) != len(keys):
            not_parsed.append(pkey)
            errors.append(f"Value not found for {[k for k, _t in keys]} in {pkey}")
            continue
        for (kname, ktype), part in zip(keys, parts):
            check_leaf(ktype, part, kname, config)
        if not isinstance(fields, dict):
            raise _invalid(str(fields), table)
        unknown = False
        for field, value in fields.items():
            if field not in spec["fields"]:
                # sonic_yang_ext _findYangTypedValue: leafDict[key] -> KeyError(field)
                errors.append(repr(field))
                unknown = True
                continue
            try:
                check_leaf(spec["fields"][field], value, field, config)
            except ValueError as exc:
                errors.append(str(exc))
                unknown = True
        if unknown:
            not_parsed.append(pkey)
            continue
        for leaf in spec.get("mandatory", []):
            if leaf not in fields:
                # libyang 1 LYE_MISSELEM -- wording unverified
                raise YangError(f'Missing required element "{leaf}" in "{table}_LIST".')
    if not_parsed:
        raise NotParsed(table, not_parsed, errors)


def _musts(config: dict) -> None:
    """The must statements of the modelled tables (their error-message when the YANG gives one,
    else libyang 1's 'Must condition "..." not satisfied.')."""
    for row in (config.get("WRED_PROFILE") or {}).values():
        for colour in ("green", "yellow", "red"):   # sonic-wred-profile.yang
            lo, hi = row.get(f"{colour}_min_threshold"), row.get(f"{colour}_max_threshold")
            if hi is not None and lo is not None and int(hi) < int(lo):
                raise YangError(f"{colour.capitalize()} max threshold must be greater than or equal to min threshold")
    for row in (config.get("SCHEDULER") or {}).values():  # sonic-scheduler.yang
        cir = int(row["cir"]) if "cir" in row else None
        if "pir" in row:
            if not cir:
                raise YangError("pir can't be configured without cir.")
            if int(row["pir"]) < cir:
                raise YangError("pir must be greater than or equal to cir")
        if "cbs" in row and not cir:
            raise YangError("cbs can't be configured without cir.")
        if "pbs" in row and not int(row.get("pir", 0) or 0):
            raise YangError("pbs can't be configured without pir.")
    pfcwd = config.get("PFC_WD") or {}
    poll = (pfcwd.get("GLOBAL") or {}).get("POLL_INTERVAL")
    for ifname, row in pfcwd.items():  # sonic-pfcwd.yang
        for leaf in ("action", "detection_time", "restoration_time"):
            if leaf in row and ifname == "GLOBAL":
                raise YangError("Must condition \"../ifname != 'GLOBAL'\" not satisfied.")
        if "POLL_INTERVAL" in row and ifname != "GLOBAL":
            raise YangError("Must condition \"../ifname = 'GLOBAL'\" not satisfied.")
        if poll is not None:
            for leaf in ("detection_time", "restoration_time"):
                if leaf in row and int(row[leaf]) < int(poll):
                    raise YangError(f"{leaf} must be greater than or equal to POLL_INTERVAL")
    model = ((config.get("DEVICE_METADATA") or {}).get("localhost") or {}).get("buffer_model")
    for row in (config.get("BUFFER_POOL") or {}).values():  # sonic-buffer-pool.yang
        if "percentage" in row:
            if "size" in row:
                raise YangError("Percentage should not be configured along with size")
            if model != "dynamic":
                raise YangError("Percentage must be configured in dynamic buffer model")
