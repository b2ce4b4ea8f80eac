# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Host RDMA NICs: discovery, stack detection, read, plan, apply.

    discover (sysfs) -> select (names or PCI IDs) -> detect the stack per NIC
      -> read every setting -> compare with the host plan -> actions -> apply

Two software stacks (reference host-ib-k8s a.0):

- ``mlnx``: the NVIDIA (DOCA-OFED / MLNX_OFED) driver: ``mlnx_qos`` for trust,
  DSCP->priority and PFC; the out-of-tree ``/sys/class/net/IF/ecn/`` for DCQCN
  and CNP; ``/sys/class/infiniband/DEV/tc/1/traffic_class`` for verbs.
- ``upstream``: the kernel's mlx5 and iproute2 ``dcb`` (the DSCP APP table
  implies trust dscp); CNP DSCP/priority through debugfs ``cc_params`` when
  debugfs is mounted. No per-priority DCQCN enable and no device-wide verbs
  traffic class exist there: those come back as ``unsupported`` with the
  reason, never silently skipped.

Both: RDMA-CM ToS and mode in configfs, MTU in sysfs, global pause via ethtool.

Two more stacks live in their own files and subclass ``NicState`` (imports point one way:
they import this file, never the reverse; ``_nic_task`` picks the class per NIC):

- ``bnxt`` (_nic_bnxt.py): Broadcom bnxt_en / bnxt_re - iproute2 ``dcb`` (ETS, PFC, DSCP APP)
  over DCBNL and the bnxt_re debugfs ``cc_config``.
- ``ionic`` (_nic_ionic.py): AMD Pensando / Pollara ionic - mainline registers no DCBNL ops, so
  trust, DSCP map, PFC and congestion control come back ``unsupported`` with the reason.

The stack of a NIC is the driver its netdev is bound to (``/sys/class/net/IF/device/driver``):
mlx5_core -> mlnx or upstream (as before), bnxt_en -> bnxt, ionic -> ionic; ``stack`` overrides.

Every file is reached through ``Fs`` (a root directory, ``/`` in production,
a tree in tests and the lab) and every tool through an injected runner
``runner(argv) -> (rc, stdout, stderr)``, so this file is pure and testable.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _contract

Runner = Callable[[list], tuple]

STACKS = _contract.NIC_STACKS
# The driver a netdev is bound to (the basename of /sys/class/net/IF/device/driver, the kernel's
# driver-model link) -> its stack; mlx5_core is told apart by the vendor driver's sysfs (detect_stack).
DRIVER_STACKS = {"mlx5_core": None, "bnxt_en": "bnxt", "ionic": "ionic"}
STACK_DRIVERS = {"mlnx": "mlx5_core", "upstream": "mlx5_core", "bnxt": "bnxt_en", "ionic": "ionic"}
# The order settings are compared, applied and reported in (trust before the map; ETS before PFC:
# bnxt_en refuses PFC until the host has set ETS, bnxt_dcb.c bnxt_hwrm_queue_pfc_cfg).
SETTINGS = ("trust", "dscp_map", "ets", "pfc", "global_pause", "dcqcn", "cnp", "traffic_class", "rdma_cm_tos", "roce_mode", "mtu")
# dcb ets: the transmission selection algorithms (iproute2 dcb/dcb_ets.c tsa_names).
TSA_NAMES = ("strict", "cbs", "ets", "vendor")
ROCE_MODES = ("RoCE v2", "IB/RoCE v1")
PORT = 1  # RoCE NICs have one port per PCI function

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_NETDEV_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,14}")
_PCI_ID_RE = re.compile(r"(?:0x)?([0-9a-fA-F]{4})(?::(?:0x)?([0-9a-fA-F]{4}))?")
_FW_NAME_RE = re.compile(r"[A-Z][A-Z0-9_]{1,63}")
_FW_VALUE_RE = re.compile(r"[A-Za-z0-9_]{1,32}(\(\d+\))?")


class NicError(ValueError):
    """Bad input or a tool/file failure; the message names the NIC, the item and what was said."""


