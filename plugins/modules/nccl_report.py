#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The work happens on the controller, in plugins/action/nccl_report.py; this
# file carries the documentation ansible-doc renders.

from __future__ import annotations

DOCUMENTATION = r"""
module: nccl_report
short_description: Write the report of an NCCL benchmark run - JSON, Markdown and a bus-bandwidth plot
version_added: 0.1.0
description:
  - Writes three files into O(report_dir) on the controller - C(<name>.json) for machines, C(<name>.md) for people and
    C(<name>.png), busbw against message size (log 2 axis, labels like C(1M) and C(1G)) with one line for this run,
    one for the O(baseline) when given, and each bus-bandwidth target as a dashed line over its size range.
  - The report holds, per launch, its name and launch status, collective, ranks, nodes, transport, GPUDirect RDMA,
    the busbw at the largest size, the C(Avg bus bandwidth) footer, the errors of the log and the gate verdict with
    every unmet line; per message size the median busbw over the launches (min, max) and the baseline median;
    the O(compare) verdicts per size; the targets; and an overall verdict.
  - Every launch is gated here, exactly as M(lossless.fabric.nccl_result) gates one log (O(require_complete) is on by
    default); the unmet lines of a result's own C(gate) (from M(lossless.fabric.nccl_result)) are kept beside them.
    With O(require_complete=false) and no other gate option, each result's own C(gate) alone is used.
  - With O(evidence) (the counters before and after the launches) the blocking counter findings are unmet lines too
    (each starting C(counter evidence)), so the verdict fails on them even when bus bandwidth passes, and the report gains a
    counter evidence section.
  - Never fails because a gate failed - it writes the report and returns RV(verdict) and RV(unmet), so a play can
    write the evidence first and fail afterwards (role C(lossless.fabric.nccl_gate) does). It fails on bad input,
    before writing anything.
  - Writes a file only when its content changed, atomically; the same input gives byte-identical files (no
    timestamp unless O(generated_at) is given). Runs on the controller; needs matplotlib there.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._attributes.controller
  - lossless.fabric._nccl_gate
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
  check_mode:
    support: full
    details:
      - Renders the three files and compares them with the files on disk; writes nothing.
  diff_mode:
    support: full
    details:
      - Shows the JSON and Markdown as they would be written, and the size and hash of the PNG.
  idempotent:
    support: full
    details:
      - The same results give the same bytes, so a second run reports no change.
options:
  report_dir:
    description:
      - Folder on the controller the files go to; created when missing.
    type: path
    required: true
  name:
    description:
      - Base name of the three files, for example V(benchmark) or V(change-window-post).
      - Letters, digits, C(.), C(_) and C(-), starting with a letter or digit.
    type: str
    required: true
  results:
    description:
      - The launches of this run, one item per launch.
      - An item is an M(lossless.fabric.nccl_result) result (a registered loop result over the launches of
        M(lossless.fabric.nccl_benchmark) also gives each launch its name and status from C(item)), nccl-tests output
        as a string, a registered command or slurp result, or a C(-J) JSON document.
      - An empty list gives a report with the verdict C(fail).
    type: list
    elements: raw
    required: true
  baseline:
    description:
      - The launches of an earlier run, in the forms O(results) takes, for example RV(results) of an earlier
        nccl_report task. Drawn as a second line and shown as a column per size.
    type: list
    elements: raw
  baseline_label:
    description:
      - Legend label of the O(baseline) line.
    type: str
    default: baseline
  compare:
    description:
      - The result of M(lossless.fabric.nccl_compare) of O(baseline) against O(results) (also when it failed). Its
        verdict per size goes into the table, and its unmet lines into RV(unmet).
    type: dict
  phase:
    description:
      - The phase of this run, for example V(pre) or V(post). The legend label of O(results) and a line of the report.
    type: str
  title:
    description:
      - Title of the Markdown and the plot. Default - C(NCCL <collective> busbw - <name>).
    type: str
  generated_at:
    description:
      - A timestamp to print in the report, for example C({{ now(utc=true).isoformat() }}). Without it the report holds
        no time, so rerunning with the same results changes nothing.
    type: str
  evidence:
    description:
      - Counter evidence of the launches (docs/benchmark.md, "Counter evidence") - the counters before and after them,
        judged by the rules the change window uses too. Role C(lossless.fabric.nccl_gate) fills it (C(nccl_gate_evidence)).
      - Its blocking findings fail the run even when every busbw target is met; the report gains an evidence section -
        per host NIC and per switch port the bytes by priority (queue), pauses, ECN marks, CNPs and drops, with the
        findings beside each, and the counters a device cannot read listed as not available.
    type: dict
    suboptions:
      switches_before:
        description: Inventory hostname -> the M(lossless.fabric.switch_counters) result (or its C(counters)) before the launches.
        type: dict
      switches_after:
        description: The same after the launches.
        type: dict
      nics_before:
        description: GPU host -> the M(lossless.fabric.nic_counters) snapshot (or result) before the launches.
        type: dict
      nics_after:
        description: The same after the launches.
        type: dict
      plans:
        description: The plans, C(fabric_plan_result.devices) (RoCE and CNP priority, lossless priorities, C(mode)).
        type: dict
      ports:
        description:
          - Switch -> the ports the launch crosses (filter P(lossless.fabric.launch_ports#filter)); a switch without an entry is
            judged on every port read.
        type: dict
      settings:
        description:
          - C(share) (the part of the bytes the RoCE priority must carry; a fraction or a percent; default 0.95), C(min_bytes)
            (a NIC or port with fewer bytes is not judged; default 1000000000) and C(max_drops) (the C(ecn_only) bound on RoCE-queue
            drops per port and retransmissions per NIC; default 1000).
        type: dict
      note:
        description: A line for the evidence section (for example why a part of the fabric was not read).
        type: str
seealso:
  - module: lossless.fabric.nccl_result
  - module: lossless.fabric.nccl_compare
  - module: lossless.fabric.nccl_benchmark
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Parse every launch of the benchmark (no gate yet)
  lossless.fabric.nccl_result:
    content: "{{ item.log }}"
  loop: "{{ benchmark.launches }}"
  loop_control:
    label: "{{ item.name }}"
  register: nccl

- name: Gate on the fabric intent and write reports/benchmark.{json,md,png}
  lossless.fabric.nccl_report:
    report_dir: "{{ lossless_fabric_report_dir }}"
    name: benchmark
    results: "{{ nccl.results }}"
    fabric_targets: "{{ fabric_plan_result.intent.targets }}"
  register: report

- name: Fail the play, after the report is written, when the gate failed
  ansible.builtin.fail:
    msg: "{{ report.unmet | join('\n') }}"
  when: report.verdict != 'pass'

- name: Post-change report with the pre-change run as baseline and the comparison
  lossless.fabric.nccl_report:
    report_dir: /var/tmp/reports
    name: change-window-post
    phase: post
    results: "{{ nccl_post.results }}"
    baseline: "{{ pre_report.results }}"
    baseline_label: pre
    compare: "{{ nccl_diff }}"
    targets:
      - min_size: 1G
        min_busbw: 180
"""

