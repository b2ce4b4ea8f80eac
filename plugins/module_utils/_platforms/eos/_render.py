# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Arista EOS rendering: the plan through one Jinja template into configuration lines, indented as
EOS prints its running config. Pure: no device; the driver (_driver.py) types them into a
configuration session. Every command with its source: docs/vendor-eos.md.
"""

from __future__ import annotations

import functools
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _vendor as _vendor_eos

# One template per platform. Lines are indented as EOS prints its running
# config (3 spaces a level) so read-back can find each line in its context;
# load() sends them stripped, since on EOS the commands (not the indentation)
# change the mode. Global lines come first, interface-level lines before the
# tx-queue blocks, so every line is typed in the mode it belongs to.
# UNVERIFIED, not rendered (docs/vendor-eos.md, "Still unverified"):
# - 'bandwidth guaranteed percent N' on the watched queue: only a third party quotes Arista's
#   manual that the PFC watchdog needs guaranteed bandwidth; the syntax itself is AVD's
#   (tx-queue / uc-tx-queue templates), the requirement and its platforms are not confirmed.
# Fabric modes (issue 36, docs/vendor-eos.md "Fabric modes"): a port without PFC priorities (mode ecn_only) gets
# 'no priority-flow-control' (AVD-T ethernet-interfaces.j2: priority_flow_control.enabled false), the 'no' form of
# every priority's no-drop line (no priority is lossless: one left from a lossless plan would stay) and no watchdog line;
# the RoCE queue of a class without ECN (mode pfc_only) gets the 'no' forms of the two ECN lines (EOS's 'no' form of
# a command removes it; AVD-T renders no ECN lines for a queue without random_detect.ecn).
# - 'hardware counter feature ecn out': whether a platform needs it for the ECN counters is
#   not in any Arista text we could read; 'random-detect ecn count' (rendered) is.
TEMPLATE = """\
{% for dscp, tc in plan.dscp_map_full | by_number %}
qos map dscp {{ dscp }} to traffic-class {{ tc }}
{% endfor %}
{% if plan.watchdog.enabled %}
priority-flow-control pause watchdog default timeout {{ plan.watchdog.detection_time_ms | seconds }}
priority-flow-control pause watchdog default recovery-time {{ plan.watchdog.restoration_time_ms | seconds }}
priority-flow-control pause watchdog action {{ plan.watchdog.action | watchdog_action }}
{% endif %}
{% for ifname, port in plan.ports.items() %}
interface {{ ifname }}
{% if port.description %}
   description {{ port.description }}
{% endif %}
   mtu {{ plan.mtu }}
   qos trust {{ plan.trust }}
{% if port.pfc_priorities %}
   priority-flow-control on
{% for prio in port.pfc_priorities %}
   priority-flow-control priority {{ prio }} no-drop
{% endfor %}
{% if plan.watchdog.enabled %}
   priority-flow-control pause watchdog
{% else %}
   no priority-flow-control pause watchdog
{% endif %}
{% else %}
   no priority-flow-control
{% for prio in range(8) %}
   no priority-flow-control priority {{ prio }} no-drop
{% endfor %}
{% endif %}
{% for queue, tc in plan.traffic_classes | by_number %}
   {{ plan.eos.queue_block | queue_block }} {{ queue }}
{% if tc.strict %}
      priority strict
{% else %}
      no priority
      bandwidth percent {{ tc.bandwidth_percent }}
{% endif %}
{% if queue == plan.ecn_queue and tc.ecn %}
      random-detect ecn minimum-threshold {{ port.ecn.min_threshold_bytes | threshold }} \
maximum-threshold {{ port.ecn.max_threshold_bytes | threshold }} max-mark-probability {{ port.ecn.max_probability_percent }}
      random-detect ecn count
{% elif queue == plan.ecn_queue %}
      no random-detect ecn minimum-threshold
      no random-detect ecn count
{% endif %}
{% endfor %}
{% endfor %}
"""

_QUEUE_BLOCKS = ("uc-tx-queue", "tx-queue")  # _vendor_eos.QUEUE_BLOCK
_WATCHDOG_ACTIONS = _vendor_eos.WATCHDOG_ACTIONS  # intent vocabulary -> EOS keyword


def _by_number(mapping: dict) -> list:
    return sorted(((int(key), value) for key, value in mapping.items()), key=lambda item: item[0])


def _seconds(ms: int) -> str:
    """EOS takes watchdog timers in seconds with 2 decimals (reference 1.6)."""
    if not isinstance(ms, int) or isinstance(ms, bool) or ms <= 0:
        raise ValueError("PFC watchdog timer %r is not a number of milliseconds above 0" % (ms,))
    why = _vendor_eos.watchdog_timer_error(ms)
    if why:
        raise ValueError("%s; the plan has %d ms" % (why, ms))
    return "%d.%02d" % (ms // 1000, ms % 1000 // 10)


def _threshold(value: int) -> str:
    # _vendor_eos.ECN_THRESHOLD_BYTES (AVD-SCHEMA); the intent refuses the same values first (roce_errors)
    if not isinstance(value, int) or isinstance(value, bool) or _vendor_eos.ecn_threshold_error(value):
        raise ValueError("ECN threshold %r is not a byte count from %d to %d" % ((value,) + _vendor_eos.ECN_THRESHOLD_BYTES))
    return "%d bytes" % value


def _queue_block(word: Any) -> str:
    if word not in _QUEUE_BLOCKS:
        raise ValueError("queue block %r is not an EOS queue sub-mode (one of %s)" % (word, ", ".join(_QUEUE_BLOCKS)))
    return word


def _watchdog_action(action: str) -> str:
    if action not in _WATCHDOG_ACTIONS:
        raise ValueError("PFC watchdog action %r has no EOS keyword (one of %s)" % (action, ", ".join(sorted(_WATCHDOG_ACTIONS))))
    return _WATCHDOG_ACTIONS[action]


def _one_line(value: Any) -> Any:
    """Every value put into the template: a line break or control character in
    it would become a second command after the split into lines."""
    if isinstance(value, str) and any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValueError("value %r carries a control character" % value)
    return value


@functools.lru_cache(maxsize=1)
def _template() -> Any:
    """TEMPLATE compiled once per process: fabric_plan renders every switch's plan (switch_config's render-time
    refusals are plan errors, _switches/_config.render_errors), and compiling cost more than rendering."""
    import jinja2  # pylint: disable=import-outside-toplevel  # controller only: the sanity import test has no Jinja2

    env = jinja2.Environment(  # nosec B701 - CLI text, not HTML
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, autoescape=False, finalize=_one_line
    )
    env.filters.update(by_number=_by_number, seconds=_seconds, threshold=_threshold, watchdog_action=_watchdog_action, queue_block=_queue_block)
    return env.from_string(TEMPLATE)


def render(plan: dict) -> list[str]:
    import jinja2  # pylint: disable=import-outside-toplevel

    device = "eos render"
    try:
        text = _template().render(plan=plan)
    except jinja2.UndefinedError as exc:
        raise KeyError("plan lacks %s" % exc.message) from None
    except ValueError as exc:
        raise _base.DeviceError(device, "cannot render the plan for EOS: %s" % exc, state=_base.UNCHANGED) from None
    lines = [line.rstrip() for line in text.split("\n") if line.strip()]
    for line in lines:
        _base.check_cli_line(device, line)
    return lines
