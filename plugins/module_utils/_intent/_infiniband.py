# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""lossless_fabric.infiniband: OpenSM, QoS (SL2VL, VL arbitration), partitions."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._ib._opensm import MEMBER_KEYWORDS, MEMBERSHIPS, ROOTED_ENGINES
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _schema
from ansible_collections.lossless.fabric.plugins.module_utils._intent._checks import Ctx, _ok, _suggest
from ansible_collections.lossless.fabric.plugins.module_utils._intent._derive import _is_int
from ansible_collections.lossless.fabric.plugins.module_utils._intent._schema import value as leaf
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import BAD

# ---------------------------------------------------------------------------
# InfiniBand
# ---------------------------------------------------------------------------

_IB_KEYS = ("sm", "qos", "partitions", "compute_partition")
_SM_KEYS = ("priority", "standby_priority", "routing_engine", "lmc", "root_guids")
_QOS_KEYS = ("enabled", "max_vls", "high_limit", "vlarb_high", "vlarb_low", "sl2vl", "levels")
_PARTITION_KEYS = ("name", "pkey", "ipoib", "mtu", "rate", "sl", "qos_level", "default_membership", "members")

# The defaults are the schema rows' (_schema.LEAVES), as lists the sections copy before use.
_DEFAULT_SL2VL = list(_schema.BY_PATH["infiniband.qos.sl2vl.ca"].default)
_DEFAULT_VLARB_HIGH = copy.deepcopy(list(_schema.BY_PATH["infiniband.qos.vlarb_high"].default))
_DEFAULT_VLARB_LOW = copy.deepcopy(list(_schema.BY_PATH["infiniband.qos.vlarb_low"].default))
_DEFAULT_LEVELS = copy.deepcopy(list(_schema.BY_PATH["infiniband.qos.levels"].default))
_DEFAULT_PARTITIONS = copy.deepcopy(list(_schema.BY_PATH["infiniband.partitions"].default))


def _sl2vl(ctx: Ctx, value: Any, path: str, max_vls: Any) -> Any:
    if not isinstance(value, list):
        ctx.error(path, f"{value!r} is not a list of 16 VLs")
        return BAD
    row = _schema.BY_PATH["infiniband.qos.sl2vl." + path.rsplit(".", 1)[-1]]
    if not row.min_len <= len(value) <= row.max_len:
        ctx.error(path, f"an SL2VL map of the wrong length ({len(value)} entries; need exactly {row.max_len}, one VL per SL 0-{row.max_len - 1})")
        return BAD
    out = []
    for index, raw_vl in enumerate(value):
        vl = ctx.check_int(raw_vl, f"{path}[{index}]", row.low, row.high, row.what)
        if _ok(vl, max_vls) and vl != 15 and vl >= max_vls:
            ctx.error(f"{path}[{index}]", f"VL {vl} is not below qos.max_vls {max_vls} (use 15 to drop an SL)")
            vl = BAD
        out.append(vl)
    return out if _ok(*out) else BAD


def _vlarb(ctx: Ctx, value: Any, path: str, max_vls: Any) -> Any:
    table = "infiniband.qos." + path.rsplit(".", 1)[-1]
    row, vl_row, weight_row = (_schema.BY_PATH[table + key] for key in ("", "[].vl", "[].weight"))
    entries = ctx.sequence(value, path, min_len=row.min_len, max_len=row.max_len)
    if entries is BAD:
        return BAD
    out = []
    for index, entry in enumerate(entries):
        item_path = f"{path}[{index}]"
        src = ctx.mapping(entry, item_path, ("vl", "weight"), required=("vl", "weight"))
        vl = ctx.check_int(src["vl"], f"{item_path}.vl", vl_row.low, vl_row.high, vl_row.what) if src.get("vl") is not None else BAD
        weight = BAD
        if src.get("weight") is not None:
            weight = ctx.check_int(src["weight"], f"{item_path}.weight", weight_row.low, weight_row.high, weight_row.what)
        if _ok(vl, max_vls) and vl >= max_vls:
            ctx.error(f"{item_path}.vl", f"{vl!r} is not below qos.max_vls {max_vls}")
            vl = BAD
        out.append({"vl": vl, "weight": weight})
    return out if all(_ok(e["vl"], e["weight"]) for e in out) else BAD


