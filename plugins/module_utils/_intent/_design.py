# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The design check: a derived plan read back as a lossless design, before anything is pushed (issue 34).

``build_plan`` derives every plan so that these rules hold by construction; this module reads the finished
plan (``build_plan``'s result, or one edited by hand) and names every violation at once, each with the
switch or host, the port or key and the numbers. Errors stop ``fabric_plan`` (``IntentError``); warnings
join the plan's warnings (``plan.md`` lists them). ``check`` also returns one record per rule
(``{rule, status, checked, source}``), which ``plan.md`` prints as the design check table.

The rules and where each comes from (docs/design-check.md says the same for users):

- ``watchdog``: the PFC watchdog watches exactly the PFC priorities. Every driver applies the watchdog to
  the PFC-enabled priorities of a port, so the watched set is the paused set when the lossless traffic
  classes, every port's ``pfc_priorities`` and every RoCE host's PFC priorities/bitmap are the plan's
  ``pfc_priorities``; the timers are above zero. Source: reference switch-lossless-cli 7.4 (watchdog on
  the lossless queues, Guo et al. SIGCOMM 2016); NVIDIA Cumulus "RoCE" / Arista "PFC watchdog" pages
  (vendor-sources.md).
- ``ecn_below_pause``: ECN marks on the RoCE queue only (not on the CNP queue), with Kmin < Kmax, and
  below the point where the queue can no longer grow: on a platform that sets ECN in percent of the queue
  buffer (Junos) Kmax below the queue buffer, and the thresholds valid in that platform's whole percents.
  Source: reference 7.2 ("mark with ECN well before the PFC Xoff point so DCQCN slows senders before PFC
  fires ... never on the CNP queue"); Juniper JVD AI/ML drop profile (fill levels 55-90 %). Where the pause
  point is the switch's own ingress buffer threshold (EOS, NVUE, SONiC, NX-OS: dynamic or the vendor's
  default) the plan does not hold it: the rule says so (a note beside the numbers it did check), it never
  guesses one. The plan's ``headroom.xoff_bytes`` is the headroom above the pause point (what arrives after
  the pause is sent), not the pause point itself, so ECN thresholds are not compared with it.
- ``headroom``: each port's headroom is at least the SONiC/Spectrum formula's for its speed and cable
  length with the intent's headroom inputs (``_derive.headroom``, reference 7.1, sonic-swss
  buffer_headroom_mellanox.lua), and ``total_bytes`` = size x the lossless priorities.
- ``cnp_class``: CNPs ride a strict, non-PFC class with no ECN, and hosts send them with the switch's DSCP
  and priority. Source: reference 7.3 (CNP DSCP 48 -> priority 6, strict, lossy); NVIDIA RoCE
  configuration (host-ib-k8s a.3); Cisco AI/ML blueprint (CNP in a strict priority queue). A weighted CNP
  class the intent asked for (``cnp.strict: false``) is a warning (the intent warns too).
- ``dscp_map``: all 64 DSCPs map to a class the switch has; the RoCE DSCP to the data class, the CNP DSCP
  to the CNP class; no other DSCP lands in a lossless class (issue 13: EOS maps 24-31 to class 3 by
  default); the hosts' map equals the switches'. Source: reference 7.3 (everything else -> 0).
- ``scheduler_share``: every lossless class has a weighted (ETS/DWRR) share above 0 % and is not strict;
  the weighted shares sum to 100 %; on Junos the RoCE queue's transmit-rate is above 0 %. Source:
  reference 1.5, 3.6, 7.3 (RoCE class ~50 % DWRR).

The fabric's mode (``roce.mode``, issue 36) takes rules out of the design, each record saying so
(``not_applicable`` with a note): ``ecn_only`` has no PFC, so ``watchdog`` checks instead that nothing is
paused anywhere and the watchdog is off, and ``headroom`` has no subject; ``pfc_only`` marks no ECN, so
``ecn_below_pause`` checks instead that no queue marks, no port carries thresholds and no host runs DCQCN.

