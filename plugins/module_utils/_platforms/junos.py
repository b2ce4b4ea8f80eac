# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Juniper Junos (QFX) driver: lossless RoCEv2 QoS as ``set`` lines, applied as a transaction.

Reference: shared/reference/switch-lossless-cli.md section 5 (DSCP-based PFC,
congestion-notification-profile, drop profiles, schedulers, PFC watchdog).

Transaction (one netmiko JuniperSSH connection, one CLI):

    open_session  configure private                 staging and diff never lock the database
    load          set/delete lines + show | compare one write, one read; errors per line
    diff          the cached show | compare         '' when nothing would change
    abort         rollback 0, exit configuration-mode
    commit        rollback 0, exit, configure exclusive, the same lines, show | compare
                  (must equal the private diff, so nobody else's uncommitted change rides
                  along), then commit check + commit confirmed N comment "<session>"
    confirm       commit (in configuration mode)    a plain commit confirms (Junos CLI)
    rollback      rollback 1 + commit               only while a confirmed commit is pending
    save          nothing: a Junos commit is already persistent (juniper.conf.gz)

Why the commit leaves private mode: Junos refuses ``commit confirmed`` on a
private candidate ("error: commit confirmed not supported for private
configuration", Juniper/py-junos-eznc PR #954; the Junos XML protocol guide
says the same for <open-configuration><private/>). ``configure exclusive``
supports it and locks the candidate only for the commit itself.
"""

from __future__ import annotations

import math
import re
import shlex
import time
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base

PREFIX = "LF-ROCE"
FC_NAME = PREFIX + "-TC%d"  # forwarding class of traffic class n (queue n)
CLASSIFIER = PREFIX + "-DSCP"
CNP = PREFIX + "-CNP-%dM"  # one congestion-notification profile per cable length (metres)
SCHEDULER = PREFIX + "-TC%d"  # scheduler of a queue without ECN
ECN_SUFFIX = "-%d-%d-%d"  # fill-level low %, high %, max probability %: one per distinct ECN curve

# Junos PFC watchdog (reference 5.4): the detection time is poll-interval x
# detection (number of polls). Junos' own default is 2 polls of 100 ms; we keep
# 2 polls whenever the plan's time divides evenly. The largest poll interval we
# ask for is 1000 ms ([verify]: the range is not in the pages we could read;
# the lab simulator takes 10-1000 ms and 1-10 polls).
WATCHDOG_POLLS = 2
WATCHDOG_MAX_POLLS = 10
WATCHDOG_MAX_POLL_MS = 1000
# Junos defaults when the watchdog is on without options (reference 5.4).
WATCHDOG_DEFAULT_POLL_MS = 100
WATCHDOG_DEFAULT_POLLS = 2
WATCHDOG_DEFAULT_RECOVERY_MS = 200

# One Jinja2 template; every number in it comes from the context _context()
# builds from the plan. Lines are atomic (one leaf per line) so that
# ``show configuration | display set`` carries each one verbatim and the
# read-back is a plain comparison. ``delete`` before each of our own named
# objects makes a load replace it instead of merging into it (Junos leaf-lists
# such as fill-level append on ``set``); the device diff stays empty when
# nothing changed, and deleting a statement that does not exist is only a
# warning ("warning: statement not found").
TEMPLATE = """\
{% for fc in fcs %}
delete class-of-service forwarding-classes class {{ fc.name }}
set class-of-service forwarding-classes class {{ fc.name }} queue-num {{ fc.queue }}
{% if fc.pfc_priority is not none %}
set class-of-service forwarding-classes class {{ fc.name }} no-loss
set class-of-service forwarding-classes class {{ fc.name }} pfc-priority {{ fc.pfc_priority }}
{% endif %}
{% endfor %}
delete class-of-service classifiers dscp {{ classifier }}
{% for cp in code_points %}
set class-of-service classifiers dscp {{ classifier }} forwarding-class {{ cp.fc }} loss-priority low code-points {{ cp.bits }}
{% endfor %}
{% for cnp in cnps %}
delete class-of-service congestion-notification-profile {{ cnp.name }}
{% for bits in pfc_input %}
set class-of-service congestion-notification-profile {{ cnp.name }} input dscp code-point {{ bits }} pfc
{% endfor %}
set class-of-service congestion-notification-profile {{ cnp.name }} input cable-length {{ cnp.cable_length_m }}
{% for out in pfc_output %}
set class-of-service congestion-notification-profile {{ cnp.name }} output ieee-802.1 code-point {{ out.bits }} flow-control-queue {{ out.queue }}
{% endfor %}
{% if watchdog %}
set class-of-service congestion-notification-profile {{ cnp.name }} pfc-watchdog poll-interval {{ watchdog.poll_ms }}
set class-of-service congestion-notification-profile {{ cnp.name }} pfc-watchdog detection {{ watchdog.polls }}
set class-of-service congestion-notification-profile {{ cnp.name }} pfc-watchdog recovery-time {{ watchdog.recovery_ms }}
{% endif %}
{% endfor %}
{% for dp in drop_profiles %}
set class-of-service drop-profiles {{ dp.name }} interpolate fill-level [ {{ dp.low }} {{ dp.high }} ]
set class-of-service drop-profiles {{ dp.name }} interpolate drop-probability [ 0 {{ dp.probability }} ]
{% endfor %}
{% for s in schedulers %}
delete class-of-service schedulers {{ s.name }}
{% if s.strict %}
set class-of-service schedulers {{ s.name }} priority strict-high
{% else %}
set class-of-service schedulers {{ s.name }} transmit-rate percent {{ s.percent }}
{% endif %}
{% if s.drop_profile %}
set class-of-service schedulers {{ s.name }} explicit-congestion-notification
set class-of-service schedulers {{ s.name }} drop-profile-map loss-priority low protocol any drop-profile {{ s.drop_profile }}
{% endif %}
{% endfor %}
{% for m in maps %}
delete class-of-service scheduler-maps {{ m.name }}
{% for entry in m.entries %}
set class-of-service scheduler-maps {{ m.name }} forwarding-class {{ entry.fc }} scheduler {{ entry.scheduler }}
{% endfor %}
{% endfor %}
{% for port in ports %}
set class-of-service interfaces {{ port.name }} classifiers dscp {{ classifier }}
set class-of-service interfaces {{ port.name }} congestion-notification-profile {{ port.cnp }}
set class-of-service interfaces {{ port.name }} scheduler-map {{ port.scheduler_map }}
{% if port.description %}
set interfaces {{ port.name }} description "{{ port.description }}"
{% endif %}
set interfaces {{ port.name }} mtu {{ mtu }}
{% endfor %}
"""

# What Junos prints when it refuses a configuration line (reference 5 and the
# simulator's verified/guessed list): a caret under the bad token, "syntax
# error", "unknown command.", "error: ...", range and value complaints.
_LINE_ERROR_RE = re.compile(r"(?im)^\s*\^\s*$|syntax error|unknown command|^\s*error:|is not within range|^\s*invalid |^\s*missing argument")
_COMMIT_CHECK_OK = "configuration check succeeds"
_COMMIT_CONFIRMED_OK = "commit confirmed will be automatically rolled back in"
_COMMIT_OK = "commit complete"
# Context lines Junos prints before a prompt: [edit ...], {master:0}, the pending-commit banner.
_CONTEXT_RE = re.compile(r"(?m)^(\[edit[^\]\n]*\]|\{(master|backup|primary|secondary|line)[^}\n]*\}|# commit confirmed will be rolled back in .*)\s*$")
_PENDING_RE = re.compile(r"rollback in (\d+)\s*min", re.I)
_READ_TIMEOUT_S = 120.0  # a QFX commit of CoS config takes seconds, not minutes


def _bits(value: int, width: int) -> str:
    return format(value, "0%db" % width)


def _percent_of(value: int, whole: int) -> int:
    """value as an integer percent of whole, rounded half up (Junos takes whole percents)."""
    return (value * 200 + whole) // (2 * whole)


def _watchdog(plan_wd: dict) -> dict | None:
    """The plan's watchdog as Junos pfc-watchdog options, or None when it is off."""
    if not plan_wd["enabled"]:
        return None
    if plan_wd["action"] != "drop":
        # drop is the Junos default and the only action the QFX watchdog page
        # describes; Junos EVO (AI-ML page) has a global drop|forward setting
        # whose statement we could not confirm, so we refuse rather than guess.
        raise ValueError("junos: watchdog action %r: no verified Junos statement sets it (Junos drops by default)" % plan_wd["action"])
    detect = int(plan_wd["detection_time_ms"])
    exact = [n for n in range(1, WATCHDOG_MAX_POLLS + 1) if detect % n == 0 and detect // n <= WATCHDOG_MAX_POLL_MS]
    if not exact:
        raise ValueError(
            "junos: watchdog detection_time_ms %d is not poll-interval x detection for any poll-interval <= %d ms and 1-%d polls"
            % (detect, WATCHDOG_MAX_POLL_MS, WATCHDOG_MAX_POLLS)
        )
    polls = WATCHDOG_POLLS if WATCHDOG_POLLS in exact else exact[0]
    return {"poll_ms": detect // polls, "polls": polls, "recovery_ms": int(plan_wd["restoration_time_ms"])}


def _ecn_curve(ifname: str, ecn: dict, plan: dict) -> tuple[int, int, int]:
    """Junos drop profiles take the fill level in whole percent of the queue's
    buffer, never bytes ("fill-level: percentage of the memory used to store
    packets in relation to the total amount of memory allocated to the queue",
    Juniper: Configuring CoS WRED Drop Profiles, QFX; fill-level range 0-100).
    The plan's Kmin/Kmax are bytes, so the byte size of the queue buffer is
    needed to convert them: ``queue_buffer_bytes`` in the port's ``ecn`` (or
    the plan's top level). Nothing here guesses it: without it the plan cannot
    be expressed on Junos and render() raises ValueError. Percent = bytes x 100
    / buffer, rounded to the nearest whole percent (Junos cannot express a
    fraction); drop-probability [0 Pmax] is taken as is.
    """
    buffer_bytes = ecn.get("queue_buffer_bytes", plan.get("queue_buffer_bytes"))
    if not isinstance(buffer_bytes, int) or isinstance(buffer_bytes, bool) or buffer_bytes <= 0:
        raise ValueError(
            "junos: %s: ECN thresholds are bytes but a Junos drop profile takes a fill level in percent of the queue buffer; "
            "the plan has no queue_buffer_bytes to convert them" % ifname
        )
    low = _percent_of(int(ecn["min_threshold_bytes"]), buffer_bytes)
    high = _percent_of(int(ecn["max_threshold_bytes"]), buffer_bytes)
    if not low < high < 100:
        raise ValueError(
            "junos: %s: ECN thresholds %d-%d bytes are %d-%d %% of a %d-byte queue buffer; Junos needs low < high < 100"
            % (ifname, ecn["min_threshold_bytes"], ecn["max_threshold_bytes"], low, high, buffer_bytes)
        )
    return low, high, int(ecn["max_probability_percent"])


def _context(plan: dict) -> dict[str, Any]:
    classes = {int(tc): cls for tc, cls in plan["traffic_classes"].items()}
    pfc = [int(p) for p in plan["pfc_priorities"]]
    ecn_queue = int(plan["ecn_queue"])
    fcs = [{"name": FC_NAME % tc, "queue": tc, "pfc_priority": tc if cls["lossless"] else None} for tc, cls in sorted(classes.items())]
    code_points = [{"fc": FC_NAME % int(tc), "bits": _bits(int(dscp), 6)} for dscp, tc in sorted(plan["dscp_map"].items(), key=lambda kv: int(kv[0]))]
    pfc_input = [_bits(int(dscp), 6) for dscp, tc in sorted(plan["dscp_map"].items(), key=lambda kv: int(kv[0])) if int(tc) in pfc]
    # Queue number = traffic class = PFC priority (the plan's contract).
    pfc_output = [{"bits": _bits(prio, 3), "queue": prio} for prio in pfc]

    plain = []
    for tc, cls in sorted(classes.items()):
        if tc == ecn_queue and classes[tc]["ecn"]:
            continue
        plain.append({"name": SCHEDULER % tc, "strict": cls["strict"], "percent": cls["bandwidth_percent"], "drop_profile": None, "tc": tc})
    curves: dict[tuple[int, int, int], list[str]] = {}
    for ifname, port in plan["ports"].items():
        curves.setdefault(_ecn_curve(ifname, port["ecn"], plan), []).append(ifname)
    drop_profiles, ecn_schedulers, maps, port_map = [], [], [], {}
    for curve in sorted(curves):
        suffix = ECN_SUFFIX % curve
        dp_name = PREFIX + "-DP" + suffix
        drop_profiles.append({"name": dp_name, "low": curve[0], "high": curve[1], "probability": curve[2]})
        ecn_cls = classes[ecn_queue]
        ecn_sched = {
            "name": (SCHEDULER % ecn_queue) + suffix,
            "strict": ecn_cls["strict"],
            "percent": ecn_cls["bandwidth_percent"],
            "drop_profile": dp_name,
            "tc": ecn_queue,
        }
        ecn_schedulers.append(ecn_sched)
        entries = [{"fc": FC_NAME % s["tc"], "scheduler": s["name"]} for s in sorted(plain + [ecn_sched], key=lambda s: s["tc"])]
        map_name = PREFIX + "-SM" + suffix
        maps.append({"name": map_name, "entries": entries})
        for ifname in curves[curve]:
            port_map[ifname] = map_name
    # Junos sizes the PFC headroom from the profile's cable length (default 100 m) and MRU
    # (reference 5.5), so ports of different cable lengths need their own profile.
    lengths = sorted({int(port["cable_length_m"]) for port in plan["ports"].values()})
    ports = [
        {"name": ifname, "description": port["description"], "scheduler_map": port_map[ifname], "cnp": CNP % int(port["cable_length_m"])}
        for ifname, port in plan["ports"].items()
    ]
    for port in ports:
        # The rendered text is split into lines: a newline in a value would
        # become a second command, so values are checked before rendering.
        for value in (port["name"], port["description"] or ""):
            _base.check_cli_line(port["name"], value)
        if not re.fullmatch(r"[A-Za-z0-9/:.-]+", port["name"]) or '"' in (port["description"] or "") or "\\" in (port["description"] or ""):
            raise _base.DeviceError(
                port["name"], "refusing a name or description Junos would not read as one token or one quoted string", state=_base.UNCHANGED
            )
    return {
        "fcs": fcs,
        "classifier": CLASSIFIER,
        "code_points": code_points,
        "cnps": [{"name": CNP % length, "cable_length_m": length} for length in lengths],
        "pfc_input": pfc_input,
        "pfc_output": pfc_output,
        "watchdog": _watchdog(plan["watchdog"]),
        "drop_profiles": drop_profiles,
        "schedulers": sorted(plain + ecn_schedulers, key=lambda s: (s["tc"], s["name"])),
        "maps": maps,
        "ports": ports,
        "mtu": int(plan["mtu"]),
    }


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
    for raw in running.splitlines():
        line = raw.strip()
        if line.startswith("set "):
            out.update(_atoms(line))
    return out


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


class _Cos:
    """The class-of-service and interfaces statements of a display-set text."""

    def __init__(self, running: str) -> None:
        self.fcs: dict[str, dict[str, Any]] = {}
        self.classifiers: dict[str, dict[int, str]] = {}
        self.cnps: dict[str, dict[str, Any]] = {}
        self.drop_profiles: dict[str, dict[str, list[int]]] = {}
        self.schedulers: dict[str, dict[str, Any]] = {}
        self.maps: dict[str, dict[str, str]] = {}
        self.cos_ifs: dict[str, dict[str, Any]] = {}
        self.ifs: dict[str, dict[str, Any]] = {}
        for raw in running.splitlines():
            line = raw.strip()
            if line.startswith("set "):
                for atom in _atoms(line):
                    self._take(list(atom[1:]))

    def _take(self, t: list[str]) -> None:  # pylint: disable=too-many-branches
        if len(t) >= 4 and t[0] == "interfaces":
            if t[2] == "mtu":
                self.ifs.setdefault(t[1], {})["mtu"] = _int(t[3])
            elif t[2] == "description":
                self.ifs.setdefault(t[1], {})["description"] = " ".join(t[3:])
            return
        if len(t) < 4 or t[0] != "class-of-service":
            return
        kind, rest = t[1], t[2:]
        if kind == "forwarding-classes" and rest[0] == "class" and len(rest) >= 3:
            fc = self.fcs.setdefault(rest[1], {})
            if rest[2] == "queue-num" and len(rest) > 3:
                fc["queue"] = _int(rest[3])
            elif rest[2] == "no-loss":
                fc["no_loss"] = True
            elif rest[2] == "pfc-priority" and len(rest) > 3:
                fc["pfc_priority"] = _int(rest[3])
        elif kind == "classifiers" and rest[0] == "dscp" and len(rest) >= 7 and rest[2] == "forwarding-class" and rest[-2] == "code-points":
            bits = rest[-1]
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
        elif kind == "interfaces" and len(rest) >= 3:
            port = self.cos_ifs.setdefault(rest[0], {})
            if rest[1] == "unit" and len(rest) >= 5:
                rest = rest[:1] + rest[3:]  # unit N classifiers dscp X: same meaning for us
            if rest[1] in ("scheduler-map", "congestion-notification-profile"):
                port[rest[1]] = rest[2]
            elif rest[1] == "classifiers" and len(rest) >= 4 and rest[2] == "dscp":
                port["classifier"] = rest[3]

    def _take_cnp(self, rest: list[str]) -> None:
        if len(rest) < 2:
            return
        cnp = self.cnps.setdefault(rest[0], {"pfc_dscp": [], "output": {}, "watchdog": None, "cable_length_m": None})
        body = rest[1:]
        if body[:3] == ["input", "dscp", "code-point"] and len(body) >= 5 and body[4] == "pfc":
            cnp["pfc_dscp"].append(int(body[3], 2))
        elif body[:2] == ["input", "cable-length"] and len(body) >= 3:
            cnp["cable_length_m"] = _int(body[2])
        elif body[:3] == ["output", "ieee-802.1", "code-point"] and len(body) >= 6 and body[4] == "flow-control-queue":
            cnp["output"].setdefault(int(body[3], 2), []).append(int(body[5]))
        elif body[0] == "pfc-watchdog":
            wd = cnp["watchdog"] if cnp["watchdog"] is not None else {}
            if len(body) >= 3:
                wd[body[1]] = _int(body[2])
            cnp["watchdog"] = wd

    def queue_of(self, fc: str) -> int | None:
        return self.fcs.get(fc, {}).get("queue")

    def interface(self, ifname: str) -> dict[str, Any]:
        cos = self.cos_ifs.get(ifname, {})
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
        strict, bandwidth = [], {}
        for fc, sched_name in self.maps.get(cos.get("scheduler-map", ""), {}).items():
            queue = self.queue_of(fc)
            sched = self.schedulers.get(sched_name, {})
            if queue is None:
                continue
            if sched.get("priority") == "strict-high":
                strict.append(queue)
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
        return {
            "description": port.get("description"),
            "mtu": port.get("mtu"),
            "trust": "dscp" if cos.get("classifier") else None,
            "pfc_enabled": bool(cnp and cnp["pfc_dscp"]),
            # Junos' default when the profile sets none (reference 5.5)
            "cable_length_m": (cnp["cable_length_m"] or 100) if cnp else None,
            "pfc_priorities": sorted(prios),
            "ecn": dict(sorted(ecn.items())),
            "strict_queues": sorted(strict),
            "bandwidth_percent": dict(sorted(bandwidth.items(), key=lambda kv: int(kv[0]))),
            "watchdog": bool(cnp and cnp["watchdog"] is not None),
        }


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


class Driver(_base.Driver):
    """Junos (QFX, Junos and Junos EVO) over netmiko's juniper_junos."""

    platform = "junos"
    device_type = "juniper_junos"

    def __init__(self, conn: Any, device: str):
        super().__init__(conn, device)
        self._mode = "op"  # op | private | exclusive
        self._lines: list[str] = []
        self._diff: str | None = None

    @staticmethod
    def connection_class():
        from netmiko.juniper.juniper import JuniperSSH  # pylint: disable=import-outside-toplevel

        return JuniperSSH

    # -- pure ------------------------------------------------------------
    @staticmethod
    def render(plan: dict) -> list[str]:
        from jinja2 import Environment, StrictUndefined  # pylint: disable=import-outside-toplevel

        env = Environment(undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False, autoescape=False)
        text = env.from_string(TEMPLATE).render(**_context(plan))
        lines = [line for line in text.splitlines() if line.strip()]
        for line in lines:
            _base.check_cli_line(plan.get("name", "junos"), line)
        return lines

    @staticmethod
    def parse(running: str) -> dict:
        cos = _Cos(running)
        names = sorted(set(cos.cos_ifs) | set(cos.ifs))
        bound = [cos.cos_ifs[n]["congestion-notification-profile"] for n in sorted(cos.cos_ifs) if "congestion-notification-profile" in cos.cos_ifs[n]]
        dscp_map: dict[str, int] = {}
        for ifname in sorted(cos.cos_ifs):
            for dscp, fc in sorted(cos.classifiers.get(cos.cos_ifs[ifname].get("classifier", ""), {}).items()):
                queue = cos.queue_of(fc)
                if queue is not None:
                    dscp_map.setdefault(str(dscp), queue)
        return {
            "dscp_map": dict(sorted(dscp_map.items(), key=lambda kv: int(kv[0]))),
            "watchdog": _watchdog_state(cos, bound or sorted(cos.cnps)),
            "interfaces": {name: cos.interface(name) for name in names},
        }

    # -- channel ---------------------------------------------------------
    def _prompt_re(self) -> re.Pattern:
        base = re.escape(self.conn.base_prompt)
        return re.compile(r"(?m)^%s[>#] ?" % base)

    def _closed(self) -> bool:
        chan = getattr(self.conn, "remote_conn", None)
        return chan is None or bool(getattr(chan, "closed", False)) or bool(getattr(chan, "eof_received", False))

    def _run(self, commands: list[str], state: str, timeout: float = _READ_TIMEOUT_S) -> list[str]:
        """Send every command in one write and read until each has its prompt back.
        Returns each command's output (echo removed). A lost connection raises
        DeviceError(state=state)."""
        prompt = self._prompt_re()
        try:
            self.conn.write_channel("".join(cmd + "\n" for cmd in commands))
            buf = ""
            deadline = time.monotonic() + timeout
            while len(prompt.findall(buf)) < len(commands):
                chunk = self.conn.read_channel()
                if chunk:
                    buf += chunk
                    continue
                if self._closed():
                    raise OSError("the device closed the connection")
                if time.monotonic() > deadline:
                    raise DeviceErrorTimeout("no prompt after %d of %d commands within %d s" % (len(prompt.findall(buf)), len(commands), timeout))
                time.sleep(0.002)
        except DeviceErrorTimeout as exc:
            raise _base.DeviceError(self.device, str(exc), state=state) from None
        except (OSError, EOFError) as exc:
            self._mode = "op"
            raise _base.DeviceError(self.device, "connection lost: %s" % (exc or type(exc).__name__), state=state) from None
        text = buf.replace("\r\n", "\n").replace("\r", "\n")
        parts = prompt.split(text)
        outputs = []
        for part in parts[: len(commands)]:
            # each part: the echoed command, its output, then the context lines
            # ([edit], {master:0}, the commit-confirmed banner) before the next prompt
            body = part.split("\n", 1)[1] if "\n" in part else ""
            body = _CONTEXT_RE.sub("", body)
            outputs.append(body.strip("\n"))
        return outputs

    def _fail(self, message: str, *, line: str | None = None, said: str | None = None, state: str = _base.UNCHANGED) -> None:
        raise _base.DeviceError(self.device, message, line=line, device_said=said, state=state)

    def _discard(self, state: str) -> None:
        """rollback 0 and leave configuration mode; the device keeps its committed config."""
        if self._mode == "op":
            return
        self._run(["rollback 0", "exit configuration-mode"], state)
        self._mode = "op"
        self._diff = None

    def _enter(self, mode: str, state: str) -> str:
        out = self._run(["configure " + mode], state)[0]
        self._entered(mode, out, state)
        return out

    def _entered(self, mode: str, out: str, state: str) -> None:
        if re.search(r"(?im)^\s*error:|unknown command|syntax error", out):
            self._mode = "op"
            self._fail("configure %s refused" % mode, said=out, state=state)
        self._mode = mode

    def _switch_to_exclusive(self, state: str) -> None:
        """From the private candidate to configure exclusive in one round trip."""
        out = self._run(["rollback 0", "exit configuration-mode", "configure exclusive"], state)[-1]
        self._diff = None
        self._entered("exclusive", out, state)

    # -- device ----------------------------------------------------------
    def prepare(self) -> None:
        """netmiko's JuniperSSH session preparation already sets the screen
        width, turns complete-on-space off and paging off (screen-length 0)."""

    def gather(self) -> str:
        pre = "run " if self._mode != "op" else ""
        outs = self._run([pre + "show configuration class-of-service | display set", pre + "show configuration interfaces | display set"], _base.UNCHANGED)
        return "\n".join(out for out in outs if out.strip()) + "\n"

    def open_session(self, name: str) -> None:
        """configure private: a private candidate; nothing is locked and others' edits stay out."""
        self.session = name
        self._enter("private", _base.UNCHANGED)

    def load(self, lines: list[str]) -> None:
        for line in lines:
            _base.check_cli_line(self.device, line)
        outs = self._run(list(lines) + ["show | compare"], _base.UNCHANGED)
        self._check_lines(lines, outs)
        self._lines = list(lines)
        self._diff = outs[-1]

    def _check_lines(self, lines: list[str], outs: list[str]) -> None:
        for line, out in zip(lines, outs):
            if _LINE_ERROR_RE.search(out):
                self._discard(_base.UNCHANGED)
                self._fail("the device rejected a configuration line", line=line, said=out)

    def diff(self) -> str:
        if self._diff is None:
            self._diff = self._run(["show | compare"], _base.UNCHANGED)[0]
        return self._diff if self._diff.strip() else ""

    def abort(self) -> None:
        self._discard(_base.UNCHANGED)

    def commit(self, confirm_timeout_s: int | None) -> None:
        if self._mode == "private":
            # Junos refuses commit confirmed on a private candidate: stage the
            # same lines again under an exclusive lock, and check the diff did
            # not change (someone else's uncommitted change, or a commit since).
            private_diff = self.diff()
            self._switch_to_exclusive(_base.UNCHANGED)
            outs = self._run(self._lines + ["show | compare"], _base.UNCHANGED)
            self._check_lines(self._lines, outs)
            if outs[-1].strip() != private_diff.strip():
                self._discard(_base.UNCHANGED)
                self._fail(
                    "the exclusive candidate differs from the private one (uncommitted changes of another user, or a commit in between); nothing committed",
                    said=outs[-1],
                )
        comment = ' comment "%s"' % self.session if self.session and re.fullmatch(r"[A-Za-z0-9._:-]+", self.session) else ""
        if confirm_timeout_s is None:
            final, marker, lost_state = "commit" + comment, _COMMIT_OK, _base.UNKNOWN
        else:
            minutes = max(1, math.ceil(confirm_timeout_s / 60))
            final, marker, lost_state = "commit confirmed %d%s" % (minutes, comment), _COMMIT_CONFIRMED_OK, _base.PENDING
        # Both in one write: if the check fails the commit fails the same way.
        check, done = self._run(["commit check", final], lost_state)
        if marker in done and _COMMIT_OK in done and _COMMIT_CHECK_OK not in check:
            # never expected: the commit went through although the check did not
            self._fail(
                "commit check failed but the commit went through",
                line="commit check",
                said=check,
                state=_base.COMMITTED if confirm_timeout_s is None else _base.PENDING,
            )
        if _COMMIT_CHECK_OK not in check:
            self._discard(_base.UNCHANGED)
            self._fail("commit check failed", line="commit check", said=check)
        if marker not in done or _COMMIT_OK not in done:
            self._discard(_base.UNCHANGED)
            self._fail("commit failed", line=final, said=done)
        self._diff = None

    def _config_mode(self, state: str) -> None:
        """Be in configure exclusive with a candidate that holds nothing uncommitted."""
        if self._mode == "private":
            self._switch_to_exclusive(state)
        elif self._mode == "op":
            self._enter("exclusive", state)
            others = self._run(["show | compare"], state)[0]
            if others.strip():
                self._discard(state)
                self._fail("the candidate holds uncommitted changes of another user; refusing to commit them", said=others, state=state)

    def confirm(self, session: str | None = None) -> None:
        """A plain ``commit`` confirms a pending ``commit confirmed`` (Junos CLI)."""
        self._config_mode(_base.PENDING)
        # commit, then leave: one round trip (rollback 0 after a commit changes nothing)
        out = self._run(["commit", "rollback 0", "exit configuration-mode"], _base.PENDING)[0]
        self._mode = "op"
        if _COMMIT_OK not in out:
            self._fail("confirming commit failed", line="commit", said=out, state=_base.PENDING)

    def rollback(self, session: str | None = None) -> None:
        """Junos has no "cancel" for commit confirmed: load the configuration
        before it (``rollback 1``) and commit that, which also ends the timer
        (reference 5.1; napalm's junos driver rolls back the same way). Only
        while a confirmed commit is pending: otherwise rollback 1 would undo a
        good commit."""
        if not self.pending():
            return
        self._config_mode(_base.PENDING)
        # Not in one write: were rollback 1 refused, the commit after it would confirm the pending change.
        load = self._run(["rollback 1"], _base.PENDING)[0]
        if "load complete" not in load:
            self._discard(_base.PENDING)
            self._fail("loading the configuration before the pending commit failed", line="rollback 1", said=load, state=_base.PENDING)
        done = self._run(["commit", "rollback 0", "exit configuration-mode"], _base.PENDING)[0]
        self._mode = "op"
        if _COMMIT_OK not in done:
            self._fail("committing the rollback failed", line="commit", said=done, state=_base.PENDING)

    def pending(self) -> dict | None:
        pre = "run " if self._mode != "op" else ""
        out = self._run([pre + "show system commit"], _base.UNKNOWN)[0]
        match = _PENDING_RE.search(out)
        if not match:
            return None
        session = None
        lines = out.splitlines()
        for index, line in enumerate(lines):
            if _PENDING_RE.search(line) and index + 1 < len(lines) and re.match(r"^\s+\S", lines[index + 1]) and not re.match(r"^\s*\d", lines[index + 1]):
                session = lines[index + 1].strip()
        return {"session": session or self.session, "remaining_s": int(match.group(1)) * 60}

    def readback_missing(self, lines: list[str]) -> list[str]:
        have = _statements(self.gather())
        return [line for line in lines if line.startswith("set ") and not all(atom in have for atom in _atoms(line))]

    def save(self) -> None:
        """Nothing to do: a Junos commit writes juniper.conf.gz, which the device boots from."""

    # -- counters (read-only; module_utils/_counters.py) ------------------
    # Per port, every command in one write (reference 5.6 / 5.6.1): PFC per
    # priority from 'show interfaces X extensive' (section 'MAC Priority Flow
    # Control Statistics', rows 'Priority : n rx tx', confirmed), input/output
    # 'Drops:' from its error blocks where printed; per queue from 'show
    # interfaces queue X' by label ('Tail-dropped packets', 'RED-dropped
    # packets', 'ECN-CE packets'; ECN-CE is QFX-only and not in Juniper's
    # docs). Junos has no PFC watchdog counter command (reference 5.6).
    _COUNTER_PORT = re.compile(r"[A-Za-z0-9/:._-]+")
    _COUNTER_COMMAND = re.compile(r"^show interfaces (?:queue (\S+)|(\S+) extensive)$")
    _PFC_ROW = re.compile(r"^\s*Priority\s*:\s*(\d+)\s+(\d+)\s+(\d+)\s*$")
    _QUEUE_HEAD = re.compile(r"(?m)^Queue:\s*(\d+)\b")
    _QUEUE_ROW = re.compile(r"^\s*([A-Za-z][A-Za-z -]*?)\s*:\s*(\S+)")

    @staticmethod
    def counter_commands(ports: list[str] | None = None) -> list[str]:
        if not ports:
            raise ValueError("ports: Junos shows counters per interface; give the ports (or lossless_fabric_device.ports)")
        for name in ports:
            if not isinstance(name, str) or not Driver._COUNTER_PORT.fullmatch(name):
                raise ValueError("ports: %r is not a Junos interface name" % (name,))
        return [command for name in ports for command in ("show interfaces %s extensive" % name, "show interfaces queue %s" % name)]

    def read_counters(self, commands: list[str]) -> dict[str, str]:
        """All commands in one write; {command: output}."""
        pre = "run " if self._mode != "op" else ""
        return dict(zip(commands, self._run([pre + command for command in commands], _base.UNCHANGED)))

    @staticmethod
    def parse_counters(outputs: dict[str, str]) -> tuple[dict[str, dict], dict[str, str]]:
        """({port: counters} in the _counters shape, {command: what Junos said} for failed commands)."""
        ports: dict[str, dict] = {}
        errors: dict[str, str] = {}
        for command, text in outputs.items():
            match = Driver._COUNTER_COMMAND.match(command)
            if not match:
                continue
            if not text.strip() or re.search(r"(?im)^\s*error:|syntax error|unknown command", text):
                errors[command] = text or "(no output)"
                continue
            found = Driver._queue_counters(text) if match.group(1) else Driver._extensive_counters(text)
            if found:
                ports.setdefault(match.group(1) or match.group(2), {}).update(found)
            else:
                errors[command] = text
        return ports, errors

    @staticmethod
    def _extensive_counters(text: str) -> dict:
        found: dict[str, Any] = {}
        rx: dict[str, int] = {}
        tx: dict[str, int] = {}
        section = False
        for line in text.splitlines():
            if "MAC Priority Flow Control Statistics" in line:
                section = True
                continue
            row = Driver._PFC_ROW.match(line) if section else None
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

    @staticmethod
    def _queue_counters(text: str) -> dict:
        from ansible_collections.lossless.fabric.plugins.module_utils import _counters  # pylint: disable=import-outside-toplevel

        heads = list(Driver._QUEUE_HEAD.finditer(text))
        tail: dict[str, int] = {}
        red: dict[str, int] = {}
        ecn: dict[str, int] = {}
        for index, head in enumerate(heads):
            queue = str(int(head.group(1)))
            block = text[head.end() : heads[index + 1].start() if index + 1 < len(heads) else len(text)]
            seen: set[str] = set()
            for line in block.splitlines():
                row = Driver._QUEUE_ROW.match(line)
                if not row or row.group(1) in seen:
                    continue  # the first 'RED-dropped packets' is the total; Low/High rows follow
                seen.add(row.group(1))
                value = _counters.count(row.group(2))
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
        return found


class DeviceErrorTimeout(Exception):
    """Internal: the device stopped answering (turned into DeviceError)."""