def _pkey(value: Any) -> int | None:
    if _is_int(value):
        number = value
    elif isinstance(value, str) and re.fullmatch(r"0[xX][0-9A-Fa-f]{1,4}", value):
        number = int(value, 16)
    else:
        return None
    if not 0 <= number <= 0xFFFF or number & 0x7FFF == 0:
        return None
    return number


def _member(ctx: Ctx, value: Any, path: str, default_membership: Any) -> Any:
    if isinstance(value, str):
        value = {"guid": value} if value.lower().startswith("0x") else {"keyword": value}
    if not isinstance(value, dict):
        ctx.error(path, f"{value!r} is not a member (a GUID, a keyword, or a mapping with guid or keyword and membership)")
        return BAD
    src = ctx.mapping(value, path, ("guid", "keyword", "membership"))
    membership = ctx.choice(src, "membership", path, default_membership, MEMBERSHIPS, "a membership")
    if ("guid" in src) == ("keyword" in src):
        ctx.error(path, f"{value!r} needs exactly one of guid or keyword")
        return BAD
    if "guid" in src:
        guid = ctx.guid(src["guid"], f"{path}.guid")
        return {"guid": guid, "membership": membership} if _ok(guid, membership) else BAD
    keyword = src["keyword"]
    if not isinstance(keyword, str) or keyword not in MEMBER_KEYWORDS:
        ctx.error(f"{path}.keyword", f"{keyword!r} is not a member keyword ({_suggest(keyword, MEMBER_KEYWORDS)})")
        return BAD
    return {"keyword": keyword, "membership": membership} if _ok(membership) else BAD