RETURN = r"""
verdict:
  description:
    - C(fail) when a launch failed, missed a requirement, or the O(compare) result has unmet lines, or there is no
      launch; C(pass) when something was gated and nothing failed; C(not gated) otherwise.
  returned: success
  type: str
  sample: pass
unmet:
  description: Every line that fails the run, each naming the launch (or C(compare)), the requirement and the measured value.
  returned: success
  type: list
  elements: str
  sample: ["nccl-bench-1: all_reduce_perf out-of-place busbw at 1073741824 B (1 GiB): 151.20 GB/s < target 180.00 GB/s"]
report:
  description:
    - The report as written to C(<name>.json) - C(name), C(title), C(phase), C(generated_at), C(collective), C(verdict),
      C(unmet), C(targets), C(launches) (one entry per launch with its C(gate)), C(baseline_launches), C(sizes)
      (one entry per message size), C(compare), C(series) (the plotted points), C(plot) (the PNG file name) and C(evidence)
      (the counter evidence section - C(hosts), C(switches), C(findings), C(unmet), C(not_available), C(settings), C(modes),
      C(ports); null without O(evidence)).
  returned: success
  type: dict
results:
  description:
    - The launches as the report read them (the nccl_result fields, without the log text), each with C(launch)
      (name, status, rc, duration_s) when known. Pass them as O(baseline) of a later run.
  returned: success
  type: list
  elements: dict
files:
  description: Paths of the three files.
  returned: success
  type: dict
  contains:
    json:
      description: Path of the JSON report.
      type: str
    markdown:
      description: Path of the Markdown report.
      type: str
    png:
      description: Path of the plot.
      type: str
    evidence_png:
      description: Path of the counter evidence plot (the RoCE share per NIC and port), with O(evidence) only.
      type: str
  sample: {json: reports/lab/benchmark.json, markdown: reports/lab/benchmark.md, png: reports/lab/benchmark.png}
written:
  description: Names of the files written (in check mode - that would be written) because their content changed.
  returned: success
  type: list
  elements: str
  sample: [benchmark.json, benchmark.md, benchmark.png]
"""
