#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The work happens on the controller, in plugins/action/change_report.py; this
# file carries the documentation ansible-doc renders.

from __future__ import annotations

DOCUMENTATION = r"""
module: change_report
short_description: Write a change window's report - what happened per device, counter deltas, benchmark, verdict
version_added: 0.1.0
description:
  - Writes C(change-window-<id>.json) (for machines), C(change-window-<id>.md) (for people) and, when a benchmark ran,
    C(change-window-<id>.png) (busbw against message size, pre and post, with the targets) into O(dest).
  - Says per device (switch or subnet manager) what happened - V(kept), V(rolled back), V(rolled back by timer),
    V(unchanged), V(pending) (the window has not settled it yet), V(would change) (dry run) or V(unknown) (a roll-back
    failed; the device timer rolls a pending commit back) - judged from the registered M(lossless.fabric.switch_config)
    results (subnet managers - from their M(lossless.fabric.rollback_timer) results).
  - The diff applied per device (the device's own, secrets masked), the counter deltas of the pre and post phases on
    the plan's lossless priorities, the findings, the pre/post benchmark table and plot, and the verdict of the window.
  - Used by the role C(lossless.fabric.change_window) (C(playbooks/change_window.yml)); the window's serial batches
    write into one report - a batch already in the report is replaced, other batches are kept.
  - Runs on the controller. The same input gives the same bytes, so a rerun reports no change.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._attributes.posix
attributes:
  action:
    description: Runs on the controller and writes local files.
    support: full
  check_mode:
    support: full
    details:
      - Builds the report and returns what it would write, writing nothing.
  diff_mode:
    support: full
    details:
      - The JSON and Markdown before and after; the PNG as its size and hash.
  idempotent:
    support: full
    details:
      - Files whose content is unchanged are not rewritten; no time stamp is added that the input does not hold.
options:
  dest:
    description:
      - Folder of the report files, normally C(lossless_fabric_report_dir); created when missing.
    type: path
    required: true
  window:
    description:
      - The window. Its O(window.id) names the files.
    type: dict
    required: true
    suboptions:
      id:
        description: Window id (letters, digits, C(.), C(_), C(-)).
        type: str
        required: true
      fabric:
        description: Name of the fabric (the intent's C(name)).
        type: str
      started_at:
        description: When the window started (UTC, ISO 8601).
        type: str
      deadline:
        description: When every pending commit rolls back at the latest (UTC, ISO 8601).
        type: str
      max_minutes:
        description: The window's maximum length in minutes.
        type: int
      batch:
        description: The serial batch (1, 2, ...) this report covers.
        type: int
  status:
    description:
      - How the window (or this batch) ended - V(dry_run) (check mode), V(changing) (the record right before the
        first change - every device not changed yet is V(unknown), being changed), V(in_progress) (changed, not settled yet),
        V(stopped) (the pre-checks stopped it before any change), V(passed) (post-checks passed) or V(failed)
        (post-checks failed, or a task failed part-way).
    type: str
    required: true
    choices: [dry_run, changing, in_progress, stopped, passed, failed]
  devices:
    description:
      - Per inventory hostname - C(platform), C(push) (the registered M(lossless.fabric.switch_config) result of the
        change, O(lossless.fabric.switch_config#module:confirm=false)), C(settle) (of the window's
        V(confirmed) or V(rolled_back) task), C(rollback) (of the roll-back after a failure) and C(backup) (where the
        running configuration before the change was saved). Missing or skipped results were not run.
      - GPU hosts too, marked with C(kind) V(host) - C(apply) and C(restore) (registered M(lossless.fabric.nic_qos) results),
        C(confirm) (the M(lossless.fabric.rollback_timer) V(confirmed) result of the host's NIC timer), C(backup),
        C(restore_command); they are reported in their own C(hosts) section. A host whose C(apply) carries a C(timer)
        is V(pending) until confirmed, V(kept) once confirmed, V(rolled back by timer) when its timer fired first.
      - Subnet managers too, marked with C(kind) V(subnet_manager) - C(files) (a list of C(path), C(before) (the installed
        text, null when absent) and C(after) (the plan's text)), C(arm), C(settle) and C(rollback) (registered
        M(lossless.fabric.rollback_timer) results - V(armed), the window's V(confirmed) or V(rolled_back), the roll-back
        after a failure), C(timer) (its name), C(commands) (what the timer runs after putting the files back) and
        C(backup); they are listed with the switches, with a diff per file.
      - Required unless O(collect).
    type: dict
  collect:
    description:
      - Read O(devices), O(counters) and O(plans) from the task's host variables instead - what the tasks of the role
        C(lossless.fabric.change_window) registered on each device of the batch (C(__change_window_push),
        C(__change_window_counters_before), the NIC tasks' loops, ...) and the plan (C(fabric_plan_result)). For that
        role only.
    type: bool
    default: false
  counters:
    description:
      - Per inventory hostname - C(before) (before the baseline benchmark), C(middle) (before the change) and
        C(after) (after the post benchmark) snapshots, M(lossless.fabric.switch_counters) results or their C(counters).
    type: dict
    default: {}
  plans:
    description:
      - The switch plans, C(fabric_plan_result.devices); the lossless priorities and RoCE queue of each device.
    type: dict
    default: {}
  findings:
    description:
      - The findings the window judged (from the C(lossless.fabric.change_findings) filter).
    type: list
    elements: dict
    default: []
  benchmark:
    description:
      - C(pre) and C(post) (lists of M(lossless.fabric.nccl_result) results, one per launch), C(compare) (the
        M(lossless.fabric.nccl_compare) result) and C(targets) (the intent's C(targets)).
    type: dict
    default: {}
  reasons:
    description:
      - Why the window ended as it did, one line each.
    type: list
    elements: str
    default: []
  scope:
    description:
      - Every device of the window (with serial batches, all of them); a device no batch has reached yet is listed as
        V(unchanged), C(not reached).
    type: list
    elements: str
    default: []
  ib_counters:
    description:
      - The InfiniBand fabric's counters - C(before) (before the baseline benchmark), C(middle) (before the change) and
        C(after) (after the post benchmark), M(lossless.fabric.ib_fabric_facts) results or their C(ib_fabric). The report
        lists per phase the ports whose error counters or C(PortXmitWait) went up.
      - Empty - the window did not read an InfiniBand fabric.
    type: dict
    default: {}
seealso:
  - module: lossless.fabric.switch_config
  - module: lossless.fabric.nccl_compare
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Write the window's report
  lossless.fabric.change_report:
    dest: "{{ lossless_fabric_report_dir }}"
    window:
      id: "20250101T020000Z"
      fabric: "{{ fabric_plan_result.intent.name }}"
    status: passed
    devices:
      leaf1:
        platform: eos
        push: "{{ pushed }}"
        settle: "{{ confirmed }}"
    counters:
      leaf1: {before: "{{ counters_before }}", middle: "{{ counters_middle }}", after: "{{ counters_after }}"}
    plans: "{{ fabric_plan_result.devices }}"
    scope: "{{ groups['switches'] }}"
    benchmark:
      pre: "{{ nccl_pre.results }}"
      post: "{{ nccl_post.results }}"
      compare: "{{ nccl_diff }}"
      targets: "{{ fabric_plan_result.intent.targets }}"
  delegate_to: localhost
  run_once: true
  register: window_report
"""

RETURN = r"""
verdict:
  description:
    - V(kept), V(rolled back), V(partial) (kept on some devices, rolled back on others - needs a person),
      V(no change), V(stopped), V(dry run) or V(in progress).
  returned: success
  type: str
  sample: kept
outcomes:
  description: Devices per outcome.
  returned: success
  type: dict
  sample: {kept: [leaf1, spine1], unchanged: [leaf2]}
devices:
  description: Per device, its C(outcome) and a C(detail) line.
  returned: success
  type: dict
hosts:
  description: Per GPU host, its C(outcome) and a C(detail) line.
  returned: success
  type: dict
reasons:
  description: Why the window ended as it did.
  returned: success
  type: list
  elements: str
files:
  description: The report files by kind (C(json), C(md), C(png)).
  returned: success
  type: dict
  sample: {json: /var/reports/change-window-20250101T020000Z.json, md: /var/reports/change-window-20250101T020000Z.md}
"""
