# SPDX-License-Identifier: GPL-3.0-or-later
"""SONiC GCU field-operation validators, per release branch and hardware SKU (the simulator's part).

Written from reading sonic-net/sonic-utilities, never copied: ``generic_config_updater/gu_common.py``
``ConfigWrapper.validate_field_operation`` (what runs, the error texts), ``field_operation_validators.py``
(``get_asic_name``, ``rdma_config_update_validator_common``) and ``gcu_field_operation_validators.conf.json``
(which tables, fields, operations, ASICs and build dates), read on the branches 202211 ``91afc4374876``,
202305 ``86aa8c46c8f6``, 202311 ``86546348f33b``, 202405 ``ced89eb5c9ce``, 202411 ``ac66b67e13e1``, 202505
``7511bf2f8ea3``, 202511 ``a092c97055fd`` and master ``691b1bbc4fd2`` (docs/research/sonic-gcu.md, section 1,
Appendix A: the per-release tables this file encodes). tests/lab/switchsim/README.md "SONiC" lists each rule.

What is modelled:
- the fixed list of illegal removals (every release);
- per changed table, the conf's validators on each operation of ``jsonpatch.JsonPatch.from_diff(running,
  target)`` (the diff, not the user's patch: a new key is one ``add`` of a dict, a new table one ``add`` of
  the whole table);
- the ASIC of the SKU (Mellanox lists: exact, case-insensitive; Broadcom lists: case-insensitive substring,
  in the file's order), the fields after the table with every token holding a digit dropped (the
  ``remove_port`` mode), the scenario's operations, its per-ASIC build date (an 8-digit component of the
  build version; none, as in ``202305.77-abcdef0``, skips the date check).
Not modelled: ``port_config_update_validator`` (PORT speed/fec against STATE_DB, 202305+: the lab's STATE_DB
has no supported_speeds list, which the validator treats as "allow"), ``illegal_dataacl_check`` (ACL
tables, 202411+), cisco-8000 / marvell-teralynx ASIC types (the lab's ASIC types are ``mellanox`` and ``broadcom``).
"""
from __future__ import annotations

import re

from .jsonpatch_rfc6902 import make_patch

# The release branches the simulator emulates, oldest first ('master' is newer than any number).
RELEASES = ("202211", "202305", "202311", "202405", "202411", "202505", "202511", "master")

MODULE = "generic_config_updater.field_operation_validators"
RDMA = f"{MODULE}.rdma_config_update_validator"
WRED = f"{MODULE}.wred_profile_config_update_validator"            # 202505 only (PR #3805 .. #4219)
BUFFER_PROFILE_FN = f"{MODULE}.buffer_profile_config_update_validator"   # 202511+ (PR #4128 / #4585)

# gu_common.py validate_field_operation: removals refused on these exact paths in every release.
ILLEGAL_REMOVE = ("/PFC_WD/GLOBAL/POLL_INTERVAL", "/PFC_WD/GLOBAL", "/LOOPBACK_INTERFACE/Loopback0")


def rank(release: str) -> int:
    return RELEASES.index(release)


