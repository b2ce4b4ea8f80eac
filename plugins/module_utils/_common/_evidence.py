# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Counter evidence: did a benchmark (or a change window's phase) ride the lossless class? Pure Python.

One set of rules for the nccl gate (roles/nccl_gate: snapshots around its launch) and the change window
(_window/_findings.counter_findings: snapshots around its phases). Input: counter deltas in the _snapshot shape
(switch ports; NIC snapshots with one "port" per RDMA device) and the plans (fabric_plan's devices).

Findings, each naming the device, the port or NIC, the counter and the delta:

    lossless_drop      a queue / priority group (a NIC's priority) of a lossless priority dropped packets (blocking)
    watchdog_storm     the PFC watchdog detected a storm (or a queue is in DEADLOCK)                 (blocking)
    lossy_pause        PFC pause frames on a priority the plan keeps lossy                           (warning)
    roce_off_priority  a NIC sent less than `share` of its bytes on the plan's RoCE priority         (blocking)
    roce_off_queue     a switch port sent less than `share` of its queued bytes on the RoCE queue     (blocking)
    cnp_off_priority   a NIC sent CNPs that its CNP priority did not carry                           (blocking)
    ecn_unanswered     a NIC received ECN-marked RoCE packets and sent no CNP (not in pfc_only)      (blocking)
    pause_without_ecn  a switch paused a lossless priority and marked no packet ECN on that queue    (blocking)
    roce_drops         ecn_only: the RoCE queue dropped more than the bound                          (blocking)
    retransmissions    ecn_only: NIC out_of_sequence + packet_seq_err above the bound (info below)   (blocking)
    pause_in_ecn_only  ecn_only: any PFC pause frame (the plan has no PFC)                           (blocking)
    ecn_in_pfc_only    pfc_only: ECN-marked packets (the plan marks none)                            (blocking)
    no_traffic         a NIC of the launch counted (almost) no bytes: nothing to prove                (warning)
    port_unread        a switch port the launch crosses was not in both snapshots                     (warning)

Fabric-wide (judge_ecn_cnp): ECN marks and no CNP handled at the senders (``ecn_without_cnp``, blocking; not in
pfc_only) or nothing that counts CNPs (``ecn_cnp_unknown``, warning).

A counter a device cannot read is in its snapshot's ``not_available`` (or simply absent): the rules that need it do
not run, and the summaries show it as None and list it - never as zero.

The plan's contract (docs/notes: interfaces point 1): queue = traffic class = PFC priority; the RoCE priority of a
host plan is dscp_map[traffic_class >> 2] (traffic_class is the verbs ToS byte), of a switch plan its ``ecn_queue``;
the CNP priority is ``cnp.priority`` (switch also ``cnp.queue``); the mode is ``plan.get("mode", "lossless")``.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _contract

BLOCKING = "blocking"
WARNING = "warning"
INFO = "info"

MODES = ("lossless", "ecn_only", "pfc_only")

# Counters that count packets a queue or priority group threw away.
DROP_COUNTERS = ("queue_drops", "wred_drops", "voq_drops", "pg_discards")
# Per-queue transmit counters (h/queuecounters adds them to _snapshot.QUEUE_COUNTERS where a platform shows them).
QUEUE_BYTES = "queue_tx_bytes"
QUEUE_PACKETS = "queue_tx_packets"
# NIC counters (_hosts/_nic.py NIC_COUNTERS names): RDMA retransmission evidence, CNPs.
RETRANSMISSION_COUNTERS = ("out_of_sequence", "packet_seq_err")
NIC_CNP_SENT = "np_cnp_sent"
NIC_CNP_HANDLED = "rp_cnp_handled"
NIC_ECN_MARKED = "np_ecn_marked_roce_packets"
NIC_DROP_COUNTERS = ("rx_discards_phy", "rx_out_of_buffer", "out_of_buffer")
# Per-priority receive drops of a NIC (mlx5 ethtool rx_prioN_discards / _buf_discard / _cong_discard, docs/hosts.md).
NIC_PRIO_DROP_COUNTERS = ("rx_prio_discards", "rx_prio_buf_discard", "rx_prio_cong_discard")

# Defaults of the settings (the nccl_gate role's nccl_gate_evidence_* variables document them).
DEFAULTS = {
    # Share of a NIC's (a port's) bytes that must ride the RoCE priority (queue).
    "share": 0.95,
    # Below this many bytes a NIC or port carried too little of the run to judge its share: 1 GB, where a real run of the
    # gate (sizes up to 8 GiB, 20 iterations) moves tens of GB through every NIC.
    "min_bytes": 1000000000,
    # ecn_only: drops on the RoCE queue per port, and NIC retransmissions per NIC, tolerated (DCQCN recovers them).
    "max_drops": 1000,
}

# The NIC findings that need a benchmark in the window to mean anything (the change window drops them without one).
TRAFFIC_KINDS = ("roce_off_priority", "no_traffic")

_STATUS_OK = ("OK", "NORMAL", "ENABLED", "OPERATIONAL")


def settings(value: dict | None = None) -> dict:
    """DEFAULTS overlaid with ``value``; ValueError naming the key when a value is out of range."""
    out = dict(DEFAULTS)
    for key, item in (value or {}).items():
        if key not in DEFAULTS:
            raise ValueError("evidence settings: unknown key %r (known: %s)" % (key, ", ".join(sorted(DEFAULTS))))
        if item is None:
            continue
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise ValueError("evidence settings: %s must be a number, got %r" % (key, item))
        out[key] = item
    share = out["share"]
    if share > 1:
        share = share / 100.0  # given in percent
    if not 0 < share <= 1:
        raise ValueError("evidence settings: share %r is not in (0, 1] (or a percent up to 100)" % (out["share"],))
    out["share"] = share
    for key in ("min_bytes", "max_drops"):
        if out[key] < 0:
            raise ValueError("evidence settings: %s %r is below 0" % (key, out[key]))
    return out


def finding(severity: str, kind: str, phase: str, device: str, message: str, **where: Any) -> dict:
    out = {"severity": severity, "kind": kind, "phase": phase, "device": device}
    out.update({key: value for key, value in where.items() if value is not None})
    out["message"] = "%s: %s" % (device, message)
    return out


def blocking(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f.get("severity") == BLOCKING]


# ---------------------------------------------------------------------------
# the plan's numbers
# ---------------------------------------------------------------------------


def mode_of(plan: dict | None) -> str:
    mode = (plan or {}).get("mode", "lossless")
    return mode if mode in MODES else "lossless"


def in_mode(plan: dict | None, mode: str) -> dict | None:
    """The plan as the fabric ran it in another mode, for judging counters taken before a change that moves the mode
    (a change window's baseline): ``mode`` set, and the PFC priorities that mode has - none in ecn_only; the plan's
    own, or else its RoCE priority (the one priority a mode with PFC makes lossless in this collection), otherwise."""
    if plan is None or mode not in MODES or mode_of(plan) == mode:
        return plan
    out = dict(plan, mode=mode)
    if mode == "ecn_only":
        out["pfc_priorities"] = []
    elif not plan.get("pfc_priorities") and roce_priority(plan) is not None:
        out["pfc_priorities"] = [int(roce_priority(plan))]
    return out


def lossless_priorities(plan: dict | None) -> list[str]:
    return [str(p) for p in (plan or {}).get("pfc_priorities") or []]


def roce_priority(plan: dict | None) -> str | None:
    """The RoCE data priority (host plan) or queue (switch plan) as a string index; None when the plan has none."""
    plan = plan or {}
    if plan.get("ecn_queue") is not None:
        return str(plan["ecn_queue"])
    try:
        return str(_contract.roce_priority(plan))
    except (KeyError, TypeError, ValueError):
        return None


def cnp_priority(plan: dict | None) -> str | None:
    cnp = (plan or {}).get("cnp") or {}
    value = cnp.get("queue", cnp.get("priority"))
    return None if value is None else str(value)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def indexed(counters: dict, name: str, indexes: list[str] | None = None) -> int | None:
    """Sum of a per-index counter over ``indexes`` (all when None); None when the counter is not there."""
    values = counters.get(name)
    if not isinstance(values, dict):
        return None
    return sum(v for k, v in values.items() if (indexes is None or k in indexes) and _int(v))


def per_index(counters: dict, name: str) -> dict | None:
    values = counters.get(name)
    if not isinstance(values, dict):
        return None
    return {k: v for k, v in sorted(values.items(), key=lambda kv: _snapshot.natural(str(kv[0]))) if _int(v)}


# ---------------------------------------------------------------------------
# scope: the switch ports a launch crosses
# ---------------------------------------------------------------------------


def launch_ports(cabling: dict | None, plans: dict | None, hosts: list) -> dict[str, list[str]]:
    """{switch: [ports]} a launch over ``hosts`` crosses, from fabric_plan's ``cabling`` section: the leaf ports of the
    hosts' NICs and, when the hosts sit on more than one leaf, those leaves' uplinks (ports whose peer is a switch) and
    the peers' ports facing them. Only switches with a switch plan; {} without cabling."""
    plans = plans or {}
    cabling = cabling or {}
    switch_ports = cabling.get("switches") or {}
    out: dict[str, set] = {}
    leaves = set()
    for host in hosts or []:
        for nic in ((cabling.get("hosts") or {}).get(host) or {}).get("nics", {}).values():
            peer = (nic or {}).get("peer") or {}
            if peer.get("host") and peer.get("port") and (plans.get(peer["host"]) or {}).get("kind") == "switch":
                out.setdefault(peer["host"], set()).add(str(peer["port"]))
                leaves.add(peer["host"])
    if len(leaves) > 1:
        for leaf in sorted(leaves):
            for port, entry in ((switch_ports.get(leaf) or {}).get("ports") or {}).items():
                peer = (entry or {}).get("peer") or {}
                if peer.get("port") and (plans.get(peer.get("host")) or {}).get("kind") == "switch":
                    out[leaf].add(str(port))
                    out.setdefault(peer["host"], set()).add(str(peer["port"]))
    return {name: sorted(ports, key=_snapshot.natural) for name, ports in sorted(out.items())}


# ---------------------------------------------------------------------------
# switch ports
# ---------------------------------------------------------------------------


def port_summary(counters: dict, plan: dict | None) -> dict:
    """One port's delta in the numbers a change window judges (its report's table): lossless PFC, RoCE-queue ECN marks,
    lossless drops, watchdog storms, CNPs. None where the port reports no such counter."""
    lossless = lossless_priorities(plan)
    ecn_queue = [str(plan["ecn_queue"])] if plan and plan.get("ecn_queue") is not None else []
    ecn = indexed(counters, "ecn_marked", ecn_queue) if isinstance(counters.get("ecn_marked"), dict) else counters.get("ecn_marked_total")
    storms = counters.get("watchdog_storms")
    drops = [indexed(counters, name, lossless) for name in _drop_names(counters)]
    return {
        "pfc_rx": indexed(counters, "pfc_rx_frames", lossless) if "pfc_rx_frames" in counters else counters.get("pfc_rx_frames_total"),
        "pfc_tx": indexed(counters, "pfc_tx_frames", lossless) if "pfc_tx_frames" in counters else counters.get("pfc_tx_frames_total"),
        "ecn_marked": ecn,
        "lossless_drops": None if not drops else sum(d for d in drops if d is not None),
        "watchdog_storms": sum(v for v in storms.values() if _int(v)) if isinstance(storms, dict) else None,
        "cnp_packets": counters.get("cnp_packets"),
    }


def port_findings(device: str, port: str, counters: dict, plan: dict | None, phase: str, opts: dict | None = None) -> list[dict]:
    """The rules of one switch port's delta (any port of a device in scope): drops on lossless queues, watchdog storms,
    pauses on lossy priorities; by mode, drops on the RoCE queue (ecn_only), any pause (ecn_only), ECN marks (pfc_only)."""
    opts = settings(opts)
    mode = mode_of(plan)
    found = []
    lossless = lossless_priorities(plan)
    roce = roce_priority(plan)
    where = {"port": port}
    for name in DROP_COUNTERS:
        values = counters.get(name)
        for index, value in sorted(values.items()) if isinstance(values, dict) else []:
            if index in lossless and _int(value) and value > 0:
                found.append(finding(BLOCKING, "lossless_drop", phase, device, "%s: %s[%s] = %d on lossless priority %s" % (
                    port, name, index, value, index), counter=name, index=index, value=value, **where))
    if mode == "ecn_only" and roce is not None:
        drops = {name: (counters.get(name) or {}).get(roce) for name in _drop_names(counters)}
        total = sum(v for v in drops.values() if _int(v))
        if total > opts["max_drops"]:
            found.append(finding(BLOCKING, "roce_drops", phase, device, "%s: %d packet(s) dropped on the RoCE queue %s (%s), above the "
                                 "ecn_only bound %d: DCQCN does not hold the queue below the buffer (ECN thresholds, CNPs)" % (
                                     port, total, roce, ", ".join("%s %d" % kv for kv in sorted(drops.items()) if _int(kv[1])),
                                     opts["max_drops"]), counter="+".join(sorted(drops)), index=roce, value=total, **where))
        elif total > 0:
            found.append(finding(INFO, "roce_drops", phase, device, "%s: %d packet(s) dropped on the RoCE queue %s, within the ecn_only "
                                 "bound %d (expected without PFC)" % (port, total, roce, opts["max_drops"]), index=roce, value=total, **where))
    storms = counters.get("watchdog_storms")
    for index, value in sorted(storms.items()) if isinstance(storms, dict) else []:
        if _int(value) and value > 0:
            found.append(finding(BLOCKING, "watchdog_storm", phase, device, "%s: PFC watchdog storm(s) on queue %s: %d" % (port, index, value),
                                 counter="watchdog_storms", index=index, value=value, **where))
    status = counters.get("watchdog_status")
    for index, value in sorted(status.items()) if isinstance(status, dict) else []:
        if str(value).upper() not in _STATUS_OK:
            found.append(finding(BLOCKING, "watchdog_storm", phase, device, "%s: PFC watchdog status of queue %s is %s" % (port, index, value),
                                 counter="watchdog_status", index=index, value=value, **where))
    if mode == "ecn_only":
        for name in ("pfc_rx_frames", "pfc_tx_frames"):
            values = counters.get(name)
            for index, value in sorted(values.items()) if isinstance(values, dict) else []:
                if _int(value) and value > 0:
                    found.append(finding(BLOCKING, "pause_in_ecn_only", phase, device, "%s: %s[%s] = %d: the plan is ecn_only (no PFC), "
                                         "yet pause frames moved (PFC left on here or on the peer)" % (port, name, index, value),
                                         counter=name, index=index, value=value, **where))
    else:
        pauses = counters.get("pfc_rx_frames")
        for index, value in sorted(pauses.items()) if isinstance(pauses, dict) and lossless else []:
            if index not in lossless and _int(value) and value > 0:
                found.append(finding(WARNING, "lossy_pause", phase, device, "%s: %d PFC pause frame(s) received on priority %s, which the "
                                     "plan does not make lossless" % (port, value, index), counter="pfc_rx_frames", index=index, value=value, **where))
    if mode == "pfc_only":
        marks = counters.get("ecn_marked")
        items = sorted(marks.items()) if isinstance(marks, dict) else ([("all", counters["ecn_marked_total"])] if "ecn_marked_total" in counters else [])
        for index, value in items:
            if _int(value) and value > 0:
                found.append(finding(BLOCKING, "ecn_in_pfc_only", phase, device, "%s: %d ECN-marked packet(s) on queue %s: the plan is "
                                     "pfc_only (no ECN marking), yet the switch marks (ECN left on)" % (port, value, index),
                                     counter="ecn_marked" if index != "all" else "ecn_marked_total", index=None if index == "all" else index,
                                     value=value, **where))
    return found


def queue_evidence(device: str, port: str, counters: dict, plan: dict | None, phase: str, opts: dict | None = None) -> tuple[dict, list]:
    """(summary, findings) of one port the launch crosses: the bytes by queue and the RoCE queue's share of them
    (queue_tx_bytes, else queue_tx_packets; the CNP queue left out of the total). Not available: share None."""
    opts = settings(opts)
    roce, cnp = roce_priority(plan), cnp_priority(plan)
    name = QUEUE_BYTES if isinstance(counters.get(QUEUE_BYTES), dict) else (QUEUE_PACKETS if isinstance(counters.get(QUEUE_PACKETS), dict) else None)
    summary: dict[str, Any] = {"roce_queue": roce, "cnp_queue": cnp, "by_queue": None, "by_queue_counter": name, "roce_share": None}
    if name is None or roce is None:
        return summary, []
    by_queue = per_index(counters, name) or {}
    summary["by_queue"] = by_queue
    total = sum(v for k, v in by_queue.items() if k != cnp)
    # Packets: a MTU-sized RoCE packet is ~4 KB, so min_bytes / 4096 packets is the same amount of the run.
    floor = opts["min_bytes"] if name == QUEUE_BYTES else opts["min_bytes"] / 4096.0
    if total < floor or total == 0:
        return summary, []
    share = by_queue.get(roce, 0) / float(total)
    summary["roce_share"] = round(share, 4)
    if share >= opts["share"]:
        return summary, []
    others = sorted(((k, v) for k, v in by_queue.items() if k not in (roce, cnp) and v > 0), key=lambda kv: -kv[1])
    top = others[0][0] if others else None
    return summary, [finding(
        BLOCKING, "roce_off_queue", phase, device, "%s: %.1f %% of %s on the RoCE queue %s (want >= %.0f %%); %s: the switch's "
        "DSCP map does not send the RoCE DSCP to queue %s (switch map), or the traffic arrives without it (trust mode, NIC traffic "
        "class)" % (port, share * 100, name, roce, opts["share"] * 100, ", ".join("queue %s %d" % kv for kv in others[:4]) or "nothing elsewhere",
                    roce), port=port, counter=name, index=top, value=others[0][1] if others else 0, share=round(share, 4))]


# ---------------------------------------------------------------------------
# NICs
# ---------------------------------------------------------------------------


def _cause(priority: str, roce: str, plan: dict | None) -> str:
    if priority == "0":
        return ("priority 0 is where untagged traffic lands: the traffic class is not set (NCCL_IB_TC / the device's "
                "traffic_class), or the NIC trusts pcp (trust mode) while the run carries only a DSCP")
    dscp = (plan or {}).get("traffic_class")
    return ("the NIC maps the run's DSCP to priority %s, not %s: NCCL_IB_TC carries another DSCP than the plan's (ToS %s), or the "
            "NIC's dscp_map (trust dscp) differs from the plan" % (priority, roce, dscp))


def nic_evidence(host: str, nic: str, counters: dict, plan: dict | None, phase: str, opts: dict | None = None) -> tuple[dict, list]:
    """(summary, findings) of one RDMA device of a host of the launch: bytes by priority and the RoCE priority's share
    of the sent bytes; pauses; CNPs sent/handled and on which priority; ECN marks seen; retransmissions; drops."""
    opts = settings(opts)
    mode = mode_of(plan)
    roce, cnp = roce_priority(plan), cnp_priority(plan)
    tx = per_index(counters, "tx_prio_bytes")
    summary: dict[str, Any] = {
        "roce_priority": roce, "cnp_priority": cnp, "tx_bytes": tx, "rx_bytes": per_index(counters, "rx_prio_bytes"),
        "roce_share": None, "pfc_rx": per_index(counters, "pfc_rx_frames"), "pfc_tx": per_index(counters, "pfc_tx_frames"),
        "cnp_sent": counters.get(NIC_CNP_SENT), "cnp_handled": counters.get(NIC_CNP_HANDLED), "ecn_marked": counters.get(NIC_ECN_MARKED),
        "retransmissions": {n: counters[n] for n in RETRANSMISSION_COUNTERS if _int(counters.get(n))} or None,
        "drops": {n: counters[n] for n in NIC_DROP_COUNTERS if _int(counters.get(n))} or None,
    }
    found: list[dict] = []
    where = {"port": nic}
    if tx is not None and roce is not None:
        total = sum(tx.values())
        if total < max(opts["min_bytes"], 1):
            found.append(finding(WARNING, "no_traffic", phase, host, "%s: %d byte(s) sent in all (tx_prio_bytes): too little to show "
                                 "which priority the run rode" % (nic, total), counter="tx_prio_bytes", value=total, **where))
        else:
            share = tx.get(roce, 0) / float(total)
            summary["roce_share"] = round(share, 4)
            if share < opts["share"]:
                others = sorted(((k, v) for k, v in tx.items() if k not in (roce, cnp) and v > 0), key=lambda kv: -kv[1])
                top = others[0][0] if others else None
                found.append(finding(
                    BLOCKING, "roce_off_priority", phase, host, "%s: %.1f %% of the sent bytes on the RoCE priority %s (want >= %.0f %%); "
                    "%s; %s" % (nic, share * 100, roce, opts["share"] * 100, ", ".join("priority %s %d B" % kv for kv in others[:4]) or "-",
                                _cause(top, roce, plan) if top is not None else "no other priority carried it"),
                    counter="tx_prio_bytes", index=top, value=others[0][1] if others else 0, share=round(share, 4), **where))
    sent = counters.get(NIC_CNP_SENT)
    cnp_tx = (per_index(counters, "tx_prio_packets") or {}).get(cnp) if cnp is not None and "tx_prio_packets" in counters else None
    if _int(sent) and sent > 0 and _int(cnp_tx) and cnp_tx < sent:
        # CNPs are sent on the CNP priority (mlx5 cnp_802p_prio / cnp_dscp; NVIDIA "DCQCN" docs): fewer packets there than
        # CNPs sent means they left on another one. That tx_prioN_packets counts the NIC's own CNPs is unverified.
        found.append(finding(BLOCKING, "cnp_off_priority", phase, host, "%s: %s = %d but tx_prio_packets[%s] = %d: the CNPs did not "
                             "ride the CNP priority %s (the NIC's CNP priority / DSCP, or the switch map of the CNP DSCP)" % (
                                 nic, NIC_CNP_SENT, sent, cnp, cnp_tx, cnp), counter=NIC_CNP_SENT, index=cnp, value=sent, **where))
    marked = counters.get(NIC_ECN_MARKED)
    if mode != "pfc_only" and _int(marked) and marked > 0 and _int(sent) and sent == 0:
        # the notification point of this receiver does not answer marks with CNPs (DCQCN off on the NIC or on the
        # priority the marked packets arrived on): the fabric-wide ecn_without_cnp cannot see one NIC among answering ones
        found.append(finding(BLOCKING, "ecn_unanswered", phase, host, "%s: %s = %d and %s = 0: the NIC received ECN-marked "
                             "RoCE packets and sent no CNP (DCQCN notification off on this NIC or its priority)" % (
                                 nic, NIC_ECN_MARKED, marked, NIC_CNP_SENT), counter=NIC_ECN_MARKED, value=marked, **where))
    lossless = lossless_priorities(plan)
    for name in NIC_PRIO_DROP_COUNTERS:
        for index, value in (per_index(counters, name) or {}).items():
            if index in lossless and value > 0:
                found.append(finding(BLOCKING, "lossless_drop", phase, host, "%s: %s[%s] = %d on lossless priority %s" % (
                    nic, name, index, value, index), counter=name, index=index, value=value, **where))
    for name in ("pfc_rx_frames", "pfc_tx_frames"):
        for index, value in (summary["pfc_rx" if name == "pfc_rx_frames" else "pfc_tx"] or {}).items():
            if value <= 0:
                continue
            if mode == "ecn_only":
                found.append(finding(BLOCKING, "pause_in_ecn_only", phase, host, "%s: %s[%s] = %d: the plan is ecn_only (no PFC), yet "
                                     "pause frames moved (PFC left on the NIC or its switch port)" % (nic, name, index, value),
                                     counter=name, index=index, value=value, **where))
            elif name == "pfc_rx_frames" and lossless and index not in lossless:
                found.append(finding(WARNING, "lossy_pause", phase, host, "%s: %d PFC pause frame(s) received on priority %s, which the "
                                     "plan does not make lossless" % (nic, value, index), counter=name, index=index, value=value, **where))
    if mode == "ecn_only" and summary["retransmissions"]:
        total = sum(summary["retransmissions"].values())
        said = ", ".join("%s %d" % kv for kv in sorted(summary["retransmissions"].items()))
        if total > opts["max_drops"]:
            found.append(finding(BLOCKING, "retransmissions", phase, host, "%s: %s (%d) above the ecn_only bound %d: the fabric drops "
                                 "more than DCQCN recovers cheaply" % (nic, said, total, opts["max_drops"]),
                                 counter="+".join(RETRANSMISSION_COUNTERS), value=total, **where))
        elif total > 0:
            found.append(finding(INFO, "retransmissions", phase, host, "%s: %s (%d): drops recovered by retransmission, within the "
                                 "ecn_only bound %d" % (nic, said, total, opts["max_drops"]), counter="+".join(RETRANSMISSION_COUNTERS),
                                 value=total, **where))
    return summary, found


# ---------------------------------------------------------------------------
# across devices
# ---------------------------------------------------------------------------


def cnp_counts(nic_deltas: dict, switch_deltas: dict) -> tuple[int | None, str]:
    """(CNPs, what counted them): the senders' rp_cnp_handled where any NIC reports it (DCQCN reacting), else any CNP
    counter (NIC np_cnp_sent, switch cnp_packets); None when nothing in scope counts CNPs."""
    handled = [c.get(NIC_CNP_HANDLED) for d in nic_deltas.values() for c in (d.get("ports") or {}).values() if _int(c.get(NIC_CNP_HANDLED))]
    if handled:
        return sum(handled), NIC_CNP_HANDLED
    total = None
    for delta in list(switch_deltas.values()) + list(nic_deltas.values()):
        for counters in (delta.get("ports") or {}).values():
            for name, value in counters.items():
                if "cnp" in name and _int(value):
                    total = (total or 0) + value
    return total, "CNP counters"


def judge_ecn_cnp(ecn_ports: list[tuple], cnps: int | None, counted_by: str, phase: str) -> list[dict]:
    """ecn_ports: [(device, port, marks)] with marks > 0 on devices whose mode marks ECN (not pfc_only)."""
    if not ecn_ports:
        return []
    where = ", ".join("%s %s (%d)" % item for item in ecn_ports[:8]) + (" and %d more" % (len(ecn_ports) - 8) if len(ecn_ports) > 8 else "")
    total = sum(item[2] for item in ecn_ports)
    if cnps == 0:
        return [finding(BLOCKING, "ecn_without_cnp", phase, "fabric", "%d ECN-marked packet(s) (%s) and no CNP counted (%s): the "
                        "receivers do not answer congestion, or the senders do not react (check DCQCN / CNP on the NICs)" % (total, where, counted_by),
                        counter=counted_by, value=total)]
    if cnps is None:
        return [finding(WARNING, "ecn_cnp_unknown", phase, "fabric", "%d ECN-marked packet(s) (%s); no device in scope reports CNPs, "
                        "so whether the receivers answered cannot be checked" % (total, where), value=total)]
    return []


def pause_without_ecn(device: str, deltas_ports: dict, plan: dict | None, phase: str) -> list[dict]:
    """A switch that sent PFC pauses on a lossless priority (its ingress crossed xoff) while no packet of that queue was
    ECN-marked anywhere on it: its ECN thresholds sit above the pause point, so DCQCN never hears of the congestion
    PFC is stopping. Needs per-queue ecn_marked; lossless mode only."""
    if mode_of(plan) != "lossless":
        return []
    found = []
    for index in lossless_priorities(plan):
        pauses = [(port, (c.get("pfc_tx_frames") or {}).get(index)) for port, c in deltas_ports.items() if isinstance(c.get("pfc_tx_frames"), dict)]
        sent = sum(v for _port, v in pauses if _int(v))
        marks = [(c.get("ecn_marked") or {}).get(index) for c in deltas_ports.values() if isinstance(c.get("ecn_marked"), dict)]
        if sent > 0 and marks and sum(v for v in marks if _int(v)) == 0:
            ports = ", ".join("%s %d" % (p, v) for p, v in pauses if _int(v) and v > 0)
            found.append(finding(BLOCKING, "pause_without_ecn", phase, device, "%d PFC pause frame(s) sent on priority %s (%s) and no "
                                 "ECN mark on queue %s: the ECN thresholds sit above the pause point (Kmin/Kmax over xoff)" % (
                                     sent, index, ports, index), counter="pfc_tx_frames", index=index, value=sent))
    return found


def _unwrap(value: Any) -> dict | None:
    if not isinstance(value, dict) or value.get("failed") or value.get("skipped") or value.get("unreachable"):
        return None
    snap = value.get("counters") if "ports" not in value else value
    return snap if isinstance(snap, dict) and isinstance(snap.get("ports"), dict) else None


def _deltas(before: dict, after: dict, what: str, phase: str, found: list) -> dict:
    out = {}
    for device in sorted(set(before or {}) | set(after or {})):
        first, last = _unwrap((before or {}).get(device)), _unwrap((after or {}).get(device))
        if first is None or last is None:
            found.append(finding(BLOCKING, "no_counters", phase, device, "no %s counter snapshot %s the launch: it cannot be judged" % (
                what, "before" if first is None else "after")))
            continue
        out[device] = _snapshot.delta(last, first)
    return out


def judge(switches_before: dict, switches_after: dict, nics_before: dict, nics_after: dict, plans: dict,  # pylint: disable=too-many-arguments,too-many-locals
          ports: dict | None = None, opts: dict | None = None, phase: str = "launch") -> dict:
    """The evidence of one launch: {findings, switches: {device: {port: {...summary, findings}}}, hosts: {host: {nic:
    {...}}}, not_available: {device: [counters]}, settings, modes}. ``ports``: {switch: [ports]} the launch crosses
    (launch_ports); a switch without an entry is judged on every port read."""
    opts = settings(opts)
    found: list[dict] = []
    sw = _deltas(switches_before, switches_after, "switch", phase, found)
    nics = _deltas(nics_before, nics_after, "NIC", phase, found)
    out: dict[str, Any] = {"switches": {}, "hosts": {}, "not_available": {}, "settings": opts, "modes": {},
                           # when each device was read: the launch lies between (the snapshots' own clocks)
                           "read": {d: {"before": v.get("since"), "after": v.get("taken_at")} for d, v in sorted({**sw, **nics}.items())}}
    ecn_ports = []
    for device, delta in sw.items():
        plan = plans.get(device) or {}
        out["modes"][device] = mode_of(plan)
        keep = (ports or {}).get(device)
        judged = {p: c for p, c in delta["ports"].items() if keep is None or p in keep}
        for port in [p for p in keep or [] if p not in delta["ports"]]:
            found.append(finding(WARNING, "port_unread", phase, device, "%s: the launch crosses it (the plan's cabling), but it was not "
                                 "read before and after (not in the switch's lossless_fabric_device.ports?)" % port, port=port))
        out["not_available"][device] = sorted(set(delta.get("not_available") or []))
        for reset in delta["resets"]:
            if reset["port"] in judged:
                found.append(finding(WARNING, "counter_reset", phase, device, "%s: %s went down from %s to %s (cleared or wrapped); counted "
                                     "from the reset" % (reset["port"], reset["counter"], reset["pre"], reset["post"]),
                                     port=reset["port"], counter=reset["counter"]))
        for port, counters in judged.items():
            these = port_findings(device, port, counters, plan, phase, opts)
            queue, more = queue_evidence(device, port, counters, plan, phase, opts)
            these += more
            summary = port_summary(counters, plan)
            summary.update(queue)
            summary["ecn_by_queue"] = per_index(counters, "ecn_marked")
            summary["drops_by_queue"] = _drops_by_queue(counters)
            out["switches"].setdefault(device, {})[port] = dict(summary, findings=[f["kind"] for f in these])
            found.extend(these)
            if mode_of(plan) != "pfc_only" and _int(summary["ecn_marked"]) and summary["ecn_marked"] > 0:
                ecn_ports.append((device, port, summary["ecn_marked"]))
        found.extend(pause_without_ecn(device, judged, plan, phase))
    for host, delta in nics.items():
        plan = plans.get(host) or {}
        out["modes"][host] = mode_of(plan)
        out["not_available"][host] = sorted(set(delta.get("not_available") or []))
        for nic, counters in delta["ports"].items():
            summary, these = nic_evidence(host, nic, counters, plan, phase, opts)
            out["hosts"].setdefault(host, {})[nic] = dict(summary, findings=[f["kind"] for f in these])
            found.extend(these)
    cnps, counted_by = cnp_counts(nics, sw)
    found.extend(judge_ecn_cnp(ecn_ports, cnps, counted_by, phase))
    out["findings"] = found
    return out


def _drop_names(counters: dict) -> list[str]:
    """The drop counters of a port that add up without counting a packet twice: queue_drops already holds the WRED
    drops (_snapshot.QUEUE_COUNTERS), so wred_drops counts only where queue_drops is not read."""
    names = [n for n in DROP_COUNTERS if isinstance(counters.get(n), dict)]
    return [n for n in names if not (n == "wred_drops" and "queue_drops" in names)]


def _drops_by_queue(counters: dict) -> dict | None:
    out: dict[str, int] = {}
    seen = False
    for name in _drop_names(counters):
        values = per_index(counters, name)
        if values is None:
            continue
        seen = True
        for index, value in values.items():
            out[index] = out.get(index, 0) + value
    return out if seen else None
