# SPDX-License-Identifier: GPL-3.0-or-later
"""_findings: counter findings of a change window's phases, what happened to
each device, and the window's verdict."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.lossless.fabric.plugins.filter.change_findings import FilterModule, change_findings
from ansible_collections.lossless.fabric.plugins.module_utils._common import _evidence, _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._window import _findings

PLAN = {"kind": "switch", "pfc_priorities": [3], "ecn_queue": 3, "cnp": {"queue": 6}}
PLANS = {"leaf1": PLAN, "spine1": PLAN}


def snap(ports, device="leaf1", at="2025-06-01T12:00:00+00:00"):
    return _snapshot.snapshot(device, "eos", ports, {}, taken_at=at)


def quiet(device="leaf1"):
    return snap({"Ethernet1": {"queue_drops": {"3": 10, "0": 5}, "pg_discards": {"3": 0}, "ecn_marked": {"3": 100},
                               "pfc_rx_frames": {"3": 50, "0": 0}, "watchdog_storms": {"3": 1}, "watchdog_status": {"3": "OK"},
                               "cnp_packets": 40}}, device)


def after(changes, device="leaf1"):
    """quiet() with the given counters added on Ethernet1, an hour later."""
    ports = {"Ethernet1": dict(quiet(device)["ports"]["Ethernet1"])}
    for name, value in changes.items():
        base = ports["Ethernet1"].get(name)
        if isinstance(value, dict):
            ports["Ethernet1"][name] = {k: (base or {}).get(k, 0) + value.get(k, 0) for k in set(base or {}) | set(value)}
        elif isinstance(value, str):
            ports["Ethernet1"][name] = value
        else:
            ports["Ethernet1"][name] = (base or 0) + value
    return snap(ports, device, at="2025-06-01T13:00:00+00:00")


def kinds(found, severity=None):
    return sorted(f["kind"] for f in found if severity is None or f["severity"] == severity)


def test_a_quiet_phase_has_no_findings():
    assert _findings.counter_findings({"leaf1": quiet()}, {"leaf1": after({})}, PLANS, "post") == []


def test_drops_on_the_lossless_queue_block_and_name_port_counter_and_value():
    found = _findings.counter_findings({"leaf1": quiet()}, {"leaf1": after({"queue_drops": {"3": 7}})}, PLANS, "post")
    assert kinds(found) == ["lossless_drop"]
    assert found[0]["severity"] == "blocking"
    assert found[0]["message"] == "leaf1: Ethernet1: queue_drops[3] = 7 on lossless priority 3"
    assert (found[0]["port"], found[0]["counter"], found[0]["index"], found[0]["value"]) == ("Ethernet1", "queue_drops", "3", 7)


def test_drops_on_a_lossy_queue_are_not_findings():
    found = _findings.counter_findings({"leaf1": quiet()}, {"leaf1": after({"queue_drops": {"0": 1000}})}, PLANS, "post")
    assert found == []


@pytest.mark.parametrize("counter", ["wred_drops", "voq_drops", "pg_discards"])
def test_every_kind_of_drop_on_the_lossless_priority_blocks(counter):
    before = quiet()
    before["ports"]["Ethernet1"][counter] = {"3": 0}
    later = after({})
    later["ports"]["Ethernet1"][counter] = {"3": 2}
    assert kinds(_findings.counter_findings({"leaf1": before}, {"leaf1": later}, PLANS, "pre")) == ["lossless_drop"]


def test_a_watchdog_storm_blocks_and_so_does_a_deadlocked_queue():
    found = _findings.counter_findings({"leaf1": quiet()}, {"leaf1": after({"watchdog_storms": {"3": 2}})}, PLANS, "post")
    assert kinds(found, "blocking") == ["watchdog_storm"]
    assert "storm(s) on queue 3: 2" in found[0]["message"]
    found = _findings.counter_findings({"leaf1": quiet()}, {"leaf1": after({"watchdog_status": {"3": "DEADLOCK"}})}, PLANS, "post")
    assert kinds(found, "blocking") == ["watchdog_storm"]
    assert "DEADLOCK" in found[0]["message"]


def test_ecn_marks_without_any_cnp_block():
    found = _findings.counter_findings({"leaf1": quiet()}, {"leaf1": after({"ecn_marked": {"3": 500}})}, PLANS, "post")
    assert kinds(found) == ["ecn_without_cnp"]
    assert found[0]["severity"] == "blocking" and found[0]["device"] == "fabric" and found[0]["value"] == 500
    assert "leaf1 Ethernet1 (500)" in found[0]["message"]


def test_ecn_marks_answered_by_cnps_are_fine():
    found = _findings.counter_findings({"leaf1": quiet()}, {"leaf1": after({"ecn_marked": {"3": 500}, "cnp_packets": 30})}, PLANS, "post")
    assert found == []


def test_nic_cnp_counters_count_as_cnp_evidence():
    nic_pre = _snapshot.snapshot("gpu1", "mlnx", {"mlx5_0": {"np_cnp_sent": 10}}, {}, kind="nic")
    nic_post = _snapshot.snapshot("gpu1", "mlnx", {"mlx5_0": {"np_cnp_sent": 90}}, {}, kind="nic")
    before = {"leaf1": snap({"Ethernet1": {"ecn_marked": {"3": 0}}})}
    later = {"leaf1": snap({"Ethernet1": {"ecn_marked": {"3": 5}}})}
    assert _findings.counter_findings(before, later, PLANS, "post", {"gpu1": nic_pre}, {"gpu1": nic_post}) == []
    assert kinds(_findings.counter_findings(before, later, PLANS, "post")) == ["ecn_cnp_unknown"]
    assert kinds(_findings.counter_findings(before, later, PLANS, "post"), "warning") == ["ecn_cnp_unknown"]
    # a host that could not be read is a gap, named, not a failure
    found = _findings.counter_findings(before, later, PLANS, "post", {"gpu1": nic_pre, "gpu2": None},
                                       {"gpu1": nic_post, "gpu2": {"unreachable": True, "failed": True}})
    assert kinds(found) == ["no_nic_counters"] and found[0]["device"] == "gpu2" and found[0]["severity"] == "warning"


def test_pauses_on_a_priority_the_plan_keeps_lossy_are_a_warning():
    found = _findings.counter_findings({"leaf1": quiet()}, {"leaf1": after({"pfc_rx_frames": {"0": 12}})}, PLANS, "post")
    assert kinds(found, "warning") == ["lossy_pause"] and kinds(found, "blocking") == []


def test_a_reset_counter_is_a_warning_and_judged_from_the_reset():
    later = after({})
    later["ports"]["Ethernet1"]["queue_drops"] = {"3": 4, "0": 0}
    found = _findings.counter_findings({"leaf1": quiet()}, {"leaf1": later}, PLANS, "post")
    assert kinds(found) == ["counter_reset", "counter_reset", "lossless_drop"]
    assert any("went down from 10 to 4" in f["message"] for f in found)


@pytest.mark.parametrize("missing", [None, {"failed": True, "msg": "leaf1: connection refused"}, {"skipped": True}])
def test_a_device_without_both_snapshots_cannot_be_judged(missing):
    found = _findings.counter_findings({"leaf1": quiet(), "spine1": missing}, {"leaf1": after({}), "spine1": quiet("spine1")}, PLANS, "post")
    assert kinds(found) == ["no_counters"]
    assert found[0]["device"] == "spine1" and "before the post phase" in found[0]["message"]


def test_registered_switch_counters_results_are_read_too():
    found = _findings.counter_findings({"leaf1": {"changed": False, "counters": quiet()}},
                                       {"leaf1": {"changed": False, "counters": after({"queue_drops": {"3": 1}})}}, PLANS, "pre")
    assert kinds(found) == ["lossless_drop"] and found[0]["phase"] == "pre"


def test_phase_and_device_mix_ups_are_refused():
    with pytest.raises(ValueError, match="phase: 'during'"):
        _findings.counter_findings({}, {}, PLANS, "during")
    with pytest.raises(ValueError, match="one device"):
        _findings.counter_findings({"leaf1": quiet()}, {"leaf1": after({}, device="spine1")}, PLANS, "post")


def test_the_filter_is_the_function_and_turns_errors_into_filter_errors():
    assert FilterModule().filters()["change_findings"] is change_findings
    found = change_findings({"leaf1": after({"queue_drops": {"3": 1}})}, {"leaf1": quiet()}, PLANS, "post")
    assert kinds(found) == ["lossless_drop"]
    with pytest.raises(AnsibleFilterError, match="change_findings: .*one device"):
        change_findings({"leaf1": after({}, device="spine1")}, {"leaf1": quiet()}, PLANS, "post")


def test_port_summary_reads_the_lossless_priorities_and_the_roce_queue():
    delta = _snapshot.delta(after({"queue_drops": {"3": 2, "0": 9}, "ecn_marked": {"3": 7}, "pfc_rx_frames": {"3": 4, "0": 3}}), quiet())
    assert _findings.summarize(delta, PLAN)["Ethernet1"] == {
        "pfc_rx": 4, "pfc_tx": None, "ecn_marked": 7, "lossless_drops": 2, "watchdog_storms": 0, "cnp_packets": 0}


# ---------------------------------------------------------------------------
# what happened to each device

PUSHED = {"changed": True, "session": "s1", "device_state": "pending confirmation", "pending_until": "2025-06-01T12:30:00+00:00"}
CONFIRMED = {"changed": True, "session": "s1", "device_state": "committed", "pending": {"session": "s1", "remaining_s": 100}}
ROLLED = {"changed": True, "session": "s1", "device_state": "rolled back", "pending": {"session": "s1", "remaining_s": 100}}
NOTHING_PENDING = {"changed": False, "device_state": "unchanged", "pending": None, "msg": "leaf1: no pending commit"}
SKIPPED = {"changed": False, "skipped": True}


@pytest.mark.parametrize("push, settle, rollback, outcome", [
    (PUSHED, CONFIRMED, None, "kept"),
    (PUSHED, CONFIRMED, NOTHING_PENDING, "kept"),  # a later failure's roll-back cannot undo a confirm
    (PUSHED, ROLLED, None, "rolled back"),
    (PUSHED, SKIPPED, ROLLED, "rolled back"),
    (PUSHED, None, ROLLED, "rolled back"),
    (PUSHED, NOTHING_PENDING, None, "rolled back by timer"),
    (PUSHED, None, NOTHING_PENDING, "rolled back by timer"),
    (PUSHED, None, {"failed": True, "msg": "leaf1: connection lost"}, "unknown"),
    (PUSHED, None, None, "pending"),
    ({"changed": False, "device_state": "unchanged"}, SKIPPED, None, "unchanged"),
    (None, None, None, "unchanged"),
    (SKIPPED, None, None, "unchanged"),
    ({"failed": True, "device_state": "unchanged", "msg": "leaf1: line rejected"}, None, None, "unchanged"),
    ({"failed": True, "device_state": "rolled back", "msg": "leaf1: read-back lacks 1 line"}, None, NOTHING_PENDING, "rolled back"),
    ({"failed": True, "changed": True, "device_state": "unknown", "msg": "leaf1: connection lost"}, None, ROLLED, "rolled back"),
    ({"failed": True, "changed": True, "device_state": "unknown", "msg": "leaf1: connection lost"}, None, None, "unknown"),
    ({"failed": True, "device_state": "unknown", "msg": "leaf1: connection lost"}, None, NOTHING_PENDING, "unchanged"),
], ids=["confirmed", "confirmed-then-rescue", "rolled-back", "rescue-after-skip", "rescue", "timer-before-confirm", "timer-before-rescue",
        "rollback-failed", "pending", "nothing-to-change", "never-pushed", "push-skipped", "rejected-line", "readback-mismatch",
        "lost-after-commit-rolled-back", "lost-after-commit", "lost-while-committing"])
def test_device_outcome(push, settle, rollback, outcome):
    got = _findings.device_outcome(push, settle, rollback)
    assert got["outcome"] == outcome
    assert got["detail"]


def test_device_outcome_details_say_why():
    assert "timer" in _findings.device_outcome(PUSHED, NOTHING_PENDING)["detail"]
    assert "connection lost" in _findings.device_outcome(PUSHED, None, {"failed": True, "msg": "leaf1: connection lost"})["detail"]
    assert "2025-06-01T12:30:00+00:00" in _findings.device_outcome(PUSHED)["detail"]


def test_dry_run_outcomes():
    assert _findings.device_outcome(PUSHED, check_mode=True)["outcome"] == "would change"
    assert _findings.device_outcome({"changed": False}, check_mode=True)["outcome"] == "unchanged"


@pytest.mark.parametrize("status, outcomes, verdict", [
    ("passed", {"a": "kept", "b": "unchanged"}, "kept"),
    ("passed", {"a": "unchanged"}, "no change"),
    ("failed", {"a": "unchanged"}, "stopped"),
    ("stopped", {"a": "unchanged"}, "stopped"),
    ("failed", {"a": "rolled back", "b": "rolled back by timer"}, "rolled back"),
    ("passed", {"a": "kept", "b": "rolled back by timer"}, "partial"),
    ("failed", {"a": "kept", "b": "rolled back"}, "partial"),
    ("passed", {"a": "pending"}, "rolled back"),
    ("dry_run", {"a": "would change"}, "dry run"),
    ("in_progress", {"a": "pending"}, "in progress"),
])
def test_window_verdict(status, outcomes, verdict):
    assert _findings.window_verdict(status, outcomes) == verdict


# GPU hosts: nic_qos results (NICs have no commit timer)
NIC_APPLIED = {"changed": True, "nics": {"mlx5_0": {"changes": ["cnp"], "stack": "mlnx"}, "mlx5_1": {"changes": []}}}
NIC_RESTORED = {"changed": True, "nics": {"mlx5_0": {"changes": ["cnp"]}}, "unsupported": []}


@pytest.mark.parametrize(
    "apply, restore, check_mode, settled, outcome, detail",
    [
        (None, None, False, True, "unchanged", "the window ended before the NIC change"),
        ({"skipped": True}, None, False, True, "unchanged", "the window ended before the NIC change"),
        ({"changed": False, "nics": {}}, None, False, True, "unchanged", "nothing to change on the NICs"),
        (NIC_APPLIED, None, True, True, "would change", "dry run: would set mlx5_0: cnp"),
        (NIC_APPLIED, None, False, True, "applied", "set mlx5_0: cnp (nothing to confirm on NICs)"),
        (NIC_APPLIED, None, False, False, "applied, no automatic rollback", "NICs have no rollback timer"),
        (NIC_APPLIED, {"skipped": True}, False, True, "applied", "set mlx5_0: cnp"),
        (NIC_APPLIED, NIC_RESTORED, False, True, "restored", "restored from /r/gpu1.nic.json: mlx5_0: cnp"),
        (NIC_APPLIED, {"changed": False, "nics": {}}, False, True, "restored", "restored from /r/gpu1.nic.json: nothing differed"),
        (NIC_APPLIED, {"failed": True, "msg": "gpu1: dcb: exit 1"}, False, True, "unknown", "restore failed: gpu1: dcb: exit 1"),
        ({"failed": True, "msg": "mlx5_0 (eth2): write x: EACCES"}, NIC_RESTORED, False, True, "restored",
         "NIC change failed: mlx5_0 (eth2): write x: EACCES; restored"),
        ({"failed": True, "msg": "boom"}, None, False, True, "unknown", "NIC change failed: boom; not restored"),
    ],
    ids=["not-run", "skipped", "nothing", "dry-run", "applied", "in-progress", "restore-skipped", "restored", "restored-nothing",
         "restore-failed", "apply-failed-restored", "apply-failed-not-restored"],
)
def test_host_outcome(apply, restore, check_mode, settled, outcome, detail):
    got = _findings.host_outcome(apply, restore, check_mode, settled, "/r/gpu1.nic.json")
    assert got["outcome"] == outcome and detail in got["detail"], got


def test_host_outcome_names_what_could_not_be_restored():
    restore = dict(NIC_RESTORED, unsupported=[{"nic": "mlx5_0", "setting": "dscp_map", "reason": "not readable when gathered"}])
    assert "not restored: mlx5_0 dscp_map: not readable when gathered" in _findings.host_outcome(NIC_APPLIED, restore)["detail"]


@pytest.mark.parametrize(
    "status, outcomes, verdict",
    [
        ("passed", {"leaf1": "kept", "gpu1": "applied"}, "kept"),
        ("passed", {"leaf1": "unchanged", "gpu1": "applied"}, "kept"),
        ("failed", {"leaf1": "rolled back", "gpu1": "restored"}, "rolled back"),
        # a switch rolled back while a NIC keeps the change (its restore did not run): needs a person
        ("failed", {"leaf1": "rolled back", "gpu1": "applied"}, "partial"),
        ("failed", {"leaf1": "unchanged", "gpu1": "restored"}, "rolled back"),
        ("in_progress", {"leaf1": "pending", "gpu1": "applied, no automatic rollback"}, "in progress"),
    ],
)
def test_window_verdict_with_hosts(status, outcomes, verdict):
    assert _findings.window_verdict(status, outcomes) == verdict


# ---------------------------------------------------------------------------
# InfiniBand: two ib_fabric_facts snapshots of the fabric's PMA counters (perfquery), read from the SM host
# ---------------------------------------------------------------------------

HCA, LEAF = "0x0c42a10300010000", "0x0008f1332e695c00"
QUIET_PORT = {name: 0 for name in _findings.IB_ERROR_COUNTERS} | {"PortXmitWait": 100, "PortXmitData": 2736, "PortSelect": 1}


def ib(changes=None, leaf_port=None):
    """An ib_fabric_facts result of a 2-port fabric (gpu1's HCA port 1, leaf1 port 1), with ``changes`` added to the
    HCA port's counters; ``leaf_port`` None leaves the leaf's port unread."""
    hca = dict(QUIET_PORT)
    for name, value in (changes or {}).items():
        hca[name] = hca.get(name, 0) + value
    counters = {HCA + "/1": hca}
    if leaf_port is not False:
        counters[LEAF + "/1"] = dict(QUIET_PORT, **(leaf_port or {}))
    return {"changed": False, "ib_fabric": {"nodes": {HCA: {"type": "ca", "description": "gpu1 mlx5_0"},
                                                      LEAF: {"type": "switch", "description": "leaf1"}},
                                            "counters": counters, "errors": []}}


def test_a_quiet_infiniband_phase_has_no_findings_and_no_fabric_none():
    assert _findings.ib_counter_findings(ib(), ib(), "post") == []
    assert _findings.ib_counter_findings(None, None, "post") == []        # no InfiniBand fabric in scope
    assert _findings.counter_findings({}, {}, {}, "post", None, None, ib(), ib()) == []


@pytest.mark.parametrize("counter", ["SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
                                     "PortXmitDiscards", "PortRcvRemotePhysicalErrors", "LocalLinkIntegrityErrors",
                                     "ExcessiveBufferOverrunErrors", "VL15Dropped"])
def test_an_infiniband_error_counter_that_went_up_blocks_naming_node_port_and_counter(counter):
    found = _findings.ib_counter_findings(ib(), ib({counter: 3}), "post")
    assert [(f["severity"], f["kind"], f["phase"], f["device"], f["node"], f["port"], f["counter"], f["value"]) for f in found] == [
        ("blocking", "ib_error", "post", "gpu1 mlx5_0", HCA, "1", counter, 3)]
    assert found[0]["message"] == "gpu1 mlx5_0: ca port 1: %s +3" % counter


def test_xmit_wait_growth_is_information_not_an_error():
    found = _findings.ib_counter_findings(ib(), ib({"PortXmitWait": 5000}), "pre")
    assert [(f["severity"], f["kind"], f["counter"], f["value"]) for f in found] == [("info", "ib_xmit_wait", "PortXmitWait", 5000)]
    assert "congestion, not an error" in found[0]["message"]
    assert _findings.blocking(found) == []


def test_traffic_counters_are_not_judged_and_a_switch_port_is_named_by_its_description():
    found = _findings.ib_counter_findings(ib(), ib({"PortXmitData": 10**9}, leaf_port={"LinkDownedCounter": 1}), "post")
    assert [(f["device"], f["counter"]) for f in found] == [("leaf1", "LinkDownedCounter")]
    assert found[0]["message"] == "leaf1: switch port 1: LinkDownedCounter +1"


def test_an_infiniband_counter_that_went_down_is_a_reset_counted_from_zero():
    found = _findings.ib_counter_findings(ib({"SymbolErrorCounter": 50}), ib({"SymbolErrorCounter": 2}), "post")
    assert kinds(found) == ["counter_reset", "ib_error"]
    reset = next(f for f in found if f["kind"] == "counter_reset")
    assert reset["severity"] == "warning" and "SymbolErrorCounter went down from 50 to 2" in reset["message"]
    assert next(f for f in found if f["kind"] == "ib_error")["value"] == 2


def test_a_port_read_before_and_not_after_is_a_warning():
    found = _findings.ib_counter_findings(ib(), ib(leaf_port=False), "post")
    assert [(f["severity"], f["kind"], f["device"], f["port"]) for f in found] == [("warning", "ib_port_unread", "leaf1", "1")]


def test_a_missing_or_failed_infiniband_snapshot_blocks_the_phase():
    failed = {"failed": True, "msg": "ibnetdiscover failed (rc 1): umad open failed"}
    found = _findings.ib_counter_findings(ib(), failed, "post")
    assert [(f["severity"], f["kind"], f["device"]) for f in found] == [("blocking", "no_ib_counters", "fabric")]
    assert "after the post phase (ibnetdiscover failed (rc 1): umad open failed)" in found[0]["message"]
    assert kinds(_findings.ib_counter_findings(None, ib(), "pre")) == ["no_ib_counters"]
    with pytest.raises(ValueError, match="phase: 'during' is not pre or post"):
        _findings.ib_counter_findings(ib(), ib(), "during")


def test_the_snapshot_itself_works_like_the_registered_result():
    assert _findings.ib_counter_findings(ib()["ib_fabric"], ib({"PortRcvErrors": 1})["ib_fabric"], "post")[0]["counter"] == "PortRcvErrors"


def test_the_filter_takes_the_infiniband_snapshots_after_its_old_arguments():
    found = FilterModule().filters()["change_findings"]({}, {}, {}, "post", None, None, ib(), ib({"SymbolErrorCounter": 7}))
    assert [f["kind"] for f in found] == ["ib_error"]
    assert change_findings({"leaf1": after({})}, {"leaf1": quiet()}, PLANS, "post") == []   # the old call still works


def test_ib_summary_lists_the_ports_where_something_moved():
    summary = _findings.ib_summary(ib(), ib({"SymbolErrorCounter": 7, "PortXmitWait": 20}))
    assert summary == {"ports": {HCA + "/1": {"node": "gpu1 mlx5_0", "type": "ca", "port": "1", "errors": {"SymbolErrorCounter": 7},
                                              "xmit_wait": 20}}, "ports_read": 2, "unread": []}
    assert _findings.ib_summary(None, ib()) is None


# ---------------------------------------------------------------------------
# subnet managers: what happened to the OpenSM files under their rollback_timer
# ---------------------------------------------------------------------------

ARMED = {"changed": True, "pending_until": "2025-06-01T12:30:00+00:00", "deadline_epoch": 1748781000.0,
         "backup": [{"path": "/etc/opensm/opensm.conf", "existed": True, "sha256": "ab"}]}
PUT_BACK = {"restored": [{"path": "/etc/opensm/opensm.conf", "action": "written"}, {"path": "/etc/opensm/partitions.conf", "action": "unchanged"}],
            "commands": [{"argv": ["systemctl", "kill", "--signal=HUP", "opensm"], "rc": 0, "stdout": "", "stderr": ""}]}
CHANGES = ["/etc/opensm/opensm.conf"]


def sm(*args, **kwargs):
    return _findings.sm_outcome(*args, changes=kwargs.pop("changes", CHANGES), **kwargs)


def test_a_confirmed_timer_is_kept():
    assert sm(ARMED, {"changed": True, "timer": {"status": "confirmed"}}) == {
        "outcome": "kept", "detail": "rollback timer confirmed: OpenSM keeps /etc/opensm/opensm.conf"}


def test_a_timer_rolled_back_by_the_window_says_what_it_put_back_and_ran():
    judged = sm(ARMED, dict(PUT_BACK, changed=True, fired=False))
    assert judged["outcome"] == "rolled back"
    assert judged["detail"] == ("rolled back: put back /etc/opensm/opensm.conf (written), /etc/opensm/partitions.conf (unchanged); "
                                "ran systemctl kill --signal=HUP opensm (rc 0)")


def test_a_timer_that_fired_by_itself_is_rolled_back_by_timer():
    # the confirm came too late (it fails), the rescue's roll-back finds the timer fired
    too_late = {"failed": True, "msg": "timer w-opensm already rolled back at 2025-06-01T12:30:00+00:00"}
    judged = sm(ARMED, too_late, dict(PUT_BACK, changed=False, fired=True))
    assert judged["outcome"] == "rolled back by timer" and "already fired" in judged["detail"]
    assert sm(ARMED, dict(PUT_BACK, changed=False, fired=True))["outcome"] == "rolled back by timer"


def test_an_armed_timer_not_settled_yet_is_pending_until_its_deadline():
    judged = sm(ARMED)
    assert judged["outcome"] == "pending" and "puts them back at 2025-06-01T12:30:00+00:00" in judged["detail"]


def test_a_failed_roll_back_is_unknown_and_names_the_timer_as_fallback():
    judged = sm(ARMED, None, {"failed": True, "msg": "command ['opensm-reload'] failed: rc=1"})
    assert judged["outcome"] == "unknown"
    assert "roll-back failed: command ['opensm-reload'] failed: rc=1" in judged["detail"] and "2025-06-01T12:30:00+00:00" in judged["detail"]


def test_no_timer_nothing_changed_and_the_dry_run():
    assert sm(None, changes=[]) == {"outcome": "unchanged", "detail": "nothing to change"}
    assert sm({"skipped": True})["outcome"] == "unchanged"
    assert "window ended before the change" in sm(None)["detail"]
    assert sm({"failed": True, "msg": "timer w-opensm is already armed"})["detail"] == (
        "rollback timer not armed: timer w-opensm is already armed; no OpenSM file was written")
    assert sm(ARMED, check_mode=True) == {"outcome": "would change",
                                          "detail": "dry run: would write /etc/opensm/opensm.conf under a rollback timer"}


def test_a_subnet_manager_rolled_back_makes_the_window_rolled_back():
    assert _findings.window_verdict("failed", {"ufm1": "rolled back"}) == "rolled back"
    assert _findings.window_verdict("passed", {"ufm1": "kept", "leaf1": "unchanged"}) == "kept"
    assert _findings.window_verdict("failed", {"ufm1": "rolled back by timer", "leaf1": "kept"}) == "partial"


# ---------------------------------------------------------------------------
# the shared evidence rules (issue 34: one copy, _common/_evidence.py, for the nccl gate and the change window)


def test_the_window_judges_with_the_gates_evidence_rules_when_its_phase_ran_a_benchmark():
    host = {"kind": "host", "dscp_map": {"26": 3}, "traffic_class": 104, "pfc_priorities": [3], "cnp": {"priority": 6}}
    plans = dict(PLANS, gpu1=host)
    nic_pre = _snapshot.snapshot("gpu1", "mlnx", {"mlx5_0": {"tx_prio_bytes": {"0": 0, "3": 0}}}, {}, kind="nic")
    nic_post = _snapshot.snapshot("gpu1", "mlnx", {"mlx5_0": {"tx_prio_bytes": {"0": 9 * 10**9, "3": 10**9}}}, {}, kind="nic")
    before = {"leaf1": snap({"Ethernet1": {"queue_tx_bytes": {"0": 0, "3": 0}}})}
    later = {"leaf1": snap({"Ethernet1": {"queue_tx_bytes": {"0": 9 * 10**9, "3": 10**9}}}, at="2025-06-01T13:00:00+00:00")}
    args = (plans, "post", {"gpu1": nic_pre}, {"gpu1": nic_post})
    # No benchmark in the phase: a share proves nothing, the traffic rules stay quiet.
    assert change_findings(later, before, *args) == []
    found = change_findings(later, before, *args, None, None, {"share": 95})
    assert sorted((f["kind"], f["device"], f.get("port")) for f in found) == [
        ("roce_off_priority", "gpu1", "mlx5_0"), ("roce_off_queue", "leaf1", "Ethernet1")]
    assert all(f["severity"] == "blocking" and f["phase"] == "post" for f in found)


def test_the_window_reads_the_plans_mode():
    plan = dict(PLAN, mode="pfc_only")
    found = _findings.counter_findings({"leaf1": quiet()}, {"leaf1": after({"ecn_marked": {"3": 500}})}, {"leaf1": plan}, "post")
    assert [f["kind"] for f in found] == ["ecn_in_pfc_only"]
    plan = dict(PLAN, mode="ecn_only", pfc_priorities=[])
    found = _findings.counter_findings({"leaf1": quiet()}, {"leaf1": after({"pfc_rx_frames": {"3": 2}, "cnp_packets": 5})}, {"leaf1": plan}, "post")
    assert [(f["kind"], f["index"], f["value"]) for f in found] == [("pause_in_ecn_only", "3", 2)]


def test_pauses_without_ecn_marks_are_a_window_finding_too():
    found = _findings.counter_findings({"leaf1": quiet()}, {"leaf1": after({"pfc_tx_frames": {"3": 9}})},
                                       PLANS, "pre")
    assert [f["kind"] for f in found] == []  # quiet() has no pfc_tx_frames before: the counter is only in post
    base = snap({"Ethernet1": {"pfc_tx_frames": {"3": 0}, "ecn_marked": {"3": 0}}})
    later = snap({"Ethernet1": {"pfc_tx_frames": {"3": 9}, "ecn_marked": {"3": 0}}}, at="2025-06-01T13:00:00+00:00")
    found = _findings.counter_findings({"leaf1": base}, {"leaf1": later}, PLANS, "pre")
    assert [(f["kind"], f["device"], f["index"], f["value"]) for f in found] == [("pause_without_ecn", "leaf1", "3", 9)]


def test_a_baseline_counted_before_a_mode_change_is_judged_in_the_mode_it_ran():
    """A window moving lossless -> ecn_only: the baseline's pauses are lossless PFC at work (baseline_mode), the post
    phase's are ecn_only faults; without baseline_mode the baseline is judged by the new mode."""
    plan = dict(PLAN, mode="ecn_only", pfc_priorities=[])
    paused = after({"pfc_rx_frames": {"3": 2}, "cnp_packets": 5})
    args = ({"leaf1": quiet()}, {"leaf1": paused}, {"leaf1": plan})
    assert kinds(_findings.counter_findings(*args, "pre")) == ["pause_in_ecn_only"]
    assert kinds(_findings.counter_findings(*args, "pre", baseline_mode="lossless")) == []
    assert kinds(_findings.counter_findings(*args, "post", baseline_mode="lossless")) == ["pause_in_ecn_only"]
    # the other way (ecn_only -> lossless): the old mode had no PFC, so drops on queue 3 were the lossy fabric's
    dropped = after({"queue_drops": {"3": 7}, "cnp_packets": 5})
    args = ({"leaf1": quiet()}, {"leaf1": dropped}, {"leaf1": PLAN})
    assert kinds(_findings.counter_findings(*args, "pre")) == ["lossless_drop"]
    assert kinds(_findings.counter_findings(*args, "pre", baseline_mode="ecn_only"), "blocking") == []
    with pytest.raises(AnsibleFilterError, match="baseline_mode: 'lossy' is not one of lossless, ecn_only, pfc_only"):
        change_findings({"leaf1": dropped}, {"leaf1": quiet()}, {"leaf1": PLAN}, "pre", baseline_mode="lossy")


def test_in_mode_gives_the_plan_the_old_modes_pfc_priorities():
    ecn_only = dict(PLAN, mode="ecn_only", pfc_priorities=[])
    assert _evidence.in_mode(ecn_only, "lossless")["pfc_priorities"] == [3]  # the RoCE queue
    assert _evidence.in_mode(PLAN, "ecn_only") == dict(PLAN, mode="ecn_only", pfc_priorities=[])
    assert _evidence.in_mode(PLAN, "lossless") is PLAN and _evidence.in_mode(None, "ecn_only") is None
