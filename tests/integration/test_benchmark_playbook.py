# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/benchmark.yml against the lab, as a user runs it: the MPIJob runs in the Kubernetes API emulator,
whose launcher pod prints a recorded real nccl-tests log (lab_nccl_replay), and role nccl_gate gates it and
writes the report - also when the gate fails."""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import BIN, assert_lab_down, copy_lab_inventory, launcher, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position


def _lab_run(tmp_path, *extra):
    # A lab of the test's own (labrun), so nothing collides with a lab the user has up.
    inventory = str(tmp_path / "lab")
    if not os.path.isdir(inventory):
        copy_lab_inventory(inventory)
    run_dir = str(tmp_path / "run")
    report_dir = str(tmp_path / ("report-%s" % ("-".join(extra).replace("=", "_") or "default")))
    out = run([*launcher(inventory, run_dir, report_dir), os.path.join(BIN, "ansible-playbook"), "-i", inventory, "playbooks/benchmark.yml", *extra],
              timeout=900)
    assert_lab_down(inventory, run_dir, out)
    return out, report_dir


def _report(report_dir, name="benchmark"):
    with open(os.path.join(report_dir, name + ".json"), encoding="utf-8") as handle:
        report = json.load(handle)
    with open(os.path.join(report_dir, name + ".png"), "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    with open(os.path.join(report_dir, name + ".md"), encoding="utf-8") as handle:
        markdown = handle.read()
    return report, markdown


def test_benchmark_in_the_lab_writes_the_report_and_its_counters_fail_nics_never_configured(tmp_path):
    # benchmark.yml alone: the lab's GPU hosts keep their NICs as they boot (trust pcp, no DSCP map; hosts.yml never ran),
    # so the busbw of the replayed log passes and the counters around the launch show the traffic on priority 0, not the
    # plan's RoCE priority 3: the gate fails on the counter evidence alone (issue 34). make lab (site.yml) configures the
    # NICs first and passes (test_site_playbook). The lab's launch moves its traffic through the NICs and switch ports it
    # crosses (tests/lab/traffic.py: hundreds of GB per NIC for this sweep), so the gate's default 1 GB floor applies.
    out, report_dir = _lab_run(tmp_path)
    assert out.returncode != 0, (out.stdout + out.stderr)[-6000:]
    assert "NCCL gate fail (report %s/benchmark.md)" % report_dir in out.stdout + out.stderr
    report, markdown = _report(report_dir)
    assert report["verdict"] == "fail"
    (launch,) = report["launches"]
    # the MPIJob's name, its status, and what the replayed real log proves (CCI-MOC/roce-testing: 2 x H100 over
    # RoCE, NCCL_DEBUG=INFO lines; 14.97 GB/s at 25 GiB): the gate checked transport and GPUDirect on them - and passed
    assert launch["name"].startswith("nccl-all-reduce-") and launch["status"] == "succeeded"
    # the log names no collective; its rows prove all_reduce (an op, no root, busbw = algbw at 2 ranks, in-place checked)
    assert launch["collective"] == "all_reduce" and launch["ranks"] == 2
    assert launch["oop_busbw_at_largest_size"] == 14.97 and launch["gate"]["verdict"] == "pass"
    assert launch["transport"] == "RoCE" and launch["gdr_active"] is False
    assert report["targets"]["busbw"][0]["min_busbw"] == 14.0
    assert report["targets"]["require_transport"] == ["RoCE"] and report["targets"]["require_gdr"] is False
    assert "Verdict: **FAIL**" in markdown and "![busbw against message size](benchmark.png)" in markdown
    # every unmet line is counter evidence, and each NIC of the launch is named with the priority that carried its bytes
    assert report["unmet"] and all(u.startswith("counter evidence: ") for u in report["unmet"]), report["unmet"]
    evidence = report["evidence"]
    assert evidence["verdict_note"].startswith("fail on the counter evidence alone: bus bandwidth met its targets")
    off = {(f["device"], f["port"]): f for f in evidence["findings"] if f["kind"] == "roce_off_priority"}
    assert sorted(off) == [("gpu1", "mlx5_0"), ("gpu1", "mlx5_1"), ("gpu2", "mlx5_0"), ("gpu2", "mlx5_1")], evidence["findings"]
    assert all(f["index"] == "0" and f["counter"] == "tx_prio_bytes" and "NCCL_IB_TC" in f["message"] for f in off.values())
    # the snapshots: NIC and switch counters read just before and just after the launch
    # (both NIC tasks are listed in each phase, the other phase's one skipped: the first "before", the last "after")
    tasks = [line for line in out.stdout.splitlines() if line.startswith("TASK [")]
    order = [next(i for i, t in enumerate(tasks) if key in t) for key in (
        "Evidence - NIC counters of the launch's hosts before the launch", "Evidence - switch counters of the launch's switches before",
        "Configure - launch the benchmark", "Evidence - switch counters of the launch's switches after")]
    order.append(max(i for i, t in enumerate(tasks) if "Evidence - NIC counters of the launch's hosts after the launch" in t))
    assert order == sorted(order), tasks
    # the lab's cabling: gpu1/gpu2 on leaf1 (rail 0) and leaf2 (rail 1), so both leaves' uplinks and spine1's ports facing them
    assert evidence["ports"] == {"leaf1": ["swp1", "swp2", "swp31"], "leaf2": ["et-0/0/1", "et-0/0/2", "et-0/0/31"],
                                 "spine1": ["Ethernet1/1", "Ethernet2/1"]}
    assert sorted(evidence["hosts"]) == ["gpu1", "gpu2"] and sorted(evidence["hosts"]["gpu1"]) == ["mlx5_0", "mlx5_1"]
    assert sorted(evidence["switches"]) == ["leaf1", "leaf2", "spine1"] and sorted(evidence["switches"]["leaf1"]) == ["swp1", "swp2", "swp31"]
    assert sorted(evidence["read"]) == ["gpu1", "gpu2", "leaf1", "leaf2", "spine1"]
    assert all(read["before"] < read["after"] for read in evidence["read"].values()), evidence["read"]
    assert not [f for f in evidence["findings"] if f["kind"] == "no_counters"], evidence["findings"]
    assert evidence["settings"]["share"] == 0.95
    assert "## Counter evidence" in markdown and "| gpu1 | mlx5_0 | 3 | 0.0 % |" in markdown and "| leaf2 | et-0/0/1 | 3 |" in markdown
    # the plan report of the same run sits beside it
    assert os.path.exists(os.path.join(report_dir, "plan.json"))
    # before it, the node baseline (issue 35): each GPU host's own 8 GPUs, one process, no MPI, from the lab's node model
    nodes, node_md = _report(report_dir, "node-baseline")
    assert nodes["verdict"] == "pass" and sorted(n["name"] for n in nodes["launches"]) == ["gpu1", "gpu2"]
    assert all(n["ranks"] == 8 and n["nodes"] == 1 and n["oop_busbw_at_largest_size"] > 400 for n in nodes["launches"])
    assert "gpu1" in node_md and "gpu2" in node_md
    assert "NCCL node baseline pass: 2 of 2 GPU host(s) measured" in out.stdout


def test_slow_node_is_named_before_the_fabric_benchmark(tmp_path):
    # the lab's slow-host knob slows gpu2's GPUs too: its node baseline is below the lab's 400 GB/s node target
    out, report_dir = _lab_run(tmp_path, "-e", json.dumps({"lab_perf_faults": [{"host": "gpu2", "factor": 0.6}]}))
    assert out.returncode != 0
    assert "NCCL node baseline fail: gpu2 below target or without a result" in out.stdout, out.stdout[-6000:]
    nodes, _md = _report(report_dir, "node-baseline")
    verdicts = {n["name"]: n["gate"]["verdict"] for n in nodes["launches"]}
    assert verdicts == {"gpu1": "pass", "gpu2": "fail"} and nodes["verdict"] == "fail"
    # the fabric benchmark did not run on a cluster with a node below target (nccl_gate_node_below_target: fail)
    assert not os.path.exists(os.path.join(report_dir, "benchmark.json"))


def test_benchmark_without_transport_evidence_fails_naming_it_after_writing_the_report(tmp_path):
    # nccl_gate_evidence false: no counter snapshot, no evidence section - the busbw gate alone (as before issue 34)
    out, report_dir = _lab_run(tmp_path, "-e", "lab_nccl_replay=failing", "-e", "nccl_gate_evidence=false")
    assert out.returncode != 0
    text = out.stdout + out.stderr
    # the replayed log: 2 x 8 GPUs over untuned SR-IOV RoCE, 22.77 GB/s at 1 GiB, and no NCCL_DEBUG=INFO lines:
    # it meets the lab's 14 GB/s but proves neither RoCE nor the state of GPUDirect RDMA
    unproven = ["all_reduce_perf: transport unknown is not proven to be RoCE (evidence: no NCCL_DEBUG=INFO transport lines)",
                "all_reduce_perf: GPUDirect RDMA is not proven, required off (evidence: no NCCL_DEBUG=INFO GDR lines)"]
    assert all(line in text for line in unproven), text[-6000:]
    assert "NCCL gate fail (report %s/benchmark.md)" % report_dir in text
    report, markdown = _report(report_dir)
    assert report["verdict"] == "fail"
    # each report line names the launch first: "<MPIJob name>: all_reduce_perf: ..."
    assert [u.split(": ", 1)[1] for u in report["unmet"]] == unproven, report["unmet"]
    assert report["evidence"] is None and "## Counter evidence" not in markdown
    assert "Evidence - NIC counters of the launch's hosts before the launch" in text  # listed, and skipped:
    assert not any(line.startswith("ok: [localhost -> gpu1]") for line in text.splitlines()), text[-6000:]
    assert report["launches"][0]["gate"]["verdict"] == "fail" and report["launches"][0]["transport"] == "unknown"
    assert "Verdict: **FAIL**" in markdown and "transport unknown is not proven to be RoCE" in markdown
