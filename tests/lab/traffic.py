# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's traffic ledger: what an NCCL launch puts on the NICs and switch ports it crosses (docs/lab.md, "Traffic").

The lab has no packets. When a lab launcher runs an nccl-tests job (the mpirun and srun shims, k8sim's MPIJob
launcher), ``record_launch`` works out, per directed ring edge of every rail the job uses:

- the traffic class the sender's RDMA data leaves with: ``NCCL_IB_TC`` of the launch, else the device-wide class of
  the vendor driver (``/sys/class/infiniband/<dev>/tc/1/traffic_class``), else 0; its DSCP = ToS >> 2;
- the priority the sender NIC puts it on, from the NIC's simulated state (tests/lab/hostsim: trust, the DSCP map
  or the dcbnl APP table; trust pcp: ``NCCL_IB_SL``, else 0) and the priority the receiver classifies it into;
- the switch ports on the way (tests/lab/wiring.py through the performance model's routes: the leaf ports of both
  hosts, and across leaves the uplink pair the model's ECMP picks) and each switch's egress queue for that DSCP
  (the plan's intended DSCP -> queue map, from the intent: the switches' own running config is not parsed here);
- and then moves counters, deterministically, from the launch's bytes: per-priority tx/rx bytes and packets at both
  NICs, per-queue tx_packets/tx_bytes (and tx_octets/rx_octets) at every switch port on the way, PFC pauses where
  the class is lossless end to end, ECN marks at the receiver-facing queue where the plan enables ECN, CNPs on the
  CNP priority (np_cnp_sent at the receiver, rp_cnp_handled at the sender, the switch queues on the way back),
  drops where a lossy queue congests and the sequence errors they cause.

``lab_traffic_faults`` (the launcher writes it with the intent's QoS into ``<run_dir>/traffic.json``) changes only
what this model does - never the simulated config that nic_qos or switch_qos would repair:

- ``{"kind": "no_traffic_class", "host": "gpu1"}``: the ranks on gpu1 send with traffic class 0;
- ``{"kind": "pcp_trust", "nic": "gpu1:mlx5_0"}``: the NIC classifies by PCP (untagged frames: priority 0);
- ``{"kind": "switch_map", "switch": "leaf1"}``: leaf1 has no entry for the RoCE DSCP (default queue 0);
- ``{"kind": "no_dcqcn", "nic": "gpu2:mlx5_1"}``: the NIC neither sends CNPs for marked packets nor reacts to CNPs.

Counter units and rates are lab choices (unverified against any device): RoCE MTU 4096 bytes of payload per packet,
62 bytes of headers per packet on the wire (Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4), a CNP 78 bytes,
one ECN mark per MARK_EVERY packets at the congested queue, one pause per PAUSE_EVERY packets, one drop per
DROP_EVERY packets where the class is lossy.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hostsim import tree  # noqa: E402  # pylint: disable=wrong-import-position
from labproc import call_json  # noqa: E402  # pylint: disable=wrong-import-position
from nccl import perfmodel  # noqa: E402  # pylint: disable=wrong-import-position

FILE = "traffic.json"
# kind -> the key naming where it acts
FAULT_KINDS = {"no_traffic_class": "host", "pcp_trust": "nic", "switch_map": "switch", "no_dcqcn": "nic"}
MTU_PAYLOAD = 4096
HEADER_BYTES = 62
CNP_BYTES = 78
MARK_EVERY = 1000
PAUSE_EVERY = 4000
DROP_EVERY = 2000
PAUSE_QUANTA = 10  # rx_prio<p>_pause_duration per pause frame (device units; lab choice)
SWITCHSIM_STATE = "switchsim.state.json"
# The hw_counters the ledger moves under mlx5's names, as each simulated stack names them (tests/lab/hostsim/tree.py;
# bnxt_re: hw_counters.c bnxt_re_stat_descs, the map of plugins/module_utils/_hosts/_nic_bnxt.py). bnxt_re counts
# every CNP it receives in rx_cnp_pkts, reacting or not (unverified), so an ignored CNP lands there too. A name the
# stack's tree has no file for (ionic: none) is not written.
HW_NAMES = {"bnxt": {"np_cnp_sent": "tx_cnp_pkts", "rp_cnp_handled": "rx_cnp_pkts", "rp_cnp_ignored": "rx_cnp_pkts",
                     "np_ecn_marked_roce_packets": "rx_ecn_marked_pkts", "out_of_sequence": "oos_drop_count",
                     "packet_seq_err": "seq_err_naks_rcvd"}}


class TrafficError(ValueError):
    """A bad lab_traffic_faults entry or intent; the message names the key and the value."""


# ---------------------------------------------------------------------------
# configuration (the launcher, at up)
# ---------------------------------------------------------------------------


def validate_faults(faults: Any, wiring_links: list) -> list[dict]:
    """The lab_traffic_faults list, checked against the lab's cables: a known kind, and a host, NIC
    ("<host>:<rdma device>") or switch of the lab wiring."""
    if faults in (None, ""):
        return []
    if not isinstance(faults, list):
        raise TrafficError("lab_traffic_faults: %r is not a list" % (faults,))
    hosts: dict[str, set] = {}
    switches: set = set()
    for a, b, _speed, _up in wiring_links:
        for end in (a, b):
            if end[1] == "nic":
                hosts.setdefault(end[0], set()).add(end[2])
            else:
                switches.add(end[0])
    out = []
    for i, fault in enumerate(faults):
        where = "lab_traffic_faults[%d]" % i
        if not isinstance(fault, dict):
            raise TrafficError("%s: %r is not a mapping like {kind: no_traffic_class, host: gpu1}" % (where, fault))
        kind = fault.get("kind")
        if kind not in FAULT_KINDS:
            raise TrafficError("%s.kind: %r is not one of %s" % (where, kind, ", ".join(FAULT_KINDS)))
        key = FAULT_KINDS[kind]
        extra = sorted(set(fault) - {"kind", key})
        if extra:
            raise TrafficError("%s: %s takes kind and %s only, not %s" % (where, kind, key, ", ".join(extra)))
        value = fault.get(key)
        if key == "host" and value not in hosts:
            raise TrafficError("%s.host: %r is no GPU host of the lab wiring (hosts: %s)" % (where, value, ", ".join(sorted(hosts))))
        if key == "switch" and value not in switches:
            raise TrafficError("%s.switch: %r is no switch of the lab wiring (switches: %s)" % (where, value, ", ".join(sorted(switches))))
        if key == "nic":
            host, _sep, nic = str(value).partition(":") if isinstance(value, str) else ("", "", "")
            if nic not in hosts.get(host, ()):
                known = ", ".join("%s:%s" % (h, n) for h in sorted(hosts) for n in sorted(hosts[h]))
                raise TrafficError("%s.nic: %r is no '<host>:<RDMA device>' of the lab wiring (NICs: %s)" % (where, value, known))
        out.append({"kind": kind, key: value})
    return out


def qos_from_intent(intent: Any) -> dict:
    """The plan-intended classes the switches use (queue = traffic class = PFC priority, docs/intent.md): the RoCE
    and CNP DSCPs and priorities, the PFC priorities and whether the lossless class marks ECN, by the fabric mode
    (lossless | ecn_only | pfc_only)."""
    roce = ((intent or {}).get("roce") or {}) if isinstance(intent, dict) else {}
    data = roce.get("data") or {}
    cnp = roce.get("cnp") or {}
    mode = roce.get("mode", "lossless")
    if mode not in ("lossless", "ecn_only", "pfc_only"):
        raise TrafficError("lossless_fabric.roce.mode: %r is not lossless, ecn_only or pfc_only" % (mode,))
    priority = int(data.get("priority", 3))
    pfc = [] if mode == "ecn_only" else [int(p) for p in ((roce.get("pfc") or {}).get("priorities") or [priority])]
    dcqcn = (roce.get("dcqcn") or {}).get("enabled", True)
    return {"transport": str((intent or {}).get("transport", "roce")) if isinstance(intent, dict) else "roce",
            "dscp": int(data.get("dscp", 26)), "priority": priority, "cnp_dscp": int(cnp.get("dscp", 48)),
            "cnp_priority": int(cnp.get("priority", 6)), "pfc": pfc, "ecn": bool(dcqcn) and mode != "pfc_only", "mode": mode}


def write_config(run_dir: str, faults: Any, intent: Any, wiring_links: list) -> dict:
    """<run_dir>/traffic.json: the checked faults and the intended classes; raises TrafficError naming the key."""
    config = {"faults": validate_faults(faults, wiring_links), "qos": qos_from_intent(intent)}
    with open(os.path.join(run_dir, FILE), "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=1)
    return config


def load_config(run_dir: str) -> dict | None:
    try:
        with open(os.path.join(run_dir, FILE), encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return None


# ---------------------------------------------------------------------------
# the hosts' NIC state (tests/lab/hostsim trees)
# ---------------------------------------------------------------------------


def _read(root: str, rel: str) -> str | None:
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _int(text: str | None, default: int | None = None) -> int | None:
    match = re.search(r"(-?\d+)\s*$", text or "")
    return int(match.group(1)) if match else default


def nic_view(root: str, state: dict, netdev: str) -> dict:
    """What the traffic needs of one simulated NIC: name, trust, DSCP -> priority, PFC, the device-wide traffic
    class (None: unset), DCQCN reaction/notification per priority, the CNP's priority and DSCP."""
    nic = state["nics"][netdev]
    stack = state.get("stack", "upstream")
    if stack == "mlnx":
        dscp_map = {int(d): int(p) for d, p in nic["dscp_map"].items()}
    else:  # the dcbnl APP table (upstream mlx5, bnxt_en): a DSCP without an entry goes to priority 0
        dscp_map = {d: 0 for d in range(64)}
        for dscp, prio in sorted(nic.get("app") or [], reverse=True):
            dscp_map[int(dscp)] = int(prio)  # the lowest priority of a DSCP listed twice wins (sorted, reversed)
    index = sorted(state["nics"]).index(netdev)
    fw = ((state.get("firmware") or {}).get(tree.pci_address(index)) or {})

    def firmware(name: str, default: int) -> int:
        return int((fw.get(name) or {}).get("current", default))

    mask = firmware("ROCE_CC_PRIO_MASK_P1", 255)
    net = "sys/class/net/%s" % netdev
    if stack == "mlnx":
        rp = [_int(_read(root, "%s/ecn/roce_rp/enable/%d" % (net, p)), 0) == 1 for p in range(8)]
        np_ = [_int(_read(root, "%s/ecn/roce_np/enable/%d" % (net, p)), 0) == 1 for p in range(8)]
        cnp_prio = _int(_read(root, net + "/ecn/roce_np/cnp_802p_prio"), 0)
        cnp_dscp = _int(_read(root, net + "/ecn/roce_np/cnp_dscp"), 0)
        tclass = _int(_read(root, "sys/class/infiniband/%s/tc/1/traffic_class" % nic["name"]))
    elif stack == "bnxt":  # bnxt_re: congestion control per device in debugfs cc_config, the CNP's class alt_vlan_*
        cc = "sys/kernel/debug/bnxt_re/%s/cc_config" % tree.pci_address(index)
        on = _int(_read(root, cc + "/enable_cc"), 0) == 1 and _int(_read(root, cc + "/tos_ecn"), 0) == 1
        rp = np_ = [on] * 8
        cnp_prio, cnp_dscp, tclass = _int(_read(root, cc + "/alt_vlan_pcp"), 0), _int(_read(root, cc + "/alt_vlan_dscp"), 0), None
    elif stack == "ionic":  # no DCB (trust stays pcp) and no congestion-control file the lab models: DCQCN off (unverified)
        rp = np_ = [False] * 8
        cnp_prio, cnp_dscp, tclass = 0, 0, None
    else:  # upstream mlx5: DCQCN per priority from the firmware mask; the CNP from debugfs cc_params, else firmware
        rp = np_ = [bool(mask >> p & 1) for p in range(8)]
        cc = "sys/kernel/debug/mlx5/%s/cc_params" % tree.pci_address(index)
        mode = _int(_read(root, cc + "/np_cnp_prio_mode"))
        cnp_dscp = _int(_read(root, cc + "/np_cnp_dscp"), firmware("CNP_DSCP_P1", 48))
        cnp_prio = _int(_read(root, cc + "/np_cnp_prio"), firmware("CNP_802P_PRIO_P1", 6)) if mode == 0 else (
            None if mode == 1 else firmware("CNP_802P_PRIO_P1", 6))  # mode 1: the CNP follows the marked packet
        tclass = None
    return {"name": nic["name"], "netdev": netdev, "trust": nic["trust"], "dscp_map": dscp_map, "pfc": list(nic["pfc"]),
            "tclass": tclass if tclass is not None and tclass >= 0 else None, "rp": rp, "np": np_,
            "cnp_priority": cnp_prio, "cnp_dscp": cnp_dscp or 0}


def host_root(run_dir: str, host: str) -> str:
    return os.path.join(run_dir, "hosts", host, "root")


def load_hosts(run_dir: str, hosts: list[str]) -> dict:
    """{host: {rdma device: nic_view}} of the lab's host trees (hosts without a tree are left out)."""
    out = {}
    for host in hosts:
        root = host_root(run_dir, host)
        if not os.path.exists(os.path.join(root, tree.STATE)):
            continue
        state = tree.load(root)
        out[host] = {v["name"]: nic_view(root, state, netdev) for netdev, v in state["nics"].items()}
    return out


# ---------------------------------------------------------------------------
# the ledger (pure)
# ---------------------------------------------------------------------------


def _add(bucket: dict, key: str, value: int) -> None:
    if value:
        bucket[key] = bucket.get(key, 0) + int(value)


def _addq(bucket: dict, key: str, index: int, value: int) -> None:
    if value:
        vec = bucket.setdefault(key, [0] * 8)
        vec[index] += int(value)


def _hops(fabric: perfmodel.Fabric, a: tuple, b: tuple, launch: Any) -> list[tuple[str, str, str]]:
    """[(switch, ingress port, egress port)] from NIC a to NIC b along the model's route."""
    _components, cables = fabric._route(a, b, launch)  # pylint: disable=protected-access  # the route the busbw follows
    hops = []
    here = (a[0], "nic", a[1])
    for i, index in enumerate(cables[:-1]):
        ingress = fabric._far(index, here)  # pylint: disable=protected-access
        egress = fabric._end_on(cables[i + 1], ingress[0])  # pylint: disable=protected-access
        hops.append((ingress[0], ingress[2], egress[2]))
        here = egress
    return hops


def _switch_queue(qos: dict, faults: list[dict], switch: str, dscp: int) -> int:
    if dscp == qos["dscp"]:
        if any(f["kind"] == "switch_map" and f["switch"] == switch for f in faults):
            return 0  # the RoCE DSCP has no entry: the switch's default class
        return qos["priority"]
    if dscp == qos["cnp_dscp"]:
        return qos["cnp_priority"]
    return 0


def _fault(faults: list[dict], kind: str, key: str, value: str) -> bool:
    return any(f["kind"] == kind and f.get(key) == value for f in faults)


def edge(ledger: dict, fabric: perfmodel.Fabric, hosts: dict, config: dict, src: tuple, dst: tuple, nbytes: int,
         env: dict, launch: Any = 0) -> dict:
    """Move one directed edge's traffic (nbytes of RDMA payload from src=(host, nic) to dst) into the ledger
    {"nics": {host: {nic: {"stats": {}, "hw": {}}}}, "switches": {switch: {port: {counter: [8] | int}}}};
    return what was decided (priorities, queues, marks, pauses, drops) for tests and docs."""
    qos, faults = config["qos"], config.get("faults") or []
    hops = _hops(fabric, src, dst, launch)  # first: a broken path raises before anything is counted
    snic, dnic = hosts[src[0]][src[1]], hosts[dst[0]][dst[1]]
    s_name, d_name = "%s:%s" % src, "%s:%s" % dst
    s_trust = "pcp" if _fault(faults, "pcp_trust", "nic", s_name) else snic["trust"]
    d_trust = "pcp" if _fault(faults, "pcp_trust", "nic", d_name) else dnic["trust"]
    # the data's ToS: NCCL_IB_TC, else the device-wide class, else 0; the fault drops both on that host
    tos = 0
    if not _fault(faults, "no_traffic_class", "host", src[0]):
        env_tc = _int(str(env.get("NCCL_IB_TC", "")))
        tos = env_tc if env_tc is not None else (snic["tclass"] or 0)
    dscp = (tos >> 2) & 63
    sl = _int(str(env.get("NCCL_IB_SL", "")), 0) or 0
    p_tx = snic["dscp_map"].get(dscp, 0) if s_trust == "dscp" else sl & 7
    p_rx = dnic["dscp_map"].get(dscp, 0) if d_trust == "dscp" else 0  # untagged frames carry PCP 0
    packets = -(-nbytes // MTU_PAYLOAD)
    wire = nbytes + packets * HEADER_BYTES
    nics, switches = ledger.setdefault("nics", {}), ledger.setdefault("switches", {})
    s_led = nics.setdefault(src[0], {}).setdefault(src[1], {"stats": {}, "hw": {}})
    d_led = nics.setdefault(dst[0], {}).setdefault(dst[1], {"stats": {}, "hw": {}})
    _add(s_led["stats"], "tx_prio%d_bytes" % p_tx, wire)
    _add(s_led["stats"], "tx_prio%d_packets" % p_tx, packets)
    queues = [_switch_queue(qos, faults, sw, dscp) for sw, _i, _e in hops]
    for (sw, ingress, egress), queue in zip(hops, queues):
        port = switches.setdefault(sw, {})
        _addq(port.setdefault(egress, {}), "tx_packets", queue, packets)
        _addq(port[egress], "tx_bytes", queue, wire)
        _add(port[egress], "tx_octets", wire)
        _add(port.setdefault(ingress, {}), "rx_octets", wire)
    # congestion where the receiver's leaf sends to it (the last hop's egress queue)
    last_sw, last_in, last_out = hops[-1]
    q_last = queues[-1]
    first_sw, first_in, _first_out = hops[0]
    lossless_switches = all(q == queues[0] and q in qos["pfc"] for q in queues)
    nic_lossless = p_tx == queues[0] and bool(snic["pfc"][p_tx])
    pauses = drops = marks = 0
    if lossless_switches:
        # the congested queue pauses its upstream hop by hop back to the sender's NIC
        pauses = packets // PAUSE_EVERY
        for i, (sw, ingress, _egress) in enumerate(hops):
            _addq(switches[sw][ingress], "pfc_tx", queues[i], pauses)
            if i:
                prev_sw, _pi, prev_out = hops[i - 1]
                _addq(switches[prev_sw][prev_out], "pfc_rx", queues[i], pauses)
        _add(s_led["stats"], "rx_prio%d_pause" % queues[0], pauses)
        _add(s_led["stats"], "rx_prio%d_pause_duration" % queues[0], pauses * PAUSE_QUANTA)
        if not nic_lossless:
            # the NIC sends on another priority (or without PFC there): the pauses do not stop it and the
            # lossless ingress buffer of the first switch overflows
            drops = packets // DROP_EVERY
            _addq(switches[first_sw][first_in], "pg_discards", queues[0], drops)
            _add(switches[first_sw][first_in], "in_discards", drops)
    else:
        drops = packets // DROP_EVERY  # a lossy queue congests: tail drops where the leaf sends to the receiver
        _addq(switches[last_sw][last_out], "queue_drops", q_last, drops)
        _add(switches[last_sw][last_out], "out_discards", drops)
    if qos["ecn"] and q_last == qos["priority"]:
        marks = (packets - drops) // MARK_EVERY
        _addq(switches[last_sw][last_out], "ecn_marked", q_last, marks)
    delivered = packets - drops
    _add(d_led["stats"], "rx_prio%d_bytes" % p_rx, wire - drops * (MTU_PAYLOAD + HEADER_BYTES))
    _add(d_led["stats"], "rx_prio%d_packets" % p_rx, delivered)
    if drops:  # go-back-N: the responder sees a gap, the requester a NAK (mlx5 hw_counters)
        _add(d_led["hw"], "out_of_sequence", drops)
        _add(s_led["hw"], "packet_seq_err", drops)
    cnps = 0
    if marks:
        _add(d_led["hw"], "np_ecn_marked_roce_packets", marks)
        if dnic["np"][p_rx] and not _fault(faults, "no_dcqcn", "nic", d_name):
            cnps = marks  # one CNP per marked packet (lab choice; a real NP rate-limits them)
    cnp = {"cnps": cnps}
    if cnps:
        c_prio = dnic["cnp_priority"] if dnic["cnp_priority"] is not None else p_rx
        c_dscp = dnic["cnp_dscp"]
        _add(d_led["hw"], "np_cnp_sent", cnps)
        _add(d_led["stats"], "tx_prio%d_packets" % c_prio, cnps)
        _add(d_led["stats"], "tx_prio%d_bytes" % c_prio, cnps * CNP_BYTES)
        back = _hops(fabric, dst, src, launch)
        c_queues = [_switch_queue(qos, faults, sw, c_dscp) for sw, _i, _e in back]
        for (sw, ingress, egress), queue in zip(back, c_queues):
            port = switches.setdefault(sw, {})
            _addq(port.setdefault(egress, {}), "tx_packets", queue, cnps)
            _addq(port[egress], "tx_bytes", queue, cnps * CNP_BYTES)
            _add(port[egress], "tx_octets", cnps * CNP_BYTES)
            _add(port.setdefault(ingress, {}), "rx_octets", cnps * CNP_BYTES)
        c_rx = snic["dscp_map"].get(c_dscp, 0) if s_trust == "dscp" else 0
        _add(s_led["stats"], "rx_prio%d_packets" % c_rx, cnps)
        _add(s_led["stats"], "rx_prio%d_bytes" % c_rx, cnps * CNP_BYTES)
        if snic["rp"][p_tx] and not _fault(faults, "no_dcqcn", "nic", s_name):
            _add(s_led["hw"], "rp_cnp_handled", cnps)
        else:
            _add(s_led["hw"], "rp_cnp_ignored", cnps)
        cnp.update(cnp_priority=c_prio, cnp_dscp=c_dscp, cnp_queues=c_queues, cnp_rx_priority=c_rx)
    return {"dscp": dscp, "tx_priority": p_tx, "rx_priority": p_rx, "hops": hops, "queues": queues, "packets": packets,
            "pauses": pauses, "drops": drops, "marks": marks, **cnp}


# ---------------------------------------------------------------------------
# a launch
# ---------------------------------------------------------------------------


def launch_bytes(collective: str, args: dict, nhosts: int) -> int:
    """RDMA payload bytes one host sends over the network in this launch, all its NICs together: for every size of
    the sweep, (warmup + 2 x iters: out-of-place and in-place) runs, each moving size x the collective's bus factor
    over the hosts' ring (intra-host traffic rides NVLink). A lab choice: the ring algorithm's volume."""
    if nhosts < 2:
        return 0
    factor = perfmodel.BUS_FACTOR.get(collective, perfmodel.BUS_FACTOR["all_reduce"])(nhosts)
    runs = args["warmup"] + 2 * args["iters"] * max(1, args.get("agg", 1))
    return int(sum(size * factor * runs for size in perfmodel._sizes(args)))  # pylint: disable=protected-access


def ledger_for(run_dir: str, config: dict, collective: str, hosts: list[str], procs: dict[str, int], args: dict,
               env: dict, launch: Any = 0) -> tuple[dict, list[dict]]:
    """(ledger, decisions) of one launch over these hosts (rank order) with procs MPI processes each."""
    with open(os.path.join(run_dir, "wiring.json"), encoding="utf-8") as handle:
        fabric = perfmodel.Fabric(json.load(handle)["links"], (), 0.0)
    hosts = [h for h in hosts if procs.get(h) and h in fabric.host_nics]
    if len(hosts) < 2 or config["qos"].get("transport", "roce") != "roce":
        return {}, []  # one host rides NVLink; an InfiniBand lab has no RoCE classes (ibsim keeps its own counters)
    ngpus = max(1, args["ngpus"]) * max(1, args["nthreads"])
    visible = [int(x) for x in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if x.strip().isdigit()]
    gpus = {h: [visible[i] if i < len(visible) else i for i in range(procs[h] * ngpus)] for h in hosts}
    nics = perfmodel.job_nics(fabric, hosts, gpus, env.get("NCCL_IB_HCA"))
    views = load_hosts(run_dir, hosts)
    rails = min(len(v) for v in nics.values())
    per_nic = launch_bytes(collective, args, len(hosts)) // rails
    ledger: dict = {}
    decisions = []
    for rail in range(rails):
        for i, host in enumerate(hosts):
            nxt = hosts[(i + 1) % len(hosts)]
            src, dst = (host, nics[host][rail]), (nxt, nics[nxt][rail])
            if src[1] not in views.get(host, {}) or dst[1] not in views.get(nxt, {}):
                continue  # a host or NIC the host simulator does not model
            try:
                decision = edge(ledger, fabric, views, config, src, dst, per_nic, env, launch)
            except perfmodel.PerfModelError as exc:
                # no path (a cable lab_cabling_faults unplugged): nothing crosses it; the launch's own output says
                # so where the performance model prints it, a replayed log does not (as before the ledger)
                decisions.append({"src": "%s:%s" % src, "dst": "%s:%s" % dst, "skipped": str(exc)})
                continue
            decisions.append({"src": "%s:%s" % src, "dst": "%s:%s" % dst, **decision})
    return ledger, decisions


def apply(run_dir: str, ledger: dict, switch_sink: Any = None) -> None:
    """Add the ledger to the host trees (ethtool stats in the hostsim state under mlx5 names, hw_counters files)
    and to the switch simulators (their control API, ``add``), or to switch_sink(switch, port, counters)."""
    for host, nics in sorted((ledger.get("nics") or {}).items()):
        root = host_root(run_dir, host)
        lock_path = os.path.join(root, ".hostsim", "traffic.lock")
        with open(lock_path, "a", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # two launches at once must not lose each other's counts
            state = tree.load(root)
            by_name = {v["name"]: netdev for netdev, v in state["nics"].items()}
            for nic, moved in sorted(nics.items()):
                stats = state["nics"][by_name[nic]]["stats"]
                for key, value in moved["stats"].items():
                    stats[key] = stats.get(key, 0) + value
                names = HW_NAMES.get(state.get("stack", ""), {})
                for key, value in moved["hw"].items():
                    rel = "sys/class/infiniband/%s/ports/1/hw_counters/%s" % (nic, names.get(key, key))
                    if not os.path.exists(os.path.join(root, rel)):
                        continue
                    now = _int(_read(root, rel), 0) or 0
                    with open(os.path.join(root, rel), "w", encoding="utf-8") as handle:
                        handle.write("%d\n" % (now + value))
            tree.save(root, state)
    switches = ledger.get("switches") or {}
    if not switches:
        return
    if switch_sink is None:
        try:
            with open(os.path.join(run_dir, SWITCHSIM_STATE), encoding="utf-8") as handle:
                url = json.load(handle)["control"]["url"]
        except FileNotFoundError:
            return  # no switch simulator in this lab run: the hosts' counters only

        def switch_sink(switch: str, port: str, counters: dict) -> None:
            call_json(url, "POST", "/switches/%s/counters" % switch, {"port": port, "counters": counters, "add": True})
    for switch, ports in sorted(switches.items()):
        for port, counters in sorted(ports.items()):
            switch_sink(switch, port, counters)


def record_launch(run_dir: str | None, collective: str, hosts: list[str], procs: dict[str, int], test_args: list[str],
                  env: dict, launch: Any = 0) -> list[dict]:
    """The launchers' hook: move the counters of this nccl-tests job; its decisions (empty: no lab traffic config,
    one host or no modelled host)."""
    if not run_dir:
        return []
    config = load_config(run_dir)
    if config is None:
        return []
    ledger, decisions = ledger_for(run_dir, config, collective, hosts, procs, perfmodel.parse_test_args(test_args), env, launch)
    apply(run_dir, ledger)
    with open(os.path.join(run_dir, "traffic-launches.jsonl"), "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"collective": collective, "hosts": hosts, "decisions": decisions}) + "\n")
    return decisions


def record_mpijob(run_dir: str | None, job: dict, workers: list[dict]) -> list[dict]:
    """record_launch for a k8sim MPIJob: its launcher's mpirun command and env, its workers' nodes."""
    container = ((job["spec"]["mpiReplicaSpecs"]["Launcher"].get("template") or {}).get("spec") or {}).get("containers", [{}])[0]
    words = perfmodel.mpirun_words(list(container.get("command") or []) + list(container.get("args") or []))
    env = {e["name"]: str(e.get("value", "")) for e in container.get("env") or [] if "name" in e}
    slots = int(job["spec"].get("slotsPerWorker", 1))
    procs: dict[str, int] = {}
    left = words["np"] if words["np"] is not None else slots * len(workers)
    for worker in workers:
        node = (worker.get("spec") or {}).get("nodeName")
        take = min(slots, left)
        if node and take:
            procs[node] = procs.get(node, 0) + take
        left -= take
    return record_launch(run_dir, words["collective"], list(procs), procs, words["args"], env)


def main(argv: list[str]) -> int:
    """traffic.py RUN_DIR [FAULTS_JSON]: change lab_traffic_faults of a running lab (the next launches follow it;
    the intent's classes stay as the launcher wrote them). No FAULTS_JSON: no faults."""
    if not argv or len(argv) > 2:
        print("usage: traffic.py RUN_DIR [FAULTS_JSON]", file=sys.stderr)
        return 2
    run_dir = argv[0]
    try:
        config = load_config(run_dir)
        if config is None:
            raise TrafficError("%s has no %s (start the lab with tests/lab/launcher.py first)" % (run_dir, FILE))
        with open(os.path.join(run_dir, "wiring.json"), encoding="utf-8") as handle:
            links = json.load(handle)["links"]
        config["faults"] = validate_faults(json.loads(argv[1]) if len(argv) > 1 else [], links)
        with open(os.path.join(run_dir, FILE), "w", encoding="utf-8") as handle:
            json.dump(config, handle, indent=1)
    except (OSError, ValueError, KeyError) as exc:  # TrafficError is a ValueError
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
