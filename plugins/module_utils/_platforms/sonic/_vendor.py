# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""SONiC (community, sonic-net) vendor data: pure tables, each with its source.

Sources (every path is in a sonic-net repository; docs/vendor-sonic.md lists them all):
- YANG models, sonic-net/sonic-buildimage src/sonic-yang-models/yang-models/:
  sonic-port.yang (PORT mtu ``range 68..9216`` on 202505, ``1..9216`` in older releases), sonic-wred-profile.yang (WRED_PROFILE fields, ``ecn``
  enumeration, thresholds ``units bytes``, ``green_drop_probability`` 0..100), sonic-scheduler.yang (SCHEDULER
  ``type`` DWRR|WRR|STRICT, ``weight`` 1..100; no create-only marker in any branch), sonic-pfcwd.yang (PFC_WD
  ``detection_time`` 100..5000, ``restoration_time`` 100..60000, ``action`` drop|forward|alert,
  GLOBAL ``POLL_INTERVAL`` 100..1000), sonic-port-qos-map.yang (PORT_QOS_MAP fields, ``pfc_enable`` pattern
  ``([0-7](,[0-7])*)?``), sonic-queue.yang (QUEUE key ``ifname qindex``, ``scheduler``, ``wred_profile``),
  sonic-buffer-pg.yang (BUFFER_PG key ``port pg_num``, pg_num ``[0-7]((-)[0-7])?``, profile or ``NULL``).
- sonic-net/sonic-buildimage files/build_templates/buffers_config.j2 (``CABLE_LENGTH|AZURE``, the
  ``ingress_lossless_pool`` name) and qos_config.j2 (the ``AZURE`` maps and the lossless WRED profile).
- sonic-net/SONiC doc/Configuration.md (CONFIG_DB table examples) and the dynamic buffer calculation HLD
  (doc/qos/dynamically-headroom-calculation.md: a lossless BUFFER_PG whose profile is ``NULL`` has its
  headroom computed by the switch).