# --- SKU -> ASIC (conf helper_data.rdma_config_update_validator), with the first release listing each ---
# (vendor, asic, first release, SKUs); Appendix A of docs/research/sonic-gcu.md.
_SKUS = (
    ("mellanox", "spc1", "202305", "ACS-MSN2700 ACS-MSN2740 ACS-MSN2100 ACS-MSN2410 ACS-MSN2010 Mellanox-SN2700 Mellanox-SN2700-D48C8"),
    ("mellanox", "spc2", "202305", "ACS-MSN3800 Mellanox-SN3800-D112C8 ACS-MSN3420 ACS-MSN3700C ACS-MSN3700 Mellanox-SN3800-C64"),
    ("mellanox", "spc3", "202305", "ACS-MSN4700 ACS-MSN4600 ACS-MSN4600C ACS-MSN4410 Mellanox-SN4600C-D112C8 Mellanox-SN4600C-C64 "
                                   "Mellanox-SN4700-O8C48 Mellanox-SN4700-C128 Mellanox-SN4700-O28"),
    ("mellanox", "spc3", "202311", "Mellanox-SN4700-O32 Mellanox-SN4700-V64"),
    ("mellanox", "spc4", "202305", "ACS-SN5600"),
    ("mellanox", "spc4", "202311", "Mellanox-SN5600-O128 Mellanox-SN5600-V256 ACS-SN5400"),
    ("mellanox", "spc3", "202405", "ACS-SN4280 Mellanox-SN4280-O28"),
    ("mellanox", "spc4", "202405", "Mellanox-SN5600-C256S1 Mellanox-SN5600-C224O8"),
    ("mellanox", "spc5", "202411", "ACS-SN5640"),
    ("mellanox", "spc5", "202505", "Mellanox-SN5640-C512S2 Mellanox-SN5640-C448O16"),
    ("broadcom", "td2", "202305", "Force10-S6000 Force10-S6000-Q24S32 Arista-7050-QX32 Arista-7050-QX-32S Nexus-3164 Arista-7050QX32S-Q32"),
    ("broadcom", "th", "202305", "Force10-S6100 Arista-7060CX-32S-C32 Arista-7060CX-32S-C32-T1 Arista-7060CX-32S-D48C8 "
                                 "Celestica-DX010-C32 Seastone-DX010"),
    ("broadcom", "th2", "202305", "Arista-7260CX3-D108C8 Arista-7260CX3-C64 Arista-7260CX3-Q64"),
    ("broadcom", "td3", "202305", "Arista-7050CX3-32S-C32 Arista-7050CX3-32S-D48C8"),
    ("broadcom", "th3", "202405", "Nokia-IXR7220-H3"),
    ("broadcom", "th4", "202405", "Nokia-IXR7220-H4-64D Nokia-IXR7220-H4-32D"),
    ("broadcom", "th5", "202405", "Nokia-IXR7220-H5-64D"),
    ("broadcom", "th5", "202411", "Arista-7060X6-64DE Arista-7060X6-64PE"),
    ("broadcom", "td4", "202505", "Nokia-IXR7220-D4-36D"),
)
# The Broadcom dict's key order in the conf (the first list with a matching substring wins).
_BROADCOM_ORDER = ("th", "th2", "td2", "td3", "th3", "th4", "th5", "j2c+", "td4", "q2c+", "q3d", "th6")
# get_asic_name maps Mellanox SKUs of these lists only (202411's conf lists spc5, its code maps spc1-4).
_MELLANOX_MAPPED = {"202305": 4, "202311": 4, "202405": 4, "202411": 4, "202505": 5, "202511": 5, "master": 5}


def asic_of(release: str, asic_type: str, hwsku: str) -> str:
    """field_operation_validators.get_asic_name: the ASIC a SKU maps to on this release, or 'unknown'."""
    if release == "202211":
        return "unknown"
    listed = [(vendor, asic, skus.split()) for vendor, asic, first, skus in _SKUS if rank(first) <= rank(release)]
    sku = (hwsku or "").lower()
    if asic_type in ("mellanox", "vs"):
        for n in range(1, _MELLANOX_MAPPED[release] + 1):
            if any(sku == s.lower() for vendor, asic, names in listed if asic == f"spc{n}" for s in names):
                return f"spc{n}"
    if asic_type in ("broadcom", "vs"):
        for asic in _BROADCOM_ORDER:
            if any(s.lower() in sku for vendor, a, names in listed if vendor == "broadcom" and a == asic for s in names):
                return asic
    return "unknown"


# --- build dates per ASIC (conf 'platforms' of each scenario) --------------------------------------
# "Tuning" (PFC_WD, BUFFER_PROFILE dynamic_th, WRED ECN): one table; "headroom" (BUFFER_PROFILE xoff,
# BUFFER_POOL sizes): td2 refused ("") and th/th2/td3 from 20221100.
_TUNING = {"spc1": "20181100", "spc2": "20191100", "spc3": "20220500", "spc4": "20221100", "spc5": "20241200",
           "td2": "20181100", "th": "20181100", "th2": "20181100", "td3": "20201200",
           "th3": "20240500", "th4": "20240500", "th5": "20240500", "td4": "20241100"}
_HEADROOM = dict(_TUNING, spc1="20191100", td2="", th="20221100", th2="20221100", td3="20221100")


def _branch_date(build_version: str) -> str | None:
    """The last all-digit 8-character component of the build version ('20230531.05' -> '20230531')."""
    found = None
    for part in (build_version or "").split("."):
        if part.isdigit() and re.fullmatch(r"\d{8}", part):
            found = part
    return found


