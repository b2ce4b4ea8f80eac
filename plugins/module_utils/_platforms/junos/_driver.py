# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Juniper Junos (QFX) driver: lossless RoCEv2 QoS as ``set`` lines, applied as a transaction.

Sources: docs/vendor-junos.md (every command and parsed form with its Juniper source;
what is unverified). Plan-side Junos data: _vendor_junos.py, derived in _intent/_plan.py _junos_plan.

Transaction (one netmiko JuniperSSH connection, one CLI):

    open_session  show system commit: refuse another run's pending commit confirmed;
                  configure private                 staging and diff never lock the database
    load          set/delete lines + show | compare one write, one read; errors per line
    diff          the cached show | compare         '' when nothing would change
    abort         rollback 0, exit configuration-mode
    commit        rollback 0, exit, configure exclusive, the same lines, show | compare
                  (must equal the private diff, so nobody else's uncommitted change rides
                  along), then commit check + commit confirmed N comment "<session>"
    confirm       commit (in configuration mode)    a plain commit confirms; only this run's pending commit
    rollback      rollback 1 + commit               only while THIS run's confirmed commit is entry 0
    lost link     after this run's commit confirmed: state "pending confirmation"; during it: "unknown"
    save          nothing: a Junos commit is already persistent (juniper.conf.gz)