"""

from __future__ import annotations

# sonic-port.yang: leaf mtu { type uint16 { range 68..9216; } } on 202505 (older releases: 1..9216); 9216 either way.
MAX_MTU = 9216

# Object names: sonic-wred-profile.yang and sonic-dscp-tc-map.yang restrict names to
# '[a-zA-Z0-9]{1}([-a-zA-Z0-9_]{0,31})' (1-32 characters); every name we make keeps to that.
NAME_PATTERN = r"[a-zA-Z0-9][-a-zA-Z0-9_]{0,31}"
MAP_NAME = "LF_ROCE"

# WRED_PROFILE 'ecn' enumeration (sonic-wred-profile.yang): ecn_all marks every colour.
ECN_MODE = "ecn_all"
ECN_MODES = ("ecn_none", "ecn_green", "ecn_yellow", "ecn_red", "ecn_green_yellow", "ecn_green_red", "ecn_yellow_red", "ecn_all")
ECN_GREEN_MODES = ("ecn_green", "ecn_green_yellow", "ecn_green_red", "ecn_all")

# SCHEDULER type enumeration (sonic-scheduler.yang); weight range 1..100.
SCHEDULER_TYPES = ("DWRR", "WRR", "STRICT")
WEIGHT_RANGE = (1, 100)

# PFC_WD ranges and actions (sonic-pfcwd.yang).
DETECTION_TIME_MS = (100, 5000)
RESTORATION_TIME_MS = (100, 60000)
POLL_INTERVAL_MS = (100, 1000)
WATCHDOG_ACTIONS = ("drop", "forward", "alert")

# CABLE_LENGTH is one entry, named AZURE by buffers_config.j2 (sonic-buildimage files/build_templates/buffers_config.j2);
# its fields are port -> '<n>m' (sonic-cable-length.yang: length pattern '[0-9]+m').
CABLE_LENGTH_KEY = "AZURE"

# The lossless ingress pool buffers_config.j2 and the platforms' buffers_defaults_*.j2 define.
LOSSLESS_POOL = "ingress_lossless_pool"

# BUFFER_PROFILE dynamic_th of the lossless profiles we write (the static model). unverified: the value the
# platforms' pg_profile_lookup.ini files give differs per ASIC; "0" is what the traditional buffer manager uses
# when the lookup table gives none (unverified, docs/vendor-sonic.md).
LOSSLESS_DYNAMIC_TH = "0"

# DEVICE_METADATA|localhost buffer_model values (sonic-device_metadata.yang, the dynamic buffer HLD).
BUFFER_MODELS = ("traditional", "dynamic")
# The default is 'dynamic': the switch's own headroom calculation (dynamic buffer HLD) needs no value we could
# not verify, where the static profile needs a dynamic_th (LOSSLESS_DYNAMIC_TH, unverified).
DEFAULT_BUFFER_MODEL = "dynamic"

# pfcwd show stats STATUS -> the _snapshot watchdog_status words (pfcwd/main.py prints 'operational' or 'stormed').
WATCHDOG_STATUS = {"operational": "OK", "stormed": "DEADLOCK"}


# --- releases, hardware SKUs and the Generic Config Updater's field-operation validators -----------------
# sonic-net/sonic-utilities generic_config_updater/field_operation_validators.py and
# gcu_field_operation_validators.conf.json, read per release branch (docs/research/sonic-gcu.md section 1;
# docs/vendor-sonic.md "Per release"). Only what the driver's choice of path needs is kept here.
RELEASES = ("202211", "202305", "202311", "202405", "202411", "202505", "202511", "master")
DEFAULT_RELEASE = "202505"
# WRED_PROFILE changes are validated on these releases: only 'replace' of green_min_threshold,
# green_max_threshold and green_drop_probability of an existing profile (202305-202411: the profile must be
# AZURE_LOSSLESS; 202505: any name), on a SKU of the conf's ASIC lists. 202211 has no validator file; 202511
# and master dropped the WRED validator (sonic-utilities PR #4219, cherry-picked as #4226).
WRED_GUARDED = ("202305", "202311", "202405", "202411", "202505")
# BUFFER_PROFILE: 202305-202505 refuse adding a profile and any field but xoff / dynamic_th; 202511+ let a whole
# profile be added but a field of an existing one only xoff / dynamic_th (PR #4128 / #4585). A static lossless
# profile with the plan's size, xon and xoff has a GCU path only on 202211 (docs/vendor-sonic.md).
STATIC_HEADROOM_RELEASES = ("202211",)
# The stock lossless WRED profile (sonic-buildimage files/build_templates/qos_config.j2): the one profile the
# 202305-202411 validators and ecnconfig's users tune.
STOCK_WRED_PROFILE = "AZURE_LOSSLESS"
WRED_TUNABLE = ("green_min_threshold", "green_max_threshold", "green_drop_probability")

# HwSKU -> ASIC (conf helper_data rdma_config_update_validator; Mellanox lists: exact, case-insensitive;
# Broadcom lists: a list entry that is a case-insensitive substring of the SKU), with the first release
# listing it. A subset: the SKUs of the 202305 lists plus those added up to 202505 that the lab and tests use.
_MELLANOX = {
    "spc1": ("202305", ("ACS-MSN2700", "ACS-MSN2740", "ACS-MSN2100", "ACS-MSN2410", "ACS-MSN2010", "Mellanox-SN2700", "Mellanox-SN2700-D48C8")),
    "spc2": ("202305", ("ACS-MSN3800", "Mellanox-SN3800-D112C8", "ACS-MSN3420", "ACS-MSN3700C", "ACS-MSN3700", "Mellanox-SN3800-C64")),
    "spc3": ("202305", ("ACS-MSN4700", "ACS-MSN4600", "ACS-MSN4600C", "ACS-MSN4410", "Mellanox-SN4600C-D112C8", "Mellanox-SN4600C-C64",
                        "Mellanox-SN4700-O8C48", "Mellanox-SN4700-C128", "Mellanox-SN4700-O28")),
    "spc4": ("202305", ("ACS-SN5600",)),
}
_BROADCOM = (  # in the conf's order: the first list with a matching entry wins
    ("th", "202305", ("Force10-S6100", "Arista-7060CX-32S-C32", "Arista-7060CX-32S-C32-T1", "Arista-7060CX-32S-D48C8", "Celestica-DX010-C32",
                      "Seastone-DX010")),
    ("th2", "202305", ("Arista-7260CX3-D108C8", "Arista-7260CX3-C64", "Arista-7260CX3-Q64")),
    ("td2", "202305", ("Force10-S6000", "Force10-S6000-Q24S32", "Arista-7050-QX32", "Arista-7050-QX-32S", "Nexus-3164", "Arista-7050QX32S-Q32")),
    ("td3", "202305", ("Arista-7050CX3-32S-C32", "Arista-7050CX3-32S-D48C8")),
    ("th3", "202405", ("Nokia-IXR7220-H3",)),
    ("th4", "202405", ("Nokia-IXR7220-H4-64D", "Nokia-IXR7220-H4-32D")),
    ("th5", "202405", ("Nokia-IXR7220-H5-64D",)),
)
# The first build date (YYYYMMDD) each ASIC takes the "ECN tuning" (WRED) scenario; compared with the 8-digit
# component of the switch's build version, when it has one (an untagged build '<branch>.<n>-<sha>' has none).
WRED_FROM = {"spc1": "20181100", "spc2": "20191100", "spc3": "20220500", "spc4": "20221100", "td2": "20181100", "th": "20181100",
             "th2": "20181100", "td3": "20201200", "th3": "20240500", "th4": "20240500", "th5": "20240500"}


def _rank(release: str) -> int:
    return RELEASES.index(release)


def asic_of(release: str, asic_type: str, hwsku: str | None) -> str:
    """The ASIC GCU's validators map a SKU to on this release ('unknown' when on no list: every validated change refused)."""
    if release not in WRED_GUARDED and release not in ("202511", "master"):
        return "unknown"
    sku = (hwsku or "").lower()
    if asic_type in ("mellanox", "vs"):
        for asic, (first, names) in _MELLANOX.items():
            if _rank(first) <= _rank(release) and sku in (n.lower() for n in names):
                return asic
    if asic_type in ("broadcom", "vs"):
        for asic, first, names in _BROADCOM:
            if _rank(first) <= _rank(release) and any(n.lower() in sku for n in names):
                return asic
    return "unknown"


