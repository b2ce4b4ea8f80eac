# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Juniper Junos readers: the configuration in either form Junos prints (braces or 'display set'):
set_lines, parse (the gathered shape), missing_lines (the rendered 'set' lines it does not carry);
and the per-port counter and link show outputs. Pure: no device; the driver (_driver.py) runs the
commands. Every form with its Juniper source: docs/vendor-junos.md.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import xml.etree.ElementTree as ET
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos._vendor import L2_OVERHEAD_BYTES

# Junos defaults when the watchdog is on without options (Juniper "PFC Watchdog": the page _render.py cites).
WATCHDOG_DEFAULT_POLL_MS = 100
WATCHDOG_DEFAULT_POLLS = 2
WATCHDOG_DEFAULT_RECOVERY_MS = 200


# ---------------------------------------------------------------------------
# display set text -> tokens
# ---------------------------------------------------------------------------


def _tokens(line: str) -> list[str]:
    """Tokens of one set/delete line: quotes removed, ``[ a b ]`` kept as brackets."""
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def _atoms(line: str) -> list[tuple[str, ...]]:
    """A line as atomic statements: ``x fill-level [ 10 50 ]`` -> ``x fill-level 10``, ``x fill-level 50``.
    Junos' own ``display set`` prints one line per leaf-list value; the simulator prints the brackets."""
    toks = _tokens(line)
    if "[" in toks and toks[-1] == "]":
        start = toks.index("[")
        return [tuple(toks[:start] + [value]) for value in toks[start + 1 : -1]]
    return [tuple(toks)]


