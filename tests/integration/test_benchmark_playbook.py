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


def _report(report_dir):
    with open(os.path.join(report_dir, "benchmark.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    with open(os.path.join(report_dir, "benchmark.png"), "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    with open(os.path.join(report_dir, "benchmark.md"), encoding="utf-8") as handle:
        markdown = handle.read()
    return report, markdown


def test_benchmark_passes_in_the_lab_and_writes_the_report(tmp_path):
    out, report_dir = _lab_run(tmp_path)
    assert out.returncode == 0, (out.stdout + out.stderr)[-6000:]
    assert "NCCL gate pass: 1 launch(es)" in out.stdout
    report, markdown = _report(report_dir)
    assert report["verdict"] == "pass" and report["unmet"] == []
    (launch,) = report["launches"]
    # the MPIJob's name, its status, and the numbers of the replayed log (2 x DGX A100, HDR: 188.53 GB/s at 4 GiB)
    assert launch["name"].startswith("nccl-all-reduce-") and launch["status"] == "succeeded"
    assert launch["collective"] == "all_reduce" and launch["ranks"] == 16
    assert launch["oop_busbw_at_largest_size"] == 188.53 and launch["gate"]["verdict"] == "pass"
    assert report["targets"]["busbw"][0]["min_busbw"] == 180.0
    assert "Verdict: **PASS**" in markdown and "![busbw against message size](benchmark.png)" in markdown
    # the plan report of the same run sits beside it
    assert os.path.exists(os.path.join(report_dir, "plan.json"))


def test_benchmark_below_target_fails_naming_it_after_writing_the_report(tmp_path):
    out, report_dir = _lab_run(tmp_path, "-e", "lab_nccl_replay=failing")
    assert out.returncode != 0
    text = out.stdout + out.stderr
    # the replayed log: 2 x 8 GPUs over untuned SR-IOV RoCE, 22.77 GB/s at 1 GiB
    assert "all_reduce_perf out-of-place busbw at 1073741824 B (1 GiB): 22.77 GB/s < target 180.00 GB/s" in text, text[-6000:]
    assert "NCCL gate fail (report %s/benchmark.md)" % report_dir in text
    report, markdown = _report(report_dir)
    assert report["verdict"] == "fail"
    assert len(report["unmet"]) == 1 and "22.77 GB/s < target 180.00 GB/s" in report["unmet"][0]
    assert report["launches"][0]["gate"]["verdict"] == "fail"
    assert "Verdict: **FAIL**" in markdown and "22.77 GB/s < target 180.00 GB/s" in markdown