def _ib_section(ctx: Ctx, raw: Any, path: str, tenant_partitions: tuple[str, ...] = ()) -> dict:
    """``tenant_partitions``: the names of the partitions the tenants will add (_tenants), which
    ``compute_partition`` may name too."""
    src = ctx.mapping(raw, path, _IB_KEYS)
    out: dict[str, Any] = {}

    sm_path = f"{path}.sm"
    sm = ctx.mapping(src.get("sm"), sm_path, _SM_KEYS)
    priority = leaf(ctx, sm, "infiniband.sm.priority", sm_path)
    standby = leaf(ctx, sm, "infiniband.sm.standby_priority", sm_path)
    if _ok(priority, standby) and standby >= priority:
        ctx.error(f"{sm_path}.standby_priority", f"{standby!r} is not below sm.priority ({priority!r}): the standby could win the election")
    engine_row = _schema.BY_PATH["infiniband.sm.routing_engine"]
    engines = sm.get("routing_engine", list(engine_row.default))
    if isinstance(engines, str):
        engines = [engines]
    engines = ctx.sequence(engines, f"{sm_path}.routing_engine", min_len=engine_row.min_len)
    if engines is not BAD:
        checked = []
        for index, engine in enumerate(engines):
            item_path = f"{sm_path}.routing_engine[{index}]"
            if not isinstance(engine, str) or engine not in engine_row.choices:
                hint = _suggest(engine, engine_row.choices) if isinstance(engine, str) else "one of " + ", ".join(engine_row.choices)
                ctx.error(item_path, f"{engine!r} is not {engine_row.what} ({hint})")
                checked.append(BAD)
            elif engine in checked:
                ctx.error(item_path, f"{engine!r} is listed twice")
                checked.append(BAD)
            else:
                checked.append(engine)
        engines = checked if _ok(*checked) else BAD
    roots = ctx.sequence(sm.get("root_guids", list(_schema.BY_PATH["infiniband.sm.root_guids"].default)), f"{sm_path}.root_guids")
    if roots is not BAD:
        roots = [ctx.guid(guid, f"{sm_path}.root_guids[{i}]") for i, guid in enumerate(roots)]
        roots = roots if _ok(*roots) else BAD
    out["sm"] = {
        "priority": priority,
        "standby_priority": standby,
        "routing_engine": engines,
        "lmc": leaf(ctx, sm, "infiniband.sm.lmc", sm_path),
        "root_guids": roots,
    }
    if _ok(engines, roots) and not roots:
        for engine in engines:
            if engine in ROOTED_ENGINES:
                consequence = "updn silently becomes minhop" if engine == "updn" else "ftree falls back to the next engine in the list"
                ctx.warn(
                    f"{sm_path}.routing_engine",
                    f"{engine!r} without root_guids: OpenSM must detect the roots itself; when it cannot, {consequence}",
                )

    qos_path = f"{path}.qos"
    qos = ctx.mapping(src.get("qos"), qos_path, _QOS_KEYS)
    max_vls = leaf(ctx, qos, "infiniband.qos.max_vls", qos_path)
    # Defaults must fit a smaller max_vls, or the one change would fail every default table.
    top_vl = max_vls - 1 if _ok(max_vls) else 7
    default_sl2vl = {kind: [min(vl, top_vl) for vl in _schema.BY_PATH[f"infiniband.qos.sl2vl.{kind}"].default] for kind in ("ca", "switch")}
    default_high = [e for e in _DEFAULT_VLARB_HIGH if e["vl"] <= top_vl] or [{"vl": 0, "weight": 64}]
    default_low = [e for e in _DEFAULT_VLARB_LOW if e["vl"] <= top_vl]
    sl2vl_src = ctx.mapping(qos.get("sl2vl"), f"{qos_path}.sl2vl", ("ca", "switch"))
    levels_raw = ctx.sequence(qos.get("levels", copy.deepcopy(_DEFAULT_LEVELS)), f"{qos_path}.levels", min_len=_schema.BY_PATH["infiniband.qos.levels"].min_len)
    levels: Any = []
    if levels_raw is not BAD:
        seen: dict[str, int] = {}
        for index, entry in enumerate(levels_raw):
            item_path = f"{qos_path}.levels[{index}]"
            lsrc = ctx.mapping(entry, item_path, ("name", "sl"), required=("name",))
            name = ctx.name(lsrc["name"], f"{item_path}.name") if lsrc.get("name") is not None else BAD
            sl = leaf(ctx, lsrc, "infiniband.qos.levels[].sl", item_path)
            if _ok(name):
                if name.lower() in seen:
                    ctx.error(f"{item_path}.name", f"{name!r} duplicates levels[{seen[name.lower()]}]")
                    name = BAD
                else:
                    seen[name.lower()] = index
            levels.append({"name": name, "sl": sl})
        if not all(_ok(level["name"], level["sl"]) for level in levels):
            levels = BAD
        elif "default" not in seen:
            ctx.error(f"{qos_path}.levels", "no 'default' level: OpenSM requires a DEFAULT QoS level")
            levels = BAD
    else:
        levels = BAD
    out["qos"] = {
        "enabled": leaf(ctx, qos, "infiniband.qos.enabled", qos_path),
        "max_vls": max_vls,
        "high_limit": leaf(ctx, qos, "infiniband.qos.high_limit", qos_path),
        "vlarb_high": _vlarb(ctx, qos.get("vlarb_high", copy.deepcopy(default_high)), f"{qos_path}.vlarb_high", max_vls),
        "vlarb_low": _vlarb(ctx, qos.get("vlarb_low", copy.deepcopy(default_low)), f"{qos_path}.vlarb_low", max_vls),
        "sl2vl": {
            "ca": _sl2vl(ctx, sl2vl_src.get("ca", list(default_sl2vl["ca"])), f"{qos_path}.sl2vl.ca", max_vls),
            "switch": _sl2vl(ctx, sl2vl_src.get("switch", list(default_sl2vl["switch"])), f"{qos_path}.sl2vl.switch", max_vls),
        },
        "levels": levels,
    }
    level_names = [lv["name"] for lv in levels] if _ok(levels) else None

    parts_raw = ctx.sequence(src.get("partitions", copy.deepcopy(_DEFAULT_PARTITIONS)), f"{path}.partitions")
    partitions: Any = []
    if parts_raw is not BAD:
        names: dict[str, str] = {}
        pkeys: dict[int, tuple[str, Any]] = {}
        for index, entry in enumerate(parts_raw):
            partitions.append(_partition(ctx, entry, f"{path}.partitions[{index}]", level_names, names, pkeys, f"partitions[{index}]"))
    else:
        partitions = BAD
    out["partitions"] = partitions

    compute = src.get("compute_partition")
    cpath = f"{path}.compute_partition"
    if compute is None:
        good = [p for p in partitions if _ok(p)] if _ok(partitions) else []
        compute = good[0]["name"] if good else None
    elif not isinstance(compute, str):
        ctx.error(cpath, f"{compute!r} is not a partition name")
        compute = BAD
    elif _ok(partitions) and all(_ok(p) for p in partitions):
        defined = [p["name"] for p in partitions] + list(tenant_partitions)
        if compute not in defined:
            hint = _suggest(compute, defined) if defined else "no partitions are defined"
            ctx.error(cpath, f"{compute!r} is not a defined partition ({hint})")
            compute = BAD
    out["compute_partition"] = compute
    _ib_cross_checks(ctx, out, path)
    return out