Why the commit leaves private mode: Junos refuses ``commit confirmed`` on a
private candidate ("error: commit confirmed not supported for private
configuration", Juniper/py-junos-eznc PR #954; the Junos XML protocol guide
says the same for <open-configuration><private/>). ``configure exclusive``
supports it and locks the candidate only for the commit itself.
"""

from __future__ import annotations

import fnmatch
import math
import re
import shlex
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _channel, _records
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos._vendor import L2_OVERHEAD_BYTES

PREFIX = "LF-ROCE"
FC_NAME = PREFIX + "-TC%d"  # forwarding class of traffic class n (queue n)
CLASSIFIER = PREFIX + "-DSCP"
CNP = PREFIX + "-CNP-%dM"  # one congestion-notification profile per cable length (metres)
SCHEDULER = PREFIX + "-TC%d"  # scheduler of a queue without ECN
ECN_SUFFIX = "-%d-%d-%d"  # fill-level low %, high %, max probability %: one per distinct ECN curve

# Junos PFC watchdog (Juniper "PFC Watchdog",
# https://www.juniper.net/documentation/us/en/software/junos/cos/topics/topic-map/cos-pfc-watchdog-configure.html:
# "By default, the polling interval is 100 milliseconds, the detection period is set to 2 (that is,
# two polling intervals, or 200 milliseconds), and the recovery time is 200 milliseconds"): the
# detection time is poll-interval x detection (number of polls). We keep 2 polls whenever the plan's
# time divides evenly. The largest poll interval we ask for is 1000 ms: UNVERIFIED, the ranges of
# poll-interval, detection and recovery-time are not in any Juniper text we could read (the lab
# simulator enforces no range; docs/vendor-junos.md says where we looked).
WATCHDOG_POLLS = 2
WATCHDOG_MAX_POLLS = 10
WATCHDOG_MAX_POLL_MS = 1000
# Junos defaults when the watchdog is on without options (the PFC Watchdog page above).
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
{% endif %}
set class-of-service schedulers {{ s.name }} transmit-rate percent {{ s.percent }}
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
{% for fcs in fc_sets %}
delete class-of-service forwarding-class-sets {{ fcs.name }}
{% for fc in fcs.classes %}
set class-of-service forwarding-class-sets {{ fcs.name }} class {{ fc }}
{% endfor %}
{% endfor %}
{% for t in tcps %}
delete class-of-service traffic-control-profiles {{ t.name }}
set class-of-service traffic-control-profiles {{ t.name }} scheduler-map {{ t.scheduler_map }}
set class-of-service traffic-control-profiles {{ t.name }} guaranteed-rate percent {{ t.percent }}
{% endfor %}
{% for side in shared_buffer %}
{% for part in side.partitions %}
set class-of-service shared-buffer {{ side.name }} buffer-partition {{ part.name }} percent {{ part.percent }}
{% endfor %}
{% endfor %}
{% for port in ports %}
set class-of-service interfaces {{ port.name }} classifiers dscp {{ classifier }}
set class-of-service interfaces {{ port.name }} congestion-notification-profile {{ port.cnp }}
{% if port.scheduler_map %}
delete class-of-service interfaces {{ port.name }} forwarding-class-set
set class-of-service interfaces {{ port.name }} scheduler-map {{ port.scheduler_map }}
{% else %}
delete class-of-service interfaces {{ port.name }} scheduler-map
{% for b in port.fc_sets %}
set class-of-service interfaces {{ port.name }} forwarding-class-set {{ b.fc_set }} output-traffic-control-profile {{ b.tcp }}
{% endfor %}
{% endif %}
{% if dcbx_no_autoneg %}
set protocols dcbx interface {{ port.name }} priority-flow-control no-auto-negotiation
{% endif %}
{% if port.description %}
set interfaces {{ port.name }} description "{{ port.description }}"
{% endif %}
set interfaces {{ port.name }} mtu {{ media_mtu }}
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
# 'commit confirmed <minutes>': "in the range from 1 through 65,535 minutes" (Juniper, "Commit the
# Candidate Configuration Only After Confirmation Using the Junos XML Protocol", <confirm-timeout>:
# https://juniper.net/documentation/us/en/software/junos/junos-xml-protocol/topics/task/junos-xml-protocol-configuration-committing-with-confirmation.html).
# The CLI page states no range; that the CLI takes the same one is unverified (the simulator does).
_CONFIRM_MINUTES_MAX = 65535
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


def _context(plan: dict) -> dict[str, Any]:  # pylint: disable=too-many-locals
    junos = plan.get("junos")
    if not isinstance(junos, dict):
        raise ValueError("junos: the plan has no 'junos' section (model, scheduling, media MTU, shares): build it with lossless.fabric.fabric_plan")
    classes = {int(tc): cls for tc, cls in plan["traffic_classes"].items()}
    pfc = [int(p) for p in plan["pfc_priorities"]]
    ecn_queue = int(plan["ecn_queue"])
    transmit = {int(q): int(v) for q, v in junos["transmit_percent"].items()}
    ets = junos["scheduling"] == "ets"
    fcs = [{"name": FC_NAME % tc, "queue": tc, "pfc_priority": tc if cls["lossless"] else None} for tc, cls in sorted(classes.items())]
    code_points = [{"fc": FC_NAME % int(tc), "bits": _bits(int(dscp), 6)} for dscp, tc in sorted(plan["dscp_map"].items(), key=lambda kv: int(kv[0]))]
    pfc_input = [_bits(int(dscp), 6) for dscp, tc in sorted(plan["dscp_map"].items(), key=lambda kv: int(kv[0])) if int(tc) in pfc]
    # The plan's forwarding class n sits on queue n with PFC priority n (our render); the
    # parser reads any mapping (queue, class and priority may differ on hand-made configs).
    pfc_output = [{"bits": _bits(prio, 3), "queue": prio} for prio in pfc]

    plain = []
    for tc, cls in sorted(classes.items()):
        if tc == ecn_queue and classes[tc]["ecn"]:
            continue
        plain.append({"name": SCHEDULER % tc, "strict": cls["strict"], "percent": transmit[tc], "drop_profile": None, "tc": tc})
    # Junos' own classes the classifier does not feed (host-outbound network-control, flooded
    # mcast) still need a scheduler on a port with a scheduler map: one of ours on a queue we
    # already schedule, else their own (shares from the plan: _intent/_plan.py _junos_plan).
    own: list[dict] = []
    default_entries: list[dict] = []
    for fc_name, queue in sorted(junos["default_classes"].items(), key=lambda kv: kv[1]):
        if queue in classes:
            default_entries.append({"fc": fc_name, "tc": queue})
            continue
        name = PREFIX + ("-MC" if fc_name == "mcast" else "-NC" if fc_name == "network-control" else "-Q%d" % queue)
        own.append({"name": name, "strict": False, "percent": transmit[queue], "drop_profile": None, "tc": queue, "fc": fc_name})
    mc = [s for s in own if s["fc"] == "mcast"]
    curves: dict[tuple[int, int, int], list[str]] = {}
    for ifname, port in plan["ports"].items():
        curves.setdefault(_ecn_curve(ifname, port["ecn"], plan), []).append(ifname)
    drop_profiles, ecn_schedulers, maps, tcps, port_map = [], [], [], [], {}
    for curve in sorted(curves):
        suffix = ECN_SUFFIX % curve
        dp_name = PREFIX + "-DP" + suffix
        drop_profiles.append({"name": dp_name, "low": curve[0], "high": curve[1], "probability": curve[2]})
        ecn_cls = classes[ecn_queue]
        ecn_sched = {
            "name": (SCHEDULER % ecn_queue) + suffix,
            "strict": ecn_cls["strict"],
            "percent": transmit[ecn_queue],
            "drop_profile": dp_name,
            "tc": ecn_queue,
        }
        ecn_schedulers.append(ecn_sched)
        by_tc = {s["tc"]: s["name"] for s in plain + [ecn_sched] + own}
        entries = [{"fc": FC_NAME % s["tc"], "scheduler": s["name"], "tc": s["tc"]} for s in plain + [ecn_sched]]
        entries += [{"fc": e["fc"], "scheduler": by_tc[e["tc"]], "tc": e["tc"]} for e in default_entries]
        entries += [{"fc": s["fc"], "scheduler": s["name"], "tc": s["tc"]} for s in own if not (ets and s["fc"] == "mcast")]
        entries.sort(key=lambda e: (e["tc"], e["fc"]))
        map_name = PREFIX + "-SM" + suffix
        maps.append({"name": map_name, "entries": entries})
        if ets:
            tcps.append({"name": PREFIX + "-TCP-UC" + suffix, "scheduler_map": map_name, "percent": junos["group_percent"]["unicast"]})
        for ifname in curves[curve]:
            port_map[ifname] = suffix
    fc_sets = []
    if ets:
        # Every class a port forwards must sit in a priority group on an ETS port (Juniper:
        # "any forwarding class that is not assigned to a priority group on that interface
        # receives no bandwidth"); multidestination (mcast) in a group of its own.
        unicast = sorted({e["fc"] for m in maps for e in m["entries"]})
        fc_sets = [{"name": PREFIX + "-UC", "classes": unicast}, {"name": PREFIX + "-MC", "classes": ["mcast"]}]
        maps.append({"name": PREFIX + "-SM-MC", "entries": [{"fc": "mcast", "scheduler": mc[0]["name"]}]})
        tcps.append({"name": PREFIX + "-TCP-MC", "scheduler_map": PREFIX + "-SM-MC", "percent": junos["group_percent"]["mcast"]})
    # Junos sizes the PFC headroom from the profile's cable length (default 100 m) and MRU
    # (reference 5.5), so ports of different cable lengths need their own profile.
    lengths = sorted({int(port["cable_length_m"]) for port in plan["ports"].values()})
    ports = []
    for ifname, port in plan["ports"].items():
        suffix = port_map[ifname]
        ports.append(
            {
                "name": ifname,
                "description": port["description"],
                "cnp": CNP % int(port["cable_length_m"]),
                "scheduler_map": None if ets else PREFIX + "-SM" + suffix,
                "fc_sets": [{"fc_set": PREFIX + "-UC", "tcp": PREFIX + "-TCP-UC" + suffix}, {"fc_set": PREFIX + "-MC", "tcp": PREFIX + "-TCP-MC"}]
                if ets
                else [],
            }
        )
    for port in ports:
        # The rendered text is split into lines: a newline in a value would
        # become a second command, so values are checked before rendering.
        for value in (port["name"], port["description"] or ""):
            _base.check_cli_line(port["name"], value)
        if not re.fullmatch(r"[A-Za-z0-9/:.-]+", port["name"]) or '"' in (port["description"] or "") or "\\" in (port["description"] or ""):
            raise _base.DeviceError(
                port["name"], "refusing a name or description Junos would not read as one token or one quoted string", state=_base.UNCHANGED
            )
    shared = [
        {"name": side, "partitions": [{"name": name, "percent": int(pct)} for name, pct in junos["shared_buffer"][side].items()]}
        for side in ("ingress", "egress")
        if side in junos["shared_buffer"]
    ]
    return {
        "fcs": fcs,
        "classifier": CLASSIFIER,
        "code_points": code_points,
        "cnps": [{"name": CNP % length, "cable_length_m": length} for length in lengths],
        "pfc_input": pfc_input,
        "pfc_output": pfc_output,
        "watchdog": _watchdog(plan["watchdog"]),
        "drop_profiles": drop_profiles,
        "schedulers": sorted(plain + ecn_schedulers + own, key=lambda s: (s["tc"], s["name"])),
        "maps": maps,
        "fc_sets": fc_sets,
        "tcps": tcps,
        "shared_buffer": shared,
        "ports": ports,
        "dcbx_no_autoneg": junos["dcbx"] == "no-auto-negotiation",
        "media_mtu": int(junos["media_mtu"]),
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


_COMMIT_ENTRY_RE = re.compile(r"^\s*(\d+)\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: \S+)?) by (\S+) via (\S+)(?:\s+(.*?))?\s*$")


def parse_commit_history(text: str) -> list[dict[str, Any]]:
    """'show system commit' entries: index, at, user, via, the text after the method
    ('commit confirmed, rollback in 10mins', ...), the comment (the next, indented line)
    and pending_minutes. Refuses text with no entry (ValueError naming the form)."""
    entries: list[dict[str, Any]] = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw.rstrip()
        if not line.strip() or _NOISE_RE.match(line.strip()):
            continue
        match = _COMMIT_ENTRY_RE.match(line)
        if match:
            extra = match.group(5) or ""
            minutes = _PENDING_RE.search(extra)
            entries.append(
                {
                    "index": int(match.group(1)),
                    "at": match.group(2),
                    "user": match.group(3),
                    "via": match.group(4),
                    "extra": extra,
                    "comment": None,
                    "pending_minutes": int(minutes.group(1)) if minutes and "commit confirmed" in extra else None,
                }
            )
        elif line.startswith((" ", "\t")) and entries and entries[-1]["comment"] is None:
            entries[-1]["comment"] = line.strip()
        elif re.match(r"^\s*rescue\s", line) or line.strip() == "rollback pending":
            continue
        elif entries and line.startswith((" ", "\t")):
            continue  # a second comment line
        else:
            raise ValueError("junos: 'show system commit' line %r is not a commit entry ('N   YYYY-MM-DD hh:mm:ss TZ by USER via CLIENT ...')" % line[:80])
    if not entries and text.strip():
        raise ValueError("junos: no commit entries in 'show system commit' output")
    return entries


def _describe(pending: dict) -> str:
    parts = ["commit confirmed"]
    if pending.get("user"):
        parts.append("by %s" % pending["user"])
    if pending.get("at"):
        parts.append("at %s" % pending["at"])
    parts.append("comment %r" % pending.get("session") if pending.get("session") else "no comment")
    if pending.get("remaining_s") is not None:
        parts.append("rollback in %d min" % (pending["remaining_s"] // 60))
    return ", ".join(parts)


# The registry record (interface names, IP MTU, ECN in percent of the queue buffer): _records.py.
PLATFORM = _records.JUNOS


class Driver(_base.Driver):
    """Junos (QFX, Junos and Junos EVO) over netmiko's juniper_junos."""

    platform = "junos"
    device_type = "juniper_junos"
    # Junos has no PFC watchdog command to read (docs/vendor-junos.md, docs/counters.md).
    counters_not_available = ("watchdog_storms",)

    def __init__(self, conn: Any, device: str):
        super().__init__(conn, device)
        self._mode = "op"  # op | private | exclusive
        self._lines: list[str] = []
        self._diff: str | None = None
        # True once this run's own 'commit confirmed' went through: from then on a lost
        # connection leaves the device pending confirmation, never "unchanged".
        self._own_pending = False
        self._own_plain = False  # this run committed for good (no timer): nothing to confirm

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

    # -- channel ---------------------------------------------------------
    def _prompt_re(self) -> re.Pattern:
        base = re.escape(self.conn.base_prompt)
        return re.compile(r"(?m)^%s[>#] ?" % base)

    def _run(self, commands: list[str], state: str, timeout: float = _READ_TIMEOUT_S) -> list[str]:
        """Send every command in one write and read until each has its prompt back.
        Returns each command's output (echo removed). A lost connection raises
        DeviceError(state=state)."""
        prompt = self._prompt_re()
        if self._own_pending and state == _base.UNCHANGED:
            state = _base.PENDING
        try:
            # lone_cr: Junos redraws a line with a bare carriage return; it ends a line here.
            reply = _channel.exchange(self.conn, commands, prompt, timeout, lone_cr="\n")
        except _channel.Silent as exc:
            raise _base.DeviceError(
                self.device, "no prompt after %d of %d commands within %g s (step: %r)" % (exc.answered, exc.expected, timeout, commands[0]), state=state
            ) from None
        except _channel.transport_errors() as exc:
            self._mode = "op"
            raise _base.DeviceError(self.device, "connection lost during %r: %s" % (commands[0], exc or type(exc).__name__), state=state) from None
        outputs = []
        for part in reply.segments:
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
            users = re.findall(r"(?m)^\s+(\S+) terminal \S+ \(pid \d+\)", out)
            if re.search(r"(?i)configuration database modified", out):
                why = "the shared candidate holds uncommitted changes of another user%s" % (" (%s)" % ", ".join(users) if users else "")
            elif re.search(r"(?i)configuration database locked by", out):
                why = "the configuration is locked by %s" % (", ".join(users) or "another user")
            else:
                why = "configure %s refused" % mode
            self._fail(why + "; nothing changed", said=out, state=state)
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
        commands = [
            pre + "show configuration class-of-service | display set",
            pre + "show configuration interfaces | display set",
            pre + "show configuration protocols dcbx | display set",
        ]
        outs = self._run(commands, _base.UNCHANGED)
        for index, (command, out) in enumerate(zip(commands, outs)):
            if _LINE_ERROR_RE.search(out):
                if index == 2:
                    outs[index] = ""  # a release without 'protocols dcbx' (Junos EVO: unverified) has nothing to read there
                    continue
                self._fail("reading the configuration failed", line=command, said=out)
        return "\n".join(out for out in outs if out.strip()) + "\n"

    def open_session(self, name: str) -> None:
        """configure private: a private candidate; nothing is locked and others' edits stay out.
        First refuse (state unchanged) when another run's 'commit confirmed' is pending:
        committing now would confirm it (any commit does, Junos CLI guide)."""
        self.session = name
        other = self.pending()
        if other is not None and other.get("session") != name:
            self._fail("another commit is pending confirmation (%s); refusing to change the switch until it is confirmed or rolled back" % _describe(other))
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
        if confirm_timeout_s is not None and math.ceil(confirm_timeout_s / 60) > _CONFIRM_MINUTES_MAX:
            # Refused before anything is committed: Junos would reject the number itself.
            self._discard(_base.UNCHANGED)
            self._fail(
                "confirm_timeout %d s is %d minutes; Junos takes 'commit confirmed' 1-%d minutes"
                " (Juniper Junos XML protocol guide, <confirm-timeout>); nothing committed"
                % (confirm_timeout_s, math.ceil(confirm_timeout_s / 60), _CONFIRM_MINUTES_MAX)
            )
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
        # The comment is how a later run (and pending()) tells this run's commit from another's.
        # 'commit' takes its options in any order (Junos 'commit' syntax: each option optional);
        # Juniper's own examples and public captures use 'commit confirmed N comment "..."'.
        comment = ' comment "%s"' % self.session if self.session and re.fullmatch(r"[A-Za-z0-9._:-]+", self.session) else ""
        # Lost during the commit itself: it may or may not have gone through.
        if confirm_timeout_s is None:
            final, marker, lost_state = "commit" + comment, _COMMIT_OK, _base.UNKNOWN
        else:
            minutes = max(1, math.ceil(confirm_timeout_s / 60))
            final, marker, lost_state = "commit confirmed %d%s" % (minutes, comment), _COMMIT_CONFIRMED_OK, _base.UNKNOWN
        # A commit now would confirm another run's pending 'commit confirmed': look again
        # under the exclusive lock (open_session looked before staging).
        other = self.pending()
        if other is not None and other.get("session") != self.session:
            self._discard(_base.UNCHANGED)
            self._fail("another commit is pending confirmation (%s); nothing committed" % _describe(other))
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
        self._own_pending = confirm_timeout_s is not None
        self._own_plain = confirm_timeout_s is None

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

    def _own(self, session: str | None, state: str) -> dict | None:
        """The pending confirmed commit if it is this run's (its comment is ``session``, or this
        connection made it); None when nothing is pending. Another run's pending commit:
        DeviceError naming it; this run never confirms or rolls back a commit it did not make."""
        found = self.pending()
        if found is None:
            return None
        want = session or self.session
        if found.get("session") is None and self._own_pending:
            return found  # ours, committed on this connection (a comment Junos did not keep)
        if want is None or found.get("session") != want:
            self._fail(
                "the pending commit is not this run's (%s; this run is %s); not confirming or rolling back another run's commit"
                % (_describe(found), want or "unnamed"),
                state=_base.PENDING,
            )
        return found

    def confirm(self, session: str | None = None) -> None:
        """A plain ``commit`` confirms a pending ``commit confirmed`` (Junos CLI user guide,
        'commit confirmed': "you have to explicitly accept the commitment, either by typing the
        commit command again or by typing the commit check command"). Only this run's."""
        if self._own(session, _base.PENDING) is None:
            if self._own_plain:
                return  # committed without a timer: nothing to confirm
            self._fail("no pending commit to confirm (confirmed already, or rolled back by its timer)", state=_base.UNKNOWN)
        self._config_mode(_base.PENDING)
        # commit, then leave: one round trip (rollback 0 after a commit changes nothing)
        out = self._run(["commit", "rollback 0", "exit configuration-mode"], _base.PENDING)[0]
        self._mode = "op"
        if _COMMIT_OK not in out:
            self._fail("confirming commit failed", line="commit", said=out, state=_base.PENDING)
        self._own_pending = False

    def rollback(self, session: str | None = None) -> None:
        """Junos has no "cancel" for commit confirmed: load the configuration
        before it (``rollback 1``) and commit that, which also ends the timer
        (the CLI guide: rollback 1 loads the configuration committed before the
        current one; Juniper's XML protocol guide: a plain commit before the
        deadline "cancels the rollback" and commits the candidate, here the
        configuration rollback 1 loaded; napalm's junos driver rolls back the
        same way). No Juniper page names "rollback 1 + commit" as THE cancel in
        one sentence: the two documented steps are combined here. Only while THIS run's confirmed commit
        is pending and is the newest commit (entry 0): otherwise rollback 1 would
        undo someone else's commit."""
        if self._own(session, _base.PENDING) is None:
            self._own_pending = False
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
        self._own_pending = False

    def pending(self) -> dict | None:
        """The pending 'commit confirmed', from 'show system commit' as Junos prints it: the
        newest entry (0) ends with 'commit confirmed, rollback in Nmins' and its comment, if
        any, is on the next, indented line (public captures, e.g. a QFX in Juniper Mist's
        docs). Older entries keep that text after they were confirmed, so only entry 0 counts."""
        pre = "run " if self._mode != "op" else ""
        out = self._run([pre + "show system commit"], _base.UNKNOWN)[0]
        try:
            entries = parse_commit_history(out)
        except ValueError as exc:
            self._fail(str(exc), line="show system commit", said=out, state=_base.UNKNOWN)
        newest = next((e for e in entries if e["index"] == 0), None)
        if not newest or newest["pending_minutes"] is None:
            return None
        return {"session": newest["comment"], "user": newest["user"], "remaining_s": newest["pending_minutes"] * 60, "at": newest["at"]}

    @staticmethod
    def running_of(lines: list[str]) -> str:
        """'show configuration | display set' of a device holding the rendered lines: their 'set' statements
        (render's 'delete' lines clear our own objects first and leave nothing behind)."""
        return "\n".join(line for line in lines if line.startswith("set "))

    def readback_missing(self, lines: list[str]) -> list[str]:
        return self.missing_lines(lines, self.gather())

    @staticmethod
    def missing_lines(lines: list[str], running: str) -> list[str]:
        """The rendered 'set' lines that ``running`` (either form parse() reads) does not carry. Pure: readback_missing's logic."""
        have = _statements(running)
        return [line for line in lines if line.startswith("set ") and not all(atom in have for atom in _atoms(line))]

    def save(self) -> None:
        """Nothing to do: a Junos commit writes juniper.conf.gz, which the device boots from."""

    # -- counters (read-only; module_utils/_switches/_counters.py) ------------------
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
        """({port: counters} in the _snapshot shape, {command: what Junos said} for failed commands)."""
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
        return found

    # -- links (read-only; module_utils/_switches/_links.py) -----------------
    # Per port, like the counters: 'show lldp neighbors interface X | display xml' (the detail view: the
    # RPC reply napalm's junos get_lldp_neighbors_detail reads, lldp-neighbors-information ->
    # lldp-neighbor-information with lldp-local-interface, lldp-remote-system-name, lldp-remote-port-id,
    # lldp-remote-port-id-subtype, lldp-remote-port-description, lldp-remote-chassis-id) and
    # 'show interfaces X' ('Physical interface: X, Enabled, Physical link is Up', '... Speed: 10Gbps, ...':
    # Juniper's show interfaces page; ntc-templates juniper_junos_show_interfaces2.raw).
    # A Junos peer may send its port ID as a locally assigned number (its SNMP ifIndex) with the
    # interface name in the port description: both are reported as sent. docs/vendor-junos.md.

    @staticmethod
    def link_commands(ports: list[str] | None = None) -> list[str]:
        if not ports:
            raise ValueError("ports: Junos shows LLDP and link state per interface here; give the ports (or lossless_fabric_device.ports)")
        for name in ports:
            if not isinstance(name, str) or not Driver._COUNTER_PORT.fullmatch(name):
                raise ValueError("ports: %r is not a Junos interface name" % (name,))
        return [c for name in ports for c in ("show lldp neighbors interface %s | display xml" % name, "show interfaces %s" % name)]

    @staticmethod
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
# lldp-remote-port-id-subtype words (napalm junos fixtures: 'Locally assigned', 'Mac address'; 'Interface name':
# the LLDP-MIB name as Junos prints the others, unverified).
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
    import xml.etree.ElementTree as ET  # pylint: disable=import-outside-toplevel

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
    import json  # pylint: disable=import-outside-toplevel

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
