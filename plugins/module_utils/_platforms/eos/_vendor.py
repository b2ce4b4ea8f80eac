# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Arista EOS vendor data the plan needs: ASIC families, models, ranges, ECN defaults.

Pure data and lookups (no device, no Ansible). Every entry names its source;
docs/vendor-eos.md lists the same sources and what is still unverified.

Sources (short names used below):
  AVD-UCTXQ  aristanetworks/avd python-avd/pyavd/_eos_cli_config_gen/j2templates/eos/ethernet-interface-uc-tx-queues.j2
             and ethernet-interface-tx-queues.j2 (both block forms, same child lines)
  AVD-SCHEMA aristanetworks/avd python-avd/pyavd/_eos_cli_config_gen/schema/schema_fragments/
             qos_profiles.schema.yml, ethernet_interfaces.schema.yml, priority_flow_control.schema.yml
  AVD-4900   github.com/aristanetworks/avd/issues/4900: a DCS-7280SRA-48C6 (Jericho) on 4.30.3M,
             a qos profile with 'tx-queue 3' and the '?' list of ECN threshold units
  EOS-QOS    arista.com/en/um-eos/eos-quality-of-service: QoS differs per chipset ("Chipset Mapping
             for QoS"); separate chapters for Trident/Tomahawk and Jericho platforms
"""

from __future__ import annotations

import re

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base

# ASIC family -> the interface sub-mode that holds a unicast egress queue.
# Strata (Trident/Tomahawk) switches split unicast and multicast queues
# ('uc-tx-queue N' / 'mc-tx-queue N'); Jericho (VOQ) switches have 'tx-queue N'
# (AVD-UCTXQ; AVD-4900 shows 'tx-queue 3' on a 7280SRA).
QUEUE_BLOCK = {
    "strata": "uc-tx-queue",
    "jericho": "tx-queue",
}
ASIC_FAMILIES = tuple(sorted(QUEUE_BLOCK))

# intent vocabulary <-> EOS keyword (reference 1.6: the global action is drop | no-drop)
WATCHDOG_ACTIONS = {"drop": "drop", "forward": "no-drop"}
# EOS takes the watchdog's timers in seconds with 2 decimals ('priority-flow-control pause watchdog default
# timeout 0.20 recovery-time 0.40', reference 1.6): steps of 10 ms.
WATCHDOG_STEP_MS = 10


def watchdog_timer_error(ms: int) -> str | None:
    """Why EOS cannot take a watchdog timer of ``ms`` milliseconds, or None."""
    if ms % WATCHDOG_STEP_MS:
        return f"EOS takes PFC watchdog timers in seconds with 2 decimals (steps of {WATCHDOG_STEP_MS} ms)"
    return None


def watchdog_errors(detection_ms: int, restoration_ms: int, action: str) -> list[tuple[str, str]]:
    """The intent's watchdog against EOS's forms: (key under roce.pfc.watchdog, why) per value EOS cannot take.
    The intent checks these before any device (_intent/_devices.py); the renderer refuses by the same rules."""
    out = [(key, why) for key, ms in (("detection_time_ms", detection_ms), ("restoration_time_ms", restoration_ms))
           if (why := watchdog_timer_error(ms))]
    if action not in WATCHDOG_ACTIONS:
        out.append(("action", "EOS's watchdog actions are %s" % ", ".join(sorted(WATCHDOG_ACTIONS))))
    return out


# 'random-detect ecn minimum-threshold N bytes maximum-threshold N bytes': 1..256000000 in the unit given
# (AVD-SCHEMA, ethernet_interfaces ... random_detect ecn thresholds).
ECN_THRESHOLD_BYTES = (1, 256000000)


def ecn_threshold_error(value: int) -> str | None:
    """Why EOS cannot take an ECN threshold of ``value`` bytes, or None."""
    if not ECN_THRESHOLD_BYTES[0] <= value <= ECN_THRESHOLD_BYTES[1]:
        return "EOS takes ECN thresholds of %d to %d bytes" % ECN_THRESHOLD_BYTES
    return None


def roce_errors(roce: dict) -> list[tuple[str, object, str]]:
    """The record's intent rule (_base.Platform.roce_errors): the watchdog's values and the ECN thresholds EOS has no form for."""
    out = _base.watchdog_intent_errors(roce, watchdog_errors)
    ecn = (roce if isinstance(roce, dict) else {}).get("ecn") or {}
    for key in ("min_threshold_bytes", "max_threshold_bytes"):
        value = ecn.get(key)
        why = ecn_threshold_error(value) if isinstance(value, int) and not isinstance(value, bool) else None
        if why:
            out.append(("ecn." + key, value, why))
    return out


# Model prefix -> ASIC family, longest prefix wins. The families of these product
# lines follow Arista's datasheets (7050X/7060X/7260X/7300X/7358X/7368X/7388X:
# Broadcom Trident/Tomahawk; 7280R/7500R/7800R: Broadcom Jericho) and EOS-QOS's
# per-chipset chapters. A model outside these lines is refused, never guessed.
# Unverified: the exact model list of Arista's "Chipset Mapping for QoS" table
# (the page was not readable here); give asic_family for a model not listed.
_MODEL_FAMILY = (
    ("DCS-7050", "strata"),
    ("DCS-7060", "strata"),
    ("DCS-7260", "strata"),
    ("DCS-7300", "strata"),
    ("DCS-7358", "strata"),
    ("DCS-7368", "strata"),
    ("DCS-7388", "strata"),
    ("DCS-7280", "jericho"),
    ("DCS-7500", "jericho"),
    ("DCS-7800", "jericho"),
)
MODEL_PREFIXES = tuple(prefix for prefix, _family in _MODEL_FAMILY)
_MODEL_RE = re.compile(r"DCS-\d{4}[A-Z0-9-]*")

# random-detect ecn thresholds: 1..256000000 in the chosen unit (AVD-SCHEMA
# ethernet_interfaces: min 1, max 256000000); max-mark-probability 1..100,
# weight 0..15 (AVD-SCHEMA qos_profiles). Per-platform maxima in bytes: unverified.
ECN_THRESHOLD_RANGE = (1, 256000000)
ECN_PROBABILITY_RANGE = (1, 100)
ECN_WEIGHT_RANGE = (0, 15)
# The threshold units each family's CLI offers. Jericho: the '?' output in AVD-4900.
# Strata: AVD-SCHEMA's list (segments, bytes, kbytes, mbytes, milliseconds); no
# captured '?' output of a Strata switch was found (unverified).
ECN_UNITS = {
    "strata": ("segments", "bytes", "kbytes", "mbytes", "milliseconds"),
    "jericho": ("bytes", "kbytes", "mbytes", "microseconds", "milliseconds"),
}

# ECN defaults per link speed (Gb/s) for EOS. No Arista document giving per-speed
# RoCE starting thresholds could be read here (Arista's AI fabric deployment guides
# were found but not their configuration pages). UNVERIFIED: these entries keep the
# collection's previous derivation (1,500 B and 15,000 B per Gb/s, Pmax 20 %) so that
# an intent without thresholds still plans; every plan that uses one carries a
# warning saying so (see _intent). Set lossless_fabric.roce.ecn to your own values.
# Second search (Arista AI/RoCE guides, TOIs, EOS QoS chapter, AVD, public configs) found
# no Arista per-speed value either; where we looked: docs/vendor-eos.md, "Still unverified".
ECN_DEFAULTS_SOURCE = None  # no vendor source: see the comment above
ECN_DEFAULTS = {
    speed: {"min_threshold_bytes": 1500 * speed, "max_threshold_bytes": 15000 * speed, "max_probability_percent": 20}
    for speed in (10, 25, 40, 50, 100, 200, 400, 800)
}


def family_of_model(model: str) -> str:
    """The ASIC family of an Arista model name such as 'DCS-7060DX5-64S'; ValueError if unknown."""
    if not isinstance(model, str) or not _MODEL_RE.fullmatch(model):
        raise ValueError("%r is not an Arista model name (like DCS-7060DX5-64S)" % (model,))
    for prefix, family in sorted(_MODEL_FAMILY, key=lambda item: -len(item[0])):
        if model.startswith(prefix):
            return family
    known = ", ".join(MODEL_PREFIXES)
    raise ValueError("%r: no ASIC family known for this model (known lines: %s); give asic_family (%s)" % (model, known, ", ".join(ASIC_FAMILIES)))


def ecn_defaults(speed_gbps: int) -> dict[str, int]:
    """EOS ECN defaults for a link speed; ValueError naming the platform and speed when the table has none."""
    entry = ECN_DEFAULTS.get(speed_gbps) if isinstance(speed_gbps, int) and not isinstance(speed_gbps, bool) else None
    if entry is None:
        raise ValueError("platform eos: no ECN default for %r Gb/s; set lossless_fabric.roce.ecn thresholds" % (speed_gbps,))
    return dict(entry)


# lossless_fabric.roce.mode (issue 36) -> the source that EOS runs it; _records.EOS.roce_modes (docs/vendor-eos.md, "Fabric modes").
ROCE_MODES = {
    "lossless": "AVD-T ethernet-interfaces.j2 ('priority-flow-control on', 'priority-flow-control priority N no-drop') and the "
                "tx-queue templates ('random-detect ecn minimum-threshold ... maximum-threshold ...')",
    "ecn_only": "AVD-T ethernet-interfaces.j2 (priority_flow_control.enabled false: 'no priority-flow-control') with the tx-queue's "
                "'random-detect ecn' lines, which AVD renders per queue independent of PFC",
    "pfc_only": "AVD-T ethernet-interface-tx-queues.j2 (a tx-queue without random_detect renders no ECN line) with the PFC lines",
}
