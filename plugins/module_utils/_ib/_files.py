# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Strict offline checks of the three OpenSM files the opensm role writes (pure).

OpenSM 3.3.23 has no "check the configuration" mode: opensm.conf can be
parsed with ``opensm -F FILE -c OUT`` (the role does that too, where opensm
is installed), but partitions.conf and qos-policy.conf are only read by a
running SM, which logs errors and carries on with a default.  So these
parsers accept exactly the grammar of linux-rdma/opensm doc/partition-config.txt
and doc/QoS_management_in_OpenSM.txt (host-ib-k8s.md b.1-b.3) that the plan
produces, and refuse everything else with the file, line and value.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._ib import _facts as _ib
from ansible_collections.lossless.fabric.plugins.module_utils._ib._opensm import MEMBER_KEYWORDS, MEMBERSHIPS, PARTITIONS_LINE_MAX, ROUTING_ENGINES

# opensm.conf keys the role owns -> value check.  Keys only read at start
# (opensm's opt_tbl can_update 0): a change needs a restart, not SIGHUP.
RESTART_KEYS: tuple[str, ...] = ("routing_engine", "root_guid_file", "partition_config_file", "qos_policy_file", "log_file")
_PATH_RE = re.compile(r"/[^\s#;]*")
_SL2VL_RE = re.compile(r"(\d{1,2})(,\d{1,2}){15}")
_VLARB_RE = re.compile(r"\d{1,2}:\d{1,3}(,\d{1,2}:\d{1,3}){0,63}")
_GUID_RE = re.compile(r"0x[0-9A-Fa-f]{1,16}")
_NAME_RE = re.compile(r"[A-Za-z0-9_.\-]+")
_PKEY_RE = re.compile(r"0x[0-9A-Fa-f]{1,4}")
_RATE_CODES = frozenset(range(2, 23))


def _int_in(low: int, high: int):
    def check(value: str) -> str | None:
        if not re.fullmatch(r"\d+", value) or not low <= int(value) <= high:
            return "not an integer %d-%d" % (low, high)
        return None
    return check


def _engines(value: str) -> str | None:
    bad = [e for e in value.split(",") if e not in ROUTING_ENGINES]
    return "unknown routing engine %s (OpenSM 3.3.23 has %s)" % (", ".join(map(repr, bad)), ", ".join(ROUTING_ENGINES)) if bad else None


def _sl2vl(value: str) -> str | None:
    if not _SL2VL_RE.fullmatch(value) or any(int(v) > 15 for v in value.split(",")):
        return "not 16 comma-separated VLs 0-15 (one per SL)"
    return None


def _vlarb(value: str) -> str | None:
    if not _VLARB_RE.fullmatch(value):
        return "not a comma list of VL:weight"
    for item in value.split(","):
        vl, weight = (int(x) for x in item.split(":"))
        if vl > 14 or weight > 255:
            return "%r: VL 0-14, weight 0-255" % item
    return None


def _path(value: str) -> str | None:
    return None if _PATH_RE.fullmatch(value) else "not an absolute path without blanks"


OPENSM_KEYS: dict[str, Any] = {
    "routing_engine": _engines,
    "sm_priority": _int_in(0, 15),
    "lmc": _int_in(0, 7),
    "qos": lambda v: None if v in ("TRUE", "FALSE") else "not TRUE or FALSE",
    "qos_max_vls": _int_in(1, 15),
    "qos_high_limit": _int_in(0, 255),
    "qos_vlarb_high": _vlarb,
    "qos_vlarb_low": _vlarb,
    "qos_ca_sl2vl": _sl2vl,
    "qos_swe_sl2vl": _sl2vl,
    "qos_sl2vl": _sl2vl,
    "partition_config_file": _path,
    "qos_policy_file": _path,
    "root_guid_file": _path,
    "log_file": _path,
    "log_flags": lambda v: None if re.fullmatch(r"0x[0-9a-fA-F]{1,2}", v) else "not a hex byte like 0x03",
    "log_max_size": _int_in(0, 2**32 - 1),
}


def parse_opensm_conf(text: str) -> dict[str, str]:
    """``key value`` lines (comments and blanks skipped); the last one wins, as in OpenSM."""
    out = {}
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            key, _sep, value = line.partition(" ")
            out[key] = value.strip()
    return out


def check_opensm_conf(text: str, name: str = "opensm.conf") -> list[str]:
    errors = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _sep, value = line.partition(" ")
        value = value.strip()
        where = "%s line %d" % (name, number)
        if key not in OPENSM_KEYS:
            errors.append("%s: %r is not a key lossless.fabric writes (%s)" % (where, key, ", ".join(sorted(OPENSM_KEYS))))
            continue
        if key in seen:
            errors.append("%s: %s repeats line %d" % (where, key, seen[key]))
        seen[key] = number
        problem = OPENSM_KEYS[key](value)
        if problem:
            errors.append("%s: %s %r: %s" % (where, key, value, problem))
    return errors


