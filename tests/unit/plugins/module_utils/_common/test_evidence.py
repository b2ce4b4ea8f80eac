# SPDX-License-Identifier: GPL-3.0-or-later
"""_evidence: did the benchmark ride the lossless class? One test per rule, from snapshots (issue 34)."""

from __future__ import annotations

import pytest

from ansible_collections.lossless.fabric.plugins.filter.launch_ports import launch_ports as launch_ports_filter
from ansible_collections.lossless.fabric.plugins.module_utils._common import _evidence, _snapshot

# DSCP 26 -> priority 3 (ToS 104 = 26 << 2), CNP DSCP 48 -> priority 6, PFC on 3.
HOST = {"kind": "host", "transport": "roce", "dscp_map": {"26": 3, "48": 6}, "traffic_class": 104, "pfc_priorities": [3],
        "cnp": {"dscp": 48, "priority": 6}}
SWITCH = {"kind": "switch", "pfc_priorities": [3], "ecn_queue": 3, "cnp": {"priority": 6, "queue": 6}, "dscp_map": {"26": 3, "48": 6}}
PLANS = {"gpu1": HOST, "gpu2": HOST, "leaf1": SWITCH, "leaf2": SWITCH, "spine1": SWITCH}
GB = 10**9
T0, T1 = "2025-06-01T12:00:00+00:00", "2025-06-01T12:05:00+00:00"


def mode(plan, name):
    return dict(plan, mode=name)


def sw(ports, device="leaf1", at=T0):
    return _snapshot.snapshot(device, "eos", ports, {}, taken_at=at)


def nic(ports, device="gpu1", at=T0):
    return _snapshot.snapshot(device, "mlnx", ports, {}, taken_at=at, kind="nic", names=("tx_prio_bytes", "np_cnp_sent", "rp_cnp_handled"))


def run(switch_after=None, nic_after=None, plans=None, ports=None, opts=None, switch_before=None, nic_before=None):
    """judge() of one launch: counters zero before, the given ones after."""
    sb = switch_before or {d: sw({p: _zero(c) for p, c in v.items()}, d) for d, v in (switch_after or {}).items()}
    nb = nic_before or {d: nic({p: _zero(c) for p, c in v.items()}, d) for d, v in (nic_after or {}).items()}
    sa = {d: sw(v, d, T1) for d, v in (switch_after or {}).items()}
    na = {d: nic(v, d, T1) for d, v in (nic_after or {}).items()}
    return _evidence.judge(sb, sa, nb, na, plans or PLANS, ports, opts)


def _zero(counters):
    return {k: ({i: 0 for i in v} if isinstance(v, dict) else (0 if isinstance(v, int) else v)) for k, v in counters.items()}


def kinds(out, severity=None):
    return sorted({f["kind"] for f in out["findings"] if severity is None or f["severity"] == severity})


def one(out, kind):
    found = [f for f in out["findings"] if f["kind"] == kind]
    assert len(found) == 1, out["findings"]
    return found[0]


