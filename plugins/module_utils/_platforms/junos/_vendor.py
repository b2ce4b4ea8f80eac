# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Juniper Junos (QFX) vendor data the plan needs: models and their scheduling form,
ECN starting values, shared-buffer partitions, MTU overhead. Pure data and small
lookups; every value names its source (docs/vendor-junos.md lists them all).

Sources (opened and read for this table):
- [JVD-AIML] Juniper/jvd, data_center/aidc/aiml_multitenancy_backend/configuration/conf/
  leaf1_qfx5240-64od.conf (commit 005ab344aea79475ef81c1880430a2f99808c28b): Juniper's AI/ML
  multitenancy backend JVD for QFX5240-64OD (Junos EVO).
- [DEFAULT-SCHED] https://www.juniper.net/documentation/us/en/software/junos/traffic-mgmt-qfx/topics/
  concept/cos-qfx-series-default-scheduling-classification-understanding.html
- [PORT-SCHED] https://www.juniper.net/documentation/us/en/software/junos/traffic-mgmt-qfx/topics/
  task/cos-schedulers-qfx-series-cli-10k.html
- [MEDIA-MTU] https://www.juniper.net/documentation/us/en/software/junos/interfaces-fundamentals/
  topics/topic-map/media-mtu.html
"""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base

# --- models -> scheduling form -----------------------------------------------------------------
# [DEFAULT-SCHED]: "The switch supports direct port scheduling and enhanced transmission
# selection (ETS), also known as hierarchical port scheduling, except on QFX5200 and QFX5210
# switches" (those take port scheduling only). [JVD-AIML]: QFX5240 (EVO) applies a scheduler-map
# straight on et-* ports. The first form of each tuple is the one rendered unless the device
# sets ``scheduling``. Models marked "unverified" below: Juniper's page lists them as supporting
# both forms but we found no statement which one is preferred; we default to port scheduling
# (the form of Juniper's AI/ML reference design).
SCHEDULING_FORMS = ("port", "ets")
MODELS: dict[str, tuple[str, ...]] = {
    "qfx5200": ("port",),  # [DEFAULT-SCHED]: no ETS
    "qfx5210": ("port",),  # [DEFAULT-SCHED]: no ETS
    "qfx5240": ("port",),  # [JVD-AIML] port form; ETS on EVO: unverified, not offered
    "qfx5230": ("port",),  # same EVO family as QFX5240: ETS unverified, not offered
    "qfx5220": ("port",),  # EVO: ETS unverified, not offered
    "qfx5130": ("port",),  # EVO: ETS unverified, not offered
    "qfx5700": ("port",),  # EVO: ETS unverified, not offered
    "qfx5100": ("ets", "port"),  # [DEFAULT-SCHED] both; ETS default (DCBX advertises priority groups)
    "qfx5110": ("port", "ets"),  # [DEFAULT-SCHED] both (default: unverified choice)
    "qfx5120": ("port", "ets"),  # [DEFAULT-SCHED] both (default: unverified choice)
    "qfx3500": ("ets", "port"),  # [DEFAULT-SCHED] both; ETS default
    "qfx3600": ("ets", "port"),  # [DEFAULT-SCHED] both; ETS default
    "ex4600": ("ets", "port"),  # [DEFAULT-SCHED] both; ETS default
    "qfx10000": ("port", "ets"),  # [DEFAULT-SCHED] both (default: unverified choice)
}

# --- MTU ---------------------------------------------------------------------------------------
# [MEDIA-MTU]: "Default media MTU = Default protocol MTU + L2 overhead"; the encapsulation
# overhead of Ethernet version 2 is 14 bytes (the FCS is not counted). Our RoCE ports are
# untagged routed ports, so the media MTU Junos takes is the IP MTU + 14.
L2_OVERHEAD_BYTES = 14
# QFX media MTU range 256-9216 (Juniper 'mtu' statement; the JVD sets 9216 on et- ports).
MEDIA_MTU_MAX = 9216
MAX_IP_MTU = MEDIA_MTU_MAX - L2_OVERHEAD_BYTES  # 9202

# --- ECN starting values -----------------------------------------------------------------------
# Juniper publishes its RoCE ECN starting point as a drop profile in percent of the queue
# buffer, not bytes per link speed: [JVD-AIML] drop-profiles dp1 interpolate fill-level [ 55 90 ]
# drop-probability [ 0 100 ], used by the NO-LOSS scheduler with explicit-congestion-notification.
# The same values for every speed (the JVD has 400G/800G ports); there is no per-speed table.
ECN_FILL_LEVEL_PERCENT = (55, 90)
ECN_MAX_PROBABILITY_PERCENT = 100

# --- shared buffer -----------------------------------------------------------------------------
# [JVD-AIML] class-of-service shared-buffer: ingress lossless 66 (dynamic-threshold 10),
# lossless-headroom 24, lossy 10; egress lossless 66, lossy 10 (the egress sum is 76: Juniper's
# committed configuration shows the partitions need not sum to 100).
SHARED_BUFFER = {
    "ingress": {"lossless": 66, "lossless-headroom": 24, "lossy": 10},
    "egress": {"lossless": 66, "lossy": 10},
}

# --- schedules for Junos' own classes ---------------------------------------------------------
# Junos default forwarding classes on QFX ([DEFAULT-SCHED]): best-effort (queue 0),
# fcoe (3), no-loss (4), network-control (7), mcast (8). Traffic our classifier does not map
# (host-outbound routing protocols: network-control; flooded/multicast: mcast) still uses them,
# and a port with an explicit scheduler map gives a class without a scheduler no bandwidth.
DEFAULT_CLASSES = {"best-effort": 0, "network-control": 7, "mcast": 8}
# [JVD-AIML] s2-cnp: the strict-high CNP queue is limited with transmit-rate percent 5;
# [PORT-SCHED]: "We strongly recommend that you configure a transmit rate on all strict-high
# priority queues ... and prevent strict-high priority queues from starving other queues".
STRICT_TRANSMIT_PERCENT = 5
# Guaranteed shares for network-control and mcast: Juniper's AI/ML JVD does not schedule them
# (its map has CNP and NO-LOSS only), so these 5 % each are OUR choice (unverified as a
# Juniper recommendation), documented in docs/vendor-junos.md.
NETWORK_CONTROL_PERCENT = 5
MCAST_PERCENT = 5

# DCBX ([QFX archive 2014-2015, Traffic Management on the QFX Series]:
# "set protocols dcbx interface interface-name priority-flow-control no-auto-negotiation"
# keeps the local PFC configuration whatever the peer advertises).
DCBX_MODES = ("no-auto-negotiation", "auto")
# Junos EVO models: Juniper's QFX5240 JVD configuration has no 'protocols dcbx' and we found no
# EVO page for the statement, so on them the default is 'auto' (nothing rendered; unverified).
EVO_MODELS = ("qfx5130", "qfx5220", "qfx5230", "qfx5240", "qfx5700")


def default_dcbx(model: str | None) -> str:
    return "auto" if model in EVO_MODELS else DCBX_MODES[0]


def scheduling_forms(model: str) -> tuple[str, ...]:
    """The scheduling forms a model takes, first = default; KeyError for an unknown model."""
    return MODELS[model]


def media_mtu(ip_mtu: int) -> int:
    """Junos media MTU for an IP MTU (EOS/NVUE count the IP MTU)."""
    return ip_mtu + L2_OVERHEAD_BYTES


def ecn_defaults_bytes(queue_buffer_bytes: int) -> dict[str, int]:
    """The JVD drop profile as the plan's byte thresholds of a queue buffer of that size
    (the driver turns them back into the same whole percents)."""
    low, high = ECN_FILL_LEVEL_PERCENT
    return {
        "min_threshold_bytes": queue_buffer_bytes * low // 100,
        "max_threshold_bytes": queue_buffer_bytes * high // 100,
        "max_probability_percent": ECN_MAX_PROBABILITY_PERCENT,
    }


# PFC watchdog (Juniper "PFC Watchdog",
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
# drop is the Junos default and the only action the QFX watchdog page describes; Junos EVO (AI-ML page) has a
# global drop|forward setting whose statement we could not confirm, so another action is refused, not guessed.
WATCHDOG_ACTIONS = ("drop",)


def watchdog_polls(detection_ms: int) -> tuple[int, int] | None:
    """(poll interval ms, polls) whose product is ``detection_ms`` exactly (2 polls when they fit), or None."""
    exact = [n for n in range(1, WATCHDOG_MAX_POLLS + 1) if detection_ms % n == 0 and detection_ms // n <= WATCHDOG_MAX_POLL_MS]
    if not exact:
        return None
    polls = WATCHDOG_POLLS if WATCHDOG_POLLS in exact else exact[0]
    return detection_ms // polls, polls


def watchdog_errors(detection_ms: int, restoration_ms: int, action: str) -> list[tuple[str, str]]:  # noqa: ARG001 - any recovery time
    """The intent's watchdog against the Junos forms: (key under roce.pfc.watchdog, why) per value Junos cannot take.
    The intent checks these before any device (_intent/_devices.py); the renderer refuses by the same rules."""
    out = []
    if watchdog_polls(detection_ms) is None:
        out.append(("detection_time_ms", "Junos sets the detection time as poll-interval x detection, and no poll-interval <= %d ms "
                    "with 1-%d polls gives exactly this" % (WATCHDOG_MAX_POLL_MS, WATCHDOG_MAX_POLLS)))
    if action not in WATCHDOG_ACTIONS:
        out.append(("action", "no verified Junos statement sets it (Junos drops by default)"))
    return out


def roce_errors(roce: dict) -> list[tuple[str, object, str]]:
    """The record's intent rule (_base.Platform.roce_errors): the watchdog's values Junos has no form for."""
    return _base.watchdog_intent_errors(roce, watchdog_errors)


def percent_of(value: int, whole: int) -> int:
    """value as an integer percent of whole, rounded half up (a drop profile's fill-level takes whole percents)."""
    return (value * 200 + whole) // (2 * whole)


def fill_levels_error(min_bytes: int, max_bytes: int, queue_buffer_bytes: int) -> str | None:
    """Why a drop profile cannot carry ECN thresholds of ``min_bytes``-``max_bytes`` of a ``queue_buffer_bytes`` queue
    (fill levels in whole percent, low < high < 100), or None. The intent refuses by it before any device; the
    renderer refuses by it too."""
    low, high = percent_of(min_bytes, queue_buffer_bytes), percent_of(max_bytes, queue_buffer_bytes)
    if not low < high < 100:
        return ("ECN thresholds %d-%d bytes are %d-%d %% of a %d-byte queue buffer; a Junos drop profile needs whole fill "
                "levels low < high < 100" % (min_bytes, max_bytes, low, high, queue_buffer_bytes))
    return None


# lossless_fabric.roce.mode (issue 36) -> the source that Junos runs it; _records.JUNOS.roce_modes (docs/vendor-junos.md, "Fabric modes").
ROCE_MODES = {
    "lossless": "Juniper JVD AI/ML backend (no-loss forwarding class with pfc-priority, congestion-notification-profile, ECN drop profile)",
    "ecn_only": "Juniper 'explicit-congestion-notification' (schedulers): ECN marks on the scheduler's queue; no-loss and the "
                "congestion-notification-profile are separate statements left out",
    "pfc_only": "Juniper JVD AI/ML backend without the scheduler's explicit-congestion-notification and drop-profile-map",
}
