# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/benchmark.yml in the lab with the performance model (lab_perf_faults, tests/lab/nccl/README.md): the
MPIJob's launcher log is computed for the workers' nodes and NICs, so a NIC at half speed halves the measured
bus bandwidth, and a target set near the healthy model's value fails the gate."""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import BIN, assert_lab_down, copy_lab_inventory, launcher, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position

# 2 nodes x 8 GPUs over both 400G NICs: healthy 2 x 50 GB/s x 0.93 = 93 GB/s; with gpu1:mlx5_1 at half speed
# every rail runs at the slowest one: 2 x 25 x 0.93 = 46.5 GB/s (noise sigma 2 %).
FAULT = '{"lab_perf_faults": [{"nic": "gpu1:mlx5_1", "factor": 0.5}]}'


def test_benchmark_measures_the_fault_and_a_near_healthy_target_fails(tmp_path):
    inventory = copy_lab_inventory(tmp_path / "lab")
    run_dir, report_dir = str(tmp_path / "run"), str(tmp_path / "report")
    out = run([*launcher(inventory, run_dir, report_dir), os.path.join(BIN, "ansible-playbook"), "-i", inventory,
               "playbooks/benchmark.yml", "-e", FAULT, "-e", '{"nccl_gate_targets": [{"min_size": "1G", "min_busbw": 80}]}'],
              timeout=900)
    assert_lab_down(inventory, run_dir, out)
    assert out.returncode != 0, out.stdout[-4000:]
    with open(os.path.join(report_dir, "benchmark.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    (launch,) = report["launches"]
    assert launch["status"] == "succeeded" and (launch["ranks"], launch["nodes"], launch["gpus_per_node"]) == (16, 2, 8)
    assert launch["transport"] == "RoCE" and launch["gdr_active"] is False and launch["complete"] is True
    assert 40 < launch["oop_busbw_at_largest_size"] < 53
    assert report["verdict"] == "fail" and any("< target 80.00 GB/s" in line for line in report["unmet"])
    assert os.path.isdir(os.path.join(run_dir, "perf-launches")) and os.listdir(os.path.join(run_dir, "perf-launches"))