GOOD_NIC = {"tx_prio_bytes": {"3": 99 * GB, "0": GB // 10, "6": 10**6}, "rx_prio_bytes": {"3": 98 * GB}, "tx_prio_packets": {"6": 500},
            "pfc_rx_frames": {"3": 10}, "pfc_tx_frames": {"3": 0}, "np_cnp_sent": 400, "rp_cnp_handled": 300, "np_ecn_marked_roce_packets": 400}
GOOD_PORT = {"queue_tx_bytes": {"3": 99 * GB, "0": 10**5, "6": 10**6}, "ecn_marked": {"3": 400, "0": 0}, "pfc_tx_frames": {"3": 20},
             "pfc_rx_frames": {"3": 0, "0": 0}, "queue_drops": {"3": 0, "0": 0}, "watchdog_storms": {"3": 0}}


def test_a_clean_run_has_no_finding_and_fills_every_summary():
    out = run({"leaf1": {"swp1": GOOD_PORT}}, {"gpu1": {"mlx5_0": GOOD_NIC}})
    assert out["findings"] == []
    host = out["hosts"]["gpu1"]["mlx5_0"]
    assert host["roce_priority"] == "3" and host["cnp_priority"] == "6" and host["roce_share"] > 0.99
    assert host["cnp_sent"] == 400 and host["cnp_handled"] == 300 and host["findings"] == []
    port = out["switches"]["leaf1"]["swp1"]
    assert port["roce_queue"] == "3" and port["by_queue_counter"] == "queue_tx_bytes" and port["roce_share"] > 0.99
    assert port["ecn_by_queue"] == {"3": 400, "0": 0} and port["drops_by_queue"] == {"3": 0, "0": 0}
    assert out["modes"] == {"leaf1": "lossless", "gpu1": "lossless"}


def test_roce_bytes_off_the_priority_block_naming_the_priority_and_the_cause():
    # NCCL_IB_TC not set: the run rides priority 0.
    out = run(nic_after={"gpu1": {"mlx5_0": dict(GOOD_NIC, tx_prio_bytes={"3": GB, "0": 90 * GB})}})
    f = one(out, "roce_off_priority")
    assert f["severity"] == "blocking" and f["device"] == "gpu1" and f["port"] == "mlx5_0" and f["counter"] == "tx_prio_bytes"
    assert f["index"] == "0" and f["value"] == 90 * GB and "NCCL_IB_TC" in f["message"] and "trust" in f["message"]
    # Another priority: the DSCP map.
    out = run(nic_after={"gpu1": {"mlx5_0": dict(GOOD_NIC, tx_prio_bytes={"3": GB, "4": 90 * GB})}})
    assert one(out, "roce_off_priority")["index"] == "4" and "dscp_map" in one(out, "roce_off_priority")["message"]


def test_the_share_is_configurable_in_percent_or_as_a_fraction():
    counters = {"gpu1": {"mlx5_0": dict(GOOD_NIC, tx_prio_bytes={"3": 90 * GB, "0": 10 * GB})}}
    assert "roce_off_priority" in kinds(run(nic_after=counters))
    assert kinds(run(nic_after=counters, opts={"share": 85})) == []
    assert kinds(run(nic_after=counters, opts={"share": 0.85})) == []
    with pytest.raises(ValueError, match="share"):
        _evidence.settings({"share": 150})
    with pytest.raises(ValueError, match="unknown key"):
        _evidence.settings({"shares": 0.9})


def test_a_quiet_nic_is_a_warning_not_a_pass():
    out = run(nic_after={"gpu1": {"mlx5_0": dict(GOOD_NIC, tx_prio_bytes={"3": 10, "0": 5})}})
    assert kinds(out, "blocking") == [] and one(out, "no_traffic")["severity"] == "warning"
    assert out["hosts"]["gpu1"]["mlx5_0"]["roce_share"] is None


def test_cnps_off_the_cnp_priority_block():
    out = run(nic_after={"gpu1": {"mlx5_0": dict(GOOD_NIC, np_cnp_sent=400, tx_prio_packets={"6": 3})}})
    f = one(out, "cnp_off_priority")
    assert f["severity"] == "blocking" and f["index"] == "6" and f["value"] == 400 and f["counter"] == "np_cnp_sent"


def test_ecn_marks_without_cnps_handled_at_the_senders_block():
    # CNPs were sent (np_cnp_sent) but no sender handled one: DCQCN does not react.
    out = run({"leaf1": {"swp1": GOOD_PORT}}, {"gpu1": {"mlx5_0": dict(GOOD_NIC, rp_cnp_handled=0)}})
    f = one(out, "ecn_without_cnp")
    assert f["severity"] == "blocking" and f["counter"] == "rp_cnp_handled" and "leaf1 swp1 (400)" in f["message"]


def test_one_nic_receiving_marks_and_sending_no_cnp_blocks_naming_it():
    # the other NICs answer (the fabric-wide rule sees CNPs handled); this one has DCQCN off (lab: no_dcqcn)
    quiet = dict(GOOD_NIC, np_cnp_sent=0, np_ecn_marked_roce_packets=262, tx_prio_packets={"6": 0})
    out = run({"leaf1": {"swp1": GOOD_PORT}}, {"gpu1": {"mlx5_0": GOOD_NIC}, "gpu2": {"mlx5_1": quiet}})
    f = one(out, "ecn_unanswered")
    assert f["severity"] == "blocking" and (f["device"], f["port"], f["value"]) == ("gpu2", "mlx5_1", 262)
    assert "ecn_without_cnp" not in kinds(out)
    # pfc_only marks nothing by plan: not judged there; a NIC that reads no np_cnp_sent: not judged (not available)
    plans = dict(PLANS, gpu2=mode(HOST, "pfc_only"))
    assert "ecn_unanswered" not in kinds(run(nic_after={"gpu2": {"mlx5_1": quiet}}, plans=plans))
    unread = {k: v for k, v in quiet.items() if k != "np_cnp_sent"}
    assert "ecn_unanswered" not in kinds(run(nic_after={"gpu2": {"mlx5_1": unread}}))


def test_ecn_marks_and_nothing_that_counts_cnps_is_a_warning():
    port = dict(GOOD_PORT)
    out = run({"leaf1": {"swp1": port}})
    assert one(out, "ecn_cnp_unknown")["severity"] == "warning"


def test_drops_on_a_lossless_queue_block_and_lossy_drops_do_not():
    out = run({"leaf1": {"swp1": dict(GOOD_PORT, queue_drops={"3": 7, "0": 50})}})
    f = one(out, "lossless_drop")
    assert (f["device"], f["port"], f["counter"], f["index"], f["value"]) == ("leaf1", "swp1", "queue_drops", "3", 7)


def test_pg_discards_on_a_lossless_priority_group_block():
    out = run({"leaf1": {"swp1": dict(GOOD_PORT, pg_discards={"3": 2})}})
    assert one(out, "lossless_drop")["counter"] == "pg_discards"


def test_a_nic_dropping_on_its_lossless_priority_blocks():
    out = run(nic_after={"gpu1": {"mlx5_0": dict(GOOD_NIC, rx_prio_buf_discard={"3": 4, "0": 9})}})
    f = one(out, "lossless_drop")
    assert (f["device"], f["port"], f["counter"], f["index"], f["value"]) == ("gpu1", "mlx5_0", "rx_prio_buf_discard", "3", 4)


def test_pauses_on_a_lossy_priority_are_named():
    out = run({"leaf1": {"swp1": dict(GOOD_PORT, pfc_rx_frames={"3": 0, "0": 12})}})
    f = one(out, "lossy_pause")
    assert f["index"] == "0" and f["value"] == 12 and f["severity"] == "warning"
    out = run(nic_after={"gpu1": {"mlx5_0": dict(GOOD_NIC, pfc_rx_frames={"3": 0, "1": 4})}})
    assert one(out, "lossy_pause")["device"] == "gpu1"


def test_watchdog_storms_block():
    out = run({"leaf1": {"swp1": dict(GOOD_PORT, watchdog_storms={"3": 2})}})
    assert one(out, "watchdog_storm")["value"] == 2


def test_pauses_without_any_ecn_mark_on_that_queue_block():
    out = run({"leaf1": {"swp1": dict(GOOD_PORT, ecn_marked={"3": 0, "0": 0}, pfc_tx_frames={"3": 30}),
                         "swp2": dict(GOOD_PORT, ecn_marked={"3": 0, "0": 0}, pfc_tx_frames={"3": 5})}})
    f = one(out, "pause_without_ecn")
    assert f["device"] == "leaf1" and f["index"] == "3" and f["value"] == 35 and "swp1 30" in f["message"]
    # A mark anywhere on the switch's queue 3: ECN reacts before the pause point somewhere, no finding.
    out = run({"leaf1": {"swp1": dict(GOOD_PORT, pfc_tx_frames={"3": 30}), "swp2": dict(GOOD_PORT, ecn_marked={"3": 0, "0": 0})}},
              {"gpu1": {"mlx5_0": GOOD_NIC}})
    assert "pause_without_ecn" not in kinds(out)


def test_roce_on_another_switch_queue_blocks_the_switch_map():
    out = run({"leaf1": {"swp1": dict(GOOD_PORT, queue_tx_bytes={"3": 0, "0": 99 * GB, "6": 10**6})}}, {"gpu1": {"mlx5_0": GOOD_NIC}})
    f = one(out, "roce_off_queue")
    assert (f["device"], f["port"], f["counter"], f["index"]) == ("leaf1", "swp1", "queue_tx_bytes", "0") and "switch map" in f["message"]
    # Packets where the platform counts no bytes.
    port = {k: v for k, v in GOOD_PORT.items() if k != "queue_tx_bytes"}
    port["queue_tx_packets"] = {"3": 10, "0": 10**6}
    out = run({"leaf1": {"swp1": port}}, {"gpu1": {"mlx5_0": GOOD_NIC}})
    assert one(out, "roce_off_queue")["counter"] == "queue_tx_packets"


def test_a_counter_a_platform_cannot_read_is_not_available_never_zero():
    port = {k: v for k, v in GOOD_PORT.items() if k not in ("queue_tx_bytes", "ecn_marked", "queue_drops")}
    out = run({"leaf1": {"swp1": port}}, {"gpu1": {"mlx5_0": {k: v for k, v in GOOD_NIC.items() if k != "tx_prio_bytes"}}})
    summary = out["switches"]["leaf1"]["swp1"]
    assert summary["roce_share"] is None and summary["by_queue"] is None and summary["ecn_marked"] is None
    assert summary["lossless_drops"] is None and summary["drops_by_queue"] is None
    assert out["hosts"]["gpu1"]["mlx5_0"]["tx_bytes"] is None and out["hosts"]["gpu1"]["mlx5_0"]["roce_share"] is None
    assert "queue_drops" in out["not_available"]["leaf1"] and "tx_prio_bytes" in out["not_available"]["gpu1"]
    # pause_without_ecn needs the marks: without them it does not speak.
    assert "pause_without_ecn" not in kinds(out) and "roce_off_queue" not in kinds(out)


def test_a_device_not_read_is_named():
    before = {"leaf1": sw({"swp1": _zero(GOOD_PORT)})}
    after = {"leaf1": {"failed": True, "msg": "leaf1: timed out"}}
    out = _evidence.judge(before, after, {}, {"gpu1": None}, PLANS)
    assert [(f["kind"], f["device"]) for f in out["findings"]] == [("no_counters", "leaf1"), ("no_counters", "gpu1")]


def test_only_the_ports_the_launch_crosses_are_judged():
    out = run({"leaf1": {"swp1": GOOD_PORT, "swp9": dict(GOOD_PORT, queue_drops={"3": 9})}}, {"gpu1": {"mlx5_0": GOOD_NIC}},
              ports={"leaf1": ["swp1"]})
    assert list(out["switches"]["leaf1"]) == ["swp1"] and out["findings"] == []
    # a crossed port the snapshots do not hold is named, not skipped in silence
    out = run({"leaf1": {"swp1": GOOD_PORT}}, {"gpu1": {"mlx5_0": GOOD_NIC}}, ports={"leaf1": ["swp1", "swp31"]})
    assert [(f["kind"], f["severity"], f["port"]) for f in out["findings"]] == [("port_unread", "warning", "swp31")]


def test_ecn_only_drops_within_the_bound_are_info_above_it_block_and_retransmissions_are_the_evidence():
    plans = dict(PLANS, leaf1=mode(dict(SWITCH, pfc_priorities=[]), "ecn_only"), gpu1=mode(dict(HOST, pfc_priorities=[]), "ecn_only"))
    port = dict(GOOD_PORT, pfc_tx_frames={"3": 0}, queue_drops={"3": 200, "0": 0})
    quiet_nic = dict(GOOD_NIC, pfc_rx_frames={"3": 0}, out_of_sequence=20, packet_seq_err=5)
    out = run({"leaf1": {"swp1": port}}, {"gpu1": {"mlx5_0": quiet_nic}}, plans=plans)
    assert kinds(out, "blocking") == [] and one(out, "roce_drops")["severity"] == "info"
    assert one(out, "retransmissions")["severity"] == "info" and one(out, "retransmissions")["value"] == 25
    out = run({"leaf1": {"swp1": dict(port, queue_drops={"3": 5000})}}, {"gpu1": {"mlx5_0": dict(quiet_nic, out_of_sequence=4000)}},
              plans=plans, opts={"max_drops": 1000})
    assert one(out, "roce_drops")["severity"] == "blocking" and one(out, "roce_drops")["value"] == 5000
    assert one(out, "retransmissions")["severity"] == "blocking"
    assert out["modes"]["leaf1"] == "ecn_only"


def test_ecn_only_any_pause_is_a_finding():
    plans = dict(PLANS, leaf1=mode(dict(SWITCH, pfc_priorities=[]), "ecn_only"), gpu1=mode(dict(HOST, pfc_priorities=[]), "ecn_only"))
    out = run({"leaf1": {"swp1": dict(GOOD_PORT, pfc_tx_frames={"3": 0}, pfc_rx_frames={"3": 0, "0": 3})}},
              {"gpu1": {"mlx5_0": dict(GOOD_NIC, pfc_rx_frames={"3": 8})}}, plans=plans)
    found = [f for f in out["findings"] if f["kind"] == "pause_in_ecn_only"]
    assert sorted((f["device"], f["counter"], f["index"], f["value"]) for f in found) == [
        ("gpu1", "pfc_rx_frames", "3", 8), ("leaf1", "pfc_rx_frames", "0", 3)]
    assert all(f["severity"] == "blocking" for f in found) and "lossy_pause" not in kinds(out)


def test_pfc_only_marks_are_a_finding_and_missing_cnps_are_not():
    plans = dict(PLANS, leaf1=mode(SWITCH, "pfc_only"), gpu1=mode(HOST, "pfc_only"))
    out = run({"leaf1": {"swp1": GOOD_PORT}}, {"gpu1": {"mlx5_0": dict(GOOD_NIC, np_cnp_sent=0, rp_cnp_handled=0)}}, plans=plans)
    f = one(out, "ecn_in_pfc_only")
    assert f["severity"] == "blocking" and f["index"] == "3" and f["value"] == 400
    assert "ecn_without_cnp" not in kinds(out) and "pause_without_ecn" not in kinds(out)
    # No marks: nothing to say about CNPs either.
    out = run({"leaf1": {"swp1": dict(GOOD_PORT, ecn_marked={"3": 0, "0": 0})}},
              {"gpu1": {"mlx5_0": dict(GOOD_NIC, np_cnp_sent=0, rp_cnp_handled=0)}}, plans=plans)
    assert out["findings"] == []


CABLING = {
    "hosts": {"gpu1": {"nics": {"mlx5_0": {"peer": {"host": "leaf1", "port": "swp1"}}, "mlx5_1": {"peer": {"host": "leaf2", "port": "et-0/0/1"}}}},
              "gpu2": {"nics": {"mlx5_0": {"peer": {"host": "leaf1", "port": "swp2"}}, "mlx5_1": {"peer": {"host": "leaf2", "port": "et-0/0/2"}}}}},
    "switches": {"leaf1": {"ports": {"swp1": {"peer": {"host": "gpu1", "nic": "mlx5_0"}}, "swp2": {"peer": {"host": "gpu2", "nic": "mlx5_0"}},
                                     "swp31": {"peer": {"host": "spine1", "port": "Ethernet1/1"}}}},
                 "leaf2": {"ports": {"et-0/0/1": {"peer": {"host": "gpu1", "nic": "mlx5_1"}}, "et-0/0/2": {"peer": {"host": "gpu2", "nic": "mlx5_1"}},
                                     "et-0/0/31": {"peer": {"host": "spine1", "port": "Ethernet2/1"}}}},
                 "leaf3": {"ports": {"Ethernet0": {"peer": {"host": "spine1", "port": "Ethernet3/1"}}}}},
}


def test_launch_ports_are_the_hosts_leaf_ports_and_the_uplinks_when_the_launch_crosses_leaves():
    assert launch_ports_filter(CABLING, PLANS, ["gpu1", "gpu2"]) == {
        "leaf1": ["swp1", "swp2", "swp31"], "leaf2": ["et-0/0/1", "et-0/0/2", "et-0/0/31"], "spine1": ["Ethernet1/1", "Ethernet2/1"]}
    one_leaf = {"hosts": {"gpu1": {"nics": {"mlx5_0": {"peer": {"host": "leaf1", "port": "swp1"}}}},
                          "gpu2": {"nics": {"mlx5_0": {"peer": {"host": "leaf1", "port": "swp2"}}}}}, "switches": CABLING["switches"]}
    assert _evidence.launch_ports(one_leaf, PLANS, ["gpu1", "gpu2"]) == {"leaf1": ["swp1", "swp2"]}
    assert _evidence.launch_ports({}, PLANS, ["gpu1"]) == {}
