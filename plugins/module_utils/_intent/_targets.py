# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""lossless_fabric.targets: the NCCL bus-bandwidth targets a benchmark must meet."""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _schema
from ansible_collections.lossless.fabric.plugins.module_utils._intent._checks import Ctx, _ok, _suggest, key_repr, type_name
from ansible_collections.lossless.fabric.plugins.module_utils._intent._derive import _is_number
from ansible_collections.lossless.fabric.plugins.module_utils._intent._schema import value as leaf
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import BAD, TRANSPORTS
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate  # auto_target: the method of min_busbw: auto
from ansible_collections.lossless.fabric.plugins.module_utils._nccl._vocab import parse_size  # the one size parser: nccl-tests' -b/-e rules

# ---------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------

_TARGET_KEYS = ("tolerance_percent", "require_transport", "require_gdr", "collectives", "node")
_TARGET_ENTRY_KEYS = ("min_size", "max_size", "min_busbw")
# fabric_plan's normalized entry also carries how a min_busbw: auto was derived (_nccl_gate.auto_target)
_NORMALIZED_KEYS = _TARGET_ENTRY_KEYS + ("auto",)
AUTO = "auto"


def _targets_section(ctx: Ctx, raw: Any, path: str, transport: Any) -> dict:
    src = ctx.mapping(raw, path, _TARGET_KEYS)
    row = _schema.BY_PATH["targets.tolerance_percent"]
    tolerance = src.get("tolerance_percent", row.default)
    if not _is_number(tolerance) or row.outside(tolerance):
        ctx.error(f"{path}.tolerance_percent", f"{tolerance!r} is not a tolerance ({row.low} < x < {row.high} percent)")
        tolerance = BAD
    require = leaf(ctx, src, "targets.require_transport", path)
    if require is None and transport in TRANSPORTS:
        require = {"roce": "RoCE", "infiniband": "IB"}[transport]
    cpath = f"{path}.collectives"
    colls_row = _schema.BY_PATH["targets.collectives"]
    colls_raw = src.get("collectives", dict(colls_row.default))
    collectives: dict[str, Any] = {}
    if colls_raw is None:
        colls_raw = {}
    if not isinstance(colls_raw, dict):
        ctx.error(cpath, f"{type_name(colls_raw)} is not a mapping")
        colls_raw = {}
    for coll in sorted(colls_raw, key=str):
        coll_path = f"{cpath}.{key_repr(coll)}"
        if coll not in colls_row.choices:
            ctx.error(coll_path, f"unknown collective ({_suggest(coll, colls_row.choices)})")
            continue
        entries = ctx.sequence(colls_raw[coll], coll_path, min_len=1)
        if entries is BAD:
            continue
        collectives[coll] = [_target_entry(ctx, e, f"{coll_path}[{i}]", auto=True) for i, e in enumerate(entries)]
    node = []
    npath = f"{path}.node"
    node_raw = src.get("node", [])
    if node_raw is not None:
        entries = ctx.sequence(node_raw, npath)
        for i, e in enumerate(entries if entries is not BAD else []):
            node.append(_node_entry(ctx, e, f"{npath}[{i}]"))
    gdr = _schema.BY_PATH["targets.require_gdr"].default
    return {
        # the node baseline's targets (role nccl_gate, tasks node): per GPU model, one node's own GPUs
        "node": node,
        "tolerance_percent": tolerance,
        "require_transport": require,
        # null turns the GPUDirect check off (the nccl_gate role passes it so when transport checks are off)
        "require_gdr": None if src.get("require_gdr", gdr) is None else ctx.boolean(src, "require_gdr", path, gdr),
        "collectives": collectives,
    }


def validate_targets(raw: Any, path: str = "targets", transport: Any = None) -> tuple[dict, list[str]]:
    """The intent's ``targets`` section alone -> (normalized section, errors).

    The one validator of benchmark targets: ``validate`` uses it for the intent, and
    ``fabric_targets`` for the gate's option of that name, so both apply the same rules.
    ``transport`` (roce/infiniband) gives the default ``require_transport``. A ``min_busbw: auto``
    is refused here: the section alone has no hardware (fabric_plan's result carries the derived number).
    """
    ctx = Ctx()
    section = _targets_section(ctx, raw, path, transport)
    resolve_auto(ctx, section, None, path, why="the section as written carries no hardware")
    return section, ctx.errors


def launch_hardware(devices: dict) -> dict | None:
    """The hardware an auto target is derived from: the hosts' RDMA NICs (every one is in NCCL_IB_HCA).
    A ring is as fast as its slowest node: the fewest NICs any host has and the slowest NIC's rate. None without hosts with NICs."""
    hosts = {name: d for name, d in devices.items() if _ok(d) and isinstance(d, dict) and d.get("kind") == "host"}
    nics = {name: [n for n in d.get("nics") or [] if isinstance(n, dict)] for name, d in hosts.items()}
    if not nics or not all(nics.values()):
        return None
    speeds = [n.get("speed_gbps") for found in nics.values() for n in found]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in speeds):
        return None
    return {"nics_per_host": min(len(found) for found in nics.values()), "link_gbps": min(speeds), "hosts": len(hosts)}


