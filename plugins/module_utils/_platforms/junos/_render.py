# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Juniper Junos rendering: the plan through one Jinja2 template into atomic ``set``/``delete`` lines,
and back (running_of: the 'display set' of a device holding them). Pure: no device; the driver
(_driver.py) loads the lines in a configuration transaction. Every statement with its Juniper
source: docs/vendor-junos.md.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _vendor as _vendor_junos

PREFIX = "LF-ROCE"
FC_NAME = PREFIX + "-TC%d"  # forwarding class of traffic class n (queue n)
CLASSIFIER = PREFIX + "-DSCP"
CNP = PREFIX + "-CNP-%dM"  # one congestion-notification profile per cable length (metres)
SCHEDULER = PREFIX + "-TC%d"  # scheduler of a queue without ECN
ECN_SUFFIX = "-%d-%d-%d"  # fill-level low %, high %, max probability %: one per distinct ECN curve

# The PFC watchdog's forms and limits: _vendor_junos (watchdog_polls, watchdog_errors), shared with the intent's check.

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
{% if port.cnp %}
set class-of-service interfaces {{ port.name }} congestion-notification-profile {{ port.cnp }}
{% else %}
delete class-of-service interfaces {{ port.name }} congestion-notification-profile
{% endif %}
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


def _bits(value: int, width: int) -> str:
    return format(value, "0%db" % width)


def _watchdog(plan_wd: dict) -> dict | None:
    """The plan's watchdog as Junos pfc-watchdog options, or None when it is off."""
    if not plan_wd["enabled"]:
        return None
    detect = int(plan_wd["detection_time_ms"])
    for key, why in _vendor_junos.watchdog_errors(detect, int(plan_wd["restoration_time_ms"]), plan_wd["action"]):
        raise ValueError("junos: watchdog %s %r: %s" % (key, plan_wd[key], why))
    poll_ms, polls = _vendor_junos.watchdog_polls(detect)
    return {"poll_ms": poll_ms, "polls": polls, "recovery_ms": int(plan_wd["restoration_time_ms"])}


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
    why = _vendor_junos.fill_levels_error(int(ecn["min_threshold_bytes"]), int(ecn["max_threshold_bytes"]), buffer_bytes)
    if why:
        raise ValueError("junos: %s: %s" % (ifname, why))
    low = _vendor_junos.percent_of(int(ecn["min_threshold_bytes"]), buffer_bytes)
    high = _vendor_junos.percent_of(int(ecn["max_threshold_bytes"]), buffer_bytes)
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
    marks = classes[ecn_queue]["ecn"] and any(port.get("ecn") for port in plan["ports"].values())
    for tc, cls in sorted(classes.items()):
        if tc == ecn_queue and marks:
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
    # Mode pfc_only (issue 36): a port without ECN thresholds gets the scheduler map without a drop profile (curve None).
    curves: dict[tuple[int, int, int] | None, list[str]] = {}
    for ifname, port in plan["ports"].items():
        curve = _ecn_curve(ifname, port["ecn"], plan) if port.get("ecn") and classes[ecn_queue]["ecn"] else None
        curves.setdefault(curve, []).append(ifname)
    drop_profiles, ecn_schedulers, maps, tcps, port_map = [], [], [], [], {}
    for curve in sorted(curves, key=lambda c: (c is not None, c or ())):
        marking = []
        suffix = ""
        if curve is not None:
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
            marking = [ecn_sched]
        by_tc = {s["tc"]: s["name"] for s in plain + marking + own}
        entries = [{"fc": FC_NAME % s["tc"], "scheduler": s["name"], "tc": s["tc"]} for s in plain + marking]
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
                # mode ecn_only: no PFC, so no congestion-notification profile on the port (deleted)
                "cnp": CNP % int(port["cable_length_m"]) if port["pfc_priorities"] else None,
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
        "cnps": [{"name": CNP % length, "cable_length_m": length} for length in lengths] if pfc else [],
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


@functools.lru_cache(maxsize=1)
def _template() -> Any:
    """TEMPLATE compiled once per process (fabric_plan renders every switch's plan: _switches/_config.render_errors)."""
    from jinja2 import Environment, StrictUndefined  # pylint: disable=import-outside-toplevel

    env = Environment(undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False, autoescape=False)
    return env.from_string(TEMPLATE)


def render(plan: dict) -> list[str]:
    text = _template().render(**_context(plan))
    lines = [line for line in text.splitlines() if line.strip()]
    for line in lines:
        _base.check_cli_line(plan.get("name", "junos"), line)
    return lines


def running_of(lines: list[str]) -> str:
    """'show configuration | display set' of a device holding the rendered lines: their 'set' statements
    (render's 'delete' lines clear our own objects first and leave nothing behind)."""
    return "\n".join(line for line in lines if line.startswith("set "))
