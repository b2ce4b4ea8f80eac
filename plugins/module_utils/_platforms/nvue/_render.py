# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""NVIDIA Cumulus Linux 5.x (NVUE) rendering: the plan through one Jinja template into ``nv set`` lines,
every number from the plan, on named profiles bound to the plan's ports. Pure: no device; the driver
(_driver.py) types them into NVUE's pending revision. Every command with its source: docs/vendor-nvue.md.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common._snapshot import natural as _natural
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _vendor as _vendor_nvue

# Profile names are stable (derived from the plan's values only), so rendering
# the same plan twice gives the same lines and an empty device diff.
PROFILE = "lf-roce"

# Explicit per-object configuration, NOT the one-shot ``nv set qos roce``:
# ``qos roce`` programs NVIDIA's own numbers (ECN 150,000/1,500,000 B at
# 100 %, ECN also on TC0, DWRR 50/50, trust pcp+dscp, PFC on SP3 with
# default-global cable length) and re-derives them per release and ASIC;
# our plan's thresholds, probability, priorities, shares, cable lengths and
# watchdog timers would then be NVIDIA's, not the intent's. Explicit objects
# (reference 3.3-3.8) carry every number from the plan, and named profiles
# attached to the plan's ports leave the switch's other ports alone.
# NVUE has no per-port SP->TC map (egress-queue-mapping is global only) and
# the PFC watchdog timers are global, so those two are set on default-global.
# Buffers/headroom: NVIDIA recommends leaving xoff/xon/port-buffer dynamic;
# NVUE computes headroom from the PFC profile's cable-length, which is what
# the plan's per-port cable_length_m feeds (reference 3.4, 7.1).
# PFC watchdog: NVUE detects a storm after ``robustness`` polling intervals
# (NVUE command reference: "how many polling intervals the PFC watchdog must
# wait before it mitigates"); polling-interval = detection_time_ms with
# robustness 1 makes the detection time the plan's number (both 100-5000 ms).
# NVUE has no restoration timer (it restores at the first poll without
# pauses) and its only action is to drop, so restoration_time_ms and
# action have no NVUE line.
TEMPLATE = """\
nv set qos mapping {{ profile }} trust {{ trust }}
{% for dscp, prio in dscp_map %}
nv set qos mapping {{ profile }} dscp {{ dscp }} switch-priority {{ prio }}
{% endfor %}
{% if other_dscps %}
nv set qos mapping {{ profile }} dscp {{ other_dscps }} switch-priority {{ default_tc }}
{% endif %}
{% for tc in tcs %}
nv set qos egress-queue-mapping default-global switch-priority {{ tc }} traffic-class {{ tc }}
{% endfor %}
{% if other_sps %}
nv set qos egress-queue-mapping default-global switch-priority {{ other_sps }} traffic-class {{ default_tc }}
{% endif %}
{% if pool %}
nv set qos traffic-pool {{ pool.lossy_pool }} memory-percent {{ pool.lossy_memory_percent }}
{% if pool.lossy_priorities %}
nv set qos traffic-pool {{ pool.lossy_pool }} switch-priority {{ pool.lossy_priorities }}
{% endif %}
nv set qos traffic-pool {{ pool.lossless_pool }} memory-percent {{ pool.lossless_memory_percent }}
nv set qos traffic-pool {{ pool.lossless_pool }} switch-priority {{ pool.lossless_priorities }}
{% endif %}
{% for group in pfc_groups %}
nv set qos pfc {{ group.name }} switch-priority {{ group.priorities }}
nv set qos pfc {{ group.name }} tx enable
nv set qos pfc {{ group.name }} rx enable
nv set qos pfc {{ group.name }} cable-length {{ group.cable_length_m }}
{% endfor %}
{% for group in ecn_groups %}
{% for tc in ecn_tcs %}
nv set qos congestion-control {{ group.name }} traffic-class {{ tc }} ecn {{ ecn_on }}
nv set qos congestion-control {{ group.name }} traffic-class {{ tc }} min-threshold {{ group.min_threshold_bytes }}
nv set qos congestion-control {{ group.name }} traffic-class {{ tc }} max-threshold {{ group.max_threshold_bytes }}
nv set qos congestion-control {{ group.name }} traffic-class {{ tc }} probability {{ group.max_probability_percent }}
{% endfor %}
{% endfor %}
{% for tc in sched %}
{% if tc.strict %}
nv set qos egress-scheduler {{ profile }} traffic-class {{ tc.id }} mode strict
{% else %}
nv set qos egress-scheduler {{ profile }} traffic-class {{ tc.id }} mode dwrr
{% if tc.bandwidth_percent %}
nv set qos egress-scheduler {{ profile }} traffic-class {{ tc.id }} bw-percent {{ tc.bandwidth_percent }}
{% endif %}
{% endif %}
{% endfor %}
{% if watchdog.enabled %}
nv set qos pfc-watchdog polling-interval {{ watchdog.detection_time_ms }}
nv set qos pfc-watchdog robustness 1
{% endif %}
nv set interface {{ all_ports }} qos mapping profile {{ profile }}
nv set interface {{ all_ports }} qos egress-scheduler profile {{ profile }}
{% for group in pfc_groups %}
nv set interface {{ group.ports }} qos pfc profile {{ group.name }}
{% endfor %}
{% for group in ecn_groups %}
nv set interface {{ group.ports }} qos congestion-control profile {{ group.name }}
{% endfor %}
{% if no_pfc_ports %}
nv unset interface {{ no_pfc_ports }} qos pfc-watchdog
nv unset interface {{ no_pfc_ports }} qos pfc
{% endif %}
{% if no_ecn_ports %}
nv unset interface {{ no_ecn_ports }} qos congestion-control
{% endif %}
{% if pfc_groups %}
nv set interface {{ all_ports }} qos pfc-watchdog state {{ 'enable' if watchdog.enabled else 'disable' }}
{% endif %}
nv set interface {{ all_ports }} link mtu {{ mtu }}
{% if lldp %}
nv set {{ lldp.path }} application-tlv udp-port {{ lldp.udp_port }} priority {{ lldp.priority }}
nv set interface {{ all_ports }} lldp application-tlv udp-port {{ lldp.udp_port }}
{% endif %}
{% for port in described %}
nv set interface {{ port.name }} description '{{ port.description }}'
{% endfor %}
"""