Imports only the intent's own derivation (``_derive.headroom``) and the platform registry (``_tables``).
"""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._intent._derive import _is_int, headroom
from ansible_collections.lossless.fabric.plugins.module_utils._intent._schema import ECN_ONLY, LOSSLESS, PFC_ONLY
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import platforms

RULES: tuple[tuple[str, str], ...] = (
    ("watchdog", "the PFC watchdog watches exactly the PFC priorities (classes, ports, hosts), timers above 0"),
    ("ecn_below_pause", "ECN on the RoCE queue only, Kmin < Kmax, below the queue's pause point where the plan holds it"),
    ("headroom", "headroom covers each port's cable length and speed"),
    ("cnp_class", "CNPs on a strict, non-PFC class without ECN, the same on hosts and switches"),
    ("dscp_map", "every DSCP maps to a deliberate class; only the RoCE DSCP to a lossless one; hosts agree"),
    ("scheduler_share", "every lossless class has a weighted scheduler share; the weights sum to 100 %"),
)
RULE_NAMES = tuple(rule for rule, _text in RULES)

SOURCES: dict[str, str] = {
    "watchdog": "reference switch-lossless-cli 7.4; Guo et al., RDMA over Commodity Ethernet at Scale (SIGCOMM 2016)",
    "ecn_below_pause": "reference switch-lossless-cli 7.2 (mark well before the PFC Xoff point); Juniper JVD AI/ML drop profile",
    "headroom": "reference switch-lossless-cli 7.1; sonic-net/sonic-swss cfgmgr/buffer_headroom_mellanox.lua",
    "cnp_class": "reference switch-lossless-cli 7.3; host-ib-k8s a.3 (NVIDIA RoCE CNP priority)",
    "dscp_map": "reference switch-lossless-cli 7.3; issue 13 (EOS default DSCP 24-31 -> class 3)",
    "scheduler_share": "reference switch-lossless-cli 1.5, 3.6, 7.3 (RoCE class ~50 % DWRR)",
}


class _Findings:
    """Errors and warnings per rule, and what each rule checked."""

    def __init__(self) -> None:
        self.errors: dict[str, list[str]] = {rule: [] for rule in RULE_NAMES}
        self.warnings: dict[str, list[str]] = {rule: [] for rule in RULE_NAMES}
        self.checked: dict[str, int] = {rule: 0 for rule in RULE_NAMES}
        self.notes: dict[str, list[str]] = {rule: [] for rule in RULE_NAMES}
        self.intent_warned: set[str] = set()
        # rules the fabric's mode leaves without a subject (issue 36): not_applicable unless the plan contradicts the mode
        self.not_applicable: dict[str, str] = {}

    def error(self, rule: str, where: str, message: str) -> None:
        self.errors[rule].append(f"design {rule}: {where}: {message}")

    def warn(self, rule: str, where: str, message: str) -> None:
        self.warnings[rule].append(f"design {rule}: {where}: {message}")

    def note(self, rule: str, where: str, message: str, why: str) -> None:
        """A finding the intent already warned about: the rule's record shows it, the plan's warnings keep one copy."""
        self.notes[rule].append(f"{where}: {message} ({why}: warned by the intent)")
        self.intent_warned.add(rule)


def check(plan: dict[str, Any]) -> dict[str, Any]:
    """Read ``build_plan``'s result as a lossless design -> ``{'errors', 'warnings', 'rules'}``.

    Only a RoCE plan has a lossless Ethernet design; an InfiniBand plan returns every rule as ``not_applicable``.
    """
    found = _Findings()
    intent = plan.get("intent") or {}
    devices = plan.get("devices") or {}
    if intent.get("transport") != "roce":
        return {"errors": [], "warnings": [], "rules": [_record(rule, text, found, "not_applicable") for rule, text in RULES]}
    roce = intent.get("roce")
    if not isinstance(roce, dict):
        found.error("dscp_map", "intent", "a RoCE plan without its roce section: nothing to check the devices against")
        return {"errors": found.errors["dscp_map"], "warnings": [], "rules": [_record(rule, text, found) for rule, text in RULES]}
    switches = {h: p for h, p in devices.items() if isinstance(p, dict) and p.get("kind") == "switch"}
    hosts = {h: p for h, p in devices.items() if isinstance(p, dict) and p.get("kind") == "host" and p.get("transport") == "roce"}
    mode = roce.get("mode", LOSSLESS)
    _mode_notes(found, mode)
    for name in sorted(switches):
        sw = switches[name]
        _mode(found, name, sw, mode)
        if mode == ECN_ONLY:
            _no_pfc(found, name, sw)
        else:
            _watchdog(found, name, sw)
        if mode == PFC_ONLY:
            _no_ecn(found, name, sw)
        else:
            _ecn(found, name, sw)
        _headroom(found, name, sw, roce)
        _cnp(found, name, sw, roce)
        _dscp(found, name, sw, roce)
        _share(found, name, sw)
    _hosts(found, hosts, roce, mode)
    rules = [_record(rule, text, found) for rule, text in RULES]
    errors = [e for rule in RULE_NAMES for e in found.errors[rule]]
    warnings = [w for rule in RULE_NAMES for w in found.warnings[rule]]
    return {"errors": errors, "warnings": warnings, "rules": rules}


def _record(rule: str, text: str, found: _Findings, status: str | None = None) -> dict[str, Any]:
    if status is None:
        status = "error" if found.errors[rule] else "warning" if found.warnings[rule] or rule in found.intent_warned else "ok"
        if status == "ok" and rule in found.not_applicable:
            status = "not_applicable"
    out = {"rule": rule, "text": text, "status": status, "checked": found.checked[rule], "source": SOURCES[rule]}
    if found.notes[rule]:
        out["notes"] = list(found.notes[rule])
    return out


def _classes(sw: dict) -> dict[int, dict]:
    out = {}
    for key, cls in (sw.get("traffic_classes") or {}).items():
        try:
            out[int(key)] = cls
        except (TypeError, ValueError):
            continue
    return out


def _prios(value: Any) -> list:
    return sorted(value) if isinstance(value, (list, tuple)) else []


# -- fabric mode (issue 36) ----------------------------------------------------------------------------

# What each mode takes out of the design, said in the rule's record (plan.md's design check table).
_NOT_APPLICABLE = {
    ECN_ONLY: {
        "watchdog": "mode ecn_only: no PFC priority, so no pause for a watchdog to watch (checked instead: no switch, port, class or "
                    "host has a PFC priority, and the watchdog is off)",
        "headroom": "mode ecn_only: no lossless priority, so no PFC headroom to reserve",
    },
    PFC_ONLY: {
        "ecn_below_pause": "mode pfc_only: no ECN marking, so no marking band below the pause point (checked instead: no queue marks "
                           "ECN, no port carries thresholds, no host runs DCQCN)",
    },
}


def _mode_notes(found: _Findings, mode: Any) -> None:
    for rule, why in _NOT_APPLICABLE.get(mode, {}).items():
        found.not_applicable[rule] = why
        found.notes[rule].append(why)
    if mode == ECN_ONLY:
        found.notes["ecn_below_pause"].append("mode ecn_only: no PFC pause point; ECN marks on the RoCE queue with Kmin < Kmax, checked")


def _mode(found: _Findings, name: str, sw: dict, mode: Any) -> None:
    """The switch plan's own mode (absent: lossless, a plan from before issue 36) is the intent's."""
    have = sw.get("mode", LOSSLESS)
    if have != mode:
        found.error("watchdog" if ECN_ONLY in (have, mode) else "ecn_below_pause", name,
                    f"the switch plan's mode {have!r} is not the fabric's {mode!r}")


def _no_pfc(found: _Findings, name: str, sw: dict) -> None:
    """Mode ecn_only: nothing is paused anywhere and no watchdog runs."""
    rule = "watchdog"
    found.checked[rule] += 1
    pfc = _prios(sw.get("pfc_priorities"))
    lossless = sorted(tc for tc, cls in _classes(sw).items() if cls.get("lossless"))
    if pfc or lossless:
        found.error(rule, name, f"mode ecn_only but PFC priorities {pfc} / lossless classes {lossless}: PFC must be off end to end")
    for ifname, port in sorted((sw.get("ports") or {}).items()):
        found.checked[rule] += 1
        if _prios(port.get("pfc_priorities")):
            found.error(rule, f"{name} {ifname}", f"mode ecn_only but pfc_priorities {_prios(port.get('pfc_priorities'))}")
    if (sw.get("watchdog") or {}).get("enabled"):
        found.error(rule, name, "mode ecn_only but the PFC watchdog is enabled: there is no PFC to watch")


def _no_ecn(found: _Findings, name: str, sw: dict) -> None:
    """Mode pfc_only: no queue marks ECN and no port carries ECN thresholds."""
    rule = "ecn_below_pause"
    found.checked[rule] += 1
    marked = sorted(tc for tc, cls in _classes(sw).items() if cls.get("ecn"))
    if marked:
        found.error(rule, name, f"mode pfc_only but traffic classes {marked} mark ECN")
    for ifname, port in sorted((sw.get("ports") or {}).items()):
        found.checked[rule] += 1
        if port.get("ecn"):
            found.error(rule, f"{name} {ifname}", f"mode pfc_only but the port carries ECN thresholds {port['ecn']}")


# -- watchdog ---------------------------------------------------------------------------------------


def _watchdog(found: _Findings, name: str, sw: dict) -> None:
    rule = "watchdog"
    pfc = _prios(sw.get("pfc_priorities"))
    lossless = sorted(tc for tc, cls in _classes(sw).items() if cls.get("lossless"))
    found.checked[rule] += 1
    if lossless != pfc:
        found.error(rule, name, f"lossless traffic classes {lossless} are not the PFC priorities {pfc}: the watchdog watches {pfc}, "
                    "so a paused class goes unwatched or a watched one is never paused")
    for ifname, port in sorted((sw.get("ports") or {}).items()):
        found.checked[rule] += 1
        have = _prios(port.get("pfc_priorities"))
        if have != pfc:
            found.error(rule, f"{name} {ifname}", f"pfc_priorities {have} differ from the switch's {pfc} (the watchdog's)")
    wd = sw.get("watchdog") or {}
    if wd.get("enabled"):
        for key in ("detection_time_ms", "restoration_time_ms"):
            value = wd.get(key)
            if not _is_int(value) or value <= 0:
                found.error(rule, f"{name} watchdog.{key}", f"{value!r}: an enabled watchdog needs a time above 0 ms")


# -- ECN ----------------------------------------------------------------------------------------------


def _ecn(found: _Findings, name: str, sw: dict) -> None:
    rule = "ecn_below_pause"
    classes = _classes(sw)
    ecn_queue = sw.get("ecn_queue")
    cnp = sw.get("cnp") or {}
    marked = sorted(tc for tc, cls in classes.items() if cls.get("ecn"))
    if ecn_queue not in marked:
        found.error(rule, name, f"the RoCE queue {ecn_queue!r} does not mark ECN (marking on {marked}): DCQCN never slows a sender, PFC does all the work")
    if cnp.get("queue") in marked:
        found.error(rule, name, f"the CNP queue {cnp.get('queue')} marks ECN: CNPs are never marked")
    record = platforms().get(sw.get("platform"))
    in_percent = record is not None and record.ecn_in_percent_of_queue_buffer
    qbuf = sw.get("queue_buffer_bytes")
    for ifname, port in sorted((sw.get("ports") or {}).items()):
        found.checked[rule] += 1
        ecn = port.get("ecn") or {}
        low, high = ecn.get("min_threshold_bytes"), ecn.get("max_threshold_bytes")
        where = f"{name} {ifname}"
        if not (_is_int(low) and _is_int(high)):
            found.error(rule, where, f"ECN thresholds {low!r}-{high!r} are not byte counts")
            continue
        if not 0 < low < high:
            found.error(rule, where, f"ECN Kmin {low} B is not below Kmax {high} B (or not above 0): no marking band before the queue pauses")
        if _is_int(qbuf) and qbuf > 0:
            if high >= qbuf:
                found.error(rule, where, f"ECN Kmax {high} B is not below the RoCE queue's buffer {qbuf} B: the queue pauses (PFC) before marking reaches Pmax")
            if in_percent and record.ecn_of_buffer_error is not None:
                why = record.ecn_of_buffer_error(low, high, qbuf)
                if why:
                    found.error(rule, where, f"in {sw.get('platform')}'s units: {why}")
        elif in_percent:
            found.error(rule, where, f"{sw.get('platform')} sets ECN in percent of the queue buffer and the plan has no queue_buffer_bytes")
    if not (_is_int(qbuf) and qbuf > 0) and sw.get("ports") and _prios(sw.get("pfc_priorities")):
        found.notes[rule].append(
            f"{name}: the PFC pause point on {sw.get('platform')} is the switch's own ingress buffer threshold (dynamic or the vendor's "
            "default), not in the plan: Kmax against it is not checked (Kmin < Kmax and the ECN queues are)"
        )


# -- headroom -----------------------------------------------------------------------------------------


def _headroom(found: _Findings, name: str, sw: dict, roce: dict) -> None:
    rule = "headroom"
    hr = roce.get("headroom") or {}
    pfc = _prios(sw.get("pfc_priorities"))
    mtu = sw.get("mtu")
    for ifname, port in sorted((sw.get("ports") or {}).items()):
        where = f"{name} {ifname}"
        have = port.get("headroom")
        if not pfc:
            continue
        found.checked[rule] += 1
        if not isinstance(have, dict):
            found.error(rule, where, "no headroom for the lossless priorities")
            continue
        try:
            need = headroom(
                port.get("speed_gbps"),
                port.get("cable_length_m"),
                port_mtu=mtu,
                lossless_mtu=hr["lossless_mtu_bytes"],
                cell_bytes=hr["cell_bytes"],
                small_packet_percent=hr["small_packet_percent"],
                pipeline_latency_bytes=hr["pipeline_latency_bytes"],
                mac_phy_delay_bytes=hr["mac_phy_delay_bytes"],
            )
        except (KeyError, ValueError) as exc:
            found.error(rule, where, f"headroom cannot be computed for {port.get('speed')!r} / {port.get('cable_length_m')!r} m: {exc}")
            continue
        for key in ("xoff_bytes", "size_bytes"):
            value = have.get(key)
            if not _is_int(value) or value < need[key]:
                found.error(
                    rule,
                    where,
                    f"headroom {key} {value!r} B is below the {need[key]} B that {port.get('speed_gbps')} Gb/s over "
                    f"{port.get('cable_length_m')} m needs (cable {need['cable_bytes']} B, peer response {need['peer_response_bytes']} B)",
                )
        size, total = have.get("size_bytes"), have.get("total_bytes")
        if _is_int(size) and total != size * len(pfc):
            found.error(rule, where, f"headroom total_bytes {total!r} is not size {size} B x {len(pfc)} lossless priorities = {size * len(pfc)} B")


# -- CNP ------------------------------------------------------------------------------------------------


def _cnp(found: _Findings, name: str, sw: dict, roce: dict) -> None:
    rule = "cnp_class"
    cnp = sw.get("cnp")
    found.checked[rule] += 1
    if not isinstance(cnp, dict):
        found.error(rule, name, "no CNP class in the plan")
        return
    queue, prio = cnp.get("queue"), cnp.get("priority")
    pfc = _prios(sw.get("pfc_priorities"))
    cls = _classes(sw).get(queue)
    if prio in pfc or queue in pfc:
        found.error(rule, name, f"CNP priority {prio} / queue {queue} is among the PFC priorities {pfc}: a paused CNP cannot slow a sender")
    if cls is None:
        found.error(rule, name, f"CNP queue {queue!r} is not a traffic class of the switch")
        return
    if cls.get("lossless"):
        found.error(rule, name, f"CNP queue {queue} is lossless: CNPs must ride a non-PFC class")
    if not cls.get("strict") or not cnp.get("strict"):
        # the intent already warns at roce.cnp.strict when it asked for a weighted CNP class: say it once
        message = f"CNP queue {queue} is weighted, not strict: CNPs wait behind other traffic and DCQCN reacts late"
        if roce["cnp"]["strict"]:
            found.warn(rule, name, message)
        else:
            found.note(rule, name, message, "roce.cnp.strict: false")


# -- DSCP map ----------------------------------------------------------------------------------------


def _full_map(sw: dict) -> dict[int, Any]:
    """dscp_map_full when the plan has it, else recomputed from dscp_map and default_traffic_class (the contract's view)."""
    full = sw.get("dscp_map_full")
    if isinstance(full, dict):
        out = {}
        for key, value in full.items():
            try:
                out[int(key)] = value
            except (TypeError, ValueError):
                continue
        return out
    out = {dscp: sw.get("default_traffic_class") for dscp in range(64)}
    for key, value in (sw.get("dscp_map") or {}).items():
        try:
            out[int(key)] = value
        except (TypeError, ValueError):
            continue
    return out


def _dscp(found: _Findings, name: str, sw: dict, roce: dict) -> None:
    rule = "dscp_map"
    classes = _classes(sw)
    full = _full_map(sw)
    data_dscp, data_prio = roce["data"]["dscp"], roce["data"]["priority"]
    cnp_dscp, cnp_prio = roce["cnp"]["dscp"], roce["cnp"]["priority"]
    missing = [d for d in range(64) if d not in full]
    found.checked[rule] += 64
    if missing:
        found.error(rule, name, f"DSCPs {_ranges(missing)} map nowhere: they keep the switch's default class")
    unknown = sorted(d for d, tc in full.items() if tc not in classes)
    if unknown:
        found.error(rule, name, f"DSCPs {_ranges(unknown)} map to classes {sorted({full[d] for d in unknown}, key=str)} the plan does not define")
    if full.get(data_dscp) != data_prio:
        found.error(rule, name, f"the RoCE DSCP {data_dscp} maps to class {full.get(data_dscp)!r}, not the data class {data_prio}")
    if full.get(cnp_dscp) != cnp_prio:
        found.error(rule, name, f"the CNP DSCP {cnp_dscp} maps to class {full.get(cnp_dscp)!r}, not the CNP class {cnp_prio}")
    stray = sorted(d for d, tc in full.items() if d != data_dscp and classes.get(tc, {}).get("lossless"))
    default = sw.get("default_traffic_class")
    if default in roce["pfc"]["priorities"] and sw.get("pfc_priorities") == roce["pfc"]["priorities"]:
        # the intent made the default class lossless itself (data.priority 0 or 0 in pfc.priorities; it warns at that
        # key): the unmapped DSCPs there are its choice, said once as a note; any other stray DSCP is still an error
        chosen = [d for d in stray if full[d] == default]
        if chosen:
            found.note(rule, name, f"DSCPs {_ranges(chosen)} ride the lossless default class {default}", "the default class is lossless in the intent")
        stray = [d for d in stray if full[d] != default]
    if stray:
        found.error(rule, name, f"DSCPs {_ranges(stray)} map to a lossless class ({sorted({full[d] for d in stray})}): traffic other than RoCE would be paused")
    for key, value in (sw.get("dscp_map") or {}).items():
        if str(key).isdigit() and full.get(int(key)) != value:
            found.error(rule, name, f"dscp_map {key} -> {value} but dscp_map_full {key} -> {full.get(int(key))!r}")


def _ranges(values: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2, 5'."""
    out, start = [], None
    for i, value in enumerate(values):
        if start is None:
            start = value
        if i + 1 == len(values) or values[i + 1] != value + 1:
            out.append(str(start) if start == value else f"{start}-{value}")
            start = None
    return ", ".join(out)


# -- scheduler share ------------------------------------------------------------------------------------


def _share(found: _Findings, name: str, sw: dict) -> None:
    rule = "scheduler_share"
    classes = _classes(sw)
    weighted = {tc: cls.get("bandwidth_percent") for tc, cls in classes.items() if not cls.get("strict")}
    for tc, cls in sorted(classes.items()):
        if not cls.get("lossless"):
            continue
        found.checked[rule] += 1
        share = cls.get("bandwidth_percent")
        if cls.get("strict"):
            found.error(rule, f"{name} class {tc}", "the lossless class is strict priority: it can starve every other class and has no share to keep")
        elif not _is_int(share) or share <= 0:
            found.error(rule, f"{name} class {tc}", f"the lossless class has scheduler share {share!r} %: it is served only when the others are idle")
    shares = [v for v in weighted.values() if _is_int(v)]
    if weighted and (len(shares) != len(weighted) or sum(shares) != 100):
        found.error(rule, name, f"weighted class shares {dict(sorted(weighted.items()))} sum to {sum(shares)} %, not 100 %")
    junos = sw.get("junos")
    if isinstance(junos, dict):
        transmit = junos.get("transmit_percent") or {}
        queue = sw.get("ecn_queue")
        share = transmit.get(str(queue))
        found.checked[rule] += 1
        if not _is_int(share) or share <= 0:
            found.error(rule, f"{name} junos.transmit_percent", f"the RoCE queue {queue} has transmit-rate {share!r} %")


# -- hosts ----------------------------------------------------------------------------------------------


def _hosts(found: _Findings, hosts: dict, roce: dict, mode: Any = LOSSLESS) -> None:
    """Each RoCE host against the intent the switches were planned from: PFC priorities and bitmap, CNP, DSCP map, the mode."""
    pfc = _prios(roce["pfc"]["priorities"])
    bitmap = ",".join("1" if prio in pfc else "0" for prio in range(8))
    want_map = {str(roce["data"]["dscp"]): roce["data"]["priority"], str(roce["cnp"]["dscp"]): roce["cnp"]["priority"]}
    for name in sorted(hosts):
        host = hosts[name]
        if host.get("mode", LOSSLESS) != mode:
            found.error("watchdog" if mode == ECN_ONLY else "ecn_below_pause", name,
                        f"the host plan's mode {host.get('mode', LOSSLESS)!r} is not the fabric's {mode!r}")
        if mode == PFC_ONLY:
            found.checked["ecn_below_pause"] += 1
            if (host.get("dcqcn") or {}).get("enabled"):
                found.error("ecn_below_pause", name, "mode pfc_only but the NIC runs DCQCN: no switch marks ECN, so no CNP ever comes")
        found.checked["watchdog"] += 1
        if _prios(host.get("pfc_priorities")) != pfc or host.get("pfc_bitmap") != bitmap:
            found.error("watchdog", name, f"NIC PFC priorities {host.get('pfc_priorities')!r} (bitmap {host.get('pfc_bitmap')!r}) "
                        f"are not the switches' {pfc} (bitmap {bitmap})")
        found.checked["cnp_class"] += 1
        cnp = host.get("cnp") or {}
        if (cnp.get("dscp"), cnp.get("priority")) != (roce["cnp"]["dscp"], roce["cnp"]["priority"]):
            found.error("cnp_class", name, f"the NIC sends CNPs with DSCP {cnp.get('dscp')!r} priority {cnp.get('priority')!r}, "
                        f"the switches expect DSCP {roce['cnp']['dscp']} priority {roce['cnp']['priority']}")
        found.checked["dscp_map"] += 1
        have = {str(k): v for k, v in (host.get("dscp_map") or {}).items()}
        if have != want_map:
            found.error("dscp_map", name, f"the NIC's DSCP map {have} is not the switches' {want_map}")