def build_date(build_version: str) -> str | None:
    """The last all-digit 8-character component of a build version ('20230531.05' -> '20230531'), or None."""
    found = None
    for part in (build_version or "").split("."):
        if len(part) == 8 and part.isdigit():
            found = part
    return found


def wred_by_gcu(release: str, asic_type: str, hwsku: str | None, build_version: str) -> bool:
    """Whether GCU's validators let this switch replace the green thresholds of AZURE_LOSSLESS (else: ecnconfig)."""
    if release not in WRED_GUARDED:
        return True
    asic = asic_of(release, asic_type, hwsku)
    if asic == "unknown" or asic not in WRED_FROM:
        return False
    date = build_date(build_version)
    return date is None or date >= WRED_FROM[asic]


def release_of_build(build_version: str) -> str | None:
    """The release branch of 'show version''s build version: 'master.1234-abc' -> master; '202405.7-abc' and a tag
    '20240531.05' -> 202405 (the first six digits; the tag form is unverified for official images)."""
    head = (build_version or "").split(".")[0]
    if head == "master":
        return "master"
    return head[:6] if len(head) in (6, 8) and head.isdigit() and head[:6] in RELEASES else None


def plan_problem(release: str, hwsku: str | None, buffer_model: str, ecn_triples: set, lossless: bool = True) -> str | None:
    """Why a plan has no documented path on this release and SKU (None when it has one). Checked when the plan is
    built, before any device; render() checks again. ``lossless``: the plan has PFC priorities (not mode ecn_only,
    which writes no lossless BUFFER_PROFILE)."""
    sku = hwsku or "(HwSKU not given)"
    if buffer_model == "traditional" and lossless and release not in STATIC_HEADROOM_RELEASES:
        return (f"release {release}, HwSKU {sku}: no documented path for a static lossless BUFFER_PROFILE with the plan's size, xon "
                "and xoff: GCU's validators refuse adding a profile (up to 202505) and change only xoff / dynamic_th of an existing one, "
                "mmuconfig sets only dynamic_th, and buffermgrd points BUFFER_PG back at pg_lossless_<speed>_<cable>_profile on every "
                f"PORT change; use buffer_model dynamic (or release {', '.join(STATIC_HEADROOM_RELEASES)})")
    if release in WRED_GUARDED and len(ecn_triples) > 1:
        return (f"release {release}, HwSKU {sku}: the ports need {len(ecn_triples)} different ECN thresholds, but this release lets "
                f"only the green thresholds of the stock {STOCK_WRED_PROFILE} WRED profile change (GCU's validators refuse a new "
                "WRED_PROFILE; ecnconfig changes existing profiles only): give every port of this switch the same ECN values")
    return None


# lossless_fabric.roce.mode (issue 36) -> the source that SONiC runs it; _records.SONIC.roce_modes (docs/vendor-sonic.md, "Fabric modes").
ROCE_MODES = {
    "lossless": "sonic-buildimage qos_config.j2 (PORT_QOS_MAP pfc_enable, QUEUE wred_profile, BUFFER_PG lossless profile)",
    "ecn_only": "sonic-buildimage sonic-port-qos-map.yang (pfc_enable: 'Empty string is allowed to disable PFC on all queues') with "
                "QUEUE wred_profile (sonic-queue.yang) on the RoCE queue; sonic-utilities pfcwd/main.py 'pfcwd stop'",
    "pfc_only": "sonic-buildimage sonic-queue.yang (wred_profile is an optional leaf of a QUEUE entry) with PORT_QOS_MAP pfc_enable",
}