TRUST = {"dscp": "l3"}  # plan trust -> NVUE qos mapping trust (reference 3.3)

_SWP = re.compile(r"swp(\d+)")
_IFNAME = re.compile(r"[A-Za-z][A-Za-z0-9_.:/-]*")


def _ids(values) -> str:
    """Comma list of integer ids, ascending (the form the NVUE reference shows: '0,3')."""
    return ",".join(str(v) for v in sorted(set(int(v) for v in values)))


def _ports(names) -> str:
    """Interface list for one nv set line: swpN first, consecutive ones as
    'swpA-B' (every piece keeps its 'swp' prefix: 'swp1-2,swp31'), then any
    other names (breakouts 'swp1s0', ...) in natural order."""
    numbers = sorted(int(m.group(1)) for m in (_SWP.fullmatch(name) for name in set(names)) if m)
    others = sorted((name for name in set(names) if not _SWP.fullmatch(name)), key=_natural)
    pieces: list[str] = []
    for number in numbers:
        if pieces and pieces[-1][1] == number - 1:
            pieces[-1][1] = number
        else:
            pieces.append([number, number])
    return ",".join(["swp%d" % a if a == b else "swp%d-%d" % (a, b) for a, b in pieces] + others)


@functools.lru_cache(maxsize=1)
def _template() -> Any:
    """TEMPLATE compiled once per process (fabric_plan renders every switch's plan: _switches/_config.render_errors)."""
    import jinja2  # pylint: disable=import-outside-toplevel

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, autoescape=False, keep_trailing_newline=False)
    return env.from_string(TEMPLATE)


def render(plan: dict) -> list[str]:
    text = _template().render(**_context(plan))
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    for line in lines:
        _base.check_cli_line("nvue render", line)
    return lines