def _statements(running: str) -> set[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    for line in set_lines(running):
        out.update(_atoms(line))
    return out


# ---------------------------------------------------------------------------
# the two forms Junos prints: hierarchical (show configuration) and display set
# ---------------------------------------------------------------------------
FORMS = "Junos configuration as 'show configuration' prints it (braces) or 'show configuration | display set'"
# Lines a pasted capture carries around the configuration: the CLI prompt with its command,
# {master:0} / {primary:node0} context lines, [edit ...] banners.
_NOISE_RE = re.compile(r"^(\S+@\S+[>#].*|\{(master|backup|primary|secondary|line|linecard)[^}]*\}|\[edit[^\]]*\])$")


def _brace_tokens(text: str) -> list[str]:
    """Tokens of the hierarchical form: words, quoted strings (quotes kept), ``{ } ; [ ]``;
    ``/* */`` and ``#`` comments dropped (Junos prints annotations and '## Last commit')."""
    toks: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ValueError("junos: an unterminated /* comment: expected %s" % FORMS)
            i = end + 2
        elif ch == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise ValueError("junos: an unterminated quoted string: expected %s" % FORMS)
            toks.append(text[i : j + 1])
            i = j + 1
        elif ch in "{};[]":
            toks.append(ch)
            i += 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '{};[]"':
                j += 1
            toks.append(text[i:j])
            i = j
    return toks


def _braces_to_set(text: str) -> list[str]:
    """The hierarchical form as the ``set`` lines 'display set' would print. Statements
    marked ``inactive:`` are left out (they are not in effect on the device)."""
    toks = _brace_tokens(text)
    out: list[str] = []
    path: list[list[str]] = []  # one entry per open brace: the words of that level
    inactive_depth: int | None = None
    words: list[str] = []
    i = 0
    while i < len(toks):
        tok = toks[i]
        if tok == "[":
            end = toks.index("]", i) if "]" in toks[i:] else -1
            if end < 0:
                raise ValueError("junos: '[' without ']': expected %s" % FORMS)
            words.extend(toks[i : end + 1])
            i = end + 1
            continue
        if tok == "{":
            if not words:
                raise ValueError("junos: '{' without a statement before it: expected %s" % FORMS)
            if words[0] in ("inactive:", "protect:"):
                if words[0] == "inactive:" and inactive_depth is None:
                    inactive_depth = len(path)
                words = words[1:]
            path.append(words)
            words = []
        elif tok == "}":
            if words or not path:
                raise ValueError("junos: unbalanced '}': expected %s" % FORMS)
            path.pop()
            if inactive_depth is not None and len(path) <= inactive_depth:
                inactive_depth = None
        elif tok == ";":
            if words:
                skip = words[0] == "inactive:"
                if words[0] in ("inactive:", "protect:"):
                    words = words[1:]
                if inactive_depth is None and not skip and words:
                    out.append("set " + " ".join(w for level in path for w in level) + (" " if path else "") + " ".join(words))
            words = []
        else:
            words.append(tok)
        i += 1
    if path or words:
        raise ValueError("junos: the configuration ends inside a statement (unbalanced braces): expected %s" % FORMS)
    return out


# statements that exist only below [edit class-of-service]
_COS_ONLY = frozenset(
    ("forwarding-classes", "classifiers", "congestion-notification-profile", "drop-profiles", "schedulers", "scheduler-maps",
     "shared-buffer", "forwarding-class-sets", "traffic-control-profiles", "code-point-aliases", "rewrite-rules", "host-outbound-traffic")
)  # fmt: skip


def set_lines(running: str) -> list[str]:
    """The ``set`` lines of either form. Refuses text that is neither (ValueError naming the
    platform and the forms), never returns an empty success for something it cannot read."""
    lines = [raw.strip() for raw in running.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    body = [line for line in lines if line and not _NOISE_RE.match(line)]
    if not body:
        return []
    if body[0].startswith("{") and '"configuration"' in running:
        raise ValueError("junos: this is 'display json' output; expected %s" % FORMS)
    if body[0].startswith("<"):
        raise ValueError("junos: this is XML output; expected %s" % FORMS)
    starts = {line.split(None, 1)[0] for line in body if not line.startswith("#")}
    if starts & {"set", "deactivate", "delete", "activate"} and "{" not in {line[-1:] for line in body}:
        out: list[str] = []
        off: list[tuple[str, ...]] = []
        for number, line in enumerate(lines, 1):
            if not line or _NOISE_RE.match(line) or line.startswith("#"):
                continue
            word = line.split(None, 1)[0]
            if word == "set":
                out.append(line)
            elif word == "deactivate":
                off.append(tuple(_tokens(line)[1:]))
            elif word not in ("protect", "activate"):
                raise ValueError("junos: line %d is not a set statement (%r): expected %s" % (number, line[:80], FORMS))
        if off:
            # 'deactivate X' lines (display set of an inactive statement): X is not in effect
            out = [line for line in out if not any(tuple(_tokens(line)[1 : 1 + len(o)]) == o for o in off)]
        return out
    if any(line.endswith(("{", ";", "}")) for line in body):
        out = _braces_to_set("\n".join(body))
        # 'show configuration class-of-service' prints the hierarchy below the path it was given:
        # the path comes from the pasted prompt line, else from a statement only CoS has.
        path = None
        for line in lines:
            shown = re.match(r"^\S+@\S+[>#]\s*show configuration\s+([^|]*?)\s*(\||$)", line)
            if shown:
                path = shown.group(1).strip() or None
        first = out[0].split()[1] if out else ""
        if path is None and first in _COS_ONLY:
            path = "class-of-service"
        return ["set %s %s" % (path, line[4:]) for line in out] if path else out
    raise ValueError("junos: not Junos configuration (first line %r): expected %s" % (body[0][:80], FORMS))


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


# Junos' default forwarding classes on QFX and their queues (Understanding Default CoS
# Scheduling and Classification, QFX): used when a configuration names them without
# defining them.
DEFAULT_FC_QUEUES = {"best-effort": 0, "fcoe": 3, "no-loss": 4, "network-control": 7, "mcast": 8}
# Junos' standard DSCP code-point aliases (Juniper: "Default CoS Values and Aliases", the
# code-point-aliases table); real 'display set' output uses them (Juniper/jvd ACX/MX configs).
DSCP_ALIASES = {
    "be": "000000", "cs1": "001000", "af11": "001010", "af12": "001100", "af13": "001110",
    "cs2": "010000", "af21": "010010", "af22": "010100", "af23": "010110", "cs3": "011000",
    "af31": "011010", "af32": "011100", "af33": "011110", "cs4": "100000", "af41": "100010",
    "af42": "100100", "af43": "100110", "cs5": "101000", "ef": "101110", "cs6": "110000",
    "cs7": "111000", "nc1": "110000", "nc2": "111000",
}  # fmt: skip


class _Cos:
    """The class-of-service, interfaces and protocols dcbx statements of a configuration."""

    def __init__(self, running: str) -> None:
        self.fcs: dict[str, dict[str, Any]] = {}
        self.classifiers: dict[str, dict[int, str]] = {}
        self.cnps: dict[str, dict[str, Any]] = {}
        self.drop_profiles: dict[str, dict[str, list[int]]] = {}
        self.schedulers: dict[str, dict[str, Any]] = {}
        self.maps: dict[str, dict[str, str]] = {}
        self.tcps: dict[str, dict[str, Any]] = {}
        self.cos_ifs: dict[str, dict[str, Any]] = {}
        self.ifs: dict[str, dict[str, Any]] = {}
        self.dcbx: dict[str, dict[str, Any]] = {}
        self.shared_buffer: dict[str, dict[str, int]] = {}
        self.aliases: dict[str, str] = dict(DSCP_ALIASES)
        lines = set_lines(running)
        for line in lines:  # user aliases first: a classifier may name one defined later in the text
            toks = _tokens(line)
            if toks[1:4] == ["class-of-service", "code-point-aliases", "dscp"] and len(toks) == 6 and re.fullmatch(r"[01]{6}", toks[5]):
                self.aliases[toks[4]] = toks[5]
        for line in lines:
            for atom in _atoms(line):
                self._take(list(atom[1:]))

    def _take(self, t: list[str]) -> None:  # pylint: disable=too-many-branches,too-many-statements
        if len(t) >= 3 and t[0] == "interfaces":
            port = self.ifs.setdefault(t[1], {})
            if t[2] == "mtu" and len(t) > 3:
                port["media_mtu"] = _int(t[3])
            elif t[2] == "description" and len(t) > 3:
                port["description"] = " ".join(t[3:])
            elif t[2] == "unit" and len(t) >= 7 and t[4] == "family" and t[5] in ("inet", "inet6") and t[6] == "mtu" and len(t) > 7:
                port.setdefault("family_mtu", {})[t[5]] = _int(t[7])
            return
        if len(t) >= 5 and t[:2] == ["protocols", "dcbx"] and t[2] == "interface":
            self.dcbx.setdefault(t[3], {})[t[4]] = " ".join(t[5:]) or True
            return
        if len(t) < 3 or t[0] != "class-of-service":
            return
        kind, rest = t[1], t[2:]
        if kind == "forwarding-classes" and rest[0] == "class" and len(rest) >= 3:
            # one statement per leaf ('display set') or several on one line (braces form:
            # 'class NO-LOSS queue-num 4 no-loss pfc-priority 3;')
            fc = self.fcs.setdefault(rest[1], {})
            words, k = rest[2:], 0
            while k < len(words):
                if words[k] in ("queue-num", "pfc-priority", "priority") and k + 1 < len(words):
                    fc[words[k].replace("-", "_") if words[k] != "queue-num" else "queue"] = _int(words[k + 1]) if words[k] != "priority" else words[k + 1]
                    k += 2
                    continue
                if words[k] == "no-loss":
                    fc["no_loss"] = True
                k += 1
        elif kind == "classifiers" and rest[0] == "dscp" and len(rest) >= 7 and rest[2] == "forwarding-class" and rest[-2] == "code-points":
            bits = self.aliases.get(rest[-1], rest[-1])
            if re.fullmatch(r"[01]{6}", bits):
                self.classifiers.setdefault(rest[1], {})[int(bits, 2)] = rest[3]
        elif kind == "congestion-notification-profile":
            self._take_cnp(rest)
        elif kind == "drop-profiles" and len(rest) >= 4 and rest[1] == "interpolate":
            values = self.drop_profiles.setdefault(rest[0], {"fill-level": [], "drop-probability": []})
            if rest[2] in values and rest[3].isdigit():
                values[rest[2]].append(int(rest[3]))
        elif kind == "schedulers" and len(rest) >= 2:
            sched = self.schedulers.setdefault(rest[0], {})
            if rest[1] == "transmit-rate" and len(rest) >= 4 and rest[2] == "percent":
                sched["percent"] = _int(rest[3])
            elif rest[1] == "priority" and len(rest) >= 3:
                sched["priority"] = rest[2]
            elif rest[1] == "explicit-congestion-notification":
                sched["ecn"] = True
            elif rest[1] == "drop-profile-map" and "drop-profile" in rest[2:]:
                sched["drop_profile"] = rest[-1]
        elif kind == "scheduler-maps" and len(rest) >= 5 and rest[1] == "forwarding-class" and rest[3] == "scheduler":
            self.maps.setdefault(rest[0], {})[rest[2]] = rest[4]
        elif kind == "traffic-control-profiles" and len(rest) >= 3 and rest[1] == "scheduler-map":
            self.tcps.setdefault(rest[0], {})["scheduler_map"] = rest[2]
        elif kind == "shared-buffer" and len(rest) >= 5 and rest[1] == "buffer-partition" and rest[3] == "percent":
            self.shared_buffer.setdefault(rest[0], {})[rest[2]] = _int(rest[4])
        elif kind == "interfaces" and len(rest) >= 2:
            port = self.cos_ifs.setdefault(rest[0], {})
            if rest[1] == "unit" and len(rest) >= 5:
                rest = rest[:1] + rest[3:]  # unit N (or unit *) classifiers dscp X: same meaning for us
            if rest[1] in ("scheduler-map", "congestion-notification-profile") and len(rest) >= 3:
                port[rest[1]] = rest[2]
            elif rest[1] == "classifiers" and len(rest) >= 4 and rest[2] == "dscp":
                port["classifier"] = rest[3]
            elif rest[1] == "forwarding-class-set" and len(rest) >= 5 and rest[3] == "output-traffic-control-profile":
                port.setdefault("fc_sets", {})[rest[2]] = rest[4]

    def _take_cnp(self, rest: list[str]) -> None:
        if len(rest) < 2:
            return
        cnp = self.cnps.setdefault(rest[0], {"pfc_dscp": [], "output": {}, "watchdog": None, "cable_length_m": None})
        body = rest[1:]
        if body[:3] == ["input", "dscp", "code-point"] and len(body) >= 5 and body[4] == "pfc":
            bits = self.aliases.get(body[3], body[3])
            if re.fullmatch(r"[01]{6}", bits):
                cnp["pfc_dscp"].append(int(bits, 2))
        elif body[:2] == ["input", "cable-length"] and len(body) >= 3:
            cnp["cable_length_m"] = _int(body[2])
        elif body[:3] == ["output", "ieee-802.1", "code-point"] and len(body) >= 6 and body[4] == "flow-control-queue":
            if re.fullmatch(r"[01]{3}", body[3]) and body[5].isdigit():
                cnp["output"].setdefault(int(body[3], 2), []).append(int(body[5]))
        elif body[0] == "pfc-watchdog":
            wd = cnp["watchdog"] if cnp["watchdog"] is not None else {}
            if len(body) >= 3:
                wd[body[1]] = _int(body[2])
            cnp["watchdog"] = wd

    def queue_of(self, fc: str) -> int | None:
        queue = self.fcs.get(fc, {}).get("queue")
        return DEFAULT_FC_QUEUES.get(fc) if queue is None and fc not in self.fcs else queue

    def cos_of(self, ifname: str) -> dict[str, Any]:
        """The port's CoS bindings: wildcard entries (et-*, and 'unit *') that match it,
        overridden statement by statement by its own entry (explicit wins)."""
        merged: dict[str, Any] = {}
        for pattern in sorted(self.cos_ifs):
            if "*" in pattern and pattern != ifname and fnmatch.fnmatchcase(ifname, pattern):
                merged.update(self.cos_ifs[pattern])
        merged.update(self.cos_ifs.get(ifname, {}))
        return merged

    def _scheduler_maps(self, cos: dict[str, Any]) -> list[dict[str, str]]:
        if cos.get("scheduler-map"):
            return [self.maps.get(cos["scheduler-map"], {})]
        # ETS: each forwarding class set's output traffic control profile names a map
        return [self.maps.get(self.tcps.get(tcp, {}).get("scheduler_map", ""), {}) for tcp in (cos.get("fc_sets") or {}).values()]

    def interface(self, ifname: str) -> dict[str, Any]:  # pylint: disable=too-many-locals
        cos = self.cos_of(ifname)
        port = self.ifs.get(ifname, {})
        classifier = self.classifiers.get(cos.get("classifier", ""), {})
        cnp = self.cnps.get(cos.get("congestion-notification-profile", ""))
        prios: set[int] = set()
        if cnp:
            for dscp in cnp["pfc_dscp"]:
                fc = self.fcs.get(classifier.get(dscp, ""), {})
                prio = fc.get("pfc_priority")
                if prio is not None:
                    prios.add(prio)
            if cnp["pfc_dscp"] and not prios:
                prios.update(cnp["output"])
        ecn: dict[str, dict[str, int | None]] = {}
        strict, bandwidth = set(), {}
        for smap in self._scheduler_maps(cos):
            for fc, sched_name in smap.items():
                queue = self.queue_of(fc)
                sched = self.schedulers.get(sched_name, {})
                if queue is None:
                    continue
                if sched.get("priority") == "strict-high":
                    strict.add(queue)
                if sched.get("percent") is not None:
                    bandwidth[str(queue)] = sched["percent"]
                if sched.get("ecn"):
                    curve = self.drop_profiles.get(sched.get("drop_profile", ""), {})
                    fill, prob = curve.get("fill-level", []), curve.get("drop-probability", [])
                    ecn[str(queue)] = {
                        "min_threshold_percent": fill[0] if fill else None,
                        "max_threshold_percent": fill[-1] if fill else None,
                        "max_probability_percent": prob[-1] if prob else None,
                    }
        media = port.get("media_mtu")
        family = port.get("family_mtu", {}).get("inet")
        return {
            "description": port.get("description"),
            # The IP MTU, as the plan and EOS/NVUE count it: the family inet MTU when set, else
            # the media MTU less the 14-byte Ethernet header (Juniper: media MTU = protocol MTU + L2 overhead).
            "mtu": family if family is not None else (media - L2_OVERHEAD_BYTES if media is not None else None),
            "media_mtu": media,
            "trust": "dscp" if cos.get("classifier") else None,
            "pfc_enabled": bool(cnp and cnp["pfc_dscp"]),
            # Junos' default when the profile sets none (reference 5.5)
            "cable_length_m": (cnp["cable_length_m"] or 100) if cnp else None,
            "pfc_priorities": sorted(prios),
            # PFC priority -> the queue its pause frames flow-control (output ieee-802.1 code-point)
            "pfc_queues": {str(prio): queues for prio, queues in sorted(cnp["output"].items())} if cnp else {},
            "ecn": dict(sorted(ecn.items())),
            "strict_queues": sorted(strict),
            "bandwidth_percent": dict(sorted(bandwidth.items(), key=lambda kv: int(kv[0]))),
            "watchdog": bool(cnp and cnp["watchdog"] is not None),
            "scheduling": "port" if cos.get("scheduler-map") else "ets" if cos.get("fc_sets") else None,
            "dcbx_pfc": self._dcbx_pfc(ifname),
        }

    def _dcbx_pfc(self, ifname: str) -> str | None:
        for name in (ifname, "all"):
            entry = self.dcbx.get(name, {})
            if entry.get("priority-flow-control") == "no-auto-negotiation":
                return "no-auto-negotiation"
            if "disable" in entry:
                return "disabled"
        return None


def _watchdog_state(cos: _Cos, names: list[str]) -> dict[str, Any]:
    for name in names:
        cnp = cos.cnps.get(name)
        if cnp and cnp["watchdog"] is not None:
            wd = cnp["watchdog"]
            poll = wd.get("poll-interval") or WATCHDOG_DEFAULT_POLL_MS
            polls = wd.get("detection") or WATCHDOG_DEFAULT_POLLS
            return {
                "enabled": True,
                "detection_time_ms": poll * polls,
                "restoration_time_ms": wd.get("recovery-time") or WATCHDOG_DEFAULT_RECOVERY_MS,
                "action": "drop",  # the Junos default; no statement changes it (see _watchdog)
            }
    return {"enabled": False, "detection_time_ms": None, "restoration_time_ms": None, "action": None}


def parse(running: str) -> dict:
    """Either form Junos prints (raises ValueError naming the forms on anything else).
    Wildcard bindings (``et-*``, ``unit *``) apply to every matching port the text names
    and are also reported under ``wildcards``; queue, forwarding class and PFC priority are
    read from the configuration's own mapping."""
    cos = _Cos(running)
    names = sorted(n for n in set(cos.cos_ifs) | set(cos.ifs) if "*" not in n)
    wildcards = sorted(n for n in cos.cos_ifs if "*" in n)
    bound = sorted({cos.cos_of(n)["congestion-notification-profile"] for n in names + wildcards if "congestion-notification-profile" in cos.cos_of(n)})
    dscp_map: dict[str, int] = {}
    for ifname in names + wildcards:
        for dscp, fc in sorted(cos.classifiers.get(cos.cos_of(ifname).get("classifier", ""), {}).items()):
            queue = cos.queue_of(fc)
            if queue is not None:
                dscp_map.setdefault(str(dscp), queue)
    return {
        "dscp_map": dict(sorted(dscp_map.items(), key=lambda kv: int(kv[0]))),
        "watchdog": _watchdog_state(cos, bound or sorted(cos.cnps)),
        "shared_buffer": {side: dict(sorted(parts.items())) for side, parts in sorted(cos.shared_buffer.items())},
        "interfaces": {name: cos.interface(name) for name in names},
        "wildcards": {name: cos.interface(name) for name in wildcards},
    }


def missing_lines(lines: list[str], running: str) -> list[str]:
    """The rendered 'set' lines that ``running`` (either form parse() reads) does not carry. Pure: readback_missing's logic."""
    have = _statements(running)
    return [line for line in lines if line.startswith("set ") and not all(atom in have for atom in _atoms(line))]


# -- counters (read-only; module_utils/_switches/_counters.py) ------------------
# Per port, every command in one write (reference 5.6 / 5.6.1): PFC per
# priority from 'show interfaces X extensive' (section 'MAC Priority Flow
# Control Statistics', rows 'Priority : n rx tx', confirmed), input/output
# 'Drops:' from its error blocks where printed; per queue from 'show
# interfaces queue X' by label ('Tail-dropped packets', 'RED-dropped
# packets', 'ECN-CE packets'; ECN-CE is QFX-only and not in Juniper's
# docs). Junos has no PFC watchdog counter command (reference 5.6).
_COUNTER_COMMAND = re.compile(r"^show interfaces (?:queue (\S+)|(\S+) extensive)$")
_PFC_ROW = re.compile(r"^\s*Priority\s*:\s*(\d+)\s+(\d+)\s+(\d+)\s*$")
_QUEUE_HEAD = re.compile(r"(?m)^Queue:\s*(\d+)\b")
_QUEUE_ROW = re.compile(r"^\s*([A-Za-z][A-Za-z -]*?)\s*:\s*(\S+)")


def parse_counters(outputs: dict[str, str]) -> tuple[dict[str, dict], dict[str, str]]:
    """({port: counters} in the _snapshot shape, {command: what Junos said} for failed commands)."""
    ports: dict[str, dict] = {}
    errors: dict[str, str] = {}
    for command, text in outputs.items():
        match = _COUNTER_COMMAND.match(command)
        if not match:
            continue
        if not text.strip() or re.search(r"(?im)^\s*error:|syntax error|unknown command", text):
            errors[command] = text or "(no output)"
            continue
        found = _queue_counters(text) if match.group(1) else _extensive_counters(text)
        if found:
            ports.setdefault(match.group(1) or match.group(2), {}).update(found)
        else:
            expected = ("'Queue: <n>' blocks with 'Transmitted:' Packets / Bytes, 'Tail-dropped packets', 'RED-dropped packets'"
                        if match.group(1) else "'MAC Priority Flow Control Statistics' rows 'Priority : <n> <rx> <tx>' or 'Drops:' counts")
            errors[command] = "junos: %r: not a form this reader reads (expected %s); got: %s" % (command, expected, text.strip()[:200])
    return ports, errors


def _extensive_counters(text: str) -> dict:
    found: dict[str, Any] = {}
    rx: dict[str, int] = {}
    tx: dict[str, int] = {}
    section = False
    for line in text.splitlines():
        if "MAC Priority Flow Control Statistics" in line:
            section = True
            continue
        row = _PFC_ROW.match(line) if section else None
        if row:
            rx[str(int(row.group(1)))] = int(row.group(2))
            tx[str(int(row.group(1)))] = int(row.group(3))
        elif section and line.strip():
            section = False
    if rx:
        found["pfc_rx_frames"], found["pfc_tx_frames"] = rx, tx
    for block, key in (("Input errors", "in_discards"), ("Output errors", "out_discards")):
        match = re.search(r"(?m)^\s*%s:\s*\n[^\n]*?\bDrops:\s*(\d+)" % block, text)
        if match:
            found[key] = int(match.group(1))
    return found


def _queue_counters(text: str) -> dict:
    heads = list(_QUEUE_HEAD.finditer(text))
    tail: dict[str, int] = {}
    red: dict[str, int] = {}
    ecn: dict[str, int] = {}
    sent: dict[str, dict[str, int]] = {"queue_tx_packets": {}, "queue_tx_bytes": {}}
    for index, head in enumerate(heads):
        queue = str(int(head.group(1)))
        block = text[head.end() : heads[index + 1].start() if index + 1 < len(heads) else len(text)]
        seen: set[str] = set()
        section = None
        for line in block.splitlines():
            # 'Queued:' and 'Transmitted:' each head a 'Packets' / 'Bytes' pair (genieparser's ShowInterfacesQueue
            # golden output, fixtures/junos/genie_show_interfaces_queue.txt; XML queue-counters-trans-packets / -bytes)
            if line.strip() in ("Queued:", "Transmitted:"):
                section = line.strip()
                continue
            row = _QUEUE_ROW.match(line)
            if row and section == "Transmitted:" and row.group(1) in ("Packets", "Bytes"):
                value = _snapshot.count(row.group(2))
                if value is not None:
                    sent["queue_tx_packets" if row.group(1) == "Packets" else "queue_tx_bytes"][queue] = value
                continue
            if not row or row.group(1) in seen:
                continue  # the first 'RED-dropped packets' is the total; Low/High rows follow
            seen.add(row.group(1))
            value = _snapshot.count(row.group(2))
            target = {"Tail-dropped packets": tail, "RED-dropped packets": red, "ECN-CE packets": ecn}.get(row.group(1))
            if target is not None and value is not None:
                target[queue] = value
    found: dict[str, Any] = {}
    if tail or red:
        found["queue_drops"] = {q: tail.get(q, 0) + red.get(q, 0) for q in sorted(set(tail) | set(red), key=int)}
    if red:
        found["wred_drops"] = red
    if ecn:
        found["ecn_marked"] = ecn
        found["ecn_marked_total"] = sum(ecn.values())
    found.update({key: queues for key, queues in sent.items() if queues})
    return found


# -- links (read-only; module_utils/_switches/_links.py) -----------------
# Per port, like the counters: 'show lldp neighbors interface X | display xml' (the detail view: the
# RPC reply napalm's junos get_lldp_neighbors_detail reads, lldp-neighbors-information ->
# lldp-neighbor-information with lldp-local-interface, lldp-remote-system-name, lldp-remote-port-id,
# lldp-remote-port-id-subtype, lldp-remote-port-description, lldp-remote-chassis-id) and
# 'show interfaces X' ('Physical interface: X, Enabled, Physical link is Up', '... Speed: 10Gbps, ...':
# Juniper's show interfaces page; ntc-templates juniper_junos_show_interfaces2.raw).
# A Junos peer sends by default its port ID as a locally assigned number (its SNMP ifIndex) and its
# configured interface description (ifAlias) as port description, the interface name where none is
# configured: both are reported as sent (port, port_id_subtype 'local', port_descr), so the cabling
# check can name the far port from the description. docs/vendor-junos.md "LLDP and link state".

def parse_links(outputs: dict[str, str]) -> dict:
    ends: dict[str, dict] = {}
    for command, text in outputs.items():
        lldp = re.fullmatch(r"show lldp neighbors interface (\S+)(?: \| display (?:xml|json))?", command)
        intf = re.fullmatch(r"show interfaces (\S+)", command)
        if not lldp and not intf:
            continue
        if re.search(r"(?im)^\s*error:|syntax error|unknown command", text or ""):
            raise _base.LinkFormError("junos", command, "a show result, not an error", text)
        if intf:
            here = ends.setdefault(intf.group(1), _base.end())
            here["oper"], here["speed"] = _junos_link_state(command, text)
        else:
            here = ends.setdefault(lldp.group(1), _base.end())
            here["neighbors"] = _junos_lldp(command, text)
    return ends


# ---------------------------------------------------------------------------
# links parsers (pure)
# ---------------------------------------------------------------------------
_PHYSICAL = re.compile(r"^Physical interface: (\S+), (Enabled|Disabled|Administratively down), Physical link is (Up|Down)\s*$", re.M)
_SPEED = re.compile(r"\bSpeed: ([^,\s]+)")
# lldp-remote-port-id-subtype words (napalm junos fixtures: 'Locally assigned' (ex9208_qfx10008), 'Mac address',
# 'Interface name' (test_get_lldp_neighbors/normal); the other LLDP-MIB names as Junos would print them: unverified).
_JUNOS_SUBTYPES = {"locally assigned": "local", "mac address": "mac", "interface name": "ifname", "interface alias": "ifalias",
                   "port component": "port_component", "network address": "network_address", "agent circuit id": "agent_circuit_id"}


def _junos_link_state(command: str, text: str) -> tuple[str | None, str | None]:
    match = _PHYSICAL.search((text or "").replace("\r", ""))
    if not match:
        raise _base.LinkFormError("junos", command, "'Physical interface: <name>, Enabled, Physical link is Up|Down' and a 'Speed:' field", text)
    oper = "up" if match.group(3) == "Up" else "down"
    speed = _SPEED.search(text[match.end():])
    # The Speed field is the configured rate on a down link too: only an up link says its speed.
    return oper, (_base.speed_g(speed.group(1)) if speed and oper == "up" else None)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _junos_lldp(command: str, text: str) -> list[dict]:
    """Neighbours from the XML of 'show lldp neighbors [interface X] | display xml' (detail or brief)."""
    body = (text or "").strip()
    if body.startswith("{"):
        return _junos_lldp_json(command, body)
    start = body.find("<")
    try:
        root = ET.fromstring(body[start:]) if start >= 0 else None
    except ET.ParseError:
        root = None
    if root is None:
        raise _base.LinkFormError("junos", command, "the XML of '| display xml' holding <lldp-neighbors-information>", text)
    info = root if _local(root.tag) == "lldp-neighbors-information" else next((e for e in root.iter() if _local(e.tag) == "lldp-neighbors-information"), None)
    if info is None:
        raise _base.LinkFormError("junos", command, "an <lldp-neighbors-information> element", text)
    found = []
    for entry in (e for e in info if _local(e.tag) == "lldp-neighbor-information"):
        fields: dict[str, str] = {}
        for child in entry.iter():
            fields.setdefault(_local(child.tag), (child.text or "").strip())
        subtype = fields.get("lldp-remote-port-id-subtype")
        found.append(_base.neighbor(
            fields.get("lldp-remote-system-name"),
            fields.get("lldp-remote-port-id"),
            _JUNOS_SUBTYPES.get(subtype.lower(), subtype) if subtype else None,
            fields.get("lldp-remote-port-description"),
            fields.get("lldp-remote-chassis-id"),
        ))
    return found


def _junos_lldp_json(command: str, body: str) -> list[dict]:
    """'| display json': each element is a list of objects, a leaf's value under "data" (Juniper's JSON
    rendering of the same RPC reply; key names as in the XML form; no captured LLDP sample found: unverified)."""
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None

    def find(node: Any) -> Any:
        if isinstance(node, dict):
            if "lldp-neighbors-information" in node:
                return node["lldp-neighbors-information"]
            for value in node.values():
                got = find(value)
                if got is not None:
                    return got
        if isinstance(node, list):
            for value in node:
                got = find(value)
                if got is not None:
                    return got
        return None

    info = find(doc)
    if not isinstance(info, list):
        raise _base.LinkFormError("junos", command, "the JSON of '| display json' holding \"lldp-neighbors-information\"", body)
    found = []
    for block in info:
        for entry in (block.get("lldp-neighbor-information") or []) if isinstance(block, dict) else []:
            if not isinstance(entry, dict):
                raise _base.LinkFormError("junos", command, "lldp-neighbor-information objects", body)

            def leaf(key: str, entry=entry) -> str | None:
                value = entry.get(key)
                return value[0].get("data") if isinstance(value, list) and value and isinstance(value[0], dict) else None

            subtype = leaf("lldp-remote-port-id-subtype")
            found.append(_base.neighbor(leaf("lldp-remote-system-name"), leaf("lldp-remote-port-id"),
                                        _JUNOS_SUBTYPES.get(subtype.lower(), subtype) if subtype else None,
                                        leaf("lldp-remote-port-description"), leaf("lldp-remote-chassis-id")))
    return found