class Platform:
    """What the validators read from the switch: the release's rules, asic_type, build_version, hwsku."""

    def __init__(self, release: str, asic_type: str, hwsku: str, build_version: str) -> None:
        self.release = release
        self.asic = asic_of(release, asic_type, hwsku)
        self.date = _branch_date(build_version)

    def _platform_ok(self, dates: dict) -> bool:
        date = dates.get(self.asic)
        if not date:          # missing or "": the scenario is not allowed on this ASIC
            return False
        return self.date is None or self.date >= date

    # rdma_config_update_validator_common: every cleaned field must hit a scenario that allows the op
    def _common(self, op: dict, scenarios: list, exact: bool) -> bool:
        if self.asic == "unknown":
            return False
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[2:]]
        cleaned = "/".join(p for p in parts if not any(c.isdigit() for c in p)).lower()
        value = op.get("value")
        fields = [f"{cleaned}/{k}" if cleaned else k for k in value] if isinstance(value, dict) else [cleaned]
        for field in fields:
            hit = None
            for names, ops, dates in scenarios:
                if any((field == name) if exact else (field.split("/")[-1] == name) for name in names):
                    hit = (ops, dates)
                    break
            if hit is None or not self._platform_ok(hit[1]) or op["op"] not in hit[0]:
                return False
        return True

    def validators(self, table: str) -> list:
        """[(function name as the conf spells it, callable(op) -> bool)] the conf lists for a table."""
        r = rank(self.release)
        if self.release == "202211":
            return []   # 202211 ships no gcu_field_operation_validators.conf.json
        if table == "PFC_WD":
            fields = ["action", "detection_time", "restoration_time", "global/poll_interval", ""]
            if r >= rank("202511"):
                fields.append("pfc_stat_history")
            scen = [(fields, ("add", "replace", "remove"), _TUNING)]
            return [(RDMA, lambda op: self._common(op, scen, exact=True))]
        if table == "WRED_PROFILE":
            names = ["green_min_threshold", "green_max_threshold", "green_drop_probability"]
            if r <= rank("202411"):
                scen = [([f"azure_lossless/{n}" for n in names], ("replace",), _TUNING)]
                return [(RDMA, lambda op: self._common(op, scen, exact=True))]
            if self.release == "202505":
                scen = [(names, ("replace",), _TUNING)]
                return [(WRED, lambda op: self._common(op, scen, exact=False))]
            return []   # 202511 / master: the WRED validator was removed (PR #4219 / #4226)
        if table == "BUFFER_PROFILE":
            scen = [(["dynamic_th"], ("replace",), _TUNING), (["xoff"], ("replace",), _HEADROOM)]
            if r <= rank("202505"):
                return [(RDMA, lambda op: self._common(op, scen, exact=True))]

            def profile(op: dict) -> bool:
                # 202511+: adding, replacing or removing a whole profile is allowed on any ASIC (no date check);
                # a field change keeps the last-segment rule of the scenarios
                if op["path"].count("/") == 2:
                    return True
                return self._common(op, scen, exact=False)
            return [(BUFFER_PROFILE_FN, profile)]
        if table == "BUFFER_POOL":
            if r <= rank("202505"):
                scen = [(["ingress_lossless_pool/xoff", "ingress_lossless_pool/size", "egress_lossy_pool/size"], ("replace",), _HEADROOM)]
            else:
                scen = []   # 202511+: a scenario with no fields: every change refused
            return [(RDMA, lambda op: self._common(op, scen, exact=True))]
        return []


class IllegalPatchOperation(Exception):
    """gu_common.IllegalPatchOperationError (its str is the message GCU prints)."""


def validate_field_operation(platform: Platform, old: dict, target: dict) -> None:
    """gu_common.ConfigWrapper.validate_field_operation: raise IllegalPatchOperation on the first refused op."""
    diff = make_patch(old, target)
    for op in diff:
        if op["op"] == "remove" and op["path"] in ILLEGAL_REMOVE:
            raise IllegalPatchOperation(f"Given patch operation is invalid. Operation: remove is illegal on field: {op['path']}")
    for op in diff:
        table = op["path"].split("/")[1].replace("~1", "/").replace("~0", "~")
        for name, check in platform.validators(table):
            if not check(op):
                raise IllegalPatchOperation(f"Modification of {table} table is illegal- validating function {name} returned False")