def _context(plan: dict) -> dict:
    """Template values, each taken from the plan (grouping only, no arithmetic)."""
    trust = plan["trust"]
    if trust not in TRUST:
        raise ValueError("trust %r has no NVUE mapping (only %s)" % (trust, ", ".join(sorted(TRUST))))
    default_tc = int(plan["default_traffic_class"])
    dscp_map = sorted((int(dscp), int(prio)) for dscp, prio in plan["dscp_map"].items())
    classes = {int(tc): cls for tc, cls in plan["traffic_classes"].items()}
    mapped = set(dscp for dscp, _prio in dscp_map)
    ports = plan["ports"]
    if not ports:
        raise ValueError("the plan has no ports")
    pfc_groups: dict[tuple, list[str]] = {}
    ecn_groups: dict[tuple, list[str]] = {}
    for name, port in ports.items():
        pfc_key = (int(port["cable_length_m"]), tuple(sorted(int(p) for p in port["pfc_priorities"])))
        pfc_groups.setdefault(pfc_key, []).append(name)
        ecn = port.get("ecn")
        if ecn:  # mode pfc_only: no ECN thresholds
            ecn_key = (int(ecn["min_threshold_bytes"]), int(ecn["max_threshold_bytes"]), int(ecn["max_probability_percent"]))
            ecn_groups.setdefault(ecn_key, []).append(name)
    described = []
    for name in sorted(ports, key=_natural):
        if not _IFNAME.fullmatch(name):
            raise ValueError("port %r is not an NVUE interface name" % name)
        text = ports[name].get("description") or ""
        # Checked before rendering: a line break in a value would otherwise
        # become a line of its own.
        _base.check_cli_line("nvue render", text)
        if "'" in text:
            raise ValueError("port %s: a description with a single quote cannot be sent" % name)
        if text:
            described.append({"name": name, "description": text})
    release = plan.get("release", _vendor_nvue.DEFAULT_RELEASE)
    try:
        ecn_on = _vendor_nvue.ecn_switch_value(release)
        lldp_path = _vendor_nvue.lldp_service_path(release)
    except ValueError as exc:
        raise ValueError("release: %s" % exc) from None
    pool = None
    if plan.get("traffic_pool") and any(p["pfc_priorities"] for p in ports.values()):
        tp = plan["traffic_pool"]
        pool = {
            "lossless_pool": tp["lossless_pool"],
            "lossless_priorities": _ids(tp["lossless_priorities"]),
            "lossless_memory_percent": int(tp["lossless_memory_percent"]),
            "lossy_pool": tp["lossy_pool"],
            "lossy_priorities": _ids(tp["lossy_priorities"]),
            "lossy_memory_percent": int(tp["lossy_memory_percent"]),
        }
    lldp = None
    if plan.get("lldp_app_tlv") and lldp_path:
        lldp = {"path": lldp_path, "udp_port": int(plan["lldp_app_tlv"]["udp_port"]), "priority": int(plan["lldp_app_tlv"]["priority"])}
    return {
        "pool": pool,
        "ecn_on": ecn_on,
        "lldp": lldp,
        "profile": PROFILE,
        "trust": TRUST[trust],
        "dscp_map": dscp_map,
        "other_dscps": _ids(d for d in range(64) if d not in mapped),
        "default_tc": default_tc,
        "tcs": sorted(classes),
        "other_sps": _ids(p for p in range(8) if p not in classes),
        "pfc_groups": [
            {
                "name": "%s-pfc%s-%dm" % (PROFILE, "".join(str(p) for p in prios), cable),
                "priorities": _ids(prios),
                "cable_length_m": cable,
                "ports": _ports(names),
            }
            for (cable, prios), names in sorted(pfc_groups.items())
            if prios
        ],
        "ecn_tcs": sorted(tc for tc, cls in classes.items() if cls["ecn"]),
        "ecn_groups": [
            {
                "name": "%s-ecn-%d-%d-%d" % ((PROFILE,) + key),
                "min_threshold_bytes": key[0],
                "max_threshold_bytes": key[1],
                "max_probability_percent": key[2],
                "ports": _ports(names),
            }
            for key, names in sorted(ecn_groups.items())
        ],
        "sched": [{"id": tc, "strict": bool(classes[tc]["strict"]), "bandwidth_percent": classes[tc].get("bandwidth_percent")} for tc in sorted(classes)],
        "watchdog": {"enabled": bool(plan["watchdog"]["enabled"]), "detection_time_ms": int(plan["watchdog"]["detection_time_ms"])},
        "all_ports": _ports(ports),
        # Fabric modes (issue 36): a port without PFC priorities (ecn_only) / without ECN (pfc_only) has its profile
        # binding unset (ecn_only: the port's pfc-watchdog state too, which NVUE refuses without PFC on the port), so a
        # fabric moved from lossless keeps no PFC / ECN profile on it (docs/vendor-nvue.md "Fabric modes").
        "no_pfc_ports": _ports(name for name, port in ports.items() if not port["pfc_priorities"]),
        "no_ecn_ports": _ports(name for name, port in ports.items() if not port.get("ecn")),
        "mtu": int(plan["mtu"]),
        "described": described,
    }