def _partition(ctx: Ctx, entry: Any, item_path: str, level_names: list | None, names: dict, pkeys: dict, label: str) -> Any:
    """One partition, checked and normalized: an ``infiniband.partitions`` entry, or one a tenant generates (_tenants).

    ``names`` (name -> label) and ``pkeys`` (P_Key without bit 15 -> (label, the value as given)) hold the
    partitions checked so far; ``label`` names this one in their messages ("partitions[1]",
    "lossless_fabric.tenants[0].partition")."""
    psrc = ctx.mapping(entry, item_path, _PARTITION_KEYS, required=("name", "pkey", "members"))
    if not isinstance(entry, dict):
        return BAD
    name = ctx.name(psrc["name"], f"{item_path}.name") if psrc.get("name") is not None else BAD
    if _ok(name):
        if name in names:
            ctx.error(f"{item_path}.name", f"{name!r} duplicates {names[name]}")
            name = BAD
        else:
            names[name] = label
    pkey: Any = BAD
    if psrc.get("pkey") is not None:
        number = _pkey(psrc["pkey"])
        if number is None:
            ctx.error(f"{item_path}.pkey", f"{psrc['pkey']!r} is not a P_Key (an integer or '0x' hex string, 0x0001-0x7fff after masking bit 15)")
        elif number & 0x7FFF in pkeys:
            other, given = pkeys[number & 0x7FFF]
            ctx.error(
                f"{item_path}.pkey",
                f"{psrc['pkey']!r} duplicates {other} pkey {given!r} (bit 15 is the membership bit, not part of the key)",
            )
        else:
            pkeys[number & 0x7FFF] = (label, psrc["pkey"])
            pkey = f"0x{number:04x}"
    mtu_row = _schema.BY_PATH["infiniband.partitions[].mtu"]
    mtu = psrc.get("mtu", mtu_row.default)
    if mtu is not None and (not _is_int(mtu) or mtu not in mtu_row.choices):
        ctx.error(f"{item_path}.mtu", f"{mtu!r} is not {mtu_row.what} (one of {', '.join(str(m) for m in mtu_row.choices)})")
        mtu = BAD
    level = psrc.get("qos_level")
    if level is not None:
        if not isinstance(level, str):
            ctx.error(f"{item_path}.qos_level", f"{level!r} is not a QoS level name")
            level = BAD
        elif level_names is not None and level.lower() not in [n.lower() for n in level_names]:
            ctx.error(f"{item_path}.qos_level", f"{level!r} is not a defined QoS level ({_suggest(level, level_names)})")
            level = BAD
    default_membership = leaf(ctx, psrc, "infiniband.partitions[].default_membership", item_path)
    members_raw = (
        ctx.sequence(psrc.get("members"), f"{item_path}.members", min_len=_schema.BY_PATH["infiniband.partitions[].members"].min_len)
        if psrc.get("members") is not None
        else BAD
    )
    members: Any = BAD
    if members_raw is not BAD:
        dm = default_membership if _ok(default_membership) else "limited"
        members = [_member(ctx, m, f"{item_path}.members[{i}]", dm) for i, m in enumerate(members_raw)]
        members = members if _ok(*members) else BAD
    part = {
        "name": name,
        "pkey": pkey,
        "ipoib": leaf(ctx, psrc, "infiniband.partitions[].ipoib", item_path),
        "mtu": mtu,
        "rate": leaf(ctx, psrc, "infiniband.partitions[].rate", item_path),
        "sl": leaf(ctx, psrc, "infiniband.partitions[].sl", item_path),
        "qos_level": level,
        "default_membership": default_membership,
        "members": members,
    }
    return part if _ok(*part.values()) else BAD