def _strip_comment(line: str) -> str:
    return line.split("#", 1)[0]


def _statements(text: str) -> list[tuple[int, str]]:
    """partitions.conf statements (``;``-terminated, may span lines) with their first line number."""
    out = []
    buf, start = "", None
    for number, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw)
        while ";" in line:
            head, line = line.split(";", 1)
            if (buf + head).strip():
                out.append((start or number, (buf + " " + head).strip()))
            buf, start = "", None
        if line.strip():
            buf += " " + line
            start = start or number
    if buf.strip():
        out.append((start or 0, "\x00" + buf.strip()))   # marker: no terminating ';'
    return out


_PART_FLAGS = {
    "mtu": _int_in(1, 5), "rate": lambda v: None if v.isdigit() and int(v) in _RATE_CODES else "not an IBTA rate code 2-22",
    "sl": _int_in(0, 15), "scope": _int_in(1, 15), "defmember": lambda v: None if v in MEMBERSHIPS else "not full, limited or both",
    "Q_Key": lambda v: None if re.fullmatch(r"0x[0-9a-fA-F]{1,8}", v) else "not a hex Q_Key",
    "TClass": _int_in(0, 255), "FlowLabel": _int_in(0, 0xFFFFF),
}


def check_partitions_conf(text: str, known_guids: set[str] | None = None, name: str = "partitions.conf") -> list[str]:
    errors: list[str] = []
    pkeys: dict[int, int] = {}
    names: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) > PARTITIONS_LINE_MAX:
            errors.append("%s line %d: %d characters, over the %d OpenSM reads whole (fgets into a 4096-byte buffer): split the "
                          "members over several lines" % (name, number, len(line), PARTITIONS_LINE_MAX))
    for number, statement in _statements(text):
        where = "%s line %d" % (name, number)
        if statement.startswith("\x00"):
            errors.append("%s: %r does not end with ';'" % (where, statement[1:]))
            continue
        header, sep, members = statement.partition(":")
        if not sep:
            errors.append("%s: %r has no ':' between the partition and its members" % (where, statement))
            continue
        errors += _check_header(header, where, pkeys, names, number)
        errors += _check_members(members, where, known_guids)
    return errors


def _check_header(header: str, where: str, pkeys: dict, names: dict, number: int) -> list[str]:
    errors = []
    items = [i.strip() for i in header.split(",")]
    pname, _eq, pkey = items[0].partition("=")
    if not _NAME_RE.fullmatch(pname):
        errors.append("%s: %r is not a partition name" % (where, pname))
    elif pname in names:
        errors.append("%s: partition name %r repeats line %d" % (where, pname, names[pname]))
    else:
        names[pname] = number
    if not pkey:
        errors.append("%s: partition %r has no P_Key (OpenSM would pick one)" % (where, pname))
    elif not _PKEY_RE.fullmatch(pkey) or int(pkey, 16) & 0x7FFF == 0:
        errors.append("%s: %r is not a P_Key (0x0001-0x7fff, bit 15 = membership)" % (where, pkey))
    elif int(pkey, 16) & 0x7FFF in pkeys:
        errors.append("%s: P_Key %s repeats line %d (bit 15 is not part of the key)" % (where, pkey, pkeys[int(pkey, 16) & 0x7FFF]))
    else:
        pkeys[int(pkey, 16) & 0x7FFF] = number
    for flag in items[1:]:
        key, eq, value = flag.partition("=")
        if not eq and key in ("ipoib", "indx0"):
            continue
        check = _PART_FLAGS.get(key)
        if check is None or not eq:
            errors.append("%s: %r is not a partition flag (ipoib, indx0, %s)" % (where, flag, ", ".join("%s=" % k for k in _PART_FLAGS)))
            continue
        problem = check(value)
        if problem:
            errors.append("%s: %s=%s: %s" % (where, key, value, problem))
    return errors


def _check_members(members: str, where: str, known_guids: set[str] | None) -> list[str]:
    errors = []
    items = [m.strip() for m in members.split(",")]
    if items == [""]:
        return ["%s: no members" % where]
    for item in items:
        who, eq, membership = item.partition("=")
        who = who.strip()
        if eq and membership.strip() not in MEMBERSHIPS:
            errors.append("%s: member %r: %r is not full, limited or both" % (where, who, membership))
        if who in MEMBER_KEYWORDS:
            continue
        if not _GUID_RE.fullmatch(who):
            errors.append("%s: %r is not a port GUID or one of %s" % (where, who, ", ".join(MEMBER_KEYWORDS)))
        elif known_guids is not None and _ib.guid(who) not in known_guids:
            errors.append("%s: member %s is not a port in the fabric" % (where, _ib.guid(who)))
    return errors