def resolve_auto(ctx: Ctx, section: dict, hardware: dict | None, path: str = "lossless_fabric.targets",
                 why: str = "no device of kind host with nics is in scope") -> None:
    """Each ``min_busbw: auto`` of ``section`` -> the number ``_nccl_gate.auto_target`` derives from ``hardware``
    (``launch_hardware``), the derivation kept beside it as ``auto``; refused, naming the target, where the
    hardware is unknown or the collective has no cited method."""
    for coll in sorted(section.get("collectives") or {}):
        for index, entry in enumerate(section["collectives"][coll]):
            if not _ok(entry) or entry.get("min_busbw") != AUTO:
                continue
            where = f"{path}.collectives.{key_repr(coll)}[{index}].min_busbw"
            if hardware is None:
                ctx.error(where, f"'auto' needs the launch's hardware (the hosts' NICs and their link rate): {why} "
                          "(pass fabric_plan's result, fabric_plan_result.intent.targets, or give GB/s)")
                entry["min_busbw"] = BAD
                continue
            try:
                derived = _nccl_gate.auto_target(coll, hardware["nics_per_host"], hardware["link_gbps"], hardware.get("hosts"))
            except ValueError as exc:
                ctx.error(where, str(exc))
                entry["min_busbw"] = BAD
                continue
            entry["min_busbw"] = derived["min_busbw"]
            entry["auto"] = derived


def fabric_targets(raw: Any) -> tuple[dict | None, list[str]]:
    """A module's ``fabric_targets`` option (the intent's targets section) -> (normalized section, errors).

    (None, []) when not given; (None, errors) when invalid. The NCCL gate takes the result
    (``_nccl_gate.gate_settings(params, section, errors)``): the rules stay here, so a section
    fabric_plan accepts is exactly a section the gate accepts (normalized output and as written alike).
    """
    if raw is None:
        return None, []
    if not isinstance(raw, dict):
        return None, ["fabric_targets: not a mapping (pass the intent targets, e.g. fabric_plan_result.intent.targets)"]
    section, problems = validate_targets(raw, "fabric_targets")
    return (None if problems else section), problems


def _node_entry(ctx: Ctx, entry: Any, path: str) -> Any:
    """A node baseline target: a GPU model and a busbw target (the same size and busbw rules as a collective's)."""
    src = ctx.mapping(entry, path, _TARGET_ENTRY_KEYS + ("gpu_model",), required=("gpu_model",))
    if not isinstance(entry, dict):
        return BAD
    model = src.get("gpu_model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        ctx.error(f"{path}.gpu_model", f"{model!r} is not a GPU model name (as nccl-tests' device list prints it)")
        model = BAD
    # the size and busbw keys through the collectives' rules (missing ones reported there, unknown keys above)
    target = _target_entry(ctx, {k: v for k, v in entry.items() if k in _TARGET_ENTRY_KEYS}, path)
    if target is BAD:
        return BAD
    return dict(target, gpu_model=model.strip() if isinstance(model, str) else BAD)


def _target_entry(ctx: Ctx, entry: Any, path: str, auto: bool = False) -> Any:
    """A collective's target (``auto``: min_busbw may be 'auto', and fabric_plan's derivation record is taken back)."""
    src = ctx.mapping(entry, path, _NORMALIZED_KEYS if auto else _TARGET_ENTRY_KEYS, required=("min_size", "min_busbw"))
    if not isinstance(entry, dict):
        return BAD
    sizes: dict[str, Any] = {}
    for key in ("min_size", "max_size"):
        value = src.get(key)
        if value is None:
            sizes[key] = None if key == "max_size" else BAD
            continue
        try:
            sizes[key] = parse_size(value)
        except ValueError as exc:
            ctx.error(f"{path}.{key}", str(exc))
            sizes[key] = BAD
            continue
        low = _schema.BY_PATH[f"targets.collectives.<c>[].{key}"].low
        if sizes[key] < low:
            ctx.error(f"{path}.{key}", f"{value!r} is not a size above {low - 1}")
            sizes[key] = BAD
    low, high = sizes["min_size"], sizes["max_size"]
    if _ok(low, high) and low is not None and high is not None and low > high:
        ctx.error(f"{path}.min_size", f"{src['min_size']!r} is above max_size {src['max_size']!r}")
    busbw, busbw_row = src.get("min_busbw"), _schema.BY_PATH["targets.collectives.<c>[].min_busbw"]
    derived = src.get("auto")
    if auto and busbw == AUTO:
        pass  # resolve_auto derives it once the hardware is known
    elif busbw is not None and (not _is_number(busbw) or busbw_row.outside(busbw)):
        ctx.error(f"{path}.min_busbw", f"{busbw!r} is not a positive bus bandwidth (GB/s > {busbw_row.low})")
        busbw = BAD
    out = {"min_size": low, "max_size": high, "min_busbw": busbw if busbw is not None else BAD}
    if derived is not None:
        # fabric_plan's own record of a derived target, handed back to the gate: kept as it is (the report prints it)
        if not isinstance(derived, dict) or not _is_number(busbw) or derived.get("min_busbw") != busbw:
            ctx.error(f"{path}.auto", f"{type_name(derived)} is not fabric_plan's record of how min_busbw {busbw!r} was derived")
        else:
            out["auto"] = dict(derived)
    return out