def _level_sl(ib: dict, level_name: str | None) -> Any:
    wanted = (level_name or "default").lower()
    for level in ib["qos"]["levels"]:
        if level["name"].lower() == wanted:
            return level["sl"]
    return BAD


def _compute_sl(ib: dict) -> Any:
    """NCCL_IB_SL: the SL the fabric gives the compute partition's PathRecords (host-ib-k8s b.3).

    With QoS on, our qos-policy.conf matches every partition's pkey to a QoS
    level, and OpenSM 3.3.23 answers PathRecords with that level's SL: the
    partition's own sl= does not show (measured against ibsim, docs/infiniband.md).
    With QoS off, partitions.conf's sl= is what the SA answers."""
    if not _ok(ib["partitions"], ib["compute_partition"], ib["qos"]["levels"], ib["qos"]["enabled"]) or ib["compute_partition"] is None:
        return None
    for part in ib["partitions"]:
        if part["name"] == ib["compute_partition"]:
            return partition_sl(ib, part)
    return None


def partition_sl(ib: dict, part: dict) -> Any:
    """The SL the SA puts in ``part``'s PathRecords: its QoS level's with QoS on (or without an sl=), else its sl=."""
    if ib["qos"]["enabled"] or part["sl"] is None:
        return _level_sl(ib, part["qos_level"])
    return part["sl"]


def _ib_cross_checks(ctx: Ctx, ib: dict, path: str) -> None:
    if not (_ok(ib["partitions"], ib["qos"]["levels"]) and all(_ok(p) for p in ib["partitions"])):
        return
    for index, part in enumerate(ib["partitions"]):
        # with QoS on, the policy matches every partition to a level (default when it names none)
        if part["sl"] is not None and (part["qos_level"] is not None or ib["qos"]["enabled"] is True):
            level_sl = _level_sl(ib, part["qos_level"])
            if _ok(level_sl) and level_sl != part["sl"]:
                ctx.warn(
                    f"{path}.partitions[{index}].sl",
                    f"{part['sl']!r} differs from qos_level {part['qos_level'] or 'default'!r} sl {level_sl}: "
                    + (
                        f"with qos enabled PathRecords and NCCL_IB_SL use {level_sl}"
                        if ib["qos"]["enabled"]
                        else f"PathRecords and NCCL_IB_SL use {part['sl']}"
                    ),
                )
    check_compute_sl(ctx, ib, path)


def check_compute_sl(ctx: Ctx, ib: dict, path: str) -> None:
    """The compute partition's SL must not be dropped (VL 15) by an SL2VL map."""
    sl = _compute_sl(ib)
    if sl is None or not _ok(sl):
        return
    for kind in ("ca", "switch"):
        table = ib["qos"]["sl2vl"][kind]
        if _ok(table) and table[sl] == 15:
            ctx.error(f"{path}.qos.sl2vl.{kind}[{sl}]", f"15 drops SL {sl}, the service level of compute_partition {ib['compute_partition']!r}")


# ---------------------------------------------------------------------------
# SR-IOV VF GUIDs on the hosts (issue 37, C2)
# ---------------------------------------------------------------------------