_LEVEL_FIELDS = {"name", "use", "sl", "mtu-limit", "rate-limit", "packet-life", "path-bits", "pkey"}
_RULE_FIELDS = {"use", "qos-class", "source", "destination", "service-id", "pkey", "qos-level-name"}


def check_qos_policy(text: str, name: str = "qos-policy.conf") -> list[str]:
    """The full policy form (qos-levels, qos-match-rules); a DEFAULT level is mandatory."""
    errors: list[str] = []
    levels: dict[str, int] = {}
    rules: list[tuple[int, dict]] = []
    stack: list[str] = []
    block: dict[str, Any] = {}
    opens = {"qos-levels": None, "qos-level": "qos-levels", "qos-match-rules": None, "qos-match-rule": "qos-match-rules"}
    for number, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw).strip()
        where = "%s line %d" % (name, number)
        if not line:
            continue
        if line in opens:
            if (stack[-1] if stack else None) != opens[line]:
                errors.append("%s: %r is not allowed here (inside %s)" % (where, line, stack[-1] if stack else "nothing"))
            stack.append(line)
            block = {"_line": number}
        elif line.startswith("end-"):
            if not stack or stack[-1] != line[4:]:
                errors.append("%s: %r closes %s" % (where, line, stack[-1] if stack else "nothing"))
                continue
            closed = stack.pop()
            if closed == "qos-level":
                errors += _close_level(block, name, levels)
            elif closed == "qos-match-rule":
                rules.append((block["_line"], block))
        elif stack and stack[-1] in ("qos-level", "qos-match-rule"):
            errors += _field(line, where, block, _LEVEL_FIELDS if stack[-1] == "qos-level" else _RULE_FIELDS)
        else:
            errors.append("%s: %r is not part of the policy form lossless.fabric writes (qos-levels, qos-match-rules)" % (where, line))
    if stack:
        errors.append("%s: %s is not closed (end-%s missing)" % (name, stack[-1], stack[-1]))
    if "default" not in levels:
        errors.append("%s: no DEFAULT qos-level: OpenSM needs one (ERR AC10) and silently misapplies the policy" % name)
    for number, rule in rules:
        level = rule.get("qos-level-name")
        if level is None:
            errors.append("%s line %d: qos-match-rule without qos-level-name" % (name, number))
        elif level.lower() not in levels:
            errors.append("%s line %d: qos-level-name %r is not a defined qos-level" % (name, number, level))
        for pkey in (rule.get("pkey") or "").split(","):
            if pkey.strip() and not _PKEY_RE.fullmatch(pkey.strip()):
                errors.append("%s line %d: pkey %r is not a P_Key" % (name, number, pkey.strip()))
    return errors


def _field(line: str, where: str, block: dict, allowed: set[str]) -> list[str]:
    key, sep, value = line.partition(":")
    key, value = key.strip(), value.strip()
    if not sep or key not in allowed:
        return ["%s: %r is not a field here (%s)" % (where, line, ", ".join(sorted(allowed)))]
    if key == "sl" and _int_in(0, 15)(value):
        return ["%s: sl %r is not 0-15" % (where, value)]
    block[key] = value
    return []


def _close_level(block: dict, name: str, levels: dict) -> list[str]:
    level = block.get("name")
    if not level:
        return ["%s line %d: qos-level without a name" % (name, block["_line"])]
    if "sl" not in block:
        return ["%s line %d: qos-level %r without sl" % (name, block["_line"], level)]
    if level.lower() in levels:
        return ["%s line %d: qos-level %r repeats line %d" % (name, block["_line"], level, levels[level.lower()])]
    levels[level.lower()] = block["_line"]
    return []


def check_files(files: dict[str, str], known_guids: set[str] | None = None) -> list[str]:
    """All problems of the rendered files (keys: opensm_conf, partitions_conf, qos_policy_conf)."""
    errors = []
    if files.get("opensm_conf") is not None:
        errors += check_opensm_conf(files["opensm_conf"])
    if files.get("partitions_conf") is not None:
        errors += check_partitions_conf(files["partitions_conf"], known_guids)
    if files.get("qos_policy_conf") is not None:
        errors += check_qos_policy(files["qos_policy_conf"])
    return errors


def needs_restart(before: str | None, after: str) -> list[str]:
    """Keys (of RESTART_KEYS) whose value differs between two opensm.conf texts: SIGHUP does not apply them."""
    old = parse_opensm_conf(before or "")
    new = parse_opensm_conf(after)
    return [key for key in RESTART_KEYS if old.get(key) != new.get(key)]
