# SPDX-License-Identifier: GPL-3.0-or-later
"""_change_report: the change window's JSON, Markdown and plot, built from registered
results; serial batches merged into one report. Benchmark logs are the lab's copies
of real nccl-tests runs (tests/lab/nccl/replays)."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _targets as _intent_targets
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _gate as _nccl_gate
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _parse as _nccl_parse
from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _stats as _nccl_stats
from ansible_collections.lossless.fabric.plugins.module_utils._window import _change_report

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLAYS = os.path.abspath(os.path.join(HERE, "..", "..", "..", "lab", "nccl", "replays"))
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PLAN = {"kind": "switch", "platform": "eos", "pfc_priorities": [3], "ecn_queue": 3}
TARGETS = {"tolerance_percent": 5, "require_gdr": None, "collectives": {"all_reduce_perf": [{"min_size": "1G", "min_busbw": 150}]}}
WINDOW = {"id": "20250601T120000Z", "fabric": "lab", "started_at": "2025-06-01T12:00:00+00:00", "deadline": "2025-06-01T12:30:00+00:00",
          "max_minutes": 30, "batch": 1}


def _log(name):
    with open(os.path.join(REPLAYS, name + ".txt"), encoding="utf-8") as handle:
        return _nccl_parse.parse(handle.read())


@pytest.fixture(scope="module")
def hdr():
    """2 x DGX A100 over HDR: 181.62 GB/s out-of-place at 1 GiB."""
    return _log("deepops_netop_dgxa100_2node_hdr")


@pytest.fixture(scope="module")
def roce():
    """2 x 8 GPUs over untuned SR-IOV RoCE: 22.77 GB/s at 1 GiB."""
    return _log("deepops_k8s_sriov_roce_2node")


def pushed(diff="+ qos map dscp 26 to traffic-class 3\n"):
    return {"changed": True, "session": "s1", "device_state": "pending confirmation", "pending_until": WINDOW["deadline"],
            "device_diff": diff, "commands": ["a", "b"]}


CONFIRMED = {"changed": True, "session": "s1", "device_state": "committed", "pending": {"session": "s1"}}
ROLLED = {"changed": True, "session": "s1", "device_state": "rolled back", "pending": {"session": "s1"}}


def snap(device, drops, at):
    return _snapshot.snapshot(device, "eos", {"Ethernet1": {"queue_drops": {"3": drops}, "ecn_marked": {"3": 0}}}, {}, taken_at=at)


def counters(device, drops_after=0):
    return {"before": {"counters": snap(device, 0, "2025-06-01T12:00:00+00:00")},
            "middle": snap(device, 0, "2025-06-01T12:05:00+00:00"),
            "after": snap(device, drops_after, "2025-06-01T12:10:00+00:00")}


def kept_report(hdr):
    settings, _errors = _nccl_gate.gate_settings({"fabric_targets": TARGETS}, *_intent_targets.fabric_targets(TARGETS))
    compare = _nccl_stats.compare_report([hdr] * 3, [hdr] * 3, settings, allow_inconclusive=True)
    return _change_report.build(
        WINDOW, {"leaf1": {"platform": "eos", "push": pushed(), "settle": CONFIRMED, "backup": "/r/leaf1.cfg"},
                 "leaf2": {"platform": "junos", "push": {"changed": False, "device_state": "unchanged", "device_diff": ""}}},
        "passed", {"leaf1": counters("leaf1"), "leaf2": counters("leaf2")}, {"leaf1": PLAN, "leaf2": PLAN}, [],
        {"pre": [hdr] * 3, "post": [hdr] * 3, "compare": compare, "targets": TARGETS}, [])


def test_a_kept_window_names_every_device_and_what_happened(hdr):
    report = kept_report(hdr)
    assert report["verdict"] == "kept"
    assert report["name"] == "change-window-20250601T120000Z"
    assert {d: e["outcome"] for d, e in report["devices"].items()} == {"leaf1": "kept", "leaf2": "unchanged"}
    assert report["outcomes"] == {"kept": ["leaf1"], "unchanged": ["leaf2"]}
    assert report["devices"]["leaf1"]["diff"] == "+ qos map dscp 26 to traffic-class 3\n"
    assert report["devices"]["leaf1"]["pending_until"] is None  # settled: no longer pending
    assert report["counters"]["leaf1"]["post"]["Ethernet1"]["lossless_drops"] == 0
    assert report["counters"]["leaf1"]["pre_interval_s"] == 300.0
    md = _change_report.markdown(report)
    assert "Verdict: **KEPT**" in md
    assert "| leaf1 | eos | **kept** |" in md and "| leaf2 | junos | **unchanged** |" in md
    assert "```diff\n+ qos map dscp 26 to traffic-class 3\n```" in md
    assert "`/r/leaf1.cfg`" in md


def test_the_benchmark_part_is_the_nccl_report_of_post_against_pre(hdr, roce):
    settings, _errors = _nccl_gate.gate_settings({"fabric_targets": TARGETS}, *_intent_targets.fabric_targets(TARGETS))
    compare = _nccl_stats.compare_report([hdr] * 5, [roce] * 5, settings)
    report = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed(), "settle": ROLLED}}, "failed",
                                  benchmark={"pre": [hdr] * 5, "post": [roce] * 5, "compare": compare, "targets": TARGETS},
                                  reasons=["post benchmark fail: regressed"])
    bench = report["benchmark"]
    assert report["verdict"] == "rolled back"
    assert bench["verdict"] == "fail"
    assert [s["label"] for s in bench["series"]] == ["pre", "post"]
    gib = next(row for row in bench["sizes"] if row["size"] == 1 << 30)
    assert gib["baseline"]["median"] == pytest.approx(181.62)
    assert gib["out_of_place"]["median"] == pytest.approx(22.77)
    assert gib["compare"]["verdict"] == "regressed"
    md = _change_report.markdown(report)
    assert "## Benchmark" in md and "### Bus bandwidth per size" in md and "regressed" in md
    assert "- post benchmark fail: regressed" in md
    files = _change_report.files(report)
    assert sorted(files) == ["change-window-20250601T120000Z.json", "change-window-20250601T120000Z.md", "change-window-20250601T120000Z.png"]
    assert files["change-window-20250601T120000Z.png"].startswith(PNG_SIGNATURE)
    assert "![busbw against message size](change-window-20250601T120000Z.png)" in md


def test_the_same_input_gives_the_same_bytes(hdr):
    first, second = _change_report.files(kept_report(hdr)), _change_report.files(kept_report(hdr))
    assert first == second
    assert json.loads(first["change-window-20250601T120000Z.json"])["verdict"] == "kept"


def test_no_benchmark_no_plot_and_the_report_says_so():
    report = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed(), "settle": CONFIRMED}}, "passed")
    assert report["benchmark"] is None
    assert sorted(_change_report.files(report)) == ["change-window-20250601T120000Z.json", "change-window-20250601T120000Z.md"]
    assert "The benchmark did not run in this window." in _change_report.markdown(report)


def test_an_interim_report_shows_what_is_pending_until_when():
    report = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed()}}, "in_progress")
    assert report["verdict"] == "in progress"
    assert report["devices"]["leaf1"]["outcome"] == "pending"
    assert report["devices"]["leaf1"]["pending_until"] == WINDOW["deadline"]
    assert "| leaf1 | eos | **pending** |" in _change_report.markdown(report)


def test_findings_are_listed_and_counted():
    finding = {"severity": "blocking", "kind": "lossless_drop", "phase": "post", "device": "leaf1", "message": "leaf1: Ethernet1: queue_drops[3] = 7"}
    report = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed(), "settle": ROLLED}}, "failed",
                                  {"leaf1": counters("leaf1", 7)}, {"leaf1": PLAN}, [finding])
    assert report["blocking_findings"] == 1
    assert report["counters"]["leaf1"]["post"]["Ethernet1"]["lossless_drops"] == 7
    md = _change_report.markdown(report)
    assert "| blocking | post | lossless_drop | leaf1: Ethernet1: queue_drops[3] = 7 |" in md


def test_secrets_in_a_device_diff_are_masked():
    report = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed("+ username admin secret sha512 $6$abc\n"), "settle": CONFIRMED}},
                                  "passed")
    assert "$6$abc" not in json.dumps(report) and "********" in report["devices"]["leaf1"]["diff"]


def test_a_dry_run_changes_nothing_and_says_what_would():
    report = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed()}, "leaf2": {"platform": "eos", "push": {"changed": False}}},
                                  "dry_run")
    assert report["verdict"] == "dry run"
    assert report["outcomes"] == {"unchanged": ["leaf2"], "would change": ["leaf1"]}


def test_serial_batches_make_one_report(hdr):
    first = kept_report(hdr)
    second = _change_report.build(dict(WINDOW, batch=2), {"spine1": {"platform": "eos", "push": pushed(), "settle": ROLLED}}, "failed",
                                  reasons=["post counters: spine1: Ethernet1: queue_drops[3] = 7"])
    merged = _change_report.merge(first, second)
    assert merged["verdict"] == "partial"  # batch 1 kept, batch 2 rolled back
    assert sorted(merged["devices"]) == ["leaf1", "leaf2", "spine1"]
    assert merged["devices"]["leaf1"]["batch"] == 1 and merged["devices"]["spine1"]["batch"] == 2
    assert [b["batch"] for b in merged["batches"]] == [1, 2]
    assert merged["outcomes"] == {"kept": ["leaf1"], "rolled back": ["spine1"], "unchanged": ["leaf2"]}
    # the same batch again replaces itself; another window's report is not merged
    assert _change_report.merge(merged, second)["batches"] == merged["batches"]
    assert _change_report.merge(first, kept_report(hdr)) == kept_report(hdr)
    assert _change_report.merge(dict(first, name="change-window-other"), second) == second


def test_bad_input_is_refused_naming_the_key():
    with pytest.raises(ValueError, match="status: 'done'"):
        _change_report.build(WINDOW, {}, "done")
    with pytest.raises(ValueError, match="window.id: 'a/b'"):
        _change_report.build(dict(WINDOW, id="a/b"), {}, "passed")


def test_the_report_that_judged_the_window_is_kept_as_is(hdr, roce):
    """role nccl_gate's report (nccl_report) decided the window: the window's report shows it, it does not re-judge."""
    from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _report  # pylint: disable=import-outside-toplevel

    judged = _report.benchmark_report([roce] * 2, "nccl-post", None, baseline=[hdr] * 2, phase="post", baseline_label="pre")
    report = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed(), "settle": ROLLED}}, "failed",
                                  benchmark={"report": judged})
    assert report["benchmark"]["verdict"] == judged["verdict"] == "not gated"
    assert report["benchmark"]["plot"] == "change-window-20250601T120000Z.png"
    assert report["benchmark"]["sizes"] == judged["sizes"]
    assert "change-window-20250601T120000Z.png" in _change_report.files(report)
    with pytest.raises(ValueError, match="benchmark.report: not a report"):
        _change_report.build(WINDOW, {}, "failed", benchmark={"report": {"verdict": "pass"}})


def test_devices_no_batch_reached_are_named_and_never_hide_an_earlier_batch(hdr):
    scope = ["leaf1", "leaf2", "spine1", "spine2"]
    first = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed(), "settle": CONFIRMED}}, "passed",
                                 plans={"spine2": PLAN}, scope=scope)
    assert first["devices"]["spine2"]["outcome"] == "unchanged" and "not reached" in first["devices"]["spine2"]["detail"]
    assert first["devices"]["spine2"]["platform"] == "eos" and first["verdict"] == "kept"
    second = _change_report.build(dict(WINDOW, batch=2), {"spine1": {"platform": "eos", "push": pushed(), "settle": ROLLED}}, "failed",
                                  plans={"spine2": PLAN}, scope=scope)
    assert second["devices"]["leaf1"]["detail"].startswith("not reached")  # this batch alone does not know leaf1
    merged = _change_report.merge(first, second)
    assert {d: e["outcome"] for d, e in merged["devices"].items()} == {
        "leaf1": "kept", "leaf2": "unchanged", "spine1": "rolled back", "spine2": "unchanged"}
    assert merged["verdict"] == "partial"
    assert "| spine2 | eos | **unchanged** | not reached: its serial batch has not run |" in _change_report.markdown(merged)


# As nic_qos returns them without --diff (no diff key): the report builds the lines from nics.
NIC_APPLY = {"changed": True, "commands": ["echo 40 > /sys/class/net/eth2/ecn/roce_np/cnp_dscp"],
             "nics": {"mlx5_0": {"name": "mlx5_0", "netdev": "eth2", "stack": "mlnx", "changes": ["cnp"],
                                 "before": {"cnp": {"dscp": 48, "priority": 6}, "mtu": 9000},
                                 "after": {"cnp": {"dscp": 40, "priority": 6}, "mtu": 9000}}}}
NIC_RESTORE = {"changed": True, "unsupported": [],
               "nics": {"mlx5_0": dict(NIC_APPLY["nics"]["mlx5_0"], before=NIC_APPLY["nics"]["mlx5_0"]["after"],
                                       after=NIC_APPLY["nics"]["mlx5_0"]["before"])}}


def host(**results):
    return dict({"kind": "host", "backup": "/r/change-window-x-backup/gpu1.nic.json",
                 "restore_command": "ansible gpu1 -m lossless.fabric.nic_qos -a @/r/change-window-x-backup/gpu1.nic.json"}, **results)


def test_hosts_get_their_own_section_with_what_happened_and_the_diff():
    report = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed(), "settle": CONFIRMED}, "gpu1": host(apply=NIC_APPLY)},
                                  "passed", scope=["leaf1"])
    assert list(report["devices"]) == ["leaf1"] and list(report["hosts"]) == ["gpu1"]
    gpu1 = report["hosts"]["gpu1"]
    assert gpu1["outcome"] == "applied" and gpu1["stacks"] == ["mlnx"] and gpu1["commands"] == 1
    assert gpu1["diff"] == "- mlx5_0 (eth2) cnp: {\"dscp\": 48, \"priority\": 6}\n+ mlx5_0 (eth2) cnp: {\"dscp\": 40, \"priority\": 6}\n"
    assert gpu1["restore_command"] is None  # nothing left to do by hand
    assert report["verdict"] == "kept" and report["outcomes"] == {"kept": ["leaf1"], "applied": ["gpu1"]}
    md = _change_report.markdown(report)
    assert "1 device(s), 1 host(s): 1 kept, 1 applied" in md
    assert "## GPU hosts (NICs)" in md and "| gpu1 | mlnx | **applied** |" in md
    assert "### gpu1 (NICs): applied" in md and "+ mlx5_0 (eth2) cnp: {\"dscp\": 40" in md


def test_an_interrupted_window_lists_each_host_as_applied_with_no_automatic_rollback():
    report = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed()}, "gpu1": host(apply=NIC_APPLY)}, "in_progress")
    gpu1 = report["hosts"]["gpu1"]
    assert gpu1["outcome"] == "applied, no automatic rollback" and "/r/change-window-x-backup/gpu1.nic.json" in gpu1["detail"]
    assert gpu1["restore_command"].startswith("ansible gpu1 ")
    md = _change_report.markdown(report)
    assert "**applied, no automatic rollback**" in md and "To put the NICs back:" in md
    assert "- gpu1: `ansible gpu1 -m lossless.fabric.nic_qos -a @/r/change-window-x-backup/gpu1.nic.json`" in md


TIMER = {"name": "change-window-x-gpu1-nic", "status": "armed", "pending_until": WINDOW["deadline"], "kind": "nic", "state_dir": "/var/lib/x"}
NIC_ARMED = dict(NIC_APPLY, timer=TIMER, pending_until=WINDOW["deadline"])


def test_a_host_under_its_rollback_timer_is_pending_then_kept_or_rolled_back_by_it():
    interim = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed()}, "gpu1": host(apply=NIC_ARMED)}, "in_progress")
    gpu1 = interim["hosts"]["gpu1"]
    assert gpu1["outcome"] == "pending" and gpu1["restore_command"] is None
    assert "pending until 2025-06-01T12:30:00+00:00: the host's rollback timer change-window-x-gpu1-nic puts the NICs back" in gpu1["detail"]
    kept = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed(), "settle": CONFIRMED},
                                         "gpu1": host(apply=NIC_ARMED, confirm={"changed": True, "timer": dict(TIMER, status="confirmed")})},
                                "passed")
    assert kept["verdict"] == "kept" and kept["hosts"]["gpu1"]["outcome"] == "kept"
    assert kept["hosts"]["gpu1"]["detail"] == "set mlx5_0: cnp; confirmed (rollback timer change-window-x-gpu1-nic)"
    fired = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed(), "settle": ROLLED},
                                          "gpu1": host(apply=NIC_ARMED, restore={"changed": False, "fired": True, "nics": {}})}, "failed")
    assert fired["verdict"] == "rolled back" and fired["hosts"]["gpu1"]["outcome"] == "rolled back by timer"
    # without a confirm a passed window does not call the host kept
    unconfirmed = _change_report.build(WINDOW, {"gpu1": host(apply=NIC_ARMED)}, "passed")
    assert unconfirmed["hosts"]["gpu1"]["outcome"] == "applied"


def test_the_record_before_the_change_shows_every_device_being_changed():
    report = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": None}, "gpu1": host(apply=None)}, "changing",
                                  scope=["leaf1", "leaf2"])
    assert report["status"] == "changing" and report["verdict"] == "in progress"
    assert report["devices"]["leaf1"]["outcome"] == "unknown" and report["devices"]["leaf1"]["pending_until"] == WINDOW["deadline"]
    assert "being changed now: if this is the window's last report" in report["devices"]["leaf1"]["detail"]
    assert report["hosts"]["gpu1"]["outcome"] == "unknown"
    # a device of a later batch is still only not reached
    assert report["devices"]["leaf2"]["outcome"] == "unchanged"


def test_a_rolled_back_window_restores_the_hosts_and_shows_both_diffs():
    report = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed(), "settle": ROLLED},
                                           "gpu1": host(apply=NIC_APPLY, restore=NIC_RESTORE)}, "failed")
    assert report["verdict"] == "rolled back" and report["hosts"]["gpu1"]["outcome"] == "restored"
    assert report["hosts"]["gpu1"]["restore_diff"].startswith("- mlx5_0 (eth2) cnp: {\"dscp\": 40")
    md = _change_report.markdown(report)
    assert "Applied:" in md and "Restored:" in md


def test_later_batches_keep_the_hosts_of_the_first():
    first = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed(), "settle": CONFIRMED}, "gpu1": host(apply=NIC_APPLY)},
                                 "passed", scope=["leaf1", "leaf2"])
    second = _change_report.build(dict(WINDOW, batch=2), {"leaf2": {"platform": "eos", "push": pushed(), "settle": ROLLED}}, "failed",
                                  scope=["leaf1", "leaf2"])
    merged = _change_report.merge(json.loads(json.dumps(first)), second)
    assert merged["hosts"]["gpu1"]["outcome"] == "applied" and merged["hosts"]["gpu1"]["batch"] == 1
    assert merged["outcomes"]["applied"] == ["gpu1"] and merged["verdict"] == "partial"


def test_a_batch_lists_its_switches_the_hosts_apart():
    report = _change_report.build(WINDOW, {"leaf1": {"platform": "eos", "push": pushed(), "settle": CONFIRMED}, "gpu1": host(apply=NIC_APPLY)},
                                  "passed")
    assert report["batches"] == [{"batch": 1, "devices": ["leaf1"], "status": "passed"}]


# ---------------------------------------------------------------------------
# InfiniBand: subnet managers (OpenSM files under a rollback_timer) and the fabric's port counters
# ---------------------------------------------------------------------------

CONF_BEFORE = "qos TRUE\nqos_vlarb_low 0:64,1:64\nsm_key 0x1122334455667788\nsm_priority 14\n"
CONF_AFTER = "qos TRUE\nqos_vlarb_low 0:64,1:32\nsm_key 0x8877665544332211\nsm_priority 14\n"
SM_FILES = [{"path": "/etc/opensm/opensm.conf", "before": CONF_BEFORE, "after": CONF_AFTER},
            {"path": "/etc/opensm/partitions.conf", "before": "Default=0x7fff : ALL=full ;\n", "after": "Default=0x7fff : ALL=full ;\n"},
            {"path": "/etc/opensm/root-guids.conf", "before": None, "after": "0x0008f1332e695c00\n"}]
SM_ARMED = {"changed": True, "pending_until": WINDOW["deadline"], "backup": []}
RELOAD = [["systemctl", "kill", "--signal=HUP", "--kill-whom=main", "opensm"]]
HCA = "0x0c42a10300010000"


def sm_device(**results):
    return dict({"kind": "subnet_manager", "files": SM_FILES, "timer": "change-window-w-opensm", "commands": RELOAD,
                 "backup": "/r/change-window-w-backup/ufm1.opensm"}, **results)


def ib_snapshot(symbol_errors=0, wait=0):
    port = {"SymbolErrorCounter": symbol_errors, "LinkDownedCounter": 0, "PortXmitWait": wait, "PortXmitData": 1000 + wait}
    return {"ib_fabric": {"nodes": {HCA: {"type": "ca", "description": "gpu1 mlx5_0"}}, "counters": {HCA + "/1": port}}}


def test_a_subnet_manager_is_a_device_with_its_file_diffs_timer_and_outcome():
    report = _change_report.build(WINDOW, {"ufm1": sm_device(arm=SM_ARMED, settle={"changed": True})}, "passed",
                                  plans={"ufm1": {"kind": "subnet_manager", "role": "master"}}, scope=["ufm1"])
    assert report["verdict"] == "kept" and report["hosts"] == {}
    entry = report["devices"]["ufm1"]
    assert (entry["kind"], entry["platform"], entry["outcome"], entry["pending_until"]) == ("subnet_manager", "opensm", "kept", None)
    assert entry["timer"] == {"name": "change-window-w-opensm", "pending_until": WINDOW["deadline"], "commands": RELOAD}
    assert [(f["path"], f["existed"], f["changed"]) for f in entry["files"]] == [
        ("/etc/opensm/opensm.conf", True, True), ("/etc/opensm/partitions.conf", True, False), ("/etc/opensm/root-guids.conf", False, True)]
    conf = entry["files"][0]["diff"]
    assert conf.startswith("--- /etc/opensm/opensm.conf (installed)\n+++ /etc/opensm/opensm.conf (plan)\n")
    # OpenSM's keys never reach a report
    assert "-qos_vlarb_low 0:64,1:64\n-sm_key ********\n+qos_vlarb_low 0:64,1:32\n+sm_key ********\n" in conf
    assert "0x1122334455667788" not in json.dumps(report) and "0x8877665544332211" not in json.dumps(report)
    assert entry["files"][2]["diff"] == "--- /dev/null\n+++ /etc/opensm/root-guids.conf (plan)\n@@ -0,0 +1 @@\n+0x0008f1332e695c00\n"
    assert entry["diff"] == conf + entry["files"][2]["diff"] and entry["files"][1]["diff"] == ""
    md = _change_report.markdown(report)
    assert "| ufm1 | opensm | **kept** | rollback timer confirmed: OpenSM keeps /etc/opensm/opensm.conf, /etc/opensm/root-guids.conf | - |" in md
    assert "### ufm1 (opensm): kept" in md and "OpenSM files before the change: `/r/change-window-w-backup/ufm1.opensm`" in md
    assert ("Rollback timer `change-window-w-opensm` (until 2025-06-01T12:30:00+00:00): when it fires or the window rolls back, "
            "it puts the files back and runs `systemctl kill --signal=HUP --kill-whom=main opensm`.") in md


def test_an_interim_report_shows_the_subnet_manager_pending_until_its_timer_fires():
    report = _change_report.build(WINDOW, {"ufm1": sm_device(arm=SM_ARMED), "leaf1": {"platform": "eos", "push": pushed()}}, "in_progress")
    assert report["verdict"] == "in progress"
    assert {d: (e["outcome"], e["pending_until"]) for d, e in report["devices"].items()} == {
        "leaf1": ("pending", WINDOW["deadline"]), "ufm1": ("pending", WINDOW["deadline"])}
    assert "kind" not in report["devices"]["leaf1"]   # the switches' entries keep their shape


def test_a_subnet_manager_rolled_back_and_not_reached():
    rolled = {"changed": True, "fired": False, "restored": [{"path": "/etc/opensm/opensm.conf", "action": "written"}],
              "commands": [{"argv": RELOAD[0], "rc": 0}]}
    report = _change_report.build(WINDOW, {"ufm1": sm_device(arm=SM_ARMED, settle=rolled)}, "failed",
                                  plans={"ufm2": {"kind": "subnet_manager", "role": "standby"}}, scope=["ufm1", "ufm2"])
    assert report["verdict"] == "rolled back"
    assert report["devices"]["ufm1"]["detail"].startswith("rolled back: put back /etc/opensm/opensm.conf (written); ran systemctl kill")
    assert report["devices"]["ufm2"]["kind"] == "subnet_manager" and report["devices"]["ufm2"]["outcome"] == "unchanged"
    dry = _change_report.build(WINDOW, {"ufm1": sm_device(arm=SM_ARMED)}, "dry_run")
    assert dry["verdict"] == "dry run" and dry["devices"]["ufm1"]["outcome"] == "would change"


def test_infiniband_counter_deltas_per_phase_in_json_and_markdown():
    ib = {"before": ib_snapshot(), "middle": ib_snapshot(wait=30), "after": ib_snapshot(symbol_errors=7, wait=30)}
    report = _change_report.build(WINDOW, {"ufm1": sm_device(arm=SM_ARMED)}, "in_progress", ib_counters=ib)
    assert report["ib_counters"]["pre"] == {"ports": {HCA + "/1": {"node": "gpu1 mlx5_0", "type": "ca", "port": "1", "errors": {},
                                                                   "xmit_wait": 30}}, "ports_read": 1, "unread": []}
    assert report["ib_counters"]["post"]["ports"][HCA + "/1"]["errors"] == {"SymbolErrorCounter": 7}
    md = _change_report.markdown(report)
    assert '| ca "gpu1 mlx5_0" | 1 | pre | - | 30 |' in md and '| ca "gpu1 mlx5_0" | 1 | post | SymbolErrorCounter +7 | 0 |' in md
    quiet = _change_report.build(WINDOW, {}, "passed", ib_counters={"before": ib_snapshot(), "middle": ib_snapshot(), "after": None})
    assert quiet["ib_counters"]["post"] is None
    assert "| - | - | pre | none on 1 port(s) | - |" in _change_report.markdown(quiet)
    assert "InfiniBand" not in _change_report.markdown(_change_report.build(WINDOW, {}, "passed"))   # RoCE: no such section