# The SR-IOV network operator's static VF GUID file: k8snetworkplumbingwg/sriov-network-operator at 249e200,
# pkg/consts/constants.go InfinibandGUIDConfigFilePath = SriovConfBasePath + "/infiniband/guids" (SriovConfBasePath
# "/etc/sriov-operator"), doc/ib-vf-guid-static-configuration.md.
SRIOV_GUID_FILE = "/etc/sriov-operator/infiniband/guids"


def _colon_guid(guid: str) -> str:
    """``0x0c42a10300010001`` -> ``0c:42:a1:03:00:01:00:01``: the form the operator parses (ParseGUID is Go's
    net.ParseMAC, eight octets; pkg/host/internal/infiniband/guid.go) and prints (net.HardwareAddr.String, lower case)."""
    digits = guid[2:].lower()
    return ":".join(digits[i:i + 2] for i in range(0, 16, 2))


def vf_guid_config(nics: list) -> list[dict[str, Any]]:
    """The operator's GUID file as data, one entry per NIC with VF GUIDs: ``{"pciAddress": <the NIC's PCI address>,
    "guids": [<VF 0's>, <VF 1's>, ...]}`` (VF i takes guids[i]).

    The keys are those the operator's code reads, not the doc's: ``ibPfGUIDJSONConfig`` in
    pkg/host/internal/infiniband/ib_guid_config.go has the JSON tags ``pciAddress``, ``pfGuid``, ``guids`` and
    ``guidsRange``. Go's encoding/json matches a key to a tag exactly or case-insensitively, so the doc example's
    ``pf_guid`` / ``pci_address`` would read as empty and the whole file be refused ("either PCI address or PF GUID
    required to describe an interface, none provided"). ``pciAddress``, not ``pfGuid``: getPfPciAddressFromRawConfig
    compares a pfGuid with ``link.Attrs().HardwareAddr.String()`` of every netdev, which on an IPoIB PF is the
    20-octet IPoIB address (QPN + GID), so an 8-octet GUID never matches and the operator refuses the whole file; a
    pciAddress is used as it is, the key GetVFGUID looks the PF up by. A list, not a range: our GUIDs need not be
    consecutive."""
    out = []
    for nic in nics:
        if nic.get("vf_guids"):
            out.append({"pciAddress": nic["pci"], "guids": [_colon_guid(guid) for guid in nic["vf_guids"]]})
    return out


def vf_guid_file(plan: dict) -> str:
    """The content of SRIOV_GUID_FILE for a host plan (``fabric_plan_result.devices[host]``): the JSON of
    vf_guid_config, or "" when the host has no VF GUIDs (an InfiniBand host only: a RoCE VF has no GUID to give).
    Raises ValueError for a plan that is not a host's or whose NICs are not the plan's."""
    if not isinstance(plan, dict) or plan.get("kind") != "host" or not isinstance(plan.get("nics"), list):
        raise ValueError("not a host plan (fabric_plan_result.devices[host] of kind host)")
    for index, nic in enumerate(plan["nics"]):
        guids = nic.get("vf_guids") if isinstance(nic, dict) else None
        if not isinstance(guids, list) or not isinstance(nic.get("vfs"), int):
            raise ValueError("nics[%d]: no vfs / vf_guids: a plan from before issue 37; run fabric_plan again" % index)
        if guids and plan.get("transport") != "infiniband":
            raise ValueError("nics[%d].vf_guids: a %s host has no VF GUIDs" % (index, plan.get("transport")))
        for guid in guids:
            if not isinstance(guid, str) or not re.fullmatch(r"0x[0-9a-f]{16}", guid):
                raise ValueError("nics[%d]: %r is not a GUID as the plan writes it (0x + 16 lower-case hex)" % (index, guid))
        if guids and not isinstance(nic.get("pci"), str):
            raise ValueError("nics[%d]: VF GUIDs without the NIC's pci address: a plan from before pci; run fabric_plan again" % index)
    config = vf_guid_config(plan["nics"])
    return json.dumps(config, indent=2) + "\n" if config else ""