class Unsupported:
    """A setting this host cannot take, with the reason (reported, never skipped)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unsupported) and other.reason == self.reason

    def __repr__(self) -> str:
        return "Unsupported(%r)" % self.reason


# ---------------------------------------------------------------------------
# file system under a root
# ---------------------------------------------------------------------------


class Fs:
    """Files below ``root``; every path here is written as on the host ('/sys/...')."""

    def __init__(self, root: str = "/") -> None:
        self.root = root or "/"

    def path(self, rel: str) -> str:
        return os.path.join(self.root, rel.lstrip("/"))

    def exists(self, rel: str) -> bool:
        return os.path.exists(self.path(rel))

    def isdir(self, rel: str) -> bool:
        return os.path.isdir(self.path(rel))

    def listdir(self, rel: str) -> list[str]:
        try:
            return sorted(os.listdir(self.path(rel)))
        except OSError:
            return []

    def read(self, rel: str) -> str | None:
        try:
            with open(self.path(rel), encoding="utf-8") as handle:
                return handle.read().strip()
        except OSError:
            return None

    def write(self, rel: str, value: str) -> None:
        try:
            with open(self.path(rel), "w", encoding="utf-8") as handle:
                handle.write(value + "\n")
        except OSError as exc:
            raise NicError("write %s: %s" % (rel, exc.strerror or exc)) from exc

    def mkdir(self, rel: str) -> None:
        try:
            os.makedirs(self.path(rel), exist_ok=True)
        except OSError as exc:
            raise NicError("mkdir %s: %s" % (rel, exc.strerror or exc)) from exc

    def basename_of_link(self, rel: str) -> str | None:
        real = os.path.realpath(self.path(rel))
        return os.path.basename(real) if os.path.exists(real) else None


# ---------------------------------------------------------------------------
# actions: what apply() does and what a persisted boot script repeats
# ---------------------------------------------------------------------------


class Action:
    """One step: write a file, create a directory, or run a tool."""

    def __init__(self, kind: str, path: str | None = None, value: str | None = None, argv: list | None = None, also_ok: int | None = None) -> None:
        self.kind, self.path, self.value, self.argv = kind, path, value, list(argv or [])
        # An exit code that also means success (ethtool -A: 80 = "no pause parameters changed").
        self.also_ok = also_ok

    def text(self) -> str:
        """The step as a shell line (what --check --diff shows and the boot script runs)."""
        if self.kind == "write":
            return "echo %s > %s" % (shlex.quote(str(self.value)), shlex.quote(str(self.path)))
        if self.kind == "mkdir":
            return "mkdir -p %s" % shlex.quote(str(self.path))
        if self.also_ok is not None:
            return "%s || test $? -eq %d" % (shlex.join(self.argv), self.also_ok)
        return shlex.join(self.argv)

    def run(self, fs: Fs, runner: Runner) -> None:
        if self.kind == "write":
            fs.write(self.path or "", str(self.value))
        elif self.kind == "mkdir":
            fs.mkdir(self.path or "")
        else:
            rc, out, err = runner(self.argv)
            if rc not in (0, self.also_ok):
                said = (err or out or "").strip().splitlines()
                raise NicError("%s: exit %s: %s" % (self.text(), rc, said[0] if said else "no output"))


def _write(path: str, value: Any) -> Action:
    return Action("write", path=path, value=str(value))


# ---------------------------------------------------------------------------
# parsers of real tool output (reference host-ib-k8s a.1, a.2, a.8)
# ---------------------------------------------------------------------------


def parse_mlnx_qos(text: str) -> dict[str, Any]:
    """``mlnx_qos -i IF``: trust, DCBX owner, the dscp2prio map (trust dscp only),
    PFC enabled bitmap (priority 0 first), cable length, TC blocks."""
    out: dict[str, Any] = {"trust": None, "dcbx": None, "dscp_map": None, "pfc": None, "buffer": None, "cable_len": None, "tcs": {}, "warnings": []}
    tc = None
    in_map = False
    for raw in text.replace("\r", "").split("\n"):
        line = raw.strip()
        if not line:
            continue
        if "WARNING" in line:
            out["warnings"].append(line.strip("* "))
            continue
        match = re.match(r"DCBX mode:\s*(.+)", line)
        if match:
            out["dcbx"] = "os" if "OS" in match.group(1) else "firmware"
            continue
        match = re.match(r"Priority trust state:\s*(\w+)", line)
        if match:
            out["trust"] = match.group(1)
            continue
        if line.startswith("dscp2prio mapping"):
            in_map, out["dscp_map"] = True, {}
            continue
        match = re.match(r"prio:\s*(\d)\s+dscp:\s*([\d,\s]*)$", line)
        if in_map and match:
            for dscp in re.findall(r"\d+", match.group(2)):
                out["dscp_map"][int(dscp)] = int(match.group(1))
            continue
        in_map = False
        match = re.match(r"Cable len:\s*(\d+)", line)
        if match:
            out["cable_len"] = int(match.group(1))
            continue
        match = re.match(r"(enabled|buffer)\s+((?:[01]\s*){8})$", line)
        if match:
            bits = [int(b) for b in match.group(2).split()]
            out["pfc" if match.group(1) == "enabled" else "buffer"] = bits
            continue
        match = re.match(r"tc:\s*(\d+)\s+ratelimit:\s*([^,]+),\s*tsa:\s*(\w+)(?:,\s*bw:\s*(\d+)%)?", line)
        if match:
            tc = int(match.group(1))
            bandwidth = int(match.group(4)) if match.group(4) else None
            out["tcs"][tc] = {"ratelimit": match.group(2).strip(), "tsa": match.group(3), "bw": bandwidth, "priorities": []}
            continue
        match = re.match(r"priority:\s*(\d)$", line)
        if match and tc is not None:
            out["tcs"][tc]["priorities"].append(int(match.group(1)))
    return out


# dcb prints DSCP keys symbolically unless -N: the RFC 2474/2597/3246 names.
_DSCP_NAMES = {
    **{"CS%d" % n: 8 * n for n in range(8)},
    **{"AF%d%d" % (c, d): 8 * c + 2 * d for c in range(1, 5) for d in range(1, 4)},
    "EF": 46,
    "VA": 44,
    "LE": 1,
}


def _dscp_key(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    return _DSCP_NAMES.get(text.upper())


def parse_dcb_app(text: str) -> dict[int, list[int]]:
    """``dcb [-N] app show dev IF dscp-prio``: DSCP -> priorities (the APP table may hold several)."""
    table: dict[int, list[int]] = {}
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] != "dscp-prio":
            continue
        for word in words[1:]:
            key, _sep, prio = word.partition(":")
            dscp = _dscp_key(key)
            if dscp is None or not prio.isdigit():
                raise NicError("dcb app show: cannot read %r" % word)
            table.setdefault(dscp, []).append(int(prio))
    return table


def parse_dcb_pfc(text: str) -> dict[str, Any]:
    """``dcb pfc show dev IF``: pfc-cap, delay and the prio-pfc bitmap (priority 0 first)."""
    out: dict[str, Any] = {"pfc": None, "pfc_cap": None, "delay": None}
    for line in text.splitlines():
        words = line.split()
        if "pfc-cap" in words:
            out["pfc_cap"] = int(words[words.index("pfc-cap") + 1])
        if "delay" in words:
            out["delay"] = int(words[words.index("delay") + 1])
        if words and words[0] == "prio-pfc":
            bits = [0] * 8
            for word in words[1:]:
                prio, _sep, state = word.partition(":")
                if not prio.isdigit() or int(prio) > 7 or state not in ("on", "off"):
                    raise NicError("dcb pfc show: cannot read %r" % word)
                bits[int(prio)] = 1 if state == "on" else 0
            out["pfc"] = bits
    return out


def parse_dcb_ets(text: str) -> dict[str, Any]:
    """``dcb ets show dev IF``: tc-bw, tc-tsa and prio-tc as 8-entry lists (iproute2 dcb/dcb_ets.c dcb_ets_print:
    one ``NAME 0:V 1:V ...`` line each); the other lines (willing, pg-bw, reco-*) are not ours."""
    out: dict[str, Any] = {"tc_bw": None, "tc_tsa": None, "prio_tc": None}
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] not in ("tc-bw", "tc-tsa", "prio-tc"):
            continue
        values: list[Any] = [None] * 8
        for word in words[1:]:
            key, _sep, value = word.partition(":")
            if not key.isdigit() or int(key) > 7 or not value:
                raise NicError("dcb ets show: cannot read %r" % word)
            if words[0] == "tc-tsa":
                if value not in TSA_NAMES:
                    raise NicError("dcb ets show: cannot read %r (a TSA is one of %s)" % (word, ", ".join(TSA_NAMES)))
                values[int(key)] = value
            elif value.isdigit():
                values[int(key)] = int(value)
            else:
                raise NicError("dcb ets show: cannot read %r" % word)
        if None in values:
            raise NicError("dcb ets show: %s has not 8 entries: %r" % (words[0], line.strip()))
        out[words[0].replace("-", "_")] = values
    return out


def parse_ethtool_stats(text: str) -> dict[str, int]:
    """``ethtool -S IF``: 'NIC statistics:' then 'name: value' lines."""
    stats = {}
    for line in text.splitlines():
        match = re.match(r"\s*([A-Za-z0-9_.\[\]-]+):\s*(-?\d+)\s*$", line)
        if match:
            stats[match.group(1)] = int(match.group(2))
    return stats


def parse_ethtool_pause(text: str) -> dict[str, str]:
    """``ethtool -a IF``: Autonegotiate / RX / TX -> on|off."""
    out = {}
    for line in text.splitlines():
        match = re.match(r"\s*(Autonegotiate|RX|TX):\s*(on|off)\s*$", line)
        if match:
            out[{"Autonegotiate": "autoneg", "RX": "rx", "TX": "tx"}[match.group(1)]] = match.group(2)
    return out


def parse_traffic_class(text: str | None) -> int | None:
    """``tc/1/traffic_class``: 'Global tclass=106' (MLNX_OFED) or a bare number; None when unset (-1) or unreadable."""
    if text is None:
        return None
    match = re.search(r"(-?\d+)\s*$", text)
    if not match or int(match.group(1)) < 0:
        return None
    return int(match.group(1))


def parse_mlxconfig(text: str) -> dict[str, dict[str, str]]:
    """``mlxconfig -e -d PCI q`` (or mstconfig): NAME Default Current Next per line (a leading '*' marks a changed one)."""
    params = {}
    for line in text.splitlines():
        match = re.match(r"\s*\*?\s*([A-Z][A-Z0-9_]+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$", line)
        if match and match.group(1) not in ("Configurations",):
            params[match.group(1)] = {"default": match.group(2), "current": match.group(3), "next": match.group(4)}
    return params


def fw_value_matches(have: str | None, want: str) -> bool:
    """'True(1)' matches '1', 'True' and 'True(1)'; plain numbers compare as numbers."""
    if have is None:
        return False
    match = re.fullmatch(r"(\w+)\((\d+)\)", have)
    names = {have} if not match else {have, match.group(1), match.group(2)}
    return str(want) in names or (str(want).isdigit() and any(n.isdigit() and int(n) == int(want) for n in names))


# ---------------------------------------------------------------------------
# discovery and selection
# ---------------------------------------------------------------------------


def discover(fs: Fs) -> list[dict[str, Any]]:
    """Every RDMA device with a netdev: name, netdev, PCI address, vendor and device ID (4 hex digits)."""
    found = []
    for name in fs.listdir("/sys/class/infiniband"):
        base = "/sys/class/infiniband/%s" % name
        netdevs = fs.listdir(base + "/device/net")
        vendor = (fs.read(base + "/device/vendor") or "").lower().replace("0x", "")
        device = (fs.read(base + "/device/device") or "").lower().replace("0x", "")
        found.append({
            "name": name,
            "netdev": netdevs[0] if netdevs else None,
            "pci": fs.basename_of_link(base + "/device"),
            "vendor": vendor or None,
            "device": device or None,
            "link_layer": fs.read("%s/ports/%d/link_layer" % (base, PORT)),
        })
    return found


def _found_text(found: list[dict]) -> str:
    return ", ".join("%s (%s, %s:%s)" % (n["name"], n["netdev"] or "no netdev", n["vendor"], n["device"]) for n in found) or "none"


def parse_pci_ids(pci_ids: list) -> list[tuple[str, str | None]]:
    out = []
    for index, raw in enumerate(pci_ids):
        match = _PCI_ID_RE.fullmatch(str(raw).strip()) if isinstance(raw, str) else None
        if not match:
            raise NicError("pci_ids[%d]: %r is not a PCI ID (VVVV or VVVV:DDDD in hex, e.g. 15b3:101d)" % (index, raw))
        out.append((match.group(1).lower(), match.group(2).lower() if match.group(2) else None))
    return out


def select(found: list[dict], plan_nics: list[dict], names: list | None = None, pci_ids: list | None = None) -> list[dict]:
    """The NICs to configure: by PCI IDs (every RDMA NIC that matches), else by name
    or netdev (default: the plan's NICs). Unknown names and netdev mismatches raise."""
    if pci_ids:
        wanted = parse_pci_ids(pci_ids)
        chosen = [n for n in found if any(n["vendor"] == v and (d is None or n["device"] == d) for v, d in wanted)]
        if not chosen:
            raise NicError("pci_ids: no RDMA NIC matches %s on this host (found: %s)" % (", ".join(pci_ids), _found_text(found)))
        missing = [n["name"] for n in chosen if not n["netdev"]]
        if missing:
            raise NicError("pci_ids: %s has no netdev (not an Ethernet/RoCE port)" % ", ".join(missing))
        return chosen
    plan_by_name = {n.get("name"): n for n in plan_nics}
    wanted_names = list(names) if names else [n.get("name") for n in plan_nics]
    if not wanted_names:
        raise NicError("nics: none given and the plan lists no NIC")
    by_name = {n["name"]: n for n in found}
    by_netdev = {n["netdev"]: n for n in found if n["netdev"]}
    chosen = []
    for index, name in enumerate(wanted_names):
        if not isinstance(name, str) or not (_NAME_RE.fullmatch(name) or _NETDEV_RE.fullmatch(name)):
            raise NicError("nics[%d]: %r is not an RDMA device or interface name" % (index, name))
        nic = by_name.get(name) or by_netdev.get(name)
        if nic is None:
            raise NicError("nics[%d]: %r is not an RDMA NIC on this host (found: %s)" % (index, name, _found_text(found)))
        if not nic["netdev"]:
            raise NicError("nics[%d]: %s has no netdev (not an Ethernet/RoCE port)" % (index, name))
        planned = plan_by_name.get(nic["name"])
        if planned and planned.get("netdev") and planned["netdev"] != nic["netdev"]:
            raise NicError("nics[%d]: the plan gives %s netdev %r, but sysfs maps it to %r" % (index, nic["name"], planned["netdev"], nic["netdev"]))
        if nic not in chosen:
            chosen.append(nic)
    return chosen


def nic_driver(fs: Fs, netdev: str) -> str | None:
    """The driver bound to the netdev's device: the basename of the ``driver`` link the driver model puts in every
    bound device's sysfs directory (Documentation/driver-api/driver-model/binding.rst); None when there is no link."""
    return fs.basename_of_link("/sys/class/net/%s/device/driver" % netdev)


def detect_stack(fs: Fs, nic: dict) -> str:
    """By the bound driver: bnxt_en -> 'bnxt', ionic -> 'ionic'; mlx5_core (or no driver link) -> 'mlnx' when the
    vendor driver's qos/trust and ecn/ sysfs exist (reference a.0), else 'upstream'. Another driver is refused."""
    driver = nic_driver(fs, nic["netdev"])
    if driver is not None and driver not in DRIVER_STACKS:
        raise NicError("%s (%s): driver %s has no nic_qos stack (drivers with one: %s); give stack to override"
                       % (nic["name"], nic["netdev"], driver, ", ".join(sorted(DRIVER_STACKS))))
    if DRIVER_STACKS.get(driver or ""):
        return str(DRIVER_STACKS[driver or ""])
    base = "/sys/class/net/%s" % nic["netdev"]
    return "mlnx" if fs.isdir(base + "/ecn") and fs.exists(base + "/qos/trust") else "upstream"


# ---------------------------------------------------------------------------
# the plan -> wanted values
# ---------------------------------------------------------------------------


def _check_int(errors: list, path: str, value: Any, low: int, high: int, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        errors.append("%s: %r is not %s (%d-%d)" % (path, value, what, low, high))


def validate_plan(plan: Any) -> None:
    """Refuse a host plan that is not what fabric_plan produces, naming the key and value."""
    if not isinstance(plan, dict):
        raise NicError("plan: %r is not a host plan (fabric_plan_result.devices[host])" % type(plan).__name__)
    if plan.get("kind") != "host" or plan.get("transport") != "roce":
        found = (plan.get("kind"), plan.get("transport"))
        raise NicError("plan: kind %r transport %r: nic_qos needs the plan of a RoCE host (kind host, transport roce)" % found)
    errors: list[str] = []
    for key in _contract.keys(_contract.NicQos):  # the plan contract: what nic_qos applies
        if key not in plan:
            errors.append("plan.%s: missing" % key)
    if errors:
        raise NicError("; ".join(errors))
    if plan["trust"] != "dscp":
        errors.append("plan.trust: %r is not 'dscp'" % plan["trust"])
    if not isinstance(plan["dscp_map"], dict):
        errors.append("plan.dscp_map: %r is not a mapping of DSCP to priority" % plan["dscp_map"])
    else:
        for dscp, prio in plan["dscp_map"].items():
            if not str(dscp).isdigit() or int(dscp) > 63:
                errors.append("plan.dscp_map: key %r is not a DSCP (0-63)" % dscp)
            _check_int(errors, "plan.dscp_map[%s]" % dscp, prio, 0, 7, "a priority")
    _check_int(errors, "plan.default_priority", plan["default_priority"], 0, 7, "a priority")
    if not isinstance(plan["pfc_priorities"], list):
        errors.append("plan.pfc_priorities: %r is not a list" % plan["pfc_priorities"])
    else:
        for index, prio in enumerate(plan["pfc_priorities"]):
            _check_int(errors, "plan.pfc_priorities[%d]" % index, prio, 0, 7, "a priority")
    dcqcn = plan["dcqcn"] if isinstance(plan["dcqcn"], dict) else {}
    if not isinstance(dcqcn.get("enabled"), bool) or not isinstance(dcqcn.get("priorities"), list):
        errors.append("plan.dcqcn: %r needs enabled (bool) and priorities (list)" % plan["dcqcn"])
    else:
        for index, prio in enumerate(dcqcn["priorities"]):
            _check_int(errors, "plan.dcqcn.priorities[%d]" % index, prio, 0, 7, "a priority")
    cnp = plan["cnp"] if isinstance(plan["cnp"], dict) else {}
    _check_int(errors, "plan.cnp.dscp", cnp.get("dscp"), 0, 63, "a DSCP")
    _check_int(errors, "plan.cnp.priority", cnp.get("priority"), 0, 7, "a priority")
    _check_int(errors, "plan.rdma_cm_tos", plan["rdma_cm_tos"], 0, 255, "a ToS byte")
    _check_int(errors, "plan.traffic_class", plan["traffic_class"], 0, 255, "a traffic class")
    _check_int(errors, "plan.mtu", plan["mtu"], 68, 9216, "an MTU")
    if plan["roce_mode"] not in ROCE_MODES:
        errors.append("plan.roce_mode: %r is not one of %s" % (plan["roce_mode"], ", ".join(ROCE_MODES)))
    if errors:
        raise NicError("; ".join(errors))


def wanted(plan: dict) -> dict[str, Any]:
    """Every setting's value for one NIC, from the host plan (the full 64-entry DSCP table:
    no DSCP depends on a firmware default, reference a.1)."""
    prios = plan["pfc_priorities"]
    dscp_map = {d: plan["default_priority"] for d in range(64)}
    dscp_map.update({int(d): p for d, p in plan["dscp_map"].items()})
    if plan["dcqcn"]["enabled"]:
        dcqcn = {str(p): 1 for p in plan["dcqcn"]["priorities"]}
    else:
        dcqcn = {str(p): 0 for p in prios}
    want = {
        "trust": plan["trust"],
        "dscp_map": dscp_map,
        "pfc": [1 if p in prios else 0 for p in range(8)],
        # 802.3x pause off when PFC is on (reference a.2).
        "global_pause": {"autoneg": "off", "rx": "off", "tx": "off"} if prios else None,
        "dcqcn": {"np": dict(dcqcn), "rp": dict(dcqcn)},
        "cnp": {"dscp": plan["cnp"]["dscp"], "priority": plan["cnp"]["priority"]},
        "traffic_class": plan["traffic_class"],
        "rdma_cm_tos": plan["rdma_cm_tos"],
        "roce_mode": plan["roce_mode"],
        "mtu": plan["mtu"],
    }
    return {key: value for key, value in want.items() if value is not None}


# ---------------------------------------------------------------------------
# restore: an earlier gathered result -> wanted values (the change window's NIC rollback)
# ---------------------------------------------------------------------------


def _snap_int(errors: list, path: str, value: Any, low: int, high: int, what: str, nullable: bool = True) -> None:
    if value is None and nullable:
        return
    _check_int(errors, path, value, low, high, what)


def _check_snapshot_value(errors: list, path: str, key: str, value: Any) -> None:  # noqa: C901 - one branch per setting
    """One setting of a snapshot's ``before``, as ``plan_nic`` reported it (None: not readable then)."""
    if key == "trust":
        if value not in ("pcp", "dscp"):
            errors.append("%s: %r is not pcp or dscp" % (path, value))
    elif key == "dscp_map":
        if value is not None and not isinstance(value, dict):
            errors.append("%s: %r is not a mapping of DSCP to priority" % (path, value))
        for dscp, prio in (value or {}).items():
            if not str(dscp).isdigit() or int(dscp) > 63:
                errors.append("%s: key %r is not a DSCP (0-63)" % (path, dscp))
            _snap_int(errors, "%s[%s]" % (path, dscp), prio, 0, 7, "a priority")
    elif key == "pfc":
        if not isinstance(value, list) or len(value) != 8 or any(b not in (0, 1) or isinstance(b, bool) for b in value):
            errors.append("%s: %r is not 8 bits 0/1 (priority 0 first)" % (path, value))
    elif key == "ets":
        ets = value if isinstance(value, dict) else {}
        if value is not None and (set(ets) != {"prio_tc", "tc_bw", "tc_tsa"} or not all(isinstance(v, list) and len(v) == 8 for v in ets.values())):
            errors.append("%s: %r needs prio_tc, tc_bw and tc_tsa, 8 entries each" % (path, value))
        elif value is not None:
            if any(not isinstance(t, int) or isinstance(t, bool) or not 0 <= t <= 7 for t in ets["prio_tc"]):
                errors.append("%s.prio_tc: %r is not 8 traffic classes 0-7" % (path, ets["prio_tc"]))
            if any(not isinstance(b, int) or isinstance(b, bool) or not 0 <= b <= 100 for b in ets["tc_bw"]):
                errors.append("%s.tc_bw: %r is not 8 percentages 0-100" % (path, ets["tc_bw"]))
            if any(t not in TSA_NAMES for t in ets["tc_tsa"]):
                errors.append("%s.tc_tsa: %r is not 8 of %s" % (path, ets["tc_tsa"], ", ".join(TSA_NAMES)))
    elif key == "global_pause":
        if not isinstance(value, dict) or set(value) != {"autoneg", "rx", "tx"} or any(v not in ("on", "off") for v in value.values()):
            errors.append("%s: %r is not autoneg/rx/tx each on or off" % (path, value))
    elif key == "dcqcn":
        points = value if isinstance(value, dict) else {}
        if set(points) != {"np", "rp"} or not all(isinstance(points[p], dict) for p in points):
            errors.append("%s: %r needs np and rp, each priority -> 0/1" % (path, value))
        else:
            for point, prios in points.items():
                for prio, bit in prios.items():
                    if not str(prio).isdigit() or int(prio) > 7 or bit not in (0, 1) or isinstance(bit, bool):
                        errors.append("%s.%s[%s]: %r is not priority 0-7 -> 0/1" % (path, point, prio, bit))
    elif key == "cnp":
        cnp = value if isinstance(value, dict) else {}
        if set(cnp) != {"dscp", "priority"}:
            errors.append("%s: %r needs dscp and priority" % (path, value))
        else:
            _snap_int(errors, path + ".dscp", cnp["dscp"], 0, 63, "a DSCP", nullable=False)
            _snap_int(errors, path + ".priority", cnp["priority"], 0, 7, "a priority")
    elif key in ("traffic_class", "rdma_cm_tos"):
        _snap_int(errors, path, value, 0, 255, "a traffic class" if key == "traffic_class" else "a ToS byte")
    elif key == "roce_mode":
        if value is not None and value not in ROCE_MODES:
            errors.append("%s: %r is not one of %s" % (path, value, ", ".join(ROCE_MODES)))
    elif key == "mtu":
        _snap_int(errors, path, value, 68, 65535, "an MTU", nullable=False)
    else:
        errors.append("%s: not a setting nic_qos gathers (%s)" % (path, ", ".join(SETTINGS)))


def validate_snapshot(snapshot: Any) -> dict[str, dict[str, Any]]:
    """An earlier ``state: gathered`` (or ``present``) result of nic_qos - the whole result or its ``nics`` -
    checked value by value before anything is read or written. Returns RDMA device -> {netdev, stack, before}."""
    if isinstance(snapshot, dict) and isinstance(snapshot.get("nics"), dict):
        snapshot = snapshot["nics"]
    if not isinstance(snapshot, dict) or not snapshot:
        raise NicError("restore: %r is not an earlier nic_qos result (its nics: RDMA device -> netdev, stack, before)" % type(snapshot).__name__)
    errors: list[str] = []
    out = {}
    for name, nic in snapshot.items():
        path = "restore.nics.%s" % name
        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            errors.append("restore.nics: %r is not an RDMA device name" % (name,))
            continue
        if not isinstance(nic, dict) or not isinstance(nic.get("before"), dict):
            errors.append("%s: %r has no before (the values read then)" % (path, type(nic).__name__))
            continue
        if not isinstance(nic.get("netdev"), str) or not _NETDEV_RE.fullmatch(nic["netdev"]):
            errors.append("%s.netdev: %r is not an interface name" % (path, nic.get("netdev")))
        if nic.get("stack") not in STACKS:
            errors.append("%s.stack: %r is not one of %s" % (path, nic.get("stack"), ", ".join(STACKS)))
        for key, value in nic["before"].items():
            _check_snapshot_value(errors, "%s.before.%s" % (path, key), key, value)
        out[name] = {"netdev": nic.get("netdev"), "stack": nic.get("stack"), "before": nic["before"]}
    if errors:
        raise NicError("; ".join(errors))
    return out


def restore_wanted(before: dict[str, Any], stack: str) -> tuple[dict[str, Any], list[dict]]:
    """A snapshot's ``before`` as wanted values, and the settings it cannot bring back (each with the reason)."""
    want: dict[str, Any] = {}
    cannot: list[dict] = []
    for key in SETTINGS:
        if key not in before:
            continue
        value = before[key]
        if key == "dscp_map":
            if value is None and stack in ("upstream", "bnxt"):
                value = {}  # the APP table was empty (the port trusted PCP): flush it
            elif value is None:
                cannot.append({"setting": key, "reason": "not readable when gathered (trust pcp: mlnx_qos shows no map); "
                                                         "the trust restore makes the map unused"})
                continue
            else:
                several = sorted(int(d) for d, p in value.items() if p is None)
                if several:
                    cannot.append({"setting": key, "reason": "DSCP %s had several APP entries when gathered (no single priority): removed, not restored"
                                   % ", ".join(str(d) for d in several)})
                value = {int(d): p for d, p in value.items() if p is not None}
        elif value is None and key != "cnp":
            cannot.append({"setting": key, "reason": "not readable when gathered: no earlier value to put back"})
            continue
        want[key] = value
    return want, cannot


# ---------------------------------------------------------------------------
# reading and writing each setting, per stack
# ---------------------------------------------------------------------------


class NicState:
    """One NIC's tool access: runs a tool and raises NicError naming the NIC on failure."""

    # The driver this class speaks to (the udev rule of the persisted settings matches it), and the
    # driver's counter names -> the snapshot's (map_counters); subclasses for the other drivers set both.
    DRIVER = "mlx5_core"
    COUNTERS: tuple = ()

    def __init__(self, fs: Fs, runner: Runner, nic: dict, stack: str) -> None:
        self.fs, self.runner, self.nic, self.stack = fs, runner, nic, stack
        self.netdev, self.name = nic["netdev"], nic["name"]
        # upstream: the APP table as last read (a restore deletes the entries the snapshot did not have)
        self.app_table: dict[int, list[int]] = {}

    def plan_wanted(self, want: dict[str, Any], plan: dict | None) -> dict[str, Any]:
        """The wanted values of this stack: the common ones (``wanted``), plus what only this stack sets."""
        return want

    def tool(self, argv: list) -> str:
        rc, out, err = self.runner(argv)
        if rc != 0:
            said = (err or out or "").strip().splitlines()
            raise NicError("%s: %s: exit %s: %s" % (self.name, shlex.join(argv), rc, said[0] if said else "no output"))
        return out

    # -- reads -------------------------------------------------------------

    def read(self, keys: list[str]) -> dict[str, Any]:
        have: dict[str, Any] = {}
        if "trust" in keys or "dscp_map" in keys or "pfc" in keys:
            have.update(self._read_qos())
        if "ets" in keys:
            have["ets"] = self._read_ets()
        if "global_pause" in keys:
            have["global_pause"] = parse_ethtool_pause(self.tool(["ethtool", "-a", self.netdev]))
        have["dcqcn"] = self._read_dcqcn()
        have["cnp"] = self._read_cnp()
        have["traffic_class"] = self._read_traffic_class()
        have.update(self._read_rdma_cm())
        mtu = self.fs.read("/sys/class/net/%s/mtu" % self.netdev)
        have["mtu"] = int(mtu) if mtu and mtu.isdigit() else None
        return {key: have.get(key) for key in keys}

    def _read_qos(self) -> dict[str, Any]:
        if self.stack == "mlnx":
            qos = parse_mlnx_qos(self.tool(["mlnx_qos", "-i", self.netdev]))
            return {"trust": qos["trust"], "dscp_map": qos["dscp_map"] if qos["trust"] == "dscp" else None, "pfc": qos["pfc"]}
        table = parse_dcb_app(self.tool(["dcb", "-N", "app", "show", "dev", self.netdev, "dscp-prio"]))
        self.app_table = table
        pfc = parse_dcb_pfc(self.tool(["dcb", "pfc", "show", "dev", self.netdev]))
        # A DSCP with two APP entries has no single priority: None forces a replace.
        dscp_map = {d: (p[0] if len(p) == 1 else None) for d, p in table.items()}
        return {"trust": "dscp" if table else "pcp", "dscp_map": dscp_map or None, "pfc": pfc["pfc"]}

    def _read_ets(self) -> Any:
        return Unsupported("ETS is left as the driver has it on this stack (nic_qos sets ETS only where PFC needs it: bnxt)")

    def _ecn(self) -> str:
        return "/sys/class/net/%s/ecn" % self.netdev

    def _read_dcqcn(self) -> Any:
        if self.stack == "upstream":
            return Unsupported(
                "not settable on the upstream driver: no per-priority DCQCN enable without the vendor ecn/ sysfs; "
                "the firmware mask ROCE_CC_PRIO_MASK_P1 decides (set it with the firmware option, needs a reset)"
            )
        out: dict[str, dict[str, int]] = {}
        for point in ("np", "rp"):
            base = "%s/roce_%s/enable" % (self._ecn(), point)
            if not self.fs.isdir(base):
                return Unsupported("%s absent: this driver has no per-priority DCQCN enable" % base)
            out[point] = {}
            for prio in self.fs.listdir(base):
                value = self.fs.read("%s/%s" % (base, prio))
                if prio.isdigit() and value is not None and value.isdigit():
                    out[point][prio] = int(value)
        return out

    def _cc_params(self) -> str:
        return "/sys/kernel/debug/mlx5/%s/cc_params" % self.nic["pci"]

    def _read_cnp(self) -> Any:
        if self.stack == "mlnx":
            base = "%s/roce_np" % self._ecn()
            dscp, prio = self.fs.read(base + "/cnp_dscp"), self.fs.read(base + "/cnp_802p_prio")
            if dscp is None or prio is None:
                return Unsupported("%s/cnp_dscp or cnp_802p_prio absent on this driver" % base)
            return {"dscp": int(dscp), "priority": int(prio)}
        if not self.fs.isdir("/sys/kernel/debug/mlx5"):
            return Unsupported("not settable on the upstream driver without debugfs (mount -t debugfs none /sys/kernel/debug)")
        base = self._cc_params()
        values = {key: self.fs.read("%s/%s" % (base, key)) for key in ("np_cnp_dscp", "np_cnp_prio_mode", "np_cnp_prio")}
        if any(v is None or not v.strip().isdigit() for v in values.values()):
            return Unsupported("%s has no readable np_cnp_dscp / np_cnp_prio_mode / np_cnp_prio" % base)
        # prio_mode 1 = the CNP priority follows the received packet; our priority counts only in mode 0.
        prio = int(values["np_cnp_prio"] or 0) if int(values["np_cnp_prio_mode"] or 0) == 0 else None
        return {"dscp": int(values["np_cnp_dscp"] or 0), "priority": prio}

    def _read_traffic_class(self) -> Any:
        path = "/sys/class/infiniband/%s/tc/%d/traffic_class" % (self.name, PORT)
        if self.stack == "upstream" or not self.fs.exists(path):
            return Unsupported(
                "no device-wide verbs traffic class on this driver (tc/1/traffic_class is the vendor driver's); "
                "verbs applications set it per QP: NCCL_IB_TC from the plan"
            )
        return parse_traffic_class(self.fs.read(path))

    def _cma(self) -> str:
        return "/sys/kernel/config/rdma_cm/%s" % self.name

    def _read_rdma_cm(self) -> dict[str, Any]:
        if not self.fs.isdir("/sys/kernel/config/rdma_cm"):
            reason = Unsupported("configfs rdma_cm absent (mount configfs on /sys/kernel/config and load rdma_cm)")
            return {"rdma_cm_tos": reason, "roce_mode": reason}
        port = "%s/ports/%d" % (self._cma(), PORT)
        tos, mode = self.fs.read(port + "/default_roce_tos"), self.fs.read(port + "/default_roce_mode")
        return {"rdma_cm_tos": int(tos) if tos and tos.isdigit() else None, "roce_mode": mode}

    # -- actions -----------------------------------------------------------

    def actions(self, key: str, want: Any, have: Any) -> list[Action]:
        """Steps that take ``key`` from ``have`` (None: unknown, set it all) to ``want``."""
        return getattr(self, "_set_" + key)(want, have)

    def _set_trust(self, want: Any, have: Any) -> list[Action]:
        if self.stack == "mlnx":
            return [Action("run", argv=["mlnx_qos", "-i", self.netdev, "--trust", want])]
        return []  # upstream: the DSCP APP table below switches the port to DSCP trust

    def _set_dscp_map(self, want: dict, have: Any) -> list[Action]:
        have = have or {}
        todo = [d for d in sorted(want) if have.get(d) != want[d]]
        if self.stack == "mlnx":
            # mlnx_qos takes one set,DSCP,PRIO per call and no --trust in the same call (reference a.1).
            return [Action("run", argv=["mlnx_qos", "-i", self.netdev, "--dscp2prio", "set,%d,%d" % (d, want[d])]) for d in todo]
        if not want:
            # restore of an empty APP table (the port trusted PCP): remove every entry
            return [Action("run", argv=["dcb", "app", "flush", "dev", self.netdev, "dscp-prio"])] if have else []
        steps = []
        if todo:
            steps.append(Action("run", argv=["dcb", "app", "replace", "dev", self.netdev, "dscp-prio", *["%d:%d" % (d, want[d]) for d in todo]]))
        # restore of a partial table: entries of DSCPs the snapshot did not map go (apply always plans all 64)
        extra = ["%d:%d" % (d, p) for d in sorted(self.app_table) if d not in want for p in self.app_table[d]]
        if have and extra:
            steps.append(Action("run", argv=["dcb", "app", "del", "dev", self.netdev, "dscp-prio", *extra]))
        return steps

    def _set_pfc(self, want: list, have: Any) -> list[Action]:
        if self.stack == "mlnx":
            return [Action("run", argv=["mlnx_qos", "-i", self.netdev, "--pfc", ",".join(str(b) for b in want)])]
        return [Action("run", argv=["dcb", "pfc", "set", "dev", self.netdev, "prio-pfc", *["%d:%s" % (p, "on" if b else "off") for p, b in enumerate(want)]])]

    def _set_global_pause(self, want: dict, have: Any) -> list[Action]:
        argv = ["ethtool", "-A", self.netdev, "autoneg", want["autoneg"], "rx", want["rx"], "tx", want["tx"]]
        return [Action("run", argv=argv, also_ok=80)]

    def _set_dcqcn(self, want: dict, have: Any) -> list[Action]:
        have = have or {}
        steps = []
        for point in ("np", "rp"):
            for prio, value in sorted(want[point].items()):
                if (have.get(point) or {}).get(prio) != value:
                    steps.append(_write("%s/roce_%s/enable/%s" % (self._ecn(), point, prio), value))
        return steps

    def _set_cnp(self, want: dict, have: Any) -> list[Action]:
        have = have or {}
        if self.stack == "mlnx":
            base = "%s/roce_np" % self._ecn()
            pairs = [("cnp_dscp", "dscp"), ("cnp_802p_prio", "priority")]
            return [_write("%s/%s" % (base, f), want[k]) for f, k in pairs if have.get(k) != want[k]]
        base = self._cc_params()
        steps = []
        if have.get("dscp") != want["dscp"]:
            steps.append(_write(base + "/np_cnp_dscp", want["dscp"]))
        if want["priority"] is None:
            # restore of mode 1 (the CNP priority follows the received packet; np_cnp_prio is then unused)
            if have.get("priority") is not None or not have:
                steps.append(_write(base + "/np_cnp_prio_mode", 1))
        elif have.get("priority") != want["priority"]:
            steps += [_write(base + "/np_cnp_prio_mode", 0), _write(base + "/np_cnp_prio", want["priority"])]
        return steps

    def _set_traffic_class(self, want: int, have: Any) -> list[Action]:
        return [_write("/sys/class/infiniband/%s/tc/%d/traffic_class" % (self.name, PORT), want)]

    def _set_rdma_cm_tos(self, want: int, have: Any) -> list[Action]:
        # Creating the device directory is what exposes the knobs; it stays (harmless) so the value can be read back.
        return [Action("mkdir", path=self._cma()), _write("%s/ports/%d/default_roce_tos" % (self._cma(), PORT), want)]

    def _set_roce_mode(self, want: str, have: Any) -> list[Action]:
        return [Action("mkdir", path=self._cma()), _write("%s/ports/%d/default_roce_mode" % (self._cma(), PORT), want)]

    def _set_mtu(self, want: int, have: Any) -> list[Action]:
        return [_write("/sys/class/net/%s/mtu" % self.netdev, want)]


# ---------------------------------------------------------------------------
# the whole NIC: plan and apply
# ---------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    if isinstance(value, Unsupported):
        return None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def plan_nic(state: NicState, want: dict[str, Any]) -> dict[str, Any]:
    """Read every setting and compare: ``changes`` (before/after), ``actions``, ``unsupported``."""
    keys = [key for key in SETTINGS if key in want]
    have = state.read(keys)
    result: dict[str, Any] = {
        "name": state.name, "netdev": state.netdev, "pci": state.nic["pci"], "stack": state.stack,
        "before": {}, "after": {}, "changes": [], "unsupported": [], "actions": [],
    }
    steps: list[Action] = []
    for key in keys:
        current = have.get(key)
        if isinstance(current, Unsupported):
            result["unsupported"].append({"setting": key, "reason": current.reason})
            continue
        result["before"][key] = _jsonable(current)
        result["after"][key] = _jsonable(want[key])
        if not _same(key, current, want[key]):
            result["changes"].append(key)
            steps += state.actions(key, want[key], current)
    result["actions"] = steps
    return result


def _same(key: str, have: Any, want: Any) -> bool:
    if key == "dcqcn" and isinstance(have, dict):
        return all((have.get(p) or {}).get(prio) == v for p in want for prio, v in want[p].items())
    if key == "dscp_map" and want == {}:
        return not have  # an empty APP table reads back as None
    return have == want


def persist_actions(state: NicState, want: dict[str, Any], unsupported: list[dict]) -> list[str]:
    """Every settable setting, unconditionally, as shell lines for the boot-time re-apply
    (reference a.7: runtime settings are lost on reboot and driver reload)."""
    skip = {u["setting"] for u in unsupported}
    lines: list[str] = []
    for key in SETTINGS:
        if key in want and key not in skip:
            for step in state.actions(key, want[key], None):
                if step.text() not in lines:
                    lines.append(step.text())
    return lines


def apply(fs: Fs, runner: Runner, steps: list[Action]) -> list[str]:
    """Run the steps in order; return what ran. NicError names the failing step."""
    done = []
    for step in steps:
        step.run(fs, runner)
        done.append(step.text())
    return done


# ---------------------------------------------------------------------------
# firmware (mlxconfig / mstconfig): only when asked; never resets or reboots
# ---------------------------------------------------------------------------


def validate_firmware(firmware: Any) -> dict[str, str]:
    if not firmware:
        return {}
    if not isinstance(firmware, dict):
        raise NicError("firmware: %r is not a mapping of parameter to value" % type(firmware).__name__)
    out = {}
    for name, value in firmware.items():
        if not isinstance(name, str) or not _FW_NAME_RE.fullmatch(name):
            raise NicError("firmware: %r is not an nvconfig parameter name (like ROCE_CC_PRIO_MASK_P1)" % name)
        text = str(value)
        if isinstance(value, bool) or not _FW_VALUE_RE.fullmatch(text):
            raise NicError("firmware.%s: %r is not a value mlxconfig takes (a number or a name such as True, ETH)" % (name, value))
        out[name] = text
    return out


def firmware_plan(runner: Runner, tool: str, pci: str, firmware: dict[str, str], name: str) -> dict[str, Any]:
    """Query, compare with Next (what the card boots with), and the set command if needed."""
    rc, out, err = runner([tool, "-e", "-d", pci, "q", *sorted(firmware)])
    if rc != 0:
        said = (err or out or "").strip().splitlines()
        raise NicError("%s: %s -e -d %s q: exit %s: %s" % (name, tool, pci, rc, said[0] if said else "no output"))
    params = parse_mlxconfig(out)
    unknown = [key for key in firmware if key not in params]
    if unknown:
        raise NicError("%s: firmware: %s not reported by %s q on %s (unknown on this card?)" % (name, ", ".join(unknown), tool, pci))
    todo = {key: value for key, value in firmware.items() if not fw_value_matches(params[key]["next"], value)}
    pending = [key for key in firmware if params[key]["current"] != params[key]["next"]]
    argv = [tool, "-y", "-d", pci, "set", *["%s=%s" % (k, v) for k, v in sorted(todo.items())]] if todo else None
    return {
        "pci": pci,
        "before": {key: params[key]["next"] for key in sorted(firmware)},
        "current": {key: params[key]["current"] for key in sorted(firmware)},
        "changes": sorted(todo),
        "argv": argv,
        "reboot_required": bool(todo or pending),
    }


# ---------------------------------------------------------------------------
# facts: peer memory (GPUDirect RDMA), host kernel stack
# ---------------------------------------------------------------------------


def peer_memory(fs: Fs) -> dict[str, Any]:
    """nvidia_peermem loaded, or the older nv_peer_mem registered (reference c.7)."""
    module = next((m for m in ("nvidia_peermem", "nv_peer_mem") if fs.isdir("/sys/module/%s" % m)), None)
    version = fs.read("/sys/kernel/mm/memory_peers/nv_mem/version")
    return {"present": bool(module or version), "module": module, "nv_mem_version": version}


# ---------------------------------------------------------------------------
# counters (reference a.8)
# ---------------------------------------------------------------------------

# ethtool -S per-priority name -> snapshot counter (the switch counters' names where the meaning is the same).
ETHTOOL_PRIO = {
    "rx_prio{p}_pause": "pfc_rx_frames",
    "tx_prio{p}_pause": "pfc_tx_frames",
    "rx_prio{p}_pause_duration": "pfc_rx_duration",
    "tx_prio{p}_pause_duration": "pfc_tx_duration",
    "rx_prio{p}_pause_transition": "pfc_rx_transitions",
    "rx_prio{p}_bytes": "rx_prio_bytes",
    "rx_prio{p}_packets": "rx_prio_packets",
    "tx_prio{p}_bytes": "tx_prio_bytes",
    "tx_prio{p}_packets": "tx_prio_packets",
    "rx_prio{p}_discards": "rx_prio_discards",
    "rx_prio{p}_buf_discard": "rx_prio_buf_discard",
    "rx_prio{p}_cong_discard": "rx_prio_cong_discard",
    "rx_prio{p}_marked": "rx_prio_marked",
}
ETHTOOL_SCALARS = (
    "tx_pause_storm_warning_events", "tx_pause_storm_error_events", "rx_discards_phy", "tx_discards_phy",
    "rx_out_of_buffer", "rx_symbol_err_phy", "rx_crc_errors_phy", "rx_corrected_bits_phy", "link_down_events_phy",
)
HW_COUNTERS = (
    "out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "implied_nak_seq_err", "duplicate_request",
    "rnr_nak_retry_err", "out_of_buffer", "np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled",
    "rp_cnp_ignored", "req_cqe_error", "resp_cqe_error", "req_remote_access_errors",
)
NIC_COUNTERS = tuple(sorted(set(ETHTOOL_PRIO.values()) | set(ETHTOOL_SCALARS) | set(HW_COUNTERS)))


# mlx5's names are the snapshot's: (ethtool per-priority pattern -> name, ethtool scalar -> name, hw_counters file -> name).
MLX5_COUNTERS = (ETHTOOL_PRIO, {name: name for name in ETHTOOL_SCALARS}, {name: name for name in HW_COUNTERS})


def map_counters(stats: dict[str, int], hw: dict[str, int], priorities: list[int], maps: tuple = MLX5_COUNTERS) -> dict[str, Any]:
    """One NIC's counters in the snapshot shape, by a driver's name maps: per-priority ones keyed '0'..'7'.
    A counter the driver does not report stays out (the snapshot lists it in not_available)."""
    prio_map, scalar_map, hw_map = maps
    out: dict[str, Any] = {}
    for pattern, name in prio_map.items():
        per = {str(p): stats[pattern.format(p=p)] for p in priorities if pattern.format(p=p) in stats}
        if per:
            out[name] = per
    for driver_name, name in scalar_map.items():
        if driver_name in stats:
            out[name] = stats[driver_name]
    for driver_name, name in hw_map.items():
        if driver_name in hw:
            out[name] = hw[driver_name]
    return out


def nic_counters(stats: dict[str, int], hw: dict[str, int], priorities: list[int]) -> dict[str, Any]:
    """One mlx5 NIC's counters in the snapshot shape: per-priority ones keyed '0'..'7'."""
    return map_counters(stats, hw, priorities, MLX5_COUNTERS)


def read_hw_counters(fs: Fs, name: str, names: Any = None) -> dict[str, int]:
    """The RDMA port's hw_counters files among ``names`` (default mlx5's)."""
    wanted_names = HW_COUNTERS if names is None else names
    base = "/sys/class/infiniband/%s/ports/%d/hw_counters" % (name, PORT)
    out = {}
    for entry in fs.listdir(base):
        if entry in wanted_names:
            value = fs.read("%s/%s" % (base, entry))
            if value is not None and value.isdigit():
                out[entry] = int(value)
    return out
